"""kctl groups against the real broker, with real confluent-kafka consumers."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from conftest import commit_offsets, on_tansu, unique, wait_for

PER_PARTITION = 10  # records in each of the 2 partitions
FAST_GROUP = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 1000}


def _produce(bootstrap: str, topic: str, partitions: int = 2, n: int = PER_PARTITION) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for i in range(n):
        for part in range(partitions):
            p.produce(topic, b"v%d" % i, partition=part)
            p.flush(10)  # one record per batch: every broker reports the log end exactly


def _commit(bootstrap: str, group: str, offsets: dict[tuple[str, int], int]) -> None:
    commit_offsets(bootstrap, group, offsets)


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


@pytest.fixture(scope="module")
def topic(bootstrap) -> str:
    """One topic of 2 partitions x 10 records for the module; each test uses its own group."""
    from confluent_kafka.admin import AdminClient, NewTopic

    name = unique("grp")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, 2, 1)])[name].result(timeout=30)
    wait_for(lambda: name in admin.list_topics(timeout=10).topics, f"topic {name} visible")
    _produce(bootstrap, name)
    return name


@pytest.fixture(scope="module")
def active_group(bootstrap, topic) -> Iterator[tuple[str, str, str]]:
    """A group with one live subscribed member (state Stable) that committed 3 records of
    partition 0. Tests only read it or are refused, so the module shares it (one join)."""
    from confluent_kafka import Consumer, TopicPartition

    group = unique("live")
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                  "auto.offset.reset": "earliest", **FAST_GROUP})  # fmt: skip
    c.subscribe([topic])
    deadline = time.monotonic() + 30
    while not c.assignment() and time.monotonic() < deadline:
        c.poll(0.2)
    assert c.assignment(), "the consumer did not join its group"
    c.commit(offsets=[TopicPartition(topic, 0, 3)], asynchronous=False)
    try:
        yield group, topic, c.memberid()
    finally:
        c.close()


def _json(kctl, *args: str):
    r = kctl(*args, "-o", "json")
    assert r.code == 0, r
    return json.loads(r.stdout)


def _lag(kctl, group: str) -> dict[int, dict]:
    return {row["partition"]: row for row in _json(kctl, "groups", "lag", group)["partitions"]}


def _described_offsets(kctl, group: str) -> dict[int, int | None]:
    """The committed offsets as `groups describe` (the --offsets view) shows them."""
    return {r["partition"]: r["current_offset"] for r in _json(kctl, "groups", "describe", group)}


def test_lag_is_produced_minus_consumed_per_partition(kctl, bootstrap, topic):
    group = unique("lag")
    _consume_and_commit(bootstrap, topic, group, {0: 4, 1: 7})
    doc = _json(kctl, "groups", "lag", group)
    rows = {r["partition"]: r for r in doc["partitions"]}
    assert {p: (r["committed_offset"], r["log_end_offset"], r["lag"]) for p, r in rows.items()} == {
        0: (4, 10, 6),
        1: (7, 10, 3),
    }
    assert doc["groups"] == [
        {"group": group, "group_type": "classic", "lag": 9, "time_lag_ms": None}
    ]
    assert doc["topics"] == [{"group": group, "topic": topic, "lag": 9}]
    assert rows[0]["group_state"] == "Empty" and rows[0]["member_id"] is None
    described = _json(kctl, "groups", "describe", group)
    assert [(r["partition"], r["current_offset"], r["log_end_offset"], r["lag"]) for r in described] \
        == [(0, 4, 10, 6), (1, 7, 10, 3)]  # fmt: skip


def test_lag_without_groups_covers_every_group_and_topic_filters(kctl, bootstrap, topic):
    group = unique("every")
    _consume_and_commit(bootstrap, topic, group, {0: 1, 1: 1})
    every = _json(kctl, "groups", "lag")
    assert {"group": group, "group_type": "classic", "lag": 18, "time_lag_ms": None} in every[
        "groups"
    ]
    assert _json(kctl, "groups", "lag", group, "--topic", "other-topic")["partitions"] == []
    r = kctl("groups", "lag", group, "--all-groups")
    assert r.code == 2 and "not both" in r.stderr


def test_fail_above_exits_3_only_when_exceeded(kctl, bootstrap, topic):
    group = unique("fail")
    _consume_and_commit(bootstrap, topic, group, {0: 5, 1: 5})  # lag 10
    assert kctl("groups", "lag", group, "--fail-above", "10").code == 0
    r = kctl("groups", "lag", group, "--fail-above", "9", "-o", "json")
    assert r.code == 3 and f"'{group}' has lag 10" in r.stderr
    (total,) = json.loads(r.stdout)["groups"]  # the data still comes
    assert (total["group"], total["lag"]) == (group, 10)


def test_active_group_is_stable_with_its_member(kctl, active_group):
    group, topic, member_id = active_group
    (state,) = _json(kctl, "groups", "describe", group, "--state")
    assert state["state"] == "Stable" and state["members"] == 1 and state["coordinator"] >= 0
    (member,) = _json(kctl, "groups", "describe", group, "--members")
    assert member["member_id"] == member_id
    listed = {g["group"]: g for g in _json(kctl, "groups", "list")}
    assert listed[group]["state"] == "Stable" and listed[group]["members"] == 1
    assert listed[group]["type"] in ("classic", "unknown")
    stable = {g["group"] for g in _json(kctl, "groups", "list", "--state", "stable")}
    empty = {g["group"] for g in _json(kctl, "groups", "list", "--state", "Empty")}
    assert group in stable and group not in empty
    lag = _lag(kctl, group)
    assert lag[0]["committed_offset"] == 3 and lag[0]["lag"] == 7
    assert lag[0]["group_state"] == "Stable"
    if on_tansu() and not member["assignment"]:
        pytest.skip("the broker's DescribeGroups answer carries no member assignment (Tansu)")
    assert sorted(member["assignment"]) == [f"{topic}:0", f"{topic}:1"]
    assert lag[0]["member_id"] == member_id and lag[1]["member_id"] == member_id


def test_reset_and_delete_refuse_a_group_with_members(kctl, active_group):
    group, topic, _ = active_group
    r = kctl("groups", "reset-offsets", group, "--topic", topic, "--to-earliest", "--execute")
    assert r.code == 1 and "refusing to reset offsets" in r.stderr and "active member" in r.stderr
    r = kctl("groups", "delete", group, "--yes")
    assert r.code == 1 and f"refusing to delete group '{group}'" in r.stderr
    assert r.stderr.count("\n") == 1
    assert _lag(kctl, group)[0]["committed_offset"] == 3  # nothing changed


def test_group_list_filters_by_type_and_rejects_unknown_types(kctl, active_group):
    group, _, _ = active_group
    assert group not in {g["group"] for g in _json(kctl, "groups", "list", "--type", "share")}
    r = kctl("groups", "list", "--type", "bogus")
    assert r.code == 2 and "unknown group type bogus" in r.stderr


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
    assert {row["partition"]: row["target"] for row in json.loads(r.stdout)} == expected
    assert _described_offsets(kctl, group) == expected


def test_lag_of_several_groups_puts_each_total_under_its_group(kctl, bootstrap, topic):
    first, second = sorted([unique("tot-a"), unique("tot-b")])
    _consume_and_commit(bootstrap, topic, first, {0: 4, 1: 6})
    _consume_and_commit(bootstrap, topic, second, {0: 1, 1: 1})
    for fmt in ("plain", "table"):
        r = kctl("groups", "lag", first, second, "-o", fmt)
        assert r.code == 0, r
        rows = [line.split() for line in r.stdout.splitlines()[1:] if line.strip()]
        groups = [row[0] for row in rows]
        assert groups == [first, first, first, second, second, second], r.stdout
        assert rows[2][1] == "TOTAL" and rows[2][-1] == "10"
        assert rows[5][1] == "TOTAL" and rows[5][-1] == "18"


def test_shift_by_refuses_a_partition_without_a_committed_offset(kctl, bootstrap, topic):
    group = unique("shift")
    _consume_and_commit(bootstrap, topic, group, {0: 4})  # partition 1: no commit
    r = kctl("groups", "reset-offsets", group, "--topic", topic, "--shift-by", "-1", "--execute")
    assert r.code == 1, r
    assert r.stderr.startswith(f"kctl: error: cannot shift the offset of {topic}[1] (")
    assert r.stdout == "" and len(r.stderr.splitlines()) == 1
    assert _described_offsets(kctl, group) == {0: 4}  # nothing committed
    r = kctl("groups", "reset-offsets", group, "-t", f"{topic}:0", "--shift-by", "-1", "--execute")
    assert r.code == 0, r
    assert _described_offsets(kctl, group) == {0: 3}


def test_reset_by_time_finds_the_first_offset_at_or_after_it(kctl, bootstrap, topic):
    group = unique("time")
    _consume_and_commit(bootstrap, topic, group, {0: 4, 1: 6})
    r = kctl("groups", "reset-offsets", group, "--topic", topic, "--to-datetime",
             "2000-01-01T00:00:00Z", "--execute")  # fmt: skip
    assert r.code == 0, r
    assert _described_offsets(kctl, group) == {0: 0, 1: 0}
    # A time after every record: no offset at or after it, so the log end (as Kafka's tool).
    r = kctl("groups", "reset-offsets", group, "--topic", f"{topic}:1", "--to-datetime",
             "2999-01-01T00:00:00+00:00", "--execute")  # fmt: skip
    assert r.code == 0, r
    assert _described_offsets(kctl, group) == {0: 0, 1: 10}
    _commit(bootstrap, group, {(topic, 0): 5, (topic, 1): 5})
    r = kctl(
        "groups", "reset-offsets", group, "--all-topics", "--by-duration", "P3650D", "--execute"
    )
    assert r.code == 0, r
    assert _described_offsets(kctl, group) == {0: 0, 1: 0}


def test_dry_run_changes_nothing_and_clamping_is_shown(kctl, bootstrap, topic):
    group = unique("dry")
    _consume_and_commit(bootstrap, topic, group, {0: 4, 1: 6})
    r = kctl("groups", "reset-offsets", group, "--topic", f"{topic}:1", "--to-offset", "999",
             "-o", "json")  # fmt: skip
    assert r.code == 0, r
    assert json.loads(r.stdout) == [{"group": group, "topic": topic, "partition": 1, "current": 6,
                                     "target": 10, "delta": 4, "clamped": "to log end"}]  # fmt: skip
    assert f"{topic}[1]: target clamped to log end 10" in r.stderr
    assert "nothing changed" in r.stderr
    r = kctl("groups", "reset-offsets", group, "--topic", topic, "--shift-by", "-100")
    assert r.code == 0, r
    lines = [line.split("\t") for line in r.stdout.splitlines()]
    assert lines[0] == ["GROUP", "TOPIC", "PARTITION", "CURRENT", "TARGET", "DELTA", "CLAMPED"]
    assert lines[1][2:] == ["0", "4", "0", "-4", "to log start"]
    assert lines[2][2:] == ["1", "6", "0", "-6", "to log start"]
    assert _described_offsets(kctl, group) == {0: 4, 1: 6}


def test_export_then_from_file_round_trips(kctl, bootstrap, topic, tmp_path):
    group = unique("exp")
    _consume_and_commit(bootstrap, topic, group, {0: 4, 1: 6})
    r = kctl("groups", "reset-offsets", group, "--topic", topic, "--shift-by", "-1", "--export")
    assert r.code == 0 and r.stdout == f"{topic},0,3\n{topic},1,5\n"
    assert _described_offsets(kctl, group) == {0: 4, 1: 6}  # export alone changes nothing
    plan = tmp_path / "plan.csv"
    plan.write_text(r.stdout)
    r = kctl("groups", "reset-offsets", group, "--from-file", str(plan), "--execute")
    assert r.code == 0, r
    assert _described_offsets(kctl, group) == {0: 3, 1: 5}


def test_malformed_csv_names_the_line(kctl, bootstrap, topic, tmp_path):
    group = unique("csv")
    _consume_and_commit(bootstrap, topic, group, {0: 1, 1: 1})
    bad = tmp_path / "bad.csv"
    bad.write_text(f"{topic},0,1\n{topic},x,2\n")
    r = kctl("groups", "reset-offsets", group, "--from-file", str(bad))
    assert r.code == 2 and f"malformed line 2 in {bad}" in r.stderr
    bad.write_text(f"{topic},0,1\n{topic},9,2\n")
    r = kctl("groups", "reset-offsets", group, "--from-file", str(bad))
    assert r.code == 1 and f"partition 9 of topic '{topic}' does not exist" in r.stderr


def test_unknown_group_unknown_topic_and_missing_partition_are_errors(kctl, bootstrap, topic):
    for args in (["lag"], ["describe"], ["describe", "--members"], ["delete", "--yes"]):
        r = kctl("groups", *args, "no-such-group-xyz")
        assert r.code == 1, (args, r)
        assert r.stderr.startswith("kctl: error: unknown group 'no-such-group-xyz' (state ")
        assert "no members and no committed offsets" in r.stderr
    group = unique("unk")
    _consume_and_commit(bootstrap, topic, group, {0: 1, 1: 1})
    r = kctl("groups", "reset-offsets", group, "--topic", "no-such-topic-q", "--to-earliest")
    assert r.code == 1 and "unknown topic 'no-such-topic-q'" in r.stderr
    r = kctl("groups", "reset-offsets", group, "--topic", f"{topic}:0,5", "--to-earliest")
    assert r.code == 1 and f"partition 5 of topic '{topic}' does not exist" in r.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--topic", "t", "--to-earliest", "--to-latest"], "exactly one of"),
        (["--topic", "t"], "exactly one of"),
        (["--to-earliest"], "give --topic (repeatable) or --all-topics"),
        (["--topic", "t", "--all-topics", "--to-latest"], "not both"),
        (["--topic", "t:x", "--to-latest"], "malformed --topic 't:x'"),
        (["--topic", "t", "--by-duration", "1 hour"], "malformed --by-duration '1 hour'"),
        (["--topic", "t", "--to-datetime", "yesterday"], "malformed --to-datetime 'yesterday'"),
    ],
)
def test_reset_offsets_usage_errors_exit_2(kctl, args, message):
    r = kctl("groups", "reset-offsets", "g", *args)
    assert r.code == 2 and message in r.stderr, r


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
              "client_id", "host", "group_type", "time_lag_ms"]  # fmt: skip
    types = {"ts_ms": int, "cluster": str, "group": str, "topic": str, "partition": int,
             "committed_offset": int, "log_start_offset": int, "log_end_offset": int,
             "lag": int, "group_state": str, "group_type": str}  # fmt: skip
    for row in rows:
        assert list(row) == fields
        assert all(isinstance(row[k], t) for k, t in types.items()), row
        assert row["cluster"] and row["group"] == group and row["topic"] == topic
        assert row["lag"] == row["log_end_offset"] - row["committed_offset"]
        assert row["member_id"] is row["client_id"] is row["host"] is None  # unassigned
        assert row["group_type"] == "classic"
    assert {(r["partition"], r["lag"]) for r in rows} == {(0, 8), (1, 7)}
    parquet = tmp_path / "lag.parquet"
    for _ in range(2):
        assert kctl("groups", "lag", group, "--record", str(parquet)).code == 0
    table = pq.ParquetDataset(sorted(str(p) for p in tmp_path.glob("lag*.parquet"))).read()
    assert table.num_rows == 4
    assert [f.name for f in table.schema] == fields
    kinds = {f.name: str(f.type) for f in table.schema}
    assert kinds["partition"] == "int32" and kinds["group"] == "string"
    assert all(kinds[k] == "int64" for k in ("ts_ms", "committed_offset", "log_start_offset",
                                              "log_end_offset", "lag"))  # fmt: skip
    assert sorted(table.column("lag").to_pylist()) == [7, 7, 8, 8]
    r = kctl("groups", "lag", group, "--record", str(tmp_path / "lag.txt"))
    assert r.code == 2 and "name it .jsonl or .parquet" in r.stderr


def test_delete_asks_then_removes_an_empty_group(kctl, bootstrap, topic):
    group = unique("del")
    _consume_and_commit(bootstrap, topic, group, {0: 1, 1: 1})
    r = kctl("groups", "delete", group)
    assert r.code == 1 and "refusing to delete groups without --yes" in r.stderr
    assert _lag(kctl, group)[0]["committed_offset"] == 1  # still there
    r = kctl("groups", "delete", group, "--yes", "-o", "json")
    assert r.code == 0, r
    assert json.loads(r.stdout) == [{"group": group, "status": "deleted"}]
    wait_for(lambda: kctl("groups", "lag", group).code == 1, "group gone")


def test_delete_offsets_works_or_names_the_missing_api(kctl, bootstrap, topic, lacks_api):
    group = unique("doff")
    _consume_and_commit(bootstrap, topic, group, {0: 1, 1: 1})
    r = kctl("groups", "delete-offsets", group, "--topic", f"{topic}:0", "--yes")
    if lacks_api("OffsetDelete"):
        assert r.code == 1
        assert r.stderr == (
            f"kctl: error: deleting offsets of group '{group}': the broker does not support "
            "OffsetDelete (not in its ApiVersions)\n"
        )
        pytest.skip("the broker does not support OffsetDelete: only its refusal was checked")
    assert r.code == 0, r
    assert set(_lag(kctl, group)) == {1}


def test_a_commit_beyond_the_log_end_is_flagged_warned_and_never_ok(
    kctl, bootstrap, topic, tmp_path
):
    # Kafka takes any offset in OffsetCommit: commit 500 where partition 0's log ends at 10,
    # what a truncated or recreated log leaves behind a group.
    group = unique("neg")
    _commit(bootstrap, group, {(topic, 0): 500, (topic, 1): 3})
    samples = tmp_path / "lag.jsonl"
    r = kctl("groups", "lag", group, "--record", str(samples), "-o", "json")
    assert r.code == 0, r
    doc = json.loads(r.stdout)
    rows = {row["partition"]: row for row in doc["partitions"]}
    assert (rows[0]["lag"], rows[0]["flag"]) == (-490, "negative_lag")
    assert (rows[1]["lag"], rows[1]["flag"]) == (7, None)
    (total,) = doc["groups"]
    assert (total["group"], total["lag"]) == (group, 7)  # -490 does not hide partition 1's 7
    assert r.stderr == (
        f"kctl: warning: negative lag -490 in group '{group}', topic '{topic}' partition 0: "
        "committed offset 500 is beyond the log end offset 10 (the log was truncated or the "
        "topic recreated under the commit; a consumer will get OFFSET_OUT_OF_RANGE and reset)\n"
    )
    recorded = [json.loads(line) for line in samples.read_text().splitlines()]
    assert {row["partition"]: row["lag"] for row in recorded} == {0: -490, 1: 7}
    assert "flag" not in recorded[0]  # the lag-sample schema is unchanged
    # --fail-above judges the total without the negative partition
    assert kctl("groups", "lag", group, "--fail-above", "7").code == 0
    assert kctl("groups", "lag", group, "--fail-above", "6").code == 3
    # the table view shows the flag too, and describe warns the same way
    r = kctl("groups", "lag", group)
    line = next(x for x in r.stdout.splitlines() if x.split("\t")[2:3] == ["0"])
    assert line.split("\t")[3:7] == ["500", "10", "-490", "negative_lag"]
    r = kctl("groups", "describe", group)
    assert r.code == 0 and "kctl: warning: negative lag -490" in r.stderr
    # analytics: the partition is NEGATIVE and the group ERR, never OK
    assert kctl("groups", "lag", group, "--record", str(samples)).code == 0
    r = kctl("analytics", "lag", str(samples), "--level", "partition", "--master", "local[1]",
             "-o", "json", timeout=240)  # fmt: skip
    assert r.code == 0, r
    parts = {p["partition"]: p for p in json.loads(r.stdout)["partitions"]}
    assert parts[0]["status"] == "NEGATIVE" and parts[0]["lag"] == -490
    r = kctl("analytics", "lag", str(samples), "--master", "local[1]", "-o", "json", timeout=240)
    assert r.code == 0, r
    (g,) = json.loads(r.stdout)["groups"]
    assert g["group"] == group and g["status"] == "ERR"
