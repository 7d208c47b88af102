"""Reading ``.index`` and ``.timeindex`` files: their entries, Kafka's sanity check, and the
check of every entry against the segment beside them (DumpLogSegments' verification)."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kctl.dump.files import base_offset_of, mapped
from kctl.dump.model import (
    DumpOptions,
    Found,
    IndexEmpty,
    IndexEntry,
    IndexReport,
    IndexSanityPassed,
    Note,
)
from kctl.logfmt import batch as B
from kctl.logfmt import indexes as X


def read_index(path: Path, kind: str, opts: DumpOptions) -> Generator[Any, None, int]:
    """The items of one index file (``kind`` "index" or "timeindex"). Returns how many
    problems it found."""
    check = (check_offset_index if kind == "index" else check_time_index)(
        path, verify=not opts.sanity_only
    )
    problems = 0
    # DumpLogSegments: an offset index without entries is "empty" (before any check); a time
    # index never is (it is read, or sanity-checked, as it is).
    if kind == "index" and not check.entries:
        yield IndexEmpty(path)
        if opts.sanity_only:
            return problems
    if opts.sanity_only:
        if check.sanity:
            for reason in check.sanity:
                problems += 1
                yield Found(path, B.Problem(0, "index", f"sanity check failed: {reason}"))
        else:
            yield IndexSanityPassed(path)
        return problems
    if not check.log_found:
        yield Note(
            f"kctl: {path}: no segment {path.name.split('.', 1)[0]}.log next to it, not verified"
        )
    if not opts.verify_only:
        for e in check.entries:
            yield IndexEntry(path, e)
    found = list(check.problems)
    for idx_off, log_off in check.mismatches:
        found.append(B.Problem(0, "index", f"Index offset: {idx_off}, log offset: {log_off}"))
    for idx_off, log_off in check.not_found:
        found.append(
            B.Problem(0, "index", f"Indexed offset: {idx_off}, found log offset: {log_off}")
        )
    for idx_ts, log_ts in check.timestamp_mismatches:
        found.append(B.Problem(0, "index", f"Index timestamp: {idx_ts}, log timestamp: {log_ts}"))
    for idx_ts, prev in check.out_of_order:
        found.append(
            B.Problem(
                0, "index", f"Index timestamp: {idx_ts}, Previously indexed timestamp: {prev}"
            )
        )
    for p in found:
        yield Found(path, p)
    for kind, pairs in (
        ("mismatch", check.mismatches),
        ("timestamp", check.timestamp_mismatches),
        ("order", check.out_of_order),
        ("not_found", check.not_found),
    ):
        if pairs:
            yield IndexReport(path, kind, list(pairs))
    return problems + len(found)


# ---------------------------------------------------------------------------------------------
# Index checks against the segment


@dataclass
class IndexCheck:
    """Entries and what does not match the segment, in DumpLogSegments' terms."""

    entries: list[Any] = field(default_factory=list)
    mismatches: list[tuple[int, int]] = field(default_factory=list)  # (index, log)
    not_found: list[tuple[int, int]] = field(default_factory=list)  # time index → offset
    timestamp_mismatches: list[tuple[int, int]] = field(default_factory=list)
    out_of_order: list[tuple[int, int]] = field(default_factory=list)
    problems: list[B.Problem] = field(default_factory=list)
    sanity: list[str] = field(default_factory=list)
    log_found: bool = True


def _segment(path: Path) -> Path:
    return path.with_name(path.name.split(".", 1)[0] + ".log")


def _read_index(
    path: Path, entries: Any, sanity: Any, verify: bool
) -> tuple[IndexCheck, Path | None]:
    """Entries and sanity of one index file, and its segment when it should be checked."""
    base = base_offset_of(path)
    out = IndexCheck()
    with mapped(path) as data:
        out.entries = list(entries(data, base))
        out.sanity = sanity(data, base)
    log = _segment(path)
    if not verify:
        return out, None
    if not log.exists():
        out.log_found = False
        return out, None
    return out, log


def check_offset_index(path: Path, *, verify: bool = True) -> IndexCheck:
    out, log = _read_index(path, X.offset_entries, X.offset_index_sanity, verify)
    if log is None:
        return out
    with mapped(log) as seg:
        size = len(seg)
        for entry in out.entries:
            if entry.position < 0 or entry.position >= size:
                out.problems.append(
                    B.Problem(
                        entry.position,
                        "index",
                        f"index entry for offset {entry.offset} points at byte "
                        f"{entry.position}, beyond the segment ({size} bytes)",
                    )
                )
                continue
            batch, _, reason = B.parse_at(memoryview(seg), entry.position, size)
            if batch is None:
                out.problems.append(
                    B.Problem(
                        entry.position,
                        "index",
                        f"index entry for offset {entry.offset} points at no batch ({reason})",
                    )
                )
                continue
            if batch.last_offset != entry.offset:
                out.mismatches.append((entry.offset, batch.last_offset))
    return out


class _StartFinder:
    """Where to start looking for an offset: the position of the last offset-index entry (in
    file order) at or below it whose position lies in the segment, else 0, as DumpLogSegments
    picks it. O(log n) a query: entries sorted by offset, with the latest file order among
    each prefix (an index in order, as Kafka writes it, needs no more)."""

    def __init__(self, entries: list[X.OffsetEntry], size: int) -> None:
        valid = [(e.offset, n, e.position) for n, e in enumerate(entries) if 0 <= e.position < size]
        valid.sort()
        self.offsets = [o for o, _, _ in valid]
        self.best: list[int] = []  # position of the latest-in-file entry among valid[: i + 1]
        latest, pos = -1, 0
        for _, n, position in valid:
            if n > latest:
                latest, pos = n, position
            self.best.append(pos)

    def __call__(self, offset: int) -> int:
        import bisect

        i = bisect.bisect_right(self.offsets, offset)
        return self.best[i - 1] if i else 0


def _max_timestamp(seg: Any, batch: B.Batch, problems: list[B.Problem]) -> int:
    """The largest record timestamp of ``batch``, as DumpLogSegments takes it from the records.
    A magic-2 batch whose CRC-32C holds carries it in its header (the CRC covers the field and
    the records; the broker sets it from the records as it appends, and for log-append time
    every record's timestamp is that field), so its records are decoded only when the CRC fails
    — decoding all of them made the check cost a deep iteration of the segment."""
    if batch.magic >= 2 and batch.is_valid:
        return batch.max_timestamp
    try:
        _, rows = B.decode_records(seg, batch)
        return max((r[B.REC_TIMESTAMP] for r in rows), default=-1)
    except ValueError as exc:
        problems.append(B.Problem(batch.position, "records", str(exc)))
        return batch.max_timestamp


def check_time_index(path: Path, *, verify: bool = True) -> IndexCheck:
    """Each time-index entry against the batch of its offset. Linear in the files: the start of
    each search comes from the offset index by bisection, and a search that starts where the
    last one did (entries in offset order, as Kafka writes them) goes on from where it ended."""
    out, log = _read_index(path, X.time_entries, X.time_index_sanity, verify)
    if log is None:
        return out
    base = base_offset_of(path)
    offset_index: list[X.OffsetEntry] = []
    idx_path = path.with_name(path.name.split(".", 1)[0] + ".index")
    if idx_path.exists():
        with mapped(idx_path) as idx:
            offset_index = list(X.offset_entries(idx, base))
    prev = -1
    with mapped(log) as seg:
        start_of = _StartFinder(offset_index, len(seg))
        # The last search: (its start, the offset it looked for, the position it stopped at:
        # every batch from start to there ends below that offset).
        last: tuple[int, int, int] | None = None
        for entry in out.entries:
            start = start_of(entry.offset)
            resume = start
            if last is not None and last[0] == start and last[1] <= entry.offset:
                resume = last[2]
            found: B.Batch | None = None
            stopped = len(seg)
            for item in B.scan(seg, resume, resync=False):
                if isinstance(item, B.Batch) and item.last_offset >= entry.offset:
                    found = item
                    stopped = item.position
                    break
            last = (start, entry.offset, stopped)
            if found is None:
                out.not_found.append((entry.offset, -1))
            elif found.last_offset != entry.offset:
                out.not_found.append((entry.offset, found.last_offset))
            else:
                max_ts = _max_timestamp(seg, found, out.problems)
                if max_ts != entry.timestamp:
                    out.timestamp_mismatches.append((entry.timestamp, max_ts))
                if prev >= entry.timestamp:
                    out.out_of_order.append((entry.timestamp, prev))
            prev = entry.timestamp
    return out
