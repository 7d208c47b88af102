"""kctl groups describe beside kafka-consumer-groups.sh --describe (ConsumerGroupCommand from the
same jars) on the same live groups: a classic group and a consumer-protocol (KIP-848) group,
each with a real confluent-kafka member that consumed and committed. Offsets, members (with
--verbose's epochs and target assignments) and state (coordinator host:port) are compared
row by row; where Kafka prints '-', kctl's JSON has null."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import on_tansu, unique, wait_for

pytestmark = pytest.mark.skipif(on_tansu(), reason="the reference is Apache Kafka's own tool")

_MEMBER = textwrap.dedent(
    """
    import sys
    from confluent_kafka import Consumer
    bootstrap, topic, group, protocol = sys.argv[1:5]
    conf = {"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
            "auto.offset.reset": "earliest", "client.id": "kctl-eq-" + protocol}
    if protocol == "consumer":
        conf["group.protocol"] = "consumer"
    c = Consumer(conf)
    c.subscribe([topic])
    seen = 0
    while seen < 4:
        m = c.poll(0.5)
        if m is not None and not m.error():
            seen += 1
    c.commit(asynchronous=False)
    print("ready", flush=True)
    while True:
        c.poll(0.2)  # keep the membership alive (heartbeats) until stdin closes
        import select
        if select.select([sys.stdin], [], [], 0)[0] and not sys.stdin.readline():
            break
    c.close()
    """
)


@pytest.fixture(scope="module")
def live_groups(bootstrap: str) -> Iterator[tuple[str, dict[str, str]]]:
    """(topic, {protocol: group}): 3 partitions with 3, 2 and 0 records; one live member per
    group that read 4 records and committed."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = unique("geq")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(30)
    wait_for(lambda: topic in admin.list_topics(timeout=10).topics, "topic visible")
    p = Producer({"bootstrap.servers": bootstrap})
    for partition, n in ((0, 3), (1, 2)):
        for i in range(n):
            p.produce(topic, b"v%d" % i, partition=partition)
    p.flush(30)
    groups = {proto: unique(f"geq-{proto}") for proto in ("classic", "consumer")}
    procs = []
    try:
        for proto, group in groups.items():
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-c", _MEMBER, bootstrap, topic, group, proto],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                )
            )
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield topic, groups
    finally:
        for proc in procs:
            if proc.stdin:
                proc.stdin.close()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()


def _table(out: str) -> list[dict[str, str]]:
    lines = [ln for ln in out.splitlines() if ln.strip() and "SLF4J" not in ln]
    header = lines[0].split()
    return [dict(zip(header, ln.split(), strict=False)) for ln in lines[1:]]


def _kafka(kafka_tool: Any, bootstrap: str, group: str, *opts: str) -> str:
    return kafka_tool(
        "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
        "--bootstrap-server", bootstrap, "--describe", "--group", group, *opts,
    ).stdout  # fmt: skip


def _dash(value: Any) -> str:
    return "-" if value is None else str(value)


def _assignment(items: list[str] | None) -> str:
    """kctl's ["t:0", "t:1"] as kafka-consumer-groups.sh prints it: t:0,1."""
    if items is None:
        return "-"
    by_topic: dict[str, list[str]] = {}
    for item in items:
        topic, _, partition = item.rpartition(":")
        by_topic.setdefault(topic, []).append(partition)
    return ";".join(f"{t}:{','.join(ps)}" for t, ps in sorted(by_topic.items())) or "-"


def _stable(kctl: Any, group: str) -> None:
    def ready() -> bool:
        r = kctl("groups", "describe", group, "--members", "-o", "json")
        rows = json.loads(r.stdout) if r.code == 0 else []
        return len(rows) == 1 and rows[0]["partitions"] == 3

    wait_for(ready, f"group {group} stable with one member owning 3 partitions", 60)


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_offsets_equal_kafka_consumer_groups(kctl, kafka_tool, bootstrap, live_groups, protocol):
    topic, groups = live_groups
    group = groups[protocol]
    _stable(kctl, group)
    theirs = _table(_kafka(kafka_tool, bootstrap, group))
    r = kctl("groups", "describe", group, "-o", "json")
    assert r.code == 0, r
    ours = json.loads(r.stdout)
    assert len(ours) == len(theirs) == 3
    by_partition = {int(t["PARTITION"]): t for t in theirs}
    for row in ours:
        t = by_partition[row["partition"]]
        assert (t["GROUP"], t["TOPIC"]) == (group, topic)
        assert t["CURRENT-OFFSET"] == _dash(row["current_offset"]), (row, t)
        assert t["LOG-END-OFFSET"] == _dash(row["log_end_offset"]), (row, t)
        assert t["LAG"] == _dash(row["lag"]), (row, t)
        assert t["CONSUMER-ID"] == _dash(row["consumer_id"]), (row, t)
        assert t["HOST"] == _dash(row["host"]) and t["CLIENT-ID"] == _dash(row["client_id"])


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_members_verbose_equal_kafka_consumer_groups(
    kctl, kafka_tool, bootstrap, live_groups, protocol
):
    _, groups = live_groups
    group = groups[protocol]
    _stable(kctl, group)
    (theirs,) = _table(_kafka(kafka_tool, bootstrap, group, "--members", "--verbose"))
    r = kctl("groups", "describe", group, "--members", "-o", "json")
    assert r.code == 0, r
    (ours,) = json.loads(r.stdout)
    assert theirs["CONSUMER-ID"] == ours["member_id"]
    assert theirs["HOST"] == ours["host"] and theirs["CLIENT-ID"] == ours["client_id"]
    assert theirs["#PARTITIONS"] == str(ours["partitions"])
    assert theirs["CURRENT-ASSIGNMENT"] == _assignment(ours["assignment"])
    assert theirs["CURRENT-EPOCH"] == _dash(ours["member_epoch"])
    assert theirs["TARGET-EPOCH"] == _dash(ours["target_epoch"])
    assert theirs["TARGET-ASSIGNMENT"] == _assignment(ours["target_assignment"])
    if protocol == "consumer":
        assert ours["member_epoch"] is not None and ours["subscribed_topics"]


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_state_equal_kafka_consumer_groups(kctl, kafka_tool, bootstrap, live_groups, protocol):
    _, groups = live_groups
    group = groups[protocol]
    _stable(kctl, group)
    out = _kafka(kafka_tool, bootstrap, group, "--state")
    line = next(ln for ln in out.splitlines() if ln.startswith(group))
    m = re.match(r"(\S+)\s+(\S+)\s+\((\d+)\)\s+(\S+)\s+(\S+)\s+(\d+)", line)
    assert m, line
    r = kctl("groups", "describe", group, "--state", "-o", "json")
    assert r.code == 0, r
    (ours,) = json.loads(r.stdout)
    assert (ours["coordinator_address"], str(ours["coordinator"])) == (m[2], m[3])
    assert (_dash(ours["assignor"]), ours["state"], str(ours["members"])) == (m[4], m[5], m[6])
    assert ours["type"] == protocol
