"""Confluent's wire format (kctl.schemas.wire) against confluent-kafka's own framing, and the
subject naming strategies (kctl.schemas.codec): pure, no registry."""

from __future__ import annotations

import io
import json

import pytest
from confluent_kafka.schema_registry._sync.protobuf import ProtobufSerializer

from kctl.schemas import wire
from kctl.schemas.codec import record_name, subject_for
from kctl.schemas.model import AVRO, JSON, PROTOBUF, DecodeError, Schema, SchemaError


def confluent_indexes(indexes: list[int]) -> bytes:
    buf = io.BytesIO()
    ProtobufSerializer._encode_varints(buf, indexes)
    return buf.getvalue()


def test_parse_header() -> None:
    data = b"\x00\x00\x00\x01\x02payload"
    assert wire.parse(data) == (258, 5)
    assert wire.header(258) == data[:5]
    assert wire.frame(258, b"payload") == data


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty value: not the Schema Registry wire format"),
        (b'{"a":1}', "not the Schema Registry wire format: first byte 0x7b"),
        (b"\x01\x00\x00\x00\x01", "not the Schema Registry wire format: first byte 0x01"),
        (b"\x00\x00\x01", "not the Schema Registry wire format: 3 bytes, the header alone is 5"),
    ],
)
def test_parse_refuses(data: bytes, message: str) -> None:
    with pytest.raises(DecodeError) as err:
        wire.parse(data)
    assert str(err.value) == message


@pytest.mark.parametrize(
    "indexes", [[0], [1], [1, 0], [0, 2, 5], [63], [64], [300, 1], [0, 0], [2**31 - 1]]
)
def test_message_indexes_match_confluent(indexes: list[int]) -> None:
    written = confluent_indexes(indexes)
    assert wire.indexes_bytes(indexes) == written
    framed = wire.frame(7, b"xyz", indexes)
    schema_id, offset = wire.parse(framed)
    assert schema_id == 7
    read, end = wire.read_indexes(framed, offset)
    assert read == indexes
    assert framed[end:] == b"xyz"


def test_message_indexes_single_zero_byte() -> None:
    assert wire.indexes_bytes([0]) == b"\x00"
    assert wire.read_indexes(b"\x00\x00\x00\x00\x01\x00rest") == ([0], 6)


@pytest.mark.parametrize(
    ("tail", "message"),
    [
        (b"", "truncated message-index path"),
        (b"\x04\x02", "truncated message-index path"),
        (b"\x03", "malformed message-index path (a count of -2)"),
        (b"\x02\x01", "malformed message-index path (an index of -1)"),
        (b"\xff" * 11, "malformed message-index path (a varint longer than 10 bytes)"),
    ],
)
def test_message_indexes_refused(tail: bytes, message: str) -> None:
    with pytest.raises(DecodeError) as err:
        wire.read_indexes(b"\x00\x00\x00\x00\x01" + tail)
    assert str(err.value).startswith(message)


def test_schema_id_range() -> None:
    assert wire.parse(wire.header(2**31 - 1)) == (2**31 - 1, 5)
    with pytest.raises(ValueError):
        wire.header(2**31)


def test_subject_strategies() -> None:
    assert subject_for("topic", "orders", False) == "orders-value"
    assert subject_for("topic", "orders", True) == "orders-key"
    assert subject_for("record", "orders", False, "kctl.test.Order") == "kctl.test.Order"
    assert (
        subject_for("topic-record", "orders", True, "kctl.test.Order") == "orders-kctl.test.Order"
    )
    assert subject_for("TopicRecordNameStrategy", "t", False, "N") == "t-N"
    with pytest.raises(ValueError):
        subject_for("nope", "t", False, "N")
    with pytest.raises(ValueError):
        subject_for("record", "t", False)


def test_record_names() -> None:
    avro = {"type": "record", "name": "Order", "namespace": "kctl.test", "fields": []}
    assert record_name(Schema(AVRO, json.dumps(avro))) == "kctl.test.Order"
    avro_full = {"type": "record", "name": "a.b.C", "namespace": "ignored", "fields": []}
    assert record_name(Schema(AVRO, json.dumps(avro_full))) == "a.b.C"
    proto = (
        'syntax = "proto3";\n// message Commented {}\npackage kctl.test;\n'
        "message First { message Inner { int32 a = 1; } }\nmessage Second { string b = 1; }\n"
    )
    assert record_name(Schema(PROTOBUF, proto)) == "kctl.test.First"
    assert record_name(Schema(PROTOBUF, proto), "Second") == "kctl.test.Second"
    assert record_name(Schema(PROTOBUF, proto), "kctl.test.First.Inner") == "kctl.test.First.Inner"
    assert record_name(Schema(JSON, '{"title": "Person", "type": "object"}')) == "Person"
    with pytest.raises(SchemaError):
        record_name(Schema(JSON, '{"type": "object"}'))
    with pytest.raises(SchemaError):
        record_name(Schema(AVRO, '"string"'))
