"""Executing a reassignment plan in waves, pure: where each partition of a plan stands against
the cluster (done, in flight, not started), the waves that the rest is submitted in (at most N
partition moves and/or a byte budget each) and the bytes each move copies. The run itself is
:mod:`kctl.reassign.run`; the throttles of each wave :mod:`kctl.reassign.throttles`; the
progress math :mod:`kctl.reassign.progress`.

Everything here is derived from the plan and the cluster's state (current replicas and the
ongoing reassignments), never from a local state file: ``reassign verify`` on another machine
knows as much as the ``execute`` that started the plan."""

from __future__ import annotations

from collections.abc import Iterable

from kctl.reassign.assign import TP, Assignment

DONE = "done"
IN_FLIGHT = "in-flight"
PENDING = "pending"
MISSING = "missing"


def classify(plan: Assignment, current: Assignment, running: Iterable[TP]) -> dict[TP, str]:
    """Per partition of the plan: ``done`` (its replicas are the plan's, in the plan's order),
    ``in-flight`` (a reassignment of it is ongoing), ``pending`` (not started, or started and
    cancelled), ``missing`` (the partition is not in the cluster)."""
    moving = set(running)
    out: dict[TP, str] = {}
    for tp, target in sorted(plan.items()):
        if tp in moving:
            out[tp] = IN_FLIGHT
        elif tp not in current:
            out[tp] = MISSING
        elif list(current[tp]) == list(target):
            out[tp] = DONE
        else:
            out[tp] = PENDING
    return out


def adding(current: Assignment, target: Assignment, tp: TP) -> list[int]:
    """The brokers that receive a new replica of ``tp``."""
    old = set(current.get(tp, []))
    return [b for b in target[tp] if b not in old]


def move_bytes(current: Assignment, target: Assignment, sizes: dict[TP, int]) -> dict[TP, int]:
    """Bytes each partition's move copies: its size (the largest of its current replicas) per
    replica added. A reorder copies nothing."""
    return {tp: sizes.get(tp, 0) * len(adding(current, target, tp)) for tp in sorted(target)}


def schedule(
    partitions: Iterable[TP],
    cost: dict[TP, int],
    max_concurrent: int | None = None,
    max_bytes: int | None = None,
) -> list[list[TP]]:
    """The waves, in order: partitions taken in their (topic, partition) order, a wave closed
    when it holds ``max_concurrent`` partitions or the next one would take it over
    ``max_bytes`` (a partition larger than the budget goes alone). Without a limit: one wave."""
    waves: list[list[TP]] = []
    wave: list[TP] = []
    used = 0
    for tp in sorted(set(partitions)):
        size = cost.get(tp, 0)
        full = (max_concurrent is not None and len(wave) >= max_concurrent) or (
            max_bytes is not None and wave and used + size > max_bytes
        )
        if full:
            waves.append(wave)
            wave, used = [], 0
        wave.append(tp)
        used += size
    if wave:
        waves.append(wave)
    return waves


def wave_of(waves: list[list[TP]], tp: TP) -> int:
    """The 1-based number of the wave holding ``tp`` (0 when in none)."""
    for i, wave in enumerate(waves, 1):
        if tp in wave:
            return i
    return 0
