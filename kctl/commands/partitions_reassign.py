"""kctl partitions reassign (kafka-reassign-partitions.sh): generate a plan, execute it
(optionally throttled), verify, cancel and list reassignments. Attached to the ``partitions``
app in kctl/commands/partitions.py; generate is in partitions_reassign_generate.py, execute
and verify in partitions_reassign_execute.py. The plans, rows and the run in waves:
:mod:`kctl.reassign`; on the cluster: :mod:`kctl.broker.reassign`."""

from __future__ import annotations

from pathlib import Path

import typer

from kctl.commands import partitions_reassign_execute as E
from kctl.commands import partitions_reassign_generate as G
from kctl.commands._common import (
    EXECUTE_HELP,
    connection,
    emit_results,
    example,
    note,
    output_view,
    state_dir,
)
from kctl.formatters import Output, cols, emit

app = typer.Typer(
    help="Generate, execute, verify, cancel and list partition reassignments.",
    no_args_is_help=True,
)
# In this order on the help page.
app.command("generate", epilog=G.EPILOG)(G.generate)
app.command("execute", epilog=E.EXECUTE_EPILOG)(E.execute_)
app.command("verify", epilog=E.VERIFY_EPILOG)(E.verify_)


@app.command(
    "cancel",
    epilog=example(
        "kctl partitions reassign cancel --file plan.json --execute",
        "kctl partitions reassign cancel --all --execute",
    ),
)
def cancel(
    ctx: typer.Context,
    file: Path | None = typer.Option(
        None, "--file", "-f", help="Cancel the partitions of this plan.", metavar="FILE"
    ),
    all_: bool = typer.Option(False, "--all", help="Cancel every ongoing reassignment."),
    preserve_throttles: bool = typer.Option(
        False, "--preserve-throttles", help="Leave the replication throttle in place."
    ),
    execute: bool = typer.Option(False, "--execute", help=EXECUTE_HELP),
) -> None:
    """Cancel ongoing reassignments: the partitions go back to their original replicas, and the
    replication throttle is removed from the brokers and the cancelled topics (as
    kafka-reassign-partitions.sh --cancel) unless --preserve-throttles. Copies between a
    broker's log dirs stop too (the plan's log_dirs entries; with --all every one): the replica
    is sent back to the dir it is in and the broker drops the future log."""
    from kctl.broker.reassign import ops
    from kctl.errors import UsageError
    from kctl.reassign import rows as R
    from kctl.reassign.plan_file import read_plan_with_dirs

    if (file is None) == (not all_):
        raise UsageError("choose one of --file and --all")
    # checked before anything is asked
    plan, dirs = (None, {}) if file is None else read_plan_with_dirs(file)
    conn = connection(ctx)
    found = ops.to_cancel(conn, plan, dirs)
    if not execute:
        rows = R.cancel_rows(found.chosen, found.copies)
        emit(Output(rows, cols(*R.CANCEL_COLUMNS)), output_view(ctx))
        note(R.cancel_plan_note(len(found.chosen), len(found.copies), preserve_throttles))
        return
    results = ops.cancel(conn, found)
    if results:
        emit_results(ctx, results, R.CANCEL_RESULT_COLUMNS)
    else:
        note("no reassignment or log-dir move in flight to cancel")
    if not preserve_throttles:
        note(ops.clear_after_cancel(conn, plan, found))


@app.command("list", epilog=example("kctl partitions reassign list -o json"))
def list_(ctx: typer.Context) -> None:
    """Ongoing reassignments: target replicas, replicas being added and removed."""
    from kctl.broker.reassign.wire import ongoing
    from kctl.reassign.rows import ONGOING_COLUMNS

    emit(Output(ongoing(connection(ctx)), cols(*ONGOING_COLUMNS)), output_view(ctx))


@app.command(
    "status",
    epilog=example("kctl partitions reassign status", "kctl partitions reassign status -o json"),
)
def status(ctx: typer.Context) -> None:
    """Every ongoing move in the cluster, whoever started it: reassignments (kind "replicas":
    replicas, adding and removing ones, bytes the adding replicas copied of the partition's
    size) and copies between a broker's log dirs (kind "log-dir": the broker, the target
    log_dir, bytes of the future log), from DescribeLogDirs; age, and whether the move is
    throttled (its topic's throttled replicas; for a log-dir move, its broker's log-dir rate).
    The broker does not say when a move started: the age counts from when kctl submitted it or
    first saw it (another tool's move shows "unknown" the first time). Throttle rates set on
    brokers are noted on stderr."""
    from kctl.broker.client import Admin
    from kctl.broker.reassign import ops
    from kctl.reassign.status import STATUS_COLUMNS

    rows, lines = ops.status(Admin(connection(ctx)), state_dir(ctx))
    emit(Output(rows, cols(*STATUS_COLUMNS)), output_view(ctx))
    for line in lines:
        note(line)
