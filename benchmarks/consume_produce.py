"""kctl consume / produce against kcat, as ratios measured in the same run on the same broker.

    .venv/bin/python benchmarks/consume_produce.py [--records 1000000] [--runs 5]
        [--work both|consume|produce] [--bootstrap HOST:PORT] [--kafka-libs DIR] [--no-jvm]

With --bootstrap, on that cluster (e.g. the real 3-broker one of `kctl local up --engine kafka`),
with Kafka's own JVM clients as more references (kafka-console-consumer.sh,
kafka-console-producer.sh, kafka-producer-perf-test.sh from --kafka-libs, default kctl's jar
cache) and the consume topic in one and in six partitions. Without it, a local broker (Tansu,
memory storage) on a free loopback port, stopped at the end.
kcat is the Debian package; its librdkafka 2.0.2 cannot parse the local broker's ApiVersions
answer ("Read underflow"), so kcat runs against the librdkafka bundled in the confluent-kafka
wheel: a temporary directory holds a symlink librdkafka.so.1 -> confluent_kafka.libs/librdkafka-*
and is passed as LD_LIBRARY_PATH.

- consume: N records of 100 bytes to /dev/null as JSON lines: `kctl consume -o jsonl` vs
  `kcat -C -e -J`.
- produce: N records of 100 bytes from a KEY<TAB>VALUE file: `kctl produce --key-separator '\\t'
  --file` vs `kcat -P -K '\\t' -l` (a fresh topic per run); kctl also with --no-offsets and
  on its confluent-kafka path (KCTL_NATIVE_PRODUCER=0).
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

from bytecode import compile_kctl

# `kctl produce` with KCTL_NATIVE_PRODUCER=0: through confluent-kafka's Producer.produce()
# (fed by the C loop produce_chunk) instead of kctl's own librdkafka producer
CONFLUENT = "kctl produce [confluent-kafka path]"


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


def create(bootstrap: str, topic: str, partitions: int = 1) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    time.sleep(0.3)


def jvm(libs: Path | None, cls: str, *args: str) -> list[str]:
    assert libs is not None
    return ["java", "-Xmx512m", "-cp", f"{libs}/*", cls, *args]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)  # fmt: skip
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--work", choices=("both", "consume", "produce"), default="both")
    parser.add_argument("--bootstrap", help="an existing cluster (default: a Tansu broker)")
    parser.add_argument("--kafka-libs", help="Kafka's jars for the JVM references")
    parser.add_argument("--no-jvm", action="store_true",
                        help="kcat alone as the reference (no JVM clients beside it)")  # fmt: skip
    args = parser.parse_args()
    if not shutil.which("kcat"):
        sys.exit("kcat is not installed (apt-get install kcat)")
    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root))
    compile_kctl()
    from kctl.local import broker

    tmp = Path(tempfile.mkdtemp(prefix="kctl-bench-cp-"))
    libs: Path | None = None
    if args.bootstrap:
        bs = args.bootstrap
        from kctl.local.kafka_jars import locate

        if not args.no_jvm:
            libs = Path(args.kafka_libs) if args.kafka_libs else locate().libs
    else:
        info, _ = broker.start(port=broker.free_port(), directory=tmp / "broker")
        bs = info.bootstrap
    py = sys.executable
    env = {**os.environ, "KCTL_BOOTSTRAP_SERVERS": bs, "KCTL_CONFIG": str(tmp / "c.yaml")}
    kenv = kcat_env(tmp)
    n = args.records
    tag = f"{os.getpid()}"
    times: dict[str, list[float]] = {}
    pairs: list[tuple[str, str]] = []
    try:
        data = tmp / "records.tsv"
        value = "v" * 100
        data.write_text("".join(f"{i:08d}\t{value}\n" for i in range(n)))
        if args.work != "produce":
            for parts in (1, 6) if libs else (1,):
                got = consume_times(bs, n, args.runs, py, env, kenv, parts, libs, tag)
                times.update(got)
                pairs.append((f"kctl consume -o jsonl ({parts}p)", f"kcat -C -e -J ({parts}p)"))
        produce_times: dict[str, list[float]] = {
            "kctl produce": [],
            "kcat -P": [],
            "kctl produce --no-offsets": [],
            # the confluent-kafka path (the fallback where kctl's C producer cannot be used)
            CONFLUENT: [],
        }
        if libs:
            produce_times["kafka-console-producer.sh"] = []
            produce_times["kafka-producer-perf-test.sh"] = []
        for run in range(args.runs if args.work != "consume" else 0):
            for which, name in enumerate(produce_times):
                topic = f"bench-produce-{tag}-{which}-{run}"
                create(bs, topic)
                if name.startswith("kctl produce"):
                    flags = [] if name == CONFLUENT else name.split()[2:]
                    cmd = [py, "-m", "kctl", "produce", topic, "--key-separator", "\\t",
                           "--file", str(data), *flags]  # fmt: skip
                    penv = {**env, "KCTL_NATIVE_PRODUCER": "0"} if name == CONFLUENT else env
                    produce_times[name].append(wall(cmd, penv))
                elif name == "kcat -P":
                    cmd = ["kcat", "-P", "-b", bs, "-t", topic, "-K", "\t", "-l", str(data)]
                    produce_times[name].append(wall(cmd, kenv))
                elif name == "kafka-console-producer.sh":
                    cmd = jvm(libs, "org.apache.kafka.tools.ConsoleProducer", "--bootstrap-server",
                              bs, "--topic", topic, "--property", "parse.key=true",
                              "--property", "key.separator=\t")  # fmt: skip
                    with open(data, "rb") as f:
                        produce_times[name].append(wall(cmd, env, stdin=f))
                else:
                    cmd = jvm(libs, "org.apache.kafka.tools.ProducerPerformance", "--topic", topic,
                              "--num-records", str(n), "--record-size", "100", "--throughput",
                              "-1", "--producer-props", f"bootstrap.servers={bs}")  # fmt: skip
                    produce_times[name].append(wall(cmd, env))
        if args.work != "consume":
            times.update(produce_times)
            pairs.append(("kctl produce", "kcat -P"))
    finally:
        if not args.bootstrap:
            broker.stop(tmp / "broker")
        shutil.rmtree(tmp, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{n:,} records of 100 bytes, median of {args.runs} interleaved runs\n")
    print("| work | median wall | records/s | records/s relative to kcat |")
    print("|---|---|---|---|")
    for a, b in pairs:
        rivals = [k for k in med if k.split(" (")[0] != a.split(" (")[0] and k != b
                  and k.endswith(a[a.find(" ("):]) == a.endswith(")")
                  and (a.endswith(")") == k.endswith(")"))]  # fmt: skip
        per_pair = [k / c for c, k in zip(times[a], times[b], strict=True)]
        print(f"| `{a}` | {med[a]:.2f} s | {n / med[a]:,.0f} | {med[b] / med[a]:.2f}x "
              f"(per pair: median {statistics.median(per_pair):.2f}x) |")  # fmt: skip
        print(f"| `{b}` | {med[b]:.2f} s | {n / med[b]:,.0f} | 1.00x |")
        for r in rivals:
            if (a.endswith(")") and r.endswith(a[a.find(" (") :])) or not a.endswith(")"):
                print(f"| `{r}` | {med[r]:.2f} s | {n / med[r]:,.0f} | {med[b] / med[r]:.2f}x |")
    print("\nall runs:", {k: [round(x, 2) for x in v] for k, v in times.items()})


def consume_times(
    bs: str,
    n: int,
    runs: int,
    py: str,
    env: dict[str, str],
    kenv: dict[str, str],
    parts: int = 1,
    libs: Path | None = None,
    tag: str = "",
) -> dict[str, list[float]]:
    topic = f"bench-consume-{tag}-{parts}p"
    create(bs, topic, parts)
    fill(bs, topic, n)
    sfx = f" ({parts}p)" if libs else ""
    consume = {
        f"kctl consume -o jsonl{sfx}": [py, "-m", "kctl", "consume", topic, "-o", "jsonl"],
        f"kcat -C -e -J{sfx}": ["kcat", "-C", "-b", bs, "-t", topic, "-e", "-J",
                                "-o", "beginning"],
    }  # fmt: skip
    if libs:
        # kcat given the fetch setting kctl uses (librdkafka's 1 s fetch.queue.backoff.ms)
        consume[f"kcat -C -e -J -X fetch.queue.backoff.ms=10{sfx}"] = [
            "kcat", "-C", "-b", bs, "-t", topic, "-e", "-J", "-o", "beginning",
            "-X", "fetch.queue.backoff.ms=10",
        ]  # fmt: skip
        consume[f"kafka-console-consumer.sh{sfx}"] = jvm(
            libs, "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", bs,
            "--topic", topic, "--from-beginning", "--max-messages", str(n),
        )  # fmt: skip
    times: dict[str, list[float]] = {k: [] for k in consume}
    for name, cmd in consume.items():  # warm-up
        wall(cmd, kenv if name.startswith("kcat") else env)
    for _ in range(runs):
        for name, cmd in consume.items():
            times[name].append(wall(cmd, kenv if name.startswith("kcat") else env))
    return times


if __name__ == "__main__":
    main()
