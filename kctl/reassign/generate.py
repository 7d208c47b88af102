"""``kctl partitions reassign generate`` for the whole cluster, pure: the options read into a
:class:`~kctl.reassign.layout.Goal`, the layout of a cluster snapshot (the file's or one taken
now), what the snapshot lacks for the goal, and the plan with its document and its before/after
figures (:mod:`kctl.reassign.passes`, :mod:`kctl.reassign.report`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kctl.errors import KctlError, NotFoundError, UsageError
from kctl.parsing import added_brokers, broker_ids, byte_size
from kctl.reassign.assign import PlanError
from kctl.reassign.layout import METRICS, Goal, Layout, Plan, from_snapshot
from kctl.reassign.passes import plan
from kctl.reassign.plan_file import PlanDocument, plan_document
from kctl.reassign.report import Report, document, report

if TYPE_CHECKING:
    from kctl.replicas.model import ClusterSnapshot


def placement_only(topics: list[str], brokers: str | None, *others: object) -> bool:
    """Whether ``generate`` was given only --topic and --brokers (and --current-file): the
    placement of those topics on those brokers (:func:`kctl.reassign.assign.proposal`) rather
    than the whole-cluster planner. ``others``: every other option's value (None or False:
    not given)."""
    return bool(topics) and brokers is not None and all(x is None or x is False for x in others)


def goal_of(
    *,
    remove: str | None,
    add: str | None,
    balance: str | None,
    tolerance: float,
    replication_factor: int | None,
    max_moves: int | None,
    max_bytes: str | None,
    balance_disks: bool,
    brokers: str | None,
    keep_leaders: bool = False,
) -> Goal:
    """The goal the options of ``generate`` describe (``tolerance`` in percent)."""
    if balance is not None and balance not in METRICS:
        raise UsageError(f"unknown --balance {balance!r}", "replicas, leaders or disk")
    if tolerance < 0:
        raise UsageError("--tolerance must be >= 0", f"got {tolerance}")
    size = None if max_bytes is None else byte_size(max_bytes, "--max-bytes")
    removed = broker_ids(remove, "--remove-broker", "4,5") if remove else []
    added = added_brokers(add) if add else {}
    both = sorted(set(removed) & set(added))
    if both:
        raise UsageError(f"broker {both[0]} is both added and removed")
    return Goal(
        remove=removed,
        add=added,
        balance=balance,
        tolerance=tolerance / 100,
        replication_factor=replication_factor,
        max_moves=max_moves,
        max_bytes=size,
        balance_disks=balance_disks,
        targets=None if brokers is None else broker_ids(brokers),
        keep_leaders=keep_leaders,
    )


def layout_of(
    snapshot: ClusterSnapshot, topics: list[str], include: str | None, dirs: bool = True
) -> Layout:
    """The layout to plan (:func:`~kctl.reassign.layout.from_snapshot`): ``topics`` (every
    non-internal one when empty), those matching ``include``; a malformed ``include`` is a
    usage error, a topic the snapshot lacks NotFound."""
    if include is not None:
        try:
            re.compile(include)
        except re.error as exc:
            raise UsageError(f"malformed --include {include!r}", str(exc)) from None
    try:
        return from_snapshot(snapshot, topics or None, include, dirs)
    except PlanError as exc:
        raise NotFoundError(str(exc), "not in the cluster") from None


def snapshot_warnings(snapshot: ClusterSnapshot, goal: Goal) -> list[str]:
    """What the snapshot lacks for this goal: log-dir sizes for bytes, racks."""
    out = []
    if goal.balance == "disk" or goal.balance_disks:
        if not snapshot.log_dirs:
            out.append(
                "kctl: warning: the snapshot has no log dirs (taken with --no-log-dirs, or "
                "no broker answered DescribeLogDirs): every partition counts 0 bytes"
            )
        elif snapshot.log_dirs_unsupported:
            ids = ", ".join(map(str, snapshot.log_dirs_unsupported))
            out.append(f"kctl: warning: no log-dir sizes from broker {ids}")
    return out


@dataclass(frozen=True)
class Generated:
    plan: Plan
    document: PlanDocument  # what -o json prints (and 'reassign execute' reads)
    report: Report  # the --report document, and the table's rows


def make_plan(layout: Layout, goal: Goal) -> Generated:
    """The plan for ``goal``, its document and its report; a removed broker the layout does not
    know is NotFound, a goal no plan can meet (too few brokers) a KctlError."""
    unknown = [b for b in goal.remove if b not in layout.racks and not _hosts(layout, b)]
    if unknown:
        known = ", ".join(map(str, sorted(layout.racks)))
        raise NotFoundError(f"unknown broker {unknown[0]}", f"brokers: {known}")
    try:
        result = plan(layout, goal)
    except PlanError as exc:
        raise KctlError("cannot generate a reassignment", str(exc)) from exc
    return Generated(result, document(layout, result), report(layout, goal, result))


def _hosts(layout: Layout, broker: int) -> bool:
    return any(broker in reps for reps in layout.replicas)


def current_document(layout: Layout) -> PlanDocument:
    """The plan document of the layout as it is (``--current-file``: for a rollback)."""
    return plan_document(
        {tp: list(reps) for tp, reps in zip(layout.partitions, layout.replicas, strict=True)}
    )
