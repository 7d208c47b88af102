"""kctl produce against the real session broker; records are read back with the client library
directly (not with kctl consume), so a bug in one command cannot hide one in the other."""

from __future__ import annotations

import base64
import json
import re

import pytest
from conftest import unique

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


@pytest.fixture(params=["c-producer", "confluent-kafka"])
def kctl_env(kctl_env: dict[str, str], request: pytest.FixtureRequest) -> dict[str, str]:
    """Every test here runs twice: plain and keyed lines through kctl's own librdkafka producer
    (the default), then through confluent-kafka's Producer (KCTL_NATIVE_PRODUCER=0)."""
    if request.param == "confluent-kafka":
        return {**kctl_env, "KCTL_NATIVE_PRODUCER": "0"}
    return kctl_env


def read_all(bootstrap: str, topic: str, timeout: float = 15.0) -> list:
    """Every record of every partition, through confluent-kafka, until each partition's EOF."""
    import time

    from confluent_kafka import Consumer, KafkaError, TopicPartition

    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "test-reader",
            "enable.partition.eof": True,
            "enable.auto.commit": False,
        }
    )
    try:
        parts = c.list_topics(topic, timeout=10).topics[topic].partitions
        c.assign([TopicPartition(topic, p, -2) for p in parts])
        eof: set[int] = set()
        out = []
        deadline = time.monotonic() + timeout
        while len(eof) < len(parts) and time.monotonic() < deadline:
            for m in c.consume(1000, 0.2):
                if m.error() is None:
                    out.append(m)
                elif m.error().code() == KafkaError._PARTITION_EOF:
                    eof.add(m.partition())
        assert len(eof) == len(parts), "partitions did not reach their end in time"
        return sorted(out, key=lambda m: (m.partition(), m.offset()))
    finally:
        c.close()


def summary_counts(stderr: str) -> tuple[int, int]:
    match = re.search(r"delivered (\d+), failed (\d+)", stderr)
    assert match, stderr
    return int(match.group(1)), int(match.group(2))


def test_lines_with_key_separator_null_marker_and_headers_round_trip(kctl, new_topic, bootstrap):
    topic = new_topic(partitions=1)
    text = "k1\tv1\nNULL\tv2\nk3\tNULL\nno-separator\n\tempty-key\n"
    r = kctl(
        "produce", topic, "--key-separator", "\\t", "--null-marker", "NULL",
        "--header", "src=test", "--header", "n=1", input=text,
    )  # fmt: skip
    assert r.code == 0, r
    assert r.stdout == ""
    assert summary_counts(r.stderr) == (5, 0)
    got = [(m.key(), m.value(), m.headers()) for m in read_all(bootstrap, topic)]
    hdrs = [("src", b"test"), ("n", b"1")]
    assert got == [
        (b"k1", b"v1", hdrs),
        (None, b"v2", hdrs),
        (b"k3", None, hdrs),
        (None, b"no-separator", hdrs),
        (b"", b"empty-key", hdrs),
    ]


def test_plain_lines_keep_binary_bytes_and_empty_lines(kctl, new_topic, bootstrap, tmp_path):
    topic = new_topic(partitions=1)
    path = tmp_path / "in.bin"
    path.write_bytes(b"\xff\xfe\x00raw\n\nlast-without-newline")
    r = kctl("produce", topic, "--file", str(path))
    assert r.code == 0, r
    assert [m.value() for m in read_all(bootstrap, topic)] == [
        b"\xff\xfe\x00raw",
        b"",
        b"last-without-newline",
    ]


def test_jsonl_input_sets_key_value_headers_partition_timestamp_and_binary(
    kctl, new_topic, bootstrap
):
    topic = new_topic(partitions=3)
    binary = bytes(range(256))
    lines = [
        {"key": "a", "value": "plain", "headers": {"h": "1"}, "partition": 2, "timestamp": 1_600_000_000_123},
        {"key": None, "value": base64.b64encode(binary).decode(), "encoding": "base64", "partition": 1},
        {"value": {"nested": [1, 2]}, "partition": 0, "headers": [["x", "1"], ["x", "2"]]},
        {"key": "00ff", "key_encoding": "hex", "value": None, "partition": 0},
    ]  # fmt: skip
    r = kctl("produce", topic, "--format", "jsonl", input="\n".join(map(json.dumps, lines)))
    assert r.code == 0, r
    by_part = {m.partition(): [] for m in read_all(bootstrap, topic)}
    for m in read_all(bootstrap, topic):
        by_part[m.partition()].append(m)
    (m2,) = by_part[2]
    assert (m2.key(), m2.value(), m2.headers()) == (b"a", b"plain", [("h", b"1")])
    assert m2.timestamp() == (1, 1_600_000_000_123)
    (m1,) = by_part[1]
    assert m1.key() is None and m1.value() == binary
    first, second = by_part[0]
    assert json.loads(first.value()) == {"nested": [1, 2]}
    assert first.headers() == [("x", b"1"), ("x", b"2")]
    assert second.key() == b"\x00\xff" and second.value() is None


@pytest.mark.parametrize("codec", CODECS)
def test_each_compression_codec_round_trips(kctl, new_topic, bootstrap, codec):
    topic = new_topic(partitions=1)
    values = [f"{codec}-{i}-" + "x" * 200 for i in range(50)]
    r = kctl("produce", topic, "--compression", codec, input="\n".join(values) + "\n")
    assert r.code == 0, r
    assert [m.value().decode() for m in read_all(bootstrap, topic)] == values


def test_partition_option_sends_everything_to_that_partition(kctl, new_topic, bootstrap):
    topic = new_topic(partitions=3)
    r = kctl("produce", topic, "--partition", "2", input="a\nb\nc\n")
    assert r.code == 0, r
    assert {m.partition() for m in read_all(bootstrap, topic)} == {2}


def test_default_partitioner_places_keys_as_the_java_client(kctl, new_topic, bootstrap):
    from kafka.partitioner.default import murmur2

    topic = new_topic(partitions=5)
    keys = [f"key-{i}" for i in range(20)]
    r = kctl("produce", topic, "-K", ":", input="".join(f"{k}:v\n" for k in keys))
    assert r.code == 0, r
    for m in read_all(bootstrap, topic):
        assert m.partition() == (murmur2(m.key()) & 0x7FFFFFFF) % 5


def test_single_record_from_key_and_value_options(kctl, new_topic, bootstrap):
    topic = new_topic(partitions=1)
    r = kctl("produce", topic, "--key", "id-7", "--value", '{"n": 7}', "--header", "a=b")
    assert r.code == 0, r
    (m,) = read_all(bootstrap, topic)
    assert (m.key(), m.value(), m.headers()) == (b"id-7", b'{"n": 7}', [("a", b"b")])


def test_transactional_id_commits_all_input_in_one_transaction(kctl, new_topic, bootstrap):
    topic = new_topic(partitions=2)
    r = kctl("produce", topic, "--transactional-id", unique("txn"), input="a\nb\nc\n")
    assert r.code == 0, r
    assert "transaction committed" in r.stderr
    assert sorted(m.value() for m in read_all(bootstrap, topic)) == [b"a", b"b", b"c"]


def test_acks_linger_batch_size_and_rate_options_are_applied(kctl, new_topic, bootstrap):
    import time

    topic = new_topic(partitions=1)
    started = time.monotonic()
    r = kctl(
        "produce", topic, "--acks", "1", "--linger-ms", "0", "--batch-size", "1000",
        "--rate", "40", input="".join(f"r{i}\n" for i in range(20)),
    )  # fmt: skip
    took = time.monotonic() - started
    assert r.code == 0, r
    assert summary_counts(r.stderr) == (20, 0)
    assert took >= 0.45  # 20 records at 40/s cannot take less than ~0.5 s
    assert len(read_all(bootstrap, topic)) == 20


def test_acks_0_delivers_without_offsets_and_says_so(kctl, new_topic, bootstrap):
    """With --acks 0 the broker answers nothing: the records are counted delivered, their
    offsets are unknown (null), never a crash."""
    import json

    topic = new_topic(partitions=1)
    r = kctl("produce", topic, "--acks", "0", "-o", "json", input="a\nb\nc\n")
    assert r.code == 0, r
    assert summary_counts(r.stderr) == (3, 0)
    rows = json.loads(r.stdout)["partitions"]
    assert [(p["delivered"], p["first_offset"], p["last_offset"]) for p in rows] == [
        (3, None, None)
    ]
    assert len(read_all(bootstrap, topic)) == 3


def test_a_refused_record_fails_the_run_and_names_the_first_error(kctl, new_topic, bootstrap):
    topic = new_topic(partitions=1)
    text = "small\n" + "x" * 5000 + "\nsmall-too\n"
    r = kctl("produce", topic, "-X", "message.max.bytes=2000", input=text)
    assert r.code == 1, r
    assert summary_counts(r.stderr) == (2, 1)
    last = r.stderr.strip().splitlines()[-1]
    assert (
        last.startswith("kctl: error: 1 record(s) not delivered") and "MSG_SIZE_TOO_LARGE" in last
    )
    assert [m.value() for m in read_all(bootstrap, topic)] == [b"small", b"small-too"]


def test_json_summary_counts_a_refused_record_as_failed_not_unknown(kctl, new_topic, bootstrap):
    topic = new_topic(partitions=1)
    text = "small\n" + "x" * 5000 + "\nsmall-too\n"
    r = kctl(
        "produce", topic, "--partition", "0", "-X", "message.max.bytes=2000", "-o", "json",
        input=text,
    )  # fmt: skip
    assert r.code == 1, r
    doc = json.loads(r.stdout)  # stdout holds the summary document only
    assert (doc["delivered"], doc["failed"], doc["unknown"]) == (2, 1, 0)
    assert doc["partitions"] == [
        {
            "partition": 0,
            "delivered": 2,
            "first_offset": 0,
            "last_offset": 1,
            "failed": 1,
            "unknown": 0,
        }
    ]
    assert doc["topic"] == topic and doc["stalled"] is False and doc["transaction"] is None
    assert doc["first_error"].startswith("MSG_SIZE_TOO_LARGE")
    assert "delivered 2, failed 1, unknown 0," in r.stderr
    ok = kctl("produce", topic, "-o", "jsonl", input="a\nb\n")
    assert ok.code == 0, ok
    (line,) = ok.stdout.splitlines()
    assert json.loads(line)["delivered"] == 2 and json.loads(line)["unknown"] == 0


def test_sigint_mid_file_flushes_and_summary_matches_the_broker(
    new_topic, bootstrap, kctl_env, tmp_path
):
    import signal
    import subprocess
    import sys
    import time

    from confluent_kafka import Consumer, TopicPartition

    topic = new_topic(partitions=1)
    path = tmp_path / "big.txt"
    path.write_text("".join(f"record-{i}\n" for i in range(200_000)))
    proc = subprocess.Popen(
        [sys.executable, "-m", "kctl", "produce", topic, "--file", str(path), "--rate", "2000"],
        env=kctl_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "sigint-watch"})
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            _, high = c.get_watermark_offsets(TopicPartition(topic, 0), timeout=5, cached=False)
            if high > 0:
                break
            time.sleep(0.05)
        else:
            pytest.fail("no record reached the broker within 20 s")
    finally:
        c.close()
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    delivered, failed = summary_counts(err)
    assert failed == 0 and 0 < delivered < 200_000
    assert "interrupted" in err
    values = [m.value() for m in read_all(bootstrap, topic)]
    assert len(values) == delivered
    assert values == [f"record-{i}".encode() for i in range(delivered)]


def test_unknown_topic_is_one_line_error(kctl):
    r = kctl("produce", "no-such-topic-prod", input="x\n")
    assert r.code == 1
    assert r.stderr == (
        "kctl: error: unknown topic 'no-such-topic-prod' (not in the cluster's metadata)\n"
    )


def test_partition_out_of_range_is_rejected_before_sending(kctl, new_topic):
    topic = new_topic(partitions=2)
    r = kctl("produce", topic, "--partition", "5", input="x\n")
    assert r.code == 1
    assert "partition 5 of topic" in r.stderr and "0-1" in r.stderr
    r = kctl("produce", topic, "--format", "jsonl", input='{"value": "x", "partition": 9}\n')
    assert r.code == 1 and "partition 9" in r.stderr


def test_malformed_json_line_flushes_what_came_before_then_names_its_line(
    kctl, new_topic, bootstrap
):
    topic = new_topic(partitions=1)
    good = [json.dumps({"value": f"r{i}"}) for i in range(100_000)]  # more than one read chunk
    text = "\n".join(good[:50]) + "\n\n" + "\n".join(good[50:]) + '\n{"value": broken}\n'
    text += '{"value": "never"}\n'
    r = kctl("produce", topic, "--format", "jsonl", input=text)
    assert r.code == 2, r
    summary, error = r.stderr.strip().splitlines()  # the summary first, then the error
    assert summary.startswith("delivered 100000, failed 0, "), r
    assert error.startswith("kctl: error: malformed JSON line 100002 ("), r
    values = [m.value() for m in read_all(bootstrap, topic)]
    assert len(values) == summary_counts(r.stderr)[0]
    assert values == [f"r{i}".encode() for i in range(100_000)]


def test_malformed_json_line_aborts_a_transaction_after_the_summary(kctl, new_topic):
    topic = new_topic(partitions=1)
    text = '{"value": "a"}\n{"value": "b"}\nnot json\n'
    r = kctl("produce", topic, "--format", "jsonl", "--transactional-id", unique("tx"), input=text)
    assert r.code == 2, r
    summary, error = r.stderr.strip().splitlines()
    assert summary.endswith("transaction aborted"), r
    assert summary_counts(r.stderr) == (0, 2)
    assert error.startswith("kctl: error: malformed JSON line 3 ("), r


def test_bad_base64_in_json_line_is_reported(kctl, new_topic):
    topic = new_topic(partitions=1)
    r = kctl("produce", topic, "--format", "jsonl", input='{"value": "@@", "encoding": "base64"}')
    assert r.code == 2 and "malformed JSON line 1 (value is not valid base64)" in r.stderr
    assert r.stderr.count("\n") == 1  # nothing was sent: no summary, one line


def test_unreadable_file_is_one_line_error(kctl, new_topic, tmp_path):
    topic = new_topic(partitions=1)
    r = kctl("produce", topic, "--file", str(tmp_path / "missing.txt"))
    assert r.code == 1
    assert (
        r.stderr
        == f"kctl: error: cannot read {tmp_path / 'missing.txt'} (No such file or directory)\n"
    )
    r = kctl("produce", topic, "--file", str(tmp_path))
    assert r.code == 1 and "Is a directory" in r.stderr


@pytest.mark.parametrize("native", ["1", "0"])  # the C loop and the Python loop alike
@pytest.mark.parametrize("shape", [[], ["--key-separator", ","], ["--header", "h=v"]])
def test_a_line_over_the_cap_stops_reading_after_sending_the_lines_before_it(
    kctl, new_topic, bootstrap, tmp_path, native, shape
):
    topic = new_topic(partitions=1)
    path = tmp_path / "records.txt"
    path.write_bytes(b"k,first\n" + b"x" * 5000 + b"\nk,third\n")
    args = ["--file", str(path), "--max-line-bytes", "4096", *shape]
    r = kctl("produce", topic, *args, env={"KCTL_NATIVE": native})
    assert r.code == 2, r
    summary, error = r.stderr.strip().splitlines()  # the summary first, then the error
    assert summary.startswith("delivered 1, failed 0, unknown 0"), r
    assert error == f"kctl: error: line 2 of {path} is longer than 4096 bytes (--max-line-bytes)"
    assert [m.value() for m in read_all(bootstrap, topic)] == [
        b"first" if "--key-separator" in shape else b"k,first"
    ]


def test_dev_zero_is_stopped_by_the_line_cap_with_nothing_sent(kctl, new_topic):
    topic = new_topic(partitions=1)
    r = kctl("produce", topic, "--file", "/dev/zero", timeout=30)
    assert r.code == 2, r
    assert r.stderr == (
        "kctl: error: line 1 of /dev/zero is longer than 1048576 bytes (--max-line-bytes)\n"
    )


def test_a_fifo_is_streaming_input(kctl, new_topic, bootstrap, tmp_path):
    """A FIFO is a valid --file for produce (not refused as by the input-file reader)."""
    import os
    import threading

    topic = new_topic(partitions=1)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as f:
            f.write(b"a\nb\n")

    writer = threading.Thread(target=write)
    writer.start()
    r = kctl("produce", topic, "--file", str(fifo), timeout=30)
    writer.join()
    assert r.code == 0, r
    assert [m.value() for m in read_all(bootstrap, topic)] == [b"a", b"b"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--key", "k", "--file", "x"], "--key/--value send one record"),
        (["--acks", "1", "--idempotence"], "--idempotence needs --acks all"),
        (["--acks", "0", "--transactional-id", "t"], "--transactional-id needs --acks all"),
        (["--format", "jsonl", "--key-separator", ":"], "apply to --format lines only"),
        (["--compression", "brotli"], "unknown --compression 'brotli'"),
        (["--partitioner", "sticky"], "unknown --partitioner 'sticky'"),
    ],
)
def test_conflicting_or_invalid_options_are_usage_errors(kctl, args, message):
    r = kctl("produce", "any-topic", *args, input="")
    assert r.code == 2, r
    assert message in r.stderr and r.stderr.count("\n") == 1


def test_the_summary_gives_each_partitions_first_and_last_delivered_offset(
    kctl, new_topic, bootstrap
):
    """The offsets in the summary are where the records are: read back, the records at
    first_offset..last_offset of each partition are exactly the ones this run delivered there,
    after records another producer wrote first."""
    topic = new_topic(partitions=3)
    r = kctl("produce", topic, "--partition", "1", input="before-0\nbefore-1\n")
    assert r.code == 0, r
    assert "partition 1 offsets 0..1" in r.stderr, r.stderr
    lines = "".join(f"k{i % 7}\tv{i}\n" for i in range(300))
    r = kctl("produce", topic, "--key-separator", "\t", "-o", "json", input=lines)
    assert r.code == 0, r
    doc = json.loads(r.stdout)
    rows = {row["partition"]: row for row in doc["partitions"]}
    assert sum(row["delivered"] for row in rows.values()) == doc["delivered"] == 300
    back = read_all(bootstrap, topic)
    mine = [m for m in back if m.value().startswith(b"v")]
    for partition in {m.partition() for m in mine}:
        here = [m.offset() for m in mine if m.partition() == partition]
        row = rows[partition]
        assert (row["first_offset"], row["last_offset"]) == (min(here), max(here)), row
        assert row["delivered"] == len(here) and row["failed"] == row["unknown"] == 0
    assert rows.get(1, {"first_offset": 2})["first_offset"] >= 2  # after the two before
    assert set(rows) == {m.partition() for m in mine}


def test_no_offsets_keeps_exact_totals_without_per_partition_offsets(kctl, new_topic, bootstrap):
    topic = new_topic(partitions=3)
    lines = "".join(f"k{i % 5}\tv{i}\n" for i in range(500))
    r = kctl(
        "produce", topic, "--key-separator", "\t", "--no-offsets", "-o", "json", input=lines
    )  # fmt: skip
    assert r.code == 0, r
    doc = json.loads(r.stdout)
    assert (doc["delivered"], doc["failed"], doc["unknown"]) == (500, 0, 0)
    assert doc["partitions"] == []  # only partitions with failures are known without reports
    assert "delivered 500, failed 0, unknown 0," in r.stderr and " offsets " not in r.stderr
    assert sorted(m.value() for m in read_all(bootstrap, topic)) == sorted(
        f"v{i}".encode() for i in range(500)
    )


def test_no_offsets_still_counts_what_the_broker_rejects_per_partition(kctl, new_topic, bootstrap):
    """The broker refuses a batch holding a record above the topic's max.message.bytes: the
    failure reports still come with --no-offsets, so the counts and the partition row hold."""
    topic = new_topic(partitions=1, config={"max.message.bytes": "2000"})
    text = "small\n" + "x" * 5000 + "\nsmall-too\n"
    r = kctl(
        "produce", topic, "--no-offsets", "-X", "message.max.bytes=100000", "-o", "json",
        input=text,
    )  # fmt: skip
    assert r.code == 1, r
    doc = json.loads(r.stdout)
    back = read_all(bootstrap, topic)
    assert doc["failed"] >= 1 and doc["unknown"] == 0
    assert doc["delivered"] + doc["failed"] == 3 and doc["delivered"] == len(back)
    assert doc["partitions"] == [
        {
            "partition": 0,
            "delivered": None,
            "first_offset": None,
            "last_offset": None,
            "failed": doc["failed"],
            "unknown": 0,
        }
    ]
    assert doc["first_error"].startswith("MSG_SIZE_TOO_LARGE"), doc["first_error"]


def test_every_output_format_prints_the_summary_on_stdout_and_none_without_o(
    kctl, new_topic, bootstrap
):
    """-o yaml, table, plain, csv and name print the summary (the document or its one row) on
    stdout as -o json does; without -o stdout stays empty, so `kctl produce | ...` sees
    nothing; the line for people is on stderr either way."""
    import csv
    import io

    import yaml

    topic = new_topic(partitions=1)
    r = kctl("produce", topic, "-o", "yaml", input="a\nb\nc\n")
    assert r.code == 0, r
    doc = yaml.safe_load(r.stdout)
    assert (doc["topic"], doc["delivered"], doc["failed"], doc["unknown"]) == (topic, 3, 0, 0)
    assert doc["transaction"] is None and doc["stalled"] is False
    assert doc["partitions"] == [
        {
            "partition": 0,
            "delivered": 3,
            "first_offset": 0,
            "last_offset": 2,
            "failed": 0,
            "unknown": 0,
        }
    ]
    assert "delivered 3, failed 0, unknown 0," in r.stderr

    r = kctl("produce", topic, "-o", "csv", "--transactional-id", unique("tx"), input="d\ne\n")
    assert r.code == 0, r
    (row,) = list(csv.DictReader(io.StringIO(r.stdout)))
    assert (row["topic"], row["delivered"], row["failed"], row["unknown"]) == (topic, "2", "0", "0")
    assert row["transaction"] == "committed" and row["first_error"] == ""
    assert float(row["seconds"]) >= 0 and float(row["records_per_second"]) > 0

    r = kctl("produce", topic, "-o", "table", input="f\n")
    assert r.code == 0, r
    header, line = r.stdout.splitlines()
    assert header.split()[:4] == ["TOPIC", "DELIVERED", "FAILED", "UNKNOWN"]
    assert line.split()[:4] == [topic, "1", "0", "0"]
    assert "partition 0 offset 6" in r.stderr  # after 5 records and the commit marker

    r = kctl("produce", topic, "-o", "plain", "--no-headers", input="g\n")
    assert r.code == 0, r
    assert r.stdout.split("\t")[:4] == [topic, "1", "0", "0"]
    r = kctl("produce", topic, "-o", "name", input="h\n")
    assert (r.code, r.stdout) == (0, f"{topic}\n"), r

    r = kctl("produce", topic, input="i\n")
    assert (r.code, r.stdout) == (0, ""), r
    assert "delivered 1, failed 0, unknown 0," in r.stderr
    assert len(read_all(bootstrap, topic)) == 9


def test_a_failed_run_prints_its_summary_in_the_asked_format_before_the_error(kctl, new_topic):
    topic = new_topic(partitions=1)
    text = "small\n" + "x" * 5000 + "\n"
    r = kctl("produce", topic, "-X", "message.max.bytes=2000", "-o", "yaml", input=text)
    assert r.code == 1, r
    import yaml

    doc = yaml.safe_load(r.stdout)
    assert (doc["delivered"], doc["failed"]) == (1, 1)
    assert doc["first_error"].startswith("MSG_SIZE_TOO_LARGE")
    assert r.stderr.splitlines()[-1].startswith(
        f"kctl: error: 1 record(s) not delivered to '{topic}' (MSG_SIZE_TOO_LARGE"
    )
