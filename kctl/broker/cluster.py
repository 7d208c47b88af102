"""Cluster operations: describe (kafka-cluster / kafka-metadata style) and API versions per broker
(kafka-broker-api-versions.sh)."""

from __future__ import annotations

from dataclasses import dataclass, replace
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
    # Where controller_id comes from: "DescribeCluster" (the broker's answer: on KRaft a random
    # live broker, not the controller) or "DescribeQuorum" (the KRaft quorum's leader).
    controller_source: str = "DescribeCluster"
    quorum_voters: list[int] | None = None  # KRaft: the controller quorum's voters
    quorum_error: str | None = None  # KRaft: why DescribeQuorum gave no answer


@dataclass
class Quorum:
    """The KRaft controller quorum as DescribeQuorum reports it."""

    leader_id: int  # the active controller; -1 while an election runs
    leader_epoch: int
    voters: list[int]


def describe(admin: Admin) -> ClusterInfo:
    """Cluster id, brokers (the live ones) and the controller as DescribeCluster answers. On
    KRaft that "controller" is a random live broker (brokers forward controller requests
    themselves): :func:`describe_active` names the real one."""
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


def metadata_quorum(client: Any) -> Quorum | None:
    """The KRaft quorum's leader and voters (DescribeQuorum, through any broker, with a
    kafka-python admin client); None where the cluster has no DescribeQuorum (ZooKeeper mode,
    Tansu). A refused or failed call raises KctlError."""
    from kafka.errors import KafkaError
    from kafka.protocol.admin import DescribeQuorumRequest

    if kafka_python.api_version(client, DescribeQuorumRequest) < 0:
        return None
    try:
        answer = client.describe_metadata_quorum()
    except KafkaError as exc:
        raise KctlError("describing the metadata quorum", str(exc) or type(exc).__name__) from exc
    (part,) = [p for t in answer["topics"] for p in t["partitions"]]
    if part.get("error"):
        raise KctlError("describing the metadata quorum", str(part["error"]))
    voters = sorted(v["replica_id"] for v in part["current_voters"])
    return Quorum(int(part["leader_id"]), int(part["leader_epoch"]), voters)


def with_quorum(info: ClusterInfo, quorum: Quorum | None) -> ClusterInfo:
    """``info`` with the controller the quorum names (pure): on KRaft the active controller is
    the quorum's leader, and a broker is the controller only when it is that node too (a
    combined broker+controller). Without a quorum (ZooKeeper mode), ``info`` as it is."""
    if quorum is None:
        return info
    leader = quorum.leader_id if quorum.leader_id >= 0 else None
    return replace(
        info,
        controller_id=leader,
        brokers=[replace(b, is_controller=b.id == leader) for b in info.brokers],
        controller_source="DescribeQuorum",
        quorum_voters=list(quorum.voters),
    )


def describe_active(
    admin: Admin, client: Any = None, info: ClusterInfo | None = None
) -> ClusterInfo:
    """:func:`describe` with the active controller as the KRaft quorum reports it. When the
    quorum cannot be described (e.g. no DESCRIBE permission on the cluster) the controller is
    unknown (None) and ``quorum_error`` says why, rather than DescribeCluster's random broker.
    ``client``: a kafka-python admin client to use (else one is connected for the call);
    ``info``: DescribeCluster's answer when the caller has read it already."""
    from kctl.errors import ConnectionFailed

    info = describe(admin) if info is None else info
    try:
        if client is not None:
            quorum = metadata_quorum(client)
        else:
            with kafka_python.LazyClient(admin) as lazy:
                quorum = metadata_quorum(lazy.client)
    except ConnectionFailed:
        raise
    except KctlError as exc:
        unknown = [replace(b, is_controller=False) for b in info.brokers]
        return replace(
            info,
            controller_id=None,
            brokers=unknown,
            controller_source="DescribeQuorum",
            quorum_error=exc.why or exc.what,
        )
    return with_quorum(info, quorum)


def controller_line(info: ClusterInfo) -> str:
    """Who the controller is, in words: "active controller 1000 (KRaft quorum leader; voters
    1000, 1001, 1002)", or "controller 2" where DescribeCluster names it (ZooKeeper mode)."""
    if info.controller_source != "DescribeQuorum":
        return f"controller {info.controller_id}"
    voters = ", ".join(map(str, info.quorum_voters or [])) or "unknown"
    if info.controller_id is None:
        return f"active controller unknown (voters {voters})"
    return f"active controller {info.controller_id} (KRaft quorum leader; voters {voters})"


def fenced_broker_ids(client: Any) -> list[int] | None:
    """The registered brokers that are fenced (stopped, or not caught up with the metadata), as
    DescribeCluster v2 lists them (IncludeFencedBrokers, KIP-1073, Kafka 4.0+), with a
    kafka-python admin client; None when the cluster's DescribeCluster is older and cannot say."""
    from kafka.errors import KafkaError
    from kafka.protocol.admin import DescribeClusterRequest

    if kafka_python.api_version(client, DescribeClusterRequest) < 2:
        return None
    try:
        brokers = client.describe_cluster()["brokers"]
    except KafkaError as exc:
        raise KctlError("describing the cluster", str(exc) or type(exc).__name__) from exc
    return sorted(b["broker_id"] for b in brokers if b.get("is_fenced"))


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
