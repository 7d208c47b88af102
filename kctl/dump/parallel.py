"""Deep dumps of large segments on every core: worker processes decode chunks of valid magic-2
batches with the fast path while the scan loop (:mod:`kctl.dump.segment`) reads the headers,
checks the CRCs, keeps the order and writes.

Pure apart from the pool: :func:`fast_records` is the fast path over one batch (the scan loop
uses it in-process too), :func:`decode_chunk` runs it over a chunk in a worker, which reads the
chunk from the file itself (nothing but headers goes to the worker, text comes back).

``KCTL_DUMP_WORKERS``: the number of worker processes (0 or 1: decode in-process); unset, none
when kctl's C extension does the fast path (kctl._native: it decodes faster than the pool can
ship text back between processes, 1.4 s in-process against 2.7 s with two workers on a 1 GiB
segment), else one per CPU (at most 4) for segments of at least :data:`MIN_SIZE` bytes on a
machine with two CPUs or more.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from kctl.dump.files import OffsetGaps
from kctl.logfmt import batch as B

if TYPE_CHECKING:
    from collections.abc import Sequence
    from concurrent.futures import Future

MIN_SIZE = 64 << 20
MAX_WORKERS = 4

# One batch's fast-path result as a worker sends it back: (JSON objects or text lines, first
# offset, last offset, offset gaps inside the batch (first ones), how many gaps in all).
ChunkResult = list[tuple[str, int, int, list[tuple[int, int]], int] | None]


def fast_records(
    data: Any, rel: int, h: B.V2Header, text: bool, max_decompressed: int
) -> tuple[str, Sequence[int]] | None:
    """The fast path over the valid magic-2 batch whose header ``h`` lies at ``rel`` in
    ``data``: (its records as JSON objects, or with ``text`` DumpLogSegments' record lines;
    their offsets), or None when the general path must take it (control batches, LogAppendTime
    text, payloads the fast path declines or cannot decompress)."""
    from kctl.logfmt.codecs import decompress
    from kctl.logfmt.fast import records_json, records_text

    attrs = h.attributes
    if attrs & B.CONTROL_BIT:
        return None
    if text and attrs & B.TIMESTAMP_TYPE_BIT:
        return None  # LogAppendTime: records show the batch's time (general path)
    payload = data[rel + B.V2_HEADER : rel + B.LOG_OVERHEAD + h.length]
    codec = attrs & B.COMPRESSION_MASK
    try:
        records = decompress(codec, payload, max_decompressed) if codec else payload
    except ValueError:
        return None
    args = (records, h.base_offset, h.first_timestamp, h.records_count, h.base_sequence)
    return records_text(*args, "CreateTime") if text else records_json(*args)


def decode_chunk(
    path: str, pos: int, size: int, heads: list[tuple[int, B.V2Header]], text: bool, limit: int
) -> ChunkResult:
    """In a worker: :func:`fast_records` over each batch of the chunk ``[pos, pos + size)``."""
    fd = os.open(path, os.O_RDONLY)
    try:
        data = os.pread(fd, size, pos)
    finally:
        os.close(fd)
    out: ChunkResult = []
    for rel, h in heads:
        done = fast_records(data, rel, h, text, limit)
        if done is None:
            out.append(None)
            continue
        recs, offsets = done
        gaps = OffsetGaps()
        gaps.check(offsets)
        out.append((recs, offsets[0], offsets[-1], gaps.pairs, gaps.count))
    return out


def _quiet_worker() -> None:
    import signal

    # Ctrl-C reaches the whole process group: the scan loop stops the pool, workers say nothing.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def worker_count(size: int) -> int:
    """How many worker processes to use for a segment of ``size`` bytes (0: none)."""
    asked = os.environ.get("KCTL_DUMP_WORKERS", "").strip()
    if asked:
        try:
            n = int(asked)
        except ValueError:
            return 0
        return n if n > 1 else 0
    from kctl.runtime import native

    if native.records_json() is not None:
        return 0
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if not cpus or cpus < 2 or size < MIN_SIZE:
        return 0
    return min(cpus, MAX_WORKERS)


class ChunkPool:
    """The worker processes of one segment's scan (forked: they start in milliseconds)."""

    def __init__(self, workers: int) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.workers = workers
        self.ahead = 2 * workers  # chunks in flight before the scan waits for the oldest
        self._pool = ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("fork"), initializer=_quiet_worker
        )

    def submit(
        self,
        path: str,
        pos: int,
        size: int,
        heads: list[tuple[int, B.V2Header]],
        text: bool,
        limit: int,
    ) -> Future[ChunkResult]:
        return self._pool.submit(decode_chunk, path, pos, size, heads, text, limit)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
