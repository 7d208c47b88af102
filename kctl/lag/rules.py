"""The rules and rows of ``groups list``, ``describe``, ``delete``, ``delete-offsets`` and
``reset-offsets``, pure: which options go together, which groups are refused and why, and the
rows (with their column spec and the notes for stderr) each command shows. The broker layer
reads the groups (:mod:`kctl.broker.groups`); the command hands a :class:`Table` to the output."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kctl import parsing as P
from kctl.errors import KctlError, NotFoundError, UsageError
from kctl.lag.arithmetic import TP, parse_reset_csv
from kctl.lag.model import (
    GROUP_TYPES,
    Described,
    Group,
    Listed,
    OffsetsDeleted,
    ResetPlan,
    ResetRequest,
)


@dataclass
class Table:
    """What a command shows: ``notes`` for stderr first, then ``rows`` under ``columns`` (the
    spec of :func:`kctl.formatters.cols`, ":>" right-justifies), then ``failure`` raised, if
    any (some items failed: exit 1 after showing what happened to each)."""

    rows: list[dict[str, Any]]
    columns: tuple[str, ...]
    notes: list[str] = field(default_factory=list)
    failure: KctlError | None = None


# -- which groups -----------------------------------------------------------------------------


def lists_every_group(groups: list[str], all_groups: bool, *, default_all: bool = False) -> bool:
    """Whether the groups are the cluster's listing (``--all-groups``, or none named where that
    is the default) rather than the ones named; usage errors for both or neither."""
    if all_groups and groups:
        raise UsageError("name groups or give --all-groups, not both")
    if all_groups or (default_all and not groups):
        return True
    if not groups:
        raise UsageError("name at least one group, or give --all-groups")
    return False


def group_types(types: list[str]) -> set[str]:
    """``--type`` values, lower case; a usage error for one Kafka does not have."""
    wanted = {t.lower() for t in types}
    if wanted - set(GROUP_TYPES):
        bad = ", ".join(sorted(wanted - set(GROUP_TYPES)))
        raise UsageError(f"unknown group type {bad}", f"expected {', '.join(GROUP_TYPES)}")
    return wanted


# The states Kafka's groups report (GroupState): classic groups PreparingRebalance,
# CompletingRebalance, Stable, Empty, Dead; consumer and streams groups (KIP-848, KIP-1071)
# Assigning, Reconciling and streams' NotReady too; Unknown when the broker cannot say.
GROUP_STATES = (
    "Stable", "Empty", "PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling",
    "NotReady", "Dead", "Unknown",
)  # fmt: skip


def group_states(states: list[str]) -> list[str]:
    """``--state`` values in any case; a usage error for one Kafka does not have (it would
    select nothing, silently)."""
    known = {s.lower() for s in GROUP_STATES}
    bad = [s for s in states if s.lower() not in known]
    if bad:
        raise UsageError(
            f"unknown group state {', '.join(repr(s) for s in bad)}",
            f"expected {', '.join(GROUP_STATES)}",
        )
    return states


def unknown_suspects(groups: dict[str, Group], committed: dict[str, dict[TP, int]]) -> list[str]:
    """Groups that may not exist: no members, no committed offsets, state Dead, Empty or
    Unknown (a share group is known: ShareGroupDescribe knew it, and it commits no offsets)."""
    return [
        gid
        for gid, g in groups.items()
        if not g.members
        and not committed.get(gid)
        and g.state in ("Dead", "Empty", "Unknown")
        and g.type != "share"
    ]


def check_known(groups: dict[str, Group], suspects: list[str], listed: set[str]) -> None:
    """A suspect that is Dead, or that ListGroups does not list, does not exist for an
    operator (Kafka describes an unknown group as Dead, some brokers as Empty)."""
    for gid in suspects:
        if groups[gid].state == "Dead" or gid not in listed:
            raise NotFoundError(
                f"unknown group {gid!r}",
                f"state {groups[gid].state}: no members and no committed offsets",
            )


# -- list -------------------------------------------------------------------------------------

LIST_COLUMNS = (
    "group", "state", "type", "protocol_type", "assignor", "members:>", "coordinator:>",
)  # fmt: skip


def list_table(
    listed: list[Listed],
    described: dict[str, Group],
    states: list[str],
    unlisted: list[str] | None = None,
) -> Table:
    """One row per listed group with the state DescribeGroups reports; ``states`` (any case)
    keeps only groups in those states. A group gone before it was described is left out.
    ``unlisted``: what the listing missed (:attr:`Listing.missed`), a warning each and exit
    1 after the rows."""
    wanted = {s.lower() for s in states}
    rows = []
    for g in listed:
        d = described.get(g.group)
        if d is None or (wanted and d.state.lower() not in wanted):
            continue
        rows.append(
            {
                "group": g.group,
                "state": d.state,
                "type": g.type,
                "protocol_type": d.protocol_type,
                "assignor": d.assignor,
                "members": len(d.members),
                "coordinator": d.coordinator,
            }
        )
    return _unlisted(Table(rows, LIST_COLUMNS), unlisted or [])


def _unlisted(table: Table, unlisted: list[str]) -> Table:
    """``table`` of a listing that missed groups: a warning for each part missed, and exit 1
    after the rows (it answered for some groups, not all)."""
    if unlisted:
        table.notes[:0] = [f"kctl: warning: {why}" for why in unlisted]
        if table.failure is None:
            table.failure = KctlError("listing groups incomplete", "see the warnings above")
    return table


# -- describe ---------------------------------------------------------------------------------


def describe_view(offsets: bool, members: bool, state: bool) -> str:
    """offsets (the default), members or state; a usage error for more than one."""
    if sum((offsets, members, state)) > 1:
        raise UsageError("choose one of --offsets, --members, --state")
    return "members" if members else "state" if state else "offsets"


def share_offsets_view(ids: list[str], groups: dict[str, Group], view: str) -> bool:
    """Whether ``describe`` shows share groups' start offsets (their default view): only when
    every group described is a share group (refused when they are mixed with others)."""
    shares = [gid for gid in ids if gid in groups and groups[gid].type == "share"]
    if not shares or view != "offsets":
        return False
    if len(shares) != len(ids):
        raise UsageError(
            "describe share groups apart from other groups",
            "their offsets are start offsets, not committed offsets",
        )
    return True


def describe_table(d: Described) -> Table:
    """The rows of the view ``d`` was read for (with a warning for each part of the listing
    of ``--all-groups`` that missed groups, and exit 1 then)."""
    if d.share_offsets is not None:
        table = share_offsets_table(d.ids, d.share_offsets, d.groups)
    elif d.view == "state":
        table = state_table(d.groups, d.addresses or {})
    elif d.view == "members":
        table = members_table(d.groups)
    else:
        table = offsets_table(d.ids, d.lag_rows or [])
    return _unlisted(table, d.unlisted)


def offsets_table(ids: list[str], lag_rows: list[dict[str, Any]]) -> Table:
    """kafka-consumer-groups.sh --describe --offsets: one row per partition (null where Kafka
    prints "-"), a note per group with nothing to show, a warning per negative lag."""
    from kctl.lag.report import negative_lag_warnings

    rows = [
        {
            "group": r["group"],
            "topic": r["topic"],
            "partition": r["partition"],
            "current_offset": None if r["committed_offset"] < 0 else r["committed_offset"],
            "log_end_offset": None if r["log_end_offset"] < 0 else r["log_end_offset"],
            "lag": r["lag"],
            "consumer_id": r["member_id"],
            "host": r["host"],
            "client_id": r["client_id"],
        }
        for r in lag_rows
    ]
    shown = {r["group"] for r in lag_rows}
    notes = [
        f"group {gid!r} has no active members and no committed offsets"
        for gid in ids
        if gid not in shown
    ]
    columns = ("group", "topic", "partition:>", "current_offset:>", "log_end_offset:>", "lag:>",
               "consumer_id", "host", "client_id")  # fmt: skip
    return Table(rows, columns, notes + negative_lag_warnings(lag_rows))


def members_table(groups: dict[str, Group]) -> Table:
    """--members: one row per member (the consumer-protocol and streams fields null for
    others), a note per group without members."""
    rows = [
        {
            "group": g.group,
            "member_id": m.member_id,
            "group_instance_id": m.group_instance_id,
            "client_id": m.client_id,
            "host": m.host,
            "partitions": len(m.assignment),
            "assignment": [f"{t}:{p}" for t, p in m.assignment],
            "member_epoch": m.member_epoch,
            "target_epoch": g.assignment_epoch if m.member_epoch is not None else None,
            "target_assignment": None
            if m.target_assignment is None
            else [f"{t}:{p}" for t, p in m.target_assignment],
            "subscribed_topics": m.subscribed_topics,
            "subscribed_regex": m.subscribed_regex,
            "process_id": m.process_id,
            "topology_epoch": m.topology_epoch,
            "tasks": m.tasks,
            "target_tasks": m.target_tasks,
        }
        for g in groups.values()
        for m in g.members
    ]
    notes = [
        f"group {g.group!r} has no active members (state {g.state})"
        for g in groups.values()
        if not g.members
    ]
    columns = ("group", "member_id", "group_instance_id", "client_id", "host", "partitions:>",
               "assignment")  # fmt: skip
    return Table(rows, columns, notes)


def state_table(groups: dict[str, Group], addresses: dict[int, str]) -> Table:
    """--state: one row per group, its coordinator's host:port from ``addresses``."""
    rows = [
        {
            "group": g.group,
            "coordinator": g.coordinator,
            "coordinator_address": addresses.get(g.coordinator)
            if g.coordinator is not None
            else None,
            "assignor": g.assignor,
            "state": g.state,
            "members": len(g.members),
            "type": g.type,
            "group_epoch": g.group_epoch,
            "assignment_epoch": g.assignment_epoch,
        }
        for g in groups.values()
    ]
    columns = ("group", "coordinator:>", "coordinator_address", "assignor", "state", "members:>")
    return Table(rows, columns)


def share_offsets_table(
    ids: list[str], offsets: dict[str, dict[TP, tuple[int, int]]], groups: dict[str, Group]
) -> Table:
    """kafka-share-groups.sh --describe: per partition the share group's start offset (the
    first record it has not yet acknowledged for good) and its lag; a note per group with no
    offsets yet."""
    rows = []
    notes = []
    for gid in ids:
        for (topic, partition), (start, lag) in sorted(offsets[gid].items()):
            rows.append(
                {
                    "group": gid,
                    "topic": topic,
                    "partition": partition,
                    "start_offset": None if start < 0 else start,
                    "lag": None if lag < 0 else lag,
                }
            )
        if not offsets[gid]:
            notes.append(f"share group {gid!r} has no offsets yet (state {groups[gid].state})")
    return Table(rows, ("group", "topic", "partition:>", "start_offset:>", "lag:>"), notes)


# -- delete -----------------------------------------------------------------------------------


def groups_to_delete(groups: Iterable[str]) -> list[str]:
    """The groups named, each once; a usage error for none."""
    ids = list(dict.fromkeys(groups))
    if not ids:
        raise UsageError("name the groups to delete: as arguments or with --group")
    return ids


def check_deletable(groups: dict[str, Group]) -> None:
    """A group with active members is refused (kafka-consumer-groups.sh's rule)."""
    for g in groups.values():
        if g.active:
            raise KctlError(
                f"refusing to delete group {g.group!r}",
                f"it has {len(g.members)} active member(s), state {g.state}: stop them first",
            )


def delete_plan(ids: list[str]) -> str:
    return f"will delete {len(ids)} group(s) and their committed offsets: {', '.join(ids)}"


def deleted_table(ids: list[str]) -> Table:
    return Table([{"group": g, "status": "deleted"} for g in ids], ("group", "status"))


# -- delete-offsets ---------------------------------------------------------------------------


def share_offsets_topics(group: str, scope: dict[str, list[int] | None], share: Group) -> list[str]:
    """The topics whose state an empty share group loses (kafka-share-groups.sh
    --delete-offsets): whole topics only, and a group with members is refused."""
    if any(parts is not None for parts in scope.values()):
        raise UsageError(
            "a share group's offsets are deleted per topic", "give --topic TOPIC, no partitions"
        )
    if share.members:
        raise KctlError(
            f"refusing to delete offsets of share group {group!r}",
            f"it has {len(share.members)} active member(s): stop them first",
        )
    return sorted(scope)


def offsets_deleted_table(done: OffsetsDeleted) -> Table:
    """A row per partition (a share group: per topic) with "deleted" or the broker's error,
    and a failure naming the first one not deleted."""
    g = done.group
    rows: list[dict[str, Any]]
    if done.share_topics is not None:
        rows = [
            {"group": g, "topic": t, "status": done.topic_errors.get(t) or "deleted"}
            for t in done.share_topics
        ]
        failed = [(t, err) for t, err in sorted(done.topic_errors.items()) if err]
        failure = None
        if failed:
            failure = KctlError(
                f"{len(failed)} topic(s) of share group {g!r} not deleted",
                f"{failed[0][0]}: {failed[0][1]}",
            )
        return Table(rows, ("group", "topic", "status"), failure=failure)
    errors = {tp: err for tp, err in done.errors.items() if err}
    rows = [
        {"group": g, "topic": t, "partition": p, "status": errors.get((t, p)) or "deleted"}
        for t, p in done.partitions
    ]
    failure = None
    if errors:
        (t, p), err = next(iter(sorted(errors.items())))
        failure = KctlError(
            f"{len(errors)} offset(s) of group {g!r} not deleted",
            f"{t}[{p}]: {err}"
            + (" (the group is subscribed to it)" if "SUBSCRIBED" in err else ""),
        )
    return Table(rows, ("group", "topic", "partition:>", "status"), failure=failure)


# -- reset-offsets ----------------------------------------------------------------------------

RESET_OPTIONS = {
    "earliest": "--to-earliest",
    "latest": "--to-latest",
    "current": "--to-current",
    "offset": "--to-offset",
    "shift": "--shift-by",
    "datetime": "--to-datetime",
    "duration": "--by-duration",
    "file": "--from-file",
}
PLAN_ONLY = "plan only: nothing changed (add --execute to commit it)"


def reset_request(
    group: str,
    given: dict[str, Any],
    *,
    topic: list[str],
    all_topics: bool,
    dry_run: bool,
    execute: bool,
    now_s: float,
    read: Callable[[str], str],
) -> ResetRequest:
    """What ``reset-offsets`` was asked, from its options: ``given`` maps each spec of
    :data:`RESET_OPTIONS` to its option's value (False or None: not given); ``read(path)`` is
    the text of ``--from-file``; ``now_s`` the time ``--by-duration`` counts back from.
    Usage errors for no spec or several, and for a scope that does not fit the spec."""
    if dry_run and execute:
        raise UsageError("--dry-run and --execute exclude each other")
    chosen = [k for k in RESET_OPTIONS if given.get(k) is not None and given.get(k) is not False]
    if len(chosen) != 1:
        raise UsageError(f"give exactly one of {', '.join(RESET_OPTIONS.values())}")
    spec = chosen[0]
    if topic and all_topics:
        raise UsageError("give --topic or --all-topics, not both")
    if spec == "file" and (topic or all_topics):
        raise UsageError("--from-file names its partitions: no --topic or --all-topics with it")
    if spec != "file" and not topic and not all_topics:
        raise UsageError("give --topic (repeatable) or --all-topics")
    scope = P.topic_scope(topic) if topic else {}
    file_name = str(given["file"]) if spec == "file" else None
    file_offsets: dict[TP, int] = {}
    if file_name is not None:
        file_offsets = parse_reset_csv(read(file_name), file_name)
        if not file_offsets:
            raise UsageError(f"{file_name} has no topic,partition,offset lines")
    ts_ms = None
    if spec == "datetime":
        ts_ms = P.time_ms(given["datetime"] or "", "--to-datetime")
    elif spec == "duration":
        back = P.duration(given["duration"] or "", "--by-duration")
        ts_ms = int((now_s - back.total_seconds()) * 1000)
    values = {"offset": given.get("offset"), "shift": given.get("shift"), "file": file_offsets}
    return ResetRequest(
        group=group,
        kind={"datetime": "time", "duration": "time"}.get(spec, spec),
        value=values.get(spec),
        scope=scope,
        all_topics=all_topics,
        file_name=file_name,
        ts_ms=ts_ms,
    )


def check_resettable(group: str, described: Group) -> None:
    """A group with active members is refused (a share group: one with members)."""
    if described.active or (described.type == "share" and described.members):
        raise KctlError(
            f"refusing to reset offsets of group {group!r}",
            f"it has {len(described.members)} active member(s), state {described.state}: "
            "stop them first",
        )


def reset_table(plan: ResetPlan) -> Table:
    """The plan as rows, a note per target clamped into its partition's log."""
    notes = []
    for r in plan.rows:
        if r.clamped:
            start, end = plan.marks[(r.topic, r.partition)]
            notes.append(
                f"{r.topic}[{r.partition}]: target clamped {r.clamped} {r.target} "
                f"(the log holds offsets {start}..{end})"
            )
    rows = [
        {
            "group": plan.group,
            "topic": r.topic,
            "partition": r.partition,
            "current": r.current,
            "target": r.target,
            "delta": r.delta,
            "clamped": r.clamped,
        }
        for r in plan.rows
    ]
    columns = ("group", "topic", "partition:>", "current:>", "target:>", "delta:>", "clamped")
    return Table(rows, columns, notes)


def reset_done(plan: ResetPlan) -> str:
    """The note after ``--execute``."""
    if plan.share:
        return f"set {len(plan.rows)} start offset(s) of share group {plan.group!r}"
    return f"committed {len(plan.rows)} offset(s) for group {plan.group!r}"


def unread_times_note(failed: dict[tuple[TP, int], str]) -> str:
    """The stderr warning for partitions whose time lag could not be read (shown as null)."""
    ((t, p), _at), why = sorted(failed.items())[0]
    more = f" and {len(failed) - 1} more" if len(failed) > 1 else ""
    return (
        f"kctl: warning: no time lag for {t}[{p}]{more}: its first unconsumed record could "
        f"not be read ({why})"
    )
