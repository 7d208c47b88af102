"""Benchmark kctl dump-segment against `cat FILE > /dev/null` and kafka-python's record reader.

Not run in CI. Generates segments of 100-byte records in /tmp (uncompressed and zstd), times whole
commands (median of --runs), prints ratios, deletes the files.

    .venv/bin/python benchmarks/dump.py --size-mb 1024
"""

from __future__ import annotations

import argparse
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def make_segment(path: Path, size_mb: int, codec: int, per_batch: int = 160) -> int:
    """A segment of v2 batches (this generator is for benchmarks only; decoder tests never use
    it). Returns the number of records."""
    import random

    import cramjam
    import crc32c

    from kctl.logfmt.wire import write_varint as _varint

    target = size_mb << 20
    rnd = random.Random(42)
    recs = []
    for i in range(per_batch):
        # Random hex text: zstd packs it about 2:1, like ordinary payloads (a run of one byte
        # would pack ~30:1 and make the "1 GiB" zstd file hold a quarter of a billion records).
        value = rnd.randbytes(50).hex().encode()
        body = b"\x00" + _varint(i) + _varint(i) + _varint(-1) + _varint(100) + value + b"\x00"
        recs.append(_varint(len(body)) + body)
    payload = b"".join(recs)
    if codec == 4:
        payload = bytes(cramjam.zstd.compress(payload))
    written = offset = 0
    ts = 1_700_000_000_000
    with open(path, "wb") as fh:
        while written < target:
            tail = (
                struct.pack(
                    ">hiqqqhii", codec, per_batch - 1, ts, ts + per_batch - 1, -1, -1, -1, per_batch
                )
                + payload
            )
            crc = crc32c.crc32c(tail)
            head = struct.pack(">qiib", offset, 4 + 1 + 4 + len(tail), 0, 2) + struct.pack(
                ">I", crc
            )
            fh.write(head + tail)
            written += len(head) + len(tail)
            offset += per_batch
    return offset


def timed(cmd: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, shell=True, check=False)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def kafka_python_reader(path: str) -> int:
    from kafka.record import MemoryRecords

    n = 0
    with open(path, "rb") as fh:
        records = MemoryRecords(fh.read())
    while True:
        batch = records.next_batch()
        if batch is None:
            return n
        for _ in batch:
            n += 1


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    py = sys.executable
    tmp = Path(tempfile.mkdtemp(prefix="kctl-bench-"))
    try:
        for name, codec in (("uncompressed", 0), ("zstd", 4)):
            seg = tmp / f"{name}.log"
            n = make_segment(seg, args.size_mb, codec)
            size = seg.stat().st_size
            subprocess.run(f"cat {seg} > /dev/null", shell=True)  # warm the page cache
            cat = timed(f"cat {seg} > /dev/null", args.runs)
            shallow = timed(f"{py} -m kctl dump-segment {seg} > /dev/null", args.runs)
            deep = timed(
                f"{py} -m kctl dump-segment {seg} --deep-iteration -o jsonl > /dev/null", args.runs
            )
            # kafka-python reads zstd only with the zstandard package (not a kctl dependency;
            # `pip install zstandard` into the venv for this comparison).
            kp = (
                float("nan")
                if codec and not _has("zstandard")
                else timed(
                    f'{py} -c \'import sys; sys.path.insert(0, "{Path(__file__).parent}");'
                    f' import dump; dump.kafka_python_reader("{seg}")\'',
                    args.runs,
                )
            )
            print(
                f"{name}: {size / 2**20:.0f} MiB, {n} records\n"
                f"  cat                       {cat:8.2f} s\n"
                f"  batch-level dump          {shallow:8.2f} s  ({shallow / cat:.1f}x cat)\n"
                f"  --deep-iteration -o jsonl {deep:8.2f} s  ({n / deep:,.0f} records/s)\n"
                f"  kafka-python reader       {kp:8.2f} s  ({n / kp:,.0f} records/s)"
            )
    finally:
        for f in tmp.iterdir():
            f.unlink()
        os.rmdir(tmp)


if __name__ == "__main__":
    main()
