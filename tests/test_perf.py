"""kctl perf produce|consume against the real session broker."""

from __future__ import annotations

import json

FIELDS = {
    "records", "records_per_s", "mb_per_s", "latency_avg_ms", "latency_p50_ms",
    "latency_p95_ms", "latency_p99_ms", "latency_max_ms", "failed",
}  # fmt: skip


def test_perf_produce_then_consume_report_throughput_and_latency(kctl, new_topic):
    topic = new_topic(partitions=2)
    r = kctl("perf", "produce", topic, "--num-records", "5000", "--record-size", "200",
             "--producer-prop", "acks=1", "-o", "json")  # fmt: skip
    assert r.code == 0, r
    doc = json.loads(r.stdout)
    assert set(doc) >= FIELDS
    assert doc["records"] == 5000 and doc["failed"] == 0 and doc["bytes"] == 1_000_000
    assert 0 < doc["latency_p50_ms"] <= doc["latency_p95_ms"] <= doc["latency_p99_ms"]
    assert doc["latency_p99_ms"] <= doc["latency_max_ms"]
    assert doc["records_per_s"] > 0 and doc["mb_per_s"] > 0

    r = kctl("perf", "consume", topic, "--num-records", "5000", "-o", "json")
    assert r.code == 0, r
    doc = json.loads(r.stdout)
    assert doc["records"] == 5000 and doc["bytes"] == 1_000_000 and doc["failed"] == 0
    assert doc["latency_kind"] == "fetch batch" and doc["latency_max_ms"] >= 0

    table = kctl("perf", "consume", topic, "--num-records", "10", "-o", "table").stdout
    assert "RECORDS-PER-S" in table and "LATENCY-P99-MS" in table


def test_perf_produce_throughput_limits_the_rate(kctl, new_topic):
    topic = new_topic(partitions=1)
    r = kctl("perf", "produce", topic, "--num-records", "3000", "--throughput", "5000",
             "-o", "json")  # fmt: skip
    assert r.code == 0, r
    doc = json.loads(r.stdout)
    assert doc["records_per_s"] <= 5000 * 1.1 and doc["seconds"] >= 0.55


def test_perf_on_unknown_topic_is_a_one_line_error(kctl):
    r = kctl("perf", "produce", "no-such-topic-perf", "--num-records", "10")
    assert r.code == 1 and r.stderr.startswith("kctl: error: unknown topic")
    r = kctl("perf", "consume", "no-such-topic-perf", "--num-records", "10")
    assert r.code == 1 and r.stderr.count("\n") == 1


def test_a_record_above_message_max_bytes_is_one_line_naming_the_limit(kctl, new_topic):
    topic = new_topic(partitions=1)
    r = kctl("perf", "produce", topic, "--num-records", "2", "--record-size", "2000000")
    assert r.code == 1 and r.stdout == "", r
    assert r.stderr.strip().splitlines() == [
        "kctl: error: --record-size 2000000 is too large (above the producer's "
        "message.max.bytes, 1000000: raise it with --producer-prop message.max.bytes=N, and the "
        "topic's max.message.bytes)"
    ], r
    # The producer lets it through; the broker refuses it against the topic's max.message.bytes.
    r = kctl("perf", "produce", topic, "--num-records", "1", "--record-size", "2000000",
             "--producer-prop", "message.max.bytes=5000000")  # fmt: skip
    assert r.code == 1 and r.stdout == "", r
    assert r.stderr.strip() == (
        f"kctl: error: no record delivered to {topic!r} (Broker: Message size too large: a "
        "record of 2000000 bytes is above the topic's max.message.bytes)"
    ), r
