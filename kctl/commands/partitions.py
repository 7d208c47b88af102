"""kctl partitions: leader elections (kafka-leader-election.sh), replica moves between log dirs
and reassignments (kafka-reassign-partitions.sh; the ``reassign`` group is in
partitions_reassign.py). Each prints the plan and changes nothing without --execute; options and
the election's rules are :mod:`kctl.elect`'s."""

from __future__ import annotations

from pathlib import Path

import typer

from kctl.commands._common import (
    EXECUTE_HELP,
    connection,
    emit_results,
    example,
    note,
    output_view,
    state_dir,
)
from kctl.commands._complete import topic_names
from kctl.commands.partitions_reassign import app as reassign_app
from kctl.formatters import Output, cols, emit
from kctl.parsing import INT32_MAX

app = typer.Typer(
    help="Elect leaders and reassign partitions: the plan first, --execute to act.",
    no_args_is_help=True,
)
app.add_typer(reassign_app, name="reassign")

TP = ("topic", "partition:>")
STEP_COLUMNS = (*TP, "leader:>", "replicas", "isr", "new_leader:>", "action", "reason")
MOVE_COLUMNS = (*TP, "broker:>", "log_dir", "future_log_dir", "target", "action", "reason")


@app.command(
    "elect-leaders",
    epilog=example(
        "kctl partitions elect-leaders --preferred --all-topics",
        "kctl partitions elect-leaders --preferred --topic orders:0,1 --execute",
        "kctl partitions elect-leaders --unclean --from-file partitions.json --execute",
        "kctl partitions elect-leaders --election-type unclean --topic orders:3 --execute",
    ),
)
def elect_leaders(
    ctx: typer.Context,
    preferred: bool = typer.Option(
        False, "--preferred", help="Move leadership to the first replica."
    ),
    unclean: bool = typer.Option(
        False, "--unclean", help="Elect a leader for leaderless partitions, even outside the ISR."
    ),
    election_type: str | None = typer.Option(
        None,
        "--election-type",
        help="preferred or unclean, as kafka-leader-election.sh (same as --preferred/--unclean).",
        metavar="TYPE",
    ),
    all_topics: bool = typer.Option(False, "--all-topics", help="Every partition of every topic."),
    topics: list[str] = typer.Option(
        [],
        "--topic",
        "-t",
        help="TOPIC or TOPIC:P,P (repeatable).",
        metavar="T[:P,...]",
        autocompletion=topic_names,
    ),
    from_file: Path | None = typer.Option(
        None,
        "--from-file",
        help='JSON as kafka-leader-election.sh reads: {"partitions":[{"topic","partition"}]}.',
        metavar="FILE",
    ),
    execute: bool = typer.Option(False, "--execute", help=EXECUTE_HELP),
) -> None:
    """Preferred or unclean leader election: shows per partition the current and the expected
    leader; with --execute sends ElectLeaders for the partitions that need it."""
    from kctl.broker import elect
    from kctl.broker.client import Admin
    from kctl.elect.election import election_kind, election_scope
    from kctl.reassign.rows import RESULT_COLUMNS

    kind = election_kind(preferred, unclean, election_type)
    scope = election_scope(all_topics, list(topics), from_file)
    admin = Admin(connection(ctx))
    plan = elect.plan_election(admin, kind, scope)
    if not execute or not plan.todo:
        emit(Output([s.row() for s in plan.steps], cols(*STEP_COLUMNS)), output_view(ctx))
        what = f"plan: {plan.count} {kind} election(s); nothing changed (add --execute to elect)"
        note(what if not execute else "nothing to elect")
        return
    emit_results(ctx, elect.elect(admin.conn, kind, plan.todo), RESULT_COLUMNS)


@app.command(
    "move-dir",
    epilog=example(
        "kctl partitions move-dir orders:0 --broker 1 --to-dir /var/lib/kafka/data-1",
        "kctl partitions move-dir orders:0,1 --broker 1 --to-dir /var/lib/kafka/data-1 --execute",
        "kctl cluster log-dirs --broker 1 --topic orders",
    ),
)
def move_dir(
    ctx: typer.Context,
    targets: list[str] = typer.Argument(
        ..., help="TOPIC:PARTITION or TOPIC:P,P (one or more).", metavar="TOPIC:P[,P]..."
    ),
    broker: int = typer.Option(
        ..., "--broker", min=0, max=INT32_MAX, help="The broker whose replicas move."
    ),
    to_dir: str = typer.Option(
        ..., "--to-dir", help="One of the broker's log dirs (see 'kctl cluster log-dirs')."
    ),
    execute: bool = typer.Option(False, "--execute", help=EXECUTE_HELP),
) -> None:
    """Move replicas between the log dirs of one broker (AlterReplicaLogDirs, as
    kafka-reassign-partitions.sh does for a "log_dirs" entry). The plan shows each replica's
    current dir; with --execute the broker copies the replica into the target dir (a future
    replica in 'kctl cluster log-dirs') and swaps it in once it has caught up."""
    from kctl.broker import logdirs
    from kctl.parsing import named_partitions

    partitions = named_partitions(list(targets))
    plan_cols = cols(*MOVE_COLUMNS)
    conn = connection(ctx)
    if not execute:
        plan = logdirs.plan_move(conn, broker, partitions, to_dir)
        emit(Output(plan, plan_cols), output_view(ctx))
        moving = sum(r["action"] == "move" for r in plan)
        note(f"plan: {moving} replica(s) to move; nothing changed (add --execute to move)")
        return
    plan, results = logdirs.move(conn, broker, partitions, to_dir)
    if not results:
        emit(Output(plan, plan_cols), output_view(ctx))
        note("nothing to move")
        return
    from kctl.broker.client import Admin
    from kctl.broker.reassign.seen import note_dirs_submitted

    note_dirs_submitted(Admin(conn), results, state_dir(ctx), to_dir)
    emit_results(ctx, results, ("topic", "partition:>", "broker:>", "status", "error"))
    note(
        "moving; 'kctl cluster log-dirs' shows the future replica and 'kctl partitions reassign "
        "status' the copy until the move completes"
    )
