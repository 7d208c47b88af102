"""The time of the first record a group has not consumed, read from a Fetch answer's bytes.

Pure: the record bytes of one partition of a Fetch response (magic-2 batches, or magic 0/1
message sets) and the position asked for in, the first DATA record at or after it out. Control
batches (transaction markers) and empty batches (left by compaction) hold no data records and
are passed over; records below the position inside a batch are skipped. The batches are read by
:mod:`kctl.logfmt.batch` (no second parser here).

Most answers need no decompression: where the record wanted is a batch's first (its base offset
is at or after the position, and no record of the batch was compacted away) its timestamp is the
header's baseTimestamp; in a LogAppendTime batch every record's timestamp is the header's
maxTimestamp. Only a position inside a CreateTime batch (or a batch with compaction gaps) has
its records decoded. A Fetch cuts its answer at a byte limit: the batch cut short at the end is
not an error; its header alone often answers, else the caller reads it again whole
(:attr:`Scan.batch_bytes`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kctl.logfmt import batch as B
from kctl.logfmt.wire import DecodeError


@dataclass(frozen=True)
class RecordTime:
    """The first data record at or after a position."""

    offset: int  # the offset of the record found (>= the position asked)
    timestamp_ms: int  # its timestamp
    # "CreateTime" or "LogAppendTime" (from the batch attributes); "NoTimestampType" for a
    # magic-0 message, whose timestamp is -1 (pre-0.10 data: no time is known)
    timestamp_type: str


@dataclass(frozen=True)
class Scan:
    """What one partition's Fetch bytes say about the first data record at or after a position.
    Exactly one of: ``found``; ``problem`` (the bytes are corrupt); ``next_offset`` (no such
    record in these bytes: fetch again from there); nothing at all (no bytes were given)."""

    found: RecordTime | None = None
    # No data record at or after the position in these bytes, which ended cleanly or in a batch
    # cut short: the offset to fetch from next (never below the position).
    next_offset: int | None = None
    # The batch at next_offset was cut short and its records must be decoded: its whole size
    # in bytes (the next Fetch must allow at least that much for the partition); at least the
    # header's 61 bytes when not even they arrived.
    batch_bytes: int | None = None
    problem: str | None = None


def first_record_at(records: bytes, position: int) -> tuple[RecordTime | None, int | None]:
    """The first data record with offset >= ``position`` in ``records`` (a Fetch response's
    record bytes), and, when these bytes held none, the next offset to fetch from (the offset
    after the last batch read, or the start of a batch cut short whose records must be read
    whole); (None, None) for no bytes. A truncated trailing batch is not an error; corrupt bytes
    raise :class:`DecodeError`."""
    scan = scan_first_record(records, position)
    if scan.problem is not None:
        raise DecodeError(scan.problem)
    return scan.found, scan.next_offset


def scan_first_record(records: Any, position: int) -> Scan:
    """:func:`first_record_at` with the details: the size of a cut batch that must be read
    whole, and corrupt bytes as a ``problem`` instead of an exception."""
    view = memoryview(records)
    end = len(view)
    pos = 0
    resume: int | None = None  # the offset after the last complete batch
    while pos < end:
        batch, kind, reason = B.parse_at(view, pos, end)
        if batch is None:
            if kind != "truncated":
                return Scan(problem=f"byte {pos}: {reason}")
            return _cut(view, pos, end, position, resume)
        if not batch.is_valid:
            return Scan(
                problem=f"batch at offset {batch.base_offset}: CRC mismatch (stored "
                f"{batch.crc}, computed {batch.computed_crc})"
            )
        overflow = B.offset_overflow(batch)
        if overflow is not None:
            return Scan(problem=f"batch at byte {pos}: {overflow}")
        pos = batch.next_position
        resume = batch.last_offset + 1
        if batch.last_offset < position or batch.is_control or batch.count == 0:
            continue
        try:
            found = _in_batch(view, batch, position)
        except DecodeError as exc:
            return Scan(problem=str(exc))
        if found is not None:
            return Scan(found=found)
    if resume is None:
        return Scan()
    return Scan(next_offset=max(resume, position))


def _from_header(
    base: int, last: int, count: int, attributes: int, first_ts: int, max_ts: int, position: int
) -> RecordTime | None:
    """The answer a magic-2 batch's header gives without its records, or None. Only a batch
    whose offsets are all there (count = last - base + 1: nothing compacted away) tells from
    its header which record comes first; its baseTimestamp is that record's timestamp unless
    it holds a delete horizon (compaction's) instead."""
    if count != last - base + 1:
        return None
    if attributes & B.TIMESTAMP_TYPE_BIT:
        return RecordTime(max(base, position), max_ts, "LogAppendTime")
    if position <= base and not attributes & B.DELETE_HORIZON_BIT:
        return RecordTime(base, first_ts, "CreateTime")
    return None


def _in_batch(buf: Any, batch: B.Batch, position: int) -> RecordTime | None:
    """The first data record at or after ``position`` in a complete batch holding data records
    up to at least ``position``; None when compaction left none there."""
    if batch.magic == 2:
        assert batch.count is not None and batch.first_timestamp is not None
        quick = _from_header(
            batch.base_offset,
            batch.last_offset,
            batch.count,
            batch.attributes,
            batch.first_timestamp,
            batch.max_timestamp,
            position,
        )
        if quick is not None:
            return quick
    _, rows = B.decode_records(buf, batch)
    log_append = batch.magic == 2 and batch.timestamp_type == "LogAppendTime"
    for row in rows:
        offset = row[B.REC_OFFSET]
        if offset >= position:
            stamp = batch.max_timestamp if log_append else row[B.REC_TIMESTAMP]
            return RecordTime(offset, stamp, batch.timestamp_type)
    return None


def _cut(buf: Any, pos: int, end: int, position: int, resume: int | None) -> Scan:
    """The batch at ``pos`` runs past ``end``: answer from its header when it can, else say
    where to fetch again (and how many bytes that batch needs when its records must be read)."""
    head = B.cut_v2_header(buf, pos, end)
    if head is None:  # not even its header arrived (or a magic 0/1 message): fetch it again
        if resume is not None and resume > position:
            return Scan(next_offset=resume)
        return Scan(next_offset=position, batch_bytes=B.V2_HEADER)
    last = head.base_offset + head.last_offset_delta
    if last < position or head.attributes & B.CONTROL_BIT or head.records_count == 0:
        return Scan(next_offset=max(last + 1, position + 1))
    quick = _from_header(
        head.base_offset,
        last,
        head.records_count,
        head.attributes,
        head.first_timestamp,
        head.max_timestamp,
        position,
    )
    if quick is not None:
        return Scan(found=quick)
    return Scan(
        next_offset=max(head.base_offset, position), batch_bytes=B.LOG_OVERHEAD + head.length
    )
