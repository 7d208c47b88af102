"""kctl/logfmt/schemas.py: generated from Kafka 4.3.1's message JSON (tools/gen_schemas.py), and
the decodes it drives, on bytes assembled here by hand from Kafka's wire spec (never with kctl's
own writers): big-endian fixed-width ints, unsigned LEB128 varints, compact (length + 1) strings
and arrays in flexible versions, and a tagged-field section (count, then tag, size, bytes)."""

from __future__ import annotations

import importlib.util
import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from kctl.logfmt import internal, metadata
from kctl.logfmt.schemas import SCHEMAS
from kctl.logfmt.wire import DecodeError

ROOT = Path(__file__).resolve().parent.parent
MESSAGES = ROOT / "tools" / "kafka-messages" / "4.3.1"


# --- Kafka's primitives, written independently of kctl ------------------------------------------


def uv(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def i8(n: int) -> bytes:
    return struct.pack(">b", n)


def i16(n: int) -> bytes:
    return struct.pack(">h", n)


def i32(n: int) -> bytes:
    return struct.pack(">i", n)


def i64(n: int) -> bytes:
    return struct.pack(">q", n)


def s16(text: str) -> bytes:
    """A classic (non-flexible) string: int16 length, UTF-8."""
    raw = text.encode()
    return i16(len(raw)) + raw


def cs(text: str | None) -> bytes:
    """A compact string: uvarint(length + 1), 0 for null."""
    if text is None:
        return uv(0)
    raw = text.encode()
    return uv(len(raw) + 1) + raw


def tags(*fields: tuple[int, bytes]) -> bytes:
    return uv(len(fields)) + b"".join(uv(t) + uv(len(b)) + b for t, b in fields)


UUID_A = bytes(range(16))
UUID_A_TEXT = "AAECAwQFBgcICQoLDA0ODw"  # URL-safe base64, no padding, as Kafka prints a Uuid
UUID_B = bytes(range(16, 32))
UUID_B_TEXT = "EBESExQVFhcYGRobHB0eHw"


def metadata_record(api_key: int, version: int, body: bytes) -> bytes:
    """A __cluster_metadata record value: frame version 1, api key, version, then the message."""
    return uv(1) + uv(api_key) + uv(version) + body


# --- the generator ----------------------------------------------------------------------------


def test_generator_reproduces_the_committed_schemas() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_schemas.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr


def test_input_is_pinned_with_provenance() -> None:
    text = (MESSAGES / "PROVENANCE.md").read_text()
    assert "4.3.1" in text and "Apache License" in text
    assert len(list(MESSAGES.rglob("*.json"))) == 83


def _walk(fields, where):
    for name, ftype, versions, nullable, tagged, tag, sub in fields:
        yield f"{where}.{name}", ftype, versions, nullable, tagged, tag
        if sub:
            yield from _walk(sub, f"{where}.{name}")


def test_tags_are_ints_and_tagged_versions_within_versions() -> None:
    for name, schema in SCHEMAS.items():
        for where, _ftype, versions, _nullable, tagged, tag in _walk(schema["fields"], name):
            assert versions is not None, where
            if tagged is None:
                assert tag is None, where
                continue
            assert type(tag) is int, where
            assert versions[0] <= tagged[0] and tagged[1] <= versions[1], where


def test_every_record_type_of_kafka_4_3_is_known() -> None:
    assert metadata.RECORD_TYPES[28] == "ClearElrRecord"
    spec = importlib.util.spec_from_file_location("gen_schemas", ROOT / "tools" / "gen_schemas.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    for path in (MESSAGES / "metadata/src/main/resources/common/metadata").glob("*.json"):
        doc = gen.load(path)
        assert metadata.RECORD_TYPES[doc["apiKey"]] == doc["name"], path
    keys = internal._GROUP_KEYS
    assert keys[16] == "ConsumerGroupRegularExpressionKey"
    assert {keys[t] for t in (17, 19, 20, 21, 22, 23)} == {
        "StreamsGroupMetadataKey",
        "StreamsGroupMemberMetadataKey",
        "StreamsGroupTargetAssignmentMetadataKey",
        "StreamsGroupTargetAssignmentMemberKey",
        "StreamsGroupCurrentMemberAssignmentKey",
        "StreamsGroupTopologyKey",
    }
    assert internal._SHARE_KEYS == {0: "ShareSnapshotKey", 1: "ShareUpdateKey"}
    assert internal._SHARE_VALUES == {0: "ShareSnapshotValue", 1: "ShareUpdateValue"}
    for record_type, key in keys.items():
        assert internal._GROUP_VALUES[record_type] == key[: -len("Key")] + "Value"


# --- (a) tags that were strings: LogDirs ---------------------------------------------------


def _register_broker_v3_body(log_dirs: list[bytes]) -> bytes:
    return (
        i32(1)  # BrokerId
        + b"\x00"  # IsMigratingZkBroker (v2+)
        + UUID_B  # IncarnationId
        + i64(6)  # BrokerEpoch
        + uv(2)  # EndPoints: 1 entry
        + cs("PLAINTEXT")
        + cs("localhost")
        + struct.pack(">H", 9092)
        + i16(0)
        + uv(0)  # endpoint's tagged fields
        + uv(2)  # Features: 1 entry
        + cs("metadata.version")
        + i16(1)
        + i16(27)
        + uv(0)
        + cs(None)  # Rack
        + b"\x01"  # Fenced
        + b"\x00"  # InControlledShutdown (v1+)
        + tags((0, uv(len(log_dirs) + 1) + b"".join(log_dirs)))  # LogDirs, tag 0, v3+
    )


def test_register_broker_v3_log_dirs_is_tag_0() -> None:
    d = metadata.decode_metadata_record(metadata_record(0, 3, _register_broker_v3_body([UUID_A])))
    assert d["type"] == "RegisterBrokerRecord" and d["version"] == 3
    data = d["data"]
    assert data["log_dirs"] == [UUID_A_TEXT] and "_unknown_tags" not in data
    assert data["incarnation_id"] == UUID_B_TEXT and data["end_points"][0]["port"] == 9092
    assert data["fenced"] is True and data["rack"] is None


def test_broker_registration_change_v2_log_dirs_is_tag_2() -> None:
    body = (
        i32(3)
        + i64(42)
        + tags(
            (0, i8(-1)),  # Fenced: -1 unchanged (int8, tag 0)
            (1, i8(1)),  # InControlledShutdown (tag 1, v1+)
            (2, uv(3) + UUID_A + UUID_B),  # LogDirs (tag 2, v2+)
        )
    )
    d = metadata.decode_metadata_record(metadata_record(17, 2, body))
    assert d["type"] == "BrokerRegistrationChangeRecord"
    assert d["data"] == {
        "broker_id": 3,
        "broker_epoch": 42,
        "fenced": -1,
        "in_controlled_shutdown": 1,
        "log_dirs": [UUID_A_TEXT, UUID_B_TEXT],
    }


# --- (b) tagged-only fields are absent below their tagged versions ------------------------------


def _txn_key(transactional_id: str) -> bytes:
    return i16(0) + s16(transactional_id)


def test_transaction_log_value_v0_ongoing() -> None:
    # What the transaction coordinator writes by default: version 0, not flexible, no tags.
    value = (
        i16(0)
        + i64(4001)  # ProducerId
        + i16(7)  # ProducerEpoch
        + i32(60000)  # TransactionTimeoutMs
        + i8(1)  # TransactionStatus: Ongoing
        + i32(2)  # TransactionPartitions: 2 entries
        + s16("orders")
        + i32(2)
        + i32(0)
        + i32(3)
        + s16("payments")
        + i32(1)
        + i32(1)
        + i64(1_700_000_000_500)  # TransactionLastUpdateTimestampMs
        + i64(1_700_000_000_000)  # TransactionStartTimestampMs
    )
    d = internal.decode_transaction_record(_txn_key("txn-1"), value)
    assert d["key"] == {
        "type": "TransactionLogKey",
        "version": 0,
        "data": {"transactional_id": "txn-1"},
    }
    v = d["value"]
    assert (v["type"], v["version"]) == ("TransactionLogValue", 0)
    assert v["data"] == {
        "producer_id": 4001,
        "producer_epoch": 7,
        "transaction_timeout_ms": 60000,
        "transaction_status": 1,
        "transaction_partitions": [
            {"topic": "orders", "partition_ids": [0, 3]},
            {"topic": "payments", "partition_ids": [1]},
        ],
        "transaction_last_update_timestamp_ms": 1_700_000_000_500,
        "transaction_start_timestamp_ms": 1_700_000_000_000,
        "transaction_state": "Ongoing",
    }


def test_transaction_log_value_v1_tagged_fields() -> None:
    value = (
        i16(1)
        + i64(4001)
        + i16(7)
        + i32(60000)
        + i8(2)  # PrepareCommit
        + uv(2)  # compact array: 1 entry
        + cs("orders")
        + uv(2)
        + i32(5)
        + uv(0)  # the entry's tagged fields
        + i64(11)
        + i64(10)
        + tags((0, i64(3999)), (1, i64(4002)), (2, i16(2)), (3, i16(0)))
    )
    v = internal.decode_transaction_record(_txn_key("txn-2"), value)["value"]
    assert v["version"] == 1 and v["data"]["transaction_state"] == "PrepareCommit"
    data = v["data"]
    assert (data["previous_producer_id"], data["next_producer_id"]) == (3999, 4002)
    assert (data["client_transaction_version"], data["next_producer_epoch"]) == (2, 0)
    assert data["transaction_partitions"] == [{"topic": "orders", "partition_ids": [5]}]


def test_transaction_log_v0_through_dump_segment(offline_kctl, tmp_path: Path) -> None:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    value = (
        i16(0)
        + i64(77)
        + i16(3)
        + i32(15000)
        + i8(1)
        + i32(1)
        + s16("t")
        + i32(1)
        + i32(0)
        + i64(2)
        + i64(1)
    )
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 20,
    )
    builder.append(0, timestamp=1_700_000_000_000, key=_txn_key("app-1"), value=value, headers=[])
    seg = tmp_path / "__transaction_state-0" / "00000000000000000000.log"
    seg.parent.mkdir()
    seg.write_bytes(bytes(builder.build()))
    r = offline_kctl(
        "dump-segment", str(seg), "--transaction-log-decoder", "--print-data-log", "-o", "json"
    )
    assert r.code == 0, r
    [rec] = [rec for doc in json.loads(r.stdout) for rec in doc["records"]]
    assert rec["key"]["data"] == {"transactional_id": "app-1"}
    assert (rec["payload"]["type"], rec["payload"]["version"]) == ("TransactionLogValue", 0)
    data = rec["payload"]["data"]
    assert data["transaction_state"] == "Ongoing" and data["producer_epoch"] == 3
    assert data["transaction_timeout_ms"] == 15000
    assert data["transaction_partitions"] == [{"topic": "t", "partition_ids": [0]}]


# --- (c) 4.3 records, and unknown types reported ------------------------------------------------


def test_clear_elr_record() -> None:
    d = metadata.decode_metadata_record(metadata_record(28, 0, cs("orders") + uv(0)))
    assert d == {"type": "ClearElrRecord", "version": 0, "data": {"topic_name": "orders"}}


def test_unknown_metadata_type_and_version_are_reported() -> None:
    with pytest.raises(DecodeError, match="unknown metadata record type 99"):
        metadata.decode_metadata_record(metadata_record(99, 0, b""))
    with pytest.raises(DecodeError, match=r"ClearElrRecord version 1 is not one of 0\.\.0"):
        metadata.decode_metadata_record(metadata_record(28, 1, cs("x") + uv(0)))


def test_consumer_group_regular_expression_record() -> None:
    key = i16(16) + s16("g1") + s16("orders-.*")
    value = (
        i16(0) + uv(3) + cs("orders-a") + cs("orders-b") + i64(12) + i64(1_700_000_000_000) + uv(0)
    )
    d = internal.decode_offsets_record(key, value)
    assert d["key"] == {
        "type": "ConsumerGroupRegularExpressionKey",
        "version": 16,
        "data": {"group_id": "g1", "regular_expression": "orders-.*"},
    }
    assert d["value"] == {
        "type": "ConsumerGroupRegularExpressionValue",
        "version": 0,
        "data": {"topics": ["orders-a", "orders-b"], "version": 12, "timestamp": 1_700_000_000_000},
    }


def test_streams_group_metadata_record_with_tagged_struct_array() -> None:
    key = i16(17) + s16("app")
    configs = uv(2) + cs("num.standby.replicas") + cs("1") + uv(0)  # 1 entry + its tags
    value = i16(0) + i32(5) + i64(-9) + tags((0, i32(4)), (1, configs))
    d = internal.decode_offsets_record(key, value)
    assert d["key"]["type"] == "StreamsGroupMetadataKey" and d["key"]["data"] == {"group_id": "app"}
    assert d["value"]["data"] == {
        "epoch": 5,
        "metadata_hash": -9,
        "validated_topology_epoch": 4,
        "last_assignment_configs": [{"key": "num.standby.replicas", "value": "1"}],
    }


def _member_metadata_value(classic: bytes | None) -> bytes:
    body = (
        i16(0)
        + cs(None)  # InstanceId
        + cs("rack-a")  # RackId
        + cs("client-1")
        + cs("/10.0.0.1")
        + uv(2)
        + cs("orders")
        + cs(None)  # SubscribedTopicRegex
        + i32(300000)
        + cs("uniform")
    )
    return body + (tags((0, classic)) if classic is not None else uv(0))


def test_consumer_group_member_metadata_with_tagged_nullable_struct() -> None:
    key = i16(5) + s16("g1") + s16("m1")
    classic = uv(1) + i32(45000) + uv(2) + cs("range") + uv(3) + b"\x00\x01" + uv(0) + uv(0)
    d = internal.decode_offsets_record(key, _member_metadata_value(classic))
    data = d["value"]["data"]
    assert data["classic_member_metadata"] == {
        "session_timeout_ms": 45000,
        "supported_protocols": [{"name": "range", "metadata": b"\x00\x01"}],
    }
    assert data["subscribed_topic_names"] == ["orders"] and data["rack_id"] == "rack-a"
    # The same field present but null: a tagged nullable struct's marker is uvarint 0.
    null = internal.decode_offsets_record(key, _member_metadata_value(uv(0)))
    assert null["value"]["data"]["classic_member_metadata"] is None
    # Absent: not in the output.
    absent = internal.decode_offsets_record(key, _member_metadata_value(None))
    assert "classic_member_metadata" not in absent["value"]["data"]


def test_legacy_offset_commit_record_type_0() -> None:
    key = i16(0) + s16("g") + s16("t") + i32(2)
    value = i16(0) + i64(100) + s16("") + i64(1_400_000_000_000)
    d = internal.decode_offsets_record(key, value)
    assert (d["key"]["type"], d["key"]["version"]) == ("LegacyOffsetCommitKey", 0)
    assert d["key"]["data"] == {"group": "g", "topic": "t", "partition": 2}
    assert d["value"] == {
        "type": "LegacyOffsetCommitValue",
        "version": 0,
        "data": {"offset": 100, "metadata": "", "commit_timestamp": 1_400_000_000_000},
    }


def test_unknown_offsets_record_type_and_value_version_are_reported() -> None:
    # Record type 9 (ShareGroupPartitionMetadata, early share groups) is gone from Kafka 4.3.
    with pytest.raises(DecodeError, match="unknown __consumer_offsets record type 9"):
        internal.decode_offsets_record(i16(9) + s16("g"), i16(0))
    with pytest.raises(DecodeError, match=r"OffsetCommitValue version 5 is not one of 0\.\.4"):
        internal.decode_offsets_record(i16(1) + s16("g") + s16("t") + i32(0), i16(5) + i64(1))
    with pytest.raises(DecodeError, match="unknown __transaction_state record type 1"):
        internal.decode_transaction_record(i16(1) + s16("x"), None)
    with pytest.raises(DecodeError, match=r"TransactionLogValue version 2 is not one of 0\.\.1"):
        internal.decode_transaction_record(_txn_key("x"), i16(2) + i64(1))


def test_offset_commit_value_v4_topic_id_tag() -> None:
    key = i16(1) + s16("g") + s16("t") + i32(0)
    value = i16(4) + i64(5) + i32(2) + cs("") + i64(9) + tags((0, UUID_A))
    v = internal.decode_offsets_record(key, value)["value"]
    assert v["data"] == {
        "offset": 5,
        "leader_epoch": 2,
        "metadata": "",
        "commit_timestamp": 9,
        "topic_id": UUID_A_TEXT,
    }


def test_a_tagged_field_that_does_not_fill_its_bytes_is_an_error() -> None:
    body = i32(3) + i64(42) + tags((2, uv(2) + UUID_A + b"\x00"))
    with pytest.raises(DecodeError, match="tagged field log_dirs"):
        metadata.decode_metadata_record(metadata_record(17, 2, body))
