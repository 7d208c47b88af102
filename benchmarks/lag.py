"""Lag of many groups: kctl's batched requests against a straightforward per-group loop.

    .venv/bin/python benchmarks/lag.py [--groups 200] [--partitions 50] [--runs 3]

Starts its own local broker whose advertised address is a counting proxy on loopback, so every
Kafka request either client sends is counted by API (the proxy parses the length-prefixed
request frames); creates one topic of N partitions with records in each, and G groups with a
committed offset on every partition. Then, on the same broker, interleaved:
- kctl: the function behind `kctl groups lag G1..Gn` (DescribeGroups batched per coordinator,
  one OffsetFetch v8 for all groups per coordinator, ListOffsets batched per leader);
- loop: for each group, confluent-kafka's describe_consumer_groups([g]),
  list_consumer_group_offsets([g]) and list_offsets for that group's partitions (earliest,
  latest) — the same client library, one group at a time.
Reports median wall seconds and requests per API.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kctl.kafka.apis import api_name
from kctl.local import broker

COUNTS: collections.Counter[str] = collections.Counter()


async def _pipe_counting(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readexactly(4)
            size = struct.unpack(">i", head)[0]
            body = await reader.readexactly(size)
            COUNTS[api_name(struct.unpack_from(">h", body, 0)[0])] += 1
            writer.write(head + body)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


def start_proxy(listen: int, target: int) -> None:
    async def handle(cr: asyncio.StreamReader, cw: asyncio.StreamWriter) -> None:
        br, bw = await asyncio.open_connection("127.0.0.1", target)
        await asyncio.gather(_pipe_counting(cr, bw), _pipe(br, cw))

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", listen)
        async with server:
            await server.serve_forever()

    threading.Thread(target=lambda: asyncio.run(main()), daemon=True).start()


def naive(bootstrap: str, groups: list[str]) -> int:
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec

    admin = AdminClient({"bootstrap.servers": bootstrap})
    rows = 0
    for g in groups:
        admin.describe_consumer_groups([g])[g].result()
        res = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(g)])[g].result()
        tps = [TopicPartition(tp.topic, tp.partition) for tp in res.topic_partitions]
        ends = admin.list_offsets({tp: OffsetSpec.latest() for tp in tps})
        starts = admin.list_offsets({tp: OffsetSpec.earliest() for tp in tps})
        for f in (*ends.values(), *starts.values()):
            f.result()
        rows += len(tps)
    return rows


def batched(bootstrap: str, groups: list[str]) -> int:
    from kctl import settings
    from kctl.commands.groups import lag_rows
    from kctl.kafka.client import Admin

    settings.install(settings.Settings(bootstrap_servers=bootstrap, timeout=60))
    return len(lag_rows(Admin(), groups))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--partitions", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    from confluent_kafka import ConsumerGroupTopicPartitions, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    real, proxy = broker.free_port(), broker.free_port()
    state = Path(tempfile.mkdtemp(prefix="kctl-lag-bench-"))
    log = open(state / "broker.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen(
        [broker.broker_binary(), "broker", "--listener-url", f"tcp://127.0.0.1:{real}",
         "--advertised-listener-url", f"tcp://127.0.0.1:{proxy}"],
        stdout=log, stderr=log, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                broker.probe_api_versions("127.0.0.1", real)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        start_proxy(proxy, real)
        bootstrap = f"127.0.0.1:{proxy}"
        admin = AdminClient({"bootstrap.servers": bootstrap})
        topic = "lag-bench"
        admin.create_topics([NewTopic(topic, args.partitions, 1)])[topic].result()
        p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
        for part in range(args.partitions):
            p.produce(topic, b"x", partition=part)
        p.flush(30)
        groups = [f"bench-group-{i:04d}" for i in range(args.groups)]
        for g in groups:
            req = ConsumerGroupTopicPartitions(
                g, [TopicPartition(topic, q, 1) for q in range(args.partitions)]
            )
            admin.alter_consumer_group_offsets([req])[g].result()
        results: dict[str, dict[str, list]] = {
            "kctl": {"wall": [], "req": []},
            "loop": {"wall": [], "req": []},
        }
        per_api: dict[str, collections.Counter[str]] = {}
        for _ in range(args.runs):
            for name, fn in (("kctl", batched), ("loop", naive)):
                COUNTS.clear()
                t0 = time.perf_counter()
                rows = fn(bootstrap, groups)
                wall = time.perf_counter() - t0
                assert rows == args.groups * args.partitions, (name, rows)
                results[name]["wall"].append(wall)
                results[name]["req"].append(sum(COUNTS.values()))
                per_api[name] = collections.Counter(COUNTS)
    finally:
        proc.kill()
        proc.wait()
        log.close()
    k, n = results["kctl"], results["loop"]
    kw, nw = statistics.median(k["wall"]), statistics.median(n["wall"])
    kr, nr = statistics.median(k["req"]), statistics.median(n["req"])
    print(f"{args.groups} groups x {args.partitions} partitions, median of {args.runs} runs")
    print(f"{'':6} {'wall s':>8} {'requests':>9}")
    print(f"{'kctl':6} {kw:>8.2f} {kr:>9.0f}")
    print(f"{'loop':6} {nw:>8.2f} {nr:>9.0f}")
    print(f"loop/kctl: {nw / kw:.1f}x the time, {nr / kr:.1f}x the requests")
    for name in ("kctl", "loop"):
        print(f"{name} requests by API: {dict(sorted(per_api[name].items()))}")
    os.environ.pop("KCTL_BOOTSTRAP_SERVERS", None)


if __name__ == "__main__":
    main()
