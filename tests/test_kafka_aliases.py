"""The kafka-*.sh spellings kctl accepts beside its own (--topic, --group, --from-beginning,
--messages, --entity-type/--entity-name, ...): each does what kctl's own spelling does."""

from __future__ import annotations

import json

from conftest import commit_offsets, unique


def _json(r):
    assert r.code == 0, r
    return json.loads(r.stdout)


def _commit(bootstrap: str, group: str, topic: str, offset: int = 0) -> None:
    commit_offsets(bootstrap, group, {(topic, 0): offset})


def test_kafka_topics_spellings(kctl):
    topic = unique("al")
    r = kctl("topics", "create", "--topic", topic, "--partitions", "1", "--replication-factor", "1")
    assert r.code == 0, r
    assert kctl("topics", "add-partitions", "--topic", topic, "--partitions", "2").code == 0
    doc = _json(kctl("topics", "describe", "--topic", topic, "-o", "json"))
    assert doc == _json(kctl("topics", "describe", topic, "-o", "json"))
    assert doc[0]["partition_count"] == 2
    for flag in (
        "--under-replicated-partitions",
        "--under-min-isr-partitions",
        "--at-min-isr-partitions",
        "--unavailable-partitions",
    ):
        r = kctl("topics", "describe", "--topic", topic, flag, "-o", "json")
        assert r.code == 0, (flag, r)
    at_min = _json(
        kctl("topics", "describe", "--topic", topic, "--at-min-isr-partitions", "-o", "json")
    )
    assert len(at_min[0]["partitions"]) == 2  # min.insync.replicas 1, ISR 1
    r = kctl("topics", "delete", "--topic", topic, "--yes", "-o", "json")
    assert _json(r) == [{"topic": topic, "status": "deleted"}]


def test_a_name_given_twice_differently_is_a_usage_error(kctl):
    r = kctl("topics", "create", "a", "--topic", "b")
    assert r.code == 2 and r.stderr.startswith("kctl: error: "), r
    r = kctl("produce", "--value", "x")
    assert r.code == 2 and "--topic" in r.stderr, r


def test_console_producer_and_consumer_spellings(kctl, new_topic):
    topic = new_topic(partitions=1)
    r = kctl(
        "produce",
        "--topic",
        topic,
        "--request-required-acks",
        "-1",
        "--compression-codec",
        "gzip",
        input="one\ntwo\nthree\n",
    )
    assert r.code == 0, r
    r = kctl(
        "consume",
        "--topic",
        topic,
        "--from-beginning",
        "--max-messages",
        "2",
        "--isolation-level",
        "read_committed",
        "-o",
        "jsonl",
    )
    assert r.code == 0, r
    assert [json.loads(line)["value"] for line in r.stdout.splitlines()] == ["one", "two"]
    r = kctl("consume", "--topic", topic, "--partition", "0", "--offset", "2", "-o", "jsonl")
    assert [json.loads(line)["value"] for line in r.stdout.splitlines()] == ["three"]
    r = kctl("consume", topic, "--from-beginning", "--from", "latest")
    assert r.code == 2, r


def test_perf_test_spellings(kctl, new_topic):
    topic = new_topic(partitions=1)
    r = kctl(
        "perf", "produce", "--topic", topic, "--num-records", "200", "--record-size", "10",
        "--throughput", "-1", "--producer-props", "acks=1", "-o", "json",
    )  # fmt: skip
    assert _json(r)["records"] == 200
    r = kctl("perf", "consume", "--topic", topic, "--messages", "200", "-o", "json")
    assert _json(r)["records"] == 200


def test_kafka_configs_spellings(kctl, new_topic):
    topic = new_topic(partitions=1)
    where = ("--entity-type", "topics", "--entity-name", topic)
    assert kctl("configs", "set", *where, "retention.ms=3600000").code == 0
    doc = _json(kctl("configs", "describe", *where, "-o", "json"))
    assert doc == _json(kctl("configs", "describe", "--topic", topic, "-o", "json"))
    assert {c["name"]: c["value"] for c in doc["configs"]}["retention.ms"] == "3600000"
    assert kctl("configs", "delete", *where, "retention.ms").code == 0
    doc = _json(
        kctl("configs", "describe", "--entity-type", "brokers", "--entity-default", "-o", "json")
    )
    assert doc["entity"] == "broker-defaults"
    broker = _json(kctl("cluster", "describe", "-o", "json"))["brokers"][0]["broker"]
    doc = _json(
        kctl(
            "configs",
            "describe",
            "--entity-type",
            "brokers",
            "--entity-name",
            str(broker),
            "-o",
            "json",
        )
    )
    assert (doc["entity"], doc["name"]) == ("broker", str(broker))
    for bad in (
        ("--entity-name", topic),  # no --entity-type
        ("--entity-type", "users", "--entity-name", "alice"),
        ("--entity-type", "topics", "--entity-name", topic, "--topic", topic),
        ("--entity-type", "brokers", "--entity-name", "x"),
    ):
        r = kctl("configs", "describe", *bad)
        assert r.code == 2 and r.stderr.startswith("kctl: error: "), (bad, r)


def test_kafka_consumer_groups_spellings(kctl, bootstrap, new_topic):
    topic = new_topic(partitions=1)
    kctl("produce", topic, input="a\nb\nc\n")
    group = unique("al-g")
    _commit(bootstrap, group, topic, 2)
    rows = _json(kctl("groups", "describe", "--group", group, "-o", "json"))
    assert [(r["group"], r["current_offset"]) for r in rows] == [(group, 2)]
    lag = _json(kctl("groups", "lag", "--group", group, "-o", "json"))
    assert [(g["group"], g["lag"]) for g in lag["groups"]] == [(group, 1)]
    r = kctl(
        "groups", "reset-offsets", "--group", group, "--topic", topic, "--to-earliest",
        "--dry-run", "-o", "json",
    )  # fmt: skip
    assert [(p["current"], p["target"]) for p in _json(r)] == [(2, 0)]
    assert "plan only" in r.stderr
    r = kctl("groups", "reset-offsets", "--group", group, "--topic", topic, "--to-earliest",
             "--dry-run", "--execute")  # fmt: skip
    assert r.code == 2, r
    r = kctl("groups", "delete-offsets", "--group", group, "--topic", topic, "--yes")
    assert r.code == 0, r
    r = kctl("groups", "delete", "--group", group, "--yes", "-o", "json")
    assert _json(r) == [{"group": group, "status": "deleted"}]


def test_kafka_delete_records_spelling(kctl, new_topic, tmp_path):
    topic = new_topic(partitions=1)
    kctl("produce", topic, input="a\nb\nc\n")
    plan = tmp_path / "delete.json"
    plan.write_text(
        json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": 0, "offset": 2}]})
    )
    r = kctl("records", "delete", "--offset-json-file", str(plan), "--yes", "-o", "json")
    assert [row["low_watermark"] for row in _json(r)] == [2]
