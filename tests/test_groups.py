"""kctl groups against the real broker, with real confluent-kafka consumers."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from conftest import unique, wait_for

PER_PARTITION = 10  # records in each of the 2 partitions


def _produce(bootstrap: str, topic: str, partitions: int = 2, n: int = PER_PARTITION) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for i in range(n):
        for part in range(partitions):
            p.produce(topic, b"v%d" % i, partition=part)
            p.flush(10)  # one record per batch: every broker reports the log end exactly


def _commit(bootstrap: str, group: str, offsets: dict[tuple[str, int], int]) -> None:
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    req = ConsumerGroupTopicPartitions(
        group, [TopicPartition(t, p, o) for (t, p), o in offsets.items()]
    )
    admin.alter_consumer_group_offsets([req])[group].result(timeout=30)


def _consume_and_commit(bootstrap: str, topic: str, group: str, counts: dict[int, int]) -> None:
    """A real consumer reads ``counts[p]`` records of each partition and commits them."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                  "auto.offset.reset": "earliest"})  # fmt: skip
    c.assign([TopicPartition(topic, p, 0) for p in counts])
    seen = dict.fromkeys(counts, 0)
    deadline = time.monotonic() + 30
    while any(seen[p] < counts[p] for p in counts) and time.monotonic() < deadline:
        m = c.poll(0.5)
        if m is None or m.error() or seen[m.partition()] >= counts[m.partition()]:
            continue
        seen[m.partition()] += 1
    c.commit(offsets=[TopicPartition(topic, p, n) for p, n in seen.items()], asynchronous=False)
    c.close()
    assert seen == counts


@pytest.fixture
def topic(bootstrap, new_topic) -> str:
    name = new_topic(partitions=2, prefix="grp")
    _produce(bootstrap, name)
    return name


@pytest.fixture
def active_group(bootstrap, topic) -> Iterator[tuple[str, str]]:
    """A group with one live member subscribed to ``topic`` (state Stable)."""
    from confluent_kafka import Consumer

    group = unique("live")
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "session.timeout.ms": 6000,
                  "heartbeat.interval.ms": 1000, "auto.offset.reset": "earliest"})  # fmt: skip
    c.subscribe([topic])
    deadline = time.monotonic() + 30
    while not c.assignment() and time.monotonic() < deadline:
        c.poll(0.2)
    assert c.assignment(), "the consumer did not join its group"
    try:
        yield group, topic
    finally:
        c.close()


def _lag(kctl, group: str) -> dict[int, dict]:
    r = kctl("groups", "lag", group, "-o", "json")
    assert r.code == 0, r
    return {row["partition"]: row for row in json.loads(r.stdout)["partitions"]}


def test_lag_is_produced_minus_consumed_per_partition(kctl, bootstrap, topic):
    group = unique("lag")
    _consume_and_commit(bootstrap, topic, group, {0: 4, 1: 7})
    rows = _lag(kctl, group)
    assert {p: (r["committed_offset"], r["log_end_offset"], r["lag"]) for p, r in rows.items()} == {
        0: (4, 10, 6),
        1: (7, 10, 3),
    }
    doc = json.loads(kctl("groups", "lag", group, "-o", "json").stdout)
    assert doc["groups"] == [{"group": group, "lag": 9}]
    assert doc["topics"] == [{"group": group, "topic": topic, "lag": 9}]
    assert rows[0]["group_state"] == "Empty" and rows[0]["member_id"] is None


def test_fail_above_exits_3_only_when_exceeded(kctl, bootstrap, topic):
    group = unique("fail")
    _consume_and_commit(bootstrap, topic, group, {0: 5, 1: 5})  # lag 10
    assert kctl("groups", "lag", group, "--fail-above", "10").code == 0
    r = kctl("groups", "lag", group, "--fail-above", "9")
    assert r.code == 3 and f"'{group}' has lag 10" in r.stderr


def test_active_group_is_stable_with_its_member_and_assignment(kctl, active_group):
    group, topic = active_group
    r = kctl("groups", "describe", group, "--state", "-o", "json")
    assert r.code == 0, r
    (state,) = json.loads(r.stdout)
    assert state["state"] == "Stable"
    if state["members"] == 0:
        pytest.skip("the broker's DescribeGroups answer lists no members of a Stable group (Tansu)")
    assert state["members"] == 1
    members = json.loads(kctl("groups", "describe", group, "--members", "-o", "json").stdout)
    assert len(members) == 1
    assert sorted(members[0]["assignment"]) == [f"{topic}:0", f"{topic}:1"]
    listed = {g["group"]: g for g in json.loads(kctl("groups", "list", "-o", "json").stdout)}
    assert listed[group]["state"] == "Stable" and listed[group]["members"] == 1


def test_reset_and_delete_refuse_a_group_with_members(kctl, active_group):
    group, topic = active_group
    r = kctl("groups", "reset-offsets", group, "--topic", topic, "--to-earliest", "--execute")
    assert r.code == 1 and "refusing to reset offsets" in r.stderr and "active member" in r.stderr
    r = kctl("groups", "delete", group, "--yes")
    assert r.code == 1 and f"refusing to delete group '{group}'" in r.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--to-earliest"], {0: 0, 1: 0}),
        (["--to-latest"], {0: 10, 1: 10}),
        (["--to-current"], {0: 4, 1: 6}),
        (["--to-offset", "3"], {0: 3, 1: 3}),
        (["--shift-by", "-2"], {0: 2, 1: 4}),
        (["--shift-by", "+3"], {0: 7, 1: 9}),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else "",
)
def test_reset_lands_exactly_where_the_spec_says(kctl, bootstrap, topic, args, expected):
    group = unique("reset")
    _consume_and_commit(bootstrap, topic, group, {0: 4, 1: 6})
    r = kctl("groups", "reset-offsets", group, "--topic", topic, *args, "--execute", "-o", "json")
    assert r.code == 0, r
    got = {p: row["committed_offset"] for p, row in _lag(kctl, group).items()}
    assert got == expected


def test_reset_by_time_finds_the_first_offset_at_or_after_it(kctl, bootstrap, topic):
    group = unique("time")
    _consume_and_commit(bootstrap, topic, group, {0: 4, 1: 6})
    r = kctl("groups", "reset-offsets", group, "--topic", topic, "--to-datetime",
             "2000-01-01T00:00:00Z", "--execute")  # fmt: skip
    assert r.code == 0, r
    assert {p: row["committed_offset"] for p, row in _lag(kctl, group).items()} == {0: 0, 1: 0}
    _commit(bootstrap, group, {(topic, 0): 5, (topic, 1): 5})
    r = kctl(
        "groups", "reset-offsets", group, "--all-topics", "--by-duration", "P3650D", "--execute"
    )
    assert r.code == 0, r
    assert {p: row["committed_offset"] for p, row in _lag(kctl, group).items()} == {0: 0, 1: 0}


def test_dry_run_changes_nothing_and_clamping_is_shown(kctl, bootstrap, topic):
    group = unique("dry")
    _consume_and_commit(bootstrap, topic, group, {0: 4, 1: 6})
    r = kctl(
        "groups",
        "reset-offsets",
        group,
        "--topic",
        f"{topic}:1",
        "--to-offset",
        "999",
        "-o",
        "json",
    )
    assert r.code == 0, r
    assert json.loads(r.stdout) == [{"group": group, "topic": topic, "partition": 1, "current": 6,
                                     "target": 10, "delta": 4, "clamped": "to log end"}]  # fmt: skip
    assert "clamped to log end" in r.stderr and "nothing changed" in r.stderr
    assert {p: row["committed_offset"] for p, row in _lag(kctl, group).items()} == {0: 4, 1: 6}


def test_export_then_from_file_round_trips(kctl, bootstrap, topic, tmp_path):
    group = unique("exp")
    _consume_and_commit(bootstrap, topic, group, {0: 4, 1: 6})
    r = kctl("groups", "reset-offsets", group, "--topic", topic, "--shift-by", "-1", "--export")
    assert r.code == 0 and r.stdout == f"{topic},0,3\n{topic},1,5\n"
    plan = tmp_path / "plan.csv"
    plan.write_text(r.stdout)
    r = kctl("groups", "reset-offsets", group, "--from-file", str(plan), "--execute")
    assert r.code == 0, r
    assert {p: row["committed_offset"] for p, row in _lag(kctl, group).items()} == {0: 3, 1: 5}


def test_malformed_csv_names_the_line(kctl, bootstrap, topic, tmp_path):
    group = unique("csv")
    _consume_and_commit(bootstrap, topic, group, {0: 1, 1: 1})
    bad = tmp_path / "bad.csv"
    bad.write_text(f"{topic},0,1\n{topic},x,2\n")
    r = kctl("groups", "reset-offsets", group, "--from-file", str(bad))
    assert r.code == 2 and f"malformed line 2 in {bad}" in r.stderr


def test_unknown_group_and_unknown_topic_are_errors(kctl, bootstrap, topic):
    r = kctl("groups", "lag", "no-such-group-xyz")
    assert r.code == 1 and "unknown group 'no-such-group-xyz'" in r.stderr
    assert "no members and no committed offsets" in r.stderr
    group = unique("unk")
    _consume_and_commit(bootstrap, topic, group, {0: 1, 1: 1})
    r = kctl("groups", "reset-offsets", group, "--topic", "no-such-topic-q", "--to-earliest")
    assert r.code == 1 and "unknown topic 'no-such-topic-q'" in r.stderr


def test_reset_needs_exactly_one_spec(kctl):
    r = kctl("groups", "reset-offsets", "g", "--topic", "t", "--to-earliest", "--to-latest")
    assert r.code == 2 and "exactly one of" in r.stderr


def test_record_appends_samples_in_the_lag_sample_schema(kctl, bootstrap, topic, tmp_path):
    import pyarrow.parquet as pq

    group = unique("rec")
    _consume_and_commit(bootstrap, topic, group, {0: 2, 1: 3})
    jsonl = tmp_path / "lag.jsonl"
    for _ in range(2):
        assert kctl("groups", "lag", group, "--record", str(jsonl)).code == 0
    rows = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert len(rows) == 4
    fields = ["ts_ms", "cluster", "group", "topic", "partition", "committed_offset",
              "log_start_offset", "log_end_offset", "lag", "group_state", "member_id",
              "client_id", "host"]  # fmt: skip
    for row in rows:
        assert list(row) == fields
        assert isinstance(row["ts_ms"], int) and row["cluster"] and row["group"] == group
        assert row["lag"] == row["log_end_offset"] - row["committed_offset"]
    parquet = tmp_path / "lag.parquet"
    for _ in range(2):
        assert kctl("groups", "lag", group, "--record", str(parquet)).code == 0
    table = (
        pq.read_table(tmp_path, schema=None)
        if False
        else pq.ParquetDataset(sorted(str(p) for p in tmp_path.glob("lag*.parquet"))).read()
    )
    assert table.num_rows == 4
    assert [f.name for f in table.schema] == fields
    assert str(table.schema.field("partition").type) == "int32"
    assert str(table.schema.field("ts_ms").type) == "int64"


def test_delete_removes_an_empty_group(kctl, bootstrap, topic):
    group = unique("del")
    _consume_and_commit(bootstrap, topic, group, {0: 1, 1: 1})
    r = kctl("groups", "delete", group)
    assert r.code == 1 and "refusing to delete groups without --yes" in r.stderr
    r = kctl("groups", "delete", group, "--yes", "-o", "json")
    assert r.code == 0, r
    wait_for(lambda: kctl("groups", "lag", group).code == 1, "group gone")


def test_delete_offsets_works_or_names_the_missing_api(kctl, bootstrap, topic, lacks_api):
    group = unique("doff")
    _consume_and_commit(bootstrap, topic, group, {0: 1, 1: 1})
    r = kctl("groups", "delete-offsets", group, "--topic", f"{topic}:0", "--yes")
    if lacks_api("OffsetDelete"):
        assert r.code == 1
        assert "the broker does not support OffsetDelete" in r.stderr
        return
    assert r.code == 0, r
    assert set(_lag(kctl, group)) == {1}
