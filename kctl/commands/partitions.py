"""kctl partitions: leader elections (kafka-leader-election.sh) and reassignments
(kafka-reassign-partitions.sh). Both print the plan and change nothing without --execute."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from kctl.commands._common import connection, example, note, output_view
from kctl.commands._complete import topic_names
from kctl.errors import EXIT_FAILED, EXIT_FINDINGS
from kctl.formatters import Output, cols, emit

app = typer.Typer(
    help="Elect leaders and reassign partitions: the plan first, --execute to act.",
    no_args_is_help=True,
)
reassign_app = typer.Typer(
    help="Generate, execute, verify, cancel and list partition reassignments.",
    no_args_is_help=True,
)
app.add_typer(reassign_app, name="reassign")

EXECUTE_HELP = "Act on the plan; without it nothing is changed."


def _read_json(path: Path, what: str) -> Any:
    import orjson

    from kctl.errors import KctlError, UsageError

    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise KctlError(f"cannot read {what} {path}", exc.strerror) from exc
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"{what} {path} is not JSON", str(exc)) from exc


def parse_topic_partitions(items: list[str]) -> dict[str, list[int] | None]:
    """``T`` (every partition) or ``T:0,1,2`` (one definition: :func:`kctl.parsing.topic_scope`)."""
    from kctl.parsing import topic_scope

    return topic_scope(items)


def _election_file(path: Path) -> dict[str, list[int] | None]:
    """kafka-leader-election.sh --path-to-json-file: {"partitions": [{"topic", "partition"}]}."""
    from kctl.errors import UsageError

    doc = _read_json(path, "election file")
    entries = doc.get("partitions") if isinstance(doc, dict) else None
    if not isinstance(entries, list) or not entries:
        raise UsageError(f"malformed election file {path}", 'expected {"partitions": [...]}')
    out: dict[str, list[int] | None] = {}
    for i, e in enumerate(entries):
        if (
            not isinstance(e, dict)
            or not isinstance(e.get("topic"), str)
            or not isinstance(e.get("partition"), int)
        ):
            raise UsageError(
                f"malformed election file {path}", f"partitions[{i}] needs topic and partition"
            )
        out.setdefault(e["topic"], [])
        out[e["topic"]].append(e["partition"])  # type: ignore[union-attr]
    return out


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
    from kctl.errors import UsageError

    if election_type is not None:
        kind_given = election_type.lower()
        if kind_given not in ("preferred", "unclean"):
            raise UsageError(f"unknown --election-type {election_type!r}", "preferred or unclean")
        if preferred or unclean:
            raise UsageError("--election-type replaces --preferred and --unclean")
        preferred, unclean = kind_given == "preferred", kind_given == "unclean"
    if preferred == unclean:
        raise UsageError("choose one of --preferred and --unclean")
    if sum([all_topics, bool(topics), from_file is not None]) != 1:
        raise UsageError("choose exactly one of --all-topics, --topic, --from-file")
    kind = "preferred" if preferred else "unclean"
    scope = (
        parse_topic_partitions(list(topics))
        if topics
        else _election_file(from_file)
        if from_file is not None
        else None
    )
    admin = Admin(connection(ctx))
    plan = elect.plan_election(admin, kind, scope)
    steps, todo = plan.steps, plan.todo
    columns = cols(
        "topic", "partition:>", "leader:>", "replicas", "isr", "new_leader:>", "action", "reason"
    )
    if not execute:
        emit(Output([s.row() for s in steps], columns), output_view(ctx))
        note(f"plan: {plan.count} {kind} election(s); nothing changed (add --execute to elect)")
        return
    if not todo:
        emit(Output([s.row() for s in steps], columns), output_view(ctx))
        note("nothing to elect")
        return
    results = elect.elect(admin.conn, kind, todo)
    emit(
        Output(results, cols("topic", "partition:>", "status", "error", "message")),
        output_view(ctx),
    )
    if any(r["status"] == "failed" for r in results):
        raise typer.Exit(EXIT_FAILED)


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
    broker: int = typer.Option(..., "--broker", help="The broker whose replicas move."),
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
    from kctl.errors import UsageError

    scope = parse_topic_partitions(list(targets))
    whole = [t for t, ps in scope.items() if ps is None]
    if whole:
        raise UsageError(f"name the partitions of {whole[0]!r}", "expected TOPIC:PARTITION")
    partitions = {t: ps for t, ps in scope.items() if ps is not None}
    plan_cols = cols(
        "topic",
        "partition:>",
        "broker:>",
        "log_dir",
        "future_log_dir",
        "target",
        "action",
        "reason",
    )
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
    emit(
        Output(results, cols("topic", "partition:>", "broker:>", "status", "error")),
        output_view(ctx),
    )
    if any(r["status"] == "failed" for r in results):
        raise typer.Exit(EXIT_FAILED)
    note("moving; 'kctl cluster log-dirs' shows the future replica until the move completes")


# ---------------------------------------------------------------------------------------------
# reassign


def _plan(path: Path) -> Any:
    from kctl.errors import UsageError
    from kctl.replicas.assign import PlanError, parse_plan

    try:
        return parse_plan(_read_json(path, "plan"))
    except PlanError as exc:
        raise UsageError(f"malformed plan {path}", str(exc)) from exc


def _parse_brokers(text: str) -> list[int]:
    from kctl.errors import UsageError

    try:
        ids = [int(b) for b in text.split(",") if b.strip()]
    except ValueError:
        raise UsageError(f"malformed --brokers {text!r}", "expected ids like 1,2,3") from None
    if not ids or len(set(ids)) != len(ids):
        raise UsageError(f"malformed --brokers {text!r}", "expected distinct ids like 1,2,3")
    return ids


def _rows(current: dict[Any, list[int]], target: dict[Any, list[int]]) -> list[dict[str, Any]]:
    return [
        {
            "topic": topic,
            "partition": partition,
            "current": current.get((topic, partition), []),
            "proposed": replicas,
            "moving": sorted(set(replicas) - set(current.get((topic, partition), []))),
        }
        for (topic, partition), replicas in sorted(target.items())
    ]


PLAN_COLUMNS = ("topic", "partition:>", "current", "proposed", "moving")


@reassign_app.command(
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
    from kctl.errors import KctlError, NotFoundError
    from kctl.replicas.assign import PlanError, moves, plan_document, propose

    targets = _parse_brokers(brokers)
    current, racks = current_assignment(Admin(connection(ctx)), list(dict.fromkeys(topics)))
    unknown = [b for b in targets if b not in racks]
    if unknown:
        known = ", ".join(map(str, sorted(racks)))
        raise NotFoundError(f"unknown broker {unknown[0]}", f"brokers: {known}")
    try:
        proposed = propose(current, targets, racks)
    except PlanError as exc:
        raise KctlError("cannot generate a reassignment", str(exc)) from exc
    if current_file is not None:
        from kctl.formatters import to_json

        current_file.write_text(to_json(plan_document(current)) + "\n")
        note(f"current assignment written to {current_file}")
    emit(
        Output(_rows(current, proposed), cols(*PLAN_COLUMNS), doc=plan_document(proposed)),
        output_view(ctx),
    )
    note(f"{moves(current, proposed)} replica(s) move in {len(proposed)} partition(s)")


@reassign_app.command(
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
    from kctl.errors import NotFoundError

    plan = _plan(file)
    admin = Admin(connection(ctx))
    reassign.check_alter_supported(admin.conn, "reassigning partitions")
    current, racks = reassign.current_assignment(admin, sorted({t for t, _ in plan}))
    for (topic, partition), replicas in plan.items():
        if (topic, partition) not in current:
            raise NotFoundError(f"unknown partition {topic}-{partition}", "not in the cluster")
        unknown = [b for b in replicas if b not in racks]
        if unknown:
            raise NotFoundError(
                f"{topic}-{partition}: unknown broker {unknown[0]}",
                f"brokers: {', '.join(map(str, sorted(racks)))}",
            )
    if not execute:
        emit(Output(_rows(current, plan), cols(*PLAN_COLUMNS)), output_view(ctx))
        note(f"plan: {len(plan)} partition(s); nothing changed (add --execute to start)")
        return
    if throttle is not None:
        reassign.set_throttle(admin, current, plan, throttle)
        note(f"replication throttled to {throttle} bytes/s until 'reassign verify' finds it done")
    results = reassign.alter(admin.conn, dict(plan), "reassigning partitions")
    emit(
        Output(results, cols("topic", "partition:>", "status", "error", "message")),
        output_view(ctx),
    )
    if any(r["status"] == "failed" for r in results):
        raise typer.Exit(EXIT_FAILED)


@reassign_app.command(
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

    plan = _plan(file)
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


@reassign_app.command(
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

    if (file is None) == (not all_):
        raise UsageError("choose one of --file and --all")
    conn = connection(ctx)
    reassign.check_alter_supported(conn, "cancelling reassignments")
    running = reassign.ongoing(conn)
    chosen = running
    if file is not None:
        plan = _plan(file)
        chosen = [r for r in running if (r["topic"], r["partition"]) in plan]
    if not execute or not chosen:
        emit(
            Output(
                chosen,
                cols("topic", "partition:>", "replicas", "adding_replicas", "removing_replicas"),
            ),
            output_view(ctx),
        )
        note(
            f"{len(chosen)} ongoing reassignment(s) to cancel"
            + ("; nothing changed (add --execute to cancel)" if chosen else "")
        )
        return
    results = reassign.alter(
        conn, {(r["topic"], r["partition"]): None for r in chosen}, "cancelling reassignments"
    )
    emit(
        Output(results, cols("topic", "partition:>", "status", "error", "message")),
        output_view(ctx),
    )
    if any(r["status"] == "failed" for r in results):
        raise typer.Exit(EXIT_FAILED)
    if not preserve_throttles:
        from kctl.broker.client import Admin

        cleared = reassign.clear_throttles(Admin(conn), sorted({r["topic"] for r in chosen}))
        if cleared:
            note(f"throttle removed ({len(cleared)} config(s))")


@reassign_app.command("list", epilog=example("kctl partitions reassign list -o json"))
def list_(ctx: typer.Context) -> None:
    """Ongoing reassignments: target replicas, replicas being added and removed."""
    from kctl.broker import reassign

    rows = reassign.ongoing(connection(ctx))
    emit(
        Output(
            rows, cols("topic", "partition:>", "replicas", "adding_replicas", "removing_replicas")
        ),
        output_view(ctx),
    )
