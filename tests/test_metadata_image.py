"""kctl metadata image: a KRaft __cluster_metadata-0 directory replayed into the cluster's state.

The fixture is a real log (tests/data/README.md): one broker (id 1), topic ``foo`` created at
offsets 22-23 with one partition on broker 1, the broker shut down twice (leader -1, fenced)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kctl.logfmt import image as I

META = Path(__file__).parent / "data" / "kafka-3.8-kraft-logs" / "__cluster_metadata-0"
FOO_ID = "fZi4qEpCTsik-rzkyV0Ypg"


def _image(kctl, *args: str) -> dict:
    run = kctl("metadata", "image", str(META), *args, "-o", "json")
    assert run.code == 0, run.stderr
    return json.loads(run.stdout)


def test_the_image_at_the_last_offset(offline_kctl):
    doc = _image(offline_kctl)
    assert doc["offset"] == 115
    assert doc["features"] == {"metadata.version": 20}
    [broker] = doc["brokers"]
    assert broker["id"] == 1
    assert broker["incarnation_id"] == "xq4SNBIRT7qeiXAedi0BRQ"  # the second registration
    assert broker["fenced"] is True  # the last record fenced it (offset 115)
    assert broker["endpoints"][0]["host"] == "localhost"
    assert broker["endpoints"][0]["port"] == 9092
    assert broker["log_dirs"] == ["AiSXPLrdRM-HREWplhnaNA"]
    [topic] = doc["topics"]
    assert (topic["name"], topic["topic_id"]) == ("foo", FOO_ID)
    [p] = topic["partitions"]
    assert p["partition"] == 0
    assert p["replicas"] == [1] and p["isr"] == [1]
    assert p["leader"] == -1  # PartitionChangeRecord at 114 (only the leader field present)
    assert p["directories"] == ["AiSXPLrdRM-HREWplhnaNA"]
    assert doc["producer_ids"]["next_producer_id"] == 1000
    assert doc["controller_leader"] == 1
    assert doc["pending_transaction"] is None


def test_an_earlier_offset_shows_less(offline_kctl):
    before = _image(offline_kctl, "--at-offset", "10")
    assert before["offset"] == 10
    assert before["topics"] == []
    assert before["brokers"][0]["fenced"] is False  # unfenced at 7
    assert before["producer_ids"] is None
    mid = _image(offline_kctl, "--at-offset", "90")
    assert mid["topics"][0]["partitions"][0]["leader"] == 1  # re-elected at 85
    assert mid["brokers"][0]["incarnation_id"] == "xq4SNBIRT7qeiXAedi0BRQ"
    # inside the bootstrap transaction (Begin at 1, End at 4) nothing is applied yet
    inside = _image(offline_kctl, "--at-offset", "2")
    assert inside["features"] == {}
    assert inside["pending_transaction"] == {"begin_offset": 1, "records": 1}


def test_diff_shows_the_topic_creation(offline_kctl):
    run = offline_kctl("metadata", "image", str(META), "--diff", "10..30", "-o", "json")
    assert run.code == 0, run.stderr
    doc = json.loads(run.stdout)
    assert (doc["from_offset"], doc["to_offset"]) == (10, 30)
    changes = {(c["change"], c["kind"], c["key"]) for c in doc["changes"]}
    assert changes == {("added", "topic", "foo"), ("added", "partition", "foo-0")}
    later = offline_kctl("metadata", "image", str(META), "--diff", "30..115", "-o", "json")
    kinds = {(c["change"], c["kind"], c["key"]): c for c in json.loads(later.stdout)["changes"]}
    part = kinds[("changed", "partition", "foo-0")]
    assert part["fields"]["leader"] == {"before": 1, "after": -1}
    broker = kinds[("changed", "broker", "1")]
    assert broker["fields"]["fenced"] == {"before": False, "after": True}


def test_the_table_has_one_row_per_partition(offline_kctl):
    run = offline_kctl("metadata", "image", str(META), "-o", "plain")
    assert run.code == 0, run.stderr
    header, *rows = run.stdout.splitlines()
    assert header.split("\t")[:4] == ["TOPIC", "TOPIC-ID", "PARTITION", "LEADER"]
    assert [r.split("\t")[:4] for r in rows] == [["foo", FOO_ID, "0", "-1"]]


def test_usage_errors(offline_kctl, tmp_path):
    bad = offline_kctl("metadata", "image", str(META), "--diff", "30")
    assert bad.code == 2 and bad.stderr.startswith("kctl: error: ")
    empty = offline_kctl("metadata", "image", str(tmp_path))
    assert empty.code == 2 and "no KRaft snapshot" in empty.stderr


def test_the_snapshot_json_loads_in_replicas_validate(offline_kctl, tmp_path):
    snap = tmp_path / "snap.json"
    run = offline_kctl("metadata", "image", str(META), "--snapshot-json", str(snap), "-o", "name")
    assert run.code == 0, run.stderr
    assert run.stdout == "foo\n"
    from kctl.replicas.model import ClusterSnapshot

    s = ClusterSnapshot.from_dict(json.loads(snap.read_text()))
    assert s.cluster_id == "rwd2jqiwRaCycLq7mKVHXA"  # from ../meta.properties
    assert [b.id for b in s.brokers] == [1]
    # At the end the broker is fenced and foo-0 has no leader: an offline partition (exit 3),
    # and broker 1 is down as a registered, fenced broker (not as an unregistered one).
    assert s.fenced_brokers == [1]
    v = offline_kctl("replicas", "validate", "--snapshot", str(snap), "-o", "json")
    assert v.code == 3, v.stderr
    assert "foo" in v.stdout
    checks = {f["check"] for f in json.loads(v.stdout)["findings"]}
    assert "broker-down" in checks and "unregistered-broker" not in checks
    # At offset 60 the broker is up and leads foo-0: healthy (exit 0).
    offline_kctl("metadata", "image", str(META), "--at-offset", "60", "--snapshot-json", str(snap))
    assert ClusterSnapshot.from_dict(json.loads(snap.read_text())).fenced_brokers == []
    assert offline_kctl("replicas", "validate", "--snapshot", str(snap)).code == 0


def _e(offset: int, type_: str, **data: object) -> I.Entry:
    return I.Entry(offset, 0, type_, dict(data))


def test_replay_rules_over_decoded_records():
    """MetadataDelta's rules on records as the decoder hands them (not bytes of ours)."""
    tid = "AAAAAAAAAAAAAAAAAAAAAQ"
    quota_user = [{"entity_type": "user", "entity_name": "alice"}]
    img = I.replay(
        [
            _e(0, "TopicRecord", name="t", topic_id=tid),
            _e(1, "PartitionRecord", partition_id=0, topic_id=tid, replicas=[1, 2, 3],
               isr=[1, 2, 3], removing_replicas=[], adding_replicas=[], leader=1,
               leader_epoch=0, partition_epoch=0, directories=["d1", "d2", "d3"]),
            _e(2, "PartitionChangeRecord", partition_id=0, topic_id=tid, isr=[1, 2]),
            _e(3, "ConfigRecord", resource_type=2, resource_name="t", name="retention.ms",
               value="1000"),
            _e(4, "ConfigRecord", resource_type=2, resource_name="t", name="cleanup.policy",
               value="compact"),
            _e(5, "ConfigRecord", resource_type=2, resource_name="t", name="retention.ms",
               value=None),
            _e(6, "UserScramCredentialRecord", name="alice", mechanism=2, salt=b"s",
               stored_key=b"k", server_key=b"k", iterations=8192),
            _e(7, "ClientQuotaRecord", entity=quota_user, key="producer_byte_rate",
               value=1024.0, remove=False),
            _e(8, "BeginTransactionRecord", name="x"),
            _e(9, "PartitionChangeRecord", partition_id=0, topic_id=tid, leader=2),
            _e(10, "AbortTransactionRecord", reason="x"),
        ]
    )  # fmt: skip
    doc = img.to_dict()
    [p] = doc["topics"][0]["partitions"]
    assert p["isr"] == [1, 2] and p["leader"] == 1  # the aborted leader change never applied
    assert (p["leader_epoch"], p["partition_epoch"]) == (0, 1)
    assert doc["configs"] == [
        {"resource_type": "TOPIC", "resource_name": "t", "configs": {"cleanup.policy": "compact"}}
    ]
    assert doc["scram_users"] == [
        {"name": "alice", "mechanisms": [{"mechanism": "SCRAM-SHA-512", "iterations": 8192}]}
    ]
    assert doc["client_quotas"][0]["quotas"] == {"producer_byte_rate": 1024.0}
    I.replay(
        [
            _e(11, "PartitionChangeRecord", partition_id=0, topic_id=tid, leader=-1),
            _e(12, "RemoveTopicRecord", topic_id=tid),
        ],
        img,
    )
    assert img.to_dict()["topics"] == [] and img.to_dict()["configs"] == []


@pytest.mark.broker
def test_the_image_of_a_real_cluster_matches_describe(tmp_path_factory):
    from conftest import kctl_environment, run_kctl, start_kafka_cluster

    from kctl.local import kafka_cluster

    state = tmp_path_factory.mktemp("metadata-image")
    cluster = start_kafka_cluster(state, brokers=1)
    try:
        env = kctl_environment(
            KCTL_CONFIG=str(state / "kctl.yaml"),
            KCTL_BOOTSTRAP_SERVERS=cluster.bootstrap,  # type: ignore[attr-defined]
        )
        made = run_kctl(
            env, "topics", "create", "img-t", "--partitions", "3",
            "--replication-factor", "1", "--config", "retention.ms=123456",
        )  # fmt: skip
        assert made.code == 0, made.stderr
        described = run_kctl(env, "topics", "describe", "img-t", "-o", "json")
        assert described.code == 0, described.stderr
        kafka_cluster.stop(state)
        root = Path(cluster.directory)  # type: ignore[attr-defined]
        dirs = sorted(root.rglob("__cluster_metadata-0"))
        assert dirs
        doc = json.loads(run_kctl(env, "metadata", "image", str(dirs[0]), "-o", "json").stdout)
        topic = next(t for t in doc["topics"] if t["name"] == "img-t")
        assert [p["partition"] for p in topic["partitions"]] == [0, 1, 2]
        before = json.loads(described.stdout)
        text = json.dumps(before)
        assert topic["topic_id"] in text or "img-t" in text
        for p in topic["partitions"]:
            assert len(p["replicas"]) == 1
        cfg = {(c["resource_type"], c["resource_name"]): c["configs"] for c in doc["configs"]}
        assert cfg[("TOPIC", "img-t")]["retention.ms"] == "123456"
        assert all(b["fenced"] for b in doc["brokers"])  # a clean stop fences every broker
    finally:
        c = kafka_cluster.read_state(state)
        if c is not None:
            kafka_cluster.kill_all(c)
