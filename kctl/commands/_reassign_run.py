"""Running a reassignment plan in waves for ``reassign execute`` and ``reassign verify
--resume``: progress on stderr (a rich bar when stderr is a terminal) or as JSON lines on stdout
(``-o jsonl``), Ctrl-C (cancel the wave in flight or leave it running), throttles removed at
the end, and ``reassign status``'s first-seen times. The broker work is
:class:`kctl.broker.reassign.WaveRun`."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import typer

from kctl.commands._common import note
from kctl.errors import EXIT_INTERRUPTED, KctlError


def human_bytes(n: float | None) -> str:
    if n is None:
        return "?"
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"


def human_seconds(s: float | None) -> str:
    if s is None:
        return "?"
    s = round(s)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


class Reporter:
    """Where progress goes: JSON lines on stdout (``-o jsonl``), a rich bar on a terminal's
    stderr, else nothing until the end (a line on stderr per completed wave)."""

    def __init__(self, jsonl: bool) -> None:
        self.jsonl = jsonl
        self.bar: Any = None
        self.task: Any = None
        self.stuck: list[str] = []
        if not jsonl and sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn

            self.bar = Progress(
                TextColumn("wave {task.fields[wave]}/{task.fields[waves]}"),
                BarColumn(),
                TextColumn("{task.fields[parts]} partitions"),
                TextColumn("{task.fields[bytes]}"),
                TextColumn("{task.fields[rate]}"),
                TextColumn("ETA {task.fields[eta]}"),
                console=Console(stderr=True),
                transient=False,
            )

    def __enter__(self) -> Reporter:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def __call__(self, line: dict[str, Any]) -> None:
        if self.jsonl:
            sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
            sys.stdout.flush()
            return
        fields = {
            "wave": line["wave"],
            "waves": line["waves"],
            "parts": f"{line['partitions_done']}/{line['partitions_total']}",
            "bytes": f"{human_bytes(line['bytes_copied'])}/{human_bytes(line['bytes_total'])}",
            "rate": f"{human_bytes(line['rate_bytes_per_s'])}/s",
            "eta": human_seconds(line["eta_seconds"]),
        }
        if self.bar is not None:
            total = max(1, line["bytes_total"])
            if self.task is None:
                self.task = self.bar.add_task("reassign", total=total, **fields)
            self.bar.update(self.task, completed=line["bytes_copied"], total=total, **fields)
            if line["stuck"] and line["stuck"] != self.stuck:
                self.bar.console.print(f"no progress on {', '.join(line['stuck'][:10])}")
            self.stuck = line["stuck"]


def _decide_on_interrupt(yes: bool) -> str:
    """``cancel`` or ``leave``: asked on a terminal; without one, --yes cancels and otherwise
    the wave is left running."""
    if yes:
        return "cancel"
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return "leave"
    sys.stderr.write(
        "\ninterrupted: [c]ancel the moves in flight (then remove the throttle) or "
        "[l]eave them running (throttle stays for them)? [c/L] "
    )
    sys.stderr.flush()
    try:
        answer = sys.stdin.readline().strip().lower()
    except KeyboardInterrupt:
        answer = ""
    return "cancel" if answer in ("c", "cancel") else "leave"


def resume_hint(file: Path, options: str) -> str:
    return f"kctl partitions reassign verify --file {file} --resume{options}"


def run_waves(
    conn: Any,
    admin: Any,
    plan: Any,
    *,
    file: Path,
    wait: bool,
    yes: bool,
    jsonl: bool,
    options: dict[str, Any],
    hint_options: str,
) -> tuple[bool, list[dict[str, Any]]]:
    """Run ``plan`` in waves. Returns (complete, the broker's answers to the waves submitted).
    Without ``wait`` only the first wave not yet done is submitted."""
    from kctl.broker import kafka_python
    from kctl.broker.reassign import WaveRun, dir_states_with

    answers: list[dict[str, Any]] = []
    with kafka_python.admin_client(conn) as client:
        run = WaveRun(admin, client, plan, **options)
        run.on_dirs_submitted = lambda rows: note_dirs_submitted(admin, rows)
        dirs_left = 0
        if run.dirs:
            states, _ = dir_states_with(client, run.dirs)
            dirs_left = sum(1 for st in states.values() if st != "done")
        if not run.waves and not dirs_left:
            cleared = run.finish(everywhere=True) if not run.running else []
            note(
                "every partition of the plan is already done"
                + (f"; throttle removed ({len(cleared)} config(s))" if cleared else "")
            )
            return True, answers
        if run.waves:
            note(
                f"plan: {sum(len(w) for w in run.waves)} partition move(s) in {len(run.waves)} "
                f"wave(s), {human_bytes(run.bytes_total)} to copy"
                + (f" (throttled to {human_bytes(run.throttle)}/s)" if run.throttle else "")
            )
        if dirs_left:
            note(f"then {dirs_left} replica(s) to move into the log dir the plan names")
        if not wait:
            if run.waves:
                answers += run.submit(0)
                note_submitted(admin, plan, run.waves[0])
            if dirs_left:
                rows = run.submit_dirs()
                answers += rows
                pending = sum(1 for r in rows if r["status"] == "pending")
                note(
                    f"log dirs: {len(rows) - pending} move(s) submitted"
                    + (
                        f", {pending} waiting for their replica to reach its broker"
                        if pending
                        else ""
                    )
                )
            rest = len(run.waves) - 1 if run.waves else 0
            note(
                (f"wave 1 of {len(run.waves)} submitted ({len(run.waves[0])} partition(s)); "
                 if run.waves else "")
                + (
                    f"{rest} wave(s) left: run '{resume_hint(file, hint_options)}'"
                    if rest or (dirs_left and run.waves)
                    else f"run 'kctl partitions reassign verify --file {file}' to see it "
                    "done and remove the throttle"
                )
            )  # fmt: skip
            return False, answers
        try:
            with Reporter(jsonl) as report:
                for i in range(len(run.waves)):
                    answers += run.submit(i)
                    note_submitted(admin, plan, run.waves[i])
                    run.wait_wave(i, report)
                    if not jsonl and report.bar is None:
                        count = len(run.waves[i])
                        note(f"wave {i + 1}/{len(run.waves)} complete ({count} partition(s))")
                if dirs_left:
                    run.wait_dirs(report)
                    if not jsonl and report.bar is None:
                        note(f"log dirs: {len(run.dirs)} replica(s) in place")
        except KeyboardInterrupt:
            _interrupted(conn, run, yes, file, hint_options)
        except KctlError:
            _keep_in_flight(conn, run)
            raise
        cleared = run.finish()
        note(
            f"reassignment complete in {human_seconds(time.monotonic() - run.started)}"
            + (f"; throttle removed ({len(cleared)} config(s))" if cleared else "")
        )
        return True, answers


def _fresh(conn: Any, run: Any, action: Any) -> Any:
    """``action()`` on a new kafka-python client (the old one may have been interrupted in the
    middle of a request)."""
    from kctl.broker import kafka_python

    with kafka_python.admin_client(conn) as client:
        run.client = client
        return action()


def _keep_in_flight(conn: Any, run: Any) -> None:
    """After a failure: the throttle kept for the moves still in flight only (removed when none
    is). When that fails too (a broker that is down cannot take its throttle change), the
    throttle stays as it was, said in a warning, and the first failure stays the error."""
    try:
        _narrow_or_finish(conn, run)
    except KctlError as exc:
        note(f"kctl: warning: the throttle is left as it was ({exc.line()})")


def _narrow_or_finish(conn: Any, run: Any) -> None:
    flying = _fresh(conn, run, run.narrow)
    if flying:
        note(
            f"{len(flying)} move(s) still in flight; the throttle stays for them only"
            if run.throttles
            else f"{len(flying)} move(s) still in flight"
        )
    elif _fresh(conn, run, run.dirs_moving):
        note(
            "replicas still moving between log dirs"
            + ("; their throttle stays" if run.dirs_throttled else "")
        )
    else:
        cleared = run.finish()
        if cleared or run.throttled:
            note("nothing in flight; throttle removed")


def _interrupted(conn: Any, run: Any, yes: bool, file: Path, hint_options: str) -> None:
    choice = _decide_on_interrupt(yes)
    if choice == "cancel":
        cancelled = _fresh(conn, run, run.cancel)
        note(
            f"interrupted: cancelled {len(cancelled)} move(s) in flight and removed the throttle; "
            f"run '{resume_hint(file, hint_options)}' to start again"
        )
    else:
        flying = _fresh(conn, run, run.narrow)
        note(
            f"interrupted: {len(flying)} move(s) left running"
            + ("; the throttle stays for them" if run.throttles or run.dirs_throttled else "")
            + f"; run '{resume_hint(file, hint_options)}' to finish the plan"
        )
    raise typer.Exit(EXIT_INTERRUPTED)


# ---------------------------------------------------------------------------------------------
# First-seen times of reassignments (reassign status's age): the broker does not say when a
# reassignment started, so kctl notes when it submitted one (execute) or first saw one (status)
# in its state dir, keyed by cluster id, partition and target replicas.

SEEN_FILE = "reassignments-seen.json"


def _seen_path() -> Path:
    from kctl.local.broker import state_dir

    return state_dir() / SEEN_FILE


def _load() -> dict[str, float]:
    try:
        data = json.loads(_seen_path().read_text())
        return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save(data: dict[str, float]) -> None:
    path = _seen_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, sort_keys=True))
        tmp.replace(path)
    except OSError:
        pass  # an age is a nicety: never fail a command over it


def _key(cluster: str, topic: str, partition: int, target: list[int]) -> str:
    return f"{cluster}|{topic}|{partition}|{','.join(map(str, sorted(target)))}"


def _dir_key(cluster: str, topic: str, partition: int, broker: int, log_dir: str) -> str:
    return f"{_key(cluster, topic, partition, [broker])}|{log_dir}"


def _cluster_id(admin: Any) -> str:
    try:
        return str(admin.metadata().cluster_id or "")
    except Exception:
        return ""


def first_seen(admin: Any, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each ongoing reassignment row with ``first_seen`` (epoch s, kctl's first sight of it:
    its submission by kctl or an earlier 'status') and ``age``; a move seen for the first time
    now has age "unknown". Entries of moves no longer ongoing are dropped."""
    cluster = _cluster_id(admin)
    data = _load()
    now = time.time()
    keep: dict[str, float] = {k: v for k, v in data.items() if not k.startswith(cluster + "|")}
    out = []
    for r in rows:
        target = [b for b in r["replicas"] if b not in r["removing_replicas"]]
        key = (
            _dir_key(cluster, r["topic"], r["partition"], r["broker"], r["log_dir"])
            if r.get("kind") == "log-dir"
            else _key(cluster, r["topic"], r["partition"], target)
        )
        seen = data.get(key)
        keep[key] = seen if seen is not None else now
        out.append(
            {
                **r,
                "first_seen": None
                if seen is None
                else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seen)),
                "age": "unknown" if seen is None else human_seconds(now - seen),
                "age_seconds": None if seen is None else round(now - seen, 1),
            }
        )
    _save(keep)
    return out


def note_dirs_submitted(admin: Any, rows: list[dict[str, Any]], log_dir: str | None = None) -> None:
    """Note now as the start of the copies between log dirs that kctl submitted (the accepted
    rows of AlterReplicaLogDirs answers: topic, partition, broker and ``log_dir`` or the one
    given), for status's age."""
    accepted = [r for r in rows if r.get("status") == "accepted"]
    if not accepted:
        return
    cluster = _cluster_id(admin)
    data = _load()
    now = time.time()
    for r in accepted:
        d = r.get("log_dir") or log_dir
        data.setdefault(_dir_key(cluster, r["topic"], r["partition"], r["broker"], str(d)), now)
    _save(data)


def note_submitted(admin: Any, plan: Any, tps: list[tuple[str, int]]) -> None:
    """Note now as the start of the moves of ``tps`` that kctl submitted (for status's age)."""
    cluster = _cluster_id(admin)
    data = _load()
    now = time.time()
    for tp in tps:
        data.setdefault(_key(cluster, tp[0], tp[1], list(plan[tp])), now)
    _save(data)
