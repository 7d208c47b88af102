"""The rows of ``partitions reassign``, pure: what the brokers answer (per partition of an
AlterPartitionReassignments or AlterReplicaLogDirs, the ongoing reassignments, the copies
between log dirs in flight), and what execute, verify and cancel show from them, with their
columns (:func:`kctl.formatters.cols` specs; ``:>`` right-justifies) and the lines for stderr.
``generate``'s rows are in :mod:`kctl.reassign.report`, ``status``'s in
:mod:`kctl.reassign.status`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NotRequired, TypedDict

from kctl.reassign import waves
from kctl.reassign.assign import TP, Assignment

RESULT_COLUMNS = ("topic", "partition:>", "status", "error", "message")
ONGOING_COLUMNS = ("topic", "partition:>", "replicas", "adding_replicas", "removing_replicas")
PLAN_COLUMNS = ("topic", "partition:>", "current", "proposed", "moving")
WAVE_PLAN_COLUMNS = (*PLAN_COLUMNS, "state", "wave:>")
VERIFY_COLUMNS = ("topic", "partition:>", "status", "current", "target")
CANCEL_COLUMNS = (*ONGOING_COLUMNS[:2], "kind", *ONGOING_COLUMNS[2:], "log_dir")
CANCEL_RESULT_COLUMNS = (*RESULT_COLUMNS[:2], "broker", *RESULT_COLUMNS[2:])


class Answer(TypedDict):
    """A broker's answer for one partition of AlterPartitionReassignments."""

    topic: str
    partition: int
    status: str  # accepted | failed
    error: str | None  # Kafka's error name
    message: str | None


class DirAnswer(TypedDict):
    """A broker's answer for one replica of AlterReplicaLogDirs."""

    topic: str
    partition: int
    broker: int
    status: str  # accepted | pending (not on the broker yet) | failed
    error: str | None
    log_dir: str


class Ongoing(TypedDict):
    """One ongoing reassignment (ListPartitionReassignments)."""

    topic: str
    partition: int
    replicas: list[int]
    adding_replicas: list[int]
    removing_replicas: list[int]


class DirMove(TypedDict):
    """A copy between a broker's log dirs in flight (a replica with a "future" log)."""

    topic: str
    partition: int
    kind: str  # log-dir
    broker: int
    replicas: list[int]  # [broker]
    adding_replicas: list[int]  # []
    removing_replicas: list[int]  # []
    from_dir: str | None  # the dir the replica is in (None: it has none of its own)
    log_dir: str  # the dir it is being copied into
    bytes_copied: int
    bytes_total: int


class Cleared(TypedDict):
    """A throttle config removed."""

    entity: str  # broker | topic
    name: str
    config: str


class PlanRow(TypedDict):
    topic: str
    partition: int
    current: list[int]
    proposed: list[int]
    moving: list[int]  # the brokers that would receive a new replica
    state: NotRequired[str]  # in waves: done | in-flight | pending | missing
    wave: NotRequired[int | None]  # in waves: the 1-based wave that moves it


class VerifyRow(TypedDict):
    topic: str
    partition: int
    status: str
    current: list[int]
    target: list[int]


class CancelRow(TypedDict):
    """An ongoing reassignment that ``cancel`` would cancel (kind ``replicas``)."""

    topic: str
    partition: int
    replicas: list[int]
    adding_replicas: list[int]
    removing_replicas: list[int]
    kind: str
    log_dir: None


def failed(results: Iterable[Mapping[str, object]]) -> bool:
    """Whether any per-partition answer (``status``) of the broker is ``failed``."""
    return any(r["status"] == "failed" for r in results)


def in_plan(running: list[Ongoing], plan: Assignment | None) -> list[Ongoing]:
    """The ongoing reassignments of ``plan``'s partitions; all of them when there is no plan
    (``cancel --all``)."""
    if plan is None:
        return running
    return [r for r in running if (r["topic"], r["partition"]) in plan]


def plan_rows(current: Assignment, target: Assignment) -> list[PlanRow]:
    """One row per partition of ``target``: current and proposed replicas, and the brokers that
    would receive a new replica (``moving``)."""
    return [
        {
            "topic": topic,
            "partition": partition,
            "current": current.get((topic, partition), []),
            "proposed": replicas,
            "moving": sorted(set(replicas) - set(current.get((topic, partition), []))),
        }
        for (topic, partition), replicas in sorted(target.items())
    ]


def execute_notes(dirs: int, dir_throttle: bool, execute: bool) -> list[str]:
    """What ``execute`` says of a plan's log dirs before anything else: ``--dir-throttle`` with
    none to move, or (without --execute) how many replicas it moves into a named dir."""
    out = []
    if dir_throttle and not dirs:
        out.append("kctl: warning: --dir-throttle: the plan moves no replica between log dirs")
    if dirs and not execute:
        out.append(f"{dirs} replica(s) with a log dir in the plan (moved there once on its broker)")
    return out


def dry_run(
    plan: Assignment,
    current: Assignment,
    running: set[TP] | None,
    max_concurrent: int | None,
    by_bytes: bool,
) -> tuple[list[PlanRow], tuple[str, ...], str]:
    """``execute`` without --execute: (rows, columns, the line for stderr). With ``running``
    (the ongoing reassignments: the plan would run in waves) each row has its state and its
    wave, counted in partitions (``by_bytes``: the byte budget is applied at run time)."""
    rows = plan_rows(current, plan)
    if running is None:
        return (
            rows,
            PLAN_COLUMNS,
            (f"plan: {len(plan)} partition(s); nothing changed (add --execute to start)"),
        )
    states = waves.classify(plan, current, running)
    todo = [tp for tp, s in states.items() if s == waves.PENDING]
    order = waves.schedule(todo, {}, max_concurrent, None)
    for row in rows:
        tp = (row["topic"], row["partition"])
        row["state"] = states[tp]
        row["wave"] = waves.wave_of(order, tp) or None
    line = (
        f"plan: {len(plan)} partition(s), {len(todo)} to move in {len(order)} wave(s)"
        + (" (by count; --max-bytes-in-flight is applied at run time)" if by_bytes else "")
        + "; nothing changed (add --execute to start)"
    )
    return rows, WAVE_PLAN_COLUMNS, line


def verify_rows(
    plan: Assignment,
    current: Assignment,
    running: Iterable[TP],
    dir_states: Mapping[tuple[str, int, int], str] | None = None,
) -> tuple[list[VerifyRow], bool]:
    """Per partition of the plan: complete | in-progress | not-applied (| missing from
    ``current``, the cluster's replicas); and whether all are done. With ``dir_states`` (of
    the plan's log_dirs entries), a partition on its brokers but with a replica not yet in its
    log dir is ``in-progress (log dir)`` (being copied) or ``not-applied (log dir)``."""
    moving = set(running)
    rows: list[VerifyRow] = []
    for (topic, partition), replicas in sorted(plan.items()):
        now = current.get((topic, partition))
        if (topic, partition) in moving:
            status = "in-progress"
        elif now is None:
            status = "missing"
        elif now == replicas:
            status = "complete"
        elif set(now) == set(replicas):
            status = "complete (other order)"
        else:
            status = "not-applied"
        rows.append(
            {
                "topic": topic,
                "partition": partition,
                "status": status,
                "current": [] if now is None else now,
                "target": replicas,
            }
        )
    if dir_states:
        for r in rows:
            if not r["status"].startswith("complete"):
                continue
            mine = [
                st
                for (t, p, _b), st in dir_states.items()
                if (t, p) == (r["topic"], r["partition"])
            ]
            if "moving" in mine:
                r["status"] = "in-progress (log dir)"
            elif any(st != "done" for st in mine):
                r["status"] = "not-applied (log dir)"
    done = all(r["status"].startswith("complete") for r in rows)
    return rows, done


def verify_clears(rows: list[VerifyRow], done: bool, keep_throttle: bool) -> bool:
    """Whether ``verify`` removes the throttle: unless --keep-throttle, once the plan is done,
    or while nothing of it is in flight (a leftover throttle)."""
    if keep_throttle:
        return False
    return done or not any(r["status"].startswith("in-progress") for r in rows)


def verify_note(rows: list[VerifyRow], done: bool, cleared: int | None, file: Path) -> str | None:
    """The line ``verify`` ends with: ``cleared`` throttle configs removed (None: the throttle
    was left alone)."""
    if done:
        if cleared is None:
            return None
        if cleared:
            return f"reassignment complete; throttle removed ({cleared} config(s))"
        return "reassignment complete; no throttle was set"
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    if cleared is None:
        return f"reassignment not complete ({summary}); the throttle (if any) stays"
    return (
        f"reassignment not complete ({summary}); nothing in flight"
        + (f", leftover throttle removed ({cleared} config(s))" if cleared else "")
        + f"; 'reassign verify --file {file} --resume' submits the rest"
    )


def cancel_rows(chosen: list[Ongoing], copies: list[DirMove]) -> list[CancelRow | DirMove]:
    """What ``cancel`` would stop: the ongoing reassignments (kind ``replicas``) and the copies
    between log dirs."""
    rows: list[CancelRow | DirMove] = [{**r, "kind": "replicas", "log_dir": None} for r in chosen]
    return rows + list(copies)


def cancel_plan_note(chosen: int, copies: int, preserve_throttles: bool) -> str:
    """The line of ``cancel`` without --execute."""
    return (
        f"{chosen} ongoing reassignment(s)"
        + (f" and {copies} log-dir move(s)" if copies else "")
        + " to cancel; nothing changed (add --execute to cancel"
        + ("" if preserve_throttles else " and remove the replication throttles")
        + ")"
    )


def cancel_topics(
    plan: Assignment | None, cluster_topics: Iterable[str], chosen: list[Ongoing]
) -> list[str]:
    """The topics whose throttled replica lists ``cancel`` removes, as
    kafka-reassign-partitions.sh --cancel: every topic of the plan, whether or not a move was
    still in flight; with --all, every topic of the cluster and of the moves cancelled."""
    if plan is not None:
        return sorted({t for t, _ in plan})
    return sorted({*cluster_topics, *(r["topic"] for r in chosen)})


def cleared_note(cleared: int) -> str:
    return f"throttle removed ({cleared} config(s))" if cleared else "no throttle was set"
