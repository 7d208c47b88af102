"""The I/O side of log forensics: open files (mmap, so memory stays flat in file size; or in
large chunks into one buffer), tell file types by name, and the offset-gap check of a deep
iteration. Decoding itself is in :mod:`kctl.logfmt` (pure); nothing here prints.
"""

from __future__ import annotations

import mmap
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

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


# The kinds read whole as text (kctl.dump.small): capped (kctl.inputs.KAFKA_TEXT).
TEXT_KINDS = frozenset(
    {"leader-epoch-checkpoint", "offset-checkpoint", "partition-metadata", "meta-properties",
     "quorum-state"}
)  # fmt: skip


def check_input(path: Path, kind: str | None) -> None:
    """A file named to dump-segment must be a regular file (a directory is walked as a log
    dir by the caller): a FIFO or a device such as /dev/zero is refused before it is opened.
    Segments, indexes and snapshots have no size cap (mapped or read in chunks, never whole);
    the small text files of ``TEXT_KINDS`` are read whole, so their cap is checked here too,
    before anything is written for the file."""
    from kctl.inputs import KAFKA_TEXT, require_regular, too_large

    st = require_regular(path, "")
    if kind in TEXT_KINDS and KAFKA_TEXT.limit is not None and st.st_size > KAFKA_TEXT.limit:
        raise too_large("", path, KAFKA_TEXT)


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

    def check(self, offsets: Sequence[int]) -> None:
        """``offsets``: one batch's, in order (a ``range`` when known consecutive)."""
        import itertools

        if not offsets:
            return
        first = offsets[0]
        if self.last != -1 and first != self.last + 1:
            self._add(self.last, first)
        n = len(offsets)
        if isinstance(offsets, range) and offsets.step == 1:
            pass  # consecutive by construction
        elif offsets[-1] - first != n - 1 or offsets != list(range(first, first + n)):
            for a, b in itertools.pairwise(offsets):
                if b != a + 1:
                    self._add(a, b)
        self.last = offsets[-1]

    def merge(self, first: int, last: int, pairs: list[tuple[int, int]], count: int) -> None:
        """:meth:`check` of a list of offsets another process checked: its first and last
        offset, its first gaps and how many in all."""
        if self.last != -1 and first != self.last + 1:
            self._add(self.last, first)
        for a, b in pairs:
            self._add(a, b)
        self.count += count - len(pairs)
        self.last = last

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
