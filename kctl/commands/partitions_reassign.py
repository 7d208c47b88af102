"""kctl partitions reassign (kafka-reassign-partitions.sh): generate a plan, execute it
(optionally throttled), verify, cancel and list reassignments. Attached to the ``partitions``
app in kctl/commands/partitions.py. Plans, plan files and checks: :mod:`kctl.reassign`."""

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
    from kctl.reassign.rows import failed

    emit(Output(rows, cols(*columns)), output_view(ctx))
    if failed(rows):
        raise typer.Exit(EXIT_FAILED)


@app.command(
    "generate",
    epilog=example(
        "kctl partitions reassign generate --add-broker 4,5 -o json > plan.json",
        "kctl partitions reassign generate --remove-broker 2 --report r.json -o json > plan.json",
        "kctl partitions reassign generate --balance disk --tolerance 5 --max-bytes 200GB",
        "kctl partitions reassign generate --from-snapshot snap.json --balance-disks -o json",
        "kctl partitions reassign generate -t orders --replication-factor 3 -o json",
        "kctl partitions reassign generate --topic orders --brokers 1,2,3 -o json > plan.json",
    ),
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
    from kctl.broker.reassign import current_assignment
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


WAVE_HELP = "partition moves in flight at once: the plan runs in waves of at most N"


def _wave_options(
    max_concurrent: int | None,
    max_bytes_in_flight: str | None,
    throttle: str | None,
    stall_timeout: str,
    interval: str,
    dir_throttle: str | None = None,
) -> tuple[dict[str, Any], str]:
    """The options of a wave run, and the same as command-line text (for the resume hint)."""
    from kctl.parsing import byte_size, duration

    options: dict[str, Any] = {
        "max_concurrent": max_concurrent,
        "max_bytes": None
        if max_bytes_in_flight is None
        else byte_size(max_bytes_in_flight, "--max-bytes-in-flight"),
        "throttle": None if throttle is None else byte_size(throttle, "--throttle"),
        "dir_throttle": None if dir_throttle is None else byte_size(dir_throttle, "--dir-throttle"),
        "stall_timeout": max(1.0, duration(stall_timeout, "--stall-timeout").total_seconds()),
        "interval": max(0.1, duration(interval, "--interval").total_seconds()),
    }
    hint = ""
    if max_concurrent is not None:
        hint += f" --max-concurrent {max_concurrent}"
    if max_bytes_in_flight is not None:
        hint += f" --max-bytes-in-flight {max_bytes_in_flight}"
    if throttle is not None:
        hint += f" --throttle {throttle}"
    if dir_throttle is not None:
        hint += f" --dir-throttle {dir_throttle}"
    return options, hint


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


def _wave_run(
    ctx: typer.Context,
    admin: Any,
    plan: Any,
    file: Path,
    wait: bool,
    yes: bool,
    options: dict[str, Any],
    hint: str,
    dirs: dict[tuple[str, int, int], str] | None = None,
) -> None:
    from kctl.commands._reassign_run import run_waves

    view = output_view(ctx)
    jsonl = view.format == "jsonl"
    _complete, answers = run_waves(
        admin.conn, admin, plan, file=file, wait=wait, yes=yes, jsonl=jsonl,
        options={**options, "dirs": dirs}, hint_options=hint,
    )  # fmt: skip
    if jsonl and wait:
        return  # the progress lines were the output
    if wait:
        from kctl.broker import reassign

        rows, _ = reassign.verify(admin, admin.conn, plan, dirs)
        emit(
            Output(rows, cols("topic", "partition:>", "status", "current", "target")),
            view,
        )
        return
    emit_results(ctx, answers, RESULT_COLUMNS)


@app.command(
    "execute",
    epilog=example(
        "kctl partitions reassign execute --file plan.json",
        "kctl partitions reassign execute --file plan.json --throttle 50000000 --execute",
        "kctl partitions reassign execute -f plan.json --max-concurrent 2 --throttle 50MB "
        "--wait --execute",
        "kctl partitions reassign execute -f plan.json --max-concurrent 5 --wait --execute "
        "-o jsonl",
        "kctl partitions reassign execute -f plan.json --throttle 50MB --dir-throttle 20MB "
        "--wait --execute",
    ),
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
    from kctl.broker import reassign
    from kctl.broker.client import Admin
    from kctl.reassign.plan_file import check_plan, read_plan_with_dirs
    from kctl.reassign.rows import plan_rows

    plan, dirs = read_plan_with_dirs(file)
    options, hint = _wave_options(
        max_concurrent, max_bytes_in_flight, throttle, stall_timeout, interval, dir_throttle
    )
    admin = Admin(connection(ctx))
    reassign.check_alter_supported(admin.conn, "reassigning partitions")
    current, racks = reassign.current_assignment(admin, sorted({t for t, _ in plan}))
    check_plan(plan, current, racks)
    waved = wait or max_concurrent is not None or max_bytes_in_flight is not None
    if dir_throttle is not None and not dirs:
        note("kctl: warning: --dir-throttle: the plan moves no replica between log dirs")
    if dirs and not execute:
        note(f"{len(dirs)} replica(s) with a log dir in the plan (moved there once on its broker)")
    if not execute:
        rows = plan_rows(current, plan)
        if waved:
            from kctl.reassign import waves

            running = {(r["topic"], r["partition"]) for r in reassign.ongoing(admin.conn)}
            states = waves.classify(plan, current, running)
            todo = [tp for tp, s in states.items() if s == waves.PENDING]
            order = waves.schedule(todo, {}, options["max_concurrent"], None)
            for row in rows:
                tp = (row["topic"], row["partition"])
                row["state"] = states[tp]
                row["wave"] = waves.wave_of(order, tp) or None
            emit(Output(rows, cols(*PLAN_COLUMNS, "state", "wave:>")), output_view(ctx))
            note(
                f"plan: {len(plan)} partition(s), {len(todo)} to move in {len(order)} wave(s)"
                + (" (by count; --max-bytes-in-flight is applied at run time)"
                   if max_bytes_in_flight else "")
                + "; nothing changed (add --execute to start)"
            )  # fmt: skip
            return
        emit(Output(rows, cols(*PLAN_COLUMNS)), output_view(ctx))
        note(f"plan: {len(plan)} partition(s); nothing changed (add --execute to start)")
        return
    if waved or dirs:
        _wave_run(ctx, admin, plan, file, wait, yes, options, hint, dirs)
        return
    if options["throttle"] is not None:
        reassign.set_throttle(admin, current, plan, options["throttle"])
        note(
            f"replication throttled to {options['throttle']} bytes/s until 'reassign verify' "
            "finds it done"
        )
    emit_results(
        ctx, reassign.alter(admin.conn, dict(plan), "reassigning partitions"), RESULT_COLUMNS
    )


@app.command(
    "verify",
    epilog=example(
        "kctl partitions reassign verify --file plan.json",
        "kctl partitions reassign verify --file plan.json --resume --max-concurrent 2 "
        "--throttle 50MB",
    ),
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
    from kctl.broker import reassign
    from kctl.broker.client import Admin
    from kctl.reassign.plan_file import read_plan_with_dirs

    plan, dirs = read_plan_with_dirs(file)
    options, hint = _wave_options(
        max_concurrent, max_bytes_in_flight, throttle, stall_timeout, interval, dir_throttle
    )
    admin = Admin(connection(ctx))
    if resume:
        from kctl.reassign.plan_file import check_plan

        reassign.check_alter_supported(admin.conn, "reassigning partitions")
        current, racks = reassign.current_assignment(admin, sorted({t for t, _ in plan}))
        check_plan(plan, current, racks)
        # An earlier run's throttle may be on any broker: removed everywhere at the end, as
        # verify does.
        _wave_run(ctx, admin, plan, file, True, yes, {**options, "clear_all": True}, hint, dirs)
        return
    rows, done = reassign.verify(admin, admin.conn, plan, dirs)
    emit(
        Output(rows, cols("topic", "partition:>", "status", "current", "target")), output_view(ctx)
    )
    if not done:
        counts: dict[str, int] = {}
        for r in rows:
            counts[str(r["status"])] = counts.get(str(r["status"]), 0) + 1
        summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
        if keep_throttle or any(str(r["status"]).startswith("in-progress") for r in rows):
            note(f"reassignment not complete ({summary}); the throttle (if any) stays")
        else:
            cleared = reassign.clear_throttles(admin, sorted({t for t, _ in plan}))
            note(
                f"reassignment not complete ({summary}); nothing in flight"
                + (f", leftover throttle removed ({len(cleared)} config(s))" if cleared else "")
                + f"; 'reassign verify --file {file} --resume' submits the rest"
            )
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
    kafka-reassign-partitions.sh --cancel) unless --preserve-throttles. Copies between a
    broker's log dirs stop too (the plan's log_dirs entries; with --all every one): the replica
    is sent back to the dir it is in and the broker drops the future log."""
    from kctl.broker import kafka_python, reassign
    from kctl.errors import UsageError
    from kctl.reassign.plan_file import read_plan_with_dirs
    from kctl.reassign.rows import in_plan

    if (file is None) == (not all_):
        raise UsageError("choose one of --file and --all")
    # checked before anything is asked
    plan, dirs = (None, {}) if file is None else read_plan_with_dirs(file)
    conn = connection(ctx)
    reassign.check_alter_supported(conn, "cancelling reassignments")
    running = reassign.ongoing(conn)
    chosen = in_plan(running, plan)
    copies: list[dict[str, Any]] = []
    if file is None or dirs:
        with kafka_python.admin_client(conn) as client:
            copies = reassign.dir_moves_with(client, None if file is None else dirs)
    if not execute:
        rows = [{**r, "kind": "replicas", "log_dir": None} for r in chosen] + copies
        emit(Output(rows, cols(*ONGOING_COLUMNS[:2], "kind", *ONGOING_COLUMNS[2:], "log_dir")),
             output_view(ctx))  # fmt: skip
        note(
            f"{len(chosen)} ongoing reassignment(s)"
            + (f" and {len(copies)} log-dir move(s)" if copies else "")
            + " to cancel; nothing changed (add --execute to cancel"
            + ("" if preserve_throttles else " and remove the replication throttles")
            + ")"
        )
        return
    results: list[dict[str, Any]] = []
    if chosen:
        target: dict[tuple[str, int], list[int] | None] = {
            (r["topic"], r["partition"]): None for r in chosen
        }
        results += reassign.alter(conn, target, "cancelling reassignments")
    if copies:
        with kafka_python.admin_client(conn) as client:
            results += reassign.stop_dir_moves_with(client, copies)
    if results:
        emit_results(ctx, results, (*RESULT_COLUMNS[:2], "broker", *RESULT_COLUMNS[2:]))
    else:
        note("no reassignment or log-dir move in flight to cancel")
    if not preserve_throttles:
        # As kafka-reassign-partitions.sh --cancel: the rates on every broker and the throttled
        # replica lists of every topic of the plan, whether or not a move was still in flight
        # (with --all, of every topic that has one).
        from kctl.broker.client import Admin

        admin = Admin(conn)
        topics = (
            sorted({t for t, _ in plan})
            if plan is not None
            else sorted({*admin.metadata().topics, *(r["topic"] for r in chosen)})
        )
        cleared = reassign.clear_throttles(admin, topics)
        note(f"throttle removed ({len(cleared)} config(s))" if cleared else "no throttle was set")


@app.command("list", epilog=example("kctl partitions reassign list -o json"))
def list_(ctx: typer.Context) -> None:
    """Ongoing reassignments: target replicas, replicas being added and removed."""
    from kctl.broker import reassign

    emit(Output(reassign.ongoing(connection(ctx)), cols(*ONGOING_COLUMNS)), output_view(ctx))


STATUS_COLUMNS = (
    "topic", "partition:>", "kind", "replicas", "adding_replicas", "removing_replicas",
    "log_dir", "bytes_copied:>", "bytes_total:>", "age", "throttled",
)  # fmt: skip


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
    from kctl.broker import kafka_python, reassign
    from kctl.broker.client import Admin
    from kctl.commands._reassign_run import first_seen
    from kctl.reassign import progress

    admin = Admin(connection(ctx))
    with kafka_python.admin_client(admin.conn) as client:
        rows = reassign.ongoing_with(client, None, admin.conn.timeout)
        wanted: dict[str, list[int]] = {}
        for r in rows:
            wanted.setdefault(r["topic"], []).append(r["partition"])
        # every partition: the log-dir moves are found among them
        by_broker, silent = reassign.log_dirs_by_broker(client, None)
    sizes = reassign.sizes_of(by_broker)
    held: dict[tuple[str, int], list[tuple[int, int]]] = {}  # partition -> (broker, bytes)
    for (t, p, b), v in sizes.items():
        held.setdefault((t, p), []).append((b, v))
    dir_rows = reassign.dir_moves_of(by_broker)
    # brokers that did not answer DescribeLogDirs are not asked again (each would cost a
    # timeout); those DescribeConfigs cannot reach are added
    unanswered: list[int] = []
    asked = {b for b in admin.metadata().brokers if b not in silent}
    throttles = reassign.throttle_values(admin, sorted(wanted), asked, silent=unanswered)
    throttled_topics = {n for k, n, _ in throttles if k == "topic"}
    dir_rated = {int(n) for k, n, v in throttles if k == "broker" and reassign.DIR_RATE_CONFIG in v}
    for r in rows:
        r["kind"], r["broker"], r["from_dir"], r["log_dir"] = "replicas", None, None, None
        tp = (r["topic"], r["partition"])
        size = max((v for b, v in held.get(tp, []) if b not in r["adding_replicas"]), default=0)
        done, total = progress.copied(tp, list(r["adding_replicas"]), sizes, size)
        # an adding replica on a broker that did not answer (or is fenced, so was not asked):
        # its bytes are not known
        unknown = any(b not in by_broker for b in r["adding_replicas"])
        r["bytes_copied"], r["bytes_total"] = (None if unknown else done), total
        r["throttled"] = r["topic"] in throttled_topics
    for r in dir_rows:
        r["throttled"] = r["broker"] in dir_rated
    rows = first_seen(admin, rows + dir_rows)
    emit(Output(rows, cols(*STATUS_COLUMNS)), output_view(ctx))
    rates = [f"broker {n}: {', '.join(f'{k}={v}' for k, v in sorted(v.items()))}"
             for k, n, v in throttles if k == "broker"]  # fmt: skip
    note(
        f"{len(rows) - len(dir_rows)} ongoing reassignment(s), {len(dir_rows)} log-dir move(s)"
        + (f"; throttles: {'; '.join(rates)}" if rates else "; no broker throttle set")
    )
    moving = {b for r in rows if r.get("kind") == "replicas" for b in r["replicas"]}
    down = sorted({*silent, *unanswered, *(moving - set(by_broker))})
    if down:
        note(
            f"kctl: warning: broker(s) {', '.join(map(str, down))} did not answer (down or "
            "fenced): the bytes copied to them and their throttle rates are unknown"
        )
