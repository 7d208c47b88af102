"""kctl analytics lag --live on the real broker with real consumers, a real producer and real
local Spark: a consumer that stops while production goes on is STOP (group ERR) with growing
lag, one that keeps up is OK, and a reset backwards shows REWIND."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import commit_offsets, unique, wait_for

pytestmark = pytest.mark.broker

SAMPLES = 15  # one a second
WINDOW = 6


def _sample_rounds(path: Path) -> int:
    if not path.exists():
        return 0
    return len({json.loads(line)["ts_ms"] for line in path.read_text().splitlines() if line})


class Producing(threading.Thread):
    """One record per batch, about 5 a second, until stopped: slow enough that a consumer that
    keeps up shows lag 0 at most samples even on a busy 2-core machine (Burrow: OK)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True)
        from confluent_kafka import Producer

        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
        self.topic = topic
        self.done = threading.Event()
        self.sent = 0

    def run(self) -> None:
        while not self.done.is_set() and self.sent < 10_000:
            self.producer.produce(self.topic, b"x%d" % self.sent)
            self.producer.flush(10)
            self.sent += 1
            self.done.wait(0.2)  # the production rate


class Consuming(threading.Thread):
    """A group member that reads and commits everything it gets, until stopped; then it
    closes (leaves the group)."""

    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        super().__init__(daemon=True)
        from confluent_kafka import Consumer

        self.consumer = Consumer({
            "bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
            "auto.offset.reset": "earliest", "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 1000,
        })  # fmt: skip
        self.consumer.subscribe([topic])
        self.done = threading.Event()
        self.committed = 0

    def run(self) -> None:
        try:
            while not self.done.is_set():
                msgs = self.consumer.consume(500, 0.1)
                if any(m.error() is None for m in msgs):
                    self.consumer.commit(asynchronous=False)
                    self.committed += 1
        finally:
            self.consumer.close()


def _reset(bootstrap: str, group: str, topic: str, offset: int) -> None:
    commit_offsets(bootstrap, group, {(topic, 0): offset})


def test_live_analysis_tells_a_stopped_a_keeping_up_and_a_rewound_group_apart(
    kctl, bootstrap, new_topic, tmp_path
):
    topic = new_topic(partitions=1, prefix="an")
    stopper, keeper, rewinder = unique("stop"), unique("keep"), unique("rewind")
    producing = Producing(bootstrap, topic)
    producing.start()
    consumers = {g: Consuming(bootstrap, topic, g) for g in (stopper, keeper)}
    for c in consumers.values():
        c.start()
    record = tmp_path / "samples.jsonl"
    proc = None
    try:
        wait_for(lambda: producing.sent >= 40, "40 records produced")
        wait_for(
            lambda: all(c.committed > 0 for c in consumers.values()),
            "both consumers joined and committed",
            timeout=30,
        )
        _reset(bootstrap, rewinder, topic, 30)  # an offsets-only group, 30 committed
        proc = subprocess.Popen(
            [sys.executable, "-m", "kctl", "-o", "json", "analytics", "lag", "--live",
             "--duration", f"{SAMPLES - 1}s", "--interval", "1s", "--record", str(record),
             "--group", stopper, "--group", keeper, "--group", rewinder,
             "--window", str(WINDOW), "--master", "local[2]",
             "--conf", "spark.sql.shuffle.partitions=2"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=_env(bootstrap, tmp_path),
        )  # fmt: skip
        # The stopper leaves after 4 samples; the rewinder is reset backwards after 10 (so the
        # rewind lands inside the last WINDOW samples).
        wait_for(lambda: _sample_rounds(record) >= 4, "4 samples", timeout=60)
        consumers[stopper].done.set()
        consumers[stopper].join(30)
        wait_for(lambda: _sample_rounds(record) >= 10, "10 samples", timeout=60)
        _reset(bootstrap, rewinder, topic, 5)
        stdout, stderr = proc.communicate(timeout=180)
    finally:
        producing.done.set()
        for c in consumers.values():
            c.done.set()
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, stderr[-2000:]
    doc = json.loads(stdout)
    groups = {g["group"]: g for g in doc["groups"]}
    assert groups[keeper]["status"] == "OK"
    assert groups[stopper]["status"] == "ERR"
    assert groups[rewinder]["status"] == "ERR"

    partitions = _partition_statuses(kctl, record)
    assert partitions[stopper]["status"] == "STOP"
    assert partitions[rewinder]["status"] == "REWIND"
    assert partitions[keeper]["status"] == "OK"
    # the stopper's lag grew while production went on
    assert groups[stopper]["lag_trend"] > 0
    assert groups[stopper]["lag"] == groups[stopper]["max_lag"] > 0
    assert _sample_rounds(record) == SAMPLES


def _env(bootstrap: str, tmp_path: Path) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("KCTL_")}
    env.update(
        KCTL_BOOTSTRAP_SERVERS=bootstrap,
        KCTL_CONFIG=str(tmp_path / "kctl-config.yaml"),
        NO_COLOR="1",
    )
    return env


def _partition_statuses(kctl, record: Path) -> dict[str, dict]:
    r = kctl(
        "analytics", "lag", str(record), "--level", "partition", "--window", str(WINDOW),
        "--master", "local[2]", "-o", "json", timeout=180,
    )  # fmt: skip
    assert r.code == 0, r
    return {row["group"]: row for row in json.loads(r.stdout)["partitions"]}
