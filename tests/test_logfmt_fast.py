"""The fast JSON path of `dump-segment --deep-iteration -o json(l)` against the general path, on
batches kafka-python's builders wrote; DumpLogSegments' non-consecutive offsets report; the
magic-0 LZ4 frame with Kafka's broken header checksum."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from kctl.logfmt import batch as B
from kctl.logfmt.fast import records_json


def _batch(
    n: int,
    *,
    codec: int = 0,
    base_offset: int = 0,
    pid: int = -1,
    seq: int = -1,
    headers: bool = False,
    step: int = 1,
    ts_step: int = 7,
    big: bool = False,
) -> bytes:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=codec,
        is_transactional=False,
        producer_id=pid,
        producer_epoch=0 if pid >= 0 else -1,
        base_sequence=seq,
        batch_size=1 << 24,
    )
    for i in range(n):
        builder.append(
            i * step,
            timestamp=1_700_000_000_000 + ts_step * i,
            key=None if i % 3 == 0 else b"key-%d" % i,
            value=None if i % 11 == 5 else b"v" * (9_000 if big and i % 97 == 0 else i % 130),
            headers=[("h", b"x")] if headers else [],
        )
    data = bytearray(builder.build())
    # The broker assigns the base offset on append; the CRC does not cover it.
    data[0:8] = struct.pack(">q", base_offset)
    return bytes(data)


def _general(data: bytes, b: B.Batch) -> list[dict]:
    _, rows = B.decode_records(data, b)
    return [
        {
            "offset": r[B.REC_OFFSET],
            "timestamp": r[B.REC_TIMESTAMP],
            "key_size": r[B.REC_KEY_LEN],
            "value_size": r[B.REC_VALUE_LEN],
            "sequence": r[B.REC_SEQUENCE],
            "header_keys": [k for k, _ in r[B.REC_HEADERS]],
        }
        for r in rows
    ]


@pytest.mark.parametrize("codec", [0, 1])
@pytest.mark.parametrize(("pid", "seq"), [(-1, -1), (7, 2_147_483_600)])
def test_fast_path_gives_the_general_paths_records(codec: int, pid: int, seq: int) -> None:
    # 300 records: offset and timestamp deltas, record lengths and value sizes of one and two
    # varint bytes; sequences that wrap past Integer.MAX_VALUE.
    data = _batch(300, codec=codec, base_offset=1_000_000, pid=pid, seq=seq)
    (b,) = list(B.scan(data))
    done = records_json(B.v2_payload(data, b), b.base_offset, b.first_timestamp, b.count, seq)
    assert done is not None
    text, offsets = done
    assert json.loads("[" + text + "]") == _general(data, b)
    assert list(offsets) == list(range(1_000_000, 1_000_300))


@pytest.mark.parametrize("codec", [0, 4])
def test_fast_path_reads_three_byte_varints_of_big_batches(codec: int) -> None:
    # librdkafka fills 1 MB batches: 8,471 records of 100 bytes have offset deltas past 8,191
    # (three varint bytes); timestamps 60 ms apart pass 8,191 ms; values up to 9 KB give
    # three-byte record lengths.
    n = 10_000
    data = _batch(n, codec=codec, base_offset=5, pid=3, seq=0, ts_step=60, big=True)
    (b,) = list(B.scan(data))
    done = records_json(B.v2_payload(data, b), b.base_offset, b.first_timestamp, b.count, 0)
    assert done is not None
    text, offsets = done
    assert json.loads("[" + text + "]") == _general(data, b)
    assert list(offsets) == list(range(5, 5 + n))
    # A timestamp delta past 2^20 ms needs four bytes: the general path takes the batch.
    far = _batch(2, ts_step=1 << 21)
    (b,) = list(B.scan(far))
    assert records_json(B.v2_payload(far, b), 0, b.first_timestamp, 2, -1) is None


def test_fast_path_declines_headers_and_damage() -> None:
    data = _batch(3, headers=True)
    (b,) = list(B.scan(data))
    assert records_json(B.v2_payload(data, b), 0, b.first_timestamp, 3, -1) is None
    plain = _batch(3)
    (b,) = list(B.scan(plain))
    payload = B.v2_payload(plain, b)
    assert records_json(payload, 0, b.first_timestamp, 4, -1) is None  # count says 4
    assert records_json(payload[:-1], 0, b.first_timestamp, 3, -1) is None


def test_cli_fast_and_general_paths_print_the_same_and_report_gaps(
    offline_kctl, tmp_path: Path
) -> None:
    seg = tmp_path / "00000000000000000000.log"
    # Offsets 0..99, then a batch at 120 whose records skip every other offset (as compaction
    # leaves them), then one with headers (general path).
    seg.write_bytes(
        _batch(100) + _batch(5, base_offset=120, step=2) + _batch(2, base_offset=200, headers=True)
    )
    fast = offline_kctl("dump-segment", str(seg), "--deep-iteration", "-o", "jsonl")
    assert fast.code == 0, fast
    general = offline_kctl(
        "dump-segment", str(seg), "--deep-iteration", "--offsets", "0..", "-o", "jsonl"
    )
    assert general.code == 0, general
    assert fast.stdout == general.stdout
    docs = [json.loads(line) for line in fast.stdout.splitlines()]
    assert [len(d["records"]) for d in docs] == [100, 5, 2]
    assert f"Non-consecutive offsets in {seg}" in fast.stderr
    for pair in ("99 is followed by 120", "120 is followed by 122", "128 is followed by 200"):
        assert f"  {pair}" in fast.stderr
    as_json = offline_kctl("dump-segment", str(seg), "--deep-iteration", "-o", "json")
    assert json.loads(as_json.stdout) == docs
    text = offline_kctl("dump-segment", str(seg), "--deep-iteration")
    assert text.code == 0 and "99 is followed by 120" in text.stderr


def test_magic0_lz4_with_kafkas_broken_header_checksum() -> None:
    import cramjam
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    # kafka-python writes magic-0 LZ4 as Kafka 0.8/0.9 did: header checksum over the magic too.
    builder = LegacyRecordBatchBuilder(magic=0, compression_type=3, batch_size=1 << 20)
    for i in range(3):
        builder.append(i, timestamp=None, key=None, value=b"value-%d" % i * 20)
    data = bytes(builder.build())
    (b,) = list(B.scan(data))
    assert b.magic == 0 and b.codec == "lz4" and b.is_valid
    wrapped = data[26:]  # 12 log overhead, crc, magic, attributes, key -1, value length
    assert wrapped[:4] == b"\x04\x22\x4d\x18"
    with pytest.raises(Exception):  # noqa: B017 - the frame really is off-spec
        cramjam.lz4.decompress(wrapped)
    recs = B.records(data, b)
    assert [r.value for r in recs] == [b"value-%d" % i * 20 for i in range(3)]
    assert [r.offset for r in recs] == [0, 1, 2]


def test_worker_processes_print_what_one_process_prints(tmp_path: Path) -> None:
    """A deep dump spread over worker processes (chunks decoded elsewhere, written here in
    order) gives the same stdout, stderr and exit code as the in-process scan: across chunk
    boundaries, with offset gaps, a compressed batch, a batch the fast path leaves to the general
    one (headers), and a corrupted batch (a problem, then the scan resumes; --strict stops)."""
    import subprocess
    import sys

    from conftest import kctl_environment

    parts, offset = [], 0
    for i in range(44):  # ~150 KB a batch: two 4 MiB chunks and more
        if i == 7:
            parts.append(_batch(40, base_offset=offset, headers=True))
        elif i == 19:
            parts.append(_batch(2000, base_offset=offset, codec=1))
        elif i == 23:
            parts.append(_batch(1000, base_offset=offset, step=2))  # compaction-like gaps
        else:
            parts.append(_batch(2000, base_offset=offset, pid=5, seq=offset))
        (b,) = list(B.scan(parts[-1]))
        offset = b.last_offset + 1 + (3 if i == 30 else 0)  # a gap between batches too
    broken = bytearray(parts[33])
    broken[len(broken) // 2] ^= 0xFF  # its CRC no longer holds
    parts[33] = bytes(broken)
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(b"".join(parts))
    assert seg.stat().st_size > (5 << 20)

    def run(workers: str, *opts: str) -> tuple[int, str, str]:
        env = kctl_environment(KCTL_DUMP_WORKERS=workers)
        proc = subprocess.run(
            [sys.executable, "-m", "kctl", "dump-segment", str(seg), "--deep-iteration", *opts],
            capture_output=True, text=True, env=env, timeout=120,
        )  # fmt: skip
        return proc.returncode, proc.stdout, proc.stderr

    for opts in ((), ("-o", "jsonl"), ("--strict",)):
        one = run("0", *opts)
        assert one[0] == 3 and "is followed by" in one[2], (opts, one[2][-2000:])
        assert run("2", *opts) == one, opts
    assert one[1].count("| offset:") < run("0")[1].count("| offset:")  # --strict stopped early
