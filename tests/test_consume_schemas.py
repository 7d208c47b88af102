"""kctl consume of Schema Registry formats (Avro, Protobuf, JSON Schema) on the real cluster and
the real registry (fixture ``schema_registry``): records written by confluent-kafka's own
serializers, which kctl did not write, read back field for field as kctl renders them
(docs/schema-formats.md), with schema ids and Protobuf message names; records that do not
decode; a registry that cannot be reached; one GET per schema id; a registry restarted under a
running ``consume --follow``."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from typing import Any

import pytest
from conftest import unique
from schema_support import apicurio_3, confluent_client, counted_kctl, data_protos

AVRO_V1 = {
    "type": "record",
    "name": "Order",
    "namespace": "kctl.consume.test",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "qty", "type": "int"},
        {"name": "sku", "type": "string"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "created", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    ],
}
# v2: a field added with a default (a backward-compatible evolution)
AVRO_V2 = {**AVRO_V1, "fields": [*AVRO_V1["fields"], {"name": "channel", "type": "string",
                                                       "default": "web"}]}  # fmt: skip

JSON_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Shipment",
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "to": {"type": "string"},
        "items": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["id", "to"],
}

CREATED_MS = 1_764_115_200_123  # 2025-11-26T00:00:00.123Z
CREATED_TEXT = "2025-11-26T00:00:00.123Z"


def produce_raw(
    bootstrap: str, topic: str, records: list[tuple[bytes | None, bytes | None]]
) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for key, value in records:
        p.produce(topic, value=value, key=key)
    assert p.flush(15) == 0


def avro_bytes(url: str, topic: str, schema: dict[str, Any], values: list[dict]) -> list[bytes]:
    """What confluent-kafka's AvroSerializer writes for ``values`` (registering ``schema`` under
    the topic's value subject)."""
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    ser = AvroSerializer(confluent_client(url), json.dumps(schema))
    ctx = SerializationContext(topic, MessageField.VALUE)
    return [ser(v, ctx) for v in values]


def json_bytes(url: str, topic: str, values: list[dict]) -> list[bytes]:
    from confluent_kafka.schema_registry.json_schema import JSONSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    ser = JSONSerializer(json.dumps(JSON_SCHEMA), confluent_client(url))
    ctx = SerializationContext(topic, MessageField.VALUE)
    return [ser(v, ctx) for v in values]


def schema_id(data: bytes) -> int:
    return int.from_bytes(data[1:5], "big")


def read_lines(proc: subprocess.Popen, n: int, timeout: float = 60) -> list[dict]:
    """The next ``n`` JSON lines of a running kctl, waiting at most ``timeout`` seconds."""
    assert proc.stdout is not None
    got: queue.Queue[str] = queue.Queue()
    out = proc.stdout

    def pump() -> None:
        for _ in range(n):
            got.put(out.readline())

    threading.Thread(target=pump, daemon=True).start()
    docs = []
    for _ in range(n):
        try:
            line = got.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"kctl printed {len(docs)} of {n} lines in {timeout}s")
        assert line, "kctl's stdout closed"
        docs.append(json.loads(line))
    return docs


def lines(r: Any) -> list[dict]:
    return [json.loads(line) for line in r.stdout.splitlines()]


@pytest.fixture
def sr_kctl(kctl, schema_registry):
    """kctl with the session's registry in KCTL_SCHEMA_REGISTRY_URL."""

    def run(*args: str, **kw: Any) -> Any:
        return kctl(*args, env={"KCTL_SCHEMA_REGISTRY_URL": schema_registry}, **kw)

    return run


@pytest.fixture(scope="module")
def proto_classes(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """tests/data/schemas/order.proto compiled by grpc_tools' protoc (--python_out) into a
    temporary package: the classes confluent-kafka's ProtobufSerializer writes with."""
    return data_protos(tmp_path_factory.mktemp("proto-gen"))[0]


def test_avro_records_of_confluents_serializer_read_as_json_with_their_schema_ids(
    sr_kctl, new_topic, bootstrap, schema_registry
):
    topic = new_topic(partitions=1)
    v1 = [
        {"id": 1, "qty": 2, "sku": "A-1", "note": None, "created": CREATED_MS},
        {"id": 2**40, "qty": -3, "sku": "ünïcode", "note": "gift", "created": CREATED_MS + 1},
    ]
    v2 = [{"id": 3, "qty": 1, "sku": "B", "note": None, "created": CREATED_MS, "channel": "app"}]
    old = avro_bytes(schema_registry, topic, AVRO_V1, v1)
    new = avro_bytes(schema_registry, topic, AVRO_V2, v2)
    assert schema_id(old[0]) != schema_id(new[0])
    produce_raw(bootstrap, topic, [(b"k1", old[0]), (None, old[1]), (b"k3", new[0])])
    r = sr_kctl("consume", topic, "-o", "jsonl", "--value-format", "avro")
    assert r.code == 0, r
    docs = lines(r)
    # each record read with the schema it was written with (v1 records have no channel)
    assert [d["value"] for d in docs] == [
        {"id": 1, "qty": 2, "sku": "A-1", "note": None, "created": CREATED_TEXT},
        {"id": 2**40, "qty": -3, "sku": "ünïcode", "note": "gift",
         "created": "2025-11-26T00:00:00.124Z"},
        {"id": 3, "qty": 1, "sku": "B", "note": None, "created": CREATED_TEXT, "channel": "app"},
    ]  # fmt: skip
    assert [d["value_schema_id"] for d in docs] == [schema_id(old[0])] * 2 + [schema_id(new[0])]
    assert [d["key"] for d in docs] == ["k1", None, "k3"]
    assert all("error" not in d and "value_message" not in d for d in docs)
    assert list(docs[0]) == [
        "topic", "partition", "offset", "timestamp", "timestamp_type", "key", "value", "headers",
        "leader_epoch", "value_schema_id",
    ]  # fmt: skip
    # the other outputs: the value as compact JSON text; template fields for the schema id
    r = sr_kctl("consume", topic, "-o", "plain", "--value-format", "avro", "-n", "1")
    assert r.code == 0, r
    assert json.loads(r.stdout) == docs[0]["value"]
    r = sr_kctl("consume", topic, "--value-format", "avro", "-n", "1",
                "--template", "{offset} {value_schema_id} {value_message}|{value}")  # fmt: skip
    assert r.code == 0, r
    head, value = r.stdout.rstrip("\n").split("|", 1)
    assert head == f"0 {schema_id(old[0])} " and json.loads(value) == docs[0]["value"]
    r = sr_kctl("consume", topic, "-o", "table", "--value-format", "avro")
    assert r.code == 0, r
    assert '"sku":"B"' in r.stdout and r.stdout.count("\n") == 4


def test_json_schema_records_read_as_their_json(sr_kctl, new_topic, bootstrap, schema_registry):
    topic = new_topic(partitions=1)
    values = [{"id": 7, "to": "Berlin", "items": ["a", "b"]}, {"id": 8, "to": "Oslo"}]
    data = json_bytes(schema_registry, topic, values)
    produce_raw(bootstrap, topic, [(None, d) for d in data])
    r = sr_kctl("consume", topic, "-o", "jsonl", "--value-format", "json-schema")
    assert r.code == 0, r
    docs = lines(r)
    assert [d["value"] for d in docs] == values
    assert [d["value_schema_id"] for d in docs] == [schema_id(data[0])] * 2


def test_protobuf_records_read_with_message_names_and_nested_index_paths(
    sr_kctl, new_topic, bootstrap, schema_registry, proto_classes
):
    """Classes generated by protoc, serialized by confluent-kafka's ProtobufSerializer (which
    registers common.proto as a reference); kctl decodes from the registry's .proto text
    alone, in the canonical proto3 JSON mapping (json_format.MessageToDict's)."""
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    from google.protobuf import json_format

    pb = proto_classes
    topic = new_topic(partitions=1)
    order = pb.Order(id="o-1", big=2**62, blob=b"\x00\xff", status=pb.Order.PAID,
                     email="a@example.com", score=1.5, flag=True, ids=[1, -2])  # fmt: skip
    order.lines.add(sku="S", qty=2).price.units = 5
    order.counts["x"] = 3
    order.created.FromMilliseconds(CREATED_MS)
    order.header.tags["region"] = "eu"
    line = pb.Order.Line(sku="nested", qty=9)
    conf = {"use.deprecated.format": False}
    client = confluent_client(schema_registry)
    top = ProtobufSerializer(pb.Order, client, conf)
    nested = ProtobufSerializer(pb.Order.Line, client, conf)
    ctx = SerializationContext(topic, MessageField.VALUE)
    a, b = top(order, ctx), nested(line, ctx)
    produce_raw(bootstrap, topic, [(b"o", a), (b"l", b)])
    for fmt in ("protobuf", "schema-registry"):
        r = sr_kctl("consume", topic, "-o", "jsonl", "--value-format", fmt)
        assert r.code == 0, r
        first, second = lines(r)
        assert first["value"] == json_format.MessageToDict(order)
        assert first["value"]["big"] == str(2**62) and first["value"]["status"] == "PAID"
        assert first["value_message"] == "kctl.test.Order"
        assert first["value_schema_id"] == schema_id(a)
        assert second["value"] == {"sku": "nested", "qty": 9}
        assert second["value_message"] == "kctl.test.Order.Line"


def test_schema_registry_format_takes_each_records_type_from_its_id(
    sr_kctl, new_topic, bootstrap, schema_registry
):
    """One topic holding Avro and JSON Schema records (as a topic migrated between formats
    can): --value-format schema-registry decodes each as its schema's type; --value-format
    avro refuses the JSON Schema record (exit 3) without stopping."""
    topic = new_topic(partitions=1)
    avro = avro_bytes(schema_registry, unique("src"), AVRO_V1,
                      [{"id": 1, "qty": 1, "sku": "x", "note": "n", "created": CREATED_MS}])  # fmt: skip
    js = json_bytes(schema_registry, unique("src"), [{"id": 2, "to": "Rome"}])
    produce_raw(bootstrap, topic, [(None, avro[0]), (None, js[0])])
    r = sr_kctl("consume", topic, "-o", "jsonl", "--value-format", "schema-registry")
    assert r.code == 0, r
    docs = lines(r)
    assert docs[0]["value"]["sku"] == "x" and docs[1]["value"] == {"id": 2, "to": "Rome"}
    assert [d["value_message"] for d in docs] == [None, None]
    r = sr_kctl("consume", topic, "-o", "jsonl", "--value-format", "avro")
    assert r.code == 3, r
    docs = lines(r)
    assert docs[0]["value"]["sku"] == "x"
    assert docs[1]["value_encoding"] == "base64" and "error" in docs[1]
    assert r.stderr.endswith("kctl: warning: 1 record(s) could not be decoded\n")


def test_records_that_do_not_decode_are_shown_raw_counted_and_exit_3(
    sr_kctl, new_topic, bootstrap, schema_registry
):
    import base64

    topic = new_topic(partitions=1)
    good = avro_bytes(schema_registry, topic, AVRO_V1,
                      [{"id": 1, "qty": 1, "sku": "ok", "note": None, "created": CREATED_MS}])[0]  # fmt: skip
    unknown = b"\x00\x7f\xff\xff\xf0" + good[5:]  # an id no registry holds
    bad = [b"plain text", unknown, good[:7], b""]
    produce_raw(bootstrap, topic, [(b"a", good), *((b"b", v) for v in bad), (b"c", None),
                                   (b"d", good)])  # fmt: skip
    r = sr_kctl("consume", topic, "-o", "jsonl", "--value-format", "avro")
    assert r.code == 3, r
    docs = lines(r)
    assert len(docs) == 7  # the stream went on past every bad record
    assert docs[0]["value"]["sku"] == "ok" and docs[-1]["value"]["sku"] == "ok"
    assert docs[5]["value"] is None and "error" not in docs[5]  # a tombstone is no failure
    for d, raw in zip(docs[1:5], bad, strict=True):
        assert base64.b64decode(d["value"]) == raw
        assert d["value_encoding"] == "base64" and d["error"].startswith("value ")
    assert docs[2]["value_schema_id"] == 0x7FFFFFF0  # the id the bytes name, though unknown
    assert docs[1]["value_schema_id"] is None
    assert r.stderr.endswith("kctl: warning: 4 record(s) could not be decoded\n")
    # the other outputs: a warning per record on stderr, the same count and exit code
    r = sr_kctl("consume", topic, "-o", "table", "--value-format", "avro")
    assert r.code == 3 and r.stderr.count("could not be decoded as avro") == 4, r
    assert r.stderr.endswith("kctl: warning: 4 record(s) could not be decoded\n")


def test_an_unreachable_registry_is_one_line_naming_it_exit_1(kctl, new_topic, bootstrap):
    topic = new_topic(partitions=1)
    produce_raw(bootstrap, topic, [(None, b"\x00\x00\x00\x00\x01\x02")])
    url = "http://127.0.0.1:9/apis/ccompat/v7"
    r = kctl("consume", topic, "--value-format", "avro", env={"KCTL_SCHEMA_REGISTRY_URL": url})
    assert r.code == 1, r
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("kctl: error: ")
    assert url in r.stderr and r.stdout == ""
    # without a registry format the registry is never contacted
    r = kctl("consume", topic, "--value-format", "hex", env={"KCTL_SCHEMA_REGISTRY_URL": url})
    assert r.code == 0 and r.stdout == "000000000102\n", r
    # a registry format and no registry anywhere: a usage error naming the ways to give one
    r = kctl("consume", topic, "--value-format", "avro")
    assert r.code == 2 and "KCTL_SCHEMA_REGISTRY_URL" in r.stderr, r


def test_one_request_per_schema_id_however_many_records(
    kctl_env, new_topic, bootstrap, schema_registry
):
    topic = new_topic(partitions=2)
    v1 = avro_bytes(schema_registry, topic, AVRO_V1, [
        {"id": i, "qty": i, "sku": f"s{i}", "note": None, "created": CREATED_MS} for i in range(300)
    ])  # fmt: skip
    v2 = avro_bytes(schema_registry, topic, AVRO_V2, [
        {"id": i, "qty": i, "sku": "x", "note": "y", "created": CREATED_MS, "channel": "c"}
        for i in range(300)
    ])  # fmt: skip
    produce_raw(bootstrap, topic, [(b"k", v) for pair in zip(v1, v2, strict=True) for v in pair])
    env = {**kctl_env, "KCTL_SCHEMA_REGISTRY_URL": schema_registry}
    r, sent = counted_kctl(
        env, "consume", topic, "-o", "jsonl", "--value-format", "avro", "--key-format", "string"
    )
    assert len(r.stdout.splitlines()) == 600
    gets = {path: n for (method, path), n in sent.items() if method == "GET"}
    by_id = {p: n for p, n in gets.items() if "/schemas/ids/" in p}
    assert sorted(int(p.split("/ids/")[1].split("?")[0].split("/")[0]) for p in by_id) == sorted(
        {schema_id(v1[0]), schema_id(v2[0])}
    )
    assert set(by_id.values()) == {1}, sent
    assert sum(sent.values()) <= 4, sent  # the ids, perhaps a reference or two: never per record


def test_a_registry_restarted_under_a_running_follow(kctl_env, new_topic, bootstrap, tmp_path):
    """A registry of the test's own (kctl.local.registry, in memory): consume --follow reads
    records, the registry stops and starts again on the same port (empty: the schemas are
    registered again, plus a new one), more records come, and the running consume prints them
    (the new id asked of the restarted registry)."""
    from kctl.local import registry

    state = tmp_path / "registry"
    port = registry.free_port()
    info = registry.start(state, port=port)
    proc = None
    try:
        topic = new_topic(partitions=1)
        first = avro_bytes(info.url, topic, AVRO_V1,
                           [{"id": 1, "qty": 1, "sku": "before", "note": None,
                             "created": CREATED_MS}])  # fmt: skip
        produce_raw(bootstrap, topic, [(None, first[0])])
        env = {**kctl_env, "KCTL_SCHEMA_REGISTRY_URL": info.url}
        proc = subprocess.Popen(
            [sys.executable, "-m", "kctl", "consume", topic, "-f", "-o", "jsonl",
             "--value-format", "avro"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        got = read_lines(proc, 1)
        assert got[0]["value"]["sku"] == "before"
        registry.stop(state)
        info = registry.start(state, port=port)
        # in memory: register again; the evolved schema is new to the running consume
        again = avro_bytes(info.url, topic, AVRO_V1, [{"id": 2, "qty": 2, "sku": "after",
                                                        "note": None, "created": CREATED_MS}])  # fmt: skip
        evolved = avro_bytes(info.url, topic, AVRO_V2, [{"id": 3, "qty": 3, "sku": "evolved",
                                                          "note": None, "created": CREATED_MS,
                                                          "channel": "app"}])  # fmt: skip
        produce_raw(bootstrap, topic, [(None, again[0]), (None, evolved[0])])
        got += read_lines(proc, 2)
        assert [d["value"]["sku"] for d in got] == ["before", "after", "evolved"]
        assert got[2]["value"]["channel"] == "app"
        assert got[2]["value_schema_id"] == schema_id(evolved[0])
        assert all("error" not in d for d in got)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(20)
        registry.stop(state)


def test_the_batch_way_writes_the_same_bytes_as_record_by_record(
    new_topic, bootstrap, schema_registry, monkeypatch
):
    """JsonLinesWriter's one-``%``-per-batch way for decoded values (kctl.formatters.stream
    _typed_block) against its record-by-record objects, on records read from the broker:
    keys present, absent and needing escapes, a tombstone, Protobuf's message field."""
    import io

    from confluent_kafka import Consumer, TopicPartition

    from kctl.formatters import stream
    from kctl.registry.client import RegistryClient
    from kctl.schemas.codec import RecordDecoder

    topic = new_topic(partitions=1)
    data = avro_bytes(schema_registry, topic, AVRO_V1, [
        {"id": i, "qty": i, "sku": f'q"\\{i}\n', "note": None if i % 2 else "é",
         "created": CREATED_MS + i} for i in range(5)
    ])  # fmt: skip
    produce_raw(bootstrap, topic, [(b"k\t0", data[0]), (None, data[1]), (b"k2", None),
                                   ("ключ".encode(), data[2]), (b"", data[3])])  # fmt: skip
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("g"),
                  "enable.auto.commit": False})  # fmt: skip
    c.assign([TopicPartition(topic, 0, 0)])
    msgs: list[Any] = []
    while len(msgs) < 5:
        msgs += [m for m in c.consume(10, 5.0) if not m.error()]
    c.close()
    client = RegistryClient(schema_registry)
    outputs = []
    made: list[bytes | None] = []
    real = stream._typed_block
    for fmt in ("avro", "schema-registry"):
        for batch_way in (True, False):
            if batch_way:  # it must have taken the batch way
                monkeypatch.setattr(
                    stream, "_typed_block", lambda *a: made.append(real(*a)) or made[-1]
                )
            else:
                monkeypatch.setattr(stream, "_typed_block", lambda *a: None)
            out = io.BytesIO()
            w = stream.JsonLinesWriter(
                out, "string", fmt, codecs=lambda f: RecordDecoder(client, f)
            )
            assert w.write(msgs) == 5
            outputs.append(out.getvalue())
            monkeypatch.undo()
    assert len(made) == 2 and None not in made
    assert outputs[0] == outputs[1] and outputs[2] == outputs[3]
    assert b'"value_message":null' in outputs[2] and b"value_message" not in outputs[0]
    docs = [json.loads(x) for x in outputs[0].splitlines()]
    assert [d["key"] for d in docs] == ["k\t0", None, "k2", "ключ", ""]
    assert docs[2]["value"] is None and docs[2]["value_schema_id"] is None


def test_records_of_a_deleted_subject_decode_until_it_is_deleted_permanently(
    sr_kctl, new_topic, bootstrap, schema_registry, registry_version
):
    """A soft-deleted subject's schemas stay readable by id (what consumers of old records
    need); after the permanent delete the id is gone on Apicurio 2.6: the record is shown raw
    with an error naming the id, and the exit code is 3. Apicurio 3 keeps answering the id (the
    content outlives the subject until its hourly orphan cleanup): the record still decodes."""
    topic = new_topic(partitions=1)
    schema = {
        "type": "record",
        "name": "Gone" + unique("r").replace("-", "_"),  # content no other subject shares
        "fields": [{"name": "a", "type": "int"}],
    }
    (value,) = avro_bytes(schema_registry, topic, schema, [{"a": 5}])
    produce_raw(bootstrap, topic, [(None, value)])
    subject = f"{topic}-value"
    assert sr_kctl("schemas", "delete", subject, "--yes").code == 0
    assert subject not in sr_kctl("schemas", "list", "-o", "name").stdout.split()
    r = sr_kctl("consume", topic, "-o", "jsonl", "--value-format", "avro")
    assert r.code == 0, r
    assert lines(r)[0]["value"] == {"a": 5}
    assert sr_kctl("schemas", "delete", subject, "--permanent", "--yes").code == 0
    assert subject not in sr_kctl("schemas", "list", "--deleted", "-o", "name").stdout.split()
    r = sr_kctl("consume", topic, "-o", "jsonl", "--value-format", "avro")
    if apicurio_3(registry_version):
        assert r.code == 0 and lines(r)[0]["value"] == {"a": 5}, r
        return
    assert r.code == 3, r
    (doc,) = lines(r)
    assert doc["value_schema_id"] == schema_id(value) and doc["value_encoding"] == "base64"
    assert f"schema id {schema_id(value)} is not in the registry" in doc["error"]
    assert r.stderr.endswith("kctl: warning: 1 record(s) could not be decoded\n"), r
