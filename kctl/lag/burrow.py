"""Consumer status after Burrow's evaluation rules (linkedin/Burrow, ``core/internal/evaluator``,
wiki "Consumer Lag Evaluation Rules"), over a sliding window of the last N lag samples: the one
implementation, used by ``kctl analytics`` (per partition, inside Spark) and by the lag exporter
(``StatusWindows``, in memory). Pure: no client library, no Spark.

Burrow evaluates a window of the last N *commits* of a partition, each carrying the committed
offset, the commit's timestamp and the lag when it arrived, plus the partition's current lag:

1. If the current lag is zero, or the lag is zero anywhere in the window: OK.
2. Otherwise, in this order of severity, the first that holds:
   REWIND  the committed offset decreased between two consecutive entries;
   STOP    now - (last entry's commit time) > (last entry's commit time - first entry's commit
           time): no commit for longer than the window spans;
   STALL   the committed offset is the same in every entry (commits arrive, nothing moves);
   WARN    the lag never decreased between two consecutive entries (the consumer is slower
           than the producers);
   else OK.
A group's status is the worst of its partitions', where anything worse than ERR (STOP, STALL,
REWIND) is reported as ERR.

Negative lag, our addition: Burrow stores a negative lag as 0 (its lag comes from a log end
fetched before the commit arrived), so a partition whose log ends before its commit is OK there.
A lag sample reads the committed offset *before* the log end, so a negative lag in it is real:
the log was truncated or recreated under the commit and the consumer's position is out of
range. Such a sample is never OK: its status is NEGATIVE (the most severe; ERR for the group),
and a negative lag in the window does not count as the "lag zero" of rule 1.

Our window is the last N *samples* (``groups lag --record`` rows, or the exporter's lag passes)
of each partition, samples without a commit included (they count in the window, carry no
entry: ``window_complete`` is the share of the window's samples that have a commit). A sample
does not carry the commit's timestamp, so one is derived: while a live member owns the
partition (``member_id`` is set) the consumer is taken to be committing at the sample's time;
once no member owns it, the commit time stays at the sample where the committed offset last
changed (over the partition's whole history, not only the window). "now" is the time of the
sample the window ends at. docs/analytics.md lists this and the other differences.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Burrow's StatusConstant order (protocol.go): NOTFOUND < OK < WARN < ERR < STOP < STALL < REWIND.
# NEGATIVE (a committed offset beyond the log end) is kctl's own, the most severe.
SEVERITY: dict[str, int] = {
    "NOTFOUND": 0,
    "OK": 1,
    "WARN": 2,
    "ERR": 3,
    "STOP": 4,
    "STALL": 5,
    "REWIND": 6,
    "NEGATIVE": 7,
}
DEFAULT_WINDOW = 10  # Burrow's storage "intervals" default
PARTITION_KEYS = ("cluster", "group", "topic", "partition")


@dataclass(frozen=True)
class Entry:
    """One lag sample of one partition, as the rules need it: the sample's time, the committed
    offset (-1 or below: no commit), the lag (null without a commit) and the member owning the
    partition (null when none does)."""

    ts_ms: int
    committed_offset: int
    lag: int | None
    member_id: str | None


# A sample as the window keeps it: (committed offset, lag with a negative one clamped to 0
# (Burrow's), whether the lag was negative, the derived commit time, the change of offset and of
# lag from the sample before (None without one)). All None (negative False) without a commit.
_Point = tuple[int | None, int | None, bool, int | None, int | None, int | None]
_NO_COMMIT: _Point = (None, None, False, None, None, None)


class PartitionWindow:
    """The sliding window of one partition: the last ``window`` samples, plus the time the
    committed offset last changed. Feed it the partition's samples in time order; each ``add``
    is O(window). ``statuses`` and ``StatusWindows`` are made of it; so is analytics' Spark
    step, which streams sorted rows through one window per partition."""

    __slots__ = ("_entries", "_last_change_ts", "_points", "_previous", "_window")

    def __init__(self, window: int = DEFAULT_WINDOW) -> None:
        if window < 1:
            raise ValueError("the window must hold at least one sample")
        self._window = window
        self._points: deque[_Point] = deque(maxlen=window)
        self._entries = 0  # points with a commit in the window
        self._last_change_ts: int | None = None
        self._previous: _Point = _NO_COMMIT

    def __len__(self) -> int:
        """The samples in the window."""
        return len(self._points)

    def push(self, entry: Entry) -> tuple[str | None, float]:
        """``add`` of an ``Entry``."""
        return self.add(entry.ts_ms, entry.committed_offset, entry.lag, entry.member_id)

    def add(
        self, ts_ms: int, committed_offset: int | None, lag: int | None, member_id: str | None
    ) -> tuple[str | None, float]:
        """Add the partition's next sample (in time order): the status of the window ending
        there and ``window_complete`` (samples with a commit in it / window)."""
        points = self._points
        if len(points) == self._window and points[0][0] is not None:
            self._entries -= 1  # the oldest leaves as this one comes in
        if committed_offset is None or committed_offset < 0:
            points.append(_NO_COMMIT)
            self._previous = _NO_COMMIT
            return None, self._entries / self._window
        raw_lag = lag or 0
        lag0 = raw_lag if raw_lag > 0 else 0
        prev_offset, prev_lag = self._previous[0], self._previous[1]
        if prev_offset is None or committed_offset != prev_offset:
            self._last_change_ts = ts_ms
        commit_ts = ts_ms if member_id is not None else self._last_change_ts
        point: _Point = (
            committed_offset,
            lag0,
            raw_lag < 0,
            commit_ts,
            None if prev_offset is None else committed_offset - prev_offset,
            None if prev_lag is None else lag0 - prev_lag,
        )
        points.append(point)
        self._previous = point
        self._entries += 1
        return self._status(ts_ms, point), self._entries / self._window

    def _status(self, now_ts: int, now: _Point) -> str | None:
        if now[2]:
            return "NEGATIVE"
        if now[1] == 0:
            return "OK"
        # One pass over the window. The pairs (i-1, i) with both in the window are the d_* of
        # every point but the window's first once it is full (that one's pair has left).
        skip_first = len(self._points) == self._window
        first_commit: int | None = None
        min_d_offset: int | None = None
        moved = False
        min_d_lag: int | None = None
        for i, (_off, lag0, negative, commit_ts, d_offset, d_lag) in enumerate(self._points):
            if lag0 == 0 and not negative:  # a negative lag is not the lag zero of rule 1
                return "OK"
            if first_commit is None:
                first_commit = commit_ts
            if i == 0 and skip_first:
                continue
            if d_offset is not None:
                if min_d_offset is None or d_offset < min_d_offset:
                    min_d_offset = d_offset
                moved = moved or d_offset != 0
            if d_lag is not None and (min_d_lag is None or d_lag < min_d_lag):
                min_d_lag = d_lag
        if min_d_offset is not None and min_d_offset < 0:
            return "REWIND"
        last_commit = now[3]
        # A sample with a commit always has a commit time (its own, or the last change's).
        assert last_commit is not None and first_commit is not None
        if now_ts - last_commit > last_commit - first_commit:
            return "STOP"
        # Without pairs Burrow's loops are vacuously true (stalled, not decreasing).
        if not moved:
            return "STALL"
        if min_d_lag is None or min_d_lag >= 0:
            return "WARN"
        return "OK"


def statuses(
    entries: Sequence[Entry], window: int = DEFAULT_WINDOW
) -> list[tuple[str | None, float]]:
    """For the time-ordered samples of ONE partition: the status (OK/WARN/STOP/STALL/REWIND/
    NEGATIVE, None for a sample without a commit) of each sample over the window of the last
    ``window`` samples ending there, and ``window_complete`` (samples with a commit in that
    window / ``window``)."""
    partition = PartitionWindow(window)
    return [partition.push(entry) for entry in entries]


class StatusWindows:
    """In-memory sliding windows for a long-running process (the exporter): per (group, topic,
    partition) the last ``window`` entries plus the time its committed offset last changed."""

    def __init__(self, window: int = DEFAULT_WINDOW) -> None:
        if window < 1:
            raise ValueError("the window must hold at least one sample")
        self._window = window
        self._partitions: dict[tuple[str, str, int], PartitionWindow] = {}

    def __len__(self) -> int:
        """The partitions held."""
        return len(self._partitions)

    def observe(
        self, rows: Iterable[Mapping[str, Any]], ts_ms: int, keep: Iterable[str] = ()
    ) -> dict[tuple[str, str, int], str | None]:
        """Add one lag pass (lag rows: group, topic, partition, committed_offset, lag,
        member_id) sampled at ``ts_ms``; the status of every partition in it. Partitions absent
        from the pass are forgotten (memory stays bounded); one that comes back starts a new
        window. The windows of the groups in ``keep`` (not read by this pass: not known, not
        gone) stay as they are."""
        held = set(keep)
        kept = {key: w for key, w in self._partitions.items() if key[0] in held}
        result: dict[tuple[str, str, int], str | None] = {}
        for row in rows:
            key = (row["group"], row["topic"], int(row["partition"]))
            partition = kept.get(key)
            if partition is None:
                partition = self._partitions.get(key)
                if partition is None:
                    partition = PartitionWindow(self._window)
                kept[key] = partition
            result[key], _ = partition.add(
                ts_ms, row.get("committed_offset"), row.get("lag"), row.get("member_id")
            )
        self._partitions = kept
        return result


def worst_status(statuses: Iterable[str | None]) -> str | None:
    """The worst status (statuses that are None or unknown are ignored); None when none."""
    worst: str | None = None
    for status in statuses:
        rank = SEVERITY.get(status) if status is not None else None
        if rank is not None and (worst is None or rank > SEVERITY[worst]):
            worst = status
    return worst


def group_status(statuses: Iterable[str | None]) -> str:
    """A group's status from its partitions': the worst, where STOP, STALL, REWIND and NEGATIVE
    count as ERR (Burrow's evaluateConsumerStatus). OK when no partition has one."""
    worst = worst_status(statuses)
    if worst is None:
        return "OK"
    return "ERR" if SEVERITY[worst] > SEVERITY["ERR"] else worst
