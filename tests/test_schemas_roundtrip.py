"""The round trip (issue 32): records written by confluent-kafka's own Schema Registry
serializers into topic A; ``kctl consume A -o jsonl --value-format F | kctl produce B
--format jsonl --value-format F --value-subject A-value`` writes values (and keys) on B that
are byte-identical to A's, read raw with a plain Consumer. Real cluster, real registry
(Apicurio, fixture ``schema_registry``)."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Run, unique
from schema_support import confluent_client, protoc_module, registry_kctl
from test_produce import read_all

AVRO_VALUE = {
    "type": "record",
    "name": "Payment",
    "namespace": "rt.v1",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "count", "type": "int"},
        {"name": "flag", "type": "boolean"},
        {"name": "ratio", "type": "float"},
        {"name": "amount", "type": "double"},
        {"name": "who", "type": "string"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "either", "type": ["null", "long", "string"], "default": None},
        {"name": "raw", "type": "bytes"},
        {"name": "state", "type": {"type": "enum", "name": "State", "symbols": ["NEW", "PAID"]}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "at_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {
            "name": "price",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 9, "scale": 2},
        },
        {"name": "uid", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": "long"}},
        {
            "name": "addr",
            "type": {
                "type": "record",
                "name": "Addr",
                "fields": [{"name": "city", "type": "string"}, {"name": "zip", "type": "int"}],
            },
        },
    ],
}
AVRO_KEY = {"type": "record", "name": "PaymentKey", "namespace": "rt.v1", "fields": [{"name": "id", "type": "long"}]}  # fmt: skip

PROTO = """\
syntax = "proto3";
package {pkg};

import "google/protobuf/timestamp.proto";

message Envelope {{
  string id = 1;
}}

message Payment {{
  int64 id = 1;
  int32 count = 2;
  bool flag = 3;
  double amount = 4;
  string who = 5;
  bytes raw = 6;
  State state = 7;
  repeated string tags = 8;
  map<string, int64> attrs = 9;
  Addr addr = 10;
  google.protobuf.Timestamp at = 11;
  oneof pick {{
    string text = 12;
    int64 number = 13;
  }}
  uint64 big = 14;
  enum State {{
    NEW = 0;
    PAID = 1;
  }}
  message Addr {{
    string city = 1;
    int32 zip = 2;
  }}
}}
"""

JSON_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Payment",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "who": {"type": "string"},
        "amount": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "addr": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "zip": {"type": "integer"}},
        },
        "note": {"type": ["string", "null"]},
    },
    "required": ["id", "who"],
}


def avro_rows(n: int) -> list[dict[str, Any]]:
    base = dt.datetime(2026, 11, 26, 2, 3, 4, 567000, tzinfo=dt.UTC)
    return [
        {
            "id": 1 << 40 | i,
            "count": -i,
            "flag": bool(i % 2),
            "ratio": i / 4,
            "amount": i * 1.1,
            "who": f"wer {i} ü ✓",
            "note": None if i % 2 else f"n{i}",
            "either": [None, i, f"s{i}"][i % 3],
            "raw": bytes(range(i % 7)),
            "state": ["NEW", "PAID"][i % 2],
            "at": base + dt.timedelta(milliseconds=i),
            "at_us": base + dt.timedelta(microseconds=i * 7),
            "day": dt.date(2026, 1, 1) + dt.timedelta(days=i),
            "price": decimal.Decimal(f"{i}.{i % 100:02d}"),
            "uid": str(uuid.UUID(int=i + 1)),
            "tags": [f"t{j}" for j in range(i % 3)],
            "attrs": {f"k{j}": j * i for j in range(i % 4)},
            "addr": {"city": f"c{i}", "zip": 10000 + i},
        }
        for i in range(12)
    ]


@pytest.fixture
def skctl(kctl_env: dict[str, str], schema_registry: str) -> Callable[..., Run]:
    return registry_kctl(kctl_env, schema_registry)


@pytest.fixture
def sr_client(schema_registry: str) -> Any:
    return confluent_client(schema_registry)


def write_with(
    bootstrap: str,
    topic: str,
    records: list[tuple[Any, Any]],
    value_serializer: Any,
    key_serializer: Any = None,
) -> None:
    """``records`` (key, value) through confluent-kafka's SerializingProducer."""
    from confluent_kafka import SerializingProducer

    conf: dict[str, Any] = {"bootstrap.servers": bootstrap, "value.serializer": value_serializer}
    if key_serializer is not None:
        conf["key.serializer"] = key_serializer
    p = SerializingProducer(conf)
    for key, value in records:
        p.produce(topic, key=key, value=value)
    assert p.flush(30) == 0


def round_trip(
    skctl: Callable[..., Run],
    bootstrap: str,
    a: str,
    b: str,
    fmt: str,
    keyed: bool,
    same: Callable[[bytes, bytes], bool] | None = None,
) -> None:
    """consume A | produce B with the subjects of A; B's raw keys and values equal A's, in
    order, partition by partition (``same``: what equal means instead of equal bytes)."""
    consume = ["consume", a, "-o", "jsonl", "--value-format", fmt]
    produce = ["produce", b, "--format", "jsonl", "--value-format", fmt]
    produce += ["--value-subject", f"{a}-value"]
    if keyed:
        consume += ["--key-format", fmt]
        produce += ["--key-format", fmt, "--key-subject", f"{a}-key"]
    out = skctl(*consume)
    assert out.code == 0, out.stderr
    assert '"error"' not in out.stdout, out.stdout[:2000]
    into = skctl(*produce, input=out.stdout)
    assert into.code == 0, into.stderr
    assert "registered" not in into.stderr  # --value-subject registers nothing
    src, dst = read_all(bootstrap, a), read_all(bootstrap, b)
    assert len(src) == len(dst) > 0
    for m, n in zip(src, dst, strict=True):
        assert (n.partition(), n.offset()) == (m.partition(), m.offset())
        if same is None:
            assert n.value() == m.value(), (m.offset(), m.value(), n.value())
        else:
            assert same(n.value(), m.value()), (m.offset(), m.value(), n.value())
        assert n.key() == m.key(), (m.offset(), m.key(), n.key())


def test_avro_records_written_by_confluents_serializer_round_trip_byte_for_byte(
    skctl: Callable[..., Run],
    new_topic: Callable[..., str],
    bootstrap: str,
    sr_client: Any,
) -> None:
    """Every Avro type kctl renders specially (unions of one and of several branches, bytes,
    enum, timestamp-millis/micros, date, decimal, uuid, array, map, nested record), keyed with
    an Avro key."""
    from confluent_kafka.schema_registry.avro import AvroSerializer

    a, b = new_topic(partitions=2, prefix="rt-avro-a"), new_topic(partitions=2, prefix="rt-avro-b")
    rows = avro_rows(12)
    write_with(
        bootstrap,
        a,
        [({"id": r["id"]}, r) for r in rows],
        AvroSerializer(sr_client, json.dumps(AVRO_VALUE)),
        AvroSerializer(sr_client, json.dumps(AVRO_KEY)),
    )
    round_trip(skctl, bootstrap, a, b, "avro", keyed=True)


def test_protobuf_records_written_by_confluents_serializer_round_trip_byte_for_byte(
    skctl: Callable[..., Run],
    new_topic: Callable[..., str],
    bootstrap: str,
    sr_client: Any,
    tmp_path: Path,
) -> None:
    """Classes generated by protoc; the second message of the file (message index [1]), nested
    message and enum, repeated, a map of one entry, int64/uint64, bytes, oneof and
    google.protobuf.Timestamp (a well-known type the serializer references)."""
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer

    name = "rt_" + unique("p").replace("-", "_")
    pb = protoc_module(tmp_path, name, PROTO.format(pkg=name))
    a, b = (
        new_topic(partitions=1, prefix="rt-proto-a"),
        new_topic(partitions=1, prefix="rt-proto-b"),
    )
    msgs = []
    for i in range(8):
        m = pb.Payment(
            id=(1 << 40) + i,
            count=-i,
            flag=bool(i % 2),
            amount=i * 1.5,
            who=f"w{i} ü",
            raw=bytes(range(i)),
            state=i % 2,
            tags=[f"t{j}" for j in range(i % 3)],
            addr=pb.Payment.Addr(city=f"c{i}", zip=i),
            big=(1 << 63) + i,
        )
        if i % 2:
            m.attrs[f"k{i}"] = i
        m.at.FromMilliseconds(1_790_000_000_000 + i)
        if i % 3 == 1:
            m.text = f"x{i}"
        elif i % 3 == 2:
            m.number = i
        msgs.append((None, m))
    write_with(
        bootstrap,
        a,
        msgs,
        ProtobufSerializer(pb.Payment, sr_client, {"use.deprecated.format": False}),
    )
    round_trip(skctl, bootstrap, a, b, "protobuf", keyed=False)


def test_json_schema_records_written_by_confluents_serializer_round_trip_byte_for_byte(
    skctl: Callable[..., Run],
    new_topic: Callable[..., str],
    bootstrap: str,
    sr_client: Any,
) -> None:
    """confluent-kafka's JSONSerializer writes compact JSON (orjson), as kctl's encoder does:
    key order, non-ASCII text and numbers come back as written. Keyed with a JSON Schema key."""
    from confluent_kafka.schema_registry.json_schema import JSONSerializer

    key_schema = {
        "title": "PaymentKey",
        "type": "object",
        "properties": {"id": {"type": "integer"}},
    }
    a, b = new_topic(partitions=2, prefix="rt-json-a"), new_topic(partitions=2, prefix="rt-json-b")
    rows = [
        {
            "id": i,
            "who": f"w{i} ü ✓",
            "amount": i * 1.25,
            "tags": ["a", "b"][: i % 3],
            "addr": {"zip": i, "city": f"c{i}"},
            "note": None if i % 2 else "x",
        }
        for i in range(10)
    ]
    write_with(
        bootstrap,
        a,
        [({"id": r["id"]}, r) for r in rows],
        JSONSerializer(json.dumps(JSON_SCHEMA), sr_client),
        JSONSerializer(json.dumps(key_schema), sr_client),
    )
    round_trip(skctl, bootstrap, a, b, "json-schema", keyed=True)


# What confluent-kafka's JSONSerializer writes with the stdlib's json: its module falls back to
# json.dumps(obj, separators=(",", ":"), ensure_ascii=False) when importing orjson fails
# (confluent_kafka/schema_registry/common/json_schema.py, _HAS_ORJSON); here the import is
# made to fail, as on an interpreter without orjson.
_STDLIB_WRITER = """
import json, sys
sys.modules["orjson"] = None  # `import orjson` raises ImportError
from confluent_kafka import SerializingProducer
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.common import json_schema as common
from confluent_kafka.schema_registry.json_schema import JSONSerializer
assert common._HAS_ORJSON is False, "orjson was imported"
bootstrap, url, topic, schema = sys.argv[1:5]
p = SerializingProducer({"bootstrap.servers": bootstrap,
                         "value.serializer": JSONSerializer(schema, SchemaRegistryClient({"url": url}))})
for row in json.load(sys.stdin):
    p.produce(topic, value=row)
assert p.flush(30) == 0
"""

SMALL_FLOATS = [1e-07, -2.5e-08, 1.5e-05, 9.9e-05, 4.823040373928001e-06, 1e-4, 0.5, 1e16, 3.0]


def json_rows_with_small_floats() -> list[dict[str, Any]]:
    """Numbers whose text orjson and Python's json spell differently (1e-7 / 1e-07, 0.000015 /
    1.5e-05) and some they spell alike; non-ASCII text; nested."""
    return [
        {"id": i, "who": f"w{i} ü", "amount": x, "addr": {"zip": i, "city": "c"},
         "tags": [str(x)], "note": None}
        for i, x in enumerate(SMALL_FLOATS)
    ]  # fmt: skip


@pytest.mark.parametrize("writer", ["orjson", "stdlib-json"])
def test_json_schema_numbers_round_trip_as_each_writer_spelled_them(
    skctl: Callable[..., Run],
    new_topic: Callable[..., str],
    bootstrap: str,
    schema_registry: str,
    sr_client: Any,
    writer: str,
) -> None:
    """confluent-kafka's JSONSerializer writes floats with orjson when it can import it and
    with the stdlib's json otherwise (a subprocess where the import fails): `1e-7` or `1e-07`,
    `0.000015` or `1.5e-05`. Both come back through `consume -o jsonl | produce` as they were
    written: consume prints each number as the payload spells it, produce writes it so."""
    from confluent_kafka.schema_registry.json_schema import JSONSerializer

    a, b = new_topic(partitions=1, prefix="rt-num-a"), new_topic(partitions=1, prefix="rt-num-b")
    rows = json_rows_with_small_floats()
    if writer == "orjson":
        write_with(bootstrap, a, [(None, r) for r in rows],
                   JSONSerializer(json.dumps(JSON_SCHEMA), sr_client))  # fmt: skip
    else:
        import subprocess
        import sys

        subprocess.run(
            [sys.executable, "-c", _STDLIB_WRITER, bootstrap, schema_registry, a,
             json.dumps(JSON_SCHEMA)],
            input=json.dumps(rows), text=True, check=True, timeout=120,
        )  # fmt: skip
    written = [m.value()[5:] for m in read_all(bootstrap, a)]
    stdlib = writer == "stdlib-json"
    small = b'"amount":1e-07' if stdlib else b'"amount":1e-7'
    assert small in written[0] and (b'"amount":1.5e-05' in written[2]) == stdlib
    out = skctl("consume", a, "-o", "jsonl", "--value-format", "json-schema")
    assert out.code == 0, out.stderr
    assert small in out.stdout.encode()  # consume shows the number as the payload spells it
    round_trip(skctl, bootstrap, a, b, "json-schema", keyed=False)


def test_protobuf_maps_of_several_entries_round_trip_byte_for_byte(
    skctl: Callable[..., Run],
    new_topic: Callable[..., str],
    bootstrap: str,
    sr_client: Any,
    tmp_path: Path,
) -> None:
    """Protobuf leaves the order of a map's entries on the wire to the writer (the Python
    serializer writes them in its hash order): kctl renders the entries in the order of the
    bytes and writes them back in the JSON's order, so such a record comes back byte for byte."""
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer

    name = "rt_" + unique("m").replace("-", "_")
    pb = protoc_module(tmp_path, name, PROTO.format(pkg=name))
    a, b = new_topic(partitions=1, prefix="rt-map-a"), new_topic(partitions=1, prefix="rt-map-b")
    m = pb.Payment(id=1, who="w")
    for k in ("z", "a", "m", "b"):
        m.attrs[k] = ord(k)
    write_with(
        bootstrap,
        a,
        [(None, m)],
        ProtobufSerializer(pb.Payment, sr_client, {"use.deprecated.format": False}),
    )

    round_trip(skctl, bootstrap, a, b, "protobuf", keyed=False)
