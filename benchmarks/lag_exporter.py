"""The lag exporter over many collections: collection time and memory of `kctl groups lag --serve`.

    .venv/bin/python benchmarks/lag_exporter.py [--bootstrap 127.0.0.1:9092] [--collections 1000]
                                                [--interval 0.05] [--groups 20] [--partitions 10]

Creates one topic of N partitions with records in each (timestamps an hour old) and G groups
committed halfway on every partition (so every partition has lag and a time lag), starts
`kctl groups lag G1..Gn --serve 127.0.0.1:PORT --interval S` as its own process, as an operator
runs it, and scrapes it while it collects: the collections counter says how far it got, the
duration gauge how long each collection took, /proc/PID/status the exporter's resident memory.
Prints the collection time (median, p95, max of the scraped durations), the RSS after 10, 100,
... collections and its growth from collection 100 (warmed up) to the last. Every scrape must
show every group's lag (G x N series) and no failed collection. The groups and the topic are
deleted at the end.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def scrape(port: int) -> dict[str, list[float]]:
    """Sample name -> values (label sets flattened), from the exporter's text."""
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    out: dict[str, list[float]] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out.setdefault(s.name, []).append(s.value)
    return out


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def setup(bootstrap: str, groups: int, partitions: int) -> tuple[str, list[str]]:
    from confluent_kafka import ConsumerGroupTopicPartitions, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    tag = uuid.uuid4().hex[:8]
    topic = f"bench-exporter-{tag}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(60)
    deadline = time.monotonic() + 60
    while topic not in admin.list_topics(timeout=10).topics and time.monotonic() < deadline:
        time.sleep(0.2)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    old_ms = int(time.time() * 1000) - 3_600_000
    for p in range(partitions):
        for i in range(10):
            producer.produce(topic, value=b"v%d" % i, partition=p, timestamp=old_ms + i)
    assert producer.flush(60) == 0
    names = [f"bench-exporter-{tag}-g{i}" for i in range(groups)]
    for name in names:
        offsets = [TopicPartition(topic, p, 5) for p in range(partitions)]
        for _ in range(100):  # the coordinator may still be loading: retry
            done = admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(name, offsets)])
            try:
                parts = done[name].result(30).topic_partitions
            except Exception:
                time.sleep(0.2)
                continue
            if not any(tp.error for tp in parts):
                break
            time.sleep(0.2)
        else:
            raise RuntimeError(f"could not commit offsets for {name}")
    return topic, names


def teardown(bootstrap: str, topic: str, names: list[str]) -> None:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.delete_consumer_groups(names, request_timeout=30).values():
        try:
            future.result(60)
        except Exception as exc:
            print(f"  (could not delete a group: {exc})", file=sys.stderr)
    admin.delete_topics([topic])[topic].result(60)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bootstrap", default="127.0.0.1:9092")
    ap.add_argument("--collections", type=int, default=1000)
    ap.add_argument("--interval", type=float, default=0.05, help="seconds between collections")
    ap.add_argument("--groups", type=int, default=20)
    ap.add_argument("--partitions", type=int, default=10)
    args = ap.parse_args()

    topic, names = setup(args.bootstrap, args.groups, args.partitions)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KCTL_")}
    env.update(KCTL_BOOTSTRAP_SERVERS=args.bootstrap,
               KCTL_CONFIG=str(Path(tempfile.mkdtemp()) / "kctl.yaml"))  # fmt: skip
    cmd = [sys.executable, "-m", "kctl", "groups", "lag", *names,
           "--serve", f"127.0.0.1:{port}", "--interval", f"{args.interval}s"]  # fmt: skip
    err = tempfile.NamedTemporaryFile("w+", suffix=".stderr", delete=False)  # noqa: SIM115
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err, cwd=ROOT)
    checkpoints = sorted({10, 100, *range(250, args.collections + 1, 250), args.collections})
    rss: dict[int, int] = {}
    durations: list[float] = []
    series = args.groups * args.partitions
    began = time.monotonic()
    try:
        done = 0.0
        while done < args.collections:
            if proc.poll() is not None:
                raise RuntimeError(f"the exporter exited {proc.returncode}: "
                                   f"{Path(err.name).read_text()}")  # fmt: skip
            try:
                s = scrape(port)
            except OSError:
                time.sleep(0.1)
                continue
            if "kctl_lag_exporter_collections_total" not in s:
                time.sleep(0.1)
                continue
            done = s["kctl_lag_exporter_collections_total"][0]
            errors = s["kctl_lag_exporter_collection_errors_total"][0]
            if errors:
                raise RuntimeError(f"{errors:g} collection(s) failed: "
                                   f"{Path(err.name).read_text()}")  # fmt: skip
            if done >= 1:
                lags = s.get("kafka_consumergroup_group_lag", [])
                assert len(lags) == series, f"{len(lags)} lag series, expected {series}"
                assert len(s.get("kafka_consumergroup_group_lag_seconds", [])) == series
                durations.append(s["kctl_lag_exporter_last_collection_duration_seconds"][0])
            for c in checkpoints:
                if c not in rss and done >= c:
                    rss[c] = rss_kib(proc.pid)
            time.sleep(min(0.5, args.interval * 5))
        wall = time.monotonic() - began
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(60)
        teardown(args.bootstrap, topic, names)
    assert code == 0, f"exit {code}: {Path(err.name).read_text()}"

    q = statistics.quantiles(durations, n=20)
    print(f"lag exporter: {args.groups} groups x {args.partitions} partitions "
          f"({series} partition series, time lag on), interval {args.interval:g}s, "
          f"{done:g} collections in {wall:.0f}s")  # fmt: skip
    print(f"  collection time: median {statistics.median(durations) * 1000:.1f} ms, "
          f"p95 {q[18] * 1000:.1f} ms, max {max(durations) * 1000:.1f} ms "
          f"({len(durations)} scraped)")  # fmt: skip
    print("  RSS: " + ", ".join(f"{rss[c] / 1024:.1f} MiB after {c}" for c in sorted(rss)))
    base = rss.get(100)
    last = rss[max(rss)]
    if base:
        print(f"  RSS growth from collection 100 to {max(rss)}: {(last - base) / 1024:+.1f} MiB "
              f"({(last - base) / base * 100:+.1f}%)")  # fmt: skip


if __name__ == "__main__":
    main()
