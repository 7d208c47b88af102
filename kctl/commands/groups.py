"""kctl groups: consumer groups (kafka-consumer-groups.sh) and lag samples for analytics."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from kctl.commands._common import confirm, connection, example, note, one_name, output_view
from kctl.commands._complete import group_names, topic_names
from kctl.formatters import Output, cols, emit

if TYPE_CHECKING:
    from kctl.broker.client import Admin
    from kctl.broker.groups import Listed

app = typer.Typer(
    help="Consumer groups: list, describe, lag, delete, reset offsets.", no_args_is_help=True
)

_ALL = typer.Option(False, "--all-groups", help="Every group the cluster lists.")
_YES = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation.")
_SCOPE_HELP = "TOPIC or TOPIC:P[,P...] (repeatable)."
_GROUP_HELP = "A group, as kafka-consumer-groups.sh takes it (same as the argument)."
_GROUPS = typer.Option([], "--group", help=_GROUP_HELP + " Repeatable.", autocompletion=group_names)
_GROUP = typer.Option(None, "--group", help=_GROUP_HELP, autocompletion=group_names)


def _chosen(
    admin: Admin, groups: list[str] | None, all_groups: bool, *, default_all: bool = False
) -> tuple[list[str], list[Listed] | None]:
    """The groups named, or every listed group; also the listing when one was made."""
    from kctl.broker import groups as G
    from kctl.errors import UsageError

    if all_groups and groups:
        raise UsageError("name groups or give --all-groups, not both")
    if all_groups or (default_all and not groups):
        listed = G.list_groups(admin)
        return [g.group for g in listed], listed
    if not groups:
        raise UsageError("name at least one group, or give --all-groups")
    return list(dict.fromkeys(groups)), None


@app.command("list", epilog=example("kctl groups list", "kctl groups list --state Stable -o json"))
def list_(
    ctx: typer.Context,
    state: list[str] = typer.Option(
        [], "--state", help="Only groups in this state, e.g. Stable, Empty (repeatable)."
    ),
    type_: list[str] = typer.Option(
        [],
        "--type",
        help="Only groups of this type: classic, consumer, share, streams (repeatable).",
    ),
) -> None:
    """Groups with state, type, protocol type, assignor, member count and coordinator.

    The state is the one DescribeGroups reports (ListGroups' may be stale)."""
    from kctl.broker import groups as G
    from kctl.broker.client import Admin
    from kctl.errors import UsageError

    types = {t.lower() for t in type_}
    if types - set(G.GROUP_TYPES):
        bad = ", ".join(sorted(types - set(G.GROUP_TYPES)))
        raise UsageError(f"unknown group type {bad}", f"expected {', '.join(G.GROUP_TYPES)}")
    admin = Admin(connection(ctx))
    with G.GroupReader(admin) as reader:
        everything = G.list_groups(admin)
        for kind in ("share", "streams"):  # librdkafka's ListGroups leaves them out
            if not types or kind in types:
                known = {g.group for g in everything}
                everything += [g for g in reader.list_typed_groups(kind) if g.group not in known]
        listed = [g for g in everything if not types or g.type in types]
        described = reader.describe([g.group for g in listed])
    wanted = {s.lower() for s in state}
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
    emit(
        Output(
            rows,
            cols("group", "state", "type", "protocol_type", "assignor", "members:>",
                 "coordinator:>"),
        ), output_view(ctx)
    )  # fmt: skip


@app.command(
    "describe",
    epilog=example(
        "kctl groups describe orders-app",
        "kctl groups describe --all-groups --members -o json",
        "kctl groups describe orders-app --state",
    ),
)
def describe(
    ctx: typer.Context,
    groups: list[str] = typer.Argument(None, help="Groups.", autocompletion=group_names),
    group_option: list[str] = _GROUPS,
    all_groups: bool = _ALL,
    offsets: bool = typer.Option(
        False, "--offsets", help="Offsets and lag per partition (default)."
    ),
    members: bool = typer.Option(False, "--members", help="Members and their assignments."),
    state: bool = typer.Option(
        False, "--state", help="State, assignor, coordinator, member count."
    ),
) -> None:
    """What kafka-consumer-groups.sh --describe shows: --offsets (default), --members, --state."""
    from kctl.broker import groups as G
    from kctl.broker.client import Admin
    from kctl.errors import UsageError

    if sum((offsets, members, state)) > 1:
        raise UsageError("choose one of --offsets, --members, --state")
    admin = Admin(connection(ctx))
    ids, listed = _chosen(admin, [*(groups or []), *group_option], all_groups)
    with G.GroupReader(admin) as reader:
        described = reader.describe(ids)
        shares = [gid for gid in ids if described.get(gid) and described[gid].type == "share"]
        if shares and not (members or state):
            if len(shares) != len(ids):
                raise UsageError(
                    "describe share groups apart from other groups",
                    "their offsets are start offsets, not committed offsets",
                )
            _share_offsets(ctx, reader, described, shares)
            return
        if members or state:
            others = [gid for gid in ids if gid not in shares]
            G.require_known(
                admin, {g: described[g] for g in others if g in described},
                reader.committed(others), listed,
            )  # fmt: skip
        else:
            rows = G.lag_samples(admin, reader, ids, listed=listed)
    if state:
        brokers = admin.metadata().brokers
        srows = []
        for g in described.values():
            node = brokers.get(g.coordinator) if g.coordinator is not None else None
            srows.append(
                {
                    "group": g.group,
                    "coordinator": g.coordinator,
                    "coordinator_address": f"{node.host}:{node.port}" if node else None,
                    "assignor": g.assignor,
                    "state": g.state,
                    "members": len(g.members),
                    "type": g.type,
                    "group_epoch": g.group_epoch,
                    "assignment_epoch": g.assignment_epoch,
                }
            )
        emit(
            Output(
                srows,
                cols("group", "coordinator:>", "coordinator_address", "assignor", "state",
                     "members:>"),
            ),
            output_view(ctx),
        )  # fmt: skip
        return
    if members:
        mrows = [
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
            for g in described.values()
            for m in g.members
        ]
        for g in described.values():
            if not g.members:
                note(f"group {g.group!r} has no active members (state {g.state})")
        emit(
            Output(
                mrows,
                cols("group", "member_id", "group_instance_id", "client_id", "host",
                     "partitions:>", "assignment"),
            ), output_view(ctx)
        )  # fmt: skip
        return
    shown = [
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
        for r in rows
    ]
    for gid in ids:
        if not any(r["group"] == gid for r in rows):
            note(f"group {gid!r} has no active members and no committed offsets")
    _warn_negative_lags(rows)
    emit(
        Output(
            shown,
            cols("group", "topic", "partition:>", "current_offset:>", "log_end_offset:>", "lag:>",
                 "consumer_id", "host", "client_id"),
        ), output_view(ctx)
    )  # fmt: skip


def _share_offsets(
    ctx: typer.Context, reader: Any, described: dict[str, Any], ids: list[str]
) -> None:
    """kafka-share-groups.sh --describe: per partition the share group's start offset (the
    first record it has not yet acknowledged for good) and its lag."""
    offsets = reader.share_offsets(ids)
    rows = []
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
            note(f"share group {gid!r} has no offsets yet (state {described[gid].state})")
    emit(
        Output(rows, cols("group", "topic", "partition:>", "start_offset:>", "lag:>")),
        output_view(ctx),
    )


def _warn_negative_lags(rows: list[dict]) -> None:
    """One stderr warning per partition whose committed offset is beyond its log end."""
    from kctl.lag.arithmetic import lag_flag, negative_lag_warning

    for r in rows:
        if lag_flag(r["lag"]):
            note(f"kctl: warning: {negative_lag_warning(r)}")


def _lag_output(rows: list[dict], ts_ms: int) -> tuple[Output, dict[str, int]]:
    from kctl.lag.arithmetic import lag_flag, lag_totals

    group_totals, topic_totals = lag_totals(rows)
    rows = [{**r, "flag": lag_flag(r["lag"])} for r in rows]
    doc = {
        "ts_ms": ts_ms,
        "partitions": rows,
        "topics": [
            {"group": g, "topic": t, "lag": v} for (g, t), v in sorted(topic_totals.items())
        ],
        "groups": [{"group": g, "lag": v} for g, v in sorted(group_totals.items())],
    }
    by_group: dict[str, list[tuple[str, int]]] = {}
    for (g, t), v in sorted(topic_totals.items()):
        by_group.setdefault(g, []).append((t, v))
    footer = []
    for g, total in sorted(group_totals.items()):
        per_topic = by_group.get(g, [])
        if len(per_topic) > 1:
            footer += [
                {"group": g, "topic": t, "partition": "total", "lag": v} for t, v in per_topic
            ]
        footer.append({"group": g, "topic": "TOTAL", "lag": total})
    columns = cols(
        "group", "topic", "partition:>", "committed_offset:>", "log_end_offset:>", "lag:>",
        "flag", "member_id", "host",
    )  # fmt: skip
    return Output(rows, columns, doc=doc, footer=footer, footer_by="group"), group_totals


@app.command(
    "lag",
    epilog=example(
        "kctl groups lag orders-app",
        "kctl groups lag --fail-above 10000   # every group; exit 3 when one lags more (cron, CI)",
        "kctl groups lag --all-groups --record lag.jsonl   # samples for kctl analytics",
        "kctl groups lag orders-app --topic orders --watch 5",
    ),
)
def lag(
    ctx: typer.Context,
    groups: list[str] = typer.Argument(
        None, help="Groups (default: every group).", autocompletion=group_names
    ),
    group_option: list[str] = _GROUPS,
    all_groups: bool = _ALL,
    topic: list[str] = typer.Option(
        [], "--topic", "-t", help="Only these topics (repeatable).", autocompletion=topic_names
    ),
    fail_above: int | None = typer.Option(
        None, "--fail-above", help="Exit 3 when a group's total lag exceeds N.", metavar="N"
    ),
    watch: float | None = typer.Option(
        None, "--watch", help="Redraw every SECONDS until Ctrl-C.", metavar="SECONDS"
    ),
    record: Path | None = typer.Option(
        None,
        "--record",
        help="Append lag samples to FILE (.jsonl or .parquet) for kctl analytics.",
        metavar="FILE",
    ),
) -> None:
    """Lag per partition with totals per group and per topic; samples for kctl analytics.

    Requests do not grow with groups or partitions: one DescribeGroups and one OffsetFetch per
    coordinator, ListOffsets per partition leader."""
    from kctl.broker import groups as G
    from kctl.broker.client import Admin
    from kctl.errors import FindingsError, UsageError
    from kctl.lag.samples import check_record_path, record_samples

    if watch is not None and watch <= 0:
        raise UsageError("--watch SECONDS must be above 0")
    if watch is not None and fail_above is not None:
        raise UsageError("--fail-above is a one-shot check; it does not combine with --watch")
    if record is not None:
        check_record_path(record)
    groups = [*(groups or []), *group_option]
    admin = Admin(connection(ctx))
    with G.GroupReader(admin) as reader:  # kafka-python loads while librdkafka connects
        cluster_id = admin.metadata().cluster_id
        every = all_groups or not groups
        while True:
            ids, listed = _chosen(admin, groups, all_groups, default_all=True)
            ts_ms = int(time.time() * 1000)
            rows = G.lag_samples(admin, reader, ids, topic or None, listed) if ids else []
            if every and not ids:
                note("no consumer groups in the cluster")
            if record is not None:
                n = record_samples(record, rows, cluster_id, ts_ms)
                if watch:
                    note(f"recorded {n} sample(s) to {record}")
            _warn_negative_lags(rows)
            out, group_totals = _lag_output(rows, ts_ms)
            if watch and sys.stdout.isatty():
                sys.stdout.write("\x1b[2J\x1b[H")
                out.title = f"groups lag, every {watch:g}s (Ctrl-C to stop)"
            emit(out, output_view(ctx))
            if not watch:
                break
            sys.stdout.flush()
            # The redraw schedule itself, not a wait for a condition.
            time.sleep(watch)
    if fail_above is not None:
        over = {g: v for g, v in group_totals.items() if v > fail_above}
        if over:
            worst = max(over, key=lambda g: over[g])
            raise FindingsError(
                f"{len(over)} group(s) with lag above {fail_above}",
                f"{worst!r} has lag {over[worst]}",
            )


@app.command(
    "delete",
    epilog=example("kctl groups delete old-app", "kctl groups delete old-app older-app --yes"),
)
def delete(
    ctx: typer.Context,
    groups: list[str] = typer.Argument(None, help="Groups to delete.", autocompletion=group_names),
    group_option: list[str] = _GROUPS,
    yes: bool = _YES,
) -> None:
    """Delete groups and their committed offsets; a group with members is refused."""
    from kctl.broker import groups as G
    from kctl.broker.client import Admin
    from kctl.errors import KctlError, UsageError

    ids = list(dict.fromkeys([*(groups or []), *group_option]))
    if not ids:
        raise UsageError("name the groups to delete: as arguments or with --group")
    admin = Admin(connection(ctx))
    with G.GroupReader(admin) as reader:
        described = reader.describe(ids)
        G.require_known(admin, described, reader.committed(ids))
    for g in described.values():
        if g.active:
            raise KctlError(
                f"refusing to delete group {g.group!r}",
                f"it has {len(g.members)} active member(s), state {g.state}: stop them first",
            )
    note(f"will delete {len(ids)} group(s) and their committed offsets: {', '.join(ids)}")
    confirm(f"Delete {len(ids)} group(s)?", yes=yes, action="delete groups")
    G.delete(admin, ids)
    emit(
        Output([{"group": g, "status": "deleted"} for g in ids], cols("group", "status")),
        output_view(ctx),
    )


@app.command(
    "delete-offsets",
    epilog=example("kctl groups delete-offsets old-app --topic orders --yes"),
)
def delete_offsets(
    ctx: typer.Context,
    group: str | None = typer.Argument(None, help="Group.", autocompletion=group_names),
    group_option: str | None = _GROUP,
    topic: list[str] = typer.Option(
        ..., "--topic", "-t", help=_SCOPE_HELP, autocompletion=topic_names
    ),
    yes: bool = _YES,
) -> None:
    """Delete a group's committed offsets for some topics or partitions (OffsetDelete); for a
    share group, its state of whole topics (DeleteShareGroupOffsets)."""
    from kctl.broker import groups as G
    from kctl.broker.client import Admin
    from kctl.errors import KctlError
    from kctl.parsing import topic_scope

    group = one_name(group, group_option, "group")
    scope = topic_scope(topic)
    admin = Admin(connection(ctx))
    tps = G.scope_partitions(admin, scope)
    with G.GroupReader(admin) as reader:
        described = reader.describe([group])
        if described[group].type == "share":
            _delete_share_offsets(ctx, reader, group, scope, described[group], yes)
            return
        reader.require_offset_delete(f"deleting offsets of group {group!r}")
        G.require_known(admin, described, reader.committed([group]))
        confirm(
            f"Delete {len(tps)} committed offset(s) of group {group!r}?",
            yes=yes,
            action="delete offsets",
        )
        result = reader.delete_offsets(group, tps)
    failed = {tp: err for tp, err in result.items() if err}
    rows = [
        {"group": group, "topic": t, "partition": p, "status": failed.get((t, p)) or "deleted"}
        for t, p in tps
    ]
    emit(Output(rows, cols("group", "topic", "partition:>", "status")), output_view(ctx))
    if failed:
        (t, p), err = next(iter(sorted(failed.items())))
        raise KctlError(
            f"{len(failed)} offset(s) of group {group!r} not deleted",
            f"{t}[{p}]: {err}"
            + (" (the group is subscribed to it)" if "SUBSCRIBED" in err else ""),
        )


def _delete_share_offsets(
    ctx: typer.Context,
    reader: Any,
    group: str,
    scope: dict[str, list[int] | None],
    described: Any,
    yes: bool,
) -> None:
    """kafka-share-groups.sh --delete-offsets: a share group's state of whole topics (its
    start offsets and in-flight records), for an empty group."""
    from kctl.errors import KctlError, UsageError

    if any(parts is not None for parts in scope.values()):
        raise UsageError(
            "a share group's offsets are deleted per topic", "give --topic TOPIC, no partitions"
        )
    if described.members:
        raise KctlError(
            f"refusing to delete offsets of share group {group!r}",
            f"it has {len(described.members)} active member(s): stop them first",
        )
    topics = sorted(scope)
    confirm(
        f"Delete the offsets of share group {group!r} for {', '.join(topics)}?",
        yes=yes,
        action="delete offsets",
    )
    result = reader.delete_share_offsets(group, topics)
    rows = [{"group": group, "topic": t, "status": result.get(t) or "deleted"} for t in topics]
    emit(Output(rows, cols("group", "topic", "status")), output_view(ctx))
    failed = [(t, err) for t, err in sorted(result.items()) if err]
    if failed:
        raise KctlError(
            f"{len(failed)} topic(s) of share group {group!r} not deleted",
            f"{failed[0][0]}: {failed[0][1]}",
        )


@app.command(
    "reset-offsets",
    epilog=example(
        "kctl groups reset-offsets orders-app --topic orders --to-earliest",
        "kctl groups reset-offsets orders-app --all-topics --by-duration PT1H --execute",
        "kctl groups reset-offsets orders-app -t orders:0,1 --shift-by -100 --export > plan.csv",
        "kctl groups reset-offsets orders-app --from-file plan.csv --execute",
    ),
)
def reset_offsets(
    ctx: typer.Context,
    group: str | None = typer.Argument(
        None, help="Group (must have no active members).", autocompletion=group_names
    ),
    group_option: str | None = _GROUP,
    topic: list[str] = typer.Option(
        [], "--topic", "-t", help=_SCOPE_HELP, autocompletion=topic_names
    ),
    all_topics: bool = typer.Option(
        False, "--all-topics", help="Every topic the group has committed offsets for."
    ),
    to_earliest: bool = typer.Option(False, "--to-earliest", help="The log start offset."),
    to_latest: bool = typer.Option(False, "--to-latest", help="The log end offset."),
    to_current: bool = typer.Option(
        False, "--to-current", help="The committed offset (the log end where there is none)."
    ),
    to_offset: int | None = typer.Option(None, "--to-offset", help="Offset N.", metavar="N"),
    shift_by: int | None = typer.Option(
        None, "--shift-by", help="+N or -N from the committed offset.", metavar="N"
    ),
    to_datetime: str | None = typer.Option(
        None,
        "--to-datetime",
        help="First offset at or after an ISO-8601 date-time.",
        metavar="DATETIME",
    ),
    by_duration: str | None = typer.Option(
        None,
        "--by-duration",
        help="ISO-8601 duration back from now, e.g. PT1H, P1DT2H.",
        metavar="DURATION",
    ),
    from_file: Path | None = typer.Option(
        None,
        "--from-file",
        help="topic,partition,offset CSV (as --export writes).",
        metavar="CSV",
    ),
    execute: bool = typer.Option(
        False, "--execute", help="Commit the plan (default: show it and change nothing)."
    ),
    export: bool = typer.Option(
        False, "--export", help="Print the plan as topic,partition,offset CSV."
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Show the plan only (the default; kafka-consumer-groups.sh's)."
    ),
) -> None:
    """Reset a group's committed offsets: the plan first, --execute to commit it.

    Targets are clamped between the log start and end offsets (each clamp is shown); a group
    with active members is refused. A share group gets new start offsets
    (AlterShareGroupOffsets)."""
    from kctl import parsing as P
    from kctl.broker import groups as G
    from kctl.broker.client import Admin
    from kctl.errors import UsageError
    from kctl.lag import arithmetic as L

    group = one_name(group, group_option, "group")
    if dry_run and execute:
        raise UsageError("--dry-run and --execute exclude each other")
    specs = {
        "earliest": to_earliest,
        "latest": to_latest,
        "current": to_current,
        "offset": to_offset is not None,
        "shift": shift_by is not None,
        "datetime": to_datetime is not None,
        "duration": by_duration is not None,
        "file": from_file is not None,
    }
    chosen = [k for k, v in specs.items() if v]
    if len(chosen) != 1:
        raise UsageError(
            "give exactly one of --to-earliest, --to-latest, --to-current, --to-offset, "
            "--shift-by, --to-datetime, --by-duration, --from-file"
        )
    spec = chosen[0]
    if topic and all_topics:
        raise UsageError("give --topic or --all-topics, not both")
    if spec == "file" and (topic or all_topics):
        raise UsageError("--from-file names its partitions: no --topic or --all-topics with it")
    if spec != "file" and not topic and not all_topics:
        raise UsageError("give --topic (repeatable) or --all-topics")
    scope = P.topic_scope(topic) if topic else {}
    file_offsets: dict[L.TP, int] = {}
    if from_file is not None:
        text = P.read_text(str(from_file), "--from-file")
        file_offsets = L.parse_reset_csv(text, str(from_file))
        if not file_offsets:
            raise UsageError(f"{from_file} has no topic,partition,offset lines")
    ts_ms = None
    if spec == "datetime":
        ts_ms = P.time_ms(to_datetime or "", "--to-datetime")
    elif spec == "duration":
        back = P.duration(by_duration or "", "--by-duration")
        ts_ms = int((time.time() - back.total_seconds()) * 1000)

    request = G.ResetRequest(
        group=group,
        kind={"datetime": "time", "duration": "time"}.get(spec, spec),
        value={"offset": to_offset, "shift": shift_by, "file": file_offsets}.get(spec),
        scope=scope,
        all_topics=all_topics,
        file_name=str(from_file) if from_file is not None else None,
        ts_ms=ts_ms,
    )
    admin = Admin(connection(ctx))
    reset = G.plan_reset_offsets(admin, request)
    plan, marks = reset.rows, reset.marks
    for r in plan:
        if r.clamped:
            start, end = marks[(r.topic, r.partition)]
            note(
                f"{r.topic}[{r.partition}]: target clamped {r.clamped} {r.target} "
                f"(the log holds offsets {start}..{end})"
            )
    if export:
        sys.stdout.write(L.export_csv(plan))
    else:
        rows = [
            {
                "group": group,
                "topic": r.topic,
                "partition": r.partition,
                "current": r.current,
                "target": r.target,
                "delta": r.delta,
                "clamped": r.clamped,
            }
            for r in plan
        ]
        emit(
            Output(
                rows,
                cols(
                    "group", "topic", "partition:>", "current:>", "target:>", "delta:>", "clamped"
                ),
            ),
            output_view(ctx),
        )
    if not execute:
        note("plan only: nothing changed (add --execute to commit it)")
        return
    targets = {(r.topic, r.partition): r.target for r in plan}
    if reset.share:
        G.set_share_starts(admin, group, targets)
        note(f"set {len(plan)} start offset(s) of share group {group!r}")
        return
    G.commit(admin, group, targets)
    note(f"committed {len(plan)} offset(s) for group {group!r}")
