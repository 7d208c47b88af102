"""Running a reassignment plan in waves (``reassign execute``, ``reassign verify --resume``),
pure: the sequence of a run, with its I/O handed in, so that it is tested without a cluster.

The I/O is a :class:`Cluster` (the cluster's replicas and ongoing reassignments, replica sizes,
submitting and cancelling moves, throttles, moves between log dirs, the first-seen notes of
``reassign status``; :class:`kctl.broker.reassign.run.BrokerCluster` is the real one), a
:class:`ProgressView` (where progress lines go: JSON lines, a bar on a terminal, or nothing
until the end), ``note`` (a line for people), ``decide`` (on Ctrl-C: ``cancel`` the moves in
flight or ``leave`` them running), and the clock and the pause between polls.

A run is derived from the plan and the cluster alone (:mod:`kctl.reassign.waves`): partitions
already done are skipped, moves of the plan already in flight are waited for first (wave 0),
the rest is submitted in waves of at most ``max_concurrent`` partitions / ``max_bytes`` bytes,
each when the previous completes; then the replicas the plan puts in a named log dir are moved
there. With a throttle each wave sets it for only its moving replicas and their brokers (and
removes it from those of the previous wave that no longer move); it is removed at the end,
kept for the moves still in flight after a failure, or removed with the moves cancelled."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from kctl.errors import KctlError
from kctl.parsing import byte_size, duration
from kctl.reassign import progress, waves
from kctl.reassign.assign import TP, Assignment
from kctl.reassign.plan_file import DirKey, LogDirs
from kctl.reassign.progress import ProgressLine, Sizes
from kctl.reassign.report import human_bytes, human_seconds
from kctl.reassign.rows import Answer, Cleared, DirAnswer, DirMove, Ongoing
from kctl.reassign.throttles import (
    Changes,
    dir_rate_changes,
    throttle_changes,
    throttle_diff,
)

LOST_GRACE = 15.0  # seconds a move may look neither in flight nor done (metadata lag)
CANCEL_WAIT = 30.0  # seconds a cancel waits for the cancelled moves to be gone
CANCEL_POLL = 0.5


class StuckError(KctlError):
    """Moves made no progress for the stall timeout (e.g. an adding replica's broker is down)."""


class PlanFailed(KctlError):
    """A wave was refused by the controller or a move was cancelled from outside."""


class Cluster(Protocol):
    """The I/O of a wave run."""

    def replicas(self, topics: list[str]) -> Assignment:
        """The current replicas of every partition of ``topics`` the cluster has."""
        ...

    def ongoing(self, tps: list[TP]) -> list[Ongoing]:
        """The ongoing reassignments of ``tps``."""
        ...

    def replica_sizes(self, tps: list[TP]) -> tuple[Sizes, set[int]]:
        """(bytes on disk of each replica of ``tps``, the brokers that answered)."""
        ...

    def alter(self, target: Mapping[TP, list[int] | None], what: str) -> list[Answer]:
        """AlterPartitionReassignments: each partition to its replicas (None: cancel it)."""
        ...

    def apply_throttles(self, changes: Changes) -> None:
        """Set (a value) or remove (None) throttle configs."""
        ...

    def clear_throttles(self, topics: list[str], brokers: set[int] | None) -> list[Cleared]:
        """Remove every throttle config from ``brokers`` (None: all) and ``topics``."""
        ...

    def dir_states(self, dirs: LogDirs) -> tuple[dict[DirKey, str], dict[DirKey, tuple[int, int]]]:
        """Per replica of ``dirs``: done | moving | elsewhere | absent; and (bytes in its future
        log, bytes of the replica) for those found."""
        ...

    def dir_moves(self, dirs: LogDirs) -> list[DirMove]:
        """The copies between log dirs in flight of ``dirs``' replicas that can be stopped."""
        ...

    def stop_dir_moves(self, moves: list[DirMove]) -> list[DirAnswer]:
        """Stop those copies (each replica sent back to the dir it is in)."""
        ...

    def alter_dirs(self, moves: LogDirs) -> list[DirAnswer]:
        """AlterReplicaLogDirs: each replica into its log dir."""
        ...

    def submitted(self, moves: Mapping[TP, list[int]]) -> None:
        """Note now as the start of these moves (``reassign status``'s age)."""
        ...

    def dirs_submitted(self, rows: list[DirAnswer]) -> None:
        """Note now as the start of the accepted copies between log dirs."""
        ...

    def fresh(self) -> AbstractContextManager[None]:
        """The calls inside go over a new connection (after Ctrl-C the old one may be in the
        middle of a request)."""
        ...


class ProgressView(Protocol):
    """Where the progress lines of a run go while it waits."""

    @property
    def live(self) -> bool:
        """Whether each line is shown (JSON lines, a bar); else a note per wave completed."""
        ...

    def __enter__(self) -> ProgressView: ...

    def __exit__(self, *exc: object) -> None: ...

    def __call__(self, line: ProgressLine) -> None: ...


@dataclass(frozen=True)
class WaveOptions:
    max_concurrent: int | None = None
    max_bytes: int | None = None  # per wave
    throttle: int | None = None  # bytes/s, on the moving replicas and their brokers
    dir_throttle: int | None = None  # bytes/s, of the moves between a broker's log dirs
    stall_timeout: float = 60.0
    interval: float = 1.0
    # Remove throttles from every broker at the end (verify --resume: an earlier run's may be
    # anywhere), not only from the plan's.
    clear_all: bool = False
    hint: str = ""  # these options as command-line text (the resume hint)

    @property
    def waved(self) -> bool:
        return self.max_concurrent is not None or self.max_bytes is not None


def wave_options(
    max_concurrent: int | None,
    max_bytes_in_flight: str | None,
    throttle: str | None,
    stall_timeout: str,
    interval: str,
    dir_throttle: str | None = None,
) -> WaveOptions:
    """The options of a wave run as typed, read (sizes, rates, durations)."""
    max_bytes = (
        None
        if max_bytes_in_flight is None
        else byte_size(max_bytes_in_flight, "--max-bytes-in-flight")
    )
    rate = None if throttle is None else byte_size(throttle, "--throttle")
    dir_rate = None if dir_throttle is None else byte_size(dir_throttle, "--dir-throttle")
    stall = max(1.0, duration(stall_timeout, "--stall-timeout").total_seconds())
    every = max(0.1, duration(interval, "--interval").total_seconds())
    hint = ""
    if max_concurrent is not None:
        hint += f" --max-concurrent {max_concurrent}"
    if max_bytes_in_flight is not None:
        hint += f" --max-bytes-in-flight {max_bytes_in_flight}"
    if throttle is not None:
        hint += f" --throttle {throttle}"
    if dir_throttle is not None:
        hint += f" --dir-throttle {dir_throttle}"
    return WaveOptions(max_concurrent, max_bytes, rate, dir_rate, stall, every, False, hint)


class WaveRun:
    """One run of a plan in waves over ``cluster`` (module docstring). :meth:`finish` removes
    every throttle once nothing of the plan is in flight; :meth:`narrow` keeps it only for the
    moves still in flight; :meth:`cancel` cancels those moves, then removes it."""

    def __init__(
        self,
        cluster: Cluster,
        plan: Assignment,
        options: WaveOptions,
        dirs: LogDirs | None = None,
        *,
        clock: Callable[[], float],
        sleep: Callable[[float], None],
    ) -> None:
        self.cluster = cluster
        self.clock, self.sleep = clock, sleep
        self.plan = plan
        self.throttle = options.throttle
        self.stall_timeout = options.stall_timeout
        self.interval = options.interval
        self.topics = sorted({t for t, _ in plan})
        self.tracker = progress.Tracker()
        self.throttles: Changes = []
        self.throttled = False  # whether this run set a throttle
        self.dir_throttle = options.dir_throttle
        self.dirs_throttled = False
        self.clear_all = options.clear_all
        self.started = clock()
        self.current: Assignment = {}
        self.running: dict[TP, Ongoing] = {}
        self.states: dict[TP, str] = {}
        self.refresh()
        self.start_state = dict(self.states)
        self.original = self._from()
        moving = [tp for tp, s in self.states.items() if s in (waves.PENDING, waves.IN_FLIGHT)]
        sizes, _ = cluster.replica_sizes(moving)
        self.sizes = progress.partition_sizes(sizes)
        # What a move copies is counted against the replicas it started from (the cluster's
        # replicas when this run began; for a move already in flight, the ones being removed
        # are still listed, so its adding replicas are the ongoing reassignment's).
        self.cost = waves.move_bytes(self._from(), plan, self.sizes)
        self.bytes_total = sum(self.cost[tp] for tp in moving)
        in_flight = [tp for tp in moving if self.states[tp] == waves.IN_FLIGHT]
        pending = [tp for tp in moving if self.states[tp] == waves.PENDING]
        self.waves: list[list[TP]] = ([in_flight] if in_flight else []) + waves.schedule(
            pending, self.cost, options.max_concurrent, options.max_bytes
        )
        self.resumed_wave = bool(in_flight)
        self.wave = 0  # 1-based number of the wave in flight (0: none yet)
        self.lost_since: dict[TP, float] = {}
        self.seen_sizes: Sizes = {}  # the last replica sizes progress() read
        self.dirs: LogDirs = dict(dirs or {})
        # The only brokers finish() clears (every throttle this run sets is on one of them), so
        # a rate another tool set on a broker this plan never touches stays. ``clear_all``
        # (verify --resume): every broker, as verify does.
        self.plan_brokers = {b for tp, reps in plan.items() for b in (*reps, *self.original[tp])}
        self.plan_brokers.update(b for _t, _p, b in self.dirs)

    # --- the cluster ---------------------------------------------------------------------------
    def refresh(self) -> None:
        self.current = self.cluster.replicas(self.topics)
        rows = self.cluster.ongoing(sorted(set(self.plan)))
        self.running = {
            (r["topic"], r["partition"]): r
            for r in rows
            if (r["topic"], r["partition"]) in self.plan
        }
        self.states = waves.classify(self.plan, self.current, self.running)

    def _from(self) -> Assignment:
        """Per partition, the replicas its move starts from (without the adding ones)."""
        out: Assignment = {}
        for tp in self.plan:
            row = self.running.get(tp)
            now = self.current.get(tp, [])
            if row is not None:
                out[tp] = [b for b in now if b not in row["adding_replicas"]]
            else:
                out[tp] = list(now)
        return out

    # --- throttles -----------------------------------------------------------------------------
    def _set_throttle_for(self, tps: list[TP]) -> None:
        if self.throttle is None and not self.throttles:
            return
        start = self.original
        after = (
            throttle_changes(
                {tp: start[tp] for tp in tps}, {tp: self.plan[tp] for tp in tps}, self.throttle
            )
            if tps and self.throttle is not None
            else []
        )
        self.cluster.apply_throttles(throttle_diff(self.throttles, after))
        self.throttles = after
        self.throttled = self.throttled or bool(after)

    def _throttle_dirs(self) -> None:
        """The log-dir move rate on every broker with a replica to move between its log dirs
        (once; it stays until :meth:`finish`)."""
        if self.dir_throttle is None or self.dirs_throttled or not self.dirs:
            return
        brokers = sorted({b for _t, _p, b in self.dirs})
        self.cluster.apply_throttles(dir_rate_changes(brokers, self.dir_throttle))
        self.dirs_throttled = self.throttled = True

    def narrow(self) -> list[TP]:
        """Keep the throttle only for the moves of the plan still in flight (their list)."""
        self.refresh()
        flying = sorted(self.running)
        if self.throttles or self.throttle is not None:
            self._set_throttle_for(flying)
        return flying

    def finish(self, everywhere: bool = False) -> list[Cleared]:
        """Remove the throttle: the replica lists of the plan's topics and the rates of the
        brokers of the plan (its partitions' replicas when the run began, their targets, and
        the brokers of its log-dir moves: every throttle this run sets is on one); or, with
        ``everywhere`` or ``clear_all`` (a plan found done, verify --resume: an earlier run's
        throttles may be anywhere), of every broker, as kafka-reassign-partitions.sh --verify
        does."""
        self.throttles = []
        every = everywhere or self.clear_all
        return self.cluster.clear_throttles(self.topics, None if every else self.plan_brokers)

    def dirs_moving(self) -> bool:
        """Whether a replica of the plan is being copied into its log dir (a future log)."""
        if not self.dirs:
            return False
        states, _ = self.cluster.dir_states(self.dirs)
        return "moving" in states.values()

    def cancel(self) -> list[TP]:
        """Cancel the plan's moves in flight (and its replicas' copies into their log dirs),
        wait (bounded) until they are gone, then remove the throttle. The cancelled
        partitions."""
        self.refresh()
        flying = sorted(self.running)
        if self.dirs:
            stopped = self.cluster.dir_moves(self.dirs)
            self.cluster.stop_dir_moves(stopped)
            flying = sorted({*flying, *((r["topic"], r["partition"]) for r in stopped)})
        if self.running:
            self.cluster.alter(dict.fromkeys(sorted(self.running)), "cancelling reassignments")
            deadline = self.clock() + CANCEL_WAIT
            while self.clock() < deadline:
                self.refresh()
                if not self.running:
                    break
                self.sleep(CANCEL_POLL)
        self.finish()
        return flying

    # --- progress ------------------------------------------------------------------------------
    def progress(self, stuck: list[TP] | None = None) -> ProgressLine:
        now = self.clock()
        flying = sorted(self.running)
        sizes, answered = self.cluster.replica_sizes(flying) if flying else ({}, set())
        sizes = self.seen_sizes = progress.carry_forward(self.seen_sizes, sizes, answered)
        copied = 0
        for tp in flying:
            adding = list(self.running[tp]["adding_replicas"])
            done, _total = progress.copied(tp, adding, sizes, self.sizes.get(tp, 0))
            copied += done
            self.tracker.watch(now, tp, done)
        done_bytes = sum(
            self.cost.get(tp, 0)
            for tp, s in self.states.items()
            if s == waves.DONE and self.start_state.get(tp) != waves.DONE
        )
        total_copied = min(self.bytes_total, done_bytes + copied)
        self.tracker.sample(now, total_copied)
        done_count = sum(1 for s in self.states.values() if s == waves.DONE)
        return progress.progress_line(
            wave=self.wave,
            waves=len(self.waves),
            partitions_done=done_count,
            partitions_total=len(self.plan),
            bytes_copied=total_copied,
            bytes_total=self.bytes_total,
            rate=self.tracker.rate(),
            in_flight=flying,
            stuck=stuck or [],
            elapsed=now - self.started,
        )

    # --- running -------------------------------------------------------------------------------
    def submit(self, index: int) -> list[Answer]:
        """Submit wave ``index`` (0-based), its throttle first. Wave 0 of a resumed plan is
        already in flight: only its throttle is set."""
        wave = self.waves[index]
        self.wave = index + 1
        self._set_throttle_for(wave)
        if index == 0 and self.resumed_wave:
            return []
        results = self.cluster.alter({tp: self.plan[tp] for tp in wave}, "reassigning partitions")
        failed = [r for r in results if r["status"] == "failed"]
        if failed:
            first = failed[0]
            raise PlanFailed(
                f"wave {self.wave}: the controller refused {first['topic']}-{first['partition']}",
                f"{first['error']}" + (f": {first['message']}" if first.get("message") else ""),
            )
        for tp in wave:
            self.tracker.watch(self.clock(), tp, 0)
        return results

    def wave_done(self, index: int) -> bool:
        """Whether every partition of wave ``index`` is done (no longer moving, replicas as
        planned); a partition no longer moving but not as planned was cancelled from outside."""
        wave = self.waves[index]

        def done(tp: TP) -> bool:
            # Replicas as planned; a reorder left (other order) counts as done too.
            return tp not in self.running and set(self.current.get(tp, [])) == set(self.plan[tp])

        # No longer moving but not as planned: the metadata this broker answers with may lag
        # the controller for a moment, so only after LOST_GRACE seconds is it a cancelled move.
        now = self.clock()
        lost = [tp for tp in wave if tp not in self.running and not done(tp)]
        for tp in lost:
            self.lost_since.setdefault(tp, now)
        for tp in [tp for tp in self.lost_since if tp not in lost]:
            del self.lost_since[tp]
        gone = [tp for tp in lost if now - self.lost_since[tp] >= LOST_GRACE]
        if gone:
            names = ", ".join(f"{t}-{p}" for t, p in gone[:5])
            raise PlanFailed(
                f"wave {index + 1}: {names} stopped moving without reaching the plan",
                "cancelled by another tool?",
            )
        return all(done(tp) for tp in wave)

    def wait_wave(self, index: int, report: Callable[[ProgressLine], None]) -> None:
        """Poll until wave ``index`` completes, calling ``report(progress line)`` each poll;
        :class:`StuckError` when its moves stall for the stall timeout. A poll that fails (a
        broker just killed is still named in the metadata, as the controller or a leader, until
        the controller fences it) is tried again, up to the stall timeout."""
        failing_since: float | None = None
        while True:
            try:
                self.refresh()
            except KctlError:
                now = self.clock()
                failing_since = now if failing_since is None else failing_since
                if now - failing_since >= self.stall_timeout:
                    raise
                self.sleep(self.interval)
                continue
            failing_since = None
            stuck = self.tracker.stalled(self.clock(), self.stall_timeout, sorted(self.running))
            line = self.progress(stuck)
            report(line)
            if self.wave_done(index):
                for tp in self.waves[index]:
                    self.tracker.forget(tp)
                return
            if stuck and len(stuck) == len(self.running):
                names = ", ".join(f"{t}-{p}" for t, p in stuck[:10])
                more = f" and {len(stuck) - 10} more" if len(stuck) > 10 else ""
                raise StuckError(
                    f"no progress for {self.stall_timeout:g}s on {names}{more}",
                    "an adding replica's broker may be down; the throttle stays only for the "
                    "moves in flight; run 'reassign verify --resume' when it is back",
                )
            self.sleep(self.interval)

    # --- log dirs (the plan's log_dirs entries), once every replica is on its broker -----------
    def submit_dirs(self) -> list[DirAnswer]:
        """AlterReplicaLogDirs for every replica of the plan not yet in (or moving to) its log
        dir; a replica not on its broker yet is ``pending`` (submitted again by the next call)."""
        states, _ = self.cluster.dir_states(self.dirs)
        todo = {k: d for k, d in self.dirs.items() if states[k] in ("elsewhere", "absent")}
        if not todo:
            return []
        self._throttle_dirs()
        rows = self.cluster.alter_dirs(todo)
        self.cluster.dirs_submitted(rows)
        failed = [r for r in rows if r["status"] == "failed"]
        if failed:
            f = failed[0]
            raise PlanFailed(
                f"moving {f['topic']}-{f['partition']} to {f['log_dir']} on broker {f['broker']}",
                str(f["error"]),
            )
        return rows

    def wait_dirs(self, report: Callable[[ProgressLine], None]) -> None:
        """Move the plan's replicas into their log dirs and poll until every one is there (its
        future log swapped in), reporting progress lines with ``phase`` ``log-dirs``;
        :class:`StuckError` when nothing moves for the stall timeout."""
        if not self.dirs:
            return
        tracker = progress.Tracker()
        first, _ = self.cluster.dir_states(self.dirs)
        moving_keys = [k for k, st in first.items() if st != "done"]
        size: dict[DirKey, int] = {}
        last_change = self.clock()
        before: dict[DirKey, str] = {}
        before_bytes = -1
        while True:
            self.submit_dirs()
            states, sizes = self.cluster.dir_states(self.dirs)
            now = self.clock()
            copied = 0
            for k in moving_keys:
                fut, cur = sizes.get(k, (0, 0))
                size[k] = max(size.get(k, 0), cur)
                copied += size[k] if states[k] == "done" else min(fut, size[k])
            total = sum(size.get(k, 0) for k in moving_keys)
            tracker.sample(now, copied)
            done = sum(1 for st in states.values() if st == "done")
            flying = sorted({(t, p) for (t, p, _b), st in states.items() if st != "done"})
            if states != before or copied > before_bytes:
                last_change = now
            before, before_bytes = dict(states), copied
            stuck = flying if now - last_change >= self.stall_timeout else []
            line = progress.progress_line(
                wave=len(self.waves) + 1,
                waves=len(self.waves) + 1,
                partitions_done=done,
                partitions_total=len(self.dirs),
                bytes_copied=copied,
                bytes_total=total,
                rate=tracker.rate(),
                in_flight=flying,
                stuck=stuck,
                elapsed=now - self.started,
                phase="log-dirs",
            )
            report(line)
            if done == len(self.dirs):
                return
            if stuck:
                names = ", ".join(f"{t}-{p}" for t, p in stuck[:10])
                raise StuckError(
                    f"no log dir move progressed for {self.stall_timeout:g}s ({names})",
                    "see 'kctl cluster log-dirs'; run 'reassign verify --resume' to try again",
                )
            self.sleep(self.interval)


# ---------------------------------------------------------------------------------------------
# The sequence of execute / verify --resume


@dataclass(frozen=True)
class Outcome:
    complete: bool  # every move of the plan done (and the throttle removed)
    answers: list[Answer | DirAnswer]  # the brokers' answers to the moves submitted
    interrupted: bool = False  # Ctrl-C: the moves cancelled or left running, as decided


INTERRUPT_QUESTION = (
    "\ninterrupted: [c]ancel the moves in flight (then remove the throttle) or "
    "[l]eave them running (throttle stays for them)? [c/L] "
)


def interrupt_choice(yes: bool, terminal: bool, ask: Callable[[str], str]) -> str:
    """On Ctrl-C: ``cancel`` (the moves in flight) or ``leave`` (them running). With ``yes``
    cancel; without a ``terminal`` (stdin and stderr) leave; else ``ask`` the question (c:
    cancel, anything else: leave)."""
    if yes:
        return "cancel"
    if not terminal:
        return "leave"
    answer = ask(INTERRUPT_QUESTION).strip().lower()
    return "cancel" if answer in ("c", "cancel") else "leave"


def resume_hint(file: Path, options: str) -> str:
    return f"kctl partitions reassign verify --file {file} --resume{options}"


def run_waves(
    cluster: Cluster,
    plan: Assignment,
    options: WaveOptions,
    dirs: LogDirs | None,
    *,
    file: Path,
    wait: bool,
    view: ProgressView,
    note: Callable[[str], None],
    decide: Callable[[], str],
    clock: Callable[[], float],
    sleep: Callable[[float], None],
) -> Outcome:
    """Run ``plan`` in waves (module docstring); without ``wait`` only the first wave not yet
    done is submitted (and the log-dir moves whose replica is on its broker). ``view`` shows
    the progress while waiting; on Ctrl-C ``decide()`` says whether to ``cancel`` the moves in
    flight (then remove the throttle) or ``leave`` them running (the throttle kept for them).
    A failure keeps the throttle for the moves still in flight and is raised."""
    answers: list[Answer | DirAnswer] = []
    run = WaveRun(cluster, plan, options, dirs, clock=clock, sleep=sleep)
    hint = resume_hint(file, options.hint)
    dirs_left = 0
    if run.dirs:
        states, _ = cluster.dir_states(run.dirs)
        dirs_left = sum(1 for st in states.values() if st != "done")
    if not run.waves and not dirs_left:
        cleared = run.finish(everywhere=True) if not run.running else []
        note(
            "every partition of the plan is already done"
            + (f"; throttle removed ({len(cleared)} config(s))" if cleared else "")
        )
        return Outcome(True, answers)
    if run.waves:
        note(
            f"plan: {sum(len(w) for w in run.waves)} partition move(s) in {len(run.waves)} "
            f"wave(s), {human_bytes(run.bytes_total)} to copy"
            + (f" (throttled to {human_bytes(run.throttle)}/s)" if run.throttle else "")
        )
    if dirs_left:
        note(f"then {dirs_left} replica(s) to move into the log dir the plan names")
    if not wait:
        answers += _submit_first(run, plan, dirs_left, file, hint, note)
        return Outcome(False, answers)
    try:
        with view as show:
            for i in range(len(run.waves)):
                answers += run.submit(i)
                cluster.submitted({tp: plan[tp] for tp in run.waves[i]})
                run.wait_wave(i, show)
                if not show.live:
                    count = len(run.waves[i])
                    note(f"wave {i + 1}/{len(run.waves)} complete ({count} partition(s))")
            if dirs_left:
                run.wait_dirs(show)
                if not show.live:
                    note(f"log dirs: {len(run.dirs)} replica(s) in place")
    except KeyboardInterrupt:
        _interrupted(run, decide(), hint, note)
        return Outcome(False, answers, interrupted=True)
    except KctlError:
        _keep_in_flight(run, note)
        raise
    cleared = run.finish()
    note(
        f"reassignment complete in {human_seconds(clock() - run.started)}"
        + (f"; throttle removed ({len(cleared)} config(s))" if cleared else "")
    )
    return Outcome(True, answers)


def _submit_first(
    run: WaveRun,
    plan: Assignment,
    dirs_left: int,
    file: Path,
    hint: str,
    note: Callable[[str], None],
) -> list[Answer | DirAnswer]:
    """Without --wait: the first wave, and the log-dir moves that can start; what to run next."""
    answers: list[Answer | DirAnswer] = []
    if run.waves:
        answers += run.submit(0)
        run.cluster.submitted({tp: plan[tp] for tp in run.waves[0]})
    if dirs_left:
        rows = run.submit_dirs()
        answers += rows
        pending = sum(1 for r in rows if r["status"] == "pending")
        note(
            f"log dirs: {len(rows) - pending} move(s) submitted"
            + (f", {pending} waiting for their replica to reach its broker" if pending else "")
        )
    rest = len(run.waves) - 1 if run.waves else 0
    note(
        (f"wave 1 of {len(run.waves)} submitted ({len(run.waves[0])} partition(s)); "
         if run.waves else "")
        + (
            f"{rest} wave(s) left: run '{hint}'"
            if rest or (dirs_left and run.waves)
            else f"run 'kctl partitions reassign verify --file {file}' to see it "
            "done and remove the throttle"
        )
    )  # fmt: skip
    return answers


def _keep_in_flight(run: WaveRun, note: Callable[[str], None]) -> None:
    """After a failure: the throttle kept for the moves still in flight only (removed when none
    is). When that fails too (a broker that is down cannot take its throttle change), the
    throttle stays as it was, said in a warning, and the first failure stays the error."""
    try:
        _narrow_or_finish(run, note)
    except KctlError as exc:
        note(f"kctl: warning: the throttle is left as it was ({exc.line()})")


def _narrow_or_finish(run: WaveRun, note: Callable[[str], None]) -> None:
    with run.cluster.fresh():
        flying = run.narrow()
    if flying:
        note(
            f"{len(flying)} move(s) still in flight; the throttle stays for them only"
            if run.throttles
            else f"{len(flying)} move(s) still in flight"
        )
        return
    with run.cluster.fresh():
        moving = run.dirs_moving()
    if moving:
        note(
            "replicas still moving between log dirs"
            + ("; their throttle stays" if run.dirs_throttled else "")
        )
    else:
        cleared = run.finish()
        if cleared or run.throttled:
            note("nothing in flight; throttle removed")


def _interrupted(run: WaveRun, choice: str, hint: str, note: Callable[[str], None]) -> None:
    """Ctrl-C while waiting: ``choice`` ``cancel`` (the moves in flight, then the throttle) or
    ``leave`` (them running, the throttle kept for them)."""
    if choice == "cancel":
        with run.cluster.fresh():
            cancelled = run.cancel()
        note(
            f"interrupted: cancelled {len(cancelled)} move(s) in flight and removed the throttle; "
            f"run '{hint}' to start again"
        )
    else:
        with run.cluster.fresh():
            flying = run.narrow()
        note(
            f"interrupted: {len(flying)} move(s) left running"
            + ("; the throttle stays for them" if run.throttles or run.dirs_throttled else "")
            + f"; run '{hint}' to finish the plan"
        )
