"""``kctl partitions reassign generate`` (registered on the ``reassign`` app in
kctl/commands/partitions_reassign.py): a plan for the whole cluster
(:mod:`kctl.reassign.generate`), or the placement of some topics on some brokers."""

from __future__ import annotations

from pathlib import Path

import typer

from kctl.commands._common import connection, example, note, output_view
from kctl.commands._complete import topic_names
from kctl.formatters import Output, cols, emit

EPILOG = example(
    "kctl partitions reassign generate --add-broker 4,5 -o json > plan.json",
    "kctl partitions reassign generate --remove-broker 2 --report r.json -o json > plan.json",
    "kctl partitions reassign generate --balance disk --tolerance 5 --max-bytes 200GB",
    "kctl partitions reassign generate --from-snapshot snap.json --balance-disks -o json",
    "kctl partitions reassign generate -t orders --replication-factor 3 -o json",
    "kctl partitions reassign generate --topic orders --brokers 1,2,3 -o json > plan.json",
)


def generate(
    ctx: typer.Context,
    topics: list[str] = typer.Option(
        [],
        "--topic",
        "-t",
        help="Topic to plan for (repeatable; default: every non-internal topic).",
        autocompletion=topic_names,
    ),
    include: str | None = typer.Option(
        None, "--include", help="Only topics whose name matches this regular expression."
    ),
    brokers: str | None = typer.Option(
        None, "--brokers", help="Only these brokers may hold replicas, e.g. 1,2,3."
    ),
    remove_broker: str | None = typer.Option(
        None,
        "--remove-broker",
        help="Decommission: every replica leaves these brokers (ids).",
        metavar="IDS",
    ),
    add_broker: str | None = typer.Option(
        None,
        "--add-broker",
        help="Scale out: these brokers take their share (ids; ID:RACK for one a snapshot lacks).",
        metavar="IDS",
    ),
    balance: str | None = typer.Option(
        None,
        "--balance",
        help="Bring every broker within --tolerance of the mean: replicas, leaders or disk.",
        metavar="replicas|leaders|disk",
    ),
    tolerance: float = typer.Option(
        10.0,
        "--tolerance",
        min=0,
        help="Percent of the mean a broker may differ from it.",
        metavar="PCT",
    ),
    replication_factor: int | None = typer.Option(
        None,
        "--replication-factor",
        min=1,
        help="Change the chosen topics' replication factor.",
        metavar="N",
    ),
    max_moves: int | None = typer.Option(
        None,
        "--max-moves",
        min=0,
        help="At most N replicas move (the best moves first).",
        metavar="N",
    ),
    max_bytes: str | None = typer.Option(
        None, "--max-bytes", help="At most this many bytes move (200GB, 1.5TiB).", metavar="SIZE"
    ),
    balance_disks: bool = typer.Option(
        False, "--balance-disks", help="Also even out each broker's log dirs (the plan's log_dirs)."
    ),
    keep_leaders: bool = typer.Option(
        False,
        "--keep-leaders",
        help="Balance preferred leaders only among the partitions that move.",
    ),
    from_snapshot: Path | None = typer.Option(
        None,
        "--from-snapshot",
        help="Plan offline from 'kctl cluster snapshot -o json' (- reads stdin).",
        metavar="FILE",
    ),
    report_file: Path | None = typer.Option(
        None, "--report", help="Also write the before/after figures as JSON.", metavar="FILE"
    ),
    current_file: Path | None = typer.Option(
        None,
        "--current-file",
        help="Also write the current assignment (for a rollback).",
        metavar="FILE",
    ),
) -> None:
    """Plan partition moves for the whole cluster (or the chosen topics): decommission, scale
    out, balance replicas/leaders/bytes, change the replication factor, within a budget, and
    even out log dirs. Replicas move only where the goal needs it; racks stay distinct where
    they allow. -o json prints the plan (kafka-reassign-partitions.sh's JSON, for 'reassign
    execute'); the table shows each broker before and after; a summary goes to stderr.
    With only --topic and --brokers: the placement of those topics on those brokers."""
    from kctl.reassign import generate as G
    from kctl.reassign.report import BROKER_COLUMNS, footer, summary

    others = (include, remove_broker, add_broker, balance, replication_factor, max_moves,
              max_bytes, from_snapshot, report_file, balance_disks, keep_leaders)  # fmt: skip
    if G.placement_only(list(topics), brokers, *others):
        _generate_onto(ctx, list(topics), str(brokers), current_file)
        return
    goal = G.goal_of(
        remove=remove_broker, add=add_broker, balance=balance, tolerance=tolerance,
        replication_factor=replication_factor, max_moves=max_moves, max_bytes=max_bytes,
        balance_disks=balance_disks, brokers=brokers, keep_leaders=keep_leaders,
    )  # fmt: skip
    if from_snapshot is not None:
        from kctl.commands.replicas import load_snapshot

        snapshot = load_snapshot(from_snapshot)
    else:
        from kctl.broker.client import Admin
        from kctl.broker.cluster_snapshot import collect

        snapshot = collect(Admin(connection(ctx)), list(dict.fromkeys(topics)) or None)
    layout = G.layout_of(snapshot, list(topics), include, balance_disks)
    for line in G.snapshot_warnings(snapshot, goal):
        note(line)
    if current_file is not None:
        _write_current(current_file, G.current_document(layout))
    made = G.make_plan(layout, goal)
    if report_file is not None:
        from kctl.formatters import write_json

        write_json(report_file, made.report, "--report")
    rep = made.report
    out = Output(rep["brokers"], cols(*BROKER_COLUMNS), doc=made.document, footer=footer(rep))
    emit(out, output_view(ctx))
    for line in summary(rep):
        note(line)


def _write_current(path: Path, doc: object) -> None:
    from kctl.formatters import write_json

    write_json(path, doc, "--current-file")
    note(f"current assignment written to {path}")


def _generate_onto(
    ctx: typer.Context, topics: list[str], brokers: str, current_file: Path | None
) -> None:
    """``--topic T... --brokers 1,2,3``: replicas already there stay, moved replicas go to
    unused racks first, then to the least-loaded brokers, and preferred leaders are balanced."""
    from kctl.broker.client import Admin
    from kctl.broker.reassign.ops import current_assignment
    from kctl.parsing import broker_ids
    from kctl.reassign.assign import moves, proposal
    from kctl.reassign.plan_file import plan_document
    from kctl.reassign.rows import PLAN_COLUMNS, plan_rows

    targets = broker_ids(brokers)
    current, racks = current_assignment(Admin(connection(ctx)), list(dict.fromkeys(topics)))
    proposed = proposal(current, targets, racks)
    if current_file is not None:
        _write_current(current_file, plan_document(current))
    rows = plan_rows(current, proposed)
    emit(Output(rows, cols(*PLAN_COLUMNS), doc=plan_document(proposed)), output_view(ctx))
    note(f"{moves(current, proposed)} replica(s) move in {len(proposed)} partition(s)")
