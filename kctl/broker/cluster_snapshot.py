"""Collect a :class:`ClusterSnapshot`: Metadata (placement, ISR), DescribeCluster (racks; with
v2 the fenced brokers), DescribeQuorum (the active controller, on KRaft), DescribeConfigs
(min.insync.replicas per topic, broker defaults) and DescribeLogDirs (where the brokers support
it)."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any

from kctl.broker import cluster, kafka_python
from kctl.broker.client import Admin
from kctl.broker.cluster_view import is_internal
from kctl.broker.configs import TopicConfigLookup, _source
from kctl.errors import KctlError, NotFoundError
from kctl.replicas.model import (
    BrokerInfo,
    ClusterSnapshot,
    LogDirInfo,
    PartitionInfo,
    TopicInfo,
)


def _int(value: Any) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None


def _topic_min_isr(
    found: dict[str, dict[str, Any]],
) -> dict[str, tuple[int | None, str | None]]:
    """min.insync.replicas and its source per topic, from DescribeConfigs' entries."""
    out: dict[str, tuple[int | None, str | None]] = {}
    for name, entries in found.items():
        entry = entries.get("min.insync.replicas")
        if entry is None or _int(entry.value) is None:
            out[name] = (None, None)
        else:
            out[name] = (_int(entry.value), _source(entry.source))
    return out


def _ask_broker_configs(admin: Admin, broker: int) -> Any:
    """DescribeConfigs of broker ``broker``, sent; read by :func:`_broker_defaults`."""
    from confluent_kafka.admin import ConfigResource

    futures = admin.client.describe_configs(
        [ConfigResource("broker", str(broker))], request_timeout=admin.timeout
    )
    return next(iter(futures.values()))


def _broker_defaults(admin: Admin, future: Any, broker: int) -> tuple[int | None, int | None]:
    """(min.insync.replicas, default.replication.factor) as broker ``broker`` applies them."""
    entries = admin.result(future, f"describing configs of broker {broker}")
    mi, rf = entries.get("min.insync.replicas"), entries.get("default.replication.factor")
    return (_int(mi.value) if mi else None, _int(rf.value) if rf else None)


@dataclass
class _Topic:
    internal: bool
    error: str | None
    partitions: list[PartitionInfo]


@dataclass
class _Placement:
    brokers: set[int]
    topics: dict[str, _Topic]


def _error_text(code: int) -> str | None:
    """librdkafka's words for a Kafka error code ("Broker: Leader not available"), as the
    snapshot has always written them."""
    from confluent_kafka import KafkaError

    return str(KafkaError(code).str()) if code else None


def _placement(client: Any) -> _Placement:
    """Live brokers, and every topic's partitions (leader, replicas, ISR, the replicas on brokers
    not alive, errors), from ONE Metadata request through kafka-python, decoded straight into
    the snapshot's classes (librdkafka's list_topics and a ClusterView in between took ~0.5 s
    of CPU at 20,000 partitions, and the kafka-python connection asks it once more)."""
    from kafka.protocol.metadata import MetadataRequest

    request = MetadataRequest(topics=None, allow_auto_topic_creation=False)
    response = kafka_python.send(client, request, "reading the cluster's metadata")
    live = {b.node_id for b in response.brokers}
    out = _Placement(live, {})
    for t in response.topics:
        parts = [
            PartitionInfo(
                partition=p.partition_index,
                leader=p.leader_id,
                replicas=list(p.replica_nodes),
                isr=list(p.isr_nodes),
                offline_replicas=[r for r in p.replica_nodes if r not in live],
                error=_error_text(p.error_code) if p.error_code else None,
            )
            for p in t.partitions
        ]
        parts.sort(key=lambda p: p.partition)
        out.topics[t.name] = _Topic(bool(t.is_internal), _error_text(t.error_code), parts)
    return out


def _cluster_info(admin: Admin, client: Any) -> tuple[cluster.ClusterInfo, list[int] | None]:
    """The brokers (racks), the cluster id, the controller as the KRaft quorum names it
    (DescribeCluster's is a random broker there) and the fenced brokers (None where the
    cluster cannot say): one DescribeCluster through kafka-python (v2 lists the fenced ones)
    and one DescribeQuorum. (cluster.describe_active asks librdkafka for DescribeCluster after
    a whole-cluster Metadata, and the fenced brokers need a second DescribeCluster.)"""
    from kafka.errors import KafkaError
    from kafka.protocol.admin import DescribeClusterRequest

    try:
        meta = client.describe_cluster()
    except KafkaError:
        fenced: list[int] | None = None
        with contextlib.suppress(KctlError):  # not said: the rules cannot tell stopped from gone
            fenced = cluster.fenced_broker_ids(client)
        return cluster.describe_active(admin, client), fenced
    controller = meta.get("controller_id")
    controller = None if controller is None or controller < 0 else int(controller)
    live = sorted((b for b in meta["brokers"] if not b.get("is_fenced")),
                  key=lambda b: b["broker_id"])  # fmt: skip
    brokers = [
        cluster.Broker(b["broker_id"], b["host"], b["port"], b.get("rack") or None,
                       b["broker_id"] == controller)
        for b in live
    ]  # fmt: skip
    info = cluster.ClusterInfo(meta.get("cluster_id"), controller, brokers)
    fenced = None
    if kafka_python.api_version(client, DescribeClusterRequest) >= 2:
        fenced = sorted(b["broker_id"] for b in meta["brokers"] if b.get("is_fenced"))
    return cluster.describe_active(admin, client, info), fenced


def collect(
    admin: Admin, topics: list[str] | None = None, *, log_dirs: bool = True
) -> ClusterSnapshot:
    """A snapshot of the whole cluster, or of ``topics`` (each must exist)."""
    with kafka_python.LazyClient(admin) as lazy:
        return _collect(admin, lazy, topics, log_dirs=log_dirs)


def _collect(
    admin: Admin, lazy: kafka_python.LazyClient, topics: list[str] | None, *, log_dirs: bool
) -> ClusterSnapshot:
    info, fenced = _cluster_info(admin, lazy.client)
    view = _placement(lazy.client)
    names = sorted(view.topics)
    if topics:
        for name in topics:
            if name not in view.topics:
                raise NotFoundError(f"unknown topic {name!r}", "not in the cluster's metadata")
        names = sorted(set(topics))
    # The configs go out first and are read after the log dirs: the rounds overlap.
    # One request for all topics (TopicConfigLookup, as topics describe reads them): retriable
    # errors (a topic just created) are asked again; a topic still failing is reported, not
    # fatal to the snapshot of the others.
    topic_configs = TopicConfigLookup(admin, names) if names else None
    default_mi: int | None = None
    default_rf: int | None = None
    defaults_of: int | None = None
    broker_configs: Any = None
    if info.brokers:
        ids = [b.id for b in info.brokers]
        defaults_of = info.controller_id if info.controller_id in view.brokers else ids[0]
        broker_configs = _ask_broker_configs(admin, defaults_of)
    found_dirs: tuple[list[LogDirInfo], list[int]] = ([], [])
    if log_dirs:
        wanted = {n: [p.partition for p in view.topics[n].partitions] for n in names}
        found_dirs = _log_dirs(
            lazy.client, [b.id for b in info.brokers], wanted if topics else None
        )
    found, config_errors = topic_configs.results() if topic_configs else ({}, {})
    min_isr = _topic_min_isr(found)
    if defaults_of is not None:
        # A broker that hides its configs: the rules fall back to Kafka's defaults.
        with contextlib.suppress(KctlError):
            default_mi, default_rf = _broker_defaults(admin, broker_configs, defaults_of)
    snap = ClusterSnapshot(
        taken_at_ms=int(time.time() * 1000),
        cluster_id=info.cluster_id,
        controller_id=info.controller_id,
        brokers=[BrokerInfo(b.id, b.host, b.port, b.rack) for b in info.brokers],
        topics=[],
        default_min_insync_replicas=default_mi,
        default_replication_factor=default_rf,
        bootstrap=admin.conn.bootstrap_servers,
        fenced_brokers=fenced,
        config_errors=config_errors,
    )
    for name in names:
        t = view.topics[name]
        mi, source = min_isr.get(name, (None, None))
        snap.topics.append(
            TopicInfo(
                name=name,
                internal=t.internal or is_internal(name),
                partitions=t.partitions,
                min_insync_replicas=mi,
                min_insync_replicas_source=source,
                error=t.error,
            )
        )
    if log_dirs:
        snap.log_dirs, snap.log_dirs_unsupported = found_dirs
    return snap


def _log_dirs(
    client: Any, brokers: list[int], topics: dict[str, list[int]] | None
) -> tuple[list[LogDirInfo], list[int]]:
    """DescribeLogDirs of the live ``brokers`` (as DescribeCluster listed them) that support
    it, the requests sent at once (one round trip; one after another they took 0.4 s at 20,000
    partitions); also the brokers without DescribeLogDirs."""
    from kctl.broker import logdirs

    supported: list[int] = []
    unsupported: list[int] = []
    for node in sorted(brokers):
        (supported if logdirs.api_range(client, node, logdirs.API) else unsupported).append(node)
    requests = [(node, logdirs.build_request(topics)) for node in supported]
    responses = kafka_python.send_all(client, requests, "describing log dirs")
    dirs: list[LogDirInfo] = []
    for node, response in zip(supported, responses, strict=True):
        dirs += logdirs.parse_response(node, response)
    return dirs, unsupported
