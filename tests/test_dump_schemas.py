"""dump-segment --value-decoder schema-registry (and --key-decoder) on the segment files the
real cluster wrote for a topic of Avro and JSON Schema records (confluent-kafka's own
serializers, the real registry): each payload printed as its decoded JSON, the rest of each
line as without the decoder (which stays DumpLogSegments' text: test_dump_kafka_equal)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from test_consume_schemas import AVRO_V1, CREATED_MS, CREATED_TEXT, avro_bytes, produce_raw


def entries(text: str) -> list[str]:
    """The output's lines, split only where one of DumpLogSegments' lines starts: a record's
    raw key bytes are printed as they are and may hold a newline (an Avro key's schema id of
    10 is the byte 0x0a), which ``splitlines`` would cut the record's line at."""
    return re.split(
        r"\n(?=\| offset: |baseOffset: |Dumping |Log starting offset: )", text.rstrip("\n")
    )


def segment_of(kctl: Any, topic: str) -> Path:
    """The first segment of ``topic``'s partition 0, found through kctl cluster log-dirs (a
    broker of the test cluster on this machine)."""
    r = kctl("cluster", "log-dirs", "--topic", topic, "-o", "json")
    assert r.code == 0, r
    for d in json.loads(r.stdout):
        for rep in d["replicas"]:
            if rep.get("partition") == 0:
                seg = Path(d["log_dir"]) / f"{topic}-0" / "00000000000000000000.log"
                if seg.exists():
                    return seg
    pytest.skip("the cluster's log dirs are not on this machine")


@pytest.fixture
def typed_segment(kctl, new_topic, bootstrap, schema_registry) -> tuple[Path, list[bytes]]:
    """A segment holding two Avro records (keys in Avro too), a record that is not the wire
    format and a tombstone."""
    topic = new_topic(partitions=1)
    values = avro_bytes(schema_registry, topic, AVRO_V1, [
        {"id": 1, "qty": 2, "sku": "A", "note": None, "created": CREATED_MS},
        {"id": 2, "qty": 3, "sku": "B", "note": "n", "created": CREATED_MS},
    ])  # fmt: skip
    key_schema = {"type": "record", "name": "OrderKey", "namespace": "kctl.dump.test",
                  "fields": [{"name": "id", "type": "long"}]}  # fmt: skip
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.avro import AvroSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    ser = AvroSerializer(SchemaRegistryClient({"url": schema_registry}), json.dumps(key_schema))
    keys = [ser({"id": i}, SerializationContext(topic, MessageField.KEY)) for i in (1, 2)]
    produce_raw(bootstrap, topic, [(keys[0], values[0]), (keys[1], values[1]),
                                   (b"plain-key", b"not avro"), (b"gone", None)])  # fmt: skip
    return segment_of(kctl, topic), values


def test_payloads_print_as_decoded_json_and_the_rest_as_without_a_decoder(
    kctl, typed_segment, schema_registry
):
    seg, _ = typed_segment
    env = {"KCTL_SCHEMA_REGISTRY_URL": schema_registry}
    plain = kctl("dump-segment", str(seg), "--print-data-log")
    assert plain.code == 0, plain
    r = kctl("dump-segment", str(seg), "--print-data-log", "--value-decoder", "schema-registry",
             env=env)  # fmt: skip
    assert r.code == 3, r  # "not avro" did not decode
    assert r.stderr.endswith("kctl: warning: 1 record(s) could not be decoded\n")
    assert "offset 2: value could not be decoded" in r.stderr
    ours, theirs = entries(r.stdout), entries(plain.stdout)
    assert len(ours) == len(theirs)
    records = [(a, b) for a, b in zip(ours, theirs, strict=True) if "| offset:" in b]
    assert len(records) == 4
    expected = [
        {"id": 1, "qty": 2, "sku": "A", "note": None, "created": CREATED_TEXT},
        {"id": 2, "qty": 3, "sku": "B", "note": "n", "created": CREATED_TEXT},
    ]
    for (a, b), value in zip(records[:2], expected, strict=False):
        head, payload = a.split(" payload: ")
        assert head == b.split(" payload: ")[0]  # metadata and the key (no key decoder) alike
        assert json.loads(payload) == value
        assert payload == json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    # not decodable: printed as without a decoder; a tombstone has no payload either way
    assert records[2][0] == records[2][1] and records[3][0] == records[3][1]
    assert all(a == b for a, b in zip(ours, theirs, strict=True) if "| offset:" not in b)


def test_keys_decode_with_key_decoder_and_json_output_carries_ids(
    kctl, typed_segment, schema_registry
):
    seg, values = typed_segment
    env = {"KCTL_SCHEMA_REGISTRY_URL": schema_registry}
    r = kctl("dump-segment", str(seg), "--key-decoder", "avro", "--value-decoder", "avro",
             "-o", "json", env=env)  # fmt: skip
    assert r.code == 3, r
    # offsets 2 and 3 have keys that are not Avro (and 2 a value too): two records
    assert r.stderr.endswith("kctl: warning: 2 record(s) could not be decoded\n"), r
    assert "offset 2: key could not be decoded" in r.stderr and "offset 3: key" in r.stderr
    recs = [rec for batch in json.loads(r.stdout) for rec in batch.get("records", [])]
    assert [rec["key"] for rec in recs[:2]] == [{"id": 1}, {"id": 2}]
    assert recs[0]["payload"]["sku"] == "A" and recs[1]["payload"]["note"] == "n"
    assert recs[0]["value_schema_id"] == int.from_bytes(values[0][1:5], "big")
    assert isinstance(recs[0]["key_schema_id"], int)
    assert recs[2]["key"] == "plain-key" and recs[2]["payload"] == "not avro"
    assert "could not be decoded" in recs[2]["error"]
    assert recs[3]["payload"] is None and recs[3]["key"] == "gone"
    assert recs[3]["error"].startswith("key could not be decoded")


def test_an_unknown_decoder_and_a_missing_registry_are_usage_errors(kctl, typed_segment):
    seg, _ = typed_segment
    r = kctl("dump-segment", str(seg), "--value-decoder", "kafka.serializer.StringDecoder")
    assert r.code == 2 and "schema-registry" in r.stderr, r
    r = kctl("dump-segment", str(seg), "--value-decoder", "schema-registry")
    assert r.code == 2 and "KCTL_SCHEMA_REGISTRY_URL" in r.stderr, r


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("--print-data-log",),
        ("--print-data-log", "--key-decoder", "avro"),
        ("-o", "json"),
        ("-o", "jsonl"),
    ],
)
def test_an_unreachable_registry_is_one_line_naming_it_exit_1(kctl, typed_segment, args):
    """Asked before anything is printed: stdout stays empty (no `Dumping ...`, no `Log
    starting offset: 0`), one line on stderr, exit 1."""
    seg, _ = typed_segment
    url = "http://127.0.0.1:9/apis/ccompat/v7"
    r = kctl("dump-segment", str(seg), "--value-decoder", "schema-registry", *args,
             env={"KCTL_SCHEMA_REGISTRY_URL": url})  # fmt: skip
    assert r.code == 1, r
    assert r.stdout == "", r
    assert r.stderr == (
        f"kctl: error: cannot reach the schema registry at {url} (Connection refused)\n"
    ), r
