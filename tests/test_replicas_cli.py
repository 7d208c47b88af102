"""kctl replicas validate/verify, kctl cluster snapshot and log-dirs against the session broker.

Written to run unchanged against a real multi-broker cluster (KCTL_TEST_BOOTSTRAP): topics are
fresh, replication factor 1, and APIs the broker lacks are checked with ``lacks_api``.
"""

from __future__ import annotations

import json

from kctl.replicas.model import ClusterSnapshot


def _findings(doc: dict) -> list[tuple]:
    return [(f["check"], f["topic"], f["partition"], tuple(f["brokers"])) for f in doc["findings"]]


def test_validate_healthy_topic_exits_zero_with_json_report(kctl, new_topic):
    name = new_topic(partitions=2)
    r = kctl("replicas", "validate", "--topic", name, "--min-rf", "1", "-o", "json")
    assert r.code == 0, r
    doc = json.loads(r.stdout)
    assert doc["findings"] == [] and doc["topics_checked"] == 1 and doc["partitions_checked"] == 2
    assert doc["counts"] == {"error": 0, "warn": 0, "info": 0}
    assert doc["causes"] == []
    assert "healthy" in r.stderr


def test_validate_low_replication_factor_exits_three_unless_fail_on_error(kctl, new_topic):
    name = new_topic(partitions=2)
    r = kctl("replicas", "validate", "--topic", name, "--min-rf", "2", "-o", "json")
    assert r.code == 3, r
    doc = json.loads(r.stdout)
    assert {(f["check"], f["severity"], f["partition"]) for f in doc["findings"]} == {
        ("rf-below-minimum", "warn", 0),
        ("rf-below-minimum", "warn", 1),
    }
    # No broker is down: nothing is grouped, every finding is its own row.
    assert doc["causes"] == [] and {f["cause"] for f in doc["findings"]} == {None}
    r = kctl("replicas", "validate", "--topic", name, "--min-rf", "2", "--fail-on", "error")
    assert r.code == 0, r
    assert "rf-below-minimum" in r.stdout


def test_snapshot_round_trips_into_offline_validate(kctl, new_topic, tmp_path):
    name = new_topic(partitions=3)
    r = kctl("cluster", "snapshot", "--topic", name, "-o", "json")
    assert r.code == 0, r
    doc = json.loads(r.stdout)
    assert ClusterSnapshot.from_dict(doc).to_dict() == doc
    assert [t["name"] for t in doc["topics"]] == [name]
    assert [p["partition"] for p in doc["topics"][0]["partitions"]] == [0, 1, 2]
    path = tmp_path / "snap.json"
    path.write_text(r.stdout)
    live = kctl("replicas", "validate", "--topic", name, "--min-rf", "2", "-o", "json")
    offline = kctl("replicas", "validate", "--snapshot", str(path), "--min-rf", "2", "-o", "json")
    assert live.code == offline.code == 3, (live, offline)
    assert _findings(json.loads(live.stdout)) == _findings(json.loads(offline.stdout))
    assert json.loads(offline.stdout)["source"] == str(path)


def test_offline_validate_rejects_bad_files_and_unknown_topics(offline_kctl, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = offline_kctl("replicas", "validate", "--snapshot", str(bad))
    assert r.code == 2 and r.stderr.startswith("kctl: error:") and "not JSON" in r.stderr
    bad.write_text('{"brokers": []}')
    r = offline_kctl("replicas", "validate", "--snapshot", str(bad))
    assert r.code == 2 and "not a kctl cluster snapshot" in r.stderr
    snap = ClusterSnapshot(1, "c", 1, [], [])
    good = tmp_path / "snap.json"
    good.write_text(json.dumps(snap.to_dict()))
    r = offline_kctl("replicas", "validate", "--snapshot", str(good), "--topic", "nope")
    assert r.code == 1 and "unknown topic 'nope'" in r.stderr
    assert offline_kctl("replicas", "validate", "--snapshot", str(good)).code == 0


def test_snapshot_says_which_brokers_gave_no_log_dirs(kctl, new_topic, lacks_api):
    name = new_topic(partitions=1)
    r = kctl("cluster", "snapshot", "--topic", name, "-o", "json")
    assert r.code == 0, r
    doc = json.loads(r.stdout)
    if lacks_api("DescribeLogDirs"):
        assert doc["log_dirs_unsupported"] and doc["log_dirs"] == []
        assert "DescribeLogDirs" in r.stderr
    else:
        replicas = [x for d in doc["log_dirs"] for x in d["replicas"] if x["topic"] == name]
        assert [x["partition"] for x in replicas] == [0]


def test_log_dirs_lists_replicas_or_says_the_broker_lacks_the_api(kctl, new_topic, lacks_api):
    name = new_topic(partitions=2)
    r = kctl("cluster", "log-dirs", "--topic", name, "-o", "json")
    if lacks_api("DescribeLogDirs"):
        assert r.code == 1, r
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "does not support DescribeLogDirs" in lines[0]
        return
    assert r.code == 0, r
    doc = json.loads(r.stdout)
    found = sorted(x["partition"] for d in doc for x in d["replicas"] if x["topic"] == name)
    assert found == [0, 1]


def test_log_dirs_unknown_broker_is_an_error(kctl, lacks_api):
    r = kctl("cluster", "log-dirs", "--broker", "987654")
    assert r.code == 1, r
    assert "unknown broker 987654" in r.stderr or "DescribeLogDirs" in r.stderr


def test_verify_compares_every_replica_of_produced_partitions(kctl, new_topic, bootstrap):
    from confluent_kafka import Producer

    name = new_topic(partitions=2)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for i in range(30):
        producer.produce(name, value=b"v%d" % i, partition=i % 2)
        if i % 5 == 4:
            producer.flush(10)  # several batches per partition
    assert producer.flush(10) == 0
    r = kctl("replicas", "verify", "--topic", name, "-o", "json")
    assert r.code == 0, r
    rows = json.loads(r.stdout)
    leaders = [x for x in rows if x["role"] == "leader"]
    assert sorted(x["partition"] for x in leaders) == [0, 1]
    for x in leaders:
        assert x["status"] == "reference" and x["offsets"] == "0-14", x
        assert x["batches"] >= 2
    # Single-replica partitions compare the leader with itself: nothing diverges.
    assert all(x["status"] in ("reference", "identical") for x in rows)
    # Starting past the first batches fetches less.
    r = kctl("replicas", "verify", "--topic", name, "--offset", "14", "-o", "json")
    assert r.code == 0, r
    assert all(x["offsets"].endswith("-14") for x in json.loads(r.stdout))


def test_verify_unknown_topic_fails_in_one_line(kctl):
    r = kctl("replicas", "verify", "--topic", "no-such-topic-xyz")
    assert r.code == 1 and "unknown topic" in r.stderr and "Traceback" not in r.stderr
