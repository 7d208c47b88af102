"""The sequence of a reassignment run in waves (kctl.reassign.run.run_waves) with its I/O handed
in: a model of a cluster in memory that moves replicas at a fixed rate while the run pauses,
records every call, and can stall, refuse, or be interrupted; the clock is the model's. What
the real cluster does is tests/test_reassign_execute.py's and tests/test_reassign_cluster.py's;
here the order of the steps, the throttles between waves, the notes, and Ctrl-C and failures.
Also the pure rows of verify, the dry run, cancel and status. No broker."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest

from kctl.errors import UsageError
from kctl.reassign import rows as R
from kctl.reassign import status as S
from kctl.reassign.assign import TP, Assignment
from kctl.reassign.plan_file import DirKey, LogDirs
from kctl.reassign.progress import ProgressLine, Sizes
from kctl.reassign.rows import Answer, Cleared, DirAnswer, DirMove, Ongoing
from kctl.reassign.run import (
    INTERRUPT_QUESTION,
    Outcome,
    PlanFailed,
    StuckError,
    WaveOptions,
    interrupt_choice,
    run_waves,
    wave_options,
)
from kctl.reassign.throttles import DIR_RATE_CONFIG, RATE_CONFIGS, Changes

PLAN_FILE = Path("plan.json")


class Model:
    """A cluster in memory (a :class:`kctl.reassign.run.Cluster`). A reassignment copies
    ``rate`` bytes a second to each adding replica (0 on a broker in ``down``); it completes
    when every adding replica holds the partition's size. Time passes only in :meth:`sleep`."""

    def __init__(self, replicas: Assignment, sizes: dict[TP, int], rate: int = 100) -> None:
        self.reps = {tp: list(r) for tp, r in replicas.items()}
        self.size = dict(sizes)
        self.rate = rate
        self.down: set[int] = set()
        self.moves: dict[TP, tuple[list[int], list[int], dict[int, int]]] = {}  # target, from
        self.refuse: set[TP] = set()
        self.now = 0.0
        self.calls: list[tuple[str, object]] = []
        self.configs: dict[tuple[str, str], dict[str, str]] = {}
        self.dir_of: dict[DirKey, str] = {}  # where each replica lives
        self.future: dict[DirKey, tuple[str, int]] = {}  # copies between log dirs in flight
        self.interrupt_at: float | None = None
        self.cancel_at: float | None = None  # another tool cancels every move then
        self.polls = 0

    # -- time ---------------------------------------------------------------------------------
    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        if self.interrupt_at is not None and self.now >= self.interrupt_at:
            self.interrupt_at = None
            raise KeyboardInterrupt
        if self.cancel_at is not None and self.now >= self.cancel_at:
            self.cancel_at = None
            for tp, (_target, start, _copied) in list(self.moves.items()):
                self.reps[tp] = start
                del self.moves[tp]
        for tp, (target, _start, copied) in list(self.moves.items()):
            for b in copied:
                if b not in self.down:
                    copied[b] = min(self.size[tp], copied[b] + int(self.rate * seconds))
            if all(v >= self.size[tp] for v in copied.values()):
                self.reps[tp] = list(target)
                del self.moves[tp]
        for key, (d, copied_bytes) in list(self.future.items()):
            size = self.size[key[:2]]
            copied_bytes = min(size, copied_bytes + int(self.rate * seconds))
            if copied_bytes >= size:
                self.dir_of[key] = d
                del self.future[key]
            else:
                self.future[key] = (d, copied_bytes)

    # -- the Cluster protocol -----------------------------------------------------------------
    def replicas(self, topics: list[str]) -> Assignment:
        self.polls += 1
        return {tp: list(r) for tp, r in sorted(self.reps.items()) if tp[0] in topics}

    def ongoing(self, tps: list[TP]) -> list[Ongoing]:
        out: list[Ongoing] = []
        for tp in tps:
            if tp in self.moves:
                target, start, _ = self.moves[tp]
                out.append(
                    {
                        "topic": tp[0],
                        "partition": tp[1],
                        "replicas": self.reps[tp],
                        "adding_replicas": [b for b in target if b not in start],
                        "removing_replicas": [b for b in start if b not in target],
                    }
                )
        return out

    def replica_sizes(self, tps: list[TP]) -> tuple[Sizes, set[int]]:
        self.calls.append(("sizes", sorted(tps)))
        sizes: Sizes = {}
        for tp in tps:
            moving = self.moves.get(tp)
            for b in self.reps.get(tp, []):
                if moving is not None and b in moving[2]:
                    if b not in self.down:
                        sizes[(tp[0], tp[1], b)] = moving[2][b]
                else:
                    sizes[(tp[0], tp[1], b)] = self.size[tp]
        return sizes, {b for r in self.reps.values() for b in r} - self.down

    def alter(self, target: Mapping[TP, list[int] | None], what: str) -> list[Answer]:
        self.calls.append(("alter", dict(target)))
        answers: list[Answer] = []
        for tp, new in sorted(target.items()):
            ok = tp not in self.refuse
            if ok and new is None:
                _target, start, _ = self.moves.pop(tp)
                self.reps[tp] = start
            elif ok and new is not None:
                start = self.reps[tp]
                adding = [b for b in new if b not in start]
                if adding:
                    self.moves[tp] = (list(new), list(start), dict.fromkeys(adding, 0))
                    self.reps[tp] = list(new) + [b for b in start if b not in new]
                else:
                    self.reps[tp] = list(new)
            answers.append(
                {
                    "topic": tp[0],
                    "partition": tp[1],
                    "status": "accepted" if ok else "failed",
                    "error": None if ok else "INVALID_REPLICA_ASSIGNMENT",
                    "message": None,
                }
            )
        return answers

    def apply_throttles(self, changes: Changes) -> None:
        self.calls.append(("throttle", [(k, n, dict(v)) for k, n, v in changes]))
        for kind, name, values in changes:
            have = self.configs.setdefault((kind, name), {})
            for key, value in values.items():
                if value is None:
                    have.pop(key, None)
                else:
                    have[key] = value

    def clear_throttles(self, topics: list[str], brokers: set[int] | None) -> list[Cleared]:
        self.calls.append(("clear", (sorted(topics), None if brokers is None else sorted(brokers))))
        out: list[Cleared] = []
        for (kind, name), values in sorted(self.configs.items()):
            hit = name in topics if kind == "topic" else brokers is None or int(name) in brokers
            if hit:
                out += [{"entity": kind, "name": name, "config": c} for c in sorted(values)]
                values.clear()
        return out

    def dir_states(self, dirs: LogDirs) -> tuple[dict[DirKey, str], dict[DirKey, tuple[int, int]]]:
        states: dict[DirKey, str] = {}
        sizes: dict[DirKey, tuple[int, int]] = {}
        for key, d in dirs.items():
            on_broker = key[2] in self.reps.get(key[:2], []) and key[:2] not in self.moves
            size = self.size[key[:2]]
            if key in self.future:
                states[key] = "moving" if self.future[key][0] == d else "elsewhere"
                sizes[key] = (self.future[key][1], size)
            elif not on_broker:
                states[key] = "absent"
            else:
                states[key] = "done" if self.dir_of.get(key, "/a") == d else "elsewhere"
                sizes[key] = (0, size)
        return states, sizes

    def dir_moves(self, dirs: LogDirs) -> list[DirMove]:
        return [
            {
                "topic": k[0],
                "partition": k[1],
                "kind": "log-dir",
                "broker": k[2],
                "replicas": [k[2]],
                "adding_replicas": [],
                "removing_replicas": [],
                "from_dir": self.dir_of.get(k, "/a"),
                "log_dir": d,
                "bytes_copied": c,
                "bytes_total": self.size[k[:2]],
            }
            for k, (d, c) in sorted(self.future.items())
            if k in dirs
        ]

    def stop_dir_moves(self, moves: list[DirMove]) -> list[DirAnswer]:
        self.calls.append(("stop dirs", [(m["topic"], m["partition"], m["broker"]) for m in moves]))
        for m in moves:
            del self.future[(m["topic"], m["partition"], m["broker"])]
        return []

    def alter_dirs(self, moves: LogDirs) -> list[DirAnswer]:
        self.calls.append(("alter dirs", dict(moves)))
        out: list[DirAnswer] = []
        for key, d in sorted(moves.items()):
            here = key[2] in self.reps.get(key[:2], []) and key[:2] not in self.moves
            if here:
                self.future[key] = (d, 0)
            out.append(
                {
                    "topic": key[0], "partition": key[1], "broker": key[2],
                    "status": "accepted" if here else "pending",
                    "error": None if here else "REPLICA_NOT_AVAILABLE", "log_dir": d,
                }
            )  # fmt: skip
        return out

    def submitted(self, moves: Mapping[TP, list[int]]) -> None:
        self.calls.append(("submitted", dict(moves)))

    def dirs_submitted(self, rows: list[DirAnswer]) -> None:
        self.calls.append(("dirs submitted", len(rows)))

    @contextmanager
    def fresh(self) -> Iterator[None]:
        self.calls.append(("fresh", None))
        yield

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.calls]


class Lines:
    """A progress view: the lines it was shown; ``live`` as a bar or JSON lines would be."""

    def __init__(self, live: bool = True) -> None:
        self._live = live
        self.lines: list[ProgressLine] = []
        self.opened = self.closed = 0

    @property
    def live(self) -> bool:
        return self._live

    def __enter__(self) -> Lines:
        self.opened += 1
        return self

    def __exit__(self, *exc: object) -> None:
        self.closed += 1

    def __call__(self, line: ProgressLine) -> None:
        self.lines.append(line)


def run(
    model: Model,
    plan: Assignment,
    options: WaveOptions,
    *,
    dirs: LogDirs | None = None,
    wait: bool = True,
    view: Lines | None = None,
    decide: str = "leave",
    notes: list[str] | None = None,
) -> tuple[Outcome, list[str], Lines]:
    notes = [] if notes is None else notes
    shown = view or Lines()
    outcome = run_waves(
        model, plan, options, dirs, file=PLAN_FILE, wait=wait, view=shown, note=notes.append,
        decide=lambda: decide, clock=model.clock, sleep=model.sleep,
    )  # fmt: skip
    return outcome, notes, shown


THREE = {("t", 0): [1, 2], ("t", 1): [2, 3], ("t", 2): [3, 1]}
SIZES = {("t", 0): 1000, ("t", 1): 500, ("t", 2): 300}
TO_FOUR = {("t", 0): [4, 2], ("t", 1): [2, 4], ("t", 2): [3, 1]}  # t-2 stays


def test_waves_run_in_order_each_throttled_alone_then_everything_cleared() -> None:
    model = Model(THREE, SIZES)
    options = wave_options(1, None, "100", "60s", "1s")
    outcome, notes, view = run(model, TO_FOUR, options)
    assert outcome.complete and not outcome.interrupted
    assert [a["status"] for a in outcome.answers] == ["accepted", "accepted"]
    assert model.reps == {("t", 0): [4, 2], ("t", 1): [2, 4], ("t", 2): [3, 1]}
    alters = [c[1] for c in model.calls if c[0] == "alter"]
    assert alters == [{("t", 0): [4, 2]}, {("t", 1): [2, 4]}]  # one wave each, in order
    throttles = [c[1] for c in model.calls if c[0] == "throttle"]
    # Wave 1: brokers 1, 2, 4 and t-0's replicas; wave 2 adds 3, drops 1 and t-0's lists.
    assert [n for k, n, _ in throttles[0] if k == "broker"] == ["1", "2", "4"]
    assert throttles[0][-1] == (
        "topic", "t", {"leader.replication.throttled.replicas": "0:1,0:2",
                       "follower.replication.throttled.replicas": "0:4"},
    )  # fmt: skip
    second = {(k, n): v for k, n, v in throttles[1]}
    assert second[("broker", "1")] == dict.fromkeys(RATE_CONFIGS)  # removed
    assert second[("topic", "t")]["follower.replication.throttled.replicas"] == "1:4"
    # Finished: the plan's brokers only (another tool's rate elsewhere stays).
    assert model.calls[-1] == ("clear", (["t"], [1, 2, 3, 4]))
    assert all(not v for v in model.configs.values())
    assert (
        notes[0] == "plan: 2 partition move(s) in 2 wave(s), 1.5 kB to copy (throttled to 100 B/s)"
    )
    assert notes[-1].startswith("reassignment complete in ")
    assert notes[-1].endswith("; throttle removed (8 config(s))")
    # The bar is live: no note per wave; the lines count waves and bytes up to the total.
    assert view.opened == view.closed == 1
    assert {line["wave"] for line in view.lines} == {1, 2}
    assert view.lines[-1]["partitions_done"] == 3 and view.lines[-1]["bytes_copied"] == 1500
    assert ("submitted", {("t", 0): [4, 2]}) in model.calls


def test_without_a_live_view_each_wave_is_noted() -> None:
    model = Model(THREE, SIZES)
    _, notes, _ = run(model, TO_FOUR, wave_options(1, None, None, "60s", "1s"), view=Lines(False))
    assert "wave 1/2 complete (1 partition(s))" in notes
    assert "wave 2/2 complete (1 partition(s))" in notes
    assert not [c for c in model.calls if c[0] == "throttle"]  # no throttle asked, none set


def test_without_wait_only_the_first_wave_is_submitted_and_the_rest_is_named() -> None:
    model = Model(THREE, SIZES)
    options = wave_options(1, None, None, "60s", "1s")
    outcome, notes, view = run(model, TO_FOUR, options, wait=False)
    assert not outcome.complete and len(outcome.answers) == 1
    assert [c[1] for c in model.calls if c[0] == "alter"] == [{("t", 0): [4, 2]}]
    assert notes[-1] == (
        "wave 1 of 2 submitted (1 partition(s)); 1 wave(s) left: run 'kctl partitions reassign "
        "verify --file plan.json --resume --max-concurrent 1'"
    )
    assert view.opened == 0  # nothing waited for, nothing shown
    # Run again later: the first wave is done (or in flight), the second is the one left.
    model.sleep(20)
    _, notes, _ = run(model, TO_FOUR, options, wait=False)
    assert notes[-1].startswith("wave 1 of 1 submitted (1 partition(s)); run 'kctl partitions ")


def test_a_plan_already_done_clears_the_throttle_everywhere() -> None:
    model = Model(TO_FOUR, SIZES)
    model.configs[("broker", "9")] = {"leader.replication.throttled.rate": "5"}
    outcome, notes, _ = run(model, TO_FOUR, WaveOptions())
    assert outcome.complete
    assert notes == ["every partition of the plan is already done; throttle removed (1 config(s))"]
    assert model.calls[-1] == ("clear", (["t"], None))


def test_a_move_already_in_flight_is_waited_for_first_and_not_submitted_again() -> None:
    model = Model(THREE, SIZES)
    model.alter({("t", 1): [2, 4]}, "another run")
    model.calls.clear()
    outcome, notes, _ = run(model, TO_FOUR, wave_options(5, None, "1MB", "60s", "1s"))
    assert outcome.complete
    assert [c[1] for c in model.calls if c[0] == "alter"] == [{("t", 0): [4, 2]}]  # wave 2 only
    assert notes[0].startswith("plan: 2 partition move(s) in 2 wave(s)")


def test_a_stalled_wave_fails_and_keeps_the_throttle_for_the_moves_in_flight() -> None:
    model = Model(THREE, SIZES)
    model.down.add(4)  # the adding replica's broker copies nothing
    options = wave_options(None, None, "100", "10s", "1s")
    notes: list[str] = []
    with pytest.raises(StuckError) as failure:
        run(model, TO_FOUR, options, notes=notes)
    assert failure.value.line().startswith("no progress for 10s on t-0, t-1 (an adding replica")
    assert notes[-1] == "2 move(s) still in flight; the throttle stays for them only"
    kinds = model.kinds()
    assert kinds[-2:] == ["fresh", "throttle"]  # narrowed over a new connection, not cleared
    assert "clear" not in kinds
    assert model.configs[("topic", "t")]  # still throttled for the moves in flight


def test_a_refused_wave_is_a_plan_failure_naming_the_partition() -> None:
    model = Model(THREE, SIZES)
    model.refuse.add(("t", 0))
    notes: list[str] = []
    with pytest.raises(PlanFailed) as failure:
        run(model, TO_FOUR, wave_options(1, None, "100", "60s", "1s"), notes=notes)
    assert failure.value.line() == (
        "wave 1: the controller refused t-0 (INVALID_REPLICA_ASSIGNMENT)"
    )
    assert model.calls[-1][0] == "clear"  # nothing in flight: the throttle goes
    assert notes[-1] == "nothing in flight; throttle removed"


def test_a_move_cancelled_by_another_tool_fails_the_run_after_a_grace_period() -> None:
    model = Model(THREE, SIZES, rate=10)
    model.cancel_at = 2.0
    with pytest.raises(PlanFailed) as failure:
        run(model, TO_FOUR, wave_options(None, None, None, "60s", "1s"))
    assert failure.value.line() == (
        "wave 1: t-0, t-1 stopped moving without reaching the plan (cancelled by another tool?)"
    )
    assert 2.0 + 15.0 <= model.now < 2.0 + 15.0 + 2  # not before the metadata could lag


@pytest.mark.parametrize("choice", ["cancel", "leave"])
def test_ctrl_c_cancels_or_leaves_the_moves_in_flight(choice: str) -> None:
    model = Model(THREE, SIZES, rate=10)
    model.interrupt_at = 3.0
    options = wave_options(None, None, "100", "60s", "1s")
    outcome, notes, view = run(model, TO_FOUR, options, decide=choice)
    assert outcome.interrupted and not outcome.complete
    assert view.closed == 1  # the bar stopped before the question
    hint = "kctl partitions reassign verify --file plan.json --resume --throttle 100"
    if choice == "cancel":
        assert model.moves == {} and model.reps == THREE  # back where they were
        assert model.calls[-1] == ("clear", (["t"], [1, 2, 3, 4]))
        assert notes[-1] == (
            "interrupted: cancelled 2 move(s) in flight and removed the throttle; "
            f"run '{hint}' to start again"
        )
    else:
        assert set(model.moves) == {("t", 0), ("t", 1)}
        assert "clear" not in model.kinds()
        assert notes[-1] == (
            "interrupted: 2 move(s) left running; the throttle stays for them; "
            f"run '{hint}' to finish the plan"
        )
    assert "fresh" in model.kinds()


def test_log_dirs_are_moved_once_the_replicas_are_on_their_brokers() -> None:
    model = Model(THREE, SIZES)
    dirs = {("t", 0, 4): "/b", ("t", 2, 3): "/b"}
    options = wave_options(None, None, None, "60s", "1s", dir_throttle="20MB")
    outcome, notes, view = run(model, TO_FOUR, options, dirs=dirs)
    assert outcome.complete
    assert notes[1] == "then 2 replica(s) to move into the log dir the plan names"
    assert model.dir_of == {("t", 0, 4): "/b", ("t", 2, 3): "/b"}
    assert view.lines[-1]["phase"] == "log-dirs" and view.lines[-1]["partitions_done"] == 2
    throttled = [c[1] for c in model.calls if c[0] == "throttle"]
    assert throttled == [[("broker", "3", {DIR_RATE_CONFIG: "20000000"}),
                          ("broker", "4", {DIR_RATE_CONFIG: "20000000"})]]  # fmt: skip
    # The dir moves' brokers are the plan's: their rate goes at the end.
    assert model.calls[-1] == ("clear", (["t"], [1, 2, 3, 4]))


def test_ctrl_c_while_replicas_move_between_log_dirs_stops_those_copies() -> None:
    model = Model(THREE, SIZES)
    model.interrupt_at = 14.0  # the waves are done at 10 s; t-0's copy into /b takes 10 s more
    dirs = {("t", 0, 4): "/b", ("t", 2, 3): "/b"}
    outcome, notes, _ = run(model, TO_FOUR, WaveOptions(), dirs=dirs, decide="cancel")
    assert outcome.interrupted
    assert ("stop dirs", [("t", 0, 4)]) in model.calls and model.future == {}
    assert model.dir_of == {("t", 2, 3): "/b"}  # the copy that had finished stays
    assert notes[-1].startswith("interrupted: cancelled 1 move(s) in flight and removed the ")


def test_wave_options_read_sizes_and_durations_and_keep_the_hint() -> None:
    o = wave_options(2, "1GiB", "50MB", "5m", "0.01s", "20MB")
    assert (o.max_concurrent, o.max_bytes, o.throttle, o.dir_throttle) == (
        2,
        1 << 30,
        50 * 10**6,
        20 * 10**6,
    )
    assert (o.stall_timeout, o.interval, o.waved) == (300.0, 0.1, True)  # at least 0.1 s
    assert (
        o.hint
        == " --max-concurrent 2 --max-bytes-in-flight 1GiB --throttle 50MB --dir-throttle 20MB"
    )
    assert not wave_options(None, None, None, "0s", "1s").waved
    assert wave_options(None, None, None, "0s", "1s").stall_timeout == 1.0
    with pytest.raises(UsageError):
        wave_options(None, None, "0", "1s", "1s")


def test_interrupt_choice_asks_only_on_a_terminal() -> None:
    asked: list[str] = []

    def answer(text: str) -> Callable[[str], str]:
        def ask(question: str) -> str:
            asked.append(question)
            return text

        return ask

    assert interrupt_choice(True, True, answer("l")) == "cancel"
    assert interrupt_choice(False, False, answer("c")) == "leave"
    assert asked == []
    assert interrupt_choice(False, True, answer(" C\n")) == "cancel"
    assert interrupt_choice(False, True, answer("cancel")) == "cancel"
    assert interrupt_choice(False, True, answer("\n")) == "leave"
    assert asked == [INTERRUPT_QUESTION] * 3


# ---------------------------------------------------------------------------------------------
# The rows of verify, the dry run, cancel and status


def test_verify_rows_and_what_verify_says() -> None:
    plan = {("t", 0): [1, 2], ("t", 1): [2, 3], ("t", 2): [3], ("t", 3): [1], ("u", 0): [1]}
    current = {("t", 0): [1, 2], ("t", 1): [3, 2], ("t", 2): [1], ("t", 3): [1, 2]}
    rows, done = R.verify_rows(plan, current, [("t", 3)])
    assert [r["status"] for r in rows] == [
        "complete", "complete (other order)", "not-applied", "in-progress", "missing",
    ]  # fmt: skip
    assert not done and rows[-1]["current"] == []
    assert not R.verify_clears(rows, done, False)  # a move in flight keeps it
    assert R.verify_note(rows, done, None, PLAN_FILE) == (
        "reassignment not complete (1 complete, 1 complete (other order), 1 in-progress, "
        "1 missing, 1 not-applied); the throttle (if any) stays"
    )
    idle = [r for r in rows if r["status"] != "in-progress"]
    assert R.verify_clears(idle, False, False) and not R.verify_clears(idle, False, True)
    assert R.verify_note(idle, False, 0, PLAN_FILE).endswith(
        "nothing in flight; 'reassign verify --file plan.json --resume' submits the rest"
    )
    ok, all_done = R.verify_rows({("t", 0): [1, 2]}, current, [])
    assert all_done and R.verify_note(ok, True, 3, PLAN_FILE) == (
        "reassignment complete; throttle removed (3 config(s))"
    )
    assert R.verify_note(ok, True, None, PLAN_FILE) is None  # --keep-throttle: nothing said
    states = {("t", 0, 1): "done", ("t", 0, 2): "moving"}
    rows, done = R.verify_rows({("t", 0): [1, 2]}, current, [], states)
    assert rows[0]["status"] == "in-progress (log dir)" and not done
    rows, _ = R.verify_rows({("t", 0): [1, 2]}, current, [], {("t", 0, 2): "absent"})
    assert rows[0]["status"] == "not-applied (log dir)"


def test_the_dry_run_shows_states_and_waves_only_when_waved() -> None:
    plan = {("t", 0): [4, 2], ("t", 1): [2, 4], ("t", 2): [3, 1]}
    rows, columns, line = R.dry_run(plan, THREE, None, None, False)
    assert columns == R.PLAN_COLUMNS and "state" not in rows[0]
    assert line == "plan: 3 partition(s); nothing changed (add --execute to start)"
    rows, columns, line = R.dry_run(plan, THREE, {("t", 1)}, 1, True)
    assert columns == R.WAVE_PLAN_COLUMNS
    assert [(r["state"], r["wave"]) for r in rows] == [
        ("pending", 1), ("in-flight", None), ("done", None),
    ]  # fmt: skip
    assert line == (
        "plan: 3 partition(s), 1 to move in 1 wave(s) (by count; --max-bytes-in-flight is "
        "applied at run time); nothing changed (add --execute to start)"
    )
    assert list(rows[0]) == ["topic", "partition", "current", "proposed", "moving", "state", "wave"]


def test_cancel_rows_notes_and_topics() -> None:
    chosen: list[Ongoing] = [
        {"topic": "t", "partition": 0, "replicas": [1, 4], "adding_replicas": [4],
         "removing_replicas": [1]},
    ]  # fmt: skip
    rows = R.cancel_rows(chosen, [])
    assert list(rows[0]) == [
        "topic", "partition", "replicas", "adding_replicas", "removing_replicas", "kind", "log_dir",
    ]  # fmt: skip
    assert R.cancel_plan_note(1, 2, False) == (
        "1 ongoing reassignment(s) and 2 log-dir move(s) to cancel; nothing changed (add "
        "--execute to cancel and remove the replication throttles)"
    )
    assert R.cancel_plan_note(0, 0, True).endswith("nothing changed (add --execute to cancel)")
    assert R.cancel_topics({("b", 0): [1]}, ["x"], chosen) == ["b"]
    assert R.cancel_topics(None, ["x", "a"], chosen) == ["a", "t", "x"]


def test_status_rows_ages_and_notes() -> None:
    ongoing: list[Ongoing] = [
        {"topic": "t", "partition": 0, "replicas": [4, 1, 2], "adding_replicas": [4],
         "removing_replicas": [1]},
    ]  # fmt: skip
    dir_move: DirMove = {
        "topic": "u", "partition": 1, "kind": "log-dir", "broker": 2, "replicas": [2],
        "adding_replicas": [], "removing_replicas": [], "from_dir": "/a", "log_dir": "/b",
        "bytes_copied": 5, "bytes_total": 9,
    }  # fmt: skip
    sizes = {("t", 0, 1): 1000, ("t", 0, 2): 900, ("t", 0, 4): 250}
    throttles = [("topic", "t", {"leader.replication.throttled.replicas": "0:1"}),
                 ("broker", "2", {DIR_RATE_CONFIG: "10", "a.rate": "7"})]  # fmt: skip
    moves = S.moves(ongoing, [dir_move], sizes, {1, 2, 4}, throttles)
    assert (moves[0]["bytes_copied"], moves[0]["bytes_total"], moves[0]["throttled"]) == (
        250, 1000, True,
    )  # fmt: skip
    assert moves[1]["throttled"] and moves[1]["kind"] == "log-dir"
    unknown = S.moves(ongoing, [], sizes, {1, 2}, [])
    assert unknown[0]["bytes_copied"] is None and not unknown[0]["throttled"]
    key = S.seen_key("c", "t", 0, [4, 2])
    assert key == "c|t|0|2,4" and S.move_key("c", moves[0]) == key
    assert S.move_key("c", moves[1]) == "c|u|1|2|/b"
    seen = {key: 1000.0, "c|gone|0|1": 5.0, "other|t|0|1": 7.0}
    rows, keep = S.with_ages(moves, seen, "c", 1125.0)
    assert (rows[0]["age"], rows[0]["age_seconds"], rows[0]["first_seen"]) == (
        "2m05s", 125.0, "1970-01-01T00:16:40Z",
    )  # fmt: skip
    assert (rows[1]["age"], rows[1]["first_seen"]) == ("unknown", None)
    assert keep == {key: 1000.0, "c|u|1|2|/b": 1125.0, "other|t|0|1": 7.0}
    assert S.status_notes(rows, throttles, {1, 2}, [3]) == [
        "1 ongoing reassignment(s), 1 log-dir move(s); throttles: broker 2: a.rate=7, "
        f"{DIR_RATE_CONFIG}=10",
        "kctl: warning: broker(s) 3, 4 did not answer (down or fenced): the bytes copied to "
        "them and their throttle rates are unknown",
    ]
    assert S.status_notes([], [], set(), []) == [
        "0 ongoing reassignment(s), 0 log-dir move(s); no broker throttle set"
    ]
