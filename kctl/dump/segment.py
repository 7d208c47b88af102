"""Reading a ``.log`` segment or a KRaft snapshot: one scan loop over its batches.

Stretches of valid magic-2 batches are read in chunks (:class:`kctl.dump.files.ChunkReader`)
when the output allows: batch level straight to header runs (or :class:`Batch` objects), deep
``-o json/jsonl`` through the fast path (:func:`kctl.logfmt.fast.records_json`). Anything else
(other magics, problems, ``--offsets``, deep text, data) goes through the memory-mapped general
path, :func:`kctl.logfmt.batch.scan`, which reports problems and resyncs; each hands over to
the other where it stops. Record keys and values are decoded here when a decoder is chosen
(``__consumer_offsets``, ``__transaction_state``, ``__cluster_metadata``), and control records
unless record metadata is skipped.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kctl.dump import files
from kctl.dump.model import (
    Batches,
    DumpOptions,
    Found,
    GapReport,
    LogStart,
    Records,
    RecordsJson,
    RecordsText,
    TrailingBytes,
    V2Headers,
)
from kctl.dump.parallel import ChunkPool, ChunkResult, fast_records, worker_count
from kctl.logfmt import batch as B
from kctl.logfmt.batch import (
    REC_KEY_LEN,
    REC_KEY_POS,
    REC_OFFSET,
    REC_VALUE_LEN,
    REC_VALUE_POS,
    RecordRow,
)

if TYPE_CHECKING:
    from concurrent.futures import Future

# (key, value) -> {"key": ..., "value": ...}; raises ValueError (DecodeError) on bad bytes.
PayloadDecoder = Callable[[bytes | None, bytes | None], dict[str, Any]]

_RELEASE_STEP = 64 << 20

# What the scan generators yield, and (for the inner ones) return.
_Items = Generator[Any, None, Any]
# A chunk in the workers' hands: its batches, and the future of their fast-path results.
_Job = tuple[list[B.Batch], "Future[ChunkResult]"]


def payload_decoder(decoder: str | None) -> PayloadDecoder | None:
    """(key, value) -> {"key", "value"} for the chosen record decoder; None for raw bytes."""
    if decoder is None:
        return None
    from kctl.logfmt import internal, metadata

    if decoder == "offsets":
        return internal.decode_offsets_record
    if decoder == "txn":
        return internal.decode_transaction_record
    if decoder == "share":
        return internal.decode_share_state_record
    return lambda key, value: {"key": None, "value": metadata.decode_metadata_record(value)}


def read_log(
    path: Path, kind: str, opts: DumpOptions, payload: PayloadDecoder | None
) -> Generator[Any, None, int]:
    """The items of one segment (``kind`` "log") or KRaft snapshot. Returns how many problems
    it found."""
    scan = _LogScan(path, opts, payload)
    yield LogStart(
        kind,
        files.base_offset_of(path) if kind == "log" else 0,
        files.snapshot_id(path) if kind != "log" else None,
    )
    gaps = scan.gaps
    with files.mapped(path) as buf:
        try:
            yield from scan.run(buf)
        except Exception:
            if gaps is not None:  # what was found before the error, as Kafka reports it
                yield GapReport(path, gaps.pairs, gaps.count)
            raise
        if gaps is not None:
            yield GapReport(path, gaps.pairs, gaps.count)
        if not opts.max_bytes and scan.valid_end < len(buf):
            yield TrailingBytes(path, len(buf) - scan.valid_end)
    return scan.problems


class _LogScan:
    """One segment's scan: options, the offset-gap check, and the problems found so far."""

    def __init__(self, path: Path, opts: DumpOptions, payload: PayloadDecoder | None) -> None:
        self.path = path
        self.file = str(path)
        self.opts = opts
        self.payload = payload
        # --offsets FROM..TO (``hi`` matters only when ``lo`` is not None)
        self.lo: int | None = opts.range[0] if opts.range else None
        self.hi: int = opts.range[1] if opts.range else 0
        # The fast path: record metadata of ordinary magic-2 batches straight to JSON text.
        self.fast = opts.deep and (opts.json_records or opts.text_records) and self.lo is None
        self.gaps = files.OffsetGaps() if opts.deep and self.lo is None else None
        self.pool: ChunkPool | None = None  # worker processes for the fast path, when worth it
        self.problems = 0
        # The end of the batches read from byte 0 without a break (DumpLogSegments' valid bytes).
        self.valid_end = 0
        if opts.deep:
            from kctl.logfmt.fast import records_json, records_text

            self.records_json = records_json
            self.records_text = records_text

    def found(self, p: B.Problem) -> Found:
        self.problems += 1
        return Found(self.path, p)

    def run(self, buf: Any) -> Iterator[Any]:
        """Every batch of the segment in ``buf`` (its memory map)."""
        opts = self.opts
        lo, hi = self.lo, self.hi
        end = min(len(buf), opts.max_bytes) if opts.max_bytes else len(buf)
        mv = memoryview(buf) if len(buf) else buf
        chunked = lo is None and (self.fast or not opts.deep)
        reader = files.ChunkReader(self.path) if chunked and end else None
        if reader is not None and self.fast:
            workers = worker_count(end)
            if workers:
                self.pool = ChunkPool(workers)
        pos = 0
        magic: int | None = None  # of the last batch read, for B.scan's resync
        released = 0
        try:
            while pos < end:
                if reader is not None:
                    start = pos
                    pos, n = yield from self._stretch(reader, mv, pos, end)
                    if start == self.valid_end:
                        self.valid_end = pos
                    if n:
                        magic = 2
                    if pos >= end or (self.problems and opts.strict):
                        return
                for item in B.scan(
                    buf,
                    pos,
                    end,
                    resync=not opts.strict,
                    stop_at_partial=bool(opts.max_bytes),
                    seen_magic=magic,
                ):
                    if isinstance(item, B.Problem):
                        yield self.found(item)
                        if opts.strict:
                            return
                        if item.resumed_at is None:
                            pos = end
                        continue
                    b = item
                    magic = b.magic
                    pos = b.next_position
                    if b.position == self.valid_end:
                        self.valid_end = pos
                    if b.position - released >= _RELEASE_STEP:  # keep memory flat in file size
                        released = files.release(buf, released, b.position)
                    if lo is not None and (b.last_offset < lo or b.base_offset > hi):
                        continue
                    if (yield from self._one_batch(mv, b, self.fast)):
                        return
                    if reader is not None and b.is_valid and b.magic == 2:
                        break  # back to the chunked reader
                else:
                    return
        finally:
            if self.pool is not None:
                self.pool.close()
                self.pool = None
            if reader is not None:
                reader.close()
            if mv is not buf:
                mv.release()

    def _stretch(self, reader: files.ChunkReader, mv: Any, pos: int, end: int) -> _Items:
        """The valid magic-2 batches from ``pos`` on, read in chunks. Returns (the position of
        the first thing it leaves to B.scan, or ``end``; how many batches it gave)."""
        opts = self.opts
        file = self.file
        chunk = reader.CHUNK
        done = 0
        v2_batch = B.v2_batch
        pending: deque[_Job] = deque()  # chunks the workers decode, oldest first
        while pos < end:
            data = reader.read(pos, min(chunk, end - pos))
            heads, stop, cut = B.v2_headers(data, 0, len(data))
            if heads:
                done += len(heads)
                if opts.deep and self.pool is not None:
                    job = self.pool.submit(
                        file, pos, stop, heads, opts.text_records, opts.max_decompressed
                    )
                    pending.append(([v2_batch(pos + rel, h, h.crc) for rel, h in heads], job))
                    if len(pending) > self.pool.ahead:
                        at = yield from self._collect(pending, mv, 1)
                        if at is not None:
                            return at, done
                elif opts.deep:
                    fast = self._fast
                    for rel, h in heads:
                        b = v2_batch(pos + rel, h, h.crc)
                        item = fast(data, rel, h, b)
                        if item is not None:
                            yield item
                        elif (yield from self._one_batch(mv, b, False)):
                            return pos + rel, done
                elif opts.raw_headers:
                    yield V2Headers(pos, heads)
                else:
                    yield Batches(file, [v2_batch(pos + rel, h, h.crc) for rel, h in heads])
            pos += stop
            if not cut or pos + cut > end:
                break  # something B.scan must report (or the end)
            chunk = max(chunk, cut)
        at = yield from self._collect(pending, mv, len(pending))
        return (pos if at is None else at), done

    def _collect(self, pending: deque[_Job], mv: Any, n: int) -> _Items:
        """The items of the ``n`` oldest chunks the workers decode, in order; a batch they
        left goes to the general path here. Returns the position to stop at (--strict and a
        problem: the chunks after it are dropped) or None."""
        gaps = self.gaps
        for _ in range(n):
            batches, job = pending.popleft()
            for b, r in zip(batches, job.result(), strict=True):
                if r is None:
                    if (yield from self._one_batch(mv, b, False)):
                        for _batches, later in pending:
                            later.cancel()
                        pending.clear()
                        return b.position
                    continue
                recs, first, last, pairs, count = r
                if gaps is not None:
                    gaps.merge(first, last, pairs, count)
                yield self._item(b, recs)
        return None

    def _fast(
        self, data: Any, rel: int, h: B.V2Header, b: B.Batch
    ) -> RecordsJson | RecordsText | None:
        """The valid magic-2 batch ``b`` (header ``h`` at ``rel`` in the chunk ``data``) under
        the fast path, or None when it does not apply (the general path reports why)."""
        done = fast_records(data, rel, h, self.opts.text_records, self.opts.max_decompressed)
        if done is None:
            return None
        if self.gaps is not None:
            self.gaps.check(done[1])
        return self._item(b, done[0])

    def _item(self, b: B.Batch, recs: str) -> RecordsJson | RecordsText:
        return RecordsText(b, recs) if self.opts.text_records else RecordsJson(self.file, b, recs)

    def _fast_records(
        self, b: B.Batch, records: Any, base: int, first_ts: int, count: int, base_seq: int
    ) -> RecordsJson | RecordsText | None:
        """The fast path over a batch's (decompressed) records: JSON objects, or (text output)
        DumpLogSegments' lines; None when it does not apply. Offsets go to the gap check."""
        if self.opts.text_records:
            if b.timestamp_type != "CreateTime":
                return None  # LogAppendTime: records show the batch's time (general path)
            done = self.records_text(records, base, first_ts, count, base_seq, "CreateTime")
            if done is None:
                return None
            if self.gaps is not None:
                self.gaps.check(done[1])
            return RecordsText(b, done[0])
        return self._decoded_json(b, self.records_json(records, base, first_ts, count, base_seq))

    def _decoded_json(self, b: B.Batch, done: Any) -> RecordsJson | None:
        """The fast path's result for ``b``, offsets to the gap check."""
        if done is None:
            return None
        recs, offsets = done
        if self.gaps is not None:
            self.gaps.check(offsets)
        return RecordsJson(self.file, b, recs)

    def _one_batch(self, mv: Any, b: B.Batch, fast: bool) -> _Items:
        """One batch (positions in the file ``mv`` maps). Returns True to stop (--strict and a
        problem)."""
        opts = self.opts
        if not opts.deep:
            yield Batches(self.file, (b,))
            return False
        if fast and b.magic == 2 and not b.is_control:
            try:
                item = self._fast_records(
                    b,
                    B.v2_payload(mv, b, opts.max_decompressed),
                    b.base_offset,
                    b.first_timestamp or 0,
                    b.count or 0,
                    -1 if b.base_sequence is None else b.base_sequence,
                )
            except ValueError:
                item = None  # the general path below reports it
            if item is not None:
                yield item
                return False
        try:
            data, rows = B.decode_records(mv, b, opts.max_decompressed)
        except ValueError as exc:
            yield Batches(self.file, (b,))
            yield self.found(B.Problem(b.position, "records", str(exc), b.next_position))
            return opts.strict
        if self.gaps is not None:
            self.gaps.check([r[REC_OFFSET] for r in rows])
        lo, hi = self.lo, self.hi
        if lo is not None:
            rows = [r for r in rows if lo <= r[REC_OFFSET] <= hi]
        decoded = yield from self._decode(b, data, rows)
        yield Records(self.path, b, data, rows, decoded)
        return bool(opts.strict and self.problems)

    def _decode(self, b: B.Batch, data: Any, rows: list[RecordRow]) -> _Items:
        """Control records' meanings, or keys and values through the record decoder: one entry
        per row (None where it failed, after a problem), or None when nothing is decoded."""
        if b.is_control:
            if not self.opts.control:
                return None
            decode: PayloadDecoder = B.control_record
        elif self.payload is not None:
            decode = self.payload
        else:
            return None
        out: list[dict[str, Any] | None] = []
        for r in rows:
            kp, kl = r[REC_KEY_POS], r[REC_KEY_LEN]
            vp, vl = r[REC_VALUE_POS], r[REC_VALUE_LEN]
            key = None if kl < 0 else bytes(data[kp : kp + kl])
            value = None if vl < 0 else bytes(data[vp : vp + vl])
            try:
                out.append(decode(key, value))
            except ValueError as exc:
                out.append(None)
                yield self.found(
                    B.Problem(
                        b.position,
                        "records",
                        f"record at offset {r[REC_OFFSET]}: {exc}",
                        b.next_position,
                    )
                )
        return out
