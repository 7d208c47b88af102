"""Leader elections, pure: what a ``preferred`` or ``unclean`` election would do to one
partition (kafka-leader-election.sh's rules), the ``--preferred``/``--unclean``/
``--election-type`` options, and the partitions to elect (``--all-topics``, ``--topic``, or
kafka-leader-election.sh's JSON file). Malformed input is a :class:`~kctl.errors.UsageError`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from kctl.errors import UsageError
from kctl.inputs import read_json
from kctl.parsing import Scope, topic_scope


class StepRow(TypedDict):
    topic: str
    partition: int
    leader: int
    replicas: list[int]
    isr: list[int]
    new_leader: int | None
    action: str
    reason: str


@dataclass
class ElectionStep:
    topic: str
    partition: int
    leader: int
    replicas: list[int]
    isr: list[int]
    new_leader: int | None  # None: no election will happen
    action: str  # elect | skip
    reason: str

    def row(self) -> StepRow:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "leader": self.leader,
            "replicas": self.replicas,
            "isr": self.isr,
            "new_leader": self.new_leader,
            "action": self.action,
            "reason": self.reason,
        }


def election_step(
    topic: str,
    partition: int,
    leader: int,
    replicas: list[int],
    isr: list[int],
    live: set[int],
    kind: str,
) -> ElectionStep:
    """What a ``preferred`` or ``unclean`` election would do to one partition."""

    def step(new: int | None, reason: str) -> ElectionStep:
        action = "elect" if new is not None else "skip"
        return ElectionStep(topic, partition, leader, replicas, isr, new, action, reason)

    has_leader = leader >= 0 and leader in live
    if kind == "preferred":
        if not replicas:
            return step(None, "no replicas")
        preferred = replicas[0]
        if leader == preferred:
            return step(None, "already led by its preferred leader")
        if preferred not in live:
            return step(None, f"preferred leader {preferred} is not alive")
        if preferred not in isr:
            return step(None, f"preferred leader {preferred} is not in the ISR")
        return step(preferred, f"move leadership from {leader} to preferred leader {preferred}")
    if kind != "unclean":
        raise ValueError(f"unknown election type {kind!r}")
    if has_leader:
        return step(None, f"has a live leader ({leader})")
    clean = [r for r in replicas if r in isr and r in live]
    if clean:
        return step(clean[0], f"no leader; {clean[0]} is alive and in the ISR (clean election)")
    alive = [r for r in replicas if r in live]
    if not alive:
        return step(None, "no replica is alive")
    return step(
        alive[0], f"no leader and no live ISR member: {alive[0]} leads, records may be lost"
    )


def election_partitions(doc: object, source: str | Path) -> Scope:
    """kafka-leader-election.sh --path-to-json-file: ``{"partitions": [{"topic", "partition"}]}``
    as topic -> partitions (in the file's order); ``source`` names the file in the errors."""
    entries = doc.get("partitions") if isinstance(doc, dict) else None
    if not isinstance(entries, list) or not entries:
        raise UsageError(f"malformed election file {source}", 'expected {"partitions": [...]}')
    parts: dict[str, list[int]] = {}
    for i, e in enumerate(entries):
        topic = e.get("topic") if isinstance(e, dict) else None
        partition = e.get("partition") if isinstance(e, dict) else None
        if not isinstance(topic, str) or not isinstance(partition, int):
            raise UsageError(
                f"malformed election file {source}", f"partitions[{i}] needs topic and partition"
            )
        parts.setdefault(topic, []).append(partition)
    scope: Scope = {topic: numbers for topic, numbers in parts.items()}
    return scope


def election_kind(preferred: bool, unclean: bool, election_type: str | None) -> str:
    """``preferred`` or ``unclean`` from ``--preferred``/``--unclean`` or ``--election-type``
    (kafka-leader-election.sh's spelling, any case); exactly one way, exactly one kind."""
    if election_type is not None:
        kind_given = election_type.lower()
        if kind_given not in ("preferred", "unclean"):
            raise UsageError(f"unknown --election-type {election_type!r}", "preferred or unclean")
        if preferred or unclean:
            raise UsageError("--election-type replaces --preferred and --unclean")
        preferred, unclean = kind_given == "preferred", kind_given == "unclean"
    if preferred == unclean:
        raise UsageError("choose one of --preferred and --unclean")
    return "preferred" if preferred else "unclean"


def election_scope(all_topics: bool, topics: list[str], from_file: Path | None) -> Scope | None:
    """The partitions to elect: None for ``--all-topics``, else ``--topic T[:P,...]`` or the
    election file; exactly one of the three."""
    if sum([all_topics, bool(topics), from_file is not None]) != 1:
        raise UsageError("choose exactly one of --all-topics, --topic, --from-file")
    if topics:
        return topic_scope(list(topics))
    if from_file is not None:
        return election_partitions(read_json(from_file, "election file"), from_file)
    return None
