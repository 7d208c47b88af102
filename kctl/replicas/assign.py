"""Partition placement, pure: reassignment proposals and replication throttles (plan files
and the operator's input: :mod:`kctl.replicas.plan`; leader elections: :mod:`kctl.elect`).

:func:`propose` moves only the replicas that sit on brokers outside the target set (replicas
already on a target broker stay), places each moved replica on a rack the partition does not use
yet while there is one, then on the least-loaded broker, and finally orders each replica list so
that preferred leaders are balanced (no single leader swap would even them out further).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

TP = tuple[str, int]
Assignment = dict[TP, list[int]]


class PlanError(ValueError):
    """A plan that cannot be made or read."""


def propose(
    current: Assignment, brokers: Iterable[int], racks: dict[int, str | None] | None = None
) -> Assignment:
    """The proposed assignment of every partition in ``current`` onto ``brokers``."""
    targets = sorted(set(brokers))
    if not targets:
        raise PlanError("no target brokers")
    rack_of: dict[int, str | None] = {b: (racks or {}).get(b) for b in targets}
    rack_aware = all(r is not None for r in rack_of.values())
    load: Counter[int] = Counter({b: 0 for b in targets})
    kept: dict[TP, list[int]] = {}
    for tp, replicas in current.items():
        if len(set(replicas)) != len(replicas):
            raise PlanError(f"{tp[0]}-{tp[1]} lists a broker twice: {replicas}")
        if len(replicas) > len(targets):
            raise PlanError(
                f"{tp[0]}-{tp[1]} has {len(replicas)} replicas, more than the "
                f"{len(targets)} target broker(s)"
            )
        kept[tp] = [r for r in replicas if r in load]
        load.update(kept[tp])
    placed: Assignment = {}
    for tp in sorted(current):
        chosen = list(kept[tp])
        used = {rack_of[r] for r in chosen}
        for _ in range(len(current[tp]) - len(chosen)):
            pick = min(
                (b for b in targets if b not in chosen),
                key=lambda b: (rack_aware and rack_of[b] in used, load[b], b),
            )
            chosen.append(pick)
            used.add(rack_of[pick])
            load[pick] += 1
        placed[tp] = chosen
    return _balance_leaders(current, placed)


def _balance_leaders(current: Assignment, placed: Assignment) -> Assignment:
    leaders: Counter[int] = Counter()
    leader: dict[TP, int] = {}
    for tp in sorted(placed):
        replicas = placed[tp]
        if not replicas:
            continue
        old = current[tp][0] if current[tp] else None
        first = old if old in replicas else min(replicas, key=lambda b: (leaders[b], b))
        leader[tp] = first
        leaders[first] += 1
    # Local search: move a leadership to a replica with at least two fewer; each move lowers the
    # sum of squared leader counts, so this ends; the bound is only a guard.
    for _ in range(len(placed) * 4 + 10):
        moved = False
        for tp in sorted(leader):
            cur = leader[tp]
            best = min(placed[tp], key=lambda b: (leaders[b], b))
            if leaders[best] < leaders[cur] - 1:
                leaders[cur] -= 1
                leaders[best] += 1
                leader[tp] = best
                moved = True
        if not moved:
            break
    return {
        tp: ([leader[tp]] + [b for b in replicas if b != leader[tp]]) if replicas else []
        for tp, replicas in sorted(placed.items())
    }


def moves(current: Assignment, proposed: Assignment) -> int:
    """Replicas that change broker (a reorder moves no data)."""
    return sum(len(set(proposed[tp]) - set(current.get(tp, []))) for tp in proposed)


# ---------------------------------------------------------------------------------------------
# Replication throttles


def throttled_replicas(current: Assignment, proposed: Assignment) -> dict[str, dict[str, str]]:
    """Per topic, the values of leader.replication.throttled.replicas (the current replicas of
    each moving partition) and follower.replication.throttled.replicas (the replicas being
    added), as kafka-reassign-partitions.sh sets them."""
    out: dict[str, dict[str, list[str]]] = {}
    for (topic, partition), new in sorted(proposed.items()):
        old = current.get((topic, partition), [])
        adding = [b for b in new if b not in old]
        if not adding and set(new) == set(old):
            continue
        entry = out.setdefault(topic, {"leader": [], "follower": []})
        entry["leader"] += [f"{partition}:{b}" for b in old]
        entry["follower"] += [f"{partition}:{b}" for b in adding]
    return {
        topic: {
            "leader.replication.throttled.replicas": ",".join(v["leader"]),
            "follower.replication.throttled.replicas": ",".join(v["follower"]),
        }
        for topic, v in out.items()
    }
