"""Partition moves end to end on a real Apache Kafka cluster of our own, driven through the CLI as
an operator would: `kctl local up --brokers 3 --racks 3`, topics with real data (about 28 MB),
then `kctl local add-broker` twice (brokers 4 and 5, racks rack-1 and rack-2), and on it:

- Kafka's own `kafka-reassign-partitions.sh --generate` beside kctl's plan (same topics, same
  target brokers) for the scale-out and for the decommission: kctl copies no more replicas, and
  the test prints both counts;
- scale out (`generate --add-broker 4,5`, `execute --throttle 50MB --max-concurrent 2 --wait`):
  replicas within the tolerance inside each rack (rack-3 holds broker 3 alone, so rack safety
  pins a replica of every 3-replica partition there), preferred leaders within the tolerance
  over all five, every record still there, ISRs full, no throttle left on any broker or topic;
- replication factor 2 -> 3 -> 2 of a topic;
- decommission broker 2 (`generate --remove-broker 2`): exactly its replicas move, nothing left
  on it, racks distinct;
- `--balance disk --max-moves 4` onto the emptied broker (at most four copies, the spread of
  bytes on disk narrower), then `--balance leaders` (reorders only) and a preferred election:
  leaders within the tolerance, or all a broker can lead;
- a broker SIGKILLed while a throttled wave is in flight: the executor names the stuck moves
  and keeps their throttle; started again, `reassign verify --resume` completes the plan and
  removes the throttles.

The results are read back from the cluster with confluent_kafka (replicas, ISRs, records and
their digests, throttle configs), not from kctl's report of what it did. The tests run in file
order on the one cluster (each builds on the layout the previous one left); it is killed at
the end.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Run, kctl_environment, run_kctl, unique, wait_for

pytestmark = pytest.mark.skipif(
    os.environ.get("KCTL_TEST_ENGINE", "kafka") != "kafka",
    reason="needs the local Apache Kafka engine (it starts its own 5-broker cluster)",
)

TP = tuple[str, int]
TOPICS = [f"move-{i}" for i in range(5)]  # 6 partitions, RF 3, ~5 MB each
RF2 = "move-rf"  # 6 partitions, RF 2, ~2.5 MB
SLOW = "move-slow"  # 2 partitions on 1, 3, 5, ~2 MB each: the SIGKILL test's own
PARTITIONS = 6
VALUE = 1000  # bytes per record
BROKER_THROTTLES = (
    "leader.replication.throttled.rate",
    "follower.replication.throttled.rate",
    "replica.alter.log.dirs.io.max.bytes.per.second",
)
TOPIC_THROTTLES = (
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
)


class Grown:
    """The module's cluster: kctl on it (its own state dir and config), and read-backs."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.state = base / "kctl-state"
        self.env = kctl_environment(
            KCTL_CONFIG=str(base / "kctl-config.yaml"),
            KCTL_STATE_DIR=str(self.state),
            # five brokers and a controller on a small machine
            KCTL_LOCAL_BROKER_HEAP="512m",
        )
        self.bootstrap = ""
        self.admin: Any = None

    def kctl(self, *args: str, input: str | None = None, timeout: float = 120) -> Run:
        env = dict(self.env)
        if self.bootstrap:
            env["KCTL_BOOTSTRAP_SERVERS"] = self.bootstrap
        return run_kctl(env, *args, input=input, timeout=timeout)

    def ok(self, *args: str, input: str | None = None, timeout: float = 120) -> Run:
        r = self.kctl(*args, input=input, timeout=timeout)
        assert r.code == 0, (args, r)
        return r

    def connect(self, bootstrap: str) -> None:
        from confluent_kafka.admin import AdminClient

        self.bootstrap = bootstrap
        self.admin = AdminClient({"bootstrap.servers": bootstrap})

    # --- read back ---------------------------------------------------------------------------
    def metadata(self, topics: list[str]) -> dict[TP, Any]:
        md = self.admin.list_topics(timeout=15)
        return {(t, p): m for t in topics for p, m in sorted(md.topics[t].partitions.items())}

    def replicas(self, topics: list[str]) -> dict[TP, list[int]]:
        return {tp: list(m.replicas) for tp, m in self.metadata(topics).items()}

    def racks(self) -> dict[int, str | None]:
        doc = json.loads(self.ok("cluster", "describe", "-o", "json").stdout)
        return {b["broker"]: b["rack"] for b in doc["brokers"]}

    def isr_full(self, topics: list[str]) -> bool:
        return all(
            sorted(m.isrs) == sorted(m.replicas) and m.leader >= 0
            for m in self.metadata(topics).values()
        )

    def records(self, topics: list[str]) -> dict[TP, tuple[int, str]]:
        """Per partition: the number of records from the start to the high watermark and a
        digest of their offsets, keys and values."""
        from confluent_kafka import Consumer, TopicPartition

        c = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": unique("count"),
                "enable.auto.commit": False,
                "enable.partition.eof": True,
            }
        )
        try:
            ends: dict[TP, int] = {}
            for t in topics:
                for p in range(len(self.admin.list_topics(t, timeout=15).topics[t].partitions)):
                    lo, hi = c.get_watermark_offsets(TopicPartition(t, p), timeout=15)
                    assert lo == 0, (t, p, lo)
                    ends[(t, p)] = hi
            digests = {tp: hashlib.sha256() for tp in ends}
            counts: Counter[TP] = Counter()
            todo = {tp for tp, hi in ends.items() if hi > 0}
            c.assign([TopicPartition(t, p, 0) for t, p in sorted(todo)])
            deadline = time.monotonic() + 180
            while todo and time.monotonic() < deadline:
                for m in c.consume(10000, 0.5):
                    tp = (m.topic(), m.partition())
                    if m.error() is not None:
                        continue
                    if m.offset() < ends[tp]:
                        counts[tp] += 1
                        digests[tp].update(b"%d|%s|%s" % (m.offset(), m.key() or b"", m.value()))
                    if m.offset() + 1 >= ends[tp]:
                        todo.discard(tp)
            assert not todo, f"not read to the end within 180 s: {sorted(todo)[:5]}"
            return {tp: (counts[tp], digests[tp].hexdigest()) for tp in ends}
        finally:
            c.close()

    def throttles_left(self) -> dict[str, dict[str, str]]:
        """Every throttle config set on a broker or a topic of the cluster (dynamic values)."""
        from confluent_kafka.admin import ConfigResource, ConfigSource

        md = self.admin.list_topics(timeout=15)
        calls = [[ConfigResource("broker", str(b))] for b in sorted(md.brokers)]  # one a call
        calls.append([ConfigResource("topic", t) for t in sorted(md.topics)])
        own = {ConfigSource.DYNAMIC_BROKER_CONFIG.value, ConfigSource.DYNAMIC_TOPIC_CONFIG.value}
        left: dict[str, dict[str, str]] = {}
        for resources in calls:
            for res, fut in self.admin.describe_configs(resources, request_timeout=20).items():
                broker = res.restype == ConfigResource.Type.BROKER
                names = BROKER_THROTTLES if broker else TOPIC_THROTTLES
                found = {
                    n: e.value
                    for n, e in fut.result(timeout=30).items()
                    if n in names and e.value and int(getattr(e.source, "value", e.source)) in own
                }
                if found:
                    left[f"{'broker' if broker else 'topic'} {res.name}"] = found
        return left

    def ongoing(self) -> set[TP]:
        doc = json.loads(self.ok("partitions", "reassign", "list", "-o", "json").stdout)
        rows = doc if isinstance(doc, list) else doc.get("reassignments", [])
        return {(r["topic"], r["partition"]) for r in rows}

    # --- plans -------------------------------------------------------------------------------
    def generate(self, name: str, *args: str) -> tuple[Path, dict[TP, list[int]], Any]:
        """``reassign generate ARGS -o json`` into a plan file; (file, plan, the document)."""
        r = self.ok("partitions", "reassign", "generate", *args, "-o", "json", timeout=180)
        doc = json.loads(r.stdout)
        path = self.base / f"{name}.json"
        path.write_text(r.stdout)
        return path, plan_of(doc), doc

    def execute(self, plan: Path, *args: str, timeout: float = 600) -> Run:
        return self.ok(
            "partitions", "reassign", "execute", "--file", str(plan), *args, "--wait",
            "--execute", timeout=timeout,
        )  # fmt: skip


def plan_of(doc: Any) -> dict[TP, list[int]]:
    """The moves of a plan document: kafka-reassign-partitions.sh's JSON, or kctl's document
    holding it under ``plan``."""
    if isinstance(doc, dict) and not isinstance(doc.get("partitions"), list):
        doc = doc.get("plan", doc)
    return {(p["topic"], p["partition"]): list(p["replicas"]) for p in doc["partitions"]}


def copied(before: dict[TP, list[int]], plan: dict[TP, list[int]]) -> int:
    """Replicas a plan copies: per partition, the brokers in its new list that hold none yet."""
    return sum(len(set(new) - set(before[tp])) for tp, new in plan.items())


def per_broker(replicas: dict[TP, list[int]]) -> Counter[int]:
    return Counter(b for rs in replicas.values() for b in rs)


def produce(g: Grown, topic: str, records: int) -> None:
    lines = "".join(
        f"{topic}-{i}\t{i:010d}{hashlib.sha256(str(i).encode()).hexdigest() * 16}"[: VALUE + 12]
        + "\n"
        for i in range(records)
    )
    g.ok("produce", topic, "-K", "\\t", "--linger-ms", "20", input=lines, timeout=300)


@pytest.fixture(scope="module")
def grown(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Grown]:
    from kctl.local import kafka_cluster

    g = Grown(tmp_path_factory.mktemp("grown"))
    try:
        up = g.kctl(
            "local", "up", "--engine", "kafka", "--port", "0", "--brokers", "3", "--racks", "3",
            "--log-dirs", "1", "-o", "json", timeout=400,
        )  # fmt: skip
        assert up.code == 0, up
        g.connect(json.loads(up.stdout)["bootstrap"])
        for t in TOPICS:
            g.ok(
                "topics", "create", t, "--partitions", str(PARTITIONS), "--replication-factor", "3"
            )
        g.ok("topics", "create", RF2, "--partitions", str(PARTITIONS), "--replication-factor", "2")
        wait_for(lambda: g.isr_full([*TOPICS, RF2]), "the topics' ISRs", 60, 0.5)
        for t in TOPICS:
            produce(g, t, 5000)
        produce(g, RF2, 2500)
        assert set(per_broker(g.replicas([*TOPICS, RF2]))) == {1, 2, 3}
        for _ in range(2):
            added = g.kctl("local", "add-broker", "-o", "json", timeout=400)
            assert added.code == 0, added
            g.connect(json.loads(added.stdout)["bootstrap"])
        assert g.racks() == {1: "rack-1", 2: "rack-2", 3: "rack-3", 4: "rack-1", 5: "rack-2"}
        yield g
    finally:
        recorded = kafka_cluster.read_state(g.state)
        if recorded is not None:
            kafka_cluster.kill_all(recorded)


ALL = [*TOPICS, RF2]


def kafka_generate(
    g: Grown, kafka_tool: Any, topics: list[str], brokers: str
) -> dict[TP, list[int]]:
    """The plan Kafka's own kafka-reassign-partitions.sh --generate proposes (rack-aware, as by
    default) for ``topics`` on ``brokers``."""
    topics_file = g.base / "topics-to-move.json"
    topics_file.write_text(json.dumps({"version": 1, "topics": [{"topic": t} for t in topics]}))
    kafka = kafka_tool(
        "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
        "--bootstrap-server", g.bootstrap, "--generate",
        "--topics-to-move-json-file", str(topics_file), "--broker-list", brokers,
    )  # fmt: skip
    proposed = kafka.stdout.split("Proposed partition reassignment configuration")[1]
    return plan_of(json.loads(proposed.strip().splitlines()[0]))


def copied_to(before: dict[TP, list[int]], plan: dict[TP, list[int]], brokers: set[int]) -> int:
    return sum(len((set(new) - set(before[tp])) & brokers) for tp, new in plan.items())


def test_kctl_copies_no_more_replicas_than_kafkas_own_generate(grown: Grown, kafka_tool):
    """Scale-out 3 -> 5 on the same topics and target brokers. Kafka's --generate deals every
    topic out afresh from a random broker, so its count varies from run to run, and it may give
    the new brokers less than their share; what it always adds is copies between the old
    brokers, which kctl never makes. So: kctl's copies all go to the new brokers, and kctl
    copies no more than Kafka unless Kafka left the new brokers with fewer replicas."""
    g = grown
    before = g.replicas(ALL)
    kafka_plan = kafka_generate(g, kafka_tool, ALL, "1,2,3,4,5")
    topic_args = [a for t in ALL for a in ("--topic", t)]
    _, kctl_plan, _ = g.generate("compare", *topic_args, "--add-broker", "4,5")
    theirs, ours = copied(before, kafka_plan), copied(before, kctl_plan)
    theirs_new, ours_new = (copied_to(before, p, {4, 5}) for p in (kafka_plan, kctl_plan))
    print(
        f"\nscale-out 3 -> 5 brokers, {len(before)} partitions: Kafka's --generate copies "
        f"{theirs} replicas ({theirs - theirs_new} of them between the old brokers), kctl's "
        f"plan {ours} ({ours - ours_new} between the old brokers): {theirs - ours} fewer"
    )
    assert ours == ours_new  # nothing moves between the old brokers
    assert ours <= theirs or theirs_new < ours_new, (ours, theirs, ours_new, theirs_new)
    # and kctl's plan is a real scale-out: both new brokers get replicas, racks distinct
    after = {**before, **kctl_plan}
    assert {4, 5} <= set(per_broker(after))
    racks = g.racks()
    assert all(len({racks[b] for b in rs}) == len(rs) for rs in after.values())
    assert g.replicas(ALL) == before  # generate changed nothing


def test_scale_out_onto_two_new_brokers_in_throttled_waves(grown: Grown):
    g = grown
    before = g.replicas(ALL)
    records = g.records(ALL)
    plan_file, plan, _ = g.generate("scale-out", "--add-broker", "4,5")
    assert plan and copied(before, plan) > 0
    r = g.execute(plan_file, "--throttle", "50MB", "--max-concurrent", "2")
    changed = sum(1 for tp, rs in plan.items() if rs != before[tp])
    m = re.search(r"plan: (\d+) partition move\(s\) in (\d+) wave\(s\)", r.stderr)
    assert m and int(m[1]) == changed and int(m[2]) == math.ceil(changed / 2), r.stderr

    after = g.replicas(ALL)
    assert {tp: after[tp] for tp in plan} == plan
    counts = per_broker(after)
    print(f"\nreplicas per broker after the scale-out: {dict(sorted(counts.items()))}")
    # 5 brokers in 3 racks: rack-3 holds broker 3 alone, so rack safety puts one replica of
    # every partition of 3 replicas there; within each rack the brokers are within the
    # tolerance (10%, or floor/ceil of the mean) of the rack's mean
    racks = g.racks()
    assert counts[3] >= sum(1 for rs in after.values() if len(rs) == 3)
    for rack in ("rack-1", "rack-2"):
        members = [b for b in range(1, 6) if racks[b] == rack]
        mean = sum(counts[b] for b in members) / len(members)
        low, high = min(mean * 0.9, math.floor(mean)), max(mean * 1.1, math.ceil(mean))
        assert all(low <= counts[b] <= high for b in members), (rack, counts, low, high)
    assert min(counts[4], counts[5]) >= min(counts[1], counts[2]) - 1  # the new ones took a share
    # preferred leaders (first replicas) are not bound by racks: within the band over all
    # five. A broker below the band may share no partition with those above it (rack-2's 2
    # and 5 never share one): the planner passes leads along a chain of partitions then.
    leaders = Counter(rs[0] for rs in after.values())
    mean = len(after) / 5
    low, high = min(mean * 0.9, math.floor(mean)), max(mean * 1.1, math.ceil(mean))
    print(f"preferred leaders per broker: {dict(sorted(leaders.items()))}")
    assert all(low <= leaders[b] <= high for b in range(1, 6)), (leaders, low, high)
    assert all(len({racks[b] for b in rs}) == len(rs) for rs in after.values())
    wait_for(lambda: g.isr_full(ALL), "full ISRs after the scale-out", 60, 0.5)
    under = g.ok("topics", "describe", "--under-replicated", "-o", "json")
    assert json.loads(under.stdout) == [], under
    assert g.records(ALL) == records
    assert g.throttles_left() == {}
    assert not g.ongoing()


def test_replication_factor_2_to_3_and_back_to_2(grown: Grown):
    g = grown
    records = g.records([RF2])
    racks = g.racks()
    for rf in (3, 2):
        plan_file, plan, _ = g.generate(f"rf{rf}", "--topic", RF2, "--replication-factor", str(rf))
        assert set(plan) == {(RF2, p) for p in range(PARTITIONS)}
        g.execute(plan_file, "--throttle", "50MB", "--max-concurrent", "3")
        now = g.replicas([RF2])
        assert all(len(rs) == rf for rs in now.values()), now
        assert all(len({racks[b] for b in rs}) == rf for rs in now.values()), now
        wait_for(lambda: g.isr_full([RF2]), f"full ISRs at replication factor {rf}", 60, 0.5)
        assert g.records([RF2]) == records
        assert g.throttles_left() == {}


def test_decommission_broker_2_leaves_nothing_on_it_and_racks_distinct(grown: Grown, kafka_tool):
    g = grown
    records = g.records(ALL)
    plan_file, plan, _ = g.generate("decommission", "--remove-broker", "2")
    before = g.replicas(ALL)
    assert copied(before, plan) == per_broker(before)[2]  # exactly broker 2's replicas move
    # Kafka's own tool, the same topics onto the remaining brokers: every replica on broker 2
    # must move in any plan, so kctl's count is the lower bound
    theirs = copied(before, kafka_generate(g, kafka_tool, ALL, "1,3,4,5"))
    print(
        f"\ndecommission of broker 2 ({per_broker(before)[2]} replicas): Kafka's --generate "
        f"copies {theirs} replicas, kctl's plan {copied(before, plan)}: "
        f"{theirs - copied(before, plan)} fewer"
    )
    assert copied(before, plan) <= theirs
    g.execute(plan_file, "--throttle", "50MB", "--max-concurrent", "4")
    after = g.replicas(ALL)
    assert per_broker(after)[2] == 0, after
    racks = g.racks()
    assert all(len({racks[b] for b in rs}) == len(rs) for rs in after.values()), after
    wait_for(lambda: g.isr_full(ALL), "full ISRs after the decommission", 60, 0.5)
    assert g.records(ALL) == records
    assert g.throttles_left() == {}


def bytes_per_broker(g: Grown) -> Counter[int]:
    """Bytes of the test's topics on each broker's disk, from DescribeLogDirs (kctl cluster
    log-dirs), future logs left out."""
    doc = json.loads(g.ok("cluster", "log-dirs", "-o", "json").stdout)
    return Counter(
        {
            d["broker"]: sum(
                r["size"] for r in d["replicas"] if r["topic"] in ALL and not r.get("future")
            )
            for d in doc
        }
    )


def test_balance_disk_within_a_move_budget_then_preferred_leaders(grown: Grown):
    """After the decommission broker 2 is empty: `--balance disk --max-moves 4` copies at most
    four replicas and narrows the spread of bytes on disk (read from the brokers, not from the
    plan's report); then `--balance leaders` only reorders replica lists (nothing is copied),
    and after a preferred-leader election every broker leads within the tolerance of the mean
    (10%, rounded out to whole partitions); or, when broker 2 holds fewer partitions than the
    band's bottom, broker 2 leads all it holds and the others are within the band of the rest."""
    g = grown
    records = g.records(ALL)
    before = g.replicas(ALL)
    disk_before = bytes_per_broker(g)
    assert disk_before[2] == 0, disk_before
    plan_file, plan, _ = g.generate("disk", "--balance", "disk", "--max-moves", "4")
    assert 0 < copied(before, plan) <= 4, plan
    g.execute(plan_file, "--throttle", "50MB", "--max-concurrent", "2")
    after = g.replicas(ALL)
    assert {tp: after[tp] for tp in plan} == plan
    racks = g.racks()
    assert all(len({racks[b] for b in rs}) == len(rs) for rs in after.values()), after
    wait_for(lambda: g.isr_full(ALL), "full ISRs after the disk balance", 60, 0.5)
    assert g.records(ALL) == records
    assert g.throttles_left() == {}
    disk_after = bytes_per_broker(g)
    spread = lambda c: max(c.values()) - min(c.values())  # noqa: E731
    print(f"\nbytes per broker before {dict(disk_before)}, after {dict(disk_after)}")
    assert disk_after[2] > 0 and spread(disk_after) < spread(disk_before)

    plan_file, plan, _ = g.generate("leaders", "--balance", "leaders")
    now = g.replicas(ALL)
    assert copied(now, plan) == 0 and all(sorted(plan[tp]) == sorted(now[tp]) for tp in plan)
    planned = Counter(rs[0] for rs in {**now, **plan}.values())
    if plan:
        g.execute(plan_file)
    g.ok("partitions", "elect-leaders", "--preferred", "--all-topics", "--execute")

    def preferred() -> bool:
        return all(m.leader == m.replicas[0] for m in g.metadata(ALL).values())

    wait_for(preferred, "every partition led by its preferred replica", 60, 0.5)
    md = g.metadata(ALL)
    counts = Counter(m.leader for m in md.values())
    held = per_broker({tp: list(m.replicas) for tp, m in md.items()})
    assert counts == planned, (dict(counts), dict(planned))  # the plan's leaders, elected

    def band(mean: float) -> tuple[int, int]:  # 10%, rounded out to whole partitions
        return math.floor(min(mean * 0.9, math.floor(mean))), math.ceil(max(mean * 1.1, mean))

    lo, hi = band(len(md) / 5)
    others = (1, 3, 4, 5)
    if held[2] >= lo:
        assert all(lo <= counts[b] <= hi for b in (2, *others)), (dict(counts), dict(held))
    else:
        # broker 2 holds fewer partitions than the band's bottom (the budget gave it at most
        # four), so it leads all of them and the others share the rest within the band of
        # their own mean: the whole band is out of reach (CI once had broker 2 holding 3 of
        # 36: 3 + 4 x 8 < 36, and 9, 8, 8, 8 is the best the others can do)
        assert counts[2] == held[2], (dict(counts), dict(held))
        lo, hi = band((len(md) - held[2]) / 4)
        assert all(lo <= counts[b] <= hi for b in others), (dict(counts), dict(held), lo, hi)


def test_a_broker_killed_mid_wave_then_verify_resume_finishes_the_plan(grown: Grown):
    g = grown
    # its own topic, placed on 1, 3, 5 (racks 1, 3, 2): the plan moves each partition's rack-2
    # replica from broker 5 to broker 2 (rack-safe), throttled to 100 kB/s so the wave (2 x
    # 2 MB) is in flight when broker 2 dies
    g.ok("topics", "create", SLOW, "--replica-assignment", "1:3:5,3:5:1")
    wait_for(lambda: g.isr_full([SLOW]), "the slow topic's ISRs", 60, 0.5)
    produce(g, SLOW, 4000)
    records = g.records([SLOW])
    before = g.replicas([SLOW])
    plan = {tp: [2 if b == 5 else b for b in rs] for tp, rs in sorted(before.items())}
    assert plan == {(SLOW, 0): [1, 3, 2], (SLOW, 1): [3, 2, 1]}, before
    plan_file = g.base / "slow.json"
    plan_file.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": rs} for (t, p), rs in sorted(plan.items())
    ]}))  # fmt: skip
    env = {**g.env, "KCTL_BOOTSTRAP_SERVERS": g.bootstrap}
    args = [sys.executable, "-m", "kctl", "partitions", "reassign", "execute", "--file",
            str(plan_file), "--throttle", "100KB", "--max-concurrent", "2", "--wait",
            "--stall-timeout", "20s", "--interval", "0.5s", "-o", "jsonl", "--execute"]  # fmt: skip
    run = subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        wait_for(lambda: g.ongoing() >= set(plan), "the wave in flight", 60, 0.3)
        assert f"topic {SLOW}" in g.throttles_left(), "no throttle while the wave is in flight"
        g.ok("local", "kill-broker", "2")
        # status right away, with broker 2 dead (not yet fenced: still in the metadata): the
        # moves are listed, bytes copied to broker 2 unknown, broker 2 named (it failed for
        # ~10 s with "KafkaConnectionError: 111 ECONNREFUSED")
        st = g.kctl("partitions", "reassign", "status", "-o", "json")
        assert st.code == 0, st
        rows = {(r["topic"], r["partition"]): r for r in json.loads(st.stdout)}
        assert set(plan) <= set(rows), rows
        assert all(rows[tp]["bytes_copied"] is None for tp in plan), rows
        assert "broker(s) 2 did not answer" in st.stderr, st
        # the executor sees no progress and stops, naming the stuck moves, throttle kept for them
        out, err = run.communicate(timeout=300)
        assert run.returncode == 1, (out, err)
        assert f"{SLOW}-0" in err and f"{SLOW}-1" in err, err
        # its progress never went backwards when broker 2 died (the bytes broker 2 had copied
        # were read as 0 once it stopped answering)
        copied_seen = [json.loads(x)["bytes_copied"] for x in out.splitlines() if x.strip()]
        assert copied_seen and copied_seen == sorted(copied_seen), copied_seen
        assert "--resume" in err, err
        assert f"topic {SLOW}" in g.throttles_left()
        assert g.ongoing() >= set(plan)
    finally:
        if run.poll() is None:
            run.send_signal(signal.SIGKILL)
            run.wait(30)
    g.ok("local", "start-broker", "2", timeout=300)
    r = g.kctl(
        "partitions", "reassign", "verify", "--file", str(plan_file), "--resume",
        "--throttle", "50MB", timeout=600,
    )  # fmt: skip
    assert r.code == 0, r
    assert g.replicas([SLOW]) == plan
    wait_for(lambda: g.isr_full([SLOW]), "full ISRs after the resumed plan", 60, 0.5)
    assert g.records([SLOW]) == records
    assert g.throttles_left() == {}
    assert not g.ongoing()
