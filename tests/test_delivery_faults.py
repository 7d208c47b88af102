"""Delivery counts that stay true when the broker dies or freezes, and clean signal handling,
on a 1-broker Apache Kafka cluster of this module's own (the session's cluster is never
stopped): the broker SIGKILLed or SIGSTOPped while ``kctl produce`` writes, SIGINT during the
final flush, SIGTERM and SIGINT for ``kctl consume -f`` (also while stdout is full).

No timed assertions: every wait is bounded, every subprocess has a timeout, and what the
cluster holds afterwards is read back and compared with the counts kctl printed
(delivered <= on the cluster <= delivered + unknown). Every test resumes (SIGCONT) or restarts
the broker it froze or killed."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ENGINE, kctl_environment, read_back, start_kafka_cluster, unique, wait_for

pytestmark = pytest.mark.skipif(
    ENGINE != "kafka" or bool(os.environ.get("KCTL_TEST_BOOTSTRAP")),
    reason="needs kctl's local Apache Kafka cluster to kill and freeze its broker "
    "(KCTL_TEST_ENGINE=kafka, no KCTL_TEST_BOOTSTRAP)",
)

SUMMARY = re.compile(r"delivered (\d+), failed (\d+), unknown (\d+)")


class Single:
    """The module's cluster (one broker): state directory, bootstrap, kctl's environment."""

    def __init__(self, state: Path, bootstrap: str, env: dict[str, str]) -> None:
        self.state = state
        self.bootstrap = bootstrap
        self.env = env

    def popen(self, *args: str, **kw) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "kctl", *args], env=self.env, **kw)

    def admin(self):
        from confluent_kafka.admin import AdminClient

        return AdminClient({"bootstrap.servers": self.bootstrap})

    def node(self):
        from kctl.local import kafka_cluster

        cluster = kafka_cluster.read_state(self.state)
        assert cluster is not None
        return cluster.brokers[0]

    def alive(self) -> bool:
        try:
            return bool(self.admin().list_topics(timeout=5).brokers)
        except Exception:
            return False

    def ensure_running(self) -> None:
        """Resume a frozen broker, start a killed one; wait until it answers."""
        from kctl.local import kafka_cluster

        node = self.node()
        if kafka_cluster.node_alive(node):
            assert node.pid is not None
            os.kill(node.pid, signal.SIGCONT)
        else:
            kafka_cluster.start_broker(self.state, node.id)
        wait_for(self.alive, "the broker to answer", 120, 0.5)

    def topic(self, partitions: int = 3) -> str:
        from confluent_kafka.admin import NewTopic

        name = unique("dlv")
        admin = self.admin()
        admin.create_topics([NewTopic(name, partitions, 1)])[name].result(timeout=30)

        def ready() -> bool:
            md = admin.list_topics(name, timeout=10).topics.get(name)
            return (
                md is not None
                and md.error is None
                and len(md.partitions) == partitions
                and (all(p.leader >= 0 for p in md.partitions.values()))
            )

        wait_for(ready, f"topic {name} with leaders")
        return name

    def end_offsets(self, topic: str) -> dict[int, int]:
        """Log end offsets (retried while a young partition's leader is not ready)."""
        from confluent_kafka import Consumer, KafkaException, TopicPartition

        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "watermarks"})
        try:
            for _ in range(50):
                try:
                    md = c.list_topics(topic, timeout=10)
                    return {
                        p: c.get_watermark_offsets(
                            TopicPartition(topic, p), timeout=10, cached=False
                        )[1]
                        for p in md.topics[topic].partitions
                    }
                except KafkaException:
                    time.sleep(0.2)
            raise AssertionError(f"no log end offsets for {topic}")
        finally:
            c.close()

    def read_all(self, topic: str) -> list[bytes]:
        """Every record value of ``topic``, consumed to the end (bounded)."""
        return read_back(self.bootstrap, topic, self.end_offsets(topic))

    def fill(self, topic: str, count: int, size: int = 100) -> None:
        """``count`` records of about ``size`` bytes, with the Python client."""
        from confluent_kafka import Producer

        p = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 20})
        pad = b"x" * max(0, size - 8)
        for i in range(count):
            while True:
                try:
                    p.produce(topic, b"%07d:" % i + pad)
                    break
                except BufferError:
                    p.poll(0.05)
        assert p.flush(60) == 0


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Single]:
    from kctl.local import kafka_cluster

    state = tmp_path_factory.mktemp("delivery-cluster")
    cluster = start_kafka_cluster(state, brokers=1)
    home = tmp_path_factory.mktemp("delivery-kctl")
    env = kctl_environment(
        KCTL_BOOTSTRAP_SERVERS=cluster.bootstrap,  # type: ignore[attr-defined]
        KCTL_CONFIG=str(home / "kctl-config.yaml"),
        KCTL_STATE_DIR=str(home / "kctl-state"),
    )
    try:
        yield Single(state, cluster.bootstrap, env)  # type: ignore[attr-defined]
    finally:
        node = None
        current = kafka_cluster.read_state(state)
        if current is not None:
            node = current.brokers[0]
            if node.pid and kafka_cluster.node_alive(node):
                os.kill(node.pid, signal.SIGCONT)  # a frozen JVM does not die of SIGTERM
        kafka_cluster.kill_all(current if current is not None else cluster)  # type: ignore[arg-type]


def _counts(stderr: str) -> tuple[int, int, int]:
    m = SUMMARY.search(stderr)
    assert m, stderr
    return int(m[1]), int(m[2]), int(m[3])


def _check_on_cluster(single: Single, topic: str, delivered: int, unknown: int, sent: set[bytes]):
    """What the cluster holds: between delivered and delivered + unknown, never a duplicate,
    never a record that was not in the input."""
    values = single.read_all(topic)
    assert delivered <= len(values) <= delivered + unknown, (delivered, unknown, len(values))
    assert len(values) == len(set(values)), "some record is on the cluster twice"
    assert set(values) <= sent
    return values


class _Lines:
    """A subprocess pipe read line by line in a thread (so the child never blocks on it)."""

    def __init__(self, stream) -> None:
        self.lines: list[str] = []
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.append(line)

    def text(self) -> str:
        self.thread.join(timeout=30)
        return "".join(self.lines)

    def has(self, needle: str) -> bool:
        return any(needle in line for line in self.lines)


def _produce_under_fault(single: Single, tmp_path: Path, fault, *extra: str):
    """Start ``kctl produce`` on a file, paced; apply ``fault`` once records are on the
    cluster; return (topic, process, stdout, stderr, records sent)."""
    topic = single.topic()
    total = 400_000
    source = tmp_path / "records.txt"
    source.write_text("".join(f"r{i:07d}\n" for i in range(total)))
    proc = single.popen(
        "--timeout", "5", "produce", topic, "--file", str(source), "--rate", "20000", *extra,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for(
            lambda: sum(single.end_offsets(topic).values()) >= 20_000 or proc.poll() is not None,
            "20,000 records on the cluster",
            60,
            0.2,
        )
        assert proc.poll() is None, "kctl produce finished before the fault"
        fault()
        # Bounded: kctl gives up 5 s (--timeout) after the last delivery, reading stops.
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return topic, proc, out, err, {b"r%07d" % i for i in range(total)}, total


def test_produce_gives_up_after_timeout_when_the_broker_is_killed(single, tmp_path):
    from kctl.local import kafka_cluster

    try:
        topic, proc, _, err, sent, total = _produce_under_fault(
            single, tmp_path, lambda: kafka_cluster.kill_broker(single.state, single.node().id)
        )
        assert proc.returncode == 1, err
        delivered, failed, unknown = _counts(err)
        assert failed == 0, err  # nothing was refused: the broker went away
        assert unknown > 0, err  # records were queued or in flight when kctl gave up
        assert delivered >= 20_000, err
        # Reading stopped once delivery had stalled: the rest of the file was never sent.
        assert delivered + unknown < total, err
        assert "gave up: nothing delivered for 5s" in err, err
        last = err.strip().splitlines()[-1]
        assert last.startswith(f"kctl: error: {unknown} record(s) unconfirmed by"), err
        assert "Traceback" not in err
    finally:
        single.ensure_running()
    _check_on_cluster(single, topic, delivered, unknown, sent)


def test_produce_to_a_frozen_broker_counts_unknown_not_failed(single, tmp_path):
    pid = single.node().pid
    assert pid
    try:
        topic, proc, out, err, sent, total = _produce_under_fault(
            single, tmp_path, lambda: os.kill(pid, signal.SIGSTOP), "-o", "json"
        )
    finally:
        os.kill(pid, signal.SIGCONT)
    assert proc.returncode == 1, err
    doc = json.loads(out)
    assert (doc["delivered"], doc["failed"], doc["unknown"]) == _counts(err)
    assert doc["failed"] == 0, doc  # a frozen broker refuses nothing: every loss is unknown
    assert doc["unknown"] > 0 and doc["stalled"] is True, doc
    assert doc["delivered"] + doc["unknown"] < total, doc  # reading stopped
    assert sum(p["unknown"] for p in doc["partitions"]) <= doc["unknown"]
    assert all(p["failed"] == 0 for p in doc["partitions"])
    # What was acknowledged is known by offset: one producer on a new topic, so each
    # partition's acknowledged records are first_offset..last_offset, with none missing.
    assert sum(p["delivered"] for p in doc["partitions"]) == doc["delivered"]
    for p in doc["partitions"]:
        if p["delivered"]:
            assert p["last_offset"] - p["first_offset"] + 1 == p["delivered"], p
    assert doc["first_error"], doc
    single.ensure_running()
    # Once resumed, the broker appends what it had received before it froze: some of the
    # unknown records may be there, never more than all of them.
    _check_on_cluster(single, topic, doc["delivered"], doc["unknown"], sent)


def test_sigint_during_the_final_flush_gives_up_at_once(single):
    topic = single.topic()
    pid = single.node().pid
    assert pid
    # --timeout 600: only the signal can end this flush before the subprocess timeout.
    proc = single.popen(
        "--timeout", "600", "produce", topic,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    err = _Lines(proc.stderr)
    sent = {f"s{i:06d}".encode() for i in range(6000)}
    try:
        assert proc.stdin is not None
        proc.stdin.write("".join(f"s{i:06d}\n" for i in range(1000)))
        proc.stdin.flush()
        wait_for(lambda: sum(single.end_offsets(topic).values()) >= 1000, "1,000 records", 60)
        os.kill(pid, signal.SIGSTOP)
        proc.stdin.write("".join(f"s{i:06d}\n" for i in range(1000, 6000)))
        proc.stdin.close()  # the end of input: kctl flushes, the frozen broker never answers
        wait_for(lambda: err.has("waiting for"), "kctl to wait in its final flush", 60, 0.1)
        assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)  # at once, not after --timeout 600
    finally:
        os.kill(pid, signal.SIGCONT)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = err.text()
    assert code == 130, text
    delivered, failed, unknown = _counts(text)
    assert failed == 0 and delivered >= 1000 and unknown > 0, text
    assert delivered + unknown == 6000, text  # the whole input was handed over
    assert "(interrupted: gave up waiting for the broker)" in text, text
    assert "kctl: error" not in text and "Traceback" not in text, text
    single.ensure_running()
    _check_on_cluster(single, topic, delivered, unknown, sent)


def _group_committed(single: Single, group: str, topic: str) -> int:
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

    admin = single.admin()
    req = ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0)])
    result = admin.list_consumer_group_offsets([req])[group].result(timeout=30)
    return max(0, result.topic_partitions[0].offset)


def _wchan(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return ""


def test_consume_follow_ends_cleanly_on_sigterm(single, tmp_path):
    topic = single.topic(partitions=1)
    single.fill(topic, 2000)
    group = unique("dlv-grp")
    out_path = tmp_path / "out.jsonl"
    with open(out_path, "wb") as out:
        proc = single.popen(
            "consume", topic, "-f", "--group", group, "-o", "jsonl",
            stdout=out, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
    try:

        def lines() -> int:
            return out_path.read_bytes().count(b"\n")

        wait_for(lambda: lines() >= 2000, "2,000 records consumed", 90, 0.2)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 143, err  # 128 + SIGTERM, as kafka-console-consumer.sh
    assert "consumed 2000 record(s)" in err and "SIGTERM" in err, err
    assert "kctl: error" not in err and "Traceback" not in err, err
    records = [json.loads(line) for line in out_path.read_text().splitlines()]
    assert [r["offset"] for r in records] == list(range(2000))
    # A clean close: what was printed is committed (the consumer left its group).
    assert _group_committed(single, group, topic) == 2000


def test_consume_sigint_while_stdout_is_full_writes_whole_lines_only(single):
    topic = single.topic(partitions=1)
    single.fill(topic, 30_000, size=200)  # ~6 MB of JSON lines: far more than a pipe holds
    group = unique("dlv-grp")
    proc = single.popen(
        "consume", topic, "-f", "--group", group, "-o", "jsonl",
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        # Nobody reads stdout: kctl blocks writing to the full pipe.
        wait_for(lambda: "pipe_write" in _wchan(proc.pid), "kctl blocked on stdout", 90, 0.1)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)  # reading unblocks the write
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    text = err.decode()
    assert proc.returncode == 130, text
    assert out.endswith(b"\n"), out[-200:]
    records = [json.loads(line) for line in out.splitlines()]  # every line whole
    assert 0 < len(records) < 30_000, text
    assert [r["offset"] for r in records] == list(range(len(records)))
    assert f"consumed {len(records)} record(s)" in text, text
    # Only what was written was committed: nothing skipped for the group's next reader.
    assert _group_committed(single, group, topic) == len(records)
