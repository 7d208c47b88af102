"""kctl.lag.record_time: the first data record at or after a position in Fetch bytes, on batches
built by an independent encoder (kafka-python's record builders) and on real segment files; the
expected answers come from kafka-python's own reader (MemoryRecords), never from our decoder."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

from kctl.lag.record_time import RecordTime, first_record_at, scan_first_record
from kctl.logfmt.wire import DecodeError

DATA = Path(__file__).resolve().parent / "data" / "kafka-3.8-kraft-logs"
T0 = 1_700_000_000_000
VALUE = b"a compressible value " * 10

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4


def _codecs() -> list[int]:
    from kafka.codec import has_lz4, has_snappy, has_zstd

    return [c for c, ok in ((NONE, True), (GZIP, True), (SNAPPY, has_snappy()),
                            (LZ4, has_lz4()), (ZSTD, has_zstd())) if ok]  # fmt: skip


CODECS = _codecs()


def _crc(buf: bytearray) -> bytearray:
    """Recompute a patched batch's CRC-32C (kafka-python's own), over attributes onwards."""
    from kafka.record.util import calc_crc32c

    struct.pack_into(">I", buf, 17, calc_crc32c(memoryview(buf)[21:]))
    return buf


def batch(
    base_offset: int,
    records: list[tuple[int, int]],
    *,
    codec: int = NONE,
    log_append_time: int | None = None,
    control: bool = False,
    transactional: bool = False,
    delete_horizon: int | None = None,
) -> bytes:
    """A magic-2 batch by kafka-python's DefaultRecordBatchBuilder: ``records`` are (offset
    delta, timestamp). The fields only a broker sets (base offset; LogAppendTime, control and
    delete-horizon attributes with their timestamps) are written into the header it built, as
    the broker does, and the checksum recomputed by kafka-python."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    pid = 7 if (transactional or control) else -1
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=codec,
        is_transactional=transactional or control,
        producer_id=pid,
        producer_epoch=0 if pid >= 0 else -1,
        base_sequence=0 if pid >= 0 else -1,
        batch_size=1 << 20,
    )
    if delete_horizon is not None:  # record deltas relative to the horizon, as Kafka writes them
        builder._first_timestamp = delete_horizon
        builder._max_timestamp = -1
    for delta, ts in records:
        if control:
            builder.append(delta, ts, struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 3), [])
        else:
            builder.append(delta, ts, b"k%d" % delta, VALUE, [])
    buf = bytearray(builder.build())
    if codec != NONE:
        assert buf[22] & 0x07 == codec, "the builder did not compress: make VALUE compress"
    struct.pack_into(">q", buf, 0, base_offset)
    attrs = struct.unpack_from(">h", buf, 21)[0]
    if log_append_time is not None:
        attrs |= 0x08
        struct.pack_into(">q", buf, 35, log_append_time)  # maxTimestamp
    if control:
        attrs |= 0x20
    if delete_horizon is not None:
        attrs |= 0x40
    struct.pack_into(">h", buf, 21, attrs)
    return bytes(_crc(buf))


def expected(records: bytes, position: int) -> RecordTime | None:
    """kafka-python's reading: the first data record at or after ``position``."""
    from kafka.record.memory_records import MemoryRecords

    mr = MemoryRecords(records)
    while True:
        b = mr.next_batch()
        if b is None:
            return None
        if getattr(b, "is_control_batch", False):
            continue
        for r in b:
            if r.offset >= position:
                kind = ("CreateTime", "LogAppendTime")[r.timestamp_type] if b.magic else None
                stamp = -1 if r.timestamp is None else r.timestamp  # magic 0: none
                return RecordTime(r.offset, stamp, kind or "NoTimestampType")


def dense(n: int, t0: int = T0, step: int = 1000) -> list[tuple[int, int]]:
    return [(i, t0 + i * step) for i in range(n)]


@pytest.mark.parametrize("codec", CODECS)
def test_every_position_of_a_batch_answers_the_record_there(codec: int) -> None:
    records = batch(100, dense(20), codec=codec) + batch(120, dense(5, T0 + 60_000), codec=codec)
    for position in range(90, 125):
        found, nxt = first_record_at(records, position)
        assert found == expected(records, position), position
        assert found is not None and found.offset == max(position, 100)
        assert found.timestamp_ms == T0 + (found.offset - 100) * 1000 + (
            60_000 - 20_000 if found.offset >= 120 else 0
        )
        assert nxt is None


def test_position_after_every_batch_gives_the_next_offset_to_fetch() -> None:
    records = batch(100, dense(20)) + batch(120, dense(5))
    assert first_record_at(records, 125) == (None, 125)
    assert first_record_at(b"", 5) == (None, None)


@pytest.mark.parametrize("codec", [c for c in CODECS if c != NONE])
def test_a_batch_start_or_a_log_append_time_batch_is_answered_without_decompressing(
    codec: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kctl.logfmt import batch as B

    create = batch(100, dense(20), codec=codec)
    appended = batch(200, dense(20), codec=codec, log_append_time=T0 + 99_999)

    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("decoded the records of a batch whose header answers")

    monkeypatch.setattr(B, "decode_records", refuse)
    assert first_record_at(create, 100)[0] == RecordTime(100, T0, "CreateTime")
    assert first_record_at(create, 7)[0] == RecordTime(100, T0, "CreateTime")
    for position in (200, 205, 219):
        assert first_record_at(appended, position)[0] == RecordTime(
            position, T0 + 99_999, "LogAppendTime"
        )
    with pytest.raises(AssertionError, match="decoded"):
        first_record_at(create, 105)  # mid-batch CreateTime: the records must be read


def test_log_append_time_is_the_batch_time_not_the_producers() -> None:
    records = batch(0, dense(10), log_append_time=T0 + 5)
    for position in range(10):
        found = first_record_at(records, position)[0]
        assert found == expected(records, position) == RecordTime(position, T0 + 5, "LogAppendTime")


def test_control_batches_are_passed_over_to_the_next_data_record() -> None:
    data = batch(10, dense(3), transactional=True)
    marker = batch(13, [(0, T0 + 9000)], control=True)
    after = batch(14, dense(2, T0 + 20_000), transactional=True)
    records = data + marker + after
    assert first_record_at(records, 13)[0] == RecordTime(14, T0 + 20_000, "CreateTime")
    assert first_record_at(records, 13)[0] == expected(records, 13)
    assert first_record_at(records, 12)[0] == RecordTime(12, T0 + 2000, "CreateTime")
    # markers only up to the end of these bytes: fetch on after them
    assert first_record_at(data + marker, 13) == (None, 14)
    two_markers = marker + batch(14, [(0, T0)], control=True)
    assert first_record_at(two_markers, 13) == (None, 15)


@pytest.mark.parametrize("codec", CODECS)
def test_compaction_gaps_give_the_first_record_left(codec: int) -> None:
    # offsets 50, 53, 57 left of 50..59 (last offset delta 9 kept, as Kafka's cleaner keeps it)
    kept = [(3, T0 + 3000), (7, T0 + 7000)]
    records = batch(50, [(0, T0), *kept, (9, T0 + 9000)], codec=codec)
    for position in range(48, 60):
        assert first_record_at(records, position)[0] == expected(records, position), position
    assert first_record_at(records, 51)[0] == RecordTime(53, T0 + 3000, "CreateTime")
    # the batch's first record compacted away: its base offset holds no record
    gap_first = batch(50, kept, codec=codec)
    assert first_record_at(gap_first, 50)[0] == RecordTime(53, T0 + 3000, "CreateTime")
    # its last record compacted away too: nothing at or after 58 in it, fetch on from 58
    assert first_record_at(batch(50, kept, codec=codec), 58) == (None, 58)  # last offset 57
    assert first_record_at(batch(50, [*kept, (9, T0)], codec=codec), 58) == (
        RecordTime(59, T0, "CreateTime"),
        None,
    )


def test_delete_horizon_is_not_taken_for_the_first_records_time() -> None:
    records = batch(0, dense(3), delete_horizon=T0 + 86_400_000)
    assert first_record_at(records, 0)[0] == RecordTime(0, T0, "CreateTime")
    assert first_record_at(records, 0)[0] == expected(records, 0)


@pytest.mark.parametrize("codec", [c for c in CODECS if c != NONE])
def test_a_batch_cut_short_answers_from_its_header_or_asks_for_the_whole_batch(
    codec: int,
) -> None:
    whole = batch(100, dense(200), codec=codec)
    cut = whole[:300]
    # at or before its start: the header's baseTimestamp
    assert first_record_at(cut, 100) == (RecordTime(100, T0, "CreateTime"), None)
    # mid-batch: the batch must be fetched again whole, from the position
    scan = scan_first_record(cut, 150)
    assert scan.found is None and scan.next_offset == 150 and scan.batch_bytes == len(whole)
    # LogAppendTime: the header again
    appended = batch(100, dense(200), codec=codec, log_append_time=T0 + 1)
    assert first_record_at(appended[:100], 150)[0] == RecordTime(150, T0 + 1, "LogAppendTime")


def test_a_trailing_batch_cut_short_is_not_an_error() -> None:
    first = batch(0, [(0, T0)], control=True)
    second = batch(1, dense(50))
    records = first + second
    for cut in range(len(first), len(records)):
        scan = scan_first_record(records[:cut], 0)
        assert scan.problem is None, cut
        if cut - len(first) >= 61:
            assert scan.found == RecordTime(1, T0, "CreateTime"), cut
        else:  # not even the header: fetch again after the marker
            assert scan.found is None and scan.next_offset == 1, cut
    # cut inside the first batch's header: fetch again there, with at least its header's bytes
    scan = scan_first_record(second[:40], 5)
    assert scan.next_offset == 5 and scan.batch_bytes == 61


def test_corrupt_bytes_raise_a_decode_error() -> None:
    records = bytearray(batch(0, dense(5)))
    records[-1] ^= 0xFF
    with pytest.raises(DecodeError, match="CRC"):
        first_record_at(bytes(records), 0)
    assert scan_first_record(bytes(records), 0).problem is not None


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [NONE, GZIP])
def test_legacy_message_sets(magic: int, codec: int) -> None:
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    records = b""
    for first in (0, 4):  # two message sets: offsets 0-3 and 4-7
        b = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
        for i in range(first, first + 4):
            # inside a magic-1 wrapper offsets are relative; magic 0 keeps them absolute
            b.append(i - first if codec and magic else i, T0 + i * 1000, None, VALUE)
        built = bytearray(b.build())
        if codec != NONE:  # the broker gives a compressed wrapper its last inner offset
            struct.pack_into(">q", built, 0, first + 3)
        records += bytes(built)
    for position in range(8):
        found = first_record_at(records, position)[0]
        assert found == expected(records, position), position
        assert found is not None and found.offset == position
        assert found.timestamp_ms == (T0 + position * 1000 if magic else -1)


@pytest.mark.parametrize(
    "segment", ["foo-0/00000000000000000000.log", "__cluster_metadata-0/00000000000000000000.log"]
)
def test_real_segments_every_position_and_cut(segment: str) -> None:
    records = (DATA / segment).read_bytes()
    last = 0
    from kafka.record.memory_records import MemoryRecords

    mr = MemoryRecords(records)
    while (b := mr.next_batch()) is not None:
        last = b.last_offset if hasattr(b, "last_offset") else b.base_offset
    for position in range(last + 2):
        found, nxt = first_record_at(records, position)
        assert found == expected(records, position), position
        if found is None:
            assert nxt is None or nxt >= position
    # cut anywhere: never an error; what it answers is right
    for cut in range(0, min(len(records), 4000), 7):
        scan = scan_first_record(records[:cut], 0)
        assert scan.problem is None, cut
        if scan.found is not None:
            assert scan.found == expected(records, 0), cut
