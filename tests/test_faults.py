"""Broker failures under load, on a 3-broker Apache Kafka cluster of this module's own (the
session's cluster is never stopped): a broker SIGKILLed while ``kctl produce`` writes, and the
group coordinator SIGKILLed while ``kctl consume --group`` reads. Every test restores the
brokers it stopped."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import (
    ENGINE,
    Run,
    commit_offsets,
    kctl_environment,
    read_back,
    run_kctl,
    start_kafka_cluster,
    unique,
    wait_for,
)

pytestmark = pytest.mark.skipif(
    ENGINE != "kafka" or bool(os.environ.get("KCTL_TEST_BOOTSTRAP")),
    reason="needs kctl's local Apache Kafka cluster to kill brokers (KCTL_TEST_ENGINE=kafka, "
    "no KCTL_TEST_BOOTSTRAP)",
)

RECORDS = 200_000


class Faults:
    """The module's cluster: its state directory, bootstrap and kctl's environment."""

    def __init__(self, state: Path, bootstrap: str, env: dict[str, str]) -> None:
        self.state = state
        self.bootstrap = bootstrap
        self.env = env

    def kctl(self, *args: str, timeout: float = 60) -> Run:
        return run_kctl(self.env, *args, timeout=timeout)

    def popen(self, *args: str, **kw) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "kctl", *args], env=self.env, **kw)

    def admin(self):
        from confluent_kafka.admin import AdminClient

        return AdminClient({"bootstrap.servers": self.bootstrap})

    def live_brokers(self) -> set[int]:
        return set(self.admin().list_topics(timeout=10).brokers)

    def restore(self) -> None:
        """Start every broker that is down; wait until all three are registered."""
        from kctl.local import kafka_cluster

        cluster = kafka_cluster.read_state(self.state)
        assert cluster is not None
        for node in cluster.brokers:
            if not kafka_cluster.node_alive(node):
                kafka_cluster.start_broker(self.state, node.id)
        wait_for(lambda: self.live_brokers() == {1, 2, 3}, "all 3 brokers registered", 60, 0.5)

    def kill(self, broker_id: int) -> None:
        from kctl.local import kafka_cluster

        assert kafka_cluster.kill_broker(self.state, broker_id)

    def topic(self, partitions: int = 3) -> str:
        """A topic with replication factor 3 and min.insync.replicas=2."""
        from confluent_kafka.admin import NewTopic

        name = unique("fault")
        admin = self.admin()
        new = NewTopic(name, partitions, 3, config={"min.insync.replicas": "2"})
        admin.create_topics([new])[name].result(timeout=30)
        wait_for(
            lambda: name in admin.list_topics(timeout=10).topics
            and all(p.leader >= 0 for p in admin.list_topics(name, timeout=10).topics[name]
                    .partitions.values()),
            f"topic {name} with leaders",
        )  # fmt: skip
        return name

    def leaders(self, topic: str) -> dict[int, int]:
        md = self.admin().list_topics(topic, timeout=10)
        return {p: m.leader for p, m in md.topics[topic].partitions.items()}

    def end_offsets(self, topic: str) -> dict[int, int]:
        from confluent_kafka import Consumer, TopicPartition

        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "watermarks"})
        try:
            return {
                p: c.get_watermark_offsets(TopicPartition(topic, p), timeout=10, cached=False)[1]
                for p in self.leaders(topic)
            }
        finally:
            c.close()


@pytest.fixture(scope="module")
def faults(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Faults]:
    from kctl.local import kafka_cluster

    state = tmp_path_factory.mktemp("faults-cluster")
    cluster = start_kafka_cluster(state, brokers=3)
    home = tmp_path_factory.mktemp("faults-kctl")
    env = kctl_environment(
        KCTL_BOOTSTRAP_SERVERS=cluster.bootstrap,
        KCTL_CONFIG=str(home / "kctl-config.yaml"),
        KCTL_STATE_DIR=str(home / "kctl-state"),
    )
    try:
        yield Faults(state, cluster.bootstrap, env)
    finally:
        current = kafka_cluster.read_state(state)
        kafka_cluster.kill_all(current if current is not None else cluster)


def _read_all(bootstrap: str, topic: str, ends: dict[int, int]) -> list[bytes]:
    """Every record value of ``topic`` up to ``ends`` (bounded by a deadline)."""
    return read_back(bootstrap, topic, ends)


def test_produce_survives_a_broker_killed_mid_stream_without_loss_or_duplicates(faults, tmp_path):
    topic = faults.topic(partitions=3)
    source = tmp_path / "records.txt"
    source.write_text("".join(f"r{i:06d}\n" for i in range(RECORDS)))
    # Paced so the kill lands mid-stream (about 10 s of producing).
    proc = faults.popen(
        "produce", topic, "--file", str(source), "--rate", "20000", "--acks", "all",
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    victim = None
    try:
        wait_for(
            lambda: sum(faults.end_offsets(topic).values()) >= 30_000 or proc.poll() is not None,
            "30,000 records on the cluster",
            60,
            0.2,
        )
        assert proc.poll() is None, "kctl produce finished before the broker could be killed"
        victim = faults.leaders(topic)[0]  # the leader of partition 0
        faults.kill(victim)
        _, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    try:
        assert proc.returncode == 0, err
        m = re.search(r"delivered (\d+), failed (\d+)", err)
        assert m, err
        delivered, failed = int(m[1]), int(m[2])
        assert (delivered, failed) == (RECORDS, 0), err
        # The leaders moved off the dead broker; read everything back from the survivors.
        wait_for(
            lambda: victim not in faults.leaders(topic).values(), "leaders off the killed broker"
        )
        ends = faults.end_offsets(topic)
        values = _read_all(faults.bootstrap, topic, ends)
        assert len(values) == sum(ends.values())
        assert len(values) == len(set(values)), "some record was written twice"
        assert len(values) == delivered, "the cluster does not hold exactly the delivered records"
        assert set(values) == {b"r%06d" % i for i in range(RECORDS)}
    finally:
        faults.restore()


def _producing(bootstrap: str, topic: str, stop: threading.Event, sent: list[int]) -> None:
    """Produce numbered records at about 2,000/s until ``stop``; ``sent`` counts acks."""
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
                  "linger.ms": 5})  # fmt: skip

    def acked(err, _msg) -> None:
        if err is None:
            sent[0] += 1

    i = 0
    while not stop.is_set():
        for _ in range(100):
            p.produce(topic, b"m%07d" % i, on_delivery=acked)
            i += 1
        p.poll(0)
        stop.wait(0.05)
    assert p.flush(120) == 0, "records still unsent after the producer's flush"
    sent.append(i)


def _group_lag(faults: Faults, group: str) -> tuple[int | None, dict]:
    r = faults.kctl("groups", "lag", group, "-o", "json", timeout=60)
    if r.code != 0:
        return None, {}
    doc = json.loads(r.stdout)
    return (doc["groups"][0]["lag"] if doc["groups"] else None), doc


def _committed_at_end(faults: Faults, group: str, partitions: int) -> bool:
    total, doc = _group_lag(faults, group)
    rows = doc.get("partitions", [])
    return (
        total == 0
        and len(rows) == partitions
        and all(r["committed_offset"] == r["log_end_offset"] >= 0 for r in rows)
    )


def test_group_consumer_goes_on_after_its_coordinator_is_killed(faults, tmp_path):
    topic = faults.topic(partitions=3)
    group = unique("fault-grp")
    stop = threading.Event()
    sent = [0]
    producer = threading.Thread(
        target=_producing, args=(faults.bootstrap, topic, stop, sent), daemon=True
    )
    out_path = tmp_path / "consumed.jsonl"
    err_path = tmp_path / "consume.err"
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = faults.popen(
            "consume", topic, "--group", group, "--follow", "-o", "jsonl",
            stdout=out, stderr=err,
        )  # fmt: skip

    def described(what: str):
        """The group's state or coordinator as `kctl groups describe --state` reports it; None
        while it cannot tell (a young cluster loading __consumer_offsets, a dead coordinator)."""
        r = faults.kctl("groups", "describe", group, "--state", "-o", "json", timeout=60)
        if r.code != 0 or not r.stdout.strip():
            return None
        (row,) = json.loads(r.stdout)
        return row[what]

    def lines() -> int:
        with open(out_path, "rb") as fh:
            return sum(1 for _ in fh)

    coordinator = None
    try:
        producer.start()
        wait_for(lambda: described("state") == "Stable", "the group to be Stable", 90, 0.5)
        wait_for(lambda: lines() >= 5_000, "5,000 records consumed", 60, 0.2)
        coordinator = described("coordinator")
        assert coordinator is not None
        faults.kill(coordinator)
        before = lines()
        wait_for(
            lambda: described("coordinator") not in (None, coordinator),
            "the group coordinator to move",
            60,
            0.5,
        )
        wait_for(lambda: lines() >= before + 10_000, "consuming to go on", 90, 0.2)
        assert proc.poll() is None, err_path.read_text()
        stop.set()
        producer.join(timeout=150)
        assert not producer.is_alive() and len(sent) == 2, "the producer did not finish"
        acked, produced = sent
        assert acked == produced
        # Caught up means every partition committed at its end: a partition with no commit yet
        # has no lag (null) and adds nothing to the group's total, so a total of 0 is not enough
        # (auto-commit runs every 5 s and the first commits after the failover may not be in).
        wait_for(lambda: _committed_at_end(faults, group, 3), "every partition committed", 90, 1)
        assert proc.poll() is None, err_path.read_text()
        _, doc = _group_lag(faults, group)
        assert sum(r["committed_offset"] for r in doc["partitions"]) == produced, doc
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130, err_path.read_text()
        values = [json.loads(line)["value"] for line in out_path.read_text().splitlines()]
        # At least once: everything produced was read (a record may repeat after a failover).
        assert set(values) == {f"m{i:07d}" for i in range(produced)}
        assert "kctl: error" not in err_path.read_text()
    finally:
        stop.set()
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        producer.join(timeout=150)
        faults.restore()


def test_the_lag_exporter_serves_its_last_snapshot_while_every_broker_is_down_then_recovers(
    faults, tmp_path
):
    """``groups lag --serve`` survives its cluster: with every broker killed, scrapes still
    answer with the last collection's lag, marked stale, errors counted, one warning; when the
    brokers are back the collections succeed again; SIGTERM ends it with exit 0."""
    from prometheus_server import free_port
    from test_lag_exporter import one, scrape, values

    topic = faults.topic(partitions=3)
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": faults.bootstrap})
    for part in range(3):
        for _ in range(4):
            p.produce(topic, b"x", partition=part)
    assert p.flush(30) == 0
    group = unique("exp-down")
    commit_offsets(faults.bootstrap, group, {(topic, part): 1 for part in range(3)})
    port = free_port()
    err = tmp_path / "exporter.stderr"
    with open(err, "w") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kctl", "--timeout", "3", "groups", "lag", group,
             "--serve", f"127.0.0.1:{port}", "--interval", "1s", "--cluster-name", "faults"],
            env=faults.env, stdout=subprocess.DEVNULL, stderr=fh, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    health = "kctl_lag_exporter_stale"

    def scraped() -> dict:
        try:
            return scrape(port)
        except OSError:
            return {}

    try:
        wait_for(lambda: values(scraped(), "kafka_consumergroup_group_sum_lag", group=group)
                 == [9.0], "the exporter's first collection", 60, 0.5)  # fmt: skip
        for broker in (1, 2, 3):
            faults.kill(broker)
        wait_for(lambda: values(scraped(), health) == [1.0], "the snapshot marked stale", 90, 0.5)
        down = scrape(port)
        assert one(down, "kafka_consumergroup_group_sum_lag", group=group) == 9.0  # kept
        assert one(down, "kctl_lag_exporter_collection_errors_total") >= 1
        assert proc.poll() is None, err.read_text()
        faults.restore()
        wait_for(lambda: values(scraped(), health) == [0.0], "collections succeeding again",
                 120, 0.5)  # fmt: skip
        assert one(scrape(port), "kafka_consumergroup_group_sum_lag", group=group) == 9.0
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, err.read_text()
        text = err.read_text()
        # One warning for the whole failure streak, one line when it ends; no traceback.
        assert text.count("kctl: warning:") == 1, text
        assert "lag collection succeeded again after" in text, text
        assert "Traceback" not in text
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        faults.restore()
