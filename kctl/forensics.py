"""The I/O side of log forensics: open files (mmap, so memory stays flat in file size), tell
file types by name, check indexes against their segment, summarise partition directories.
Decoding itself is in :mod:`kctl.logfmt` (pure); nothing here prints.
"""

from __future__ import annotations

import mmap
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kctl.logfmt import batch as B
from kctl.logfmt import indexes as X

_KRAFT_SNAPSHOT = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")


def detect_type(path: Path) -> str | None:
    """The file type by name, as Kafka names its files; None when unknown."""
    name = path.name
    suffix = path.suffix
    if suffix in (".log", ".deleted", ".cleaned", ".swap") and ".log" in name:
        return "log"
    if suffix == ".index":
        return "index"
    if suffix == ".timeindex":
        return "timeindex"
    if suffix == ".txnindex":
        return "txnindex"
    if suffix == ".snapshot":
        return "producer-snapshot"
    if suffix == ".checkpoint":
        return "kraft-snapshot"
    if name == "leader-epoch-checkpoint":
        return "leader-epoch-checkpoint"
    if name.endswith("-offset-checkpoint"):
        return "offset-checkpoint"
    if name == "partition.metadata":
        return "partition-metadata"
    if name == "meta.properties":
        return "meta-properties"
    if name == "quorum-state":
        return "quorum-state"
    return None


def snapshot_id(path: Path) -> tuple[int, int] | None:
    """(end offset, epoch) of a KRaft snapshot file name, None for bootstrap.checkpoint."""
    m = _KRAFT_SNAPSHOT.match(path.name)
    return (int(m.group(1)), int(m.group(2))) if m else None


def base_offset_of(path: Path) -> int:
    """The base offset in a segment-family file name (00000000000000000081.index → 81)."""
    stem = path.name.split(".", 1)[0]
    return int(stem) if stem.isdigit() else 0


@contextmanager
def mapped(path: Path) -> Iterator[Any]:
    """The file's bytes, memory-mapped read-only (bytes for an empty file)."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size == 0:
            yield b""
            return
        mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            if hasattr(mm, "madvise") and hasattr(mmap, "MADV_SEQUENTIAL"):
                mm.madvise(mmap.MADV_SEQUENTIAL)
            yield mm
        finally:
            # A memoryview over the map may still be referenced (a generator not yet
            # collected); then the map is closed when the last reference goes.
            with suppress(BufferError):
                mm.close()


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
            batch, _, reason = B._parse_at(memoryview(seg), entry.position, size)
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


def check_time_index(path: Path, *, verify: bool = True) -> IndexCheck:
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
        for entry in out.entries:
            start = 0
            for oe in offset_index:  # the last index entry at or below the offset
                if oe.offset <= entry.offset and 0 <= oe.position < len(seg):
                    start = oe.position
            found: B.Batch | None = None
            for item in B.scan(seg, start, resync=False):
                if isinstance(item, B.Batch) and item.last_offset >= entry.offset:
                    found = item
                    break
            if found is None:
                out.not_found.append((entry.offset, -1))
            elif found.last_offset != entry.offset:
                out.not_found.append((entry.offset, found.last_offset))
            else:
                try:
                    _, rows = B.decode_records(seg, found)
                    max_ts = max((r[1] for r in rows), default=-1)
                except ValueError as exc:
                    out.problems.append(B.Problem(found.position, "records", str(exc)))
                    max_ts = found.max_timestamp
                if max_ts != entry.timestamp:
                    out.timestamp_mismatches.append((entry.timestamp, max_ts))
                if prev >= entry.timestamp:
                    out.out_of_order.append((entry.timestamp, prev))
            prev = entry.timestamp
    return out


# ---------------------------------------------------------------------------------------------
# Directory summary


@dataclass
class PartitionSummary:
    partition: str
    path: str
    segments: int = 0
    bytes: int = 0
    batches: int = 0
    records: int = 0
    first_offset: int | None = None
    last_offset: int | None = None
    first_timestamp: int | None = None
    last_timestamp: int | None = None
    codecs: set[str] = field(default_factory=set)
    producers: set[int] = field(default_factory=set)
    open_transactions: dict[int, int] = field(default_factory=dict)  # producer → first offset
    problems: list[tuple[str, B.Problem]] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        return {
            "partition": self.partition,
            "segments": self.segments,
            "first_offset": self.first_offset,
            "last_offset": self.last_offset,
            "bytes": self.bytes,
            "batches": self.batches,
            "records": self.records,
            "first_timestamp": self.first_timestamp,
            "last_timestamp": self.last_timestamp,
            "codecs": sorted(self.codecs),
            "producers": len(self.producers),
            "open_transactions": len(self.open_transactions),
            "problems": len(self.problems),
        }

    def document(self) -> dict[str, Any]:
        doc = self.row()
        doc["path"] = self.path
        doc["producer_ids"] = sorted(self.producers)
        doc["open_transaction_first_offsets"] = {
            str(k): v for k, v in sorted(self.open_transactions.items())
        }
        doc["problem_list"] = [
            {"file": f, "position": p.position, "kind": p.kind, "reason": p.reason}
            for f, p in self.problems
        ]
        return doc


def partition_dirs(root: Path) -> list[Path]:
    """``root`` itself when it holds segments, else its sub-directories that do (a log dir)."""
    if any(p.suffix == ".log" for p in root.iterdir()):
        return [root]
    return sorted(p for p in root.iterdir() if p.is_dir() and any(p.glob("*.log")))


def summarise_partition(directory: Path) -> PartitionSummary:
    s = PartitionSummary(partition=directory.name, path=str(directory))
    for seg in sorted(directory.glob("*.log"), key=base_offset_of):
        s.segments += 1
        s.bytes += seg.stat().st_size
        with mapped(seg) as buf:
            for item in B.scan(buf):
                if isinstance(item, B.Problem):
                    s.problems.append((str(seg), item))
                    continue
                _account(s, buf, item, seg)
    return s


def _account(s: PartitionSummary, buf: Any, b: B.Batch, seg: Path) -> None:
    s.batches += 1
    if s.first_offset is None:
        s.first_offset = b.base_offset
    s.last_offset = b.last_offset
    if b.magic == 2:
        s.records += b.count or 0
        if b.first_timestamp is not None and b.first_timestamp >= 0 and s.first_timestamp is None:
            s.first_timestamp = b.first_timestamp
    else:
        s.records += 1 if b.codec_id == 0 else _legacy_count(buf, b, s, seg)
        if s.first_timestamp is None and b.max_timestamp >= 0:
            s.first_timestamp = b.max_timestamp
    if b.max_timestamp >= 0:
        s.last_timestamp = max(s.last_timestamp or b.max_timestamp, b.max_timestamp)
    s.codecs.add(b.codec)
    if b.producer_id is not None and b.producer_id >= 0:
        s.producers.add(b.producer_id)
        if b.is_transactional:
            if b.is_control:
                s.open_transactions.pop(b.producer_id, None)
            else:
                s.open_transactions.setdefault(b.producer_id, b.base_offset)


def _legacy_count(buf: Any, b: B.Batch, s: PartitionSummary, seg: Path) -> int:
    try:
        return len(B.decode_records(buf, b)[1])
    except ValueError as exc:
        s.problems.append((str(seg), B.Problem(b.position, "records", str(exc))))
        return 0


def release(buf: Any, start: int, end: int) -> int:
    """Let the kernel drop the pages of ``buf[start:end]`` from this process (a read-only map of
    the file: they stay in the page cache and come back if touched). Keeps the resident set flat
    in file size while a segment is read front to back. Returns the new released boundary."""
    if not isinstance(buf, mmap.mmap) or not hasattr(mmap, "MADV_DONTNEED"):
        return end
    end -= end % mmap.PAGESIZE
    if end > start:
        with suppress(OSError, ValueError):
            buf.madvise(mmap.MADV_DONTNEED, start, end - start)
    return end


class OffsetGaps:
    """DumpLogSegments' deep-iteration check: a record whose offset is not the previous record's
    plus one. Normal in compacted topics, so reported on stderr as Kafka does, not a problem.
    Keeps the first :attr:`LIMIT` pairs and counts the rest."""

    LIMIT = 100

    def __init__(self) -> None:
        self.last = -1
        self.pairs: list[tuple[int, int]] = []
        self.count = 0

    def check(self, offsets: list[int]) -> None:
        import itertools

        if not offsets:
            return
        first = offsets[0]
        if self.last != -1 and first != self.last + 1:
            self._add(self.last, first)
        n = len(offsets)
        if offsets[-1] - first != n - 1 or offsets != list(range(first, first + n)):
            for a, b in itertools.pairwise(offsets):
                if b != a + 1:
                    self._add(a, b)
        self.last = offsets[-1]

    def _add(self, a: int, b: int) -> None:
        self.count += 1
        if len(self.pairs) < self.LIMIT:
            self.pairs.append((a, b))


class ChunkReader:
    """Reads a file in large chunks into one reused buffer (a read() from the page cache is
    several times cheaper than faulting the same pages into a memory map, and memory stays
    flat). :meth:`read` returns a memoryview valid until the next call."""

    CHUNK = 4 << 20

    def __init__(self, path: Path) -> None:
        self._fh = open(path, "rb", buffering=0)  # noqa: SIM115 (closed by close())
        self._buf = bytearray(self.CHUNK)
        self._view = memoryview(self._buf)

    def read(self, pos: int, n: int) -> memoryview:
        if n > len(self._buf):
            self._buf = bytearray(n)
            self._view = memoryview(self._buf)
        self._fh.seek(pos)
        got = self._fh.readinto(self._view[:n]) or 0
        return self._view[:got]

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> ChunkReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
