"""The fields of :func:`kctl.logfmt.batch.decode_records`' record tuples, each read by its
``REC_*`` name, against kafka-python's record reader (a decoder we did not write) on bytes we did
not write: the broker's segments in tests/data and batches from kafka-python's builders."""

from __future__ import annotations

import struct
from typing import Any

import pytest
from conftest import FIXTURES
from kafka.record import MemoryRecords
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kctl.logfmt import batch as B

KRAFT = FIXTURES / "kafka-3.8-kraft-logs"


def _by_name(data: Any, row: B.RecordRow, legacy: bool) -> dict[str, Any]:
    kp, kl = row[B.REC_KEY_POS], row[B.REC_KEY_LEN]
    vp, vl = row[B.REC_VALUE_POS], row[B.REC_VALUE_LEN]
    got = {
        "offset": row[B.REC_OFFSET],
        "timestamp": row[B.REC_TIMESTAMP],
        "key": None if kl < 0 else bytes(data[kp : kp + kl]),
        "value": None if vl < 0 else bytes(data[vp : vp + vl]),
        "headers": list(row[B.REC_HEADERS]),
        "sequence": row[B.REC_SEQUENCE],
        "attributes": row[B.REC_ATTRIBUTES],
    }
    assert len(row) == (B.LEGACY_RECORD_FIELDS if legacy else B.V2_RECORD_FIELDS)
    if legacy:
        got["crc"], got["is_valid"] = row[B.REC_CRC], row[B.REC_IS_VALID]
    return got


def _ours(buf: bytes) -> list[dict[str, Any]]:
    out = []
    for b in B.scan(buf):
        if isinstance(b, B.Problem):
            assert b.kind == "crc"  # a damaged legacy message, decoded all the same
            continue
        data, rows = B.decode_records(buf, b)
        out += [_by_name(data, row, b.magic != 2) for row in rows]
    return out


def _kafka_python(buf: bytes) -> list[dict[str, Any]]:
    out = []
    records = MemoryRecords(buf)
    while (batch := records.next_batch()) is not None:
        magic = getattr(batch, "magic", 2)
        for r in batch:
            want = {
                "offset": r.offset,
                "timestamp": r.timestamp if r.timestamp is not None else -1,
                "key": r.key,
                "value": r.value,
                "headers": list(r.headers),
                "sequence": -1,
                "attributes": 0,
            }
            if magic == 2:
                if batch.base_sequence >= 0:
                    delta = r.offset - batch.base_offset
                    want["sequence"] = (batch.base_sequence + delta) & 0x7FFFFFFF
            else:
                want["attributes"] = batch._attributes if not batch.compression_type else 0
                want["crc"], want["is_valid"] = r.checksum, r.validate_crc()
            out.append(want)
    return out


@pytest.mark.parametrize(
    "segment",
    ["foo-0/00000000000000000000.log", "__cluster_metadata-0/00000000000000000000.log"],
)
def test_record_fields_of_broker_written_segments(segment: str) -> None:
    buf = (KRAFT / segment).read_bytes()
    ours = _ours(buf)
    assert ours and ours == _kafka_python(buf)


@pytest.mark.parametrize("codec", [0, 1])
def test_record_fields_of_a_magic2_batch_with_headers_and_sequences(codec: int) -> None:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=codec,
        is_transactional=False,
        producer_id=7,
        producer_epoch=1,
        base_sequence=2_147_483_640,  # the sequence wraps to 0 inside the batch
        batch_size=1 << 20,
    )
    for i in range(20):
        builder.append(
            i,
            timestamp=1_700_000_000_000 + 3 * i,
            key=None if i % 4 == 0 else b"key-%d" % i,
            value=None if i % 7 == 3 else b"v" * i,
            headers=[("trace", b"%d" % i), ("empty", None)] if i % 2 else [],
        )
    buf = bytes(builder.build())
    ours = _ours(buf)
    assert len(ours) == 20 and ours == _kafka_python(buf)
    assert {r["sequence"] for r in ours} >= {2_147_483_647, 0}
    assert ours[1]["headers"] == [("trace", b"1"), ("empty", None)]


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [0, 1])
def test_record_fields_of_magic0_and_magic1_messages(magic: int, codec: int) -> None:
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
    for i in range(5):
        builder.append(
            i,
            timestamp=1_600_000_000_000 + i if magic else None,
            key=None if i == 0 else b"key-%d" % i,
            value=None if i == 4 else b"value-%d" % i,
        )
    buf = bytearray(builder.build())
    if magic == 1 and codec:
        buf[:8] = struct.pack(">q", 4)  # the broker sets the wrapper to its last inner offset
    if not codec:
        buf[14] ^= 0x01  # the first message's stored CRC no longer holds
    ours = _ours(bytes(buf))
    assert len(ours) == 5 and ours == _kafka_python(bytes(buf))
    assert [r["is_valid"] for r in ours] == [bool(codec), True, True, True, True]
