"""Every row of the speed goals in one run, on one real Apache Kafka cluster.

    .venv/bin/python benchmarks/real_cluster.py [--runs 5] [--dump-mb 1024]
        [--bootstrap HOST:PORT] [--only startup,consume_produce,lag,dump] [--out FILE]

Starts a 3-broker Kafka cluster with `kctl local up --engine kafka` (or uses --bootstrap: its
brokers must run on this machine, since the dump row reads a segment from a broker's disk), then
runs, one after the other on that cluster, each benchmark beside its references:

- startup: benchmarks/startup.py (`kctl --help`, `kctl topics list` vs `python -c pass`,
  `kafka-topics.sh --list`);
- consume_produce: benchmarks/consume_produce.py (kcat, kafka-console-consumer.sh,
  kafka-console-producer.sh, kafka-producer-perf-test.sh);
- lag: benchmarks/lag_kafka.py (kafka-consumer-groups.sh --describe --all-groups);
- dump: a topic with one partition and `segment.bytes` = --dump-mb is filled by `kctl produce`
  (100-byte records) until the broker rolls its first segment, and that segment, with the
  `.index` and `.timeindex` the broker wrote, goes to benchmarks/dump.py --segment
  (kafka-dump-log.sh, `cat`).
Every sub-benchmark interleaves kctl with its references and prints medians of --runs runs; this
script prints their output under one header (date, Kafka version, machine) and keeps it in
--out. Not run in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROWS = ("startup", "consume_produce", "lag", "dump")


def kctl(*args: str, bootstrap: str, stdin: object = None) -> str:
    return subprocess.run(
        [sys.executable, "-m", "kctl", "-b", bootstrap, *args],
        stdin=stdin,  # type: ignore[arg-type]
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def cluster_segment(bootstrap: str, size_mb: int, tmp: Path) -> Path:
    """The first segment of a fresh one-partition topic whose ``segment.bytes`` is ``size_mb``
    MiB, once the broker has rolled it (so its indexes are trimmed, as on a real cluster)."""
    import random

    topic = f"bench-dump-{uuid.uuid4().hex[:8]}"
    kctl("topics", "create", topic, "--partitions", "1", "--replication-factor", "1",
         "--config", f"segment.bytes={size_mb << 20}", bootstrap=bootstrap)  # fmt: skip
    # 100-byte values of random hex text (zstd-like payloads would pack them ~2:1), 8-byte keys.
    rnd = random.Random(42)
    lines = [b"%08d\t%s\n" % (i, rnd.randbytes(50).hex().encode()) for i in range(100_000)]
    chunk = tmp / "records.tsv"
    chunk.write_bytes(b"".join(lines))
    per_record = 100 + 8 + 8  # value, key and the record's own framing, roughly
    rounds = (size_mb << 20) // (len(lines) * per_record) + 2
    for _ in range(rounds * 2):
        kctl("produce", topic, "--key-separator", "\t", "--file", str(chunk),
             "--compression", "none", bootstrap=bootstrap)  # fmt: skip
        found = _segments(bootstrap, topic)
        if len(found) >= 2:
            return found[0]
    raise SystemExit(f"the broker did not roll a segment of {topic} after {rounds * 2} files")


def _segments(bootstrap: str, topic: str) -> list[Path]:
    doc = json.loads(kctl("cluster", "log-dirs", "--topic", topic, "-o", "json",
                          bootstrap=bootstrap))  # fmt: skip
    for entry in doc:
        for replica in entry["replicas"]:
            if replica["topic"] == topic:
                return sorted(Path(entry["log_dir"], f"{topic}-0").glob("*.log"))
    raise SystemExit(f"no broker on this machine holds {topic}-0 (log-dirs answered no path)")


def run(title: str, cmd: list[str], out: list[str]) -> None:
    header = f"\n## {title}\n$ {' '.join(cmd)}\n"
    print(header, flush=True)
    out.append(header)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        print(line, end="", flush=True)
        out.append(line)
    if proc.wait():
        out.append(f"(exit {proc.returncode})\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dump-mb", type=int, default=1024)
    ap.add_argument("--bootstrap", help="an existing cluster on this machine")
    ap.add_argument("--only", default=",".join(ROWS), help="rows to run, comma-separated")
    ap.add_argument("--out", type=Path, default=Path("/tmp/kctl-real-cluster-bench.txt"))
    args = ap.parse_args()
    rows = [r for r in args.only.split(",") if r]
    unknown = set(rows) - set(ROWS)
    if unknown:
        raise SystemExit(f"unknown rows: {', '.join(sorted(unknown))} (rows: {', '.join(ROWS)})")
    py = sys.executable
    tmp = Path(tempfile.mkdtemp(prefix="kctl-real-bench-"))
    state = tmp / "state"
    env_state = {**os.environ, "KCTL_STATE_DIR": str(state)}
    bootstrap = args.bootstrap
    try:
        if bootstrap is None:
            up = subprocess.run(
                [py, "-m", "kctl", "local", "up", "--engine", "kafka", "--brokers", "3",
                 "-o", "json"],
                env=env_state, capture_output=True, text=True, check=True,
            )  # fmt: skip
            bootstrap = json.loads(up.stdout)["bootstrap"]
        out = [
            f"# kctl on real Apache Kafka, {time.strftime('%Y-%m-%d %H:%M %Z')}\n",
            f"cluster {bootstrap}; {platform.platform()}; {os.cpu_count()} CPUs; "
            f"Python {platform.python_version()}; --runs {args.runs}\n",
            kctl("cluster", "describe", "-o", "plain", bootstrap=bootstrap),
            kctl("features", "describe", "-o", "plain", bootstrap=bootstrap),
        ]
        print("".join(out), flush=True)
        common = ["--runs", str(args.runs), "--bootstrap", bootstrap]
        if "startup" in rows:
            run("start-up", [py, str(HERE / "startup.py"), *common], out)
        if "consume_produce" in rows:
            run("consume and produce", [py, str(HERE / "consume_produce.py"), *common], out)
        if "lag" in rows:
            run("lag", [py, str(HERE / "lag_kafka.py"), *common], out)
        if "dump" in rows:
            seg = cluster_segment(bootstrap, args.dump_mb, tmp)
            copy = tmp / "segment" / seg.name
            copy.parent.mkdir()
            for suffix in (".log", ".index", ".timeindex"):
                shutil.copy(seg.with_suffix(suffix), copy.with_suffix(suffix))
            run(
                f"dump-segment of a {seg.stat().st_size / 2**20:.0f} MiB segment the broker wrote",
                [
                    py,
                    str(HERE / "dump.py"),
                    "--segment",
                    str(copy),
                    "--runs",
                    str(args.runs),
                    "--skip-kafka-python",
                ],
                out,
            )
        args.out.write_text("".join(out))
        print(f"\n(kept in {args.out})")
    finally:
        if args.bootstrap is None:
            subprocess.run([py, "-m", "kctl", "local", "down", "--purge"], env=env_state,
                           capture_output=True)  # fmt: skip
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
