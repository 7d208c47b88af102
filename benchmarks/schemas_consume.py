"""kctl consume of Avro records (Schema Registry wire format) against the Python script an
operator would write with confluent-kafka's DeserializingConsumer + AvroDeserializer, in the
same run on the same cluster and registry.

    .venv/bin/python benchmarks/schemas_consume.py --bootstrap 127.0.0.1:9092 \\
        --registry http://127.0.0.1:8081/apis/ccompat/v7 [--records 1000000] [--runs 5]

Once: a one-partition topic is filled with N records written by confluent-kafka's own
AvroSerializer (a record of 10 fields: longs and ints, strings, a ["null","string"] union, a
timestamp-millis), about 90 bytes each. Then, interleaved, --runs times each:

- ``kctl consume T -o jsonl --value-format avro`` to /dev/null;
- the reference script (written below, REFERENCE): DeserializingConsumer + AvroDeserializer,
  ``json.dumps`` of a dict with the same fields as kctl's line, the timestamp rendered as kctl
  renders it (ISO-8601 UTC, milliseconds, "Z"), one ``print`` per record, stopping after N
  records; it gets kctl's ``fetch.queue.backoff.ms=10`` so the comparison is of decoding and
  printing, not of librdkafka's 1 s fetch pause (docs/consume.md);
- ``kctl consume T -o jsonl`` (the same records as bytes): the decoding cost per record is the
  difference to the Avro run, divided by N.

Before timing, the first 1,000 lines of kctl and of the script are compared (the values must
be equal as JSON: the same records printed the same way). Whole-process wall time and CPU time
(user + system, from wait4), medians of interleaved runs, and the ratios per pair.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bytecode import compile_kctl
from schemas_common import SCHEMA, all_runs, arguments, kctl_env, order, table, timed

REFERENCE = r"""
import json
import sys
from datetime import datetime

from confluent_kafka import DeserializingConsumer, TopicPartition, OFFSET_BEGINNING
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer

bootstrap, registry, topic, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
TYPES = (None, "CreateTime", "LogAppendTime")


def iso(value):
    # kctl's rendering of timestamp-millis: ISO-8601 UTC, 3 fraction digits, "Z"
    if isinstance(value, datetime):
        return value.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return value


consumer = DeserializingConsumer({
    "bootstrap.servers": bootstrap,
    "group.id": "bench-reference",
    "enable.auto.commit": False,
    "fetch.queue.backoff.ms": 10,
    "value.deserializer": AvroDeserializer(SchemaRegistryClient({"url": registry})),
})
consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
seen = 0
while seen < count:
    msg = consumer.poll(1.0)
    if msg is None:
        continue
    value = msg.value()
    value["created"] = iso(value["created"])
    key = msg.key()
    tstype, ts = msg.timestamp()
    print(json.dumps({
        "topic": msg.topic(), "partition": msg.partition(), "offset": msg.offset(),
        "timestamp": ts if tstype else None, "timestamp_type": TYPES[tstype],
        "key": key.decode() if key is not None else None, "value": value,
        "headers": [], "leader_epoch": msg.leader_epoch(),
    }, separators=(",", ":")))
    seen += 1
consumer.close()
"""


def fill(bootstrap: str, registry: str, topic: str, n: int) -> None:
    """N records written by confluent-kafka's AvroSerializer (an encoder kctl did not write)."""
    from confluent_kafka import SerializingProducer
    from confluent_kafka.admin import AdminClient, NewTopic
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import StringSerializer

    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    sr = SchemaRegistryClient({"url": registry})
    producer = SerializingProducer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 50,
            "batch.size": 1 << 20,
            "queue.buffering.max.messages": 1_000_000,
            "key.serializer": StringSerializer(),
            "value.serializer": AvroSerializer(sr, json.dumps(SCHEMA)),
        }
    )
    for i in range(n):
        value = order(i)
        while True:
            try:
                producer.produce(topic, key=f"order-{i}", value=value)
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(120) == 0


def main() -> None:
    args = arguments(__doc__, runs=5, extra=True)
    compile_kctl()
    py = sys.executable
    n = args.records
    tmp = Path(tempfile.mkdtemp(prefix="kctl-bench-sr-"))
    ref = tmp / "reference.py"
    ref.write_text(REFERENCE)
    topic = args.topic or f"bench-avro-{uuid.uuid4().hex[:8]}"
    if not args.topic:
        started = time.perf_counter()
        fill(args.bootstrap, args.registry, topic, n)
        print(f"filled {topic} with {n:,} records in {time.perf_counter() - started:.1f}s")
    env = kctl_env(args, tmp)
    kctl = [py, "-m", "kctl", "consume", topic, "-o", "jsonl"]
    commands = {
        "kctl consume -o jsonl --value-format avro": [*kctl, "--value-format", "avro"],
        "reference: DeserializingConsumer + AvroDeserializer": [
            py,
            str(ref),
            args.bootstrap,
            args.registry,
            topic,
            str(n),
        ],
        "kctl consume -o jsonl (bytes)": kctl,
    }
    # The same lines: kctl's and the script's first 1,000 values equal as JSON.
    ours = subprocess.run(
        [*commands["kctl consume -o jsonl --value-format avro"], "-n", "1000"],
        capture_output=True, check=True, env=env,
    ).stdout.splitlines()  # fmt: skip
    theirs = subprocess.run(
        [py, str(ref), args.bootstrap, args.registry, topic, "1000"],
        capture_output=True, check=True, env=env,
    ).stdout.splitlines()  # fmt: skip
    a = [json.loads(x) for x in ours]
    b = [json.loads(x) for x in theirs]
    for x in a:
        x.pop("value_schema_id")
    assert a == b, (a[:2], b[:2])
    print("kctl's first 1,000 lines equal the reference's (as JSON, minus value_schema_id)")
    times: dict[str, list[float]] = {k: [] for k in commands}
    cpu: dict[str, list[float]] = {k: [] for k in commands}
    for _ in range(args.runs):
        for name, cmd in commands.items():
            took, used = timed(cmd, env)
            times[name].append(took)
            cpu[name].append(used)
    avro, reference, plain = (
        "kctl consume -o jsonl --value-format avro",
        "reference: DeserializingConsumer + AvroDeserializer",
        "kctl consume -o jsonl (bytes)",
    )
    per_pair = [r / k for k, r in zip(times[avro], times[reference], strict=True)]
    print(f"\n{n:,} Avro records (10 fields), median of {args.runs} interleaved runs\n")
    med, cmed = table(n, times, cpu)
    print(
        f"\nkctl --value-format avro vs the reference: {med[reference] / med[avro]:.2f}x faster "
        f"(per pair: median {statistics.median(per_pair):.2f}x)"
    )
    cpu_pairs = [r / k for k, r in zip(cpu[avro], cpu[reference], strict=True)]
    print(
        f"in CPU time: {cmed[reference] / cmed[avro]:.2f}x less "
        f"(per pair: median {statistics.median(cpu_pairs):.2f}x)"
    )
    print(
        f"decoding cost: {(med[avro] - med[plain]) / n * 1e6:.2f} µs/record of wall time, "
        f"{(cmed[avro] - cmed[plain]) / n * 1e6:.2f} µs/record of CPU (avro minus bytes)"
    )
    all_runs(times, cpu)


if __name__ == "__main__":
    main()
