"""Share groups (KIP-932) with Kafka's own share consumer (ConsoleShareConsumer from the same
jars: the Python clients have none) and kafka-share-groups.sh (ShareGroupCommand) as the
reference: kctl groups list/describe (--members, --state), reset-offsets, delete-offsets and
delete on the same live group; and share groups in every "all groups" lag (``groups lag
--all-groups``, ``groups lag`` with no group, the exporter) with Kafka's lag."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import on_tansu, unique, wait_for
from test_lag_exporter import serve, values  # noqa: F401 - serve: the exporter fixture

pytestmark = pytest.mark.skipif(on_tansu(), reason="Tansu has no share groups")

SHARE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleShareConsumer"
SHARE_GROUPS = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"


@pytest.fixture(scope="module")
def share_group(bootstrap: str, kafka_libs: Path, broker_apis: dict) -> Iterator[dict[str, Any]]:
    """A topic (5 records on partition 0, 3 on partition 1) and a share group, reset to the
    earliest offset by a group config set with kctl, whose share consumer read 6 records."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    if 76 not in broker_apis or 77 not in broker_apis:
        pytest.skip("the broker has no share group APIs (ShareGroupHeartbeat/Describe)")
    topic, group = unique("shared"), unique("sg")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    wait_for(lambda: topic in admin.list_topics(timeout=10).topics, "topic visible")
    p = Producer({"bootstrap.servers": bootstrap})
    for partition, n in ((0, 5), (1, 3)):
        for i in range(n):
            p.produce(topic, b"p%d-%d" % (partition, i), partition=partition)
    p.flush(30)
    java = ["java", "-Xmx256m", "-cp", f"{kafka_libs}/*"]
    yield {"topic": topic, "group": group, "java": java, "bootstrap": bootstrap}


def _run(java: list[str], *args: str, timeout: float = 90) -> str:
    proc = subprocess.run([*java, *args], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def _table(out: str) -> list[dict[str, str]]:
    lines = [ln for ln in out.splitlines() if ln.strip()]
    header = lines[0].split()
    return [dict(zip(header, ln.split(), strict=False)) for ln in lines[1:]]


def test_share_group_lifecycle_matches_kafka_share_groups(kctl, share_group):
    topic, group, java, bootstrap = (
        share_group[k] for k in ("topic", "group", "java", "bootstrap")
    )
    r = kctl("configs", "set", "--group", group, "share.auto.offset.reset=earliest")
    assert r.code == 0, r
    out = _run(java, SHARE_CONSUMER, "--bootstrap-server", bootstrap, "--topic", topic,
               "--group", group, "--max-messages", "8", "--timeout-ms", "30000")  # fmt: skip
    assert len(out.split()) == 8

    r = kctl("groups", "list", "--type", "share", "-o", "json")
    assert r.code == 0, r
    (listed,) = [g for g in json.loads(r.stdout) if g["group"] == group]
    assert listed["type"] == "share" and listed["state"] == "Empty"

    # Start offsets and lag, as kafka-share-groups.sh --describe prints them.
    theirs = _table(_run(java, SHARE_GROUPS, "--bootstrap-server", bootstrap, "--describe",
                         "--group", group))  # fmt: skip
    r = kctl("groups", "describe", group, "-o", "json")
    assert r.code == 0, r
    ours = {(x["topic"], x["partition"]): x for x in json.loads(r.stdout)}
    assert len(theirs) == len(ours) == 2
    for t in theirs:
        row = ours[(t["TOPIC"], int(t["PARTITION"]))]
        start = "-" if row["start_offset"] is None else str(row["start_offset"])
        lag = "-" if row["lag"] is None else str(row["lag"])
        assert (t["START-OFFSET"], t["LAG"]) == (start, lag), (t, row)

    # groups lag covers share groups: the start offset as the position, Kafka's LAG as the lag,
    # and with --time-lag the age of the record at the start offset (the test wrote them now).
    r = kctl("groups", "lag", group, "--time-lag", "-o", "json")
    assert r.code == 0, r
    doc = json.loads(r.stdout)
    lagged = {(x["topic"], x["partition"]): x for x in doc["partitions"]}
    assert set(lagged) == {(t["TOPIC"], int(t["PARTITION"])) for t in theirs}
    for t in theirs:
        row = lagged[(t["TOPIC"], int(t["PARTITION"]))]
        assert (str(row["committed_offset"]), str(row["lag"])) == (t["START-OFFSET"], t["LAG"])
        assert row["group_type"] == "share" and row["group_state"] == "Empty"
        assert row["time_lag_ms"] is not None and row["time_lag_ms"] >= 0
    (total,) = doc["groups"]
    assert (total["group_type"], total["lag"]) == ("share", sum(int(t["LAG"]) for t in theirs))

    # A live member: --members (--verbose) and --state as Kafka's tool shows them.
    member = subprocess.Popen(
        [*java, SHARE_CONSUMER, "--bootstrap-server", bootstrap, "--topic", topic,
         "--group", group, "--timeout-ms", "60000"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:

        def one_member() -> bool:
            r = kctl("groups", "describe", group, "--members", "-o", "json")
            rows = json.loads(r.stdout) if r.code == 0 else []
            return len(rows) == 1 and rows[0]["partitions"] == 2

        wait_for(one_member, "the share consumer to own both partitions", 60)
        (t,) = _table(_run(java, SHARE_GROUPS, "--bootstrap-server", bootstrap, "--describe",
                           "--group", group, "--members", "--verbose"))  # fmt: skip
        (m,) = json.loads(kctl("groups", "describe", group, "--members", "-o", "json").stdout)
        assert (t["CONSUMER-ID"], t["HOST"], t["CLIENT-ID"]) == (
            m["member_id"], m["host"], m["client_id"]
        )  # fmt: skip
        assert (t["#PARTITIONS"], t["MEMBER-EPOCH"]) == (
            str(m["partitions"]),
            str(m["member_epoch"]),
        )
        assert t["ASSIGNMENT"] == f"{topic}:0,1" and m["assignment"] == [f"{topic}:0", f"{topic}:1"]

        out = _run(java, SHARE_GROUPS, "--bootstrap-server", bootstrap, "--describe",
                   "--group", group, "--state", "--verbose")  # fmt: skip
        line = next(ln for ln in out.splitlines() if ln.startswith(group))
        k = re.match(r"\S+\s+(\S+)\s+\((\d+)\)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+)", line)
        assert k, line
        (s,) = json.loads(kctl("groups", "describe", group, "--state", "-o", "json").stdout)
        assert (s["coordinator_address"], str(s["coordinator"]), s["state"]) == k.group(1, 2, 3)
        assert (str(s["group_epoch"]), str(s["assignment_epoch"]), str(s["members"])) == k.group(
            4, 5, 6
        )
        assert s["type"] == "share" and s["assignor"] == "simple"
        r = kctl("groups", "delete", group, "--yes")
        assert r.code == 1 and "active member" in r.stderr, r
        for args in (("reset-offsets", group, "--topic", topic, "--to-earliest", "--execute"),
                     ("delete-offsets", group, "--topic", topic, "--yes")):  # fmt: skip
            r = kctl("groups", *args)
            assert r.code == 1 and "active member" in r.stderr, r
    finally:
        member.terminate()
        member.wait(30)

    wait_for(
        lambda: (
            json.loads(kctl("groups", "describe", group, "--state", "-o", "json").stdout)[0][
                "members"
            ]
            == 0
        ),
        "the share consumer to leave",
        60,
    )
    r = kctl("groups", "delete", group, "--yes")
    assert r.code == 0, r
    listed_now = _run(java, SHARE_GROUPS, "--bootstrap-server", bootstrap, "--list")
    assert group not in listed_now.split()


def test_share_group_start_offsets_reset_and_deleted_as_kafka_share_groups_sees_them(
    kctl, share_group
):
    topic, java, bootstrap = (share_group[k] for k in ("topic", "java", "bootstrap"))
    group = unique("sg-reset")
    assert kctl("configs", "set", "--group", group, "share.auto.offset.reset=earliest").code == 0
    out = _run(java, SHARE_CONSUMER, "--bootstrap-server", bootstrap, "--topic", topic,
               "--group", group, "--max-messages", "8", "--timeout-ms", "30000")  # fmt: skip
    assert len(out.split()) == 8

    def kafka_starts() -> dict[int, tuple[str, str]]:
        rows = _table(_run(java, SHARE_GROUPS, "--bootstrap-server", bootstrap, "--describe",
                           "--group", group))  # fmt: skip
        return {int(r["PARTITION"]): (r["START-OFFSET"], r["LAG"]) for r in rows
                if r.get("TOPIC") == topic}  # fmt: skip

    def members() -> int:
        r = kctl("groups", "describe", group, "--state", "-o", "json")
        return int(json.loads(r.stdout)[0]["members"]) if r.code == 0 else -1

    wait_for(lambda: members() == 0, "the share consumer to leave", 60)
    r = kctl("groups", "reset-offsets", group, "--topic", topic, "--to-latest", "--execute")
    assert r.code == 0, r
    assert kafka_starts() == {0: ("5", "0"), 1: ("3", "0")}
    r = kctl("groups", "reset-offsets", group, "--topic", topic, "--to-earliest", "-o", "json")
    assert r.code == 0, r
    plan = {x["partition"]: (x["current"], x["target"]) for x in json.loads(r.stdout)}
    assert plan == {0: (5, 0), 1: (3, 0)}
    assert "plan only" in r.stderr and kafka_starts() == {0: ("5", "0"), 1: ("3", "0")}

    r = kctl("groups", "reset-offsets", group, "--topic", topic, "--to-earliest", "--execute")
    assert r.code == 0, r
    assert kafka_starts() == {0: ("0", "5"), 1: ("0", "3")}
    r = kctl("groups", "reset-offsets", group, "--topic", f"{topic}:0", "--to-offset", "2",
             "--execute")  # fmt: skip
    assert r.code == 0, r
    assert kafka_starts() == {0: ("2", "3"), 1: ("0", "3")}
    # kctl's own describe agrees
    ours = json.loads(kctl("groups", "describe", group, "-o", "json").stdout)
    assert {x["partition"]: x["start_offset"] for x in ours} == {0: 2, 1: 0}

    r = kctl("groups", "delete-offsets", group, "--topic", f"{topic}:0", "--yes")
    assert r.code == 2 and "per topic" in r.stderr, r
    r = kctl("groups", "delete-offsets", group, "--topic", topic, "--yes", "-o", "json")
    assert r.code == 0, r
    assert json.loads(r.stdout) == [{"group": group, "topic": topic, "status": "deleted"}]
    assert kafka_starts() == {}


def test_share_groups_in_every_all_groups_lag_and_the_exporter(kctl, share_group, serve):  # noqa: F811
    topic, java, bootstrap = (share_group[k] for k in ("topic", "java", "bootstrap"))
    group = unique("sg-every")
    assert kctl("configs", "set", "--group", group, "share.auto.offset.reset=earliest").code == 0
    out = _run(java, SHARE_CONSUMER, "--bootstrap-server", bootstrap, "--topic", topic,
               "--group", group, "--max-messages", "6", "--timeout-ms", "30000")  # fmt: skip
    assert len(out.split()) == 6

    def kafka_lag() -> dict[tuple[str, int], tuple[int, int]]:
        rows = _table(_run(java, SHARE_GROUPS, "--bootstrap-server", bootstrap, "--describe",
                           "--group", group))  # fmt: skip
        return {(r["TOPIC"], int(r["PARTITION"])): (int(r["START-OFFSET"]), int(r["LAG"]))
                for r in rows if r.get("TOPIC") == topic}  # fmt: skip

    theirs = kafka_lag()
    assert len(theirs) == 2 and sum(lag for _s, lag in theirs.values()) > 0, theirs
    # librdkafka's ListGroups leaves share groups out: every "all groups" path lists them.
    for every in (["--all-groups"], []):
        r = kctl("groups", "lag", *every, "-o", "json")
        assert r.code == 0, r
        doc = json.loads(r.stdout)
        ours = {(x["topic"], x["partition"]): (x["committed_offset"], x["lag"])
                for x in doc["partitions"] if x["group"] == group}  # fmt: skip
        assert ours == theirs, (every, ours, theirs)
        (total,) = [g for g in doc["groups"] if g["group"] == group]
        assert (total["group_type"], total["lag"]) == ("share", sum(v for _s, v in theirs.values()))
    exporter = serve()  # every group
    s = exporter.wait_collections(1)
    served = {(dict(ls)["topic"], int(dict(ls)["partition"])): v
              for (n, ls), v in s.items()
              if n == "kafka_consumergroup_group_lag" and dict(ls)["group"] == group}  # fmt: skip
    assert served == {tp: float(lag) for tp, (_s, lag) in theirs.items()}
    assert values(s, "kafka_consumergroup_group_sum_lag", group=group, group_type="share") == [
        float(sum(lag for _s, lag in theirs.values()))
    ]
    assert exporter.stop().code == 0
    assert kafka_lag() == theirs  # the group did not move meanwhile
