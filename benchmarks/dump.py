"""Benchmark kctl dump-segment against `cat FILE > /dev/null` and kafka-python's record reader.

Not run in CI. Generates segments of 100-byte records in /tmp (uncompressed, with its .index and
.timeindex as a broker writes them, and zstd), times whole commands (median of --runs) beside
kafka-dump-log.sh (Kafka's DumpLogSegments from the jars kctl caches) and `cat`, prints ratios,
deletes the files. ``--segment`` times a segment a broker wrote instead.

    .venv/bin/python benchmarks/dump.py --size-mb 1024
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bytecode import compile_kctl


def make_segment(
    path: Path, size_mb: int, codec: int, per_batch: int = 160, indexes: bool = False
) -> int:
    """A segment of v2 batches (this generator is for benchmarks only; decoder tests never use
    it). Returns the number of records. ``indexes``: also the ``.index`` and ``.timeindex``
    beside it, as a broker writes them with the default index.interval.bytes (4096): an entry
    for the first batch appended after each 4096 bytes (the batch's last offset, its position;
    its max timestamp and last offset)."""
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
    offset_index, time_index = bytearray(), bytearray()
    since_entry = 0
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
            size = len(head) + len(tail)
            if since_entry > 4096:
                last = offset + per_batch - 1
                offset_index += struct.pack(">ii", last, written)
                time_index += struct.pack(">qi", ts + per_batch - 1, last)
                since_entry = 0
            since_entry += size
            written += size
            offset += per_batch
            ts += per_batch  # one record per millisecond, as the indexes expect time to move
    if indexes:
        path.with_suffix(".index").write_bytes(bytes(offset_index))
        path.with_suffix(".timeindex").write_bytes(bytes(time_index))
    return offset


def timed(cmd: str, runs: int, limit: float | None = None) -> float:
    """The median wall seconds of ``runs`` runs of ``cmd``; inf once a run passes ``limit``
    seconds (it is killed, and no more runs are made)."""
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, shell=True, start_new_session=True)
        try:
            proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the shell and the JVM it started
            proc.wait()
            return float("inf")
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


def kafka_dump_log(libs: Path | None) -> str | None:
    """kafka-dump-log.sh as a command prefix, from Kafka's jars (kctl's cache by default)."""
    if libs is None:
        found = sorted(Path.home().glob(".cache/kctl/kafka/*/libs"))
        libs = found[-1] if found else None
    if libs is None or not shutil.which("java"):
        return None
    return f"java -Xmx1g -cp '{libs}/*' org.apache.kafka.tools.DumpLogSegments --files"


def timed_pair(
    ours: str, theirs: str | None, runs: int, limit: float | None = None
) -> tuple[float, float | None]:
    """Medians of ``runs`` interleaved runs of ``ours`` and ``theirs`` (kctl first, then the
    reference, in turns, so both see the same machine); the reference is stopped after
    ``limit`` seconds (inf: no more runs of it are made)."""
    mine: list[float] = []
    ref: list[float] = []
    for _ in range(runs):
        mine.append(timed(ours, 1))
        if theirs is not None and not (ref and ref[-1] == float("inf")):
            ref.append(timed(theirs, 1, limit))
    if theirs is None:
        return statistics.median(mine), None
    inf = float("inf")
    return statistics.median(mine), (inf if inf in ref else statistics.median(ref))


def compare(
    label: str,
    ours: str,
    theirs: str | None,
    runs: int,
    unit: int,
    what: str,
    limit: float | None = None,
) -> None:
    """One row: kctl's median time and, when the reference runs here, its and the ratio (runs
    interleaved; the reference is stopped after ``limit`` seconds: "more than" that)."""
    mine, ref = timed_pair(ours, theirs, runs, limit)
    line = f"  {label:<28}{mine:8.2f} s  ({unit / mine:,.0f} {what}/s)"
    if ref is not None:
        if ref == float("inf"):
            line += (
                f"; kafka-dump-log.sh > {limit:.0f} s (stopped): kctl > {limit / mine:.0f}x faster"
            )
        else:
            line += f"; kafka-dump-log.sh {ref:.2f} s: kctl {ref / mine:.1f}x faster"
    print(line, flush=True)


def _indexes(seg: Path, kctl: str, ref: str | None, runs: int, limit: float) -> None:
    """Rows for the .index and .timeindex beside ``seg`` (each checked against the segment)."""
    for suffix, entry in ((".index", 8), (".timeindex", 12)):
        index = seg.with_suffix(suffix)
        if index.exists():
            entries = index.stat().st_size // entry
            compare(
                f"{suffix} ({entries} entries)",
                f"{kctl} {index} > /dev/null",
                f"{ref} {index} > /dev/null" if ref else None,
                runs,
                entries,
                "entries",
                limit,
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--segment",
        type=Path,
        help="Time an existing segment instead (e.g. one a broker wrote: its .index and "
        ".timeindex beside it are timed too)",
    )
    ap.add_argument("--kafka-libs", type=Path, help="Kafka's jars (default: kctl's cache)")
    ap.add_argument("--skip-kafka", action="store_true", help="Do not run kafka-dump-log.sh")
    ap.add_argument(
        "--skip-kafka-python", action="store_true", help="Do not time kafka-python's reader"
    )
    ap.add_argument(
        "--kafka-limit",
        type=float,
        default=600.0,
        help="Stop a kafka-dump-log.sh run after this many seconds (its time-index check is "
        "quadratic: at 1 GiB it runs for many minutes)",
    )
    ap.add_argument(
        "--only",
        choices=("all", "indexes"),
        default="all",
        help="indexes: time only the .index and .timeindex (uncompressed case)",
    )
    args = ap.parse_args()
    compile_kctl()
    py = sys.executable
    kctl = f"{py} -m kctl dump-segment"
    ref = None if args.skip_kafka else kafka_dump_log(args.kafka_libs)
    tmp = Path(tempfile.mkdtemp(prefix="kctl-bench-"))
    try:
        if args.segment is not None:
            cases = [("given", args.segment, None)]
        else:
            cases = [
                ("uncompressed", tmp / "uncompressed" / "00000000000000000000.log", 0),
                ("zstd", tmp / "zstd" / "00000000000000000000.log", 4),
            ][: 1 if args.only == "indexes" else 2]
        for name, seg, codec in cases:
            if codec is not None:
                seg.parent.mkdir()
                n = make_segment(seg, args.size_mb, codec, indexes=codec == 0)
            else:
                out = subprocess.run(
                    f"{kctl} {seg} -o jsonl", shell=True, capture_output=True, text=True
                ).stdout
                n = sum(json.loads(line).get("count", 0) for line in out.splitlines() if line)
            size = seg.stat().st_size
            if args.only == "indexes":
                _indexes(seg, kctl, ref, args.runs, args.kafka_limit)
                continue
            subprocess.run(f"cat {seg} > /dev/null", shell=True)  # warm the page cache
            cat = timed(f"cat {seg} > /dev/null", args.runs)
            empty = tmp / "empty.log"
            empty.write_bytes(b"")
            start = timed(f"{kctl} {empty} > /dev/null", args.runs)
            print(f"{name}: {size / 2**20:.0f} MiB, {n} records; cat {cat:.2f} s", flush=True)
            theirs = f"{ref} {seg} > /dev/null" if ref else None
            shallow, ref_shallow = timed_pair(f"{kctl} {seg} > /dev/null", theirs, args.runs)
            print(
                f"  batch-level dump            {shallow:8.2f} s  ({shallow / cat:.1f}x cat; "
                f"minus kctl's start-up {start:.2f} s: {(shallow - start) / cat:.1f}x cat)"
            )
            if ref_shallow is not None:
                print(
                    f"  kafka-dump-log.sh           {ref_shallow:8.2f} s  "
                    f"(kctl {ref_shallow / shallow:.1f}x faster)",
                    flush=True,
                )
            compare(
                "--deep-iteration",
                f"{kctl} {seg} --deep-iteration > /dev/null",
                f"{ref} {seg} --deep-iteration > /dev/null" if ref else None,
                args.runs,
                n,
                "records",
            )
            deep = timed(f"{kctl} {seg} --deep-iteration -o jsonl > /dev/null", args.runs)
            print(f"  --deep-iteration -o jsonl   {deep:8.2f} s  ({n / deep:,.0f} records/s)")
            _indexes(seg, kctl, ref, args.runs, args.kafka_limit)
            # kafka-python reads zstd only with the zstandard package (not a kctl dependency;
            # `pip install zstandard` into the venv for this comparison).
            if not args.skip_kafka_python and not (codec and not _has("zstandard")):
                kp = timed(
                    f'{py} -c \'import sys; sys.path.insert(0, "{Path(__file__).parent}");'
                    f' import dump; dump.kafka_python_reader("{seg}")\'',
                    args.runs,
                )
                print(f"  kafka-python reader         {kp:8.2f} s  ({n / kp:,.0f} records/s)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
