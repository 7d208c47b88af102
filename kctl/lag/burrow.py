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


@dataclass(frozen=True, slots=True)
class _Point:
    """An entry as the window keeps it (all None but ``ts_ms`` for a sample without a commit)."""

    ts_ms: int
    offset: int | None  # the committed offset
    lag: int | None  # the lag, negative clamped to 0 (Burrow's)
    negative: bool  # the sample's lag was negative
    commit_ts: int | None  # the derived commit time
    d_offset: int | None  # change of offset / lag from the sample before (None without one)
    d_lag: int | None


class _PartitionWindow:
    """The sliding window of one partition: the last ``window`` points, plus the time the
    committed offset last changed. Each ``push`` is O(window)."""

    __slots__ = ("_last_change_ts", "_points", "_previous", "_window")

    def __init__(self, window: int) -> None:
        if window < 1:
            raise ValueError("the window must hold at least one sample")
        self._window = window
        self._points: deque[_Point] = deque(maxlen=window)
        self._last_change_ts: int | None = None
        self._previous: _Point | None = None

    def push(self, entry: Entry) -> tuple[str | None, float]:
        """Add the next sample (in time order); its status and the window's completeness."""
        point = self._point(entry)
        self._points.append(point)
        self._previous = point
        return self._status(point), self._complete()

    def _point(self, entry: Entry) -> _Point:
        previous = self._previous
        if entry.committed_offset is None or entry.committed_offset < 0:
            return _Point(entry.ts_ms, None, None, False, None, None, None)
        offset = entry.committed_offset
        raw_lag = entry.lag or 0
        lag = max(raw_lag, 0)
        prev_offset = previous.offset if previous is not None else None
        prev_lag = previous.lag if previous is not None else None
        if prev_offset is None or offset != prev_offset:
            self._last_change_ts = entry.ts_ms
        commit_ts = entry.ts_ms if entry.member_id is not None else self._last_change_ts
        return _Point(
            ts_ms=entry.ts_ms,
            offset=offset,
            lag=lag,
            negative=raw_lag < 0,
            commit_ts=commit_ts,
            d_offset=None if prev_offset is None else offset - prev_offset,
            d_lag=None if prev_lag is None else lag - prev_lag,
        )

    def _complete(self) -> float:
        entries = sum(1 for p in self._points if p.offset is not None)
        return min(entries / float(self._window), 1.0)

    def _status(self, now: _Point) -> str | None:
        if now.offset is None:
            return None
        if now.negative:
            return "NEGATIVE"
        points = self._points
        if now.lag == 0 or any(p.lag == 0 and not p.negative for p in points):
            return "OK"
        # The pairs (i-1, i) with both in the window: the d_* of all points but the window's
        # first once it is full (its d_* pairs it with a sample that has left).
        pairs = list(points)[1:] if len(points) == self._window else list(points)
        d_offsets = [p.d_offset for p in pairs if p.d_offset is not None]
        d_lags = [p.d_lag for p in pairs if p.d_lag is not None]
        if d_offsets and min(d_offsets) < 0:
            return "REWIND"
        last_commit = now.commit_ts
        first_commit = next(p.commit_ts for p in points if p.commit_ts is not None)
        assert last_commit is not None  # a sample with a commit always has a commit time
        if now.ts_ms - last_commit > last_commit - first_commit:
            return "STOP"
        # Without pairs Burrow's loops are vacuously true (stalled, not decreasing).
        if not d_offsets or max(abs(d) for d in d_offsets) == 0:
            return "STALL"
        if not d_lags or min(d_lags) >= 0:
            return "WARN"
        return "OK"


def statuses(
    entries: Sequence[Entry], window: int = DEFAULT_WINDOW
) -> list[tuple[str | None, float]]:
    """For the time-ordered samples of ONE partition: the status (OK/WARN/STOP/STALL/REWIND/
    NEGATIVE, None for a sample without a commit) of each sample over the window of the last
    ``window`` samples ending there, and ``window_complete`` (samples with a commit in that
    window / ``window``)."""
    partition = _PartitionWindow(window)
    return [partition.push(entry) for entry in entries]


class StatusWindows:
    """In-memory sliding windows for a long-running process (the exporter): per (group, topic,
    partition) the last ``window`` entries plus the time its committed offset last changed."""

    def __init__(self, window: int = DEFAULT_WINDOW) -> None:
        if window < 1:
            raise ValueError("the window must hold at least one sample")
        self._window = window
        self._partitions: dict[tuple[str, str, int], _PartitionWindow] = {}

    def __len__(self) -> int:
        """The partitions held."""
        return len(self._partitions)

    def observe(
        self, rows: Iterable[Mapping[str, Any]], ts_ms: int
    ) -> dict[tuple[str, str, int], str | None]:
        """Add one lag pass (lag rows: group, topic, partition, committed_offset, lag,
        member_id) sampled at ``ts_ms``; the status of every partition in it. Partitions absent
        from the pass are forgotten (memory stays bounded); one that comes back starts a new
        window."""
        kept: dict[tuple[str, str, int], _PartitionWindow] = {}
        result: dict[tuple[str, str, int], str | None] = {}
        for row in rows:
            key = (row["group"], row["topic"], int(row["partition"]))
            partition = kept.get(key)
            if partition is None:
                partition = self._partitions.get(key) or _PartitionWindow(self._window)
                kept[key] = partition
            committed = row.get("committed_offset")
            entry = Entry(
                ts_ms=ts_ms,
                committed_offset=-1 if committed is None else int(committed),
                lag=row.get("lag"),
                member_id=row.get("member_id"),
            )
            result[key], _ = partition.push(entry)
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
