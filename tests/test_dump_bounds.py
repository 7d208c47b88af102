"""dump-segment stays within bounds on hostile input: every one a reported problem (exit 3,
the rest of the output kept), never an unexpected exception, never unbounded memory or time."""

from __future__ import annotations

import json
import resource
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from conftest import FIXTURES, kctl_environment

from kctl.logfmt import batch as B
from kctl.logfmt.codecs import CodecError, decompress

FOO = FIXTURES / "kafka-3.8-kraft-logs" / "foo-0" / "00000000000000000000.log"

# A batch whose base offset is Long.MIN_VALUE and whose last offset delta is -1.
OVERFLOW = bytes.fromhex(
    "8000000000000000000000440000000002591ef58f0000ffffffff00000191b23a23db00000191b23a25f8"
    "0000000000000000000000000000000000021000000001046d31001200ba080201046d3200"
)
# A snappy batch of 5 payload bytes whose length prefix says 4 GiB.
SNAPPY_4G = bytes.fromhex(
    "00000000000000000000003600000000020680cb9900020000000000000000000000000000000000000000"
    "ffffffffffffffffffffffffffff00000001ffffffff0f"
)


def _run_limited(
    args: list[str], limit: int, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "kctl", *args],
        capture_output=True,
        text=True,
        env=kctl_environment(),
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        preexec_fn=cap,
    )


@pytest.mark.parametrize("fmt", ["json", "yaml", "jsonl", "table"])
def test_offsets_past_the_64_bit_range_are_a_problem(offline_kctl, tmp_path: Path, fmt) -> None:
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(OVERFLOW + FOO.read_bytes())
    r = offline_kctl("-o", fmt, "dump-segment", "--deep-iteration", str(seg))
    assert r.code == 3, r
    assert "unexpected" not in r.stderr
    assert "leave the 64-bit range" in r.stderr
    if fmt == "json":
        doc = json.loads(r.stdout)
        text = json.dumps(doc)
        assert "9223372036854775807" in text  # the wrapped last offset, as Java wraps it
        assert '"m1"' in text or "records" in text  # the good batches after it are kept


def test_record_offsets_past_the_range_are_a_problem() -> None:
    batch = next(b for b in B.scan(OVERFLOW) if isinstance(b, B.Batch))
    # records at base-1 (offset delta -1) would leave the range
    batch.base_offset = -(1 << 63)
    from kctl.logfmt.wire import write_varint as v

    body = b"\x00" + v(0) + v(-1) + v(-1) + v(0) + b"\x00"
    rows = v(len(body)) + body
    with pytest.raises(ValueError, match="64-bit range"):
        B._v2_records(rows, -(1 << 63), 0, 1, -1, "here")


def test_deeply_nested_quorum_state_is_a_problem(offline_kctl, tmp_path: Path) -> None:
    qs = tmp_path / "quorum-state"
    qs.write_text("[" * 1000)
    r = offline_kctl("dump-segment", str(qs))
    assert r.code == 3, r
    assert "unexpected" not in r.stderr and "nests deeper" in r.stderr
    qs.write_text('{"leaderId": 99999999999999999999999}')
    r = offline_kctl("-o", "json", "dump-segment", str(qs))
    assert r.code == 3 and "unexpected" not in r.stderr, r


def test_checkpoint_numbers_out_of_range_are_a_problem(offline_kctl, tmp_path: Path) -> None:
    cp = tmp_path / "leader-epoch-checkpoint"
    cp.write_text("0\n1\n1 99999999999999999999999\n")
    r = offline_kctl("-o", "json", "dump-segment", str(cp))
    assert r.code == 3 and "unexpected" not in r.stderr, r


def test_snappy_length_prefix_of_4_gib_under_a_memory_limit(tmp_path: Path) -> None:
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(SNAPPY_4G + FOO.read_bytes())
    r = _run_limited(["dump-segment", "--deep-iteration", str(seg)], 1_500_000_000)
    assert r.returncode == 3, (r.returncode, r.stderr[-2000:])
    assert "decompresses to more than" in r.stderr
    assert "payload: m1" not in r.stdout  # no --print-data-log; but the next batches are listed
    assert r.stdout.count("baseOffset:") >= 2


def _zstd_bomb_segment() -> bytes:
    import zstandard

    frame = zstandard.ZstdCompressor(write_content_size=False).compress(bytes(256 << 20))
    payload = frame + frame
    tail = struct.pack(">hiqqqhii", 4, 0, 0, 0, -1, -1, -1, 1) + payload
    import crc32c

    head = struct.pack(">qiib", 0, 9 + len(tail), 0, 2) + struct.pack(">I", crc32c.crc32c(tail))
    return head + tail


def test_zstd_bomb_under_a_memory_limit(tmp_path: Path) -> None:
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(_zstd_bomb_segment() + FOO.read_bytes())
    assert seg.stat().st_size < 32 << 10
    for fmt in ("plain", "jsonl"):
        r = _run_limited(["-o", fmt, "dump-segment", "--deep-iteration", str(seg)], 1_500_000_000)
        assert r.returncode == 3, (r.returncode, r.stderr[-2000:])
        assert "decompresses to more than 268435456 bytes" in r.stderr
    r = _run_limited(
        ["dump-segment", "--deep-iteration", "--max-decompressed-bytes", "1000000", str(seg)],
        1_500_000_000,
    )
    assert r.returncode == 3 and "more than 1000000 bytes" in r.stderr, r.stderr


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_every_codec_is_bounded(codec: int) -> None:
    import gzip

    import cramjam
    import lz4.frame
    import zstandard

    raw = bytes(1 << 20)
    packed = {
        1: gzip.compress(raw),
        2: bytes(cramjam.snappy.compress_raw(raw)),
        3: lz4.frame.compress(raw),
        4: zstandard.ZstdCompressor().compress(raw),
    }[codec]
    assert decompress(codec, packed) == raw
    with pytest.raises(CodecError, match="more than 4096 bytes"):
        decompress(codec, packed, 4096)


def test_resync_checks_a_bounded_number_of_candidates() -> None:
    data = bytearray(bytes([1, 0, 3]) * (1 << 17))
    data[16] = 3
    stats: dict[str, int] = {}
    found, _ = B._resync(memoryview(bytes(data)), bytes(data), 1, len(data), (2, 1, 0), stats)
    assert found is None
    assert stats["candidates"] <= len(data)
    assert stats["checksummed_bytes"] <= B.RESYNC_BUDGET_RATIO * len(data) + B.RESYNC_BUDGET_BASE

    # Plausible magic-2 headers every 64 bytes whose lengths all reach the end: without a
    # budget each would be checksummed over the rest of the data (quadratic).
    n = 1 << 20
    adv = bytearray(n)
    adv[16] = 3
    for pos in range(64, n - 61, 64):
        adv[pos : pos + 61] = struct.pack(
            ">qiibIhiqqqhii", 0, n - pos - 12, 0, 2, 0, 1, 0, 0, 0, -1, -1, -1, 1
        )
    stats = {}
    found, skipped = B._resync(memoryview(bytes(adv)), bytes(adv), 1, n, (2, 1, 0), stats)
    assert found is None and skipped > 0
    assert stats["checksummed_bytes"] <= B.RESYNC_BUDGET_RATIO * n + B.RESYNC_BUDGET_BASE


def test_resync_still_finds_a_valid_batch_after_garbage() -> None:
    good = FOO.read_bytes()
    data = bytearray(bytes([1, 0, 3]) * 20000) + good
    data[16] = 3
    items = list(B.scan(bytes(data)))
    assert isinstance(items[0], B.Problem) and items[0].resumed_at == 60000
    assert sum(isinstance(i, B.Batch) for i in items) >= 2


def test_one_mib_of_broken_headers_ends_quickly(offline_kctl, tmp_path: Path) -> None:
    data = bytearray(bytes([1, 0, 3]) * 349526)
    data[16] = 3
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(bytes(data))
    r = offline_kctl("dump-segment", str(seg), timeout=30)
    assert r.code == 3 and "no valid batch after it" in r.stderr, r


def _time_index_files(d: Path, n: int, with_index: bool) -> Path:
    """A segment of n single-record batches written by kafka-python's record builder, with its
    .index and .timeindex entries for every batch."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    seg, idx, tix = bytearray(), bytearray(), bytearray()
    ts0 = 1_700_000_000_000
    for i in range(n):
        b = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 20)
        b.append(0, ts0 + i, None, b"abc", [])
        raw = bytearray(b.build())
        raw[0:8] = struct.pack(">q", i)  # base offset: not covered by the CRC
        idx += struct.pack(">ii", i, len(seg))
        tix += struct.pack(">qi", ts0 + i, i)
        seg += raw
    (d / "00000000000000000000.log").write_bytes(seg)
    if with_index:
        (d / "00000000000000000000.index").write_bytes(idx)
    (d / "00000000000000000000.timeindex").write_bytes(tix)
    return d / "00000000000000000000.timeindex"


@pytest.mark.parametrize("with_index", [True, False])
def test_time_index_check_is_linear(tmp_path: Path, with_index: bool) -> None:
    """32k entries: 25.6 s when each entry walked the whole offset index; now well under the
    subprocess timeout."""
    path = _time_index_files(tmp_path, 32000, with_index)
    env = kctl_environment()
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "kctl",
            "-o",
            "jsonl",
            "dump-segment",
            "--verify-index-only",
            str(path),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert r.returncode == 0, r.stderr


def test_time_index_start_follows_file_order_for_unsorted_indexes() -> None:
    from kctl.dump.indexes import _StartFinder
    from kctl.logfmt.indexes import OffsetEntry

    entries = [
        OffsetEntry(10, 100),
        OffsetEntry(5, 50),
        OffsetEntry(20, 999_999),
        OffsetEntry(7, 70),
    ]
    find = _StartFinder(entries, 1000)
    # the last entry in file order at or below the offset, with a position in the segment
    for offset in (0, 5, 6, 7, 9, 10, 25):
        expect = 0
        for e in entries:
            if e.offset <= offset and 0 <= e.position < 1000:
                expect = e.position
        assert find(offset) == expect, offset


def test_crc_of_legacy_candidates_is_skipped_when_key_and_value_do_not_fill_them() -> None:
    # a magic-1 message whose key/value lengths do not add up is not checksummed
    body = struct.pack(">bbq", 1, 0, 0) + struct.pack(">i", 5) + b"ab" + struct.pack(">i", -1)
    msg = struct.pack(">qiI", 0, 4 + len(body), zlib.crc32(body)) + body
    assert not B._plausible(msg, 0, len(msg), 1)
