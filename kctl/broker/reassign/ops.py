"""The operations of ``kctl partitions reassign`` on the cluster, one per command step: the
current assignment a plan is checked against, the one-shot execute, verify and what it does
with the throttle, what cancel would stop and stopping it, and status. The rows and the lines
they say are :mod:`kctl.reassign.rows`' and :mod:`kctl.reassign.status`'s; running in waves is
:mod:`kctl.broker.reassign.run`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kctl.broker import kafka_python
from kctl.broker.client import Admin
from kctl.broker.cluster_view import cluster_view
from kctl.broker.connect import Connection
from kctl.broker.reassign import log_dirs, seen, throttles, wire
from kctl.errors import NotFoundError
from kctl.reassign import rows as R
from kctl.reassign.assign import TP, Assignment
from kctl.reassign.plan_file import LogDirs, check_plan
from kctl.reassign.status import StatusRow, moves, status_notes
from kctl.reassign.throttles import ThrottleValue


def current_assignment(admin: Admin, topics: list[str]) -> tuple[Assignment, dict[int, str | None]]:
    """(assignment of every partition of ``topics``, broker id → rack)."""
    from kctl.broker import cluster

    view = cluster_view(admin)
    for t in topics:
        if t not in view.topics:
            raise NotFoundError(f"unknown topic {t!r}", "not in the cluster's metadata")
    racks = {b.id: b.rack for b in cluster.describe(admin).brokers}
    current = {
        (t, p.partition): list(p.replicas) for t in topics for p in view.topics[t].partitions
    }
    return current, racks


def checked_current(admin: Admin, plan: Assignment) -> Assignment:
    """Before a plan is acted on: the cluster takes reassignments, and the plan's partitions
    and brokers exist; the current assignment of its topics."""
    wire.check_alter_supported(admin.conn, "reassigning partitions")
    current, racks = current_assignment(admin, sorted({t for t, _ in plan}))
    check_plan(plan, current, racks)
    return current


def running(conn: Connection) -> set[TP]:
    """The partitions being reassigned now."""
    return {(r["topic"], r["partition"]) for r in wire.ongoing(conn)}


def execute_once(
    admin: Admin,
    current: Assignment,
    plan: Assignment,
    throttle: int | None,
    note: Callable[[str], None],
) -> list[R.Answer]:
    """``execute`` neither in waves nor with log dirs: the throttle (if any) set, then the whole
    plan submitted; the broker's answer per partition."""
    if throttle is not None:
        throttles.set_throttle(admin, current, plan, throttle)
        note(f"replication throttled to {throttle} bytes/s until 'reassign verify' finds it done")
    return wire.alter(admin.conn, dict(plan), "reassigning partitions")


def verify(
    admin: Admin, plan: Assignment, dirs: LogDirs | None = None
) -> tuple[list[R.VerifyRow], bool]:
    """Per partition of the plan, where it stands on the cluster; and whether all are done
    (:func:`kctl.reassign.rows.verify_rows`; with ``dirs``, each replica in its log dir)."""
    view = cluster_view(admin)
    current = {
        (topic, p.partition): p.replicas
        for topic in {t for t, _ in plan}
        if topic in view.topics
        for p in view.topics[topic].partitions
    }
    wanted: dict[str, list[int]] = {}
    for topic, partition in plan:
        wanted.setdefault(topic, []).append(partition)
    moving = [(r["topic"], r["partition"]) for r in wire.ongoing(admin.conn, wanted)]
    states = None
    if dirs:
        with kafka_python.admin_client(admin.conn) as client:
            states, _ = log_dirs.dir_states_with(client, dirs)
    return R.verify_rows(plan, current, moving, states)


def settle(
    admin: Admin,
    plan: Assignment,
    rows: list[R.VerifyRow],
    done: bool,
    keep_throttle: bool,
    file: Path,
) -> str | None:
    """After ``verify``: the throttle removed where :func:`~kctl.reassign.rows.verify_clears`
    says; the line to say."""
    cleared = None
    if R.verify_clears(rows, done, keep_throttle):
        cleared = len(throttles.clear_throttles(admin, sorted({t for t, _ in plan})))
    return R.verify_note(rows, done, cleared, file)


@dataclass
class ToCancel:
    """What ``cancel`` would stop: the ongoing reassignments chosen, the copies between log
    dirs."""

    chosen: list[R.Ongoing]
    copies: list[R.DirMove]


def to_cancel(conn: Connection, plan: Assignment | None, dirs: LogDirs) -> ToCancel:
    """The ongoing reassignments of ``plan`` (None: all) and the copies into its log dirs
    (with no plan: every copy), once the cluster is known to take cancellations."""
    wire.check_alter_supported(conn, "cancelling reassignments")
    chosen = R.in_plan(wire.ongoing(conn), plan)
    copies: list[R.DirMove] = []
    if plan is None or dirs:
        with kafka_python.admin_client(conn) as client:
            copies = log_dirs.dir_moves_with(client, None if plan is None else dirs)
    return ToCancel(chosen, copies)


def cancel(conn: Connection, found: ToCancel) -> list[R.Answer | R.DirAnswer]:
    """Cancel the reassignments and stop the copies of ``found``; the brokers' answers."""
    results: list[R.Answer | R.DirAnswer] = []
    if found.chosen:
        target: dict[TP, list[int] | None] = {
            (r["topic"], r["partition"]): None for r in found.chosen
        }
        results += wire.alter(conn, target, "cancelling reassignments")
    if found.copies:
        with kafka_python.admin_client(conn) as client:
            results += log_dirs.stop_dir_moves_with(client, found.copies)
    return results


def clear_after_cancel(conn: Connection, plan: Assignment | None, found: ToCancel) -> str:
    """As kafka-reassign-partitions.sh --cancel: the rates on every broker and the throttled
    replica lists of :func:`~kctl.reassign.rows.cancel_topics`; the line to say."""
    admin = Admin(conn)
    topics = R.cancel_topics(plan, admin.metadata().topics if plan is None else (), found.chosen)
    return R.cleared_note(len(throttles.clear_throttles(admin, topics)))


def status(admin: Admin, state_dir: Path) -> tuple[list[StatusRow], list[str]]:
    """Every move in flight in the cluster with its age (the first-seen times in
    ``state_dir``), and the lines for stderr."""
    with kafka_python.admin_client(admin.conn) as client:
        ongoing = wire.ongoing_with(client, None, admin.conn.timeout)
        wanted = sorted({r["topic"] for r in ongoing})
        # every partition: the log-dir moves are found among them
        by_broker, silent = log_dirs.log_dirs_by_broker(client, None)
    sizes = log_dirs.sizes_of(by_broker)
    dir_moves = log_dirs.dir_moves_of(by_broker)
    # brokers that did not answer DescribeLogDirs are not asked again (each would cost a
    # timeout); those DescribeConfigs cannot reach are added
    unanswered: list[int] = []
    asked = {b for b in admin.metadata().brokers if b not in silent}
    values: list[ThrottleValue] = throttles.throttle_values(admin, wanted, asked, silent=unanswered)
    found = moves(ongoing, dir_moves, sizes, set(by_broker), values)
    rows = seen.first_seen(admin, found, state_dir)
    return rows, status_notes(rows, values, set(by_broker), [*silent, *unanswered])
