"""kctl produce of JSON lines as Avro (Schema Registry wire format) against the Python script an
operator would write with confluent-kafka's SerializingProducer + AvroSerializer, in the same
run on the same cluster and registry.

    .venv/bin/python benchmarks/schemas_produce.py --bootstrap 127.0.0.1:9092 \\
        --registry http://127.0.0.1:8081/apis/ccompat/v7 [--records 1000000] [--runs 3]

Once: N JSON lines are written to a file, each the JSON data of one record of the Avro schema
benchmarks/schemas_consume.py reads (10 fields: longs and ints, strings, a ["null","string"]
union, a timestamp-millis written as kctl consume renders it, ISO-8601 UTC with "Z"), about
230 bytes a line; the schema is registered once under a subject S. Then, interleaved, --runs
times each, every run into a fresh one-partition topic (deleted afterwards):

- ``kctl produce T --value-format avro --value-subject S < lines``;
- the reference script (REFERENCE below): SerializingProducer + AvroSerializer (the schema
  looked up as S's latest version, nothing registered), per line ``json.loads``, the timestamp
  parsed back to a datetime (what AvroSerializer takes), ``produce`` with a delivery callback
  counting failures, ``poll(0)``, and ``flush()`` at the end; the producer gets kctl's
  settings (acks=all, idempotence, linger.ms 50, a 1,000,000-message queue).

Before timing, 1,000 lines through each are compared: the values on both topics must be the
same bytes (the same schema id, the same Avro payload). Whole-process wall time (the process
start, the registry lookup and the final flush included), medians of interleaved runs, the
ratio per pair, and µs/record.
"""

from __future__ import annotations

import json
import statistics
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

from confluent_kafka import SerializingProducer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer

bootstrap, registry, topic, subject = sys.argv[1:5]
sr = SchemaRegistryClient({"url": registry})
schema = sr.get_latest_version(subject).schema
serializer = AvroSerializer(
    sr,
    schema.schema_str,
    conf={
        "auto.register.schemas": False,
        "use.latest.version": True,
        "subject.name.strategy": lambda ctx, name: subject,
    },
)
failed = 0


def delivered(err, msg):
    global failed
    if err is not None:
        failed += 1


producer = SerializingProducer({
    "bootstrap.servers": bootstrap,
    "acks": "all",
    "enable.idempotence": True,
    "linger.ms": 50,
    "queue.buffering.max.messages": 1_000_000,
    "value.serializer": serializer,
})
for line in sys.stdin.buffer:
    value = json.loads(line)
    value["created"] = datetime.fromisoformat(value["created"].replace("Z", "+00:00"))
    while True:
        try:
            producer.produce(topic, value=value, on_delivery=delivered)
            break
        except BufferError:
            producer.poll(0.05)
    producer.poll(0)
left = producer.flush(60)
sys.exit(1 if failed or left else 0)
"""


def write_lines(path: Path, n: int) -> None:
    """N records' JSON data, one per line, as kctl consume renders them."""
    from datetime import UTC, datetime

    with path.open("w") as out:
        for i in range(n):
            value = order(i)
            created = datetime.fromtimestamp(value["created"] / 1000, UTC)
            value["created"] = created.isoformat(timespec="milliseconds").replace("+00:00", "Z")
            out.write(json.dumps(value, separators=(",", ":")) + "\n")


class Topics:
    """Fresh one-partition topics, deleted at the end."""

    def __init__(self, bootstrap: str) -> None:
        from confluent_kafka.admin import AdminClient

        self.admin = AdminClient({"bootstrap.servers": bootstrap})
        self.made: list[str] = []

    def new(self, prefix: str) -> str:
        from confluent_kafka.admin import NewTopic

        name = f"{prefix}-{uuid.uuid4().hex[:8]}"
        self.admin.create_topics([NewTopic(name, 1, 1)])[name].result(30)
        self.made.append(name)
        return name

    def drop(self) -> None:
        if self.made:
            for f in self.admin.delete_topics(self.made).values():
                f.result(60)
            self.made = []


def values(bootstrap: str, topic: str, n: int) -> list[bytes]:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench", "enable.auto.commit": False})
    c.assign([TopicPartition(topic, 0, 0)])
    out: list[bytes] = []
    deadline = time.monotonic() + 60
    while len(out) < n and time.monotonic() < deadline:
        out += [m.value() for m in c.consume(1000, 0.5) if m.error() is None]
    c.close()
    return out


def main() -> None:
    args = arguments(__doc__, runs=3)
    compile_kctl()
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient

    py = sys.executable
    n = args.records
    tmp = Path(tempfile.mkdtemp(prefix="kctl-bench-sr-produce-"))
    ref = tmp / "reference.py"
    ref.write_text(REFERENCE)
    lines, sample = tmp / "lines.jsonl", tmp / "sample.jsonl"
    write_lines(lines, n)
    write_lines(sample, 1000)
    subject = f"bench-produce-{uuid.uuid4().hex[:8]}-value"
    sr = SchemaRegistryClient({"url": args.registry})
    schema_id = sr.register_schema(subject, Schema(json.dumps(SCHEMA), "AVRO"))
    size = lines.stat().st_size / n
    print(f"{n:,} lines ({size:.0f} bytes each) -> subject {subject} (id {schema_id})")
    env = kctl_env(args, tmp)
    kctl_name = "kctl produce --value-format avro --value-subject S"
    ref_name = "reference: SerializingProducer + AvroSerializer"

    def command(name: str, topic: str) -> list[str]:
        if name == kctl_name:
            return [py, "-m", "kctl", "produce", topic, "--value-format", "avro",
                    "--value-subject", subject]  # fmt: skip
        return [py, str(ref), args.bootstrap, args.registry, topic, subject]

    topics = Topics(args.bootstrap)
    try:
        written = {}
        for name in (kctl_name, ref_name):
            t = topics.new("bench-sr-check")
            timed(command(name, t), env, sample)
            written[name] = values(args.bootstrap, t, 1000)
        assert len(written[kctl_name]) == 1000
        assert written[kctl_name] == written[ref_name], "the two wrote different bytes"
        print("1,000 lines: kctl's values are byte-identical to the reference's")
        topics.drop()
        times: dict[str, list[float]] = {kctl_name: [], ref_name: []}
        cpus: dict[str, list[float]] = {kctl_name: [], ref_name: []}
        for _ in range(args.runs):
            for name in times:
                topic = topics.new("bench-sr-produce")
                took, used = timed(command(name, topic), env, lines)
                times[name].append(took)
                cpus[name].append(used)
                topics.drop()
    finally:
        topics.drop()
    per_pair = [r / k for k, r in zip(times[kctl_name], times[ref_name], strict=True)]
    print(f"\n{n:,} JSON lines -> Avro (10 fields), median of {args.runs} interleaved runs\n")
    med, cpu = table(n, times, cpus)
    print(
        f"\nkctl vs the reference: {med[ref_name] / med[kctl_name]:.2f}x faster "
        f"(per pair: median {statistics.median(per_pair):.2f}x); "
        f"CPU {cpu[ref_name] / cpu[kctl_name]:.2f}x less"
    )
    all_runs(times, cpus)


if __name__ == "__main__":
    main()
