"""groups lag --time-lag against truth on the real cluster: records produced with known
timestamps, groups committed part way through them; the time lag kctl shows is now minus the
timestamp of the first record the group has not consumed, within a second."""

from __future__ import annotations

import json
import time

import pytest
from conftest import commit_offsets, on_tansu, unique

pytestmark = pytest.mark.skipif(on_tansu(), reason="Tansu's Fetch answers are not the reference")

OLD = 120_000  # the first record is two minutes old


def _produce_timed(bootstrap: str, topic: str, stamps: list[int], partition: int = 0) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, "compression.type": "lz4"})
    for i, ts in enumerate(stamps):
        p.produce(topic, b"v%d" % i, partition=partition, timestamp=ts)
    assert p.flush(30) == 0


def _lag(kctl, *args: str) -> tuple[dict, float]:
    r = kctl("groups", "lag", *args, "-o", "json")
    assert r.code == 0, r
    return json.loads(r.stdout), time.time() * 1000


def test_time_lag_is_the_age_of_the_first_unconsumed_record_within_a_second(
    kctl, bootstrap, new_topic
):
    topic = new_topic(partitions=2)
    base = int(time.time() * 1000) - OLD
    # 40 records one second apart on partition 0 (batched and compressed: the commit lands in
    # the middle of a batch), 5 on partition 1.
    _produce_timed(bootstrap, topic, [base + i * 1000 for i in range(40)], 0)
    _produce_timed(bootstrap, topic, [base + i * 1000 for i in range(5)], 1)
    group = unique("tl")
    commit_offsets(bootstrap, group, {(topic, 0): 17, (topic, 1): 5})  # p1 caught up
    before = time.time() * 1000
    doc, after = _lag(kctl, group, "--time-lag")
    rows = {r["partition"]: r for r in doc["partitions"]}
    # The first record not consumed on partition 0 is offset 17, stamped base + 17 s.
    first = base + 17_000
    assert before - first - 1000 <= rows[0]["time_lag_ms"] <= after - first + 1000
    assert rows[0]["lag"] == 23
    assert (rows[1]["lag"], rows[1]["time_lag_ms"]) == (0, 0)  # caught up: 0, never growing
    (total,) = doc["groups"]
    assert total["time_lag_ms"] == rows[0]["time_lag_ms"]  # the group's: its largest

    # The table shows it in seconds after LAG, and --fail-above-seconds judges it.
    r = kctl("groups", "lag", group, "--time-lag", "-o", "table")
    assert r.code == 0 and "TIME-LAG" in r.stdout.splitlines()[0], r
    assert kctl("groups", "lag", group, "--fail-above-seconds", "3600").code == 0
    r = kctl("groups", "lag", group, "--fail-above-seconds", "60")
    assert r.code == 3, r
    assert f"1 group(s) with time lag above 60s ('{group}' is 1m" in r.stderr


def test_a_burst_of_new_records_does_not_inflate_a_caught_up_groups_time_lag(
    kctl, bootstrap, new_topic
):
    topic = new_topic(partitions=1)
    now = int(time.time() * 1000)
    _produce_timed(bootstrap, topic, [now - OLD + i for i in range(10)])
    group = unique("tl-burst")
    commit_offsets(bootstrap, group, {(topic, 0): 10})
    doc, _ = _lag(kctl, group, "--time-lag")
    assert doc["partitions"][0]["time_lag_ms"] == 0  # idle and caught up: 0
    # A burst written now: the group is behind on records a moment old, not two minutes.
    _produce_timed(bootstrap, topic, [int(time.time() * 1000)] * 500)
    doc, _ = _lag(kctl, group, "--time-lag")
    (row,) = doc["partitions"]
    assert row["lag"] == 500 and 0 <= row["time_lag_ms"] < 10_000


def test_log_append_time_topics_show_the_brokers_append_time(kctl, bootstrap, new_topic):
    topic = new_topic(partitions=1, config={"message.timestamp.type": "LogAppendTime"})
    before = time.time() * 1000
    _produce_timed(bootstrap, topic, [int(before) - 3_600_000] * 5)  # CreateTime an hour old
    after = time.time() * 1000
    group = unique("tl-lat")
    commit_offsets(bootstrap, group, {(topic, 0): 2})
    doc, read = _lag(kctl, group, "--time-lag")
    # The broker stamped them on append: the time lag is since then, not an hour.
    assert read - after - 1000 <= doc["partitions"][0]["time_lag_ms"] <= read - before + 1000


def test_without_a_commit_there_is_no_time_lag_and_without_the_option_none_is_read(
    kctl, bootstrap, new_topic
):
    topic = new_topic(partitions=2)
    _produce_timed(bootstrap, topic, [int(time.time() * 1000) - OLD] * 3)
    group = unique("tl-none")
    commit_offsets(bootstrap, group, {(topic, 0): 1})
    doc, _ = _lag(kctl, group)
    assert [r["time_lag_ms"] for r in doc["partitions"]] == [None]
    assert doc["groups"][0]["time_lag_ms"] is None
