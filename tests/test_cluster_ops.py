"""Partition and replica operations on a real Apache Kafka cluster of our own (3 brokers, one
KRaft controller, two log dirs per broker): add-partitions, log-dirs, move-dir, reassignments
with throttles and cancel, preferred and unclean elections, the describe filters and replicas
validate/verify with brokers stopped, and commands failing fast while brokers are down.

Every check reads the result back from the cluster (kctl -o json or confluent_kafka) instead of
trusting kctl's own answer. The module starts its own cluster (it stops brokers) and kills it at
the end; the session cluster is never used here."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    Run,
    kctl_environment,
    own_dynamic_configs,
    run_kctl,
    start_kafka_cluster,
    unique,
    wait_for,
)

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("KCTL_TEST_BOOTSTRAP"))
    or os.environ.get("KCTL_TEST_ENGINE", "kafka") != "kafka",
    reason="needs the local Apache Kafka engine (it stops and starts brokers)",
)


class Ops:
    """The module's cluster: its state dir, bootstrap, and helpers over both."""

    def __init__(self, state: Path, cluster: Any, config: Path) -> None:
        from confluent_kafka.admin import AdminClient

        self.state = state
        self.cluster = cluster
        self.bootstrap = cluster.bootstrap
        self.config = config
        self.admin = AdminClient({"bootstrap.servers": self.bootstrap})

    # --- kctl as an operator runs it ----------------------------------------------------------
    def kctl(self, *args: str, input: str | None = None, timeout: float = 90) -> Run:
        env = kctl_environment(
            KCTL_BOOTSTRAP_SERVERS=self.bootstrap,
            KCTL_CONFIG=str(self.config),
            KCTL_STATE_DIR=str(self.config.parent / "kctl-state"),
        )
        return run_kctl(env, *args, input=input, timeout=timeout)

    def json(self, *args: str) -> Any:
        r = self.kctl(*args, "-o", "json")
        assert r.code == 0, r
        return json.loads(r.stdout)

    # --- the cluster, read back -----------------------------------------------------------
    def partitions(self, topic: str) -> dict[int, Any]:
        md = self.admin.list_topics(topic, timeout=15)
        return dict(md.topics[topic].partitions)

    def replicas(self, topic: str) -> dict[int, list[int]]:
        return {p: list(m.replicas) for p, m in sorted(self.partitions(topic).items())}

    def leader(self, topic: str, partition: int) -> int:
        return self.partitions(topic)[partition].leader

    def isr(self, topic: str, partition: int) -> list[int]:
        return list(self.partitions(topic)[partition].isrs)

    def create(self, topic: str, *args: str) -> None:
        r = self.kctl("topics", "create", topic, *args)
        assert r.code == 0, r
        wait_for(lambda: self._ready(topic), f"topic {topic} has leaders", 30)

    def _ready(self, topic: str) -> bool:
        try:
            parts = self.partitions(topic)
        except Exception:
            return False
        return bool(parts) and all(p.leader >= 0 and p.error is None for p in parts.values())

    def produce(self, topic: str, count: int, size: int = 20, partition: int | None = None) -> None:
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": self.bootstrap, "acks": "all", "linger.ms": 5})
        failed: list[str] = []

        def done(err: Any, _msg: Any) -> None:
            if err is not None:
                failed.append(str(err))

        for i in range(count):
            value = f"{i:08d}".ljust(size, "x").encode()
            if partition is None:
                producer.produce(topic, value=value, key=str(i).encode(), on_delivery=done)
            else:
                producer.produce(topic, value=value, partition=partition, on_delivery=done)
            if i % 1000 == 999:
                producer.poll(0)
        assert producer.flush(60) == 0, "records still unsent after 60 s"
        assert not failed, failed[:3]

    def watermarks(self, topic: str, partition: int) -> tuple[int, int]:
        from confluent_kafka import Consumer, TopicPartition

        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": unique("wm")})
        try:
            return c.get_watermark_offsets(TopicPartition(topic, partition), timeout=15)
        finally:
            c.close()

    def consumed(self, topic: str) -> int:
        """Records kctl consume reads from the start to the end of every partition."""
        r = self.kctl("consume", topic, "-o", "jsonl")
        assert r.code == 0, r
        return len(r.stdout.splitlines())

    def log_dirs(self, topic: str) -> list[dict[str, Any]]:
        """(broker, log_dir, replica) rows of ``topic`` from kctl cluster log-dirs -o json."""
        return [
            {"broker": d["broker"], "log_dir": d["log_dir"], **r}
            for d in self.json("cluster", "log-dirs", "--topic", topic)
            for r in d["replicas"]
        ]

    def configs(self, kind: str, name: str, names: tuple[str, ...]) -> dict[str, str]:
        return own_dynamic_configs(self.admin, kind, name, names)

    # --- brokers -----------------------------------------------------------------------------
    def stop(self, broker: int) -> None:
        from kctl.local import kafka_cluster

        assert kafka_cluster.stop_broker(self.state, broker)
        wait_for(lambda: broker not in self.live(), f"broker {broker} gone from metadata", 30)

    def start(self, broker: int) -> None:
        from kctl.local import kafka_cluster

        kafka_cluster.start_broker(self.state, broker)
        wait_for(lambda: broker in self.live(), f"broker {broker} back in metadata", 60)

    def live(self) -> set[int]:
        from confluent_kafka import KafkaException

        try:
            return set(self.admin.list_topics(timeout=15).brokers)
        except KafkaException:  # no broker answers (all stopped, or none started yet)
            return set()

    def restore(self) -> None:
        """Every broker running again and every partition's ISR full."""
        from kctl.local import kafka_cluster

        for b in self.cluster.brokers:
            if b.id not in self.live():
                kafka_cluster.start_broker(self.state, b.id)
        wait_for(lambda: self.live() == {b.id for b in self.cluster.brokers}, "all brokers", 60)


@pytest.fixture(scope="module")
def ops(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ops]:
    from kctl.local import kafka_cluster

    state = tmp_path_factory.mktemp("ops-cluster")
    cluster = start_kafka_cluster(state, brokers=3)
    try:
        yield Ops(state, cluster, tmp_path_factory.mktemp("ops-kctl") / "kctl-config.yaml")
    finally:
        recorded = kafka_cluster.read_state(state)
        kafka_cluster.kill_all(recorded if recorded is not None else cluster)


def one_error_line(r: Run) -> str:
    lines = r.stderr.strip().splitlines()
    assert r.code == 1 and len(lines) == 1 and lines[0].startswith("kctl: error: "), r
    return lines[0]


# ---------------------------------------------------------------------------------------------
# topics add-partitions, cluster log-dirs, replicas verify


def test_add_partitions_grows_the_topic(ops: Ops) -> None:
    name = unique("grow")
    ops.create(name, "--partitions", "2", "--replication-factor", "2")
    r = ops.kctl("topics", "add-partitions", name, "--partitions", "5", "-o", "json")
    assert r.code == 0, r
    assert json.loads(r.stdout)[0]["partitions_before"] == 2
    wait_for(lambda: len(ops.partitions(name)) == 5, f"{name} has 5 partitions", 30)
    assert all(len(rs) == 2 for rs in ops.replicas(name).values())
    r = ops.kctl("topics", "add-partitions", name, "--partitions", "3")
    assert "already has 5 partitions" in one_error_line(r)


def test_log_dirs_report_sizes_and_lag_of_real_data(ops: Ops) -> None:
    name = unique("sizes")
    ops.create(name, "--partitions", "1", "--replication-factor", "3")
    ops.produce(name, 500, size=100)

    def caught_up() -> bool:
        rows = ops.log_dirs(name)
        return len(rows) == 3 and all(r["size"] > 0 and r["offset_lag"] == 0 for r in rows)

    wait_for(caught_up, "three replicas with data and no lag", 30)
    rows = ops.log_dirs(name)
    assert sorted(r["broker"] for r in rows) == [1, 2, 3]
    assert len({r["size"] for r in rows}) == 1  # the same bytes on every replica
    assert rows[0]["size"] >= 500 * 100
    dirs = {b.id: b.log_dirs for b in ops.cluster.brokers}
    assert all(r["log_dir"] in dirs[r["broker"]] and not r["future"] for r in rows)


def test_replicas_verify_three_equal_replicas(ops: Ops) -> None:
    name = unique("verify")
    ops.create(name, "--partitions", "2", "--replication-factor", "3")
    ops.produce(name, 300)
    wait_for(lambda: all(len(ops.isr(name, p)) == 3 for p in (0, 1)), "full ISR", 30)
    r = ops.kctl("replicas", "verify", "--topic", name, "-o", "json")
    assert r.code == 0, r
    rows = json.loads(r.stdout)
    assert sorted((x["partition"], x["broker"]) for x in rows) == [
        (p, b) for p in (0, 1) for b in (1, 2, 3)
    ]
    assert sorted(x["status"] for x in rows) == ["identical"] * 4 + ["reference"] * 2
    fetched = [x for x in rows if x["offsets"] != "empty"]
    assert fetched and all(x["batches"] > 0 for x in fetched)


# ---------------------------------------------------------------------------------------------
# partitions move-dir (AlterReplicaLogDirs)


def test_move_dir_moves_a_replica_to_the_other_log_dir(ops: Ops) -> None:
    name = unique("movedir")
    ops.create(name, "--replica-assignment", "1")
    ops.produce(name, 2000, size=200)
    [row] = ops.log_dirs(name)
    assert row["broker"] == 1 and row["size"] > 0
    before = row["log_dir"]
    [target] = [d for d in ops.cluster.broker(1).log_dirs if d != before]

    r = ops.kctl(
        "partitions", "move-dir", f"{name}:0", "--broker", "1", "--to-dir", target, "-o", "json"
    )
    assert r.code == 0, r
    [plan] = json.loads(r.stdout)
    assert (plan["log_dir"], plan["target"], plan["action"]) == (before, target, "move")
    assert "nothing changed" in r.stderr
    assert [x["log_dir"] for x in ops.log_dirs(name)] == [before]

    r = ops.kctl(
        "partitions", "move-dir", f"{name}:0", "--broker", "1", "--to-dir", target, "--execute"
    )
    assert r.code == 0 and "accepted" in r.stdout, r

    def moved() -> bool:
        rows = ops.log_dirs(name)
        return [(x["log_dir"], x["future"]) for x in rows] == [(target, False)]

    wait_for(moved, f"{name}-0 in {target} and no future replica left", 60)
    assert ops.consumed(name) == 2000
    # Already there: a plan that skips, and --execute changes nothing.
    r = ops.kctl(
        "partitions", "move-dir", f"{name}:0", "--broker", "1", "--to-dir", target, "--execute"
    )
    assert r.code == 0 and "nothing to move" in r.stderr, r
    r = ops.kctl("partitions", "move-dir", f"{name}:0", "--broker", "1", "--to-dir", "/no/such")
    assert "has no log dir '/no/such'" in one_error_line(r)
    elsewhere = ops.cluster.broker(2).log_dirs[0]
    r = ops.kctl("partitions", "move-dir", f"{name}:0", "--broker", "2", "--to-dir", elsewhere)
    assert f"holds no replica of {name}-0" in one_error_line(r)


# ---------------------------------------------------------------------------------------------
# partitions reassign


THROTTLE_RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
THROTTLE_REPLICAS = (
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
)


def _generate(ops: Ops, name: str, brokers: str, path: Path) -> dict[str, Any]:
    r = ops.kctl(
        "partitions", "reassign", "generate", "--topic", name, "--brokers", brokers, "-o", "json"
    )
    assert r.code == 0, r
    path.write_text(r.stdout)
    return json.loads(r.stdout)


def test_reassign_moves_records_with_a_throttle_that_verify_removes(
    ops: Ops, tmp_path: Path
) -> None:
    name = unique("move")
    ops.create(name, "--replica-assignment", "1,1")
    ops.produce(name, 3000, size=100)
    plan = tmp_path / "plan.json"
    doc = _generate(ops, name, "2", plan)
    assert [p["replicas"] for p in doc["partitions"]] == [[2], [2]]

    r = ops.kctl("partitions", "reassign", "execute", "--file", str(plan), "--throttle", "50000000")
    assert r.code == 0 and "nothing changed" in r.stderr, r
    assert ops.replicas(name) == {0: [1], 1: [1]}
    assert ops.configs("topic", name, THROTTLE_REPLICAS) == {}

    r = ops.kctl(
        "partitions",
        "reassign",
        "execute",
        "--file",
        str(plan),
        "--throttle",
        "50000000",
        "--execute",
        "-o",
        "json",
    )
    assert r.code == 0, r
    assert [x["status"] for x in json.loads(r.stdout)] == ["accepted", "accepted"]
    # The throttle as kafka-reassign-partitions.sh sets it: rates on both brokers, the moving
    # replicas on the topic (leaders: the current replicas; followers: the added ones).
    for b in ("1", "2"):
        assert ops.configs("broker", b, THROTTLE_RATES) == dict.fromkeys(THROTTLE_RATES, "50000000")
    assert ops.configs("broker", "3", THROTTLE_RATES) == {}
    assert ops.configs("topic", name, THROTTLE_REPLICAS) == {
        "leader.replication.throttled.replicas": "0:1,1:1",
        "follower.replication.throttled.replicas": "0:2,1:2",
    }

    def verified() -> bool:
        return ops.kctl("partitions", "reassign", "verify", "--file", str(plan)).code == 0

    wait_for(verified, "reassign verify to find the move complete", 90, interval=1)
    assert ops.replicas(name) == {0: [2], 1: [2]}
    for b in ("1", "2", "3"):
        assert ops.configs("broker", b, THROTTLE_RATES) == {}
    assert ops.configs("topic", name, THROTTLE_REPLICAS) == {}
    assert ops.consumed(name) == 3000
    assert {(x["broker"], x["partition"]) for x in ops.log_dirs(name)} == {(2, 0), (2, 1)}


def _same_as_kafka_topics(ops: Ops, kafka_tool: Any, name: str) -> dict[int, dict[str, str]]:
    """``topics describe`` equals kafka-topics.sh --describe on the topic; its partitions."""
    from conftest import kafka_topics_describe, kctl_topic_as_kafka_prints_it

    (doc,) = ops.json("topics", "describe", name)
    ours = kctl_topic_as_kafka_prints_it(doc)
    theirs = kafka_topics_describe(kafka_tool, ops.bootstrap, name)
    assert ours == theirs
    return ours[1]


def test_reassign_cancel_stops_a_slow_throttled_move(
    ops: Ops, tmp_path: Path, kafka_tool: Any
) -> None:
    name = unique("cancel")
    ops.create(name, "--replica-assignment", "1")
    ops.produce(name, 3000, size=1000)  # 3 MB at 10 kB/s: minutes, far longer than the test
    plan = tmp_path / "plan.json"
    _generate(ops, name, "2", plan)
    r = ops.kctl(
        "partitions", "reassign", "execute", "--file", str(plan), "--throttle", "10000", "--execute"
    )
    assert r.code == 0, r
    listed = ops.json("partitions", "reassign", "list")
    assert [(x["topic"], x["adding_replicas"], x["removing_replicas"]) for x in listed] == [
        (name, [2], [1])
    ]
    r = ops.kctl("partitions", "reassign", "verify", "--file", str(plan), "-o", "json")
    assert r.code == 3 and json.loads(r.stdout)[0]["status"] == "in-progress", r
    moving = _same_as_kafka_topics(ops, kafka_tool, name)[0]
    assert (moving["Adding Replicas"], moving["Removing Replicas"]) == ("2", "1")

    r = ops.kctl("partitions", "reassign", "cancel", "--file", str(plan))
    assert r.code == 0 and "nothing changed" in r.stderr, r
    assert ops.json("partitions", "reassign", "list") != []

    r = ops.kctl("partitions", "reassign", "cancel", "--file", str(plan), "--execute", "-o", "json")
    assert r.code == 0 and json.loads(r.stdout)[0]["status"] == "accepted", r
    wait_for(lambda: ops.json("partitions", "reassign", "list") == [], "no reassignment", 30)
    assert ops.replicas(name) == {0: [1]}
    # kafka-reassign-partitions.sh --cancel removes the throttle too.
    assert ops.configs("topic", name, THROTTLE_REPLICAS) == {}
    for b in ("1", "2"):
        assert ops.configs("broker", b, THROTTLE_RATES) == {}
    wait_for(lambda: [x["broker"] for x in ops.log_dirs(name)] == [1], "no replica on 2", 30)
    assert ops.consumed(name) == 3000


# ---------------------------------------------------------------------------------------------
# Brokers stopped: preferred elections, describe filters, replicas validate, failing fast


def test_preferred_election_after_the_preferred_leader_restarts(ops: Ops) -> None:
    name = unique("pref")
    ops.create(name, "--partitions", "3", "--replication-factor", "3")
    ops.produce(name, 100)
    preferred = ops.replicas(name)[0][0]
    assert ops.leader(name, 0) == preferred
    try:
        ops.stop(preferred)
        wait_for(lambda: ops.leader(name, 0) not in (preferred, -1), "a new leader", 30)
        ops.start(preferred)
        wait_for(lambda: preferred in ops.isr(name, 0), f"{preferred} back in the ISR", 60)
        # Automatic rebalancing runs every 300 s: leadership has not come back on its own.
        moved_to = ops.leader(name, 0)
        assert moved_to != preferred

        doc = ops.json("replicas", "validate", "--topic", name)
        assert any(
            f["check"] == "preferred-leader" and f["partition"] == 0 for f in doc["findings"]
        ), doc

        r = ops.kctl(
            "partitions", "elect-leaders", "--preferred", "--topic", f"{name}:0", "-o", "json"
        )
        assert r.code == 0 and "nothing changed" in r.stderr, r
        [step] = json.loads(r.stdout)
        assert (step["action"], step["leader"], step["new_leader"]) == (
            "elect",
            moved_to,
            preferred,
        )
        assert ops.leader(name, 0) == moved_to

        r = ops.kctl(
            "partitions",
            "elect-leaders",
            "--election-type",
            "preferred",
            "--topic",
            f"{name}:0",
            "--execute",
            "-o",
            "json",
        )
        assert r.code == 0, r
        assert [(x["partition"], x["status"]) for x in json.loads(r.stdout)] == [(0, "elected")]
        wait_for(lambda: ops.leader(name, 0) == preferred, "the preferred leader leads", 30)
        r = ops.kctl("partitions", "elect-leaders", "--preferred", "--topic", name, "--execute")
        assert ops.leader(name, 0) == preferred
    finally:
        ops.restore()


def _describe(ops: Ops, *args: str) -> dict[str, list[int]]:
    """topic -> partitions listed by kctl topics describe ARGS -o json."""
    return {
        t["topic"]: [p["partition"] for p in t["partitions"]]
        for t in ops.json("topics", "describe", *args)
    }


def test_describe_filters_validate_and_fast_failures_with_brokers_down(ops: Ops) -> None:
    name = unique("minisr")
    ops.create(
        name, "--replica-assignment", "1:2:3,2:3:1,3:1:2", "--config", "min.insync.replicas=2"
    )
    lonely = unique("on2")
    ops.create(lonely, "--replica-assignment", "2")
    ops.produce(name, 90)
    ops.produce(lonely, 10)
    wait_for(lambda: all(len(ops.isr(name, p)) == 3 for p in range(3)), "full ISR", 30)
    assert _describe(ops, name, lonely, "--under-replicated") == {}
    assert ops.kctl("replicas", "validate", "--topic", name).code == 0
    try:
        ops.stop(3)
        wait_for(lambda: all(len(ops.isr(name, p)) == 2 for p in range(3)), "ISR of 2", 30)
        assert _describe(ops, name, lonely, "--under-replicated") == {name: [0, 1, 2]}
        assert _describe(ops, name, lonely, "--at-min-isr") == {name: [0, 1, 2], lonely: [0]}
        assert _describe(ops, name, lonely, "--under-min-isr") == {}
        assert _describe(ops, name, lonely, "--unavailable") == {}
        r = ops.kctl("replicas", "validate", "--topic", name, "-o", "json")
        assert r.code == 3, r
        doc = json.loads(r.stdout)
        checks = {(f["check"], f["partition"]) for f in doc["findings"]}
        assert {("under-replicated", p) for p in range(3)} <= checks
        assert not any(c == "under-min-isr" for c, _ in checks)
        # Broker 3 is stopped, not unregistered (KRaft keeps its registration, fenced): one
        # broker-down finding, and every finding it explains names it as their cause.
        assert not any(c == "unregistered-broker" for c, _ in checks), doc
        [down] = [f for f in doc["findings"] if f["check"] == "broker-down"]
        assert down["brokers"] == [3] and "registered but fenced" in down["reason"], down
        [cause] = doc["causes"]
        assert (cause["cause"], cause["brokers"]) == ("broker-down", [3]), cause
        assert {f["cause"] for f in doc["findings"]} == {0}, doc
        # The table leads with the cause, in one row instead of one row per finding.
        r = ops.kctl("replicas", "validate", "--topic", name, "-o", "plain", "--no-headers")
        assert r.code == 3, r
        assert r.stdout.splitlines() == [
            "error\tbroker-down\t\t\t3\tbroker 3 down (registered, fenced): "
            "3 partitions under-replicated, 3 at min ISR, 1 leader moved"
        ], r

        ops.stop(2)
        wait_for(lambda: all(ops.isr(name, p) == [1] for p in range(3)), "ISR [1]", 30)
        # Leaderless counts as under min ISR (kafka-topics.sh); Kafka 4 leaves its ISR empty.
        assert _describe(ops, name, lonely, "--under-min-isr") == {name: [0, 1, 2], lonely: [0]}
        assert _describe(ops, name, lonely, "--unavailable") == {lonely: [0]}
        r = ops.kctl("replicas", "validate", "--topic", name, "--topic", lonely, "-o", "json")
        assert r.code == 3, r
        checks = {(f["check"], f["topic"]) for f in json.loads(r.stdout)["findings"]}
        assert {("offline", lonely), ("under-min-isr", name)} <= checks, checks

        # replicas verify names the unreachable replicas instead of hanging on them.
        r = ops.kctl("--timeout", "5", "replicas", "verify", "--topic", name, "-o", "json")
        assert r.code == 3, r
        statuses = {(x["partition"], x["broker"]): x["status"] for x in json.loads(r.stdout)}
        assert {s for (_, b), s in statuses.items() if b in (2, 3)} == {"offline"}
        assert {s for (_, b), s in statuses.items() if b == 1} == {"reference"}
        assert "offline" in r.stderr and "differ" not in r.stderr

        # Commands that need the stopped brokers: one line, exit 1, within --timeout.
        target = ops.cluster.broker(2).log_dirs[1]
        cases = [
            (("cluster", "log-dirs", "--broker", "2"), "broker 2 is fenced"),
            (
                ("partitions", "move-dir", f"{lonely}:0", "--broker", "2", "--to-dir", target),
                "broker 2 is fenced",
            ),
            (("consume", lonely, "-n", "1"), lonely),
            (("topics", "create", unique("rf3"), "--replication-factor", "3"), "replication"),
            (
                ("partitions", "elect-leaders", "--preferred", "--topic", lonely, "--execute"),
                None,
            ),
        ]
        for args, says in cases:
            began = time.monotonic()
            r = ops.kctl("--timeout", "5", *args, timeout=40)
            took = time.monotonic() - began
            if says is None:  # nothing it could do: the plan says why, nothing is sent
                assert r.code == 0 and "nothing to elect" in r.stderr, r
            else:
                assert says in one_error_line(r), (args, r)
            assert took < 20, (args, took)
        # The producer gives up --timeout seconds after deliveries stopped: the record's fate
        # is unknown (it may have reached a broker), its summary says so, then one error line.
        r = ops.kctl("--timeout", "5", "produce", lonely, input="x\n", timeout=90)
        lines = [ln for ln in r.stderr.strip().splitlines() if not ln.startswith("waiting for")]
        assert r.code == 1 and len(lines) == 2 and "unknown 1" in lines[0], r
        assert lines[1].startswith("kctl: error: "), r
    finally:
        ops.restore()
    wait_for(lambda: ops.leader(lonely, 0) == 2, f"{lonely} led again", 60)
    wait_for(lambda: all(len(ops.isr(name, p)) == 3 for p in range(3)), "full ISR again", 60)
    assert _describe(ops, name, lonely, "--under-replicated") == {}


# ---------------------------------------------------------------------------------------------
# Unclean election (Kafka 4 keeps Eligible Leader Replicas: the last ISR member stays the only
# clean candidate, so an out-of-sync replica leads only through an unclean election)


def test_unclean_election_gives_a_leaderless_partition_a_leader(ops: Ops, kafka_tool: Any) -> None:
    name = unique("unclean")
    ops.create(name, "--replica-assignment", "1:2:3")
    ops.produce(name, 5, partition=0)
    wait_for(lambda: len(ops.isr(name, 0)) == 3, "full ISR", 30)
    try:
        ops.stop(2)
        ops.stop(3)
        wait_for(lambda: ops.isr(name, 0) == [1], "ISR [1]", 30)
        ops.produce(name, 5, partition=0)  # only broker 1 has these
        assert ops.watermarks(name, 0) == (0, 10)
        ops.stop(1)
        ops.start(2)  # out of sync: it missed offsets 5..9
        assert ops.leader(name, 0) == -1
        assert _describe(ops, name, "--unavailable") == {name: [0]}
        # Leader none, ISR and ELR as Kafka's own tool prints them.
        assert _same_as_kafka_topics(ops, kafka_tool, name)[0]["Leader"] == "none"
        # With ELR the controller does not elect 2 on its own.
        assert ops.leader(name, 0) == -1

        r = ops.kctl("partitions", "elect-leaders", "--unclean", "--topic", name, "-o", "json")
        assert r.code == 0 and "nothing changed" in r.stderr, r
        [step] = json.loads(r.stdout)
        assert (step["action"], step["new_leader"]) == ("elect", 2), step
        assert ops.leader(name, 0) == -1

        r = ops.kctl(
            "partitions",
            "elect-leaders",
            "--election-type",
            "unclean",
            "--topic",
            f"{name}:0",
            "--execute",
            "-o",
            "json",
        )
        assert r.code == 0, r
        assert [x["status"] for x in json.loads(r.stdout)] == ["elected"]
        wait_for(lambda: ops.leader(name, 0) == 2, "broker 2 leads", 30)
        assert ops.isr(name, 0) == [2]
        assert ops.watermarks(name, 0) == (0, 5)  # the records only broker 1 had are gone
        assert _describe(ops, name, "--unavailable") == {}
    finally:
        ops.restore()
    # Broker 1 comes back as a follower and truncates to the new leader's log.
    wait_for(lambda: len(ops.isr(name, 0)) == 3, "full ISR after the unclean election", 60)
    assert ops.consumed(name) == 5


def test_a_stopped_broker_is_down_until_unregistered_and_registers_again_when_it_starts(
    ops: Ops,
) -> None:
    name = unique("on3")
    ops.create(name, "--replica-assignment", "1:3")

    def validate_checks() -> set[tuple[str, tuple[int, ...]]]:
        r = ops.kctl("replicas", "validate", "--topic", name, "-o", "json")
        assert r.code == 3, r
        return {(f["check"], tuple(f["brokers"])) for f in json.loads(r.stdout)["findings"]}

    try:
        ops.stop(3)
        stopped = validate_checks()
        assert ("broker-down", (3,)) in stopped and ("unregistered-broker", (3,)) not in stopped
        r = ops.kctl("cluster", "unregister", "3")  # no terminal, no --yes: refused
        assert r.code == 1 and "without --yes" in r.stderr, r
        r = ops.kctl("cluster", "unregister", "3", "--yes", "-o", "json")
        assert r.code == 0, r
        assert json.loads(r.stdout) == [{"broker": 3, "was": "fenced", "unregistered": True}]
        r = ops.kctl("cluster", "unregister", "3", "--yes")
        assert r.code == 1 and "broker 3 is not registered" in r.stderr, r
        # Now the cluster no longer knows broker 3, and replicas validate says so.
        gone = validate_checks()
        assert ("unregistered-broker", (3,)) in gone and ("broker-down", (3,)) not in gone
    finally:
        ops.restore()
    assert 3 in ops.live()


def test_feature_levels_change_only_with_execute(ops: Ops, kafka_tool: Any) -> None:
    def level() -> str:
        out = kafka_tool(
            "org.apache.kafka.tools.FeatureCommand", "--bootstrap-server", ops.bootstrap,
            "describe",
        ).stdout  # fmt: skip
        (line,) = [ln for ln in out.splitlines() if "Feature: share.version" in ln]
        return line.split("FinalizedVersionLevel:")[1].split()[0]

    assert level() == "1"
    r = ops.kctl("features", "downgrade", "--feature", "share.version=0", "--execute")
    assert r.code == 1 and "without --yes" in r.stderr and level() == "1", r
    r = ops.kctl("features", "downgrade", "--feature", "share.version=0", "-o", "json")
    assert r.code == 0 and json.loads(r.stdout)[0]["result"] == "OK" and level() == "1", r
    try:
        r = ops.kctl(
            "features", "downgrade", "--feature", "share.version=0", "--execute", "--yes",
            "-o", "json",
        )  # fmt: skip
        assert r.code == 0, r
        assert json.loads(r.stdout) == [
            {"feature": "share.version", "from": "1", "to": "0", "change": "safe-downgrade",
             "result": "OK"}
        ]  # fmt: skip
        wait_for(lambda: level() == "0", "share.version 0 finalized", 30)
    finally:
        r = ops.kctl("features", "upgrade", "--feature", "share.version=1", "--execute")
        assert r.code == 0, r
    wait_for(lambda: level() == "1", "share.version 1 again", 30)
