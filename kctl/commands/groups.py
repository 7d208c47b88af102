"""kctl groups: consumer groups (kafka-consumer-groups.sh) and lag samples for analytics."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from kctl.commands._common import confirm, connection, example, note, one_name, output_view
from kctl.commands._complete import group_names, topic_names
from kctl.formatters import Output, cols, emit
from kctl.parsing import listen_address

if TYPE_CHECKING:
    from kctl.lag.report import LagReport
    from kctl.lag.rules import Table

app = typer.Typer(
    help="Consumer groups: list, describe, lag, delete, reset offsets.", no_args_is_help=True
)

_ALL = typer.Option(False, "--all-groups", help="Every group the cluster lists.")
_YES = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation.")
_SCOPE_HELP = "TOPIC or TOPIC:P[,P...] (repeatable)."
_GROUP_HELP = "A group, as kafka-consumer-groups.sh takes it (same as the argument)."
_GROUPS = typer.Option([], "--group", help=_GROUP_HELP + " Repeatable.", autocompletion=group_names)
_GROUP = typer.Option(None, "--group", help=_GROUP_HELP, autocompletion=group_names)


def _show(ctx: typer.Context, table: Table, text: str | None = None) -> None:
    """Notes to stderr, then the rows to stdout (or ``text`` as it is, e.g. a CSV to export),
    then the table's failure, if any."""
    for line in table.notes:
        note(line)
    if text is not None:
        sys.stdout.write(text)
    else:
        emit(Output(table.rows, cols(*table.columns)), output_view(ctx))
    if table.failure is not None:
        raise table.failure


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
    from kctl.lag import rules as R

    types = R.group_types(type_)
    states = R.group_states(state)
    listing, described = G.list_described(Admin(connection(ctx)), types)
    _show(ctx, R.list_table(listing.groups, described, states, listing.missed))


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
    from kctl.lag import rules as R

    view = R.describe_view(offsets, members, state)
    ids = [*(groups or []), *group_option]
    _show(ctx, R.describe_table(G.describe_for(Admin(connection(ctx)), ids, all_groups, view)))


@app.command(
    "lag",
    epilog=example(
        "kctl groups lag orders-app",
        "kctl groups lag --fail-above 10000   # every group; exit 3 when one lags more (cron, CI)",
        "kctl groups lag orders-app --time-lag --fail-above-seconds 300",
        "kctl groups lag --all-groups --record lag.jsonl   # samples for kctl analytics",
        "kctl groups lag orders-app --topic orders --watch 5",
        "kctl groups lag --serve 127.0.0.1:9308 --interval 30s   # a Prometheus exporter",
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
    time_lag: bool = typer.Option(
        False,
        "--time-lag",
        help="Add TIME-LAG: now minus the timestamp of the first record not consumed "
        "(one Fetch per partition leader).",
    ),
    fail_above: int | None = typer.Option(
        None, "--fail-above", help="Exit 3 when a group's total lag exceeds N.", metavar="N"
    ),
    fail_above_seconds: float | None = typer.Option(
        None,
        "--fail-above-seconds",
        help="Exit 3 when a group's time lag exceeds SECONDS (implies --time-lag).",
        metavar="SECONDS",
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
    serve: str | None = typer.Option(
        None,
        "--serve",
        help="Serve lag and time lag to Prometheus on HOST:PORT (an exporter: it collects "
        "every --interval; scrapes read the last collection). SIGTERM or Ctrl-C ends it.",
        metavar="HOST:PORT",
    ),
    interval: str = typer.Option(
        "30s", "--interval", help="With --serve: time between collections.", metavar="DURATION"
    ),
    cluster_name: str | None = typer.Option(
        None,
        "--cluster-name",
        help="With --serve: the cluster_name label (default: the cluster id).",
        metavar="NAME",
    ),
) -> None:
    """Lag per partition with totals per group and per topic, for every group type (classic,
    consumer, share, streams); time lag; samples for kctl analytics; a Prometheus exporter.

    Requests do not grow with groups or partitions: one DescribeGroups and one OffsetFetch per
    coordinator, ListOffsets per partition leader; --time-lag adds one Fetch per leader."""
    from kctl.broker import groups as G
    from kctl.broker.client import Admin
    from kctl.lag import report as R

    R.check_lag_options(watch, fail_above, record, fail_above_seconds=fail_above_seconds,
                        serve=serve)  # fmt: skip
    admin, ids = Admin(connection(ctx)), [*(groups or []), *group_option]
    if serve is not None:
        from kctl.broker.lag_exporter import serve as run_exporter

        host, port = listen_address(serve, "--serve")
        every = R.exporter_interval(interval)
        run_exporter(admin, ids, all_groups, topic or None, host=host, port=port,
                     interval=every, cluster_name=cluster_name, record=record,
                     note=note)  # fmt: skip
        return
    timed = time_lag or fail_above_seconds is not None
    view, redraw = output_view(ctx), bool(watch) and sys.stdout.isatty()

    def show(report: LagReport) -> None:
        if redraw:
            sys.stdout.write("\x1b[2J\x1b[H")
        title = R.watch_title(watch) if redraw and watch else None
        out = Output(report.rows, cols(*report.columns()), doc=report.document(), title=title,
                     footer=report.footer, footer_by="group")  # fmt: skip
        emit(out, view)
        if watch:
            sys.stdout.flush()

    last = G.watch_lag(admin, ids, all_groups, topic, show=show, note=note, watch=watch,
                       record=record, time_lag=timed)  # fmt: skip
    R.check_fail_above(last.group_totals, fail_above)
    R.check_fail_above_seconds(last.time_lags, fail_above_seconds)
    R.check_complete(last)


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
    from kctl.lag import rules as R

    ids = R.groups_to_delete([*(groups or []), *group_option])
    admin = Admin(connection(ctx))
    R.check_deletable(G.describe_known(admin, ids))
    note(R.delete_plan(ids))
    confirm(f"Delete {len(ids)} group(s)?", yes=yes, action="delete groups")
    G.delete(admin, ids)
    _show(ctx, R.deleted_table(ids))


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
    from kctl.lag import rules as R
    from kctl.parsing import topic_scope

    group, scope = one_name(group, group_option, "group"), topic_scope(topic)
    done = G.delete_group_offsets(
        Admin(connection(ctx)), group, scope,
        lambda question: confirm(question, yes=yes, action="delete offsets"),
    )  # fmt: skip
    _show(ctx, R.offsets_deleted_table(done))


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
    from kctl.broker import groups as G
    from kctl.broker.client import Admin
    from kctl.inputs import OFFSETS, read_input
    from kctl.lag import rules as R
    from kctl.lag.arithmetic import export_csv

    given = {"earliest": to_earliest, "latest": to_latest, "current": to_current,
             "offset": to_offset, "shift": shift_by, "datetime": to_datetime,
             "duration": by_duration, "file": from_file}  # fmt: skip
    request = R.reset_request(
        one_name(group, group_option, "group"), given, topic=topic, all_topics=all_topics,
        dry_run=dry_run, execute=execute, now_s=time.time(),
        read=lambda path: read_input(path, "--from-file", OFFSETS),
    )  # fmt: skip
    admin = Admin(connection(ctx))
    plan = G.plan_reset_offsets(admin, request)
    _show(ctx, R.reset_table(plan), export_csv(plan.rows) if export else None)
    if not execute:
        note(R.PLAN_ONLY)
        return
    G.apply_reset(admin, plan)
    note(R.reset_done(plan))
