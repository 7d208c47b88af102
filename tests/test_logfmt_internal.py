"""__consumer_offsets, KRaft metadata, snapshots, checkpoints and indexes on Kafka's own files."""

from __future__ import annotations

import collections

import pytest
from conftest import FIXTURES

from kctl.logfmt import batch as B
from kctl.logfmt import indexes as X
from kctl.logfmt import internal, metadata
from kctl.logfmt import snapshot as S
from kctl.logfmt.wire import DecodeError

OFFSETS = FIXTURES / "consumer-offsets-records"
KRAFT = FIXTURES / "kafka-3.8-kraft-logs"


def record(name: str) -> dict:
    return internal.decode_offsets_record(
        (OFFSETS / f"{name}.key").read_bytes(), (OFFSETS / f"{name}.payload").read_bytes()
    )


@pytest.mark.parametrize(
    ("name", "group", "topic", "offset", "ts"),
    [
        (
            "offset_commit-01",
            "ivan-experimental-consumer",
            "__consumer_offsets",
            97507,
            1672871009232,
        ),
        (
            "offset_commit-02",
            "ivan-experimental-consumer",
            "__consumer_offsets",
            97554,
            1672871009282,
        ),
        ("offset_commit-03", "kafkesc-devcluster-group-id", "t01", 106, 1672788047244),
    ],
)
def test_offset_commits_decode(name: str, group: str, topic: str, offset: int, ts: int) -> None:
    d = record(name)
    assert (d["key"]["type"], d["key"]["version"]) == ("OffsetCommitKey", 1)
    assert d["key"]["data"]["group"] == group and d["key"]["data"]["topic"] == topic
    v = d["value"]
    assert v["version"] == 3
    assert v["data"]["offset"] == offset and v["data"]["commit_timestamp"] == ts
    assert v["data"]["leader_epoch"] == -1 and v["data"]["metadata"] == ""
    if name == "offset_commit-01":
        assert d["key"]["data"]["partition"] == 46


def test_group_metadata_decodes_members_with_subscription_and_assignment() -> None:
    d = record("group_metadata-01")
    assert d["key"] == {
        "type": "GroupMetadataKey",
        "version": 2,
        "data": {"group": "kafkesc-devcluster-group-id"},
    }
    v = d["value"]["data"]
    assert d["value"]["version"] == 3
    assert (v["protocol_type"], v["generation"], v["protocol"]) == ("consumer", 7, "range")
    assert v["leader"] == "rdkafka-9f4fc1b0-1d7d-4471-90e8-e0f64f3c9d9f"
    assert v["current_state_timestamp"] == 1672870956437
    (m,) = v["members"]
    assert (m["client_id"], m["client_host"]) == ("rdkafka", "/172.18.0.1")
    assert (m["rebalance_timeout"], m["session_timeout"]) == (300000, 45000)
    assert m["subscription"]["version"] == 1 and m["subscription"]["topics"] == ["t01"]
    assert m["assignment"]["version"] == 0
    assert m["assignment"]["assigned_partitions"] == [{"topic": "t01", "partitions": [0, 1, 2]}]


def test_group_metadata_with_fifty_assigned_partitions() -> None:
    v = record("group_metadata-03")["value"]["data"]
    assert v["generation"] == 1
    (m,) = v["members"]
    assert m["subscription"]["topics"] == ["__consumer_offsets"]
    assert m["assignment"]["assigned_partitions"][0]["partitions"] == list(range(50))
    assert record("group_metadata-02")["value"]["data"]["current_state_timestamp"] == 1672870558659


def test_tombstone_has_no_value_and_garbage_is_a_decode_error() -> None:
    key = (OFFSETS / "offset_commit-01.key").read_bytes()
    assert internal.decode_offsets_record(key, None)["value"] is None
    with pytest.raises(DecodeError):
        internal.decode_offsets_record(key[:7], None)
    with pytest.raises(DecodeError):
        internal.decode_offsets_record(b"\x00\x63", None)


def test_every_metadata_record_in_the_kraft_log_decodes() -> None:
    data = (KRAFT / "__cluster_metadata-0" / "00000000000000000000.log").read_bytes()
    types: collections.Counter[str] = collections.Counter()
    found = {}
    for b in B.scan(data):
        assert isinstance(b, B.Batch)
        if b.is_control:
            continue
        for r in B.records(data, b):
            d = metadata.decode_metadata_record(r.value)
            types[d["type"]] += 1
            found.setdefault(d["type"], d)
    assert types["NoOpRecord"] == 94 and types["PartitionChangeRecord"] == 3
    assert sum(types.values()) == 114
    assert found["TopicRecord"]["data"] == {"name": "foo", "topic_id": "fZi4qEpCTsik-rzkyV0Ypg"}
    part = found["PartitionRecord"]["data"]
    assert part["replicas"] == [1] and part["isr"] == [1] and part["leader"] == 1
    assert found["FeatureLevelRecord"]["data"] == {"name": "metadata.version", "feature_level": 20}
    assert found["ProducerIdsRecord"]["data"]["next_producer_id"] == 1000
    assert found["RegisterBrokerRecord"]["data"]["end_points"][0]["port"] == 9092


def test_producer_snapshot_with_one_producer_and_empty_ones() -> None:
    snap = S.producer_snapshot((KRAFT / "foo-0" / "00000000000000000003.snapshot").read_bytes())
    assert snap.version == 1 and snap.crc_valid
    (e,) = snap.entries
    assert (e.producer_id, e.producer_epoch, e.last_sequence, e.last_offset) == (0, 0, 2, 2)
    assert (e.offset_delta, e.timestamp) == (0, 1725272041932)
    assert (e.coordinator_epoch, e.current_txn_first_offset) == (-1, -1)
    empty = S.producer_snapshot(
        (KRAFT / "__cluster_metadata-0" / "00000000000000000116.snapshot").read_bytes()
    )
    assert empty.entries == [] and empty.crc_valid
    damaged = bytearray((KRAFT / "foo-0" / "00000000000000000003.snapshot").read_bytes())
    damaged[20] ^= 1
    assert not S.producer_snapshot(bytes(damaged)).crc_valid


def test_indexes_and_checkpoints() -> None:
    md = KRAFT / "__cluster_metadata-0"
    assert [
        (e.offset, e.position)
        for e in X.offset_entries((md / "00000000000000000000.index").read_bytes(), 0)
    ] == [(56, 4123)]
    times = list(X.time_entries((md / "00000000000000000000.timeindex").read_bytes(), 0))
    assert [t.offset for t in times] == [56, 80, 115]
    assert X.time_index_sanity((md / "00000000000000000000.timeindex").read_bytes(), 0) == []
    epochs = S.checkpoint((md / "leader-epoch-checkpoint").read_text(), "leader-epoch")
    assert epochs["entries"] == [{"epoch": 1, "start_offset": 0}, {"epoch": 2, "start_offset": 81}]
    rep = S.checkpoint((KRAFT / "replication-offset-checkpoint").read_text(), "offset")
    assert rep["entries"] == [{"topic": "foo", "partition": 0, "offset": 3}]
    assert (
        S.properties((KRAFT / "meta.properties").read_text())["cluster.id"]
        == "rwd2jqiwRaCycLq7mKVHXA"
    )
    assert (
        S.properties((KRAFT / "foo-0" / "partition.metadata").read_text())["topic_id"]
        == "fZi4qEpCTsik-rzkyV0Ypg"
    )
    assert S.quorum_state((md / "quorum-state").read_text())["leaderEpoch"] == 2
