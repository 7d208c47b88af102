"""Lag of many groups on real Apache Kafka: `kctl groups lag --all-groups` beside
`kafka-consumer-groups.sh --describe --all-groups` (Kafka's ConsumerGroupCommand from the jars
kctl caches), whole processes, interleaved, on the same cluster and groups.

    .venv/bin/python benchmarks/lag_kafka.py [--groups 200] [--partitions 50] [--runs 5]
                                             [--bootstrap HOST:PORT] [--time-lag]

Starts a 3-broker local Kafka cluster (or uses --bootstrap), creates one topic of N partitions
with 3 records in each and G groups that committed offset 1 on every partition (lag 2 each;
``--spread K``: K + 2 records and group i at offset 1 + i % K),
checks that both tools find the same partitions and the same total lag, then prints the median
wall seconds and the ratio. ``--time-lag`` also times `kctl groups lag --all-groups
--time-lag` (Kafka's tool has no time lag at all) and checks every partition's time lag is set.
The number of requests kctl sends (constant per broker, whatever the number of groups) is
counted by benchmarks/lag.py through a counting proxy.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bytecode import compile_kctl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def kafka_total(out: str, groups: set[str]) -> tuple[int, int]:
    """(partitions, total lag) from ConsumerGroupCommand's text, for ``groups`` only."""
    rows = lag = 0
    for line in out.splitlines():
        cols = line.split()
        if len(cols) >= 6 and cols[0] in groups and cols[2].isdigit():
            rows += 1
            lag += int(cols[5]) if cols[5].lstrip("-").isdigit() else 0
    return rows, lag


def kctl_total(out: str, groups: set[str]) -> tuple[int, int]:
    doc = json.loads(out)
    rows = [
        r for r in (doc if isinstance(doc, list) else doc["partitions"]) if r["group"] in groups
    ]
    return len(rows), sum(r["lag"] or 0 for r in rows)


def kctl_timed_total(out: str, groups: set[str]) -> tuple[int, int]:
    """kctl_total, once every partition of ``groups`` has a time lag."""
    doc = json.loads(out)
    mine = [r for r in doc["partitions"] if r["group"] in groups]
    assert all(r["time_lag_ms"] is not None for r in mine), "a partition without time lag"
    return kctl_total(out, groups)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--groups", type=int, default=200)
    ap.add_argument("--partitions", type=int, default=50)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--bootstrap", help="an existing cluster (default: start a local one)")
    ap.add_argument("--time-lag", action="store_true", help="also time groups lag --time-lag")
    ap.add_argument("--spread", type=int, default=1,
                    help="groups sit at this many different offsets (time lag: one Fetch round "
                         "per distinct position)")  # fmt: skip
    args = ap.parse_args()
    compile_kctl()

    from confluent_kafka import ConsumerGroupTopicPartitions, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    from kctl.local import kafka_cluster
    from kctl.local.kafka_jars import locate

    state = Path(tempfile.mkdtemp(prefix="kctl-lag-bench-"))
    cluster = None
    if args.bootstrap:
        bootstrap = args.bootstrap
    else:
        cluster, _ = kafka_cluster.start(state, brokers=3, port=0)
        bootstrap = cluster.bootstrap
    try:
        admin = AdminClient({"bootstrap.servers": bootstrap})
        run_id = uuid.uuid4().hex[:6]
        topic = f"lag-bench-{run_id}"
        admin.create_topics([NewTopic(topic, args.partitions, 1)])[topic].result()
        deadline = time.monotonic() + 30
        while topic not in admin.list_topics(timeout=10).topics and time.monotonic() < deadline:
            time.sleep(0.1)
        p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
        for _ in range(2 + args.spread):
            for part in range(args.partitions):
                p.produce(topic, b"x", partition=part)
            p.flush(30)
        groups = [f"lag-bench-{run_id}-{i:04d}" for i in range(args.groups)]
        position = {g: 1 + i % args.spread for i, g in enumerate(groups)}

        def at(g: str) -> int:
            return position[g]

        for g in groups:
            req = ConsumerGroupTopicPartitions(
                g, [TopicPartition(topic, q, at(g)) for q in range(args.partitions)]
            )
            # AlterConsumerGroupOffsets answers per partition (NOT_COORDINATOR while
            # __consumer_offsets is created or loads): retry until every partition took it.
            for _attempt in range(60):
                try:
                    done = admin.alter_consumer_group_offsets([req])[g].result()
                    if all(tp.error is None for tp in done.topic_partitions):
                        break
                except Exception:
                    pass
                time.sleep(0.5)
            else:
                raise SystemExit(f"could not commit the offsets of {g}")
        wanted = set(groups)
        end = 2 + args.spread
        expected = (args.groups * args.partitions,
                    sum(end - position[g] for g in groups) * args.partitions)  # fmt: skip
        java = shutil.which("java") or "java"
        libs = locate(None).libs
        env = {**os.environ, "KCTL_CONFIG": str(state / "c.yaml")}
        commands = {
            "kctl groups lag --all-groups": [
                sys.executable, "-m", "kctl", "-b", bootstrap, "groups", "lag", "--all-groups",
                "-o", "json",
            ],
            "kafka-consumer-groups.sh --describe --all-groups": [
                java, "-cp", f"{libs}/*",
                "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
                "--bootstrap-server", bootstrap, "--describe", "--all-groups",
            ],
        }  # fmt: skip
        parse = {
            "kctl groups lag --all-groups": kctl_total,
            "kafka-consumer-groups.sh --describe --all-groups": kafka_total,
        }
        if args.time_lag:
            timed = "kctl groups lag --all-groups --time-lag"
            commands[timed] = [*commands["kctl groups lag --all-groups"], "--time-lag"]
            parse[timed] = kctl_timed_total
        times: dict[str, list[float]] = {name: [] for name in commands}
        for run in range(args.runs + 1):  # the first round warms up and is not counted
            for name, cmd in commands.items():
                t0 = time.perf_counter()
                out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
                took = time.perf_counter() - t0
                found = parse[name](out.stdout, wanted)
                assert found == expected, (name, found, expected, out.stderr[-500:])
                if run:
                    times[name].append(took)
    finally:
        if cluster is not None:
            kafka_cluster.kill_all(cluster)
        shutil.rmtree(state, ignore_errors=True)
    med = {name: statistics.median(values) for name, values in times.items()}
    kafka = med["kafka-consumer-groups.sh --describe --all-groups"]
    print(f"{args.groups} groups x {args.partitions} partitions, median of {args.runs} runs")
    for name, value in med.items():
        print(f"{name:<52} {value:8.2f} s  kafka-consumer-groups.sh / this = {kafka / value:5.1f}x")


if __name__ == "__main__":
    main()
