"""``partitions reassign execute`` in waves, ``verify --resume`` and ``reassign status`` on the
session's real 3-broker cluster: small topics with data, each plan read back from the cluster
(replicas, ongoing reassignments, throttle configs through confluent_kafka's DescribeConfigs,
records counted), never from kctl's own answer. Ctrl-C is a real SIGINT to a running kctl;
another tool's move is started by Kafka's own kafka-reassign-partitions.sh. The 5-broker,
3-rack scenarios (scale out, decommission, a broker killed mid-plan) are in their own module."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Run, own_dynamic_configs, unique, wait_for

RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
DIR_RATE = "replica.alter.log.dirs.io.max.bytes.per.second"
REPLICAS = ("leader.replication.throttled.replicas", "follower.replication.throttled.replicas")


@pytest.fixture(autouse=True)
def _needs_reassignments(requires_api: Callable[[str], None]) -> None:
    requires_api("AlterPartitionReassignments")
    requires_api("ListPartitionReassignments")


class Cluster:
    def __init__(self, bootstrap: str, kctl: Callable[..., Run], env: dict[str, str]) -> None:
        from confluent_kafka.admin import AdminClient

        self.bootstrap = bootstrap
        self.kctl = kctl
        self.env = env
        self.admin = AdminClient({"bootstrap.servers": bootstrap})

    def create(self, assignment: list[list[int]]) -> str:
        from confluent_kafka.admin import NewTopic

        name = unique("waves")
        fut = self.admin.create_topics(
            [NewTopic(name, len(assignment), replica_assignment=assignment)]
        )
        fut[name].result(timeout=30)
        wait_for(lambda: self.leaders_ready(name, len(assignment)), f"{name} has leaders", 30)
        return name

    def leaders_ready(self, name: str, count: int) -> bool:
        md = self.admin.list_topics(name, timeout=10).topics.get(name)
        return (
            md is not None
            and len(md.partitions) == count
            and all(p.leader >= 0 for p in md.partitions.values())
        )

    def produce(self, topic: str, per_partition: dict[int, int], size: int = 1000) -> None:
        from confluent_kafka import Producer

        p = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 20, "acks": "all"})
        for partition, count in per_partition.items():
            for i in range(count):
                p.produce(topic, value=f"{i:08d}".ljust(size, "x").encode(), partition=partition)
                if i % 1000 == 999:
                    p.poll(0)
        assert p.flush(60) == 0

    def count(self, topic: str) -> int:
        r = self.kctl("consume", topic, "-o", "jsonl")
        assert r.code == 0, r
        return len(r.stdout.splitlines())

    def replicas(self, topic: str) -> dict[int, list[int]]:
        md = self.admin.list_topics(topic, timeout=10).topics[topic]
        return {p: list(m.replicas) for p, m in sorted(md.partitions.items())}

    def isr_full(self, topic: str) -> bool:
        md = self.admin.list_topics(topic, timeout=10).topics[topic]
        return all(sorted(m.isrs) == sorted(m.replicas) for m in md.partitions.values())

    def configs(self, kind: str, name: str, names: tuple[str, ...]) -> dict[str, str]:
        return own_dynamic_configs(self.admin, kind, name, names)

    def no_throttle_left(self, topic: str) -> bool:
        return self.configs("topic", topic, REPLICAS) == {} and all(
            self.configs("broker", str(b), (*RATES, DIR_RATE)) == {} for b in (1, 2, 3)
        )

    def ongoing(self) -> list[dict[str, Any]]:
        r = self.kctl("partitions", "reassign", "list", "-o", "json")
        assert r.code == 0, r
        return json.loads(r.stdout)  # type: ignore[no-any-return]

    def plan(self, path: Path, moves: dict[tuple[str, int], list[int]]) -> Path:
        doc = {
            "version": 1,
            "partitions": [
                {"topic": t, "partition": p, "replicas": r} for (t, p), r in sorted(moves.items())
            ],
        }
        path.write_text(json.dumps(doc))
        return path

    def start(self, *args: str) -> subprocess.Popen[str]:
        """``kctl ARGS`` running in the background (stdin closed: no terminal)."""
        return subprocess.Popen(
            [sys.executable, "-m", "kctl", *args],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


@pytest.fixture
def cluster(bootstrap: str, kctl: Callable[..., Run], kctl_env: dict[str, str]) -> Cluster:
    return Cluster(bootstrap, kctl, kctl_env)


@pytest.fixture
def cleanup(cluster: Cluster) -> Iterator[list[str]]:
    """Topics whose leftover moves and throttles are cancelled/removed after the test, whatever
    it asserted (the cluster is shared with the rest of the session)."""
    topics: list[str] = []
    yield topics
    if topics:
        cluster.kctl("partitions", "reassign", "cancel", "--all", "--execute")
        from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

        res = [ConfigResource("topic", t) for t in topics]
        res += [ConfigResource("broker", str(b)) for b in (1, 2, 3)]
        for r in res:
            names = REPLICAS if "TOPIC" in str(r.restype).upper() else (*RATES, DIR_RATE)
            for n in names:
                r.add_incremental_config(
                    ConfigEntry(n, None, incremental_operation=AlterConfigOpType.DELETE)
                )
            for f in cluster.admin.incremental_alter_configs([r]).values():
                f.result(timeout=20)


@pytest.fixture
def dir_moves(requires_api: Callable[[str], None]) -> None:
    """Moves between a broker's log dirs: skipped, naming the API, where the broker lacks one."""
    requires_api("DescribeLogDirs")
    requires_api("AlterReplicaLogDirs")


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_execute_runs_in_waves_with_throttles_only_while_moving(
    cluster: Cluster, tmp_path: Path, cleanup: list[str]
) -> None:
    name = cluster.create([[1], [1], [2], [2]])
    cleanup.append(name)
    cluster.produce(name, {0: 300, 1: 300, 2: 300, 3: 300})
    target = {(name, 0): [2], (name, 1): [3], (name, 2): [3], (name, 3): [1]}
    plan = cluster.plan(tmp_path / "plan.json", target)

    # Without --execute: the waves it would run, nothing changed.
    r = cluster.kctl(
        "partitions", "reassign", "execute", "-f", str(plan), "--max-concurrent", "1", "-o", "json"
    )
    assert r.code == 0 and "in 4 wave(s)" in r.stderr and "nothing changed" in r.stderr, r
    assert [x["wave"] for x in json.loads(r.stdout)] == [1, 2, 3, 4]
    assert cluster.replicas(name) == {0: [1], 1: [1], 2: [2], 3: [2]}

    proc = cluster.start(
        "partitions", "reassign", "execute", "-f", str(plan), "--max-concurrent", "1",
        "--throttle", "300kB", "--wait", "--interval", "0.2s", "--execute", "-o", "jsonl",
    )  # fmt: skip
    seen: list[dict[str, str]] = []
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        found = cluster.configs("topic", name, REPLICAS)
        if found:
            seen.append(found)
        time.sleep(0.1)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, (out, err)
    lines = _lines(out)
    assert {x["wave"] for x in lines} == {1, 2, 3, 4}, lines
    assert [x["wave"] for x in lines] == sorted(x["wave"] for x in lines)  # one after the other
    assert all(len(x["in_flight"]) <= 1 for x in lines)
    last = lines[-1]
    assert last["partitions_done"] == last["partitions_total"] == 4
    assert last["bytes_copied"] == last["bytes_total"] > 4 * 300 * 1000
    assert last["eta_seconds"] == 0
    assert "reassignment complete" in err and "throttle removed" in err, err
    # During the run only one partition's replicas were throttled at a time, as Kafka's tool
    # writes them (leaders: the current replicas; followers: the one being added).
    assert seen, "no throttle seen while moving"
    for found in seen:
        follower = found.get("follower.replication.throttled.replicas", "")
        assert follower.count(":") == 1, found
    assert {f["follower.replication.throttled.replicas"] for f in seen} <= {
        "0:2", "1:3", "2:3", "3:1",
    }  # fmt: skip
    # Afterwards: the plan, full ISRs, every record, no throttle anywhere.
    assert cluster.replicas(name) == {0: [2], 1: [3], 2: [3], 3: [1]}
    wait_for(lambda: cluster.isr_full(name), "full ISRs", 30)
    assert cluster.count(name) == 1200
    assert cluster.no_throttle_left(name)


def test_ctrl_c_with_yes_cancels_the_wave_and_removes_throttles(
    cluster: Cluster, tmp_path: Path, cleanup: list[str]
) -> None:
    name = cluster.create([[1]])
    cleanup.append(name)
    cluster.produce(name, {0: 3000})  # 3 MB at 10 kB/s: minutes
    plan = cluster.plan(tmp_path / "plan.json", {(name, 0): [2]})
    proc = cluster.start(
        "partitions", "reassign", "execute", "-f", str(plan), "--throttle", "10000", "--wait",
        "--yes", "--interval", "0.2s", "--execute", "-o", "jsonl",
    )  # fmt: skip
    wait_for(lambda: [x["topic"] for x in cluster.ongoing()] == [name], "the move in flight", 30)
    wait_for(lambda: cluster.configs("broker", "2", RATES) != {}, "the throttle set", 30)
    assert cluster.configs("topic", name, REPLICAS) == {
        "leader.replication.throttled.replicas": "0:1",
        "follower.replication.throttled.replicas": "0:2",
    }
    assert cluster.configs("broker", "3", RATES) == {}  # not involved: not throttled
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "cancelled 1 move(s)" in err and "--resume" in err, err
    assert cluster.ongoing() == []
    wait_for(lambda: cluster.replicas(name) == {0: [1]}, "replicas back to the original", 30)
    assert cluster.no_throttle_left(name)
    assert cluster.count(name) == 3000


def test_ctrl_c_without_a_terminal_leaves_the_move_running_with_its_throttle(
    cluster: Cluster, tmp_path: Path, cleanup: list[str]
) -> None:
    name = cluster.create([[1]])
    cleanup.append(name)
    cluster.produce(name, {0: 3000})
    plan = cluster.plan(tmp_path / "plan.json", {(name, 0): [3]})
    proc = cluster.start(
        "partitions", "reassign", "execute", "-f", str(plan), "--throttle", "10000", "--wait",
        "--interval", "0.2s", "--execute",
    )  # fmt: skip
    wait_for(lambda: [x["topic"] for x in cluster.ongoing()] == [name], "the move in flight", 30)
    wait_for(lambda: cluster.configs("topic", name, REPLICAS) != {}, "the throttle set", 30)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "left running" in err and "throttle stays" in err and "--resume" in err, err
    assert [x["topic"] for x in cluster.ongoing()] == [name]
    assert cluster.configs("topic", name, REPLICAS) == {
        "leader.replication.throttled.replicas": "0:1",
        "follower.replication.throttled.replicas": "0:3",
    }
    # verify: in progress, the throttle stays (exit 3).
    r = cluster.kctl("partitions", "reassign", "verify", "-f", str(plan), "-o", "json")
    assert r.code == 3 and json.loads(r.stdout)[0]["status"] == "in-progress", r
    assert cluster.configs("broker", "3", RATES) != {}


def test_verify_resume_finishes_a_half_done_plan(
    cluster: Cluster, tmp_path: Path, cleanup: list[str]
) -> None:
    name = cluster.create([[1, 2], [2, 3], [3, 1]])
    cleanup.append(name)
    cluster.produce(name, {0: 200, 1: 200, 2: 200})
    target = {(name, 0): [3, 2], (name, 1): [1, 3], (name, 2): [2, 1]}
    plan = cluster.plan(tmp_path / "plan.json", target)
    # One wave only, without --wait.
    r = cluster.kctl(
        "partitions", "reassign", "execute", "-f", str(plan), "--max-concurrent", "1",
        "--throttle", "50MB", "--execute", "-o", "json",
    )  # fmt: skip
    assert r.code == 0 and "wave 1 of 3 submitted" in r.stderr and "--resume" in r.stderr, r
    assert [(x["topic"], x["partition"], x["status"]) for x in json.loads(r.stdout)] == [
        (name, 0, "accepted")
    ]
    wait_for(lambda: cluster.replicas(name)[0] == [3, 2], "wave 1 done", 60)
    wait_for(lambda: cluster.ongoing() == [], "nothing in flight", 60)

    # verify (from the cluster alone): 1 complete, 2 not applied; nothing in flight, so the
    # leftover throttle of wave 1 is removed.
    r = cluster.kctl("partitions", "reassign", "verify", "-f", str(plan), "-o", "json")
    assert r.code == 3, r
    assert [x["status"] for x in json.loads(r.stdout)] == ["complete", "not-applied", "not-applied"]
    assert "--resume" in r.stderr
    assert cluster.no_throttle_left(name)

    r = cluster.kctl(
        "partitions", "reassign", "verify", "-f", str(plan), "--resume", "--max-concurrent", "1",
        "--throttle", "50MB", "--interval", "0.2s", "-o", "json",
    timeout=120)  # fmt: skip
    assert r.code == 0, r
    assert "2 partition move(s) in 2 wave(s)" in r.stderr, r
    assert [x["status"] for x in json.loads(r.stdout)] == ["complete"] * 3
    assert cluster.replicas(name) == {0: [3, 2], 1: [1, 3], 2: [2, 1]}
    assert cluster.no_throttle_left(name)
    assert cluster.count(name) == 600
    # Once done, verify says so and resume has nothing to do.
    r = cluster.kctl("partitions", "reassign", "verify", "-f", str(plan), "--resume")
    assert r.code == 0 and "already done" in r.stderr, r


def test_a_stalled_move_is_named_and_keeps_its_throttle(
    cluster: Cluster, tmp_path: Path, cleanup: list[str]
) -> None:
    # A throttle of 1 byte/s lets the new replica fetch once, then nothing: the copy stalls (as
    # when the adding replica's broker is down, without stopping a broker of the shared cluster).
    name = cluster.create([[1]])
    cleanup.append(name)
    cluster.produce(name, {0: 3000})
    plan = cluster.plan(tmp_path / "plan.json", {(name, 0): [2]})
    r = cluster.kctl(
        "partitions", "reassign", "execute", "-f", str(plan), "--throttle", "1", "--wait",
        "--stall-timeout", "4s", "--interval", "0.3s", "--execute", "-o", "jsonl",
    timeout=120)  # fmt: skip
    assert r.code == 1, r
    err = [line for line in r.stderr.splitlines() if line.startswith("kctl: error")]
    assert err and f"no progress for 4s on {name}-0" in err[0] and "verify --resume" in err[0], r
    last = _lines(r.stdout)[-1]
    assert last["stuck"] == [f"{name}-0"] and last["partitions_done"] == 0
    assert last["bytes_copied"] < last["bytes_total"]
    # The move stays submitted, with its throttle.
    assert [(x["topic"], x["partition"]) for x in cluster.ongoing()] == [(name, 0)]
    assert cluster.configs("topic", name, REPLICAS) == {
        "leader.replication.throttled.replicas": "0:1",
        "follower.replication.throttled.replicas": "0:2",
    }
    assert cluster.configs("broker", "3", RATES) == {}


def test_status_lists_a_move_started_by_kafkas_tool(
    cluster: Cluster,
    tmp_path: Path,
    cleanup: list[str],
    kafka_tool: Callable[..., Any],
) -> None:
    name = cluster.create([[1]])
    cleanup.append(name)
    cluster.produce(name, {0: 3000})
    plan = cluster.plan(tmp_path / "plan.json", {(name, 0): [2]})
    kafka_tool(
        "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
        "--bootstrap-server", cluster.bootstrap, "--execute",
        "--reassignment-json-file", str(plan), "--throttle", "10000",
    )  # fmt: skip
    wait_for(lambda: [x["topic"] for x in cluster.ongoing()] == [name], "the move in flight", 30)

    def mine(r: Run) -> dict[str, Any]:
        assert r.code == 0, r
        rows = [x for x in json.loads(r.stdout) if x["topic"] == name]
        assert len(rows) == 1, r
        return rows[0]  # type: ignore[no-any-return]

    first = mine(cluster.kctl("partitions", "reassign", "status", "-o", "json"))
    assert (first["kind"], first["log_dir"]) == ("replicas", None)
    assert (first["adding_replicas"], first["removing_replicas"]) == ([2], [1])
    assert sorted(first["replicas"]) == [1, 2]
    assert first["bytes_total"] > 3_000_000
    assert 0 <= first["bytes_copied"] < first["bytes_total"]
    assert first["throttled"] is True
    assert first["age"] == "unknown"  # another tool's move, seen for the first time
    time.sleep(1.1)
    r = cluster.kctl("partitions", "reassign", "status")
    assert "broker 1: " in r.stderr and "throttled.rate=10000" in r.stderr, r
    again = mine(cluster.kctl("partitions", "reassign", "status", "-o", "json"))
    assert again["age"] != "unknown" and again["age_seconds"] >= 1
    assert again["first_seen"]

    r = cluster.kctl("partitions", "reassign", "cancel", "-f", str(plan), "--execute")
    assert r.code == 0, r
    wait_for(lambda: cluster.ongoing() == [], "no move", 30)
    assert cluster.no_throttle_left(name)
    r = cluster.kctl("partitions", "reassign", "status", "-o", "json")
    assert r.code == 0 and [x for x in json.loads(r.stdout) if x["topic"] == name] == [], r


def _where(cluster: Cluster, topic: str) -> dict[tuple[int, int], list[tuple[str, bool]]]:
    """(partition, broker) -> [(log dir, future)] from kctl cluster log-dirs -o json."""
    r = cluster.kctl("cluster", "log-dirs", "-o", "json")
    assert r.code == 0, r
    out: dict[tuple[int, int], list[tuple[str, bool]]] = {}
    for d in json.loads(r.stdout):
        for rep in d["replicas"]:
            if rep["topic"] == topic:
                out.setdefault((rep["partition"], d["broker"]), []).append(
                    (d["log_dir"], rep["future"])
                )
    return out


def _dirs_of(cluster: Cluster, broker: int) -> list[str]:
    r = cluster.kctl("cluster", "log-dirs", "--broker", str(broker), "-o", "json")
    assert r.code == 0, r
    return sorted(d["log_dir"] for d in json.loads(r.stdout))


def test_a_plan_with_log_dirs_moves_each_replica_into_its_dir(
    cluster: Cluster, tmp_path: Path, cleanup: list[str], dir_moves: None
) -> None:
    dirs1, dirs2 = _dirs_of(cluster, 1), _dirs_of(cluster, 2)
    assert len(dirs1) >= 2, "the session cluster's brokers have two log dirs each (local up)"
    name = cluster.create([[1], [1]])
    cleanup.append(name)
    cluster.produce(name, {0: 2000, 1: 500})
    now = _where(cluster, name)
    here = now[(0, 1)][0][0]
    there = next(d for d in dirs1 if d != here)
    # Partition 0 stays on broker 1 but changes dir; partition 1 moves to broker 2's last dir.
    doc = {
        "version": 1,
        "partitions": [
            {"topic": name, "partition": 0, "replicas": [1], "log_dirs": [there]},
            {"topic": name, "partition": 1, "replicas": [2], "log_dirs": [dirs2[-1]]},
        ],
    }
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(doc))
    r = cluster.kctl("partitions", "reassign", "verify", "-f", str(plan), "-o", "json")
    assert r.code == 3, r
    assert [x["status"] for x in json.loads(r.stdout)] == ["not-applied (log dir)", "not-applied"]

    r = cluster.kctl(
        "partitions", "reassign", "execute", "-f", str(plan), "--wait", "--interval", "0.3s",
        "--dir-throttle", "50MB", "--execute", "-o", "jsonl",
    timeout=120)  # fmt: skip
    assert r.code == 0, r
    assert "throttle removed" in r.stderr, r.stderr  # the log-dir rate set on brokers 1 and 2
    assert cluster.no_throttle_left(name)
    lines = _lines(r.stdout)
    assert lines[0]["phase"] == "replicas" and lines[-1]["phase"] == "log-dirs", lines
    assert lines[-1]["partitions_done"] == lines[-1]["partitions_total"] == 2
    where = _where(cluster, name)
    assert where[(0, 1)] == [(there, False)]
    assert where[(1, 2)] == [(dirs2[-1], False)]
    assert (1, 1) not in where
    r = cluster.kctl("partitions", "reassign", "verify", "-f", str(plan), "-o", "json")
    assert r.code == 0 and [x["status"] for x in json.loads(r.stdout)] == ["complete"] * 2, r
    assert cluster.count(name) == 2500


def _a_dir_move_plan(
    cluster: Cluster, tmp_path: Path, cleanup: list[str]
) -> tuple[str, str, str, Path]:
    """A topic of one partition on broker 1 with 3 MB (half a minute at 100 kB/s), and a plan
    moving it to broker 1's other log dir: (topic, its dir, the other dir, the plan file)."""
    dirs1 = _dirs_of(cluster, 1)
    assert len(dirs1) >= 2, "the session cluster's brokers have two log dirs each (local up)"
    name = cluster.create([[1]])
    cleanup.append(name)
    cluster.produce(name, {0: 3000})
    here = _where(cluster, name)[(0, 1)][0][0]
    there = next(d for d in dirs1 if d != here)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": name, "partition": 0, "replicas": [1], "log_dirs": [there]},
    ]}))  # fmt: skip
    return name, here, there, plan


def _wait_copying(cluster: Cluster, name: str, there: str) -> None:
    wait_for(
        lambda: (there, True) in _where(cluster, name).get((0, 1), []),
        "the future log in the other dir",
        30,
    )


def _assert_copy_dropped(cluster: Cluster, name: str, here: str) -> None:
    """The replica alone in its old dir (no future log), no throttle left, every record."""
    wait_for(
        lambda: _where(cluster, name).get((0, 1)) == [(here, False)],
        "the replica alone in its old dir, no future log",
        30,
    )
    assert cluster.no_throttle_left(name)
    assert cluster.count(name) == 3000


def test_dir_throttle_holds_a_log_dir_move_and_ctrl_c_cancels_it(
    cluster: Cluster, tmp_path: Path, cleanup: list[str], dir_moves: None
) -> None:
    """--dir-throttle sets the log-dir move rate on the broker moving a replica between its
    dirs (read back with DescribeConfigs while the future log is copied); Ctrl-C with --yes
    sends the replica back to the dir it is in, so the broker drops the future log, and the
    rate is removed."""
    name, here, there, plan = _a_dir_move_plan(cluster, tmp_path, cleanup)
    proc = cluster.start(
        "partitions", "reassign", "execute", "-f", str(plan), "--dir-throttle", "100kB",
        "--wait", "--yes", "--interval", "0.2s", "--execute", "-o", "jsonl",
    )  # fmt: skip
    try:
        _wait_copying(cluster, name, there)
        assert cluster.configs("broker", "1", (DIR_RATE,)) == {DIR_RATE: "100000"}
        assert cluster.configs("broker", "2", (DIR_RATE,)) == {}  # no move there
        # status lists the copy as a log-dir move, throttled by its broker's rate
        r = cluster.kctl("partitions", "reassign", "status", "-o", "json")
        assert r.code == 0, r
        rows = [x for x in json.loads(r.stdout) if x["topic"] == name]
        assert len(rows) == 1, rows
        row = rows[0]
        assert (row["kind"], row["broker"], row["from_dir"], row["log_dir"]) == (
            "log-dir", 1, here, there,
        ), row  # fmt: skip
        assert row["bytes_total"] > 3_000_000 and 0 <= row["bytes_copied"] < row["bytes_total"]
        assert row["throttled"] is True
        assert row["age"] != "unknown" and row["first_seen"], row  # kctl submitted it
        assert "1 log-dir move(s)" in r.stderr, r.stderr
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, (out, err)
    assert "cancelled 1 move(s)" in err, err
    _assert_copy_dropped(cluster, name, here)


def test_execute_removes_only_the_broker_rates_it_set(
    cluster: Cluster, tmp_path: Path, cleanup: list[str]
) -> None:
    """A rate another tool set on a broker the plan never touches outlives the plan (Kafka's
    verify would remove it); the rates execute set on the moving brokers are gone."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

    name = cluster.create([[1]])
    cleanup.append(name)
    cluster.produce(name, {0: 300})
    other = ConfigResource("broker", "3")
    other.add_incremental_config(
        ConfigEntry(RATES[0], "12345678", incremental_operation=AlterConfigOpType.SET)
    )
    for f in cluster.admin.incremental_alter_configs([other]).values():
        f.result(timeout=20)
    plan = cluster.plan(tmp_path / "plan.json", {(name, 0): [2]})
    r = cluster.kctl(
        "partitions", "reassign", "execute", "-f", str(plan), "--throttle", "50MB", "--wait",
        "--interval", "0.2s", "--execute",
    timeout=120)  # fmt: skip
    assert r.code == 0 and "throttle removed" in r.stderr, r
    assert cluster.replicas(name) == {0: [2]}
    assert cluster.configs("broker", "3", RATES) == {RATES[0]: "12345678"}
    assert cluster.configs("broker", "1", RATES) == cluster.configs("broker", "2", RATES) == {}
    assert cluster.configs("topic", name, REPLICAS) == {}


def test_cancel_stops_a_log_dir_copy_started_by_kafkas_tool(
    cluster: Cluster,
    tmp_path: Path,
    cleanup: list[str],
    kafka_tool: Callable[..., Any],
    dir_moves: None,
) -> None:
    """kafka-reassign-partitions.sh moves a replica between broker 1's log dirs under its
    --replica-alter-log-dirs-throttle; `cancel --file` lists the copy (kind log-dir), and with
    --execute sends the replica back to its dir: the future log is dropped, the rate removed."""
    name, here, there, plan = _a_dir_move_plan(cluster, tmp_path, cleanup)
    kafka_tool(
        "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
        "--bootstrap-server", cluster.bootstrap, "--execute",
        "--reassignment-json-file", str(plan), "--replica-alter-log-dirs-throttle", "100000",
    )  # fmt: skip
    _wait_copying(cluster, name, there)
    assert cluster.configs("broker", "1", (DIR_RATE,)) == {DIR_RATE: "100000"}
    r = cluster.kctl("partitions", "reassign", "cancel", "-f", str(plan), "-o", "json")
    assert r.code == 0 and "1 log-dir move(s) to cancel" in r.stderr, r
    rows = json.loads(r.stdout)
    assert [(x["kind"], x["broker"], x["log_dir"]) for x in rows] == [("log-dir", 1, there)]
    assert (there, True) in _where(cluster, name)[(0, 1)]  # the dry run changed nothing

    r = cluster.kctl("partitions", "reassign", "cancel", "-f", str(plan), "--execute", "-o", "json")
    assert r.code == 0, r
    assert [(x["broker"], x["status"]) for x in json.loads(r.stdout)] == [(1, "accepted")]
    _assert_copy_dropped(cluster, name, here)


@pytest.mark.parametrize("scope", ["file", "all"])
def test_cancel_with_nothing_in_flight_still_removes_the_throttles(
    cluster: Cluster, tmp_path: Path, cleanup: list[str], scope: str
) -> None:
    """A throttled plan executed without --wait leaves its throttle once the move is done
    (verify would remove it). `cancel --file plan --execute` (or `--all --execute`) with no move
    in flight removes it anyway, from every broker and the plan's topics, as Kafka's --cancel
    does; it used to return early ("0 ongoing reassignment(s) to cancel") and leave all of it."""
    name = cluster.create([[1], [1]])
    cleanup.append(name)
    cluster.produce(name, {0: 50, 1: 50})
    plan = cluster.plan(tmp_path / "plan.json", {(name, 0): [2], (name, 1): [3]})
    r = cluster.kctl("partitions", "reassign", "execute", "-f", str(plan), "--throttle", "50MB",
                     "--execute")  # fmt: skip
    assert r.code == 0, r
    wait_for(lambda: cluster.replicas(name) == {0: [2], 1: [3]} and not cluster.ongoing(),
             "the moves done", 60, 0.2)  # fmt: skip
    assert cluster.configs("topic", name, REPLICAS) != {}
    assert any(cluster.configs("broker", str(b), RATES) for b in (1, 2, 3))
    args = ["--file", str(plan)] if scope == "file" else ["--all"]
    dry = cluster.kctl("partitions", "reassign", "cancel", *args)
    assert dry.code == 0 and "remove the replication throttles" in dry.stderr, dry
    assert cluster.configs("topic", name, REPLICAS) != {}  # the dry run changed nothing
    r = cluster.kctl("partitions", "reassign", "cancel", *args, "--execute")
    assert r.code == 0, r
    assert "nothing in flight" in r.stderr or "no reassignment" in r.stderr, r
    assert "throttle removed" in r.stderr, r
    assert cluster.no_throttle_left(name)
