"""Cluster operations: describe (kafka-cluster / kafka-metadata style) and API versions per broker
(kafka-broker-api-versions.sh)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kctl.broker import kafka_python
from kctl.broker.apis import api_name
from kctl.broker.client import Admin
from kctl.broker.connect import Connection
from kctl.errors import KctlError


@dataclass
class Broker:
    id: int
    host: str
    port: int
    rack: str | None
    is_controller: bool


@dataclass
class ClusterInfo:
    cluster_id: str | None
    controller_id: int | None
    brokers: list[Broker]


def describe(admin: Admin) -> ClusterInfo:
    admin.metadata()  # fail fast, with the connection error, when unreachable
    try:
        desc = admin.result(
            admin.client.describe_cluster(request_timeout=admin.timeout), "describing the cluster"
        )
        controller = desc.controller.id if desc.controller is not None else None
        brokers = [
            Broker(n.id, n.host, n.port, n.rack, n.id == controller)
            for n in sorted(desc.nodes, key=lambda n: n.id)
        ]
        return ClusterInfo(desc.cluster_id, controller, brokers)
    except KctlError:
        md = admin.metadata()  # brokers older than DescribeCluster (2.8)
        brokers = [
            Broker(b.id, b.host, b.port, None, b.id == md.controller_id)
            for b in sorted(md.brokers.values(), key=lambda b: b.id)
        ]
        return ClusterInfo(md.cluster_id, md.controller_id, brokers)


def api_versions(conn: Connection) -> list[dict[str, Any]]:
    """Supported version ranges per API, per broker, as each broker's ApiVersions answers."""
    from kafka.errors import KafkaError

    with kafka_python.admin_client(conn) as client:
        meta = client.describe_cluster()
        rows: list[dict[str, Any]] = []
        for broker in sorted(meta["brokers"], key=lambda b: b["broker_id"]):
            try:
                data = client.get_broker_version_data(broker["broker_id"])
            except KafkaError as exc:
                what = f"asking broker {broker['broker_id']} for its API versions"
                raise KctlError(what, str(exc)) from exc
            for key, (low, high) in sorted(data.api_versions.items()):
                rows.append(
                    {
                        "broker": broker["broker_id"],
                        "address": f"{broker['host']}:{broker['port']}",
                        "api_key": int(key),
                        "api": api_name(int(key)),
                        "min_version": low,
                        "max_version": high,
                    }
                )
        return rows


def live_broker_ids(
    bootstrap: str, timeout: float, client: dict[str, str] | None = None
) -> set[int]:
    """Ids of the brokers a cluster's metadata lists: in KRaft, the registered and unfenced ones.
    Quiet: librdkafka's connection errors while brokers start are not logged. ``client``: more
    librdkafka settings (security)."""
    import logging

    from confluent_kafka.admin import AdminClient

    quiet = logging.getLogger("kctl.quiet")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    config: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "logger": quiet,
        "socket.connection.setup.timeout.ms": 1000,
        **(client or {}),
    }
    admin = AdminClient(config)
    try:
        md = admin.list_topics(timeout=timeout)
    except Exception as exc:  # KafkaException: not answering yet
        raise KctlError("the cluster does not answer yet", str(exc)) from exc
    return {int(b) for b in md.brokers}


def unregister(admin: Admin, broker: int, *, force: bool = False) -> str:
    """UnregisterBroker (KRaft, Kafka 3.3+): the controller forgets ``broker``'s registration
    (kafka-cluster.sh unregister), for a broker that is gone for good. A live broker would
    register again at its next heartbeat, so it is refused unless ``force``. Returns what the
    broker was: "fenced" (registered, stopped) or "live"."""
    import kafka.errors as Errors

    from kctl.broker import logdirs
    from kctl.broker.messages import UnregisterBrokerRequest
    from kctl.errors import NotFoundError

    what = f"unregistering broker {broker}"
    with kafka_python.LazyClient(admin) as lazy:
        live = logdirs.broker_ids(lazy.client)
        fenced = logdirs.broker_ids(lazy.client, fenced=True)
        if broker not in live and broker not in fenced:
            known = ", ".join(map(str, sorted(live + fenced))) or "none"
            raise NotFoundError(f"broker {broker} is not registered", f"registered: {known}")
        if broker in live and not force:
            raise KctlError(
                f"broker {broker} is alive: it would register again",
                "stop it first, or --force",
            )
        if kafka_python.api_version(lazy.client, UnregisterBrokerRequest) < 0:
            raise KctlError(what, "the cluster does not support UnregisterBroker (KRaft, 3.3+)")
        answer = kafka_python.send(lazy.client, UnregisterBrokerRequest(broker_id=broker), what)
    if answer.error_code:
        name = Errors.for_code(answer.error_code).__name__
        raise KctlError(what, f"{name}: {answer.error_message or ''}".rstrip(": "))
    return "live" if broker in live else "fenced"
