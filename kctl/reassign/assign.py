"""Partition placement, pure: the proposal of ``reassign generate --topic T --brokers 1,2,3``
(plan files: :mod:`kctl.reassign.plan_file`; the whole-cluster planner:
:mod:`kctl.reassign.passes`).

:func:`propose` moves only the replicas that sit on brokers outside the target set (replicas
already on a target broker stay), places each moved replica on a rack the partition does not use
yet while there is one, then on the least-loaded broker, and finally orders each replica list so
that preferred leaders are balanced (no single leader swap would even them out further).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from kctl.errors import KctlError, NotFoundError

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


def broker_list(racks: dict[int, str | None]) -> str:
    """The cluster's broker ids (the keys of ``racks``), for an error's why."""
    return ", ".join(map(str, sorted(racks)))


def proposal(current: Assignment, targets: list[int], racks: dict[int, str | None]) -> Assignment:
    """``reassign generate``: :func:`propose` onto ``targets``, each of which must be one of the
    cluster's brokers (the keys of ``racks``)."""
    unknown = [b for b in targets if b not in racks]
    if unknown:
        raise NotFoundError(f"unknown broker {unknown[0]}", f"brokers: {broker_list(racks)}")
    try:
        return propose(current, targets, racks)
    except PlanError as exc:
        raise KctlError("cannot generate a reassignment", str(exc)) from exc
