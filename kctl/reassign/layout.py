"""What the whole-cluster planner of ``reassign generate`` is given and returns, pure: the
:class:`Layout` (the current replicas of the chosen partitions, each partition's size, the
brokers and their racks, the fenced brokers, the log dir of each replica), the :class:`Goal`
(what the operator asked for) and the :class:`Plan` (the new replica lists, the log-dir moves
and the figures); and the layout of a cluster snapshot (:func:`from_snapshot`). The passes that
make a plan: :mod:`kctl.reassign.passes`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

from kctl.reassign.assign import TP, PlanError

if TYPE_CHECKING:
    from kctl.replicas.model import ClusterSnapshot

METRICS = ("replicas", "leaders", "disk")


class LowerBound(TypedDict, total=False):
    """What any plan for the goal must move at least: ``replicas`` (count goals) and ``bytes``;
    for a count balance also ``even_bytes``, what must move for the bytes to end even too."""

    replicas: int
    bytes: int
    even_bytes: int


@dataclass
class Layout:
    """What the planner is given. ``partitions[i]`` is placed on ``replicas[i]`` (preferred
    leader first) and holds ``sizes[i]`` bytes (its largest replica; 0 when unknown)."""

    partitions: list[TP]
    replicas: list[list[int]]
    sizes: list[int]
    racks: dict[int, str | None]  # every registered broker -> its rack
    fenced: set[int] = field(default_factory=set)
    # Optional: broker -> its online log dirs; (partition index, broker) -> the dir it is in.
    log_dirs: dict[int, list[str]] = field(default_factory=dict)
    replica_dirs: dict[tuple[int, int], str] = field(default_factory=dict)
    # Per replica bytes where known ((partition index, broker) -> size), for log-dir balance.
    replica_sizes: dict[tuple[int, int], int] = field(default_factory=dict)
    # (broker, log dir) -> bytes there that the plan does not move (other topics, internal
    # ones, future replicas): counted when log dirs are balanced.
    dir_fixed: dict[tuple[int, str], int] = field(default_factory=dict)


@dataclass
class Goal:
    remove: list[int] = field(default_factory=list)
    add: dict[int, str | None] = field(default_factory=dict)  # new broker -> its rack
    balance: str | None = None  # replicas | leaders | disk
    tolerance: float = 0.10
    replication_factor: int | None = None
    max_moves: int | None = None
    max_bytes: int | None = None
    balance_disks: bool = False
    targets: list[int] | None = None  # only these brokers may hold replicas
    keep_leaders: bool = False  # reorder only the partitions whose replicas change


@dataclass
class Plan:
    replicas: list[list[int]]
    dir_moves: dict[tuple[int, int], str]  # (partition index, broker) -> new log dir
    moved_replicas: int
    moved_bytes: int
    leader_changes: int
    dir_moved_bytes: int
    budget_reached: bool
    unfinished: int  # required moves left undone (budget)
    lower_bound: LowerBound | None
    within_tolerance: bool
    eligible: list[int]
    metric: str


def from_snapshot(
    snapshot: ClusterSnapshot,
    topics: list[str] | None = None,
    include: str | None = None,
    dirs: bool = True,
) -> Layout:
    """The layout of a :class:`~kctl.replicas.model.ClusterSnapshot`: every non-internal topic
    (or ``topics``, or those whose name matches the regular expression ``include``), sizes from
    its log dirs (a partition's size is its largest replica); ``dirs``: also each replica's log
    dir and size (what ``balance_disks`` needs)."""
    import re

    pattern = re.compile(include) if include else None
    wanted = set(topics or [])
    known = {t.name for t in snapshot.topics}
    for name in sorted(wanted - known):
        raise PlanError(f"unknown topic {name!r}")
    chosen = []
    for t in snapshot.topics:
        if wanted:
            if t.name not in wanted:
                continue
        elif t.internal:
            continue
        if pattern is not None and not pattern.search(t.name):
            continue
        chosen.append(t)
    chosen.sort(key=lambda t: t.name)
    partitions: list[TP] = []
    replicas: list[list[int]] = []
    index: dict[TP, int] = {}
    for t in chosen:
        for p in sorted(t.partitions, key=lambda p: p.partition):
            index[(t.name, p.partition)] = len(partitions)
            partitions.append((t.name, p.partition))
            replicas.append(list(p.replicas))
    sizes = [0] * len(partitions)
    log_dirs: dict[int, list[str]] = {}
    replica_dirs: dict[tuple[int, int], str] = {}
    replica_sizes: dict[tuple[int, int], int] = {}
    dir_fixed: dict[tuple[int, str], int] = {}
    for d in snapshot.log_dirs:
        if d.error is not None:
            continue
        log_dirs.setdefault(d.broker, []).append(d.path)
        for r in d.replicas:
            i = index.get((r.topic, r.partition))
            if i is None or r.is_future:
                if dirs:
                    key = (d.broker, d.path)
                    dir_fixed[key] = dir_fixed.get(key, 0) + r.size
                continue
            if r.size > sizes[i]:
                sizes[i] = r.size
            if dirs:
                replica_dirs[(i, d.broker)] = d.path
                replica_sizes[(i, d.broker)] = r.size
    racks = {b.id: b.rack for b in snapshot.brokers}
    fenced = set(snapshot.fenced_brokers or [])
    for b in fenced:
        racks.setdefault(b, None)
    return Layout(
        partitions, replicas, sizes, racks, fenced, log_dirs, replica_dirs, replica_sizes, dir_fixed
    )
