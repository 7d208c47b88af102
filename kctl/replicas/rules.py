"""Replica health rules: pure functions over a :class:`ClusterSnapshot`, findings out.

Severities (documented in docs/replicas.md):

- ``error``: the partition cannot serve or cannot take acks=all writes, or a broker holding
  replicas is down — ``offline``, ``under-min-isr``, ``broker-down``, ``unregistered-broker``,
  ``log-dir-offline``.
- ``warn``: one failure away from an error, or placed against policy — ``under-replicated``,
  ``at-min-isr``, ``rf-below-minimum``, ``rack-spread``, ``future-replica``,
  ``replica-size-behind``.
- ``info``: balance, nothing at risk — ``preferred-leader``, ``leader-skew``.

One stopped broker shows in many findings (each of its partitions under-replicated, at min ISR,
led elsewhere); :func:`causes` groups those under the broker, so the report can lead with the
cause while every finding stays listed.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kctl.replicas.model import ClusterSnapshot, PartitionInfo, TopicInfo

SEVERITIES = ("info", "warn", "error")
RANK = {name: i for i, name in enumerate(SEVERITIES)}

CHECKS = {
    "offline": "error",
    "under-min-isr": "error",
    "broker-down": "error",
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
        return {
            "severity": self.severity,
            "check": self.check,
            "topic": self.topic,
            "partition": self.partition,
            "brokers": list(self.brokers),
            "reason": self.reason,
        }


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


def live_brokers(snap: ClusterSnapshot) -> set[int]:
    """The brokers that are alive: those listed, less any the snapshot says are fenced (a
    snapshot of a metadata image lists the fenced ones too)."""
    return {b.id for b in snap.brokers} - set(snap.fenced_brokers or ())


def broker_state(snap: ClusterSnapshot, broker: int) -> str:
    """``live``; ``fenced`` (registered, not alive); ``unregistered`` (the snapshot lists the
    registrations and this broker is not among them); ``not-alive`` (not live, and the
    snapshot does not say whether it is registered)."""
    if broker in live_brokers(snap):
        return "live"
    if snap.fenced_brokers is None:
        return "not-alive"
    return "fenced" if broker in snap.fenced_brokers else "unregistered"


def partition_findings(
    snap: ClusterSnapshot,
    topic: TopicInfo,
    p: PartitionInfo,
    min_rf: int,
    live: set[int] | None = None,
    racks: dict[int, str | None] | None = None,
) -> list[Finding]:
    """Every per-partition rule, for one partition (``live``, ``racks``: the snapshot's live
    brokers and brokers' racks, when the caller has them already)."""
    out: list[Finding] = []
    live = live_brokers(snap) if live is None else live
    name, part = topic.name, p.partition
    if p.leader < 0:
        out.append(_finding("offline", name, part, p.replicas, "no leader"))
    elif p.leader not in live:
        out.append(_finding("offline", name, part, [p.leader], f"leader {p.leader} is not alive"))
    # A replica on a fenced broker (or one whose registration is unknown) is reported once per
    # broker, by broker_down_findings; only a broker known not to be registered is reported here.
    unknown = [r for r in p.replicas if r not in live and broker_state(snap, r) == "unregistered"]
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
    spread = rack_spread(snap, p.replicas, racks)
    if spread is not None:
        out.append(_finding("rack-spread", name, part, spread[0], spread[1]))
    return out


def rack_spread(
    snap: ClusterSnapshot, replicas: list[int], racks: dict[int, str | None] | None = None
) -> tuple[list[int], str] | None:
    """(brokers sharing a rack, reason) when two replicas share a rack while the cluster has
    enough racks to avoid it; None when fine or when racks are unknown."""
    racks = {b.id: b.rack for b in snap.brokers} if racks is None else racks
    if not racks or any(r is None for r in racks.values()):
        return None
    placed = [racks.get(r) for r in replicas]
    if any(r is None for r in placed):
        return None  # a replica on a broker not alive: reported by broker-down or unregistered
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


def broker_down_findings(snap: ClusterSnapshot, topics: list[TopicInfo]) -> list[Finding]:
    """One finding per broker that holds replicas of ``topics`` and is not alive, unless it is
    known not to be registered (then each partition is reported as ``unregistered-broker``)."""
    held: Counter[int] = Counter()
    for t in topics:
        for p in t.partitions:
            held.update(set(p.replicas))
    out = []
    for broker in sorted(held):
        state = broker_state(snap, broker)
        if state in ("live", "unregistered"):
            continue
        why = (
            "registered but fenced (stopped, or not caught up with the metadata)"
            if state == "fenced"
            else "not alive (stopped, fenced or not registered: the cluster did not say which)"
        )
        out.append(
            _finding(
                "broker-down",
                None,
                None,
                [broker],
                f"broker {broker} is {why}; it holds replicas of {_n(held[broker], 'partition')}",
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
    live, racks = live_brokers(snap), {b.id: b.rack for b in snap.brokers}
    for t in topics:
        for p in t.partitions:
            out += partition_findings(snap, t, p, min_rf, live, racks)
    out += broker_down_findings(snap, topics)
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


# Checks a broker that is down (or not registered) explains when the finding names it: its
# partitions' ISR shrank, their leaders moved, or they have none left.
EXPLAINED_BY_BROKER = frozenset(
    {
        "broker-down",
        "unregistered-broker",
        "offline",
        "under-min-isr",
        "at-min-isr",
        "under-replicated",
        "preferred-leader",
        "leader-skew",
    }
)


@dataclass
class Cause:
    """Findings one cause explains: brokers that are down or not registered."""

    kind: str  # "unregistered-broker" when every broker is known unregistered, else "broker-down"
    brokers: list[int]
    states: dict[int, str]  # broker -> fenced | not-alive | unregistered (see broker_state)
    severity: str  # the most severe of its findings
    counts: dict[str, int]  # check -> findings
    findings: list[Finding]
    title: str  # "broker 2 down (registered, fenced)"
    summary: str  # the title and what follows from it: "...: 18 partitions under-replicated, ..."

    def to_dict(self) -> dict[str, Any]:
        return {
            "cause": self.kind,
            "brokers": self.brokers,
            "broker_states": [{"broker": b, "state": self.states[b]} for b in self.brokers],
            "severity": self.severity,
            "title": self.title,
            "summary": self.summary,
            "counts": self.counts,
            "findings": len(self.findings),
        }

    def row(self) -> dict[str, Any]:
        """The cause as one row of the findings table."""
        return {
            "severity": self.severity,
            "check": self.kind,
            "topic": None,
            "partition": None,
            "brokers": self.brokers,
            "reason": self.summary,
        }


def causes(snap: ClusterSnapshot, findings: list[Finding]) -> list[Cause]:
    """The findings that brokers down (or not registered) explain, grouped by those brokers:
    a finding of a check in EXPLAINED_BY_BROKER that names brokers not alive belongs to the
    group of exactly those brokers. Most severe first; findings keep their order."""
    live = live_brokers(snap)
    groups: dict[tuple[int, ...], list[Finding]] = {}
    for f in findings:
        if f.check not in EXPLAINED_BY_BROKER:
            continue
        key = tuple(b for b in f.brokers if b not in live)
        if key:
            groups.setdefault(key, []).append(f)
    out = []
    for key, members in groups.items():
        states = {b: broker_state(snap, b) for b in key}
        kind = (
            "unregistered-broker"
            if all(s == "unregistered" for s in states.values())
            else "broker-down"
        )
        counts = dict(Counter(f.check for f in members))
        severity = max((f.severity for f in members), key=lambda s: RANK[s])
        title = _title(states)
        out.append(
            Cause(
                kind, list(key), states, severity, counts, members, title, _summary(title, counts)
            )
        )
    return sorted(out, key=lambda c: (-RANK[c.severity], c.brokers))


def finding_documents(groups: list[Cause], findings: list[Finding]) -> list[dict[str, Any]]:
    """Every finding as -o json lists it: its fields and ``cause``, the index of the cause in
    ``groups`` that explains it (None when none does)."""
    index = {id(f): i for i, c in enumerate(groups) for f in c.findings}
    return [{**f.to_dict(), "cause": index.get(id(f))} for f in findings]


def table_rows(groups: list[Cause], findings: list[Finding]) -> list[dict[str, Any]]:
    """The findings table: one row per cause first, then each finding no cause explains."""
    explained = {id(f) for c in groups for f in c.findings}
    return [c.row() for c in groups] + [f.to_dict() for f in findings if id(f) not in explained]


_STATE = {"fenced": "fenced", "not-alive": "not alive", "unregistered": "not registered"}


def _title(states: dict[int, str]) -> str:
    """E.g. "broker 2 down (registered, fenced)", "broker 4 not registered"."""
    brokers = sorted(states)
    subject = f"{_plural(len(brokers), 'broker')} {', '.join(map(str, brokers))}"
    kinds = set(states.values())
    if kinds == {"unregistered"}:
        return f"{subject} not registered"
    if kinds == {"fenced"}:
        return f"{subject} down (registered, fenced)"
    if kinds == {"not-alive"}:
        return f"{subject} down (not alive; whether registered is not known)"
    return f"{subject} down (" + ", ".join(f"{b} {_STATE[states[b]]}" for b in brokers) + ")"


def _summary(title: str, counts: dict[str, int]) -> str:
    """E.g. "broker 2 down (registered, fenced): 18 partitions under-replicated, 7 at min ISR,
    6 leaders moved"."""
    on = "them" if title.startswith("brokers ") else "it"
    words = {
        "offline": "offline",
        "under-min-isr": "under min ISR",
        "under-replicated": "under-replicated",
        "at-min-isr": "at min ISR",
        "unregistered-broker": f"with replicas on {on}",
    }
    parts = [(counts[c], w) for c, w in words.items() if counts.get(c)]
    text = [f"{_n(n, 'partition') if i == 0 else n} {w}" for i, (n, w) in enumerate(parts)]
    moved = counts.get("preferred-leader", 0)
    if moved:
        text.append(f"{_n(moved, 'leader')} moved")
    return title + (": " + ", ".join(text) if text else "")


def _plural(n: int, word: str) -> str:
    return word if n == 1 else word + "s"


def _n(n: int, word: str) -> str:
    return f"{n} {_plural(n, word)}"


def _ids(ids: Iterable[int]) -> str:
    return "[" + ",".join(str(i) for i in ids) + "]"
