"""kctl offsets get against the real session broker.

Records are written one per batch: Tansu answers ListOffsets(latest) with the last batch's base
offset + 1, which is only right for single-record batches (Apache Kafka is right either way)."""

from __future__ import annotations

import json
import time


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
    assert r.code == 2 and "malformed time 'noon'" in r.stderr
    assert all(x.count("\n") == 1 for x in (r.stderr,))
