"""kctl consume / produce against kcat, as ratios measured in the same run on the same broker.

    .venv/bin/python benchmarks/consume_produce.py [--records 1000000] [--runs 3]
        [--work both|consume|produce]

Starts a local broker (Tansu, memory storage) on a free loopback port and stops it at the end.
kcat is the Debian package; its librdkafka 2.0.2 cannot parse the local broker's ApiVersions
answer ("Read underflow"), so kcat runs against the librdkafka bundled in the confluent-kafka
wheel: a temporary directory holds a symlink librdkafka.so.1 -> confluent_kafka.libs/librdkafka-*
and is passed as LD_LIBRARY_PATH.

- consume: N records of 100 bytes to /dev/null as JSON lines: `kctl consume -o jsonl` vs
  `kcat -C -e -J`.
- produce: N records of 100 bytes from a KEY<TAB>VALUE file: `kctl produce --key-separator '\\t'
  --file` vs `kcat -P -K '\\t' -l` (a fresh topic per run).
Whole-process wall time, median of interleaved runs; records/s and kctl/kcat ratios.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def wall(cmd: list[str], env: dict[str, str], stdin: object = subprocess.DEVNULL) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=stdin,
                   check=True, env=env)  # fmt: skip
    return time.perf_counter() - start


def kcat_env(tmp: Path) -> dict[str, str]:
    import confluent_kafka

    libs = Path(confluent_kafka.__file__).resolve().parent.parent / "confluent_kafka.libs"
    (lib,) = glob.glob(str(libs / "librdkafka-*.so.1"))
    libdir = tmp / "rdkafka"
    libdir.mkdir()
    (libdir / "librdkafka.so.1").symlink_to(lib)
    return {**os.environ, "LD_LIBRARY_PATH": str(libdir)}


def fill(bootstrap: str, topic: str, n: int) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "compression.type": "none",
                  "queue.buffering.max.messages": 1_000_000})  # fmt: skip
    value = b"v" * 100
    for i in range(n):
        while True:
            try:
                p.produce(topic, value, b"%08d" % i)
                break
            except BufferError:
                p.poll(0.05)
    assert p.flush(60) == 0


def create(bootstrap: str, topic: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    time.sleep(0.3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)  # fmt: skip
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", choices=("both", "consume", "produce"), default="both")
    args = parser.parse_args()
    if not shutil.which("kcat"):
        sys.exit("kcat is not installed (apt-get install kcat)")
    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root))
    # Bytecode first, as a pip install leaves it: with PYTHONDONTWRITEBYTECODE set (as on the
    # project machines) an editable checkout would otherwise compile every changed module of
    # kctl at each start (~90 ms of CPU).
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "kctl")], check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    from kctl.local import broker

    tmp = Path(tempfile.mkdtemp(prefix="kctl-bench-cp-"))
    info, _ = broker.start(port=broker.free_port(), directory=tmp / "broker")
    bs = info.bootstrap
    py = sys.executable
    env = {**os.environ, "KCTL_BOOTSTRAP_SERVERS": bs, "KCTL_CONFIG": str(tmp / "c.yaml")}
    kenv = kcat_env(tmp)
    n = args.records
    times: dict[str, list[float]] = {}
    try:
        data = tmp / "records.tsv"
        value = "v" * 100
        data.write_text("".join(f"{i:08d}\t{value}\n" for i in range(n)))
        if args.work != "produce":
            times.update(consume_times(bs, n, args.runs, py, env, kenv))
        produce_times: dict[str, list[float]] = {"kctl produce": [], "kcat -P": []}
        for run in range(args.runs if args.work != "consume" else 0):
            for name in produce_times:
                topic = f"bench-produce-{name.split()[0]}-{run}"
                create(bs, topic)
                if name == "kctl produce":
                    cmd = [py, "-m", "kctl", "produce", topic, "--key-separator", "\\t",
                           "--file", str(data)]  # fmt: skip
                    produce_times[name].append(wall(cmd, env))
                else:
                    cmd = ["kcat", "-P", "-b", bs, "-t", topic, "-K", "\t", "-l", str(data)]
                    produce_times[name].append(wall(cmd, kenv))
        if args.work != "consume":
            times.update(produce_times)
    finally:
        broker.stop(tmp / "broker")
        shutil.rmtree(tmp, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{n:,} records of 100 bytes, median of {args.runs} interleaved runs\n")
    print("| work | median wall | records/s | ratio (kctl/kcat records/s) |")
    print("|---|---|---|---|")
    for a, b in (("kctl consume -o jsonl", "kcat -C -e -J"), ("kctl produce", "kcat -P")):
        if a not in med:
            continue
        pairs = [k / c for c, k in zip(times[a], times[b], strict=True)]
        for name in (a, b):
            ratio = f"{med[b] / med[a]:.2f}x" if name == a else "1.00x"
            if name == a:
                ratio += f" (per pair: median {statistics.median(pairs):.2f}x)"
            print(f"| `{name}` | {med[name]:.2f} s | {n / med[name]:,.0f} | {ratio} |")
    print("\nall runs:", {k: [round(x, 2) for x in v] for k, v in times.items()})


def consume_times(
    bs: str, n: int, runs: int, py: str, env: dict[str, str], kenv: dict[str, str]
) -> dict[str, list[float]]:
    create(bs, "bench-consume")
    fill(bs, "bench-consume", n)
    consume = {
        "kctl consume -o jsonl": [py, "-m", "kctl", "consume", "bench-consume", "-o", "jsonl"],
        "kcat -C -e -J": ["kcat", "-C", "-b", bs, "-t", "bench-consume", "-e", "-J",
                          "-o", "beginning"],
    }  # fmt: skip
    times: dict[str, list[float]] = {k: [] for k in consume}
    for name, cmd in consume.items():  # warm-up
        wall(cmd, kenv if name.startswith("kcat") else env)
    for _ in range(runs):
        for name, cmd in consume.items():
            times[name].append(wall(cmd, kenv if name.startswith("kcat") else env))
    return times


if __name__ == "__main__":
    main()
