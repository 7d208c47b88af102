"""kctl transactions against the real cluster: a real transactional producer (confluent-kafka)
is SIGKILLed mid-transaction and leaves an open transaction behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest
from conftest import on_tansu, unique, wait_for

pytestmark = pytest.mark.skipif(on_tansu(), reason="Tansu has no transaction admin APIs")

_ABANDONED = textwrap.dedent(
    """
    import sys, time
    from confluent_kafka import Producer
    bootstrap, topic, txn_id = sys.argv[1:4]
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id,
                  "transaction.timeout.ms": 600000, "linger.ms": 0})
    p.init_transactions(30)
    p.begin_transaction()
    for i in range(3):
        p.produce(topic, b"txn-%d" % i, partition=0)
    p.flush(30)
    print("ready", flush=True)
    time.sleep(600)
    """
)


def _plain_records(bootstrap: str, topic: str, n: int) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for i in range(n):
        p.produce(topic, b"plain-%d" % i, partition=0)
    p.flush(30)


def _latest(kctl, topic: str, isolation: str) -> int:
    r = kctl("offsets", "get", topic, "--partition", "0", "--isolation", isolation, "-o", "json")
    assert r.code == 0, r
    return int(json.loads(r.stdout)["partitions"][0]["latest"])


@pytest.fixture
def abandoned(bootstrap, new_topic):
    """(topic, transactional id): 2 plain records, then a transaction of 3 records at offset 2
    whose producer was killed, then 1 plain record (offset 5, held back by the open one)."""
    topic = new_topic(partitions=1, prefix="txn")
    txn_id = unique("tid")
    _plain_records(bootstrap, topic, 2)
    proc = subprocess.Popen(
        [sys.executable, "-c", _ABANDONED, bootstrap, topic, txn_id],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    _plain_records(bootstrap, topic, 1)
    return topic, txn_id


def test_open_transaction_listed_described_and_aborted(kctl, abandoned):
    topic, txn_id = abandoned

    r = kctl("transactions", "list", "-o", "json")
    assert r.code == 0, r
    (mine,) = [t for t in json.loads(r.stdout) if t["transactional_id"] == txn_id]
    assert mine["state"] == "Ongoing" and mine["coordinator"] >= 0 and mine["producer_id"] >= 0
    r = kctl("transactions", "list", "--state", "ongoing", "--producer-id",
             str(mine["producer_id"]), "-o", "json")  # fmt: skip
    assert r.code == 0, r
    assert [t["transactional_id"] for t in json.loads(r.stdout)] == [txn_id]
    r = kctl("transactions", "list", "--duration-filter", "3600000", "-o", "json")
    assert r.code == 0, r
    assert txn_id not in [t["transactional_id"] for t in json.loads(r.stdout)]

    r = kctl("transactions", "describe", txn_id, "-o", "json")
    assert r.code == 0, r
    d = json.loads(r.stdout)
    assert d["state"] == "Ongoing" and d["producer_id"] == mine["producer_id"]
    assert d["partitions"] == [{"topic": topic, "partition": 0}]
    assert d["timeout_ms"] == 600000 and d["coordinator"] == mine["coordinator"]
    assert d["start_time"] is not None

    r = kctl("transactions", "producers", f"{topic}:0", "-o", "json")
    assert r.code == 0, r
    (txn_producer,) = [p for p in json.loads(r.stdout) if p["producer_id"] == mine["producer_id"]]
    assert txn_producer["current_txn_start_offset"] == 2
    assert txn_producer["producer_epoch"] == d["producer_epoch"]

    # The open transaction holds the last stable offset at its start.
    assert _latest(kctl, topic, "read_uncommitted") == 6
    assert _latest(kctl, topic, "read_committed") == 2

    # find-hanging: the coordinator still holds it, so it is not hanging; with a zero age
    # threshold --all shows it as an old open transaction the coordinator knows.
    r = kctl("transactions", "find-hanging", "--topic", topic, "-o", "json")
    assert r.code == 0 and json.loads(r.stdout) == [], r
    r = kctl("transactions", "find-hanging", "--topic", topic, "--max-age-ms", "0", "--all",
             "-o", "json")  # fmt: skip
    assert r.code == 0, r
    (row,) = json.loads(r.stdout)
    assert row["hanging"] is False and row["transactional_id"] == txn_id
    assert row["current_txn_start_offset"] == 2

    # abort: the plan changes nothing; --execute writes the marker and frees the LSO.
    args = ("transactions", "abort", "--topic", topic, "--partition", "0", "--start-offset", "2")
    r = kctl(*args, "-o", "json")
    assert r.code == 0, r
    assert json.loads(r.stdout)[0]["action"] == "plan" and "nothing changed" in r.stderr
    assert _latest(kctl, topic, "read_committed") == 2
    r = kctl(*args, "--execute", "-o", "json")
    assert r.code == 0, r
    assert "aborted" in r.stderr
    wait_for(lambda: _latest(kctl, topic, "read_committed") == 7, "the LSO past the abort marker")
    r = kctl("consume", topic, "--isolation", "read_committed", "-o", "jsonl",
             "--value-format", "text")  # fmt: skip
    assert r.code == 0, r
    values = [json.loads(line)["value"] for line in r.stdout.splitlines()]
    assert values == ["plain-0", "plain-1", "plain-0"]
    r = kctl("transactions", "producers", f"{topic}:0", "-o", "json")
    assert all(p["current_txn_start_offset"] is None for p in json.loads(r.stdout)), r


def test_errors(kctl, new_topic):
    topic = new_topic(partitions=1, prefix="txn")
    r = kctl("transactions", "describe", unique("nope"))
    assert r.code == 1 and r.stderr.startswith("kctl: error: transactional id"), r
    r = kctl("transactions", "abort", "--topic", topic, "--partition", "0", "--start-offset", "5")
    assert r.code == 1 and "no open transaction starts at offset 5" in r.stderr, r
    r = kctl("transactions", "producers", "no-colon")
    assert r.code == 2 and "TOPIC:PARTITION" in r.stderr, r
    r = kctl("transactions", "list", "--state", "Bogus")
    assert r.code == 2 and "unknown state" in r.stderr, r
    r = kctl("transactions", "find-hanging")
    assert r.code == 2 and "--broker, --topic" in r.stderr, r
    r = kctl("transactions", "find-hanging", "--broker", "1", "-o", "json")
    assert r.code in (0, 3), r  # a real broker's partitions, its transaction.max.timeout.ms


def test_verdict():
    """The decision kafka-transactions.sh find-hanging makes, on each case (a hanging
    transaction cannot be made on a 4.x broker in test time: partition verification, KIP-890,
    refuses transactional writes the coordinator does not know of)."""
    from kctl.broker.transactions import Producer, Transaction, verdict

    p = Producer("t", 0, 1, producer_id=7, producer_epoch=2, last_sequence=4,
                 last_timestamp=0, coordinator_epoch=3, current_txn_start_offset=10)  # fmt: skip

    def txn(state: str, pid: int = 7, parts=(("t", 0),)) -> Transaction:
        return Transaction("x", state, pid, 2, 60000, 0, 1, list(parts))

    assert verdict(p, None, None)[0] is True
    assert verdict(p, "x", None)[0] is True
    assert verdict(p, "x", txn("Ongoing", pid=8))[0] is True
    assert verdict(p, "x", txn("CompleteAbort"))[0] is True
    assert verdict(p, "x", txn("Empty"))[0] is True
    assert verdict(p, "x", txn("Ongoing", parts=[("t", 1)]))[0] is True
    assert verdict(p, "x", txn("Ongoing")) == (False, "'x' is Ongoing with this partition")
    assert verdict(p, "x", txn("PrepareAbort"))[0] is False
