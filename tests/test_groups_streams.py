"""Streams groups (KIP-1071) with a real Kafka Streams application on the streams protocol
(tests/java/StreamsPassThrough.java, compiled here against the cluster's own jars) and
kafka-streams-groups.sh (StreamsGroupCommand) as the reference: kctl groups list, describe
(offsets, --members, --state), reset-offsets, delete-offsets and delete on the same group."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import on_tansu, unique, wait_for

pytestmark = pytest.mark.skipif(on_tansu(), reason="Tansu has no streams groups")

STREAMS_GROUPS = "org.apache.kafka.tools.streams.StreamsGroupCommand"
SOURCE = Path(__file__).parent / "java" / "StreamsPassThrough.java"


@pytest.fixture(scope="module")
def streams_app(
    bootstrap: str, kafka_libs: Path, broker_apis: dict, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """Input (5 records on partition 0, 3 on partition 1) and output topics, and a Streams
    application (group = application id) running over them for up to 3 minutes."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    if 88 not in broker_apis or 89 not in broker_apis:
        pytest.skip("the broker has no streams group APIs (StreamsGroupHeartbeat/Describe)")
    javac = shutil.which("javac")
    if javac is None or not list(kafka_libs.glob("kafka-streams-*.jar")):
        pytest.skip("needs javac (a JDK) and the kafka-streams jar")
    work = tmp_path_factory.mktemp("streams-app")
    subprocess.run([javac, "-cp", f"{kafka_libs}/*", "-d", str(work), str(SOURCE)], check=True,
                   capture_output=True, timeout=120)  # fmt: skip
    source, sink, group = unique("s-in"), unique("s-out"), unique("sapp")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.create_topics([NewTopic(source, 2, 1), NewTopic(sink, 2, 1)]).values():
        f.result(30)
    wait_for(lambda: source in admin.list_topics(timeout=10).topics, "topic visible")
    p = Producer({"bootstrap.servers": bootstrap})
    for partition, n in ((0, 5), (1, 3)):
        for i in range(n):
            p.produce(source, b"r%d-%d" % (partition, i), partition=partition)
    p.flush(30)
    java = ["java", "-Xmx256m", "-cp", f"{kafka_libs}/*"]
    app = subprocess.Popen(
        [*java[:-1], f"{kafka_libs}/*:{work}", "StreamsPassThrough", bootstrap, group, source,
         sink, str(work / "state"), "180000"],
        stdout=subprocess.DEVNULL, stderr=open(work / "app.log", "wb"),  # noqa: SIM115
    )  # fmt: skip
    try:
        yield {"group": group, "source": source, "java": java, "bootstrap": bootstrap, "app": app}
    finally:
        app.terminate()
        app.wait(60)


def _kafka(java: list[str], bootstrap: str, *args: str) -> str:
    proc = subprocess.run([*java, STREAMS_GROUPS, "--bootstrap-server", bootstrap, *args],
                          capture_output=True, text=True, timeout=90)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_streams_group_described_as_kafka_streams_groups_sees_it_then_deleted(kctl, streams_app):
    group, source, java, bootstrap, app = (
        streams_app[k] for k in ("group", "source", "java", "bootstrap", "app")
    )

    def caught_up() -> bool:
        r = kctl("groups", "describe", group, "-o", "json")
        rows = json.loads(r.stdout) if r.code == 0 else []
        return len(rows) == 2 and all(x["lag"] == 0 and x["consumer_id"] for x in rows)

    wait_for(caught_up, "the streams application to process and commit everything", 120, 0.5)

    r = kctl("groups", "list", "--type", "streams", "-o", "json")
    (listed,) = [g for g in json.loads(r.stdout) if g["group"] == group]
    assert (listed["type"], listed["state"], listed["members"]) == ("streams", "Stable", 1)
    assert group in _kafka(java, bootstrap, "--list").split()

    # offsets: CURRENT-OFFSET, LOG-END-OFFSET and OFFSET-LAG per partition
    lines = _kafka(java, bootstrap, "--describe", "--group", group, "--verbose").splitlines()
    theirs = {
        (f[1], int(f[2])): (f[3], f[5], f[6])
        for f in (ln.split() for ln in lines[1:] if ln.strip())
    }
    ours = json.loads(kctl("groups", "describe", group, "-o", "json").stdout)
    assert theirs == {
        (x["topic"], x["partition"]): (str(x["current_offset"]), str(x["log_end_offset"]),
                                       str(x["lag"]))
        for x in ours
    }  # fmt: skip
    # groups lag covers streams groups: the same offsets and lag, group_type streams, each
    # partition owned by the application's member, caught up (time lag 0).
    doc = json.loads(kctl("groups", "lag", group, "--time-lag", "-o", "json").stdout)
    assert theirs == {
        (x["topic"], x["partition"]): (str(x["committed_offset"]), str(x["log_end_offset"]),
                                       str(x["lag"]))
        for x in doc["partitions"]
    }  # fmt: skip
    assert {(x["group_type"], x["time_lag_ms"]) for x in doc["partitions"]} == {("streams", 0)}
    assert all(x["member_id"] for x in doc["partitions"])
    assert [(g["group_type"], g["lag"]) for g in doc["groups"]] == [("streams", 0)]
    assert set(theirs) == {(source, 0), (source, 1)}

    # --state: coordinator host:port (id), state, group epoch, target assignment epoch, members
    out = _kafka(java, bootstrap, "--describe", "--group", group, "--state", "--verbose")
    line = next(ln for ln in out.splitlines() if ln.startswith(group))
    k = re.match(r"\S+\s+(\S+)\s+\((\d+)\)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+)", line)
    assert k, line
    (s,) = json.loads(kctl("groups", "describe", group, "--state", "-o", "json").stdout)
    assert (s["coordinator_address"], str(s["coordinator"]), s["state"]) == k.group(1, 2, 3)
    assert (str(s["group_epoch"]), str(s["assignment_epoch"]), str(s["members"])) == k.group(
        4, 5, 6
    )
    assert s["type"] == "streams"

    # --members --verbose: member, epochs, process, client id and tasks
    out = _kafka(java, bootstrap, "--describe", "--group", group, "--members", "--verbose")
    (row,) = [ln.split(None, 8) for ln in out.splitlines()[1:] if ln.startswith(group)]
    (m,) = json.loads(kctl("groups", "describe", group, "--members", "-o", "json").stdout)
    assert row[1:8] == [
        str(m["target_epoch"]), str(m["topology_epoch"]), m["member_id"], "streams",
        str(m["member_epoch"]), m["process_id"], m["client_id"],
    ]  # fmt: skip
    assert "ACTIVE: 0:[0,1];" in row[8] and "TARGET-ACTIVE: 0:[0,1];" in row[8]
    assert m["tasks"] == {"active": ["0:0", "0:1"], "standby": [], "warmup": []}
    assert m["target_tasks"] == m["tasks"]
    assert m["assignment"] == [f"{source}:0", f"{source}:1"]

    r = kctl("groups", "delete", group, "--yes")
    assert r.code == 1 and "active member" in r.stderr, r
    app.terminate()
    app.wait(60)

    def empty() -> bool:
        r = kctl("groups", "describe", group, "--state", "-o", "json")
        return r.code == 0 and json.loads(r.stdout)[0]["members"] == 0

    wait_for(empty, "the streams application to leave its group", 60, 0.5)

    # an empty streams group's committed offsets are reset like any group's
    r = kctl("groups", "reset-offsets", group, "--topic", source, "--to-earliest", "--execute")
    assert r.code == 0, r
    out = _kafka(java, bootstrap, "--reset-offsets", "--group", group, "--input-topic", source,
                 "--to-current", "--dry-run")  # fmt: skip
    current = {(f[1], int(f[2])): f[3] for f in (ln.split() for ln in out.splitlines())
               if f and f[0] == group}  # fmt: skip
    assert current == {(source, 0): "0", (source, 1): "0"}, out
    r = kctl("groups", "delete-offsets", group, "--topic", f"{source}:1", "--yes")
    assert r.code == 0, r
    ours = json.loads(kctl("groups", "describe", group, "-o", "json").stdout)
    assert [(x["partition"], x["current_offset"]) for x in ours] == [(0, 0)]

    r = kctl("groups", "delete", group, "--yes")
    assert r.code == 0, r
    assert group not in _kafka(java, bootstrap, "--list").split()
