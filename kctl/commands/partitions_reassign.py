"""kctl partitions reassign (kafka-reassign-partitions.sh): generate a plan, execute it
(optionally throttled), verify, cancel and list reassignments. Attached to the ``partitions``
app in kctl/commands/partitions.py. Plan files, options and checks: :mod:`kctl.replicas.plan`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from kctl.commands._common import connection, example, note, output_view
from kctl.commands._complete import topic_names
from kctl.errors import EXIT_FAILED, EXIT_FINDINGS
from kctl.formatters import Output, cols, emit

app = typer.Typer(
    help="Generate, execute, verify, cancel and list partition reassignments.",
    no_args_is_help=True,
)

EXECUTE_HELP = "Act on the plan; without it nothing is changed."
RESULT_COLUMNS = ("topic", "partition:>", "status", "error", "message")
ONGOING_COLUMNS = ("topic", "partition:>", "replicas", "adding_replicas", "removing_replicas")
PLAN_COLUMNS = ("topic", "partition:>", "current", "proposed", "moving")


def emit_results(ctx: typer.Context, rows: list[dict[str, Any]], columns: tuple[str, ...]) -> None:
    """The broker's answer per partition; exit 1 when one failed."""
    from kctl.replicas.plan import failed

    emit(Output(rows, cols(*columns)), output_view(ctx))
    if failed(rows):
        raise typer.Exit(EXIT_FAILED)


@app.command(
    "generate",
    epilog=example(
        "kctl partitions reassign generate --topic orders --brokers 1,2,3 -o json > plan.json",
        "kctl partitions reassign generate -t a -t b --brokers 4,5,6 --current-file rollback.json",
    ),
)
def generate(
    ctx: typer.Context,
    topics: list[str] = typer.Option(
        ..., "--topic", "-t", help="Topic to move (repeatable).", autocompletion=topic_names
    ),
    brokers: str = typer.Option(..., "--brokers", help="Target broker ids, e.g. 1,2,3."),
    current_file: Path | None = typer.Option(
        None,
        "--current-file",
        help="Also write the current assignment (for a rollback).",
        metavar="FILE",
    ),
) -> None:
    """Propose a placement on the target brokers: replicas already there stay, moved replicas go
    to unused racks first, then to the least-loaded brokers, and preferred leaders are balanced.
    With -o json the output is a plan for 'reassign execute' and kafka-reassign-partitions.sh."""
    from kctl.broker.client import Admin
    from kctl.broker.reassign import current_assignment
    from kctl.replicas.assign import moves
    from kctl.replicas.plan import parse_brokers, plan_document, plan_rows, proposal

    targets = parse_brokers(brokers)
    current, racks = current_assignment(Admin(connection(ctx)), list(dict.fromkeys(topics)))
    proposed = proposal(current, targets, racks)
    if current_file is not None:
        from kctl.errors import KctlError
        from kctl.formatters import to_json

        try:
            current_file.write_text(to_json(plan_document(current)) + "\n")
        except OSError as exc:
            raise KctlError(f"cannot write --current-file {current_file}", exc.strerror) from None
        note(f"current assignment written to {current_file}")
    rows = plan_rows(current, proposed)
    emit(Output(rows, cols(*PLAN_COLUMNS), doc=plan_document(proposed)), output_view(ctx))
    note(f"{moves(current, proposed)} replica(s) move in {len(proposed)} partition(s)")


@app.command(
    "execute",
    epilog=example(
        "kctl partitions reassign execute --file plan.json",
        "kctl partitions reassign execute --file plan.json --throttle 50000000 --execute",
    ),
)
def execute_(
    ctx: typer.Context,
    file: Path = typer.Option(
        ..., "--file", "-f", help="Plan JSON (reassign generate).", metavar="FILE"
    ),
    throttle: int | None = typer.Option(
        None,
        "--throttle",
        min=1,
        help="Replication throttle in bytes/s while moving.",
        metavar="BYTES_PER_S",
    ),
    execute: bool = typer.Option(False, "--execute", help=EXECUTE_HELP),
) -> None:
    """Start the reassignment in a plan file (AlterPartitionReassignments), optionally throttled;
    'reassign verify' reports progress and removes the throttle once done."""
    from kctl.broker import reassign
    from kctl.broker.client import Admin
    from kctl.replicas.plan import check_plan, plan_rows, read_plan

    plan = read_plan(file)
    admin = Admin(connection(ctx))
    reassign.check_alter_supported(admin.conn, "reassigning partitions")
    current, racks = reassign.current_assignment(admin, sorted({t for t, _ in plan}))
    check_plan(plan, current, racks)
    if not execute:
        emit(Output(plan_rows(current, plan), cols(*PLAN_COLUMNS)), output_view(ctx))
        note(f"plan: {len(plan)} partition(s); nothing changed (add --execute to start)")
        return
    if throttle is not None:
        reassign.set_throttle(admin, current, plan, throttle)
        note(f"replication throttled to {throttle} bytes/s until 'reassign verify' finds it done")
    emit_results(
        ctx, reassign.alter(admin.conn, dict(plan), "reassigning partitions"), RESULT_COLUMNS
    )


@app.command(
    "verify",
    epilog=example("kctl partitions reassign verify --file plan.json"),
)
def verify_(
    ctx: typer.Context,
    file: Path = typer.Option(
        ..., "--file", "-f", help="The plan that was executed.", metavar="FILE"
    ),
    keep_throttle: bool = typer.Option(
        False, "--keep-throttle", help="Leave the replication throttle in place."
    ),
) -> None:
    """Per partition of the plan: complete, in progress or not applied. Once every partition
    is complete the replication throttle is removed. Exit 3 while not complete."""
    from kctl.broker import reassign
    from kctl.broker.client import Admin
    from kctl.replicas.plan import read_plan

    plan = read_plan(file)
    admin = Admin(connection(ctx))
    rows, done = reassign.verify(admin, admin.conn, plan)
    emit(
        Output(rows, cols("topic", "partition:>", "status", "current", "target")), output_view(ctx)
    )
    if not done:
        note("reassignment not complete; the throttle (if any) stays")
        raise typer.Exit(EXIT_FINDINGS)
    if not keep_throttle:
        cleared = reassign.clear_throttles(admin, sorted({t for t, _ in plan}))
        if cleared:
            note(f"reassignment complete; throttle removed ({len(cleared)} config(s))")
        else:
            note("reassignment complete; no throttle was set")


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
    kafka-reassign-partitions.sh --cancel) unless --preserve-throttles."""
    from kctl.broker import reassign
    from kctl.errors import UsageError
    from kctl.replicas.plan import in_plan, read_plan

    if (file is None) == (not all_):
        raise UsageError("choose one of --file and --all")
    plan = None if file is None else read_plan(file)  # checked before anything is asked
    conn = connection(ctx)
    reassign.check_alter_supported(conn, "cancelling reassignments")
    running = reassign.ongoing(conn)
    chosen = in_plan(running, plan)
    if not execute or not chosen:
        emit(Output(chosen, cols(*ONGOING_COLUMNS)), output_view(ctx))
        note(
            f"{len(chosen)} ongoing reassignment(s) to cancel"
            + ("; nothing changed (add --execute to cancel)" if chosen else "")
        )
        return
    target: dict[tuple[str, int], list[int] | None] = {
        (r["topic"], r["partition"]): None for r in chosen
    }
    emit_results(ctx, reassign.alter(conn, target, "cancelling reassignments"), RESULT_COLUMNS)
    if not preserve_throttles:
        from kctl.broker.client import Admin

        cleared = reassign.clear_throttles(Admin(conn), sorted({r["topic"] for r in chosen}))
        if cleared:
            note(f"throttle removed ({len(cleared)} config(s))")


@app.command("list", epilog=example("kctl partitions reassign list -o json"))
def list_(ctx: typer.Context) -> None:
    """Ongoing reassignments: target replicas, replicas being added and removed."""
    from kctl.broker import reassign

    emit(Output(reassign.ongoing(connection(ctx)), cols(*ONGOING_COLUMNS)), output_view(ctx))
