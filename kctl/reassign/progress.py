"""Progress of a reassignment, pure: bytes copied by the adding replicas (their size on disk
against the partition's size, from DescribeLogDirs), the copy rate over a sliding window, the
ETA, and the moves that stalled (no byte copied for a while: an adding replica on a dead
broker, a throttle of 0)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TypedDict

from kctl.reassign.assign import TP

# (topic, partition, broker) -> bytes of that replica on disk (not the "future" log of an
# intra-broker move).
Sizes = dict[tuple[str, int, int], int]


def partition_sizes(replica_sizes: Sizes) -> dict[TP, int]:
    """Each partition's size: the largest of its replicas (the leader's, or a caught-up one)."""
    out: dict[TP, int] = {}
    for (topic, partition, _broker), size in replica_sizes.items():
        tp = (topic, partition)
        out[tp] = max(out.get(tp, 0), size)
    return out


def carry_forward(last: Sizes, now: Sizes, answered: set[int]) -> Sizes:
    """The replica sizes read ``now``, plus the last size seen of each replica on a broker that
    did not answer this time (not in ``answered``: dead, not yet fenced, or fenced and so not
    asked): a broker that dies mid-copy keeps the bytes it had copied, so the progress never
    goes backwards for it."""
    out = dict(now)
    for key, size in last.items():
        if key[2] not in answered and key not in out:
            out[key] = size
    return out


def copied(tp: TP, adding: list[int], replica_sizes: Sizes, size: int) -> tuple[int, int]:
    """(bytes copied so far, bytes to copy) for the adding replicas of ``tp``: each counts its
    size on disk, at most ``size`` (the partition's size when the move started)."""
    topic, partition = tp
    total = size * len(adding)
    done = sum(min(replica_sizes.get((topic, partition, b), 0), size) for b in adding)
    return done, total


def eta_seconds(remaining: int, rate: float | None) -> float | None:
    """Seconds to copy ``remaining`` bytes at ``rate`` bytes/s; None while the rate is unknown
    or 0 (and 0 when nothing remains)."""
    if remaining <= 0:
        return 0.0
    if not rate or rate <= 0:
        return None
    return remaining / rate


@dataclass
class Tracker:
    """Samples of the bytes copied over time: the rate over the last ``window`` seconds, and
    per partition the last time its copied bytes grew (for stalls)."""

    window: float = 30.0
    samples: deque[tuple[float, int]] = field(default_factory=deque)
    last_growth: dict[TP, tuple[float, int]] = field(default_factory=dict)

    def sample(self, now: float, total_copied: int) -> None:
        self.samples.append((now, total_copied))
        while len(self.samples) > 2 and now - self.samples[1][0] >= self.window:
            self.samples.popleft()

    def rate(self) -> float | None:
        """Bytes/s between the oldest and newest sample in the window (None before two)."""
        if len(self.samples) < 2:
            return None
        (t0, b0), (t1, b1) = self.samples[0], self.samples[-1]
        if t1 <= t0:
            return None
        return max(0.0, (b1 - b0) / (t1 - t0))

    def watch(self, now: float, tp: TP, copied_bytes: int) -> None:
        """Note ``tp``'s bytes copied at ``now`` (its stall clock restarts when they grow)."""
        seen = self.last_growth.get(tp)
        if seen is None or copied_bytes > seen[1]:
            self.last_growth[tp] = (now, copied_bytes)

    def forget(self, tp: TP) -> None:
        self.last_growth.pop(tp, None)

    def stalled(self, now: float, timeout: float, among: list[TP]) -> list[TP]:
        """The partitions of ``among`` whose copied bytes have not grown for ``timeout`` s."""
        return sorted(
            tp
            for tp in among
            if tp in self.last_growth and now - self.last_growth[tp][0] >= timeout
        )


class ProgressLine(TypedDict):
    """One ``-o jsonl`` progress line of ``reassign execute --wait`` (docs/partitions.md)."""

    phase: str  # replicas | log-dirs
    wave: int
    waves: int
    partitions_done: int
    partitions_total: int
    bytes_copied: int
    bytes_total: int
    rate_bytes_per_s: float | None
    eta_seconds: float | None
    elapsed_seconds: float
    in_flight: list[str]  # topic-partition
    stuck: list[str]


def progress_line(
    *,
    wave: int,
    waves: int,
    partitions_done: int,
    partitions_total: int,
    bytes_copied: int,
    bytes_total: int,
    rate: float | None,
    in_flight: list[TP],
    stuck: list[TP],
    elapsed: float,
    phase: str = "replicas",
) -> ProgressLine:
    """One ``-o jsonl`` progress line of ``reassign execute --wait``: ``phase`` ``replicas``
    (moves between brokers, in waves) or ``log-dirs`` (the plan's log_dirs entries, counted in
    replicas rather than partitions, as one last wave)."""
    eta = eta_seconds(bytes_total - bytes_copied, rate)
    if partitions_done >= partitions_total:
        eta = 0.0
    return {
        "phase": phase,
        "wave": wave,
        "waves": waves,
        "partitions_done": partitions_done,
        "partitions_total": partitions_total,
        "bytes_copied": bytes_copied,
        "bytes_total": bytes_total,
        "rate_bytes_per_s": None if rate is None else round(rate, 1),
        "eta_seconds": None if eta is None else round(eta, 1),
        "elapsed_seconds": round(elapsed, 1),
        "in_flight": [f"{t}-{p}" for t, p in in_flight],
        "stuck": [f"{t}-{p}" for t, p in stuck],
    }
