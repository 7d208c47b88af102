"""kctl produce through kctl's own librdkafka producer (kctl._native.Producer, the plain and
keyed file shapes) against confluent-kafka's Producer (KCTL_NATIVE_PRODUCER=0) and the pure
Python loops (KCTL_NATIVE=0): the same summaries, the same records on the same partitions, the
same guarantees when records fail or a signal stops the run, and the fallback when the C
producer cannot be used. Real session broker; records read back with confluent-kafka."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from test_produce import read_all, summary_counts

from kctl.runtime import native

needs_c_producer = pytest.mark.skipif(
    native.producer() is None or native.rdkafka_library() is None,
    reason="kctl._native.Producer is not usable here",
)

C = {}  # the default: kctl's C producer for plain and keyed lines
CONFLUENT = {"KCTL_NATIVE_PRODUCER": "0"}  # confluent-kafka's Producer, fed by the C loop
PYTHON = {"KCTL_NATIVE": "0"}  # confluent-kafka's Producer, fed by the Python loops
PATHS = {"c-producer": C, "confluent-kafka": CONFLUENT, "python": PYTHON}
USED = "librdkafka C producer ("  # the --debug line saying the C producer runs


def produce_on(kctl, path: dict[str, str], topic: str, *args: str, input: str | None = None):
    return kctl("produce", topic, "--debug", *args, input=input, env=path, timeout=120)


@needs_c_producer
def test_the_c_producer_runs_for_plain_and_keyed_lines_and_not_for_other_shapes(
    kctl, new_topic, tmp_path
):
    topic = new_topic(partitions=1)
    src = tmp_path / "in.txt"
    src.write_text("k\tv\n")
    assert USED in produce_on(kctl, C, topic, "--file", str(src)).stderr
    assert USED in produce_on(kctl, C, topic, "--key-separator", "\t", input="k\tv\n").stderr
    assert USED in produce_on(kctl, C, topic, "--file", str(src), "--rate", "1000").stderr
    for other in (
        ["--file", str(src), "--header", "a=b"],
        ["--file", str(src), "--partition", "0"],
        ["--key", "k", "--value", "v"],
        ["--format", "jsonl", "--file", str(src)],
    ):
        r = produce_on(kctl, C, topic, *other)
        assert USED not in r.stderr, (other, r)
    for off in (CONFLUENT, PYTHON):
        r = produce_on(kctl, off, topic, "--file", str(src))
        assert r.code == 0 and USED not in r.stderr, r


@needs_c_producer
def test_keyed_records_land_on_the_same_partitions_with_the_same_summary_on_every_path(
    kctl, new_topic, bootstrap, tmp_path
):
    """librdkafka's default partitioner in kctl's producer and in confluent-kafka's: the same
    key on the same partition; empty keys and lines without a separator as before."""
    lines = [b"key-%d\tvalue %d" % (i % 101, i) for i in range(20_000)]
    lines[7] = b"no separator here"
    lines[11] = b"\tempty key"
    lines[13] = b"key-x\t"  # empty value
    src = tmp_path / "in.tsv"
    src.write_bytes(b"\n".join(lines) + b"\n")
    got = {}
    for name, path in PATHS.items():
        topic = new_topic(partitions=6)
        r = produce_on(kctl, path, topic, "--file", str(src), "--key-separator", "\t", "-o", "json")
        assert r.code == 0, r
        assert (USED in r.stderr) == (name == "c-producer")
        doc = json.loads(r.stdout)
        records = read_all(bootstrap, topic)
        keyed = sorted((m.key(), m.value(), m.partition()) for m in records if m.key())
        unkeyed = sorted(((m.key(), m.value()) for m in records if not m.key()), key=repr)
        per_partition = [(p["partition"], p["delivered"]) for p in doc["partitions"]]
        got[name] = (doc["delivered"], doc["failed"], doc["unknown"], doc["bytes"], keyed, unkeyed)
        assert sum(n for _, n in per_partition) == 20_000
        assert len(records) == 20_000
    assert got["c-producer"] == got["confluent-kafka"] == got["python"]
    assert (b"", b"empty key") in got["c-producer"][5]  # an empty key stays an empty key
    assert (None, b"no separator here") in got["c-producer"][5]


@pytest.mark.parametrize("path", list(PATHS))
def test_records_the_client_refuses_are_counted_failed_exactly_and_the_rest_delivered(
    kctl, new_topic, bootstrap, tmp_path, path
):
    """Every 100th record is over -X message.max.bytes: refused by the client, definitely not
    on the broker; the others delivered. The counts are exact on every path."""
    lines = [("x" * 1500 if i % 100 == 0 else f"ok-{i}") for i in range(5000)]
    src = tmp_path / "in.txt"
    src.write_text("\n".join(lines) + "\n")
    topic = new_topic(partitions=3)
    r = produce_on(
        kctl, PATHS[path], topic, "--file", str(src), "-X", "message.max.bytes=1000", "-o", "json"
    )
    assert r.code == 1, r
    doc = json.loads(r.stdout)
    assert (doc["delivered"], doc["failed"], doc["unknown"]) == (4950, 50, 0)
    assert doc["first_error"].startswith("MSG_SIZE_TOO_LARGE: ")
    assert sum(p["delivered"] for p in doc["partitions"]) == 4950
    assert sum(p["failed"] for p in doc["partitions"]) == 0  # refused: never got a partition
    values = sorted(m.value() for m in read_all(bootstrap, topic))
    assert values == sorted(v.encode() for v in lines if len(v) < 1000)
    assert "kctl: error: 50 record(s) not delivered" in r.stderr


@pytest.mark.parametrize("path", list(PATHS))
def test_records_the_broker_rejects_are_failed_and_counts_add_up_on_every_path(
    kctl, new_topic, bootstrap, tmp_path, path
):
    """The topic's max.message.bytes is below what the client allows: the broker rejects the
    batches holding the large records (definite failures, per partition); whatever it accepted
    is on the topic, and delivered + failed is every record."""
    lines = [("y" * 3000 if i % 500 == 0 else f"ok-{i}") for i in range(3000)]
    src = tmp_path / "in.txt"
    src.write_text("\n".join(lines) + "\n")
    topic = new_topic(partitions=1, config={"max.message.bytes": "2000"})
    r = produce_on(kctl, PATHS[path], topic, "--file", str(src), "-o", "json", "--no-idempotence")
    assert r.code == 1, r
    doc = json.loads(r.stdout)
    assert doc["unknown"] == 0 and doc["failed"] >= 6
    assert doc["delivered"] + doc["failed"] == 3000
    (row,) = doc["partitions"]
    assert (row["delivered"] or 0, row["failed"]) == (doc["delivered"], doc["failed"])
    assert len(read_all(bootstrap, topic)) == doc["delivered"]


@needs_c_producer
def test_sigint_mid_produce_exits_130_with_counts_matching_the_broker(
    new_topic, bootstrap, kctl_env, tmp_path
):
    """SIGINT while the C producer streams a FIFO: what was handed over is flushed, exit 130,
    and the summary's delivered count is exactly what the topic holds."""
    topic = new_topic(partitions=2)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = subprocess.Popen(
        [sys.executable, "-m", "kctl", "produce", topic, "--file", str(fifo), "--debug",
         "--key-separator", ":", "-o", "json"],
        env=kctl_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    stop = threading.Event()
    written = [0]

    def write() -> None:
        with open(fifo, "wb") as f, contextlib.suppress(BrokenPipeError):
            while not stop.is_set():
                n = written[0]
                f.write(b"".join(b"k%d:record-%d\n" % (i % 13, i) for i in range(n, n + 5000)))
                f.flush()
                written[0] = n + 5000
                time.sleep(0.02)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    deadline = time.monotonic() + 30
    while written[0] < 100_000 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    stop.set()
    assert proc.returncode == 130, err
    assert USED in err
    doc = json.loads(out)
    assert doc["interrupted"] and doc["failed"] == 0 and doc["unknown"] == 0
    assert 0 < doc["delivered"] <= written[0]
    records = read_all(bootstrap, topic)
    assert len(records) == doc["delivered"]
    assert len({m.value() for m in records}) == len(records)  # no duplicates


@needs_c_producer
def test_no_reachable_broker_is_a_one_line_error_on_the_c_producer_path(kctl_env, tmp_path):
    """The topic check through the C producer's metadata: without an answer within --timeout,
    the same one-line error as through confluent-kafka, no traceback."""
    env = {**kctl_env, "KCTL_BOOTSTRAP_SERVERS": "127.0.0.1:1"}
    src = tmp_path / "in.txt"
    src.write_text("a\nb\n")
    got = []
    for path in (C, CONFLUENT):
        r = subprocess.run(
            [sys.executable, "-m", "kctl", "--timeout", "2", "produce", "t", "--file", str(src)],
            env={**env, **path}, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert r.returncode == 1 and r.stderr.count("\n") == 1, r.stderr
        got.append(r.stderr.split(" (")[0])
    assert got[0] == got[1]
    assert got[0].startswith("kctl: error: cannot connect to 127.0.0.1:1")


@needs_c_producer
def test_an_unusable_c_producer_falls_back_to_confluent_kafka_silently(
    kctl, new_topic, bootstrap, tmp_path
):
    """KCTL_NATIVE_PRODUCER=0 (and a librdkafka property the C producer's librdkafka refuses)
    leave produce to confluent-kafka: the same result, a debug line saying why."""
    topic = new_topic(partitions=1)
    src = tmp_path / "in.txt"
    src.write_text("a\nb\nc\n")
    r = produce_on(kctl, CONFLUENT, topic, "--file", str(src))
    assert r.code == 0, r
    assert "librdkafka C producer not chosen" in r.stderr and USED not in r.stderr
    r = kctl("produce", topic, "--file", str(src), env=CONFLUENT)
    assert r.code == 0 and "debug" not in r.stderr, r
    # A property librdkafka does not know: the C producer is not made, confluent-kafka then
    # reports the bad configuration exactly as without the C producer.
    bad = [kctl("produce", topic, "--file", str(src), "-X", "no.such.property=1", env=p)
           for p in (C, CONFLUENT)]  # fmt: skip
    assert bad[0].code == bad[1].code == 1
    assert bad[0].stderr == bad[1].stderr
    assert "no.such.property" in bad[0].stderr and "Traceback" not in bad[0].stderr
    assert [m.value() for m in read_all(bootstrap, topic)] == [b"a", b"b", b"c"] * 2


@needs_c_producer
@pytest.mark.parametrize("codec", ["gzip", "zstd"])
def test_producer_options_and_x_properties_reach_the_c_producer(
    kctl, new_topic, bootstrap, tmp_path, codec
):
    """--compression, --linger-ms, --batch-size, --acks and -X client.id are librdkafka
    properties of the C producer too: a wrong value is refused as on the other path, a right
    one delivers (compressed batches read back)."""
    topic = new_topic(partitions=1)
    src = tmp_path / "in.txt"
    src.write_text("".join(f"r{i}\n" for i in range(2000)))
    r = produce_on(
        kctl, C, topic, "--file", str(src), "--compression", codec, "--linger-ms", "5",
        "--batch-size", "20000", "--acks", "all", "-X", "client.id=kctl-native-test",
    )  # fmt: skip
    assert r.code == 0 and USED in r.stderr, r
    assert summary_counts(r.stderr) == (2000, 0)
    assert [m.value() for m in read_all(bootstrap, topic)] == [b"r%d" % i for i in range(2000)]
    bad = [kctl("produce", topic, "--file", str(src), "-X", "linger.ms=-5", env=p)
           for p in (C, CONFLUENT)]  # fmt: skip
    assert bad[0].code == bad[1].code == 1 and bad[0].stderr == bad[1].stderr


@pytest.mark.parametrize("path", ["c-producer", "confluent-kafka"])
def test_rate_paces_the_c_producer_as_the_confluent_kafka_path(
    kctl, new_topic, bootstrap, tmp_path, path
):
    """--rate 2000 over 3,000 lines: about 1.5 s on either path (slices of 1/20 s worth), every
    record delivered in order."""
    topic = new_topic(partitions=1)
    src = tmp_path / "in.txt"
    src.write_text("".join(f"r{i}\n" for i in range(3000)))
    start = time.monotonic()
    r = produce_on(kctl, PATHS[path], topic, "--file", str(src), "--rate", "2000")
    took = time.monotonic() - start
    assert r.code == 0, r
    assert (USED in r.stderr) == (path == "c-producer")
    assert summary_counts(r.stderr) == (3000, 0)
    assert 1.3 < took < 10, took
    assert [m.value() for m in read_all(bootstrap, topic)] == [b"r%d" % i for i in range(3000)]


def test_a_quota_throttles_both_producers_and_the_summary_says_so(kctl, new_topic, tmp_path):
    """A producer_byte_rate quota on the client id: the broker's throttle times (KIP-219) reach
    the summary through the C producer's throttle callback as through confluent-kafka's."""
    topic = new_topic(partitions=1)
    src = tmp_path / "in.txt"
    src.write_text("".join("x" * 1000 + "\n" for _ in range(300)))
    ids = {name: f"kctl-throttle-{name}-{os.getpid()}-{time.time_ns()}" for name in PATHS}
    for cid in ids.values():
        r = kctl("quotas", "set", "--client-id", cid, "producer_byte_rate=10000")
        assert r.code == 0, r
    try:
        time.sleep(2)  # quotas reach the brokers asynchronously
        for name in ("c-producer", "confluent-kafka"):
            r = produce_on(
                kctl, PATHS[name], topic, "--file", str(src), "-X", f"client.id={ids[name]}",
                "-o", "json",
            )  # fmt: skip
            assert r.code == 0, r
            assert (USED in r.stderr) == (name == "c-producer")
            doc = json.loads(r.stdout)
            assert doc["delivered"] == 300
            assert doc["throttled_responses"] >= 1 and doc["throttle_seconds"] > 0, (name, doc)
            assert "throttled by the broker" in r.stderr
    finally:
        for cid in ids.values():
            kctl("quotas", "delete", "--client-id", cid, "producer_byte_rate", "--yes")
