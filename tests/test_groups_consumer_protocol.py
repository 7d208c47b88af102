"""kctl groups on groups of the new consumer protocol (KIP-848, ``group.protocol=consumer``),
with real confluent-kafka consumers: DescribeGroups answers Dead for them, so kctl must go
through ConsumerGroupDescribe to see their state, members and assignments."""

from __future__ import annotations

import json
import time
from contextlib import contextmanager

import pytest
from conftest import on_tansu, unique, wait_for

pytestmark = pytest.mark.skipif(
    on_tansu(), reason="the Tansu broker has no consumer group protocol (KIP-848)"
)


@pytest.fixture(autouse=True)
def _protocol_generally_available(broker_apis: dict[int, tuple[int, int]]) -> None:
    """Kafka 3.x advertises ConsumerGroupHeartbeat v0 but leaves the protocol off by default (a
    preview); 4.0 made it generally available with v1."""
    if broker_apis.get(68, (0, -1))[1] < 1:
        pytest.skip("the broker's consumer group protocol (KIP-848) is a pre-4.0 preview")


PER_PARTITION = 10  # records in each of the 2 partitions


@pytest.fixture(scope="module")
def topic(bootstrap) -> str:
    """A topic of 2 partitions x 10 records (one record per batch); each test has its group."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    name = unique("kip848")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, 2, 1)])[name].result(timeout=30)
    wait_for(lambda: name in admin.list_topics(timeout=10).topics, f"topic {name} visible")
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for i in range(PER_PARTITION):
        for part in range(2):
            p.produce(name, b"v%d" % i, partition=part)
            p.flush(10)
    return name


@contextmanager
def consumer_protocol_member(bootstrap: str, topic: str, group: str, commit: dict[int, int]):
    """A live member of ``group`` on the consumer protocol, subscribed to ``topic`` and owning
    both partitions, that committed ``commit`` (partition -> offset). Closed on exit (it leaves
    the group at once: KIP-848 members send a leave heartbeat)."""
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "group.protocol": "consumer",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    try:
        c.subscribe([topic])
        deadline = time.monotonic() + 30
        while len(c.assignment()) < 2 and time.monotonic() < deadline:
            c.poll(0.2)
        assert len(c.assignment()) == 2, f"the consumer got {c.assignment()} of {topic}"
        c.commit(
            offsets=[TopicPartition(topic, p, o) for p, o in commit.items()], asynchronous=False
        )
        yield c
    finally:
        c.close()


def _json(kctl, *args: str):
    r = kctl(*args, "-o", "json")
    assert r.code == 0, r
    return json.loads(r.stdout)


def _listed(kctl, group: str) -> dict | None:
    return {g["group"]: g for g in _json(kctl, "groups", "list")}.get(group)


def test_list_and_describe_show_a_consumer_protocol_group_and_its_member(kctl, bootstrap, topic):
    group = unique("cp")
    with consumer_protocol_member(bootstrap, topic, group, {0: 3, 1: 6}) as c:
        member_id = c.memberid()
        listed = _listed(kctl, group)
        assert listed is not None
        assert listed["type"] == "consumer" and listed["state"] == "Stable"
        assert listed["members"] == 1 and listed["protocol_type"] == "consumer"
        assert listed["assignor"] in ("uniform", "range") and listed["coordinator"] >= 0
        assert group in {g["group"] for g in _json(kctl, "groups", "list", "--type", "consumer")}
        assert group not in {g["group"] for g in _json(kctl, "groups", "list", "--type", "classic")}

        (state,) = _json(kctl, "groups", "describe", group, "--state")
        assert state["state"] == "Stable" and state["members"] == 1
        assert state["coordinator"] == listed["coordinator"]

        (member,) = _json(kctl, "groups", "describe", group, "--members")
        assert member["member_id"] == member_id
        assert member["assignment"] == [f"{topic}:0", f"{topic}:1"]
        assert member["partitions"] == 2 and member["host"]

        offsets = _json(kctl, "groups", "describe", group)
        assert [(r["partition"], r["current_offset"], r["lag"], r["consumer_id"])
                for r in offsets] == [(0, 3, 7, member_id), (1, 6, 4, member_id)]  # fmt: skip


def test_lag_of_a_consumer_protocol_group_names_the_owner(kctl, bootstrap, topic):
    group = unique("cplag")
    with consumer_protocol_member(bootstrap, topic, group, {0: 2, 1: 9}) as c:
        doc = _json(kctl, "groups", "lag", group)
        rows = {r["partition"]: r for r in doc["partitions"]}
        assert {p: (r["committed_offset"], r["log_end_offset"], r["lag"])
                for p, r in rows.items()} == {0: (2, 10, 8), 1: (9, 10, 1)}  # fmt: skip
        assert doc["groups"] == [
            {"group": group, "group_type": "consumer", "lag": 9, "time_lag_ms": None}
        ]
        assert {r["member_id"] for r in rows.values()} == {c.memberid()}
        assert {r["group_state"] for r in rows.values()} == {"Stable"}
        assert {r["group_type"] for r in rows.values()} == {"consumer"}
    # After the member left: Empty, the committed offsets stay, nobody owns them.
    wait_for(
        lambda: (
            {r["group_state"] for r in _json(kctl, "groups", "lag", group)["partitions"]}
            == {"Empty"}
        ),
        "the group to be Empty after its member closed",
    )
    rows = {r["partition"]: r for r in _json(kctl, "groups", "lag", group)["partitions"]}
    assert {p: (r["lag"], r["member_id"]) for p, r in rows.items()} == {
        0: (8, None),
        1: (1, None),
    }
    (state,) = _json(kctl, "groups", "describe", group, "--state")
    assert state["state"] == "Empty" and state["members"] == 0


def test_reset_is_refused_while_a_member_runs_and_works_once_it_stopped(kctl, bootstrap, topic):
    group = unique("cpreset")
    with consumer_protocol_member(bootstrap, topic, group, {0: 4, 1: 5}):
        r = kctl("groups", "reset-offsets", group, "--topic", topic, "--to-earliest", "--execute")
        assert r.code == 1, r
        assert "refusing to reset offsets" in r.stderr and "1 active member(s)" in r.stderr
        assert "state Stable" in r.stderr
        r = kctl("groups", "delete", group, "--yes")
        assert r.code == 1 and f"refusing to delete group '{group}'" in r.stderr
    wait_for(
        lambda: (_listed(kctl, group) or {}).get("state") == "Empty",
        "the group to be Empty after its member closed",
    )
    r = kctl("groups", "reset-offsets", group, "--topic", topic, "--to-earliest", "--execute",
             "-o", "json")  # fmt: skip
    assert r.code == 0, r
    assert [(row["partition"], row["current"], row["target"]) for row in json.loads(r.stdout)] \
        == [(0, 4, 0), (1, 5, 0)]  # fmt: skip
    rows = {r["partition"]: r for r in _json(kctl, "groups", "lag", group)["partitions"]}
    assert {p: (r["committed_offset"], r["lag"]) for p, r in rows.items()} == {
        0: (0, 10),
        1: (0, 10),
    }
    r = kctl("groups", "reset-offsets", group, "--topic", f"{topic}:1", "--shift-by", "+7",
             "--execute")  # fmt: skip
    assert r.code == 0, r
    assert {r["partition"]: r["current_offset"] for r in _json(kctl, "groups", "describe", group)} \
        == {0: 0, 1: 7}  # fmt: skip
    # A new member starts where the reset put the group (the broker kept the commit).
    from confluent_kafka import Consumer

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer",
                  "enable.auto.commit": False, "auto.offset.reset": "latest"})  # fmt: skip
    try:
        c.subscribe([topic])
        seen: dict[int, list[int]] = {0: [], 1: []}
        deadline = time.monotonic() + 30
        while (len(seen[0]) < 10 or len(seen[1]) < 3) and time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is not None and not m.error():
                seen[m.partition()].append(m.offset())
    finally:
        c.close()
    assert seen == {0: list(range(10)), 1: [7, 8, 9]}
    r = kctl("groups", "delete", group, "--yes")
    assert r.code == 0, r


# kctl consume as a member of a consumer protocol group: the rebalance is incremental there
# (librdkafka refuses assign() in the callbacks: "Failed to set assignment: Local: Erroneous
# state" until kctl answered with incremental_assign/incremental_unassign).
CONSUMER_PROTOCOL = ("-X", "group.protocol=consumer")


def _records(r) -> list[tuple[int, int]]:
    """(partition, offset) of each JSON line of a finished ``kctl consume -o jsonl``."""
    assert r.code == 0, r
    assert "Traceback" not in r.stderr and "error" not in r.stderr, r
    return [(d["partition"], d["offset"]) for d in map(json.loads, r.stdout.splitlines())]


def _lag(kctl, group: str) -> tuple[int, set[str], dict[int, int]]:
    """The group's total lag, its type(s) and its committed offsets, from kctl groups lag."""
    doc = _json(kctl, "groups", "lag", group)
    (total,) = doc["groups"]
    committed = {r["partition"]: r["committed_offset"] for r in doc["partitions"]}
    return total["lag"], {r["group_type"] for r in doc["partitions"]}, committed


EVERY_RECORD = sorted((p, o) for p in (0, 1) for o in range(PER_PARTITION))


def test_consume_in_a_consumer_protocol_group_reads_each_record_once_and_commits(kctl, topic):
    group = unique("cpread")
    first = _records(kctl("consume", topic, "--group", group, *CONSUMER_PROTOCOL, "-n", "7",
                          "-o", "jsonl"))  # fmt: skip
    assert len(first) == len(set(first)) == 7
    # Committed: the offset after the last record printed of each partition read (a partition
    # without a commit has no lag yet).
    ends = {p: o + 1 for p, o in sorted(first)}
    lag = sum(PER_PARTITION - end for end in ends.values())
    assert _lag(kctl, group) == (lag, {"consumer"}, ends)
    # The next run starts at the committed offsets and stops at the end: the other 13.
    rest = _records(kctl("consume", topic, "--group", group, *CONSUMER_PROTOCOL, "-o", "jsonl"))
    assert sorted(first + rest) == EVERY_RECORD
    assert _lag(kctl, group) == (0, {"consumer"}, {0: PER_PARTITION, 1: PER_PARTITION})
    # Nothing left: the run ends at once with nothing printed.
    assert _records(kctl("consume", topic, "--group", group, *CONSUMER_PROTOCOL)) == []


def test_from_overrides_the_committed_offsets_of_a_consumer_protocol_group(kctl, topic):
    """(A member that joins soon after another left waits for its partitions up to a heartbeat
    interval, group.consumer.heartbeat.interval.ms, 5 s by default: the broker computes
    assignments at most once a group.consumer.assignment.interval.ms; hence few runs here.)"""
    group = unique("cpfrom")
    read = _records(kctl("consume", topic, "--group", group, *CONSUMER_PROTOCOL, "--from", "6",
                         "-o", "jsonl"))  # fmt: skip
    assert sorted(read) == [(p, o) for p in (0, 1) for o in range(6, PER_PARTITION)]
    assert _lag(kctl, group) == (0, {"consumer"}, {0: PER_PARTITION, 1: PER_PARTITION})
    read = _records(kctl("consume", topic, "--group", group, *CONSUMER_PROTOCOL,
                         "--from", "beginning", "-n", "15", "-o", "jsonl"))  # fmt: skip
    assert len(set(read)) == 15
    ends = {p: max(o for q, o in read if q == p) + 1 for p, _ in read}
    assert _lag(kctl, group) == (
        sum(PER_PARTITION - end for end in ends.values()),
        {"consumer"},
        {**dict.fromkeys((0, 1), PER_PARTITION), **ends},
    )


def test_a_classic_group_property_beside_the_consumer_protocol_is_a_configuration_error(
    kctl, topic
):
    """librdkafka refuses session.timeout.ms, heartbeat.interval.ms and
    partition.assignment.strategy beside group.protocol=consumer (the broker owns them; kctl
    sets none of them there): one line, exit 1."""
    group = unique("cpprops")
    r = kctl("consume", topic, "--group", group, *CONSUMER_PROTOCOL, "-o", "jsonl",
             "--consumer-property", "session.timeout.ms=10000")  # fmt: skip
    assert r.code == 1 and r.stdout == "", r
    assert r.stderr.startswith("kctl: error: invalid consumer configuration (") and \
        "`session.timeout.ms` is not supported for `group.protocol=consumer`" in r.stderr, r  # fmt: skip
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def test_two_kctl_consumers_in_one_consumer_protocol_group_share_its_partitions(
    kctl, kctl_env, new_topic, bootstrap, tmp_path
):
    """Two kctl consume --follow members. The first reads the records already there from all 4
    partitions; when the second joins, the broker has the first give two partitions back
    (incrementally: it keeps reading the others), which commits what it printed of them, so the
    second starts after it. Records written then go to whoever owns their partition: together
    every record once, and SIGTERM commits the rest."""
    import signal
    import subprocess
    import sys

    from confluent_kafka import Producer

    topic, group, per = new_topic(partitions=4), unique("cptwo"), 5
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})

    def write_round() -> None:
        for part in range(4):
            for _ in range(per):
                producer.produce(topic, b"v", partition=part)
        assert producer.flush(10) == 0

    outs = [tmp_path / f"member{i}.jsonl" for i in range(2)]

    def member(out) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-m", "kctl", "consume", topic, "--group", group,
             *CONSUMER_PROTOCOL, "--follow", "-n", str(8 * per), "-o", "jsonl"],
            env=kctl_env, stdout=out.open("wb"), stderr=subprocess.PIPE,
        )  # fmt: skip

    def printed(out) -> list[tuple[int, int]]:
        return [
            (d["partition"], d["offset"]) for d in map(json.loads, out.read_text().splitlines())
        ]

    owned: dict[str, list[str]] = {}

    def split_two_by_two() -> bool:
        nonlocal owned
        r = kctl("groups", "describe", group, "--members", "-o", "json")
        members = json.loads(r.stdout) if r.code == 0 else []
        owned = {m["member_id"]: m["assignment"] for m in members}
        return len(owned) == 2 and all(len(a) == 2 for a in owned.values())

    write_round()
    procs = [member(outs[0])]
    try:
        wait_for(lambda: len(printed(outs[0])) == 4 * per, "the first member read them all")
        procs.append(member(outs[1]))
        wait_for(split_two_by_two, "two members owning two partitions each", timeout=30)
        before = len(printed(outs[0]))
        write_round()
        wait_for(
            lambda: len(printed(outs[0])) + len(printed(outs[1])) >= 8 * per,
            f"{8 * per} records printed",
        )
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            assert proc.wait(timeout=20) == 128 + signal.SIGTERM, proc.stderr.read()
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    first, second = (printed(out) for out in outs)
    assert sorted(first + second) == [(p, o) for p in range(4) for o in range(2 * per)]
    assert second  # the second member read the new records of its partitions
    # After the split each read only its own partitions.
    later = {frozenset(p for p, _ in first[before:]), frozenset(p for p, _ in second)}
    assert later == {frozenset(int(a.rsplit(":", 1)[1]) for a in v) for v in owned.values()}
    assert _lag(kctl, group) == (0, {"consumer"}, dict.fromkeys(range(4), 2 * per))
