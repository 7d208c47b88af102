"""The cluster as one Metadata request shows it (:func:`cluster_view`: live brokers, topics,
partitions with leader, replicas and ISR) and which broker is the controller
(:func:`controller`).

Topics, leader elections, reassignments and the cluster snapshot all start from this view;
it lives here, below them, so that none of those modules has to import another for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from kctl.broker import kafka_python
from kctl.broker.client import Admin
from kctl.errors import KctlError


@dataclass(slots=True)
class PartitionState:
    partition: int
    leader: int
    replicas: list[int]
    isr: list[int]
    offline_replicas: list[int]
    error: str | None = None
    # Detail (topics describe): eligible leader replicas (KIP-966; None where the broker has no
    # DescribeTopicPartitions) and a reassignment in progress.
    elr: list[int] | None = None
    last_known_elr: list[int] | None = None
    adding_replicas: list[int] = field(default_factory=list)
    removing_replicas: list[int] = field(default_factory=list)

    @property
    def under_replicated(self) -> bool:
        return len(self.isr) < len(self.replicas)

    def unavailable(self, live: set[int]) -> bool:
        return self.leader < 0 or self.leader not in live


@dataclass
class TopicState:
    topic: str
    internal: bool
    partitions: list[PartitionState]
    topic_id: str | None = None
    min_insync_replicas: int | None = None
    error: str | None = None
    configs: dict[str, str | None] = field(default_factory=dict)  # not at their default
    # Why its configs (and so min_insync_replicas) could not be read, when they could not.
    config_error: str | None = None

    @property
    def replication_factor(self) -> int:
        """Replicas per partition, not counting those a reassignment is adding (as
        kafka-topics.sh counts them: the factor before the move)."""
        return max((len(p.replicas) - len(p.adding_replicas) for p in self.partitions), default=0)


@dataclass
class ClusterView:
    """What one Metadata request says: live brokers and topics."""

    cluster_id: str | None
    controller_id: int
    brokers: dict[int, tuple[str, int]]
    topics: dict[str, TopicState] = field(default_factory=dict)


def is_internal(name: str) -> bool:
    """Kafka's own internal topics and, by convention, every name starting with '__'."""
    return name.startswith("__")


def cluster_view(admin: Admin, topic: str | None = None) -> ClusterView:
    md = admin.metadata(topic)
    brokers = {b.id: (b.host, b.port) for b in md.brokers.values()}
    live = set(brokers)
    view = ClusterView(md.cluster_id, md.controller_id, brokers)
    by_id = attrgetter("id")
    for name, tm in md.topics.items():
        err = tm.error.str() if tm.error is not None else None
        parts = []
        for p in sorted(tm.partitions.values(), key=by_id):
            replicas = p.replicas
            parts.append(
                PartitionState(
                    p.id,
                    p.leader,
                    list(replicas),
                    list(p.isrs),
                    [] if live.issuperset(replicas) else [r for r in replicas if r not in live],
                    None if p.error is None else p.error.str(),
                )
            )
        view.topics[name] = TopicState(name, is_internal(name), parts, error=err)
    return view


def controller(client: Any) -> int:
    """The id of the active controller as a kafka-python admin client's DescribeCluster
    reports it; where none is reported, the lowest unfenced broker (else the lowest broker).
    DescribeCluster goes to any broker: when the one drawn cannot be reached (dead, not yet
    fenced) it is asked again (kafka-python then draws another), and after three failures the
    lowest broker of the client's metadata stands in (callers try the others from there)."""
    from kafka.errors import KafkaConnectionError, NodeNotReadyError, RequestTimedOutError

    meta = None
    for _ in range(3):
        try:
            meta = client.describe_cluster()
            break
        except (KafkaConnectionError, NodeNotReadyError, RequestTimedOutError):
            continue
    if meta is None:
        known = kafka_python.broker_ids(client)
        if not known:
            raise KctlError("finding a broker to ask", "no broker answered DescribeCluster")
        return known[0]
    ctl = meta.get("controller_id")
    if ctl is None or ctl < 0:
        live = [b["broker_id"] for b in meta["brokers"] if not b.get("is_fenced")]
        return min(live or [b["broker_id"] for b in meta["brokers"]])
    return int(ctl)
