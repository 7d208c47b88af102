"""A dynamic KRaft quorum (KIP-853): a cluster of its own whose 3 controllers were formatted as
initial voters (`kctl local up --quorum dynamic`); kctl takes a voter out and puts it back, and
kafka-metadata-quorum.sh (MetadataQuorumCommand from the same jars) sees each step."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Run, kctl_environment, run_kctl, start_kafka_cluster, wait_for

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("KCTL_TEST_BOOTSTRAP"))
    or os.environ.get("KCTL_TEST_ENGINE", "kafka") != "kafka",
    reason="needs the local Apache Kafka engine (a cluster of its own)",
)

QUORUM_TOOL = "org.apache.kafka.tools.MetadataQuorumCommand"


@pytest.fixture(scope="module")
def dynamic(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from kctl.local import kafka_cluster

    state = tmp_path_factory.mktemp("dynamic-quorum")
    c: Any = start_kafka_cluster(state, brokers=1, controllers=3, quorum="dynamic")
    try:
        yield c
    finally:
        recorded = kafka_cluster.read_state(state)
        kafka_cluster.kill_all(recorded if recorded is not None else c)


def _kctl(c: Any, tmp: Path, *args: str) -> Run:
    env = kctl_environment(KCTL_BOOTSTRAP_SERVERS=c.bootstrap, KCTL_CONFIG=str(tmp / "c.yaml"))
    return run_kctl(env, *args, timeout=90)


def _kafka_status(kafka_tool: Any, bootstrap: str) -> dict[int, tuple[str, str]]:
    """{node id: (directory id, status)} as kafka-metadata-quorum.sh describe --replication."""
    out = kafka_tool(QUORUM_TOOL, "--bootstrap-server", bootstrap, "describe",
                     "--replication").stdout  # fmt: skip
    rows = [ln.split() for ln in out.splitlines()[1:] if ln.strip()]
    return {int(r[0]): (r[1], r[-1]) for r in rows}


def test_a_voter_is_removed_and_added_back_as_kafka_metadata_quorum_sees_it(
    dynamic: Any, kafka_tool: Any, tmp_path: Path
) -> None:
    r = _kctl(dynamic, tmp_path, "quorum", "describe", "--replication", "-o", "json")
    assert r.code == 0, r
    ours = {x["node_id"]: (x["directory_id"], x["status"]) for x in json.loads(r.stdout)}
    theirs = _kafka_status(kafka_tool, dynamic.bootstrap)
    assert ours == theirs
    voters = sorted(n for n, (_d, s) in theirs.items() if s in ("Leader", "Follower"))
    assert voters == [1000, 1001, 1002]
    follower = min(n for n, (_d, s) in theirs.items() if s == "Follower")
    directory = theirs[follower][0]
    assert directory == dynamic.directory_ids[str(follower)]  # as formatted

    plan = _kctl(dynamic, tmp_path, "quorum", "remove-controller", str(follower))
    assert plan.code == 0 and "plan only" in plan.stderr
    assert _kafka_status(kafka_tool, dynamic.bootstrap)[follower][1] == "Follower"

    r = _kctl(dynamic, tmp_path, "quorum", "remove-controller", str(follower), "--execute", "--yes")
    assert r.code == 0, r
    wait_for(lambda: _kafka_status(kafka_tool, dynamic.bootstrap)[follower][1] == "Observer",
             f"controller {follower} to be an observer", 60, 0.5)  # fmt: skip

    address = dynamic.node(follower).address
    listener = f"CONTROLLER://{address}"
    r = _kctl(dynamic, tmp_path, "quorum", "add-controller", str(follower), "--listener",
              listener, "--execute")  # fmt: skip
    assert r.code == 0, r
    wait_for(lambda: _kafka_status(kafka_tool, dynamic.bootstrap)[follower][1] == "Follower",
             f"controller {follower} to be a voter again", 60, 0.5)  # fmt: skip
    assert _kafka_status(kafka_tool, dynamic.bootstrap)[follower][0] == directory

    again = _kctl(dynamic, tmp_path, "quorum", "add-controller", str(follower), "--listener",
                  listener)  # fmt: skip
    assert again.code == 2 and "already a voter" in again.stderr, again
