"""Replica health rules: pure functions over a :class:`ClusterSnapshot`, findings out.

Severities (documented in docs/replicas.md):

- ``error``: the partition cannot serve or cannot take acks=all writes — ``offline``,
  ``under-min-isr``, ``unregistered-broker``, ``log-dir-offline``.
- ``warn``: one failure away from an error, or placed against policy — ``under-replicated``,
  ``at-min-isr``, ``rf-below-minimum``, ``rack-spread``, ``future-replica``,
  ``replica-size-behind``.
- ``info``: balance, nothing at risk — ``preferred-leader``, ``leader-skew``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from kctl.replicas.model import ClusterSnapshot, PartitionInfo, TopicInfo

SEVERITIES = ("info", "warn", "error")
RANK = {name: i for i, name in enumerate(SEVERITIES)}

CHECKS = {
    "offline": "error",
    "under-min-isr": "error",
    "unregistered-broker": "error",
    "log-dir-offline": "error",
    "under-replicated": "warn",
    "at-min-isr": "warn",
    "rf-below-minimum": "warn",
    "rack-spread": "warn",
    "future-replica": "warn",
    "replica-size-behind": "warn",
    "preferred-leader": "info",
    "leader-skew": "info",
}

# Kafka's leader.imbalance.per.broker.percentage default: above it the controller rebalances.
LEADER_IMBALANCE_PERCENT = 10.0


@dataclass
class Finding:
    severity: str
    check: str
    topic: str | None
    partition: int | None
    brokers: list[int]
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Options:
    """Thresholds; defaults follow Kafka's own where it has one."""

    min_rf: int | None = None  # None: the cluster's default.replication.factor (else 1)
    leader_imbalance_percent: float = LEADER_IMBALANCE_PERCENT
    size_behind_ratio: float = 0.5  # follower below half the leader's size ...
    size_behind_min_bytes: int = 64 * 1024 * 1024  # ... and more than this many bytes behind
    topics: list[str] = field(default_factory=list)  # empty: every topic


def _finding(
    check: str, topic: str | None, partition: int | None, brokers: Iterable[int], reason: str
) -> Finding:
    return Finding(CHECKS[check], check, topic, partition, sorted(set(brokers)), reason)


def effective_min_isr(snap: ClusterSnapshot, topic: TopicInfo) -> int:
    """The topic's min.insync.replicas, else the broker default, else Kafka's default 1."""
    if topic.min_insync_replicas is not None:
        return topic.min_insync_replicas
    if snap.default_min_insync_replicas is not None:
        return snap.default_min_insync_replicas
    return 1


def selected_topics(snap: ClusterSnapshot, names: list[str]) -> list[TopicInfo]:
    if not names:
        return list(snap.topics)
    wanted = set(names)
    return [t for t in snap.topics if t.name in wanted]


def partition_findings(
    snap: ClusterSnapshot, topic: TopicInfo, p: PartitionInfo, min_rf: int
) -> list[Finding]:
    """Every per-partition rule, for one partition."""
    out: list[Finding] = []
    live = {b.id for b in snap.brokers}
    name, part = topic.name, p.partition
    if p.leader < 0:
        out.append(_finding("offline", name, part, p.replicas, "no leader"))
    elif p.leader not in live:
        out.append(_finding("offline", name, part, [p.leader], f"leader {p.leader} is not alive"))
    unknown = [r for r in p.replicas if r not in live]
    if unknown:
        out.append(
            _finding(
                "unregistered-broker",
                name,
                part,
                unknown,
                f"replicas on brokers not registered in the cluster: {_ids(unknown)}",
            )
        )
    min_isr = effective_min_isr(snap, topic)
    isr, rf = len(p.isr), len(p.replicas)
    missing = [r for r in p.replicas if r not in p.isr]
    if isr < min_isr:
        out.append(
            _finding(
                "under-min-isr",
                name,
                part,
                missing,
                f"ISR {_ids(p.isr)} has {isr} replica(s), below min.insync.replicas {min_isr}",
            )
        )
    elif isr == min_isr and rf > min_isr:
        out.append(
            _finding(
                "at-min-isr",
                name,
                part,
                missing,
                f"ISR {_ids(p.isr)} is at min.insync.replicas {min_isr}: one more replica out "
                "stops acks=all writes",
            )
        )
    if isr < rf:
        out.append(
            _finding(
                "under-replicated",
                name,
                part,
                missing,
                f"ISR {_ids(p.isr)} is smaller than replicas {_ids(p.replicas)}",
            )
        )
    if rf < min_rf:
        out.append(
            _finding(
                "rf-below-minimum",
                name,
                part,
                p.replicas,
                f"replication factor {rf} is below the minimum {min_rf}",
            )
        )
    if p.replicas and p.leader >= 0 and p.leader != p.replicas[0]:
        out.append(
            _finding(
                "preferred-leader",
                name,
                part,
                [p.leader, p.replicas[0]],
                f"leader {p.leader} is not the preferred leader {p.replicas[0]}",
            )
        )
    spread = rack_spread(snap, p.replicas)
    if spread is not None:
        out.append(_finding("rack-spread", name, part, spread[0], spread[1]))
    return out


def rack_spread(snap: ClusterSnapshot, replicas: list[int]) -> tuple[list[int], str] | None:
    """(brokers sharing a rack, reason) when two replicas share a rack while the cluster has
    enough racks to avoid it; None when fine or when racks are unknown."""
    racks = {b.id: b.rack for b in snap.brokers}
    if not racks or any(r is None for r in racks.values()):
        return None
    placed = [racks.get(r) for r in replicas]
    if any(r is None for r in placed):
        return None  # a replica on an unknown broker: reported by unregistered-broker
    all_racks = set(racks.values())
    used = Counter(placed)
    if len(used) >= min(len(replicas), len(all_racks)):
        return None
    rack, _ = max(used.items(), key=lambda kv: (kv[1], str(kv[0])))
    sharing = [r for r in replicas if racks[r] == rack]
    return (
        sharing,
        f"replicas {_ids(sharing)} share rack {rack!r} while {len(all_racks)} racks exist",
    )


def leader_skew(snap: ClusterSnapshot, topics: list[TopicInfo], percent: float) -> list[Finding]:
    """Per broker, as Kafka's controller measures it: the share of the partitions it is the
    preferred leader of that it does not lead."""
    preferred: Counter[int] = Counter()
    not_leading: Counter[int] = Counter()
    leading: Counter[int] = Counter()
    for t in topics:
        for p in t.partitions:
            if p.leader >= 0:
                leading[p.leader] += 1
            if not p.replicas or p.leader < 0:
                continue  # a leaderless partition is reported as offline
            preferred[p.replicas[0]] += 1
            if p.leader != p.replicas[0]:
                not_leading[p.replicas[0]] += 1
    out = []
    for broker in sorted(preferred):
        ratio = 100.0 * not_leading[broker] / preferred[broker]
        if ratio > percent:
            out.append(
                _finding(
                    "leader-skew",
                    None,
                    None,
                    [broker],
                    f"broker {broker} leads {leading[broker]} partition(s) but is preferred "
                    f"leader of {preferred[broker]}; {not_leading[broker]} "
                    f"({ratio:.0f}%) led elsewhere, above {percent:g}%",
                )
            )
    return out


def log_dir_findings(
    snap: ClusterSnapshot, topics: list[TopicInfo], opts: Options
) -> list[Finding]:
    names = {t.name for t in topics}
    out: list[Finding] = []
    size: dict[tuple[str, int, int], int] = {}  # (topic, partition, broker) → bytes
    for d in snap.log_dirs:
        if d.error is not None:
            out.append(
                _finding(
                    "log-dir-offline",
                    None,
                    None,
                    [d.broker],
                    f"log dir {d.path} on broker {d.broker} is offline ({d.error})",
                )
            )
            continue
        for r in d.replicas:
            if r.topic not in names:
                continue
            if r.is_future:
                out.append(
                    _finding(
                        "future-replica",
                        r.topic,
                        r.partition,
                        [d.broker],
                        f"future replica in {d.path} on broker {d.broker} "
                        f"({r.offset_lag} offsets behind, {r.size} bytes): a log-dir move "
                        "is in progress or stuck",
                    )
                )
            else:
                size[(r.topic, r.partition, d.broker)] = r.size
    for t in topics:
        for p in t.partitions:
            leader_size = size.get((t.name, p.partition, p.leader))
            if leader_size is None:
                continue
            for replica in p.replicas:
                rsize = size.get((t.name, p.partition, replica))
                if replica == p.leader or rsize is None:
                    continue
                behind = leader_size - rsize
                if behind > opts.size_behind_min_bytes and rsize < leader_size * (
                    1 - opts.size_behind_ratio
                ):
                    out.append(
                        _finding(
                            "replica-size-behind",
                            t.name,
                            p.partition,
                            [replica],
                            f"replica on broker {replica} holds {rsize} bytes, leader {p.leader} "
                            f"holds {leader_size} ({behind} behind)",
                        )
                    )
    return out


def validate(snap: ClusterSnapshot, opts: Options | None = None) -> list[Finding]:
    """Every finding over the snapshot (or ``opts.topics``), most severe first."""
    opts = opts or Options()
    min_rf = opts.min_rf if opts.min_rf is not None else (snap.default_replication_factor or 1)
    topics = selected_topics(snap, opts.topics)
    out: list[Finding] = []
    for t in topics:
        for p in t.partitions:
            out += partition_findings(snap, t, p, min_rf)
    out += leader_skew(snap, topics, opts.leader_imbalance_percent)
    out += log_dir_findings(snap, topics, opts)
    return sort_findings(out)


def sort_findings(findings: list[Finding]) -> list[Finding]:
    return sorted(
        findings,
        key=lambda f: (
            -RANK[f.severity],
            f.check,
            f.topic or "",
            -1 if f.partition is None else f.partition,
            f.brokers,
        ),
    )


def at_or_above(findings: list[Finding], severity: str) -> list[Finding]:
    return [f for f in findings if RANK[f.severity] >= RANK[severity]]


def counts(findings: list[Finding]) -> dict[str, int]:
    c = defaultdict(int, {s: 0 for s in reversed(SEVERITIES)})
    for f in findings:
        c[f.severity] += 1
    return dict(c)


def _ids(ids: Iterable[int]) -> str:
    return "[" + ",".join(str(i) for i in ids) + "]"
