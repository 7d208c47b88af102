"""``topics describe`` when one topic's configs cannot be read: asked again while the error is
retriable (a topic the broker does not know yet), and, still failing, that topic's error in its
rows and one line on stderr, the other topics answered, exit 1.

On the real cluster the failure is the broker's own answer: the topic is deleted between the
Metadata that lists it and the DescribeConfigs that asks for its configs (the lookup is wrapped
so that its first request deletes the topic first, and, in the second test, so that its retry
creates it again, as a topic just created that the broker answering does not know yet)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import kctl_environment

from kctl.broker.cluster_view import PartitionState, TopicState
from kctl.broker.configs import RETRIABLE, retry_delays
from kctl.broker.topic_rows import Health, describe_columns, describe_rows, failures

# Runs kctl in a process of its own, the DescribeConfigs lookup wrapped: before its first
# request the topic DOOMED is deleted (and gone from every broker's metadata); with RECREATE,
# before the second it is created again. The number of requests is written to COUNT.
DRIVER = r"""
import sys, time
from confluent_kafka.admin import AdminClient, NewTopic
from kctl.broker import configs
from kctl.cli import main

bootstrap, doomed, recreate, count_file, *argv = sys.argv[1:]
client = AdminClient({"bootstrap.servers": bootstrap})
plain_ask = configs.TopicConfigLookup._ask
calls = []

def present() -> bool:
    return all(doomed in client.list_topics(timeout=10).topics for _ in range(3))

def absent() -> bool:
    return all(doomed not in client.list_topics(timeout=10).topics for _ in range(3))

def wait(check) -> None:
    for _ in range(300):
        if check():
            return
        time.sleep(0.1)
    raise SystemExit("the topic did not change in time")

def ask(self, topics):
    calls.append(list(topics))
    if len(calls) == 1:
        client.delete_topics([doomed])[doomed].result(30)
        wait(absent)
        time.sleep(0.5)
    elif len(calls) == 2 and recreate == "yes":
        while True:
            try:
                client.create_topics([NewTopic(doomed, 2, 1)])[doomed].result(30)
                break
            except Exception:  # the deletion still under way: TOPIC_ALREADY_EXISTS
                time.sleep(0.2)
        wait(present)
        time.sleep(0.5)
    with open(count_file, "w") as f:
        f.write(str(len(calls)))
    return plain_ask(self, topics)

configs.TopicConfigLookup._ask = ask
main(argv)
"""


def _describe(
    bootstrap: str, tmp_path: Path, doomed: str, recreate: bool, *argv: str
) -> tuple[subprocess.CompletedProcess[str], int]:
    count = tmp_path / "requests"
    env = kctl_environment(KCTL_CONFIG=str(tmp_path / "kctl-config.yaml"))
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            DRIVER,
            bootstrap,
            doomed,
            "yes" if recreate else "no",
            str(count),
            "-b",
            bootstrap,
            *argv,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    return proc, int(count.read_text())


def test_a_topic_whose_configs_fail_gets_its_error_and_the_others_are_answered(
    bootstrap: str, new_topic, tmp_path: Path
) -> None:
    kept = new_topic(partitions=2, config={"min.insync.replicas": "1", "retention.ms": "60000"})
    doomed = new_topic(partitions=2)
    proc, requests = _describe(
        bootstrap,
        tmp_path,
        doomed,
        False,
        "--timeout",
        "4",
        "topics",
        "describe",
        kept,
        doomed,
        "-o",
        "json",
    )
    assert proc.returncode == 1, proc
    docs = {d["topic"]: d for d in json.loads(proc.stdout)}
    assert docs[kept]["error"] is None
    assert docs[kept]["configs"]["retention.ms"] == "60000"
    assert docs[kept]["min_insync_replicas"] == 1
    assert docs[doomed]["error"].startswith("UNKNOWN_TOPIC_OR_PART"), docs[doomed]
    assert len(docs[doomed]["partitions"]) == 2  # its partitions from the Metadata stay
    assert proc.stderr.splitlines() == [
        f"kctl: error: describing configs of topic {doomed!r} ({docs[doomed]['error']})"
    ]
    assert requests > 1  # asked again while the error was retriable, until the timeout


def test_the_tables_show_the_error_in_a_last_column_for_the_failed_topic_only(
    bootstrap: str, new_topic, tmp_path: Path
) -> None:
    kept = new_topic(partitions=1)
    doomed = new_topic(partitions=1)
    proc, _ = _describe(
        bootstrap,
        tmp_path,
        doomed,
        False,
        "--timeout",
        "2",
        "topics",
        "describe",
        kept,
        doomed,
        "-o",
        "plain",
    )
    assert proc.returncode == 1, proc
    header, *lines = proc.stdout.splitlines()
    assert header.split("\t")[-2:] == ["REASSIGNING", "ERROR"]
    rows = {line.split("\t")[0]: line.split("\t") for line in lines}
    assert rows[kept][-1] == ""
    assert rows[doomed][-1].startswith("UNKNOWN_TOPIC_OR_PART")
    assert len(proc.stderr.splitlines()) == 1


def test_a_topic_the_broker_does_not_know_yet_is_asked_again_and_answered(
    bootstrap: str, new_topic, tmp_path: Path
) -> None:
    other = new_topic(partitions=1)
    late = new_topic(partitions=2)
    proc, requests = _describe(
        bootstrap,
        tmp_path,
        late,
        True,
        "--timeout",
        "20",
        "topics",
        "describe",
        other,
        late,
        "-o",
        "plain",
    )
    assert proc.returncode == 0, proc
    assert proc.stderr == ""
    header, *rows = proc.stdout.splitlines()
    assert "ERROR" not in header
    assert sorted({row.split("\t")[0] for row in rows}) == sorted([other, late])
    assert requests == 2


def test_every_topic_failing_is_the_commands_one_error(
    bootstrap: str, new_topic, tmp_path: Path
) -> None:
    doomed = new_topic(partitions=1)
    proc, _ = _describe(
        bootstrap, tmp_path, doomed, False, "--timeout", "2", "topics", "describe", doomed
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith(f"kctl: error: describing configs of topic {doomed!r} (")
    assert len(proc.stderr.splitlines()) == 1


# The pure part: the retry schedule, the rows and columns of a failed topic.


def test_retries_double_their_pause_up_to_a_second_within_the_timeout() -> None:
    assert retry_delays(2.0) == [0.1, 0.2, 0.4, 0.8]
    assert retry_delays(5.0) == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0]
    assert retry_delays(0.05) == []
    assert sum(retry_delays(15.0)) <= 15.0
    assert {"UNKNOWN_TOPIC_OR_PART", "NOT_CONTROLLER", "REQUEST_TIMED_OUT"} <= RETRIABLE
    assert "TOPIC_AUTHORIZATION_FAILED" not in RETRIABLE


def _topic(name: str, error: str | None = None) -> TopicState:
    parts = [PartitionState(p, 1, [1, 2], [1], []) for p in range(2)]
    state = TopicState(name, False, parts, min_insync_replicas=None if error else 2)
    state.config_error = error
    return state


def test_a_failed_topics_rows_and_document_carry_its_error_and_add_the_column() -> None:
    ok, bad = _topic("ok"), _topic("bad", "UNKNOWN_TOPIC_OR_PART: gone")
    rows, docs = describe_rows([ok, bad], {1, 2})
    gone = "UNKNOWN_TOPIC_OR_PART: gone"
    assert [r.get("error") for r in rows] == [None, None, gone, gone]
    assert [d["error"] for d in docs] == [None, "UNKNOWN_TOPIC_OR_PART: gone"]
    assert describe_columns([ok, bad])[-1] == "error"
    assert "error" not in describe_columns([ok])
    assert "error" not in rows[0]  # a healthy topic's rows are as before
    assert failures([ok, bad]) == [("bad", "UNKNOWN_TOPIC_OR_PART: gone")]
    # A filter still selects the failed topic's partitions (min ISR unknown counts as 1).
    kept, _ = describe_rows([bad], {1, 2}, Health(under_replicated=True))
    assert len(kept) == 2


def test_a_cluster_snapshot_keeps_the_other_topics_when_one_topics_configs_fail(
    bootstrap: str, new_topic, tmp_path: Path
) -> None:
    """The same lookup serves ``cluster snapshot``: the failed topic is in the document with
    a null min.insync.replicas, one line on stderr names it, exit 1."""
    kept = new_topic(partitions=2, config={"min.insync.replicas": "1"})
    doomed = new_topic(partitions=1)
    proc, requests = _describe(
        bootstrap, tmp_path, doomed, False, "--timeout", "4",
        "cluster", "snapshot", "--topic", kept, "--topic", doomed, "-o", "json",
    )  # fmt: skip
    assert proc.returncode == 1, proc
    topics = {t["name"]: t for t in json.loads(proc.stdout)["topics"]}
    assert topics[kept]["min_insync_replicas"] == 1
    assert topics[doomed]["min_insync_replicas"] is None
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"kctl: error: describing configs of topic {doomed!r} (UNKNOWN_TOPIC")
    assert requests > 1
