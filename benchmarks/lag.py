"""Lag of many groups: kctl's batched requests against a straightforward per-group loop.

    .venv/bin/python benchmarks/lag.py [--groups 200] [--partitions 50] [--runs 3]

Starts its own local broker whose advertised address is a counting proxy on loopback, so every
Kafka request either client sends is counted by API (the proxy parses the length-prefixed
request frames); creates one topic of N partitions with records in each, and G groups with a
committed offset on every partition. Then, on the same broker, interleaved:
- kctl: the function behind `kctl groups lag G1..Gn` (DescribeGroups batched per coordinator,
  one OffsetFetch v8 for all groups per coordinator, ListOffsets batched per leader);
- loop (confluent-kafka): for each group, describe_consumer_groups([g]),
  list_consumer_group_offsets([g]) and list_offsets for that group's partitions (earliest,
  latest) — the library kctl uses for ListOffsets, one group at a time;
- loop (kafka-python): for each group, KafkaAdminClient.describe_groups([g]),
  list_group_offsets(g) and list_partition_offsets (earliest, latest) — the library kctl uses
  for the group requests, one group at a time.
Every variant must find the same partitions and the same total lag. Reports median wall
seconds and requests per API.
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

from kctl.broker.apis import api_name
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
        try:
            br, bw = await asyncio.open_connection("127.0.0.1", target)
        except OSError:  # the broker is gone (the run is over): drop the client
            cw.close()
            return
        await asyncio.gather(_pipe_counting(cr, bw), _pipe(br, cw))

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", listen)
        async with server:
            await server.serve_forever()

    threading.Thread(target=lambda: asyncio.run(main()), daemon=True).start()


def loop_confluent(bootstrap: str, groups: list[str]) -> tuple[int, int]:
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec

    admin = AdminClient({"bootstrap.servers": bootstrap})
    rows = total = 0
    for g in groups:
        admin.describe_consumer_groups([g])[g].result()
        res = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(g)])[g].result()
        committed = {(tp.topic, tp.partition): tp.offset for tp in res.topic_partitions}
        tps = [TopicPartition(t, p) for t, p in committed]
        ends = admin.list_offsets({tp: OffsetSpec.latest() for tp in tps})
        starts = admin.list_offsets({tp: OffsetSpec.earliest() for tp in tps})
        for f in starts.values():
            f.result()
        for tp, f in ends.items():
            total += f.result().offset - committed[(tp.topic, tp.partition)]
        rows += len(tps)
    return rows, total


def loop_kafka_python(bootstrap: str, groups: list[str]) -> tuple[int, int]:
    from kafka import KafkaAdminClient
    from kafka.protocol.admin import DescribeGroupsRequest
    from kafka.protocol.consumer import OffsetSpec

    client = KafkaAdminClient(bootstrap_servers=[bootstrap])

    def describe(group: str) -> None:
        # KafkaAdminClient.describe_groups always asks for authorized operations and then fails
        # on Tansu's answer (bits outside its ACLOperation enum), so the same DescribeGroups
        # request kctl sends, one group at a time, to the group's coordinator.
        async def call() -> None:
            node = await client._find_coordinator_id(group)
            request = DescribeGroupsRequest(groups=[group], include_authorized_operations=False)
            await client._manager.send(request, node_id=node)

        client._manager.run(call)

    rows = total = 0
    try:
        for g in groups:
            describe(g)
            committed = client.list_group_offsets(g)[g]
            tps = list(committed)
            ends = client.list_partition_offsets({tp: OffsetSpec.LATEST for tp in tps})
            client.list_partition_offsets({tp: OffsetSpec.EARLIEST for tp in tps})
            total += sum(ends[tp].offset - committed[tp].offset for tp in tps)
            rows += len(tps)
    finally:
        client.close()
    return rows, total


def batched(bootstrap: str, groups: list[str]) -> tuple[int, int]:
    """What `kctl groups lag G1..Gn` does after parsing its options (the process start-up,
    ~0.15 s, is measured by benchmarks/startup.py)."""
    from kctl import settings
    from kctl.broker import groups as G
    from kctl.broker.client import Admin
    from kctl.broker.connect import resolve

    admin = Admin(resolve(settings.Settings(bootstrap_servers=bootstrap, timeout=60)))
    admin.metadata()  # the cluster id for the samples
    with G.GroupReader(admin) as reader:
        rows = G.lag_samples(admin, reader, groups)
    return len(rows), sum(r["lag"] for r in rows)


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
        for _ in range(3):  # 3 records a partition, one per batch; the groups commit 1: lag 2
            for part in range(args.partitions):
                p.produce(topic, b"x", partition=part)
            p.flush(30)
        groups = [f"bench-group-{i:04d}" for i in range(args.groups)]
        for g in groups:
            req = ConsumerGroupTopicPartitions(
                g, [TopicPartition(topic, q, 1) for q in range(args.partitions)]
            )
            admin.alter_consumer_group_offsets([req])[g].result()
        variants = (
            ("kctl", batched),
            ("loop-confluent", loop_confluent),
            ("loop-kafka-python", loop_kafka_python),
        )
        results: dict[str, dict[str, list]] = {n: {"wall": [], "req": []} for n, _ in variants}
        per_api: dict[str, collections.Counter[str]] = {}
        expected = (args.groups * args.partitions, args.groups * args.partitions * 2)
        for _ in range(args.runs):
            for name, fn in variants:
                COUNTS.clear()
                t0 = time.perf_counter()
                found = fn(bootstrap, groups)
                wall = time.perf_counter() - t0
                assert found == expected, (name, found, expected)
                results[name]["wall"].append(wall)
                results[name]["req"].append(sum(COUNTS.values()))
                per_api[name] = collections.Counter(COUNTS)
    finally:
        proc.kill()
        proc.wait()
        log.close()
    med = {
        n: (statistics.median(r["wall"]), statistics.median(r["req"])) for n, r in results.items()
    }
    kw, kr = med["kctl"]
    print(f"{args.groups} groups x {args.partitions} partitions, median of {args.runs} runs")
    print(f"{'':18} {'wall s':>8} {'requests':>9} {'time ratio':>11} {'request ratio':>14}")
    for name, (w, r) in med.items():
        print(f"{name:18} {w:>8.2f} {r:>9.0f} {w / kw:>10.1f}x {r / kr:>13.1f}x")
    for name in med:
        print(f"{name} requests by API: {dict(sorted(per_api[name].items()))}")
    os.environ.pop("KCTL_BOOTSTRAP_SERVERS", None)


if __name__ == "__main__":
    main()
