"""``kctl partitions reassign execute`` and ``verify`` (registered on the ``reassign`` app in
kctl/commands/partitions_reassign.py): a plan submitted at once or in waves
(:mod:`kctl.reassign.run`, on the cluster :mod:`kctl.broker.reassign.run`), and where it
stands."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from kctl.commands._common import (
    EXECUTE_HELP,
    connection,
    emit_results,
    environment,
    example,
    note,
    output_view,
    state_dir,
)
from kctl.errors import EXIT_FINDINGS, EXIT_INTERRUPTED
from kctl.formatters import Output, cols, emit
from kctl.reassign.rows import RESULT_COLUMNS

if TYPE_CHECKING:
    from kctl.broker.client import Admin
    from kctl.reassign.assign import Assignment
    from kctl.reassign.plan_file import LogDirs
    from kctl.reassign.run import WaveOptions

EXECUTE_EPILOG = example(
    "kctl partitions reassign execute --file plan.json",
    "kctl partitions reassign execute --file plan.json --throttle 50000000 --execute",
    "kctl partitions reassign execute -f plan.json --max-concurrent 2 --throttle 50MB "
    "--wait --execute",
    "kctl partitions reassign execute -f plan.json --max-concurrent 5 --wait --execute -o jsonl",
    "kctl partitions reassign execute -f plan.json --throttle 50MB --dir-throttle 20MB "
    "--wait --execute",
)
VERIFY_EPILOG = example(
    "kctl partitions reassign verify --file plan.json",
    "kctl partitions reassign verify --file plan.json --resume --max-concurrent 2 --throttle 50MB",
)
WAVE_HELP = "partition moves in flight at once: the plan runs in waves of at most N"
MAX_CONCURRENT_OPTION = typer.Option(
    None, "--max-concurrent", min=1, help=f"At most N {WAVE_HELP}.", metavar="N"
)
MAX_BYTES_OPTION = typer.Option(
    None,
    "--max-bytes-in-flight",
    help="At most this many bytes copied per wave (50GB, 1GiB); a larger partition goes alone.",
    metavar="SIZE",
)
THROTTLE_OPTION = typer.Option(
    None,
    "--throttle",
    help="Replication throttle while moving (bytes/s: 50000000, 50MB), on the moving replicas "
    "and their brokers only; removed when the plan completes, fails or is interrupted.",
    metavar="RATE",
)
DIR_THROTTLE_OPTION = typer.Option(
    None,
    "--dir-throttle",
    help="Throttle of the plan's moves between a broker's log dirs (bytes/s, as "
    "kafka-reassign-partitions.sh --replica-alter-log-dirs-throttle), on the brokers with "
    "such a move; removed when the plan completes, fails or is interrupted.",
    metavar="RATE",
)
STALL_OPTION = typer.Option(
    "60s",
    "--stall-timeout",
    help="With --wait: stop (exit 1, naming them) when the moves in flight copy nothing for "
    "this long.",
    metavar="DURATION",
)
INTERVAL_OPTION = typer.Option("1s", "--interval", help="How often to poll while waiting.")
YES_OPTION = typer.Option(
    False, "--yes", "-y", help="On Ctrl-C cancel the moves in flight without asking."
)


def execute_(
    ctx: typer.Context,
    file: Path = typer.Option(
        ..., "--file", "-f", help="Plan JSON (reassign generate).", metavar="FILE"
    ),
    throttle: str | None = THROTTLE_OPTION,
    dir_throttle: str | None = DIR_THROTTLE_OPTION,
    max_concurrent: int | None = MAX_CONCURRENT_OPTION,
    max_bytes_in_flight: str | None = MAX_BYTES_OPTION,
    wait: bool = typer.Option(
        False,
        "--wait",
        help="Submit every wave, each when the previous completes, showing progress; without "
        "it only the first wave is submitted.",
    ),
    stall_timeout: str = STALL_OPTION,
    interval: str = INTERVAL_OPTION,
    yes: bool = YES_OPTION,
    execute: bool = typer.Option(False, "--execute", help=EXECUTE_HELP),
) -> None:
    """Start the reassignment in a plan file (AlterPartitionReassignments), optionally throttled.
    With --max-concurrent / --max-bytes-in-flight it runs in waves; with --wait it submits every
    wave, shows progress (a bar on stderr, or -o jsonl lines on stdout) and removes the throttle
    at the end. Without --wait, 'reassign verify' reports progress and removes the throttle once
    done ('verify --resume' submits the waves left). Ctrl-C while waiting asks whether to cancel
    the moves in flight; without a terminal --yes cancels, otherwise they are left running."""
    from kctl.broker.client import Admin
    from kctl.broker.reassign import ops
    from kctl.reassign.plan_file import read_plan_with_dirs
    from kctl.reassign.rows import dry_run, execute_notes
    from kctl.reassign.run import wave_options

    plan, dirs = read_plan_with_dirs(file)
    options = wave_options(
        max_concurrent, max_bytes_in_flight, throttle, stall_timeout, interval, dir_throttle
    )
    admin = Admin(connection(ctx))
    current = ops.checked_current(admin, plan)
    waved = wait or options.waved
    for line in execute_notes(len(dirs), dir_throttle is not None, execute):
        note(line)
    if not execute:
        running = ops.running(admin.conn) if waved else None
        by_bytes = max_bytes_in_flight is not None
        rows, columns, line = dry_run(plan, current, running, options.max_concurrent, by_bytes)
        emit(Output(rows, cols(*columns)), output_view(ctx))
        note(line)
        return
    if waved or dirs:
        _wave_run(ctx, admin, plan, dirs, options, file, wait, yes)
        return
    emit_results(
        ctx, ops.execute_once(admin, current, plan, options.throttle, note), RESULT_COLUMNS
    )


def verify_(
    ctx: typer.Context,
    file: Path = typer.Option(
        ..., "--file", "-f", help="The plan that was executed.", metavar="FILE"
    ),
    keep_throttle: bool = typer.Option(
        False, "--keep-throttle", help="Leave the replication throttle in place."
    ),
    resume: bool = typer.Option(
        False,
        "--resume",
        "--execute",
        help="Submit what is not started yet, in waves (as execute --wait), and wait for it.",
    ),
    throttle: str | None = THROTTLE_OPTION,
    dir_throttle: str | None = DIR_THROTTLE_OPTION,
    max_concurrent: int | None = MAX_CONCURRENT_OPTION,
    max_bytes_in_flight: str | None = MAX_BYTES_OPTION,
    stall_timeout: str = STALL_OPTION,
    interval: str = INTERVAL_OPTION,
    yes: bool = YES_OPTION,
) -> None:
    """Per partition of the plan: complete, in progress or not applied, read from the cluster
    (works from any machine). Once every partition is complete the replication throttle is
    removed. With --resume the partitions not started are submitted in waves and waited for
    (a half-done 'execute' finishes). Exit 3 while not complete."""
    from dataclasses import replace

    from kctl.broker.client import Admin
    from kctl.broker.reassign import ops
    from kctl.reassign.plan_file import read_plan_with_dirs
    from kctl.reassign.rows import VERIFY_COLUMNS
    from kctl.reassign.run import wave_options

    plan, dirs = read_plan_with_dirs(file)
    options = wave_options(
        max_concurrent, max_bytes_in_flight, throttle, stall_timeout, interval, dir_throttle
    )
    admin = Admin(connection(ctx))
    if resume:
        ops.checked_current(admin, plan)
        # An earlier run's throttle may be on any broker: removed everywhere at the end, as
        # verify does.
        _wave_run(ctx, admin, plan, dirs, replace(options, clear_all=True), file, True, yes)
        return
    rows, done = ops.verify(admin, plan, dirs)
    emit(Output(rows, cols(*VERIFY_COLUMNS)), output_view(ctx))
    line = ops.settle(admin, plan, rows, done, keep_throttle, file)
    if line is not None:
        note(line)
    if not done:
        raise typer.Exit(EXIT_FINDINGS)


def _wave_run(
    ctx: typer.Context,
    admin: Admin,
    plan: Assignment,
    dirs: LogDirs,
    options: WaveOptions,
    file: Path,
    wait: bool,
    yes: bool,
) -> None:
    """Run ``plan`` in waves (:func:`kctl.broker.reassign.run.run_plan`): with ``wait``, every
    wave and the verify table after (or the -o jsonl progress lines); else the answers to what
    was submitted."""
    from functools import partial

    from kctl.broker.reassign import ops
    from kctl.broker.reassign.run import run_plan
    from kctl.formatters.reassign import WaveProgress
    from kctl.reassign.rows import VERIFY_COLUMNS
    from kctl.reassign.run import interrupt_choice

    view, env = output_view(ctx), environment(ctx)
    jsonl = view.format == "jsonl"
    terminal = env.stdin_isatty and env.stderr_isatty
    outcome = run_plan(
        admin, plan, options, dirs, file=file, wait=wait, note=note, state_dir=state_dir(ctx),
        view=WaveProgress(jsonl, env.stderr_isatty),
        decide=partial(interrupt_choice, yes, terminal, _ask),
    )  # fmt: skip
    if outcome.interrupted:
        raise typer.Exit(EXIT_INTERRUPTED)
    if jsonl and wait:
        return  # the progress lines were the output
    if wait:
        rows, _ = ops.verify(admin, plan, dirs)
        emit(Output(rows, cols(*VERIFY_COLUMNS)), view)
        return
    emit_results(ctx, outcome.answers, RESULT_COLUMNS)


def _ask(question: str) -> str:
    """``question`` on stderr, the answer a line of stdin ("" when interrupted again)."""
    import sys

    sys.stderr.write(question)
    sys.stderr.flush()
    try:
        return sys.stdin.readline()
    except KeyboardInterrupt:
        return ""
