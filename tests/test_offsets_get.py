"""kctl offsets get against the real session broker.

Records are written one per batch: Tansu answers ListOffsets(latest) with the last batch's base
offset + 1, which is only right for single-record batches (Apache Kafka is right either way)."""

from __future__ import annotations

import json
import time

from conftest import unique


def write(bootstrap: str, topic: str, per_partition: dict[int, int]) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap})
    for part, n in per_partition.items():
        for i in range(n):
            p.produce(topic, f"{part}-{i}".encode(), partition=part)
            p.flush(10)


def test_earliest_latest_records_and_totals_per_partition(kctl, new_topic, bootstrap):
    topic = new_topic(partitions=3)
    write(bootstrap, topic, {0: 4, 1: 1})
    r = kctl("offsets", "get", topic, "-o", "json")
    assert r.code == 0, r
    doc = json.loads(r.stdout)
    assert doc["partitions"] == [
        {"topic": topic, "partition": 0, "earliest": 0, "latest": 4, "records": 4},
        {"topic": topic, "partition": 1, "earliest": 0, "latest": 1, "records": 1},
        {"topic": topic, "partition": 2, "earliest": 0, "latest": 0, "records": 0},
    ]
    assert doc["total_records"] == 5
    table = kctl("offsets", "get", topic, "-o", "table").stdout
    assert "TOTAL" in table.splitlines()[-1] and table.splitlines()[-1].split()[-1] == "5"


def test_time_gives_the_first_offset_at_or_after_it(kctl, new_topic, bootstrap):
    topic = new_topic(partitions=1)
    write(bootstrap, topic, {0: 2})
    time.sleep(0.02)  # the boundary must fall strictly between the appends
    boundary = int(time.time() * 1000)
    time.sleep(0.02)
    write(bootstrap, topic, {0: 1})
    r = kctl("offsets", "get", topic, "--time", f"@{boundary}", "-o", "json")
    assert r.code == 0, r
    (row,) = json.loads(r.stdout)["partitions"]
    assert row["offset_at_time"] == 2
    r = kctl("offsets", "get", topic, "--time", "2999-01-01T00:00:00Z", "-o", "json")
    assert json.loads(r.stdout)["partitions"][0]["offset_at_time"] == 3  # none yet: the end


def test_partition_filter_and_several_topics(kctl, new_topic, bootstrap):
    a, b = new_topic(partitions=2), new_topic(partitions=1)
    r = kctl("offsets", "get", a, b, "--partition", "0", "-o", "json")
    assert r.code == 0, r
    assert [(p["topic"], p["partition"]) for p in json.loads(r.stdout)["partitions"]] == [
        (a, 0),
        (b, 0),
    ]


def test_unknown_topic_partition_and_bad_time_are_one_line_errors(kctl, new_topic):
    r = kctl("offsets", "get", "no-such-topic-off")
    assert r.code == 1 and r.stderr.startswith("kctl: error: unknown topic 'no-such-topic-off'")
    topic = new_topic(partitions=1)
    r = kctl("offsets", "get", topic, "--partition", "3")
    assert r.code == 1 and "partition 3 of topic" in r.stderr
    r = kctl("offsets", "get", topic, "--time", "noon")
    assert r.code == 2 and "malformed --time 'noon'" in r.stderr and "max-timestamp" in r.stderr
    assert all(x.count("\n") == 1 for x in (r.stderr,))


def write_at(bootstrap: str, topic: str, partition: int, timestamps: list[int]) -> None:
    """One record per timestamp (CreateTime), in order, each its own batch."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for i, ts in enumerate(timestamps):
        p.produce(topic, f"r{i}".encode(), partition=partition, timestamp=ts)
        p.flush(10)


def get_offset_shell(kafka_tool, bootstrap: str, *args: str) -> set[tuple[str, int, int]]:
    """kafka-get-offsets.sh's answer as (topic, partition, offset) triples."""
    out = kafka_tool(
        "org.apache.kafka.tools.GetOffsetShell", "--bootstrap-server", bootstrap, *args
    ).stdout
    triples = set()
    for line in out.splitlines():
        topic, part, offset = line.rsplit(":", 2)
        triples.add((topic, int(part), int(offset)))
    return triples


def test_regex_and_every_special_time_agree_with_kafka_get_offsets(
    kctl, new_topic, bootstrap, kafka_tool
):
    prefix = unique("offre")
    a = new_topic(partitions=2, prefix=prefix)
    b = new_topic(partitions=1, prefix=prefix)
    base = 1_700_000_000_000
    # The largest timestamp sits in the middle: max-timestamp must answer offset 1, not the end.
    write_at(bootstrap, a, 0, [base + 10, base + 50, base + 20])
    write_at(bootstrap, b, 0, [base + 5])
    assert kctl("records", "delete", b, "--before", "0:1", "--yes").code == 0
    regex = f"{prefix}-.*"  # both topics, and nothing else
    for time_arg in ("-1", "-2", "-3", "-4", "-5", "latest", "max-timestamp", str(base + 15)):
        r = kctl("offsets", "get", regex, "--time", time_arg, "-o", "json")
        assert r.code == 0, r
        rows = json.loads(r.stdout)["partitions"]
        assert {row["topic"] for row in rows} == {a, b}
        theirs = get_offset_shell(kafka_tool, bootstrap, "--topic", regex, "--time", time_arg)
        ours = {
            (row["topic"], row["partition"], row["offset_at_time"])
            for row in rows
            if row["offset_at_time"] is not None
        }
        if time_arg.isdigit():
            # kctl answers the log end where no record is at or after the time (a seek target);
            # Kafka's tool prints nothing for those partitions.
            assert theirs <= ours
            extra = ours - theirs
            latest = {(row["topic"], row["partition"]): row["latest"] for row in rows}
            assert all(latest[(t, p)] == o for t, p, o in extra)
            assert (a, 0, 1) in theirs  # base + 50 is the first at or after base + 15
        else:
            assert ours == theirs, time_arg
    by_spec = json.loads(kctl("offsets", "get", a, "--time", "-3", "-o", "json").stdout)
    assert [row["offset_at_time"] for row in by_spec["partitions"]] == [1, None]
    assert by_spec["time"] == "max-timestamp"
    # The deleted record moved b's log start: earliest-local (-4) is the new log start.
    local = json.loads(kctl("offsets", "get", b, "--time", "earliest-local", "-o", "json").stdout)
    assert local["partitions"][0]["offset_at_time"] == 1


def test_topic_partitions_patterns_agree_with_kafka_get_offsets(
    kctl, new_topic, bootstrap, kafka_tool
):
    t = new_topic(partitions=4)
    write(bootstrap, t, {0: 1, 1: 2, 2: 3, 3: 4})
    for pattern in (f"{t}:1-3", f"{t}:2-", f"{t}:-2", f"{t}:3", t):
        r = kctl("offsets", "get", "--topic-partitions", pattern, "--time", "-1", "-o", "json")
        assert r.code == 0, r
        ours = {
            (row["topic"], row["partition"], row["offset_at_time"])
            for row in json.loads(r.stdout)["partitions"]
        }
        theirs = get_offset_shell(kafka_tool, bootstrap, "--topic-partitions", pattern)
        assert ours == theirs, pattern


def test_regex_and_pattern_mistakes_are_one_line_errors(kctl, new_topic):
    t = new_topic(partitions=1)
    cases = [
        (("offsets", "get", "no-such-.*-topic"), 1, "unknown topic 'no-such-.*-topic'"),
        (("offsets", "get", "bad[regex"), 2, "malformed topic regex 'bad[regex'"),
        (("offsets", "get", t, "--time", "-7"), 2, "unknown --time '-7'"),
        (("offsets", "get", "--topic-partitions", f"{t}:x"), 2, "malformed --topic-partitions"),
        (("offsets", "get", t, "--topic-partitions", t), 2, "cannot be used with topics"),
    ]
    for args, code, text in cases:
        r = kctl(*args)
        assert r.code == code and text in r.stderr and r.stderr.count("\n") == 1, (args, r)
