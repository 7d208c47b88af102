"""What ``kctl topics list`` and ``describe`` show, from the states :mod:`kctl.broker.topics`
returns: the rows of the tables, the documents of ``-o json``/``yaml`` and which partitions
the health filters (``--under-replicated``, ``--under-min-isr``, ``--at-min-isr``,
``--unavailable``) keep. Pure: no client library, no broker; unit-tested on hand-built states.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kctl.broker.cluster_view import PartitionState, TopicState


@dataclass(frozen=True)
class Health:
    """Which partitions ``topics describe`` keeps: with no filter, all; with several, those
    any of them selects (kafka-topics.sh's --under-replicated-partitions and its kin)."""

    under_replicated: bool = False  # ISR smaller than the replica set
    under_min_isr: bool = False  # ISR below min.insync.replicas, or no leader
    at_min_isr: bool = False  # ISR equal to min.insync.replicas
    unavailable: bool = False  # no live leader

    @property
    def filtering(self) -> bool:
        return self.under_replicated or self.under_min_isr or self.at_min_isr or self.unavailable

    def keeps(self, topic: TopicState, p: PartitionState, live: set[int]) -> bool:
        """Whether partition ``p`` of ``topic`` is shown; ``live``: the brokers in the metadata.
        A topic whose min.insync.replicas is unknown counts as 1 (Kafka's default)."""
        if not self.filtering:
            return True
        min_isr = topic.min_insync_replicas or 1
        return (
            (self.under_replicated and p.under_replicated)
            # As kafka-topics.sh: a partition without a leader counts as under min ISR.
            or (self.under_min_isr and (p.leader < 0 or len(p.isr) < min_isr))
            or (self.at_min_isr and len(p.isr) == min_isr)
            or (self.unavailable and p.unavailable(live))
        )


def list_rows(states: Iterable[TopicState]) -> list[dict[str, Any]]:
    """``topics list``: one row per topic, its partition count and replication factor."""
    return [
        {
            "topic": t.topic,
            "partitions": len(t.partitions),
            "replication_factor": t.replication_factor,
            "internal": t.internal,
        }
        for t in states
    ]


def reassigning(p: PartitionState) -> str:
    """``+4 -1`` for a partition whose replicas are being reassigned (adding 4, removing 1)."""
    return " ".join(
        [*(f"+{r}" for r in p.adding_replicas), *(f"-{r}" for r in p.removing_replicas)]
    )


def _partition_doc(p: PartitionState) -> dict[str, Any]:
    return {
        "partition": p.partition,
        "leader": p.leader,
        "replicas": p.replicas,
        "isr": p.isr,
        "elr": p.elr,
        "last_known_elr": p.last_known_elr,
        "adding_replicas": p.adding_replicas,
        "removing_replicas": p.removing_replicas,
        "offline_replicas": p.offline_replicas,
    }


def _partition_row(topic: str, p: PartitionState) -> dict[str, Any]:
    return {
        "topic": topic,
        "partition": p.partition,
        "leader": p.leader if p.leader >= 0 else "none",
        "replicas": p.replicas,
        "isr": p.isr,
        "elr": p.elr,
        "offline_replicas": p.offline_replicas,
        "reassigning": reassigning(p),
    }


def describe_rows(
    states: Iterable[TopicState], live: set[int], health: Health = Health()
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``topics describe``: (one row per partition for the tables, one document per topic for
    json/yaml), the partitions ``health`` keeps; with a filter, a topic with none is left out.
    ``live``: the brokers in the metadata (a leader elsewhere is unavailable). The rows show
    a missing leader as ``none``; the documents keep Kafka's -1. A topic whose configs could
    not be read has its reason as ``error`` in its document and in each of its rows (only in
    those: :func:`describe_columns` adds the column when there is one)."""
    rows: list[dict[str, Any]] = []
    docs: list[dict[str, Any]] = []
    for t in states:
        if health.filtering:
            keeps = health.keeps
            parts = [p for p in t.partitions if keeps(t, p, live)]
            if not parts:
                continue
        else:
            parts = t.partitions
        docs.append(
            {
                "topic": t.topic,
                "topic_id": t.topic_id,
                "internal": t.internal,
                "partition_count": len(t.partitions),
                "replication_factor": t.replication_factor,
                "min_insync_replicas": t.min_insync_replicas,
                "configs": t.configs,
                "partitions": [_partition_doc(p) for p in parts],
                "error": t.config_error,
            }
        )
        topic_rows = [_partition_row(t.topic, p) for p in parts]
        if t.config_error is not None:
            for row in topic_rows:
                row["error"] = t.config_error
        rows += topic_rows
    return rows, docs


DESCRIBE_COLUMNS = (
    "topic",
    "partition:>",
    "leader:>",
    "replicas",
    "isr",
    "elr",
    "offline_replicas",
    "reassigning",
)


def describe_columns(states: Iterable[TopicState]) -> list[str]:
    """The columns of ``topics describe``'s tables: an ``error`` column last when a topic's
    configs could not be read (the output is unchanged otherwise)."""
    failed = any(t.config_error is not None for t in states)
    return [*DESCRIBE_COLUMNS, "error"] if failed else list(DESCRIBE_COLUMNS)


def failures(states: Iterable[TopicState]) -> list[tuple[str, str]]:
    """(topic, reason) of each topic whose configs could not be read."""
    return [(t.topic, t.config_error) for t in states if t.config_error is not None]
