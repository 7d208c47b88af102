"""kctl partitions elect-leaders and reassign against the session broker; where the broker lacks
ElectLeaders or AlterPartitionReassignments the command must say so in one line (exit 1)."""

from __future__ import annotations

import json


def _one_line_unsupported(r, api: str) -> None:
    assert r.code == 1, r
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and f"does not support {api}" in lines[0], r


def _on_one_broker(admin, new_topic, partitions: int) -> str:
    """A topic whose every partition has one replica, on the same broker."""
    broker = min(admin.list_topics(timeout=10).brokers)
    return new_topic(assignment=[[broker]] * partitions)


def _leader_of(kctl, topic: str) -> int:
    r = kctl("topics", "describe", topic, "-o", "json")
    assert r.code == 0, r
    return json.loads(r.stdout)[0]["partitions"][0]["leader"]


def test_elect_leaders_plans_then_acts_or_reports_missing_api(kctl, new_topic, lacks_api):
    name = new_topic(partitions=2)
    r = kctl("partitions", "elect-leaders", "--preferred", "--topic", f"{name}:0,1", "-o", "json")
    if lacks_api("ElectLeaders"):
        _one_line_unsupported(r, "ElectLeaders")
        return
    assert r.code == 0, r
    rows = json.loads(r.stdout)
    assert [(x["partition"], x["action"]) for x in rows] == [(0, "skip"), (1, "skip")]
    assert "nothing changed" in r.stderr
    r = kctl("partitions", "elect-leaders", "--preferred", "--topic", name, "--execute")
    assert r.code == 0 and "nothing to elect" in r.stderr, r


def test_elect_leaders_usage_errors(kctl):
    r = kctl("partitions", "elect-leaders", "--preferred", "--unclean", "--all-topics")
    assert r.code == 2 and "--preferred" in r.stderr
    r = kctl("partitions", "elect-leaders", "--preferred")
    assert r.code == 2 and "--all-topics" in r.stderr
    r = kctl("partitions", "elect-leaders", "--preferred", "--topic", "t:x")
    assert r.code == 2 and "malformed --topic" in r.stderr


def test_generate_keeps_replicas_on_target_brokers(kctl, new_topic, admin, tmp_path):
    name = _on_one_broker(admin, new_topic, 3)
    broker = _leader_of(kctl, name)
    current = tmp_path / "current.json"
    r = kctl(
        "partitions",
        "reassign",
        "generate",
        "--topic",
        name,
        "--brokers",
        str(broker),
        "--current-file",
        str(current),
        "-o",
        "json",
    )
    assert r.code == 0, r
    plan = json.loads(r.stdout)
    assert plan["version"] == 1
    assert [(p["topic"], p["partition"]) for p in plan["partitions"]] == [
        (name, i) for i in range(3)
    ]
    assert all(p["log_dirs"] == ["any"] * len(p["replicas"]) for p in plan["partitions"])
    assert "0 replica(s) move" in r.stderr
    before = json.loads(current.read_text())
    assert {(p["partition"], tuple(p["replicas"])) for p in before["partitions"]} == {
        (p["partition"], tuple(p["replicas"])) for p in plan["partitions"]
    }


def test_generate_rejects_unknown_broker_and_topic(kctl, new_topic):
    name = new_topic(partitions=1)
    r = kctl("partitions", "reassign", "generate", "--topic", name, "--brokers", "987654")
    assert r.code == 1 and "unknown broker 987654" in r.stderr, r
    r = kctl("partitions", "reassign", "generate", "--topic", "no-such-xyz", "--brokers", "1")
    assert r.code == 1 and "unknown topic" in r.stderr, r
    r = kctl("partitions", "reassign", "generate", "--topic", name, "--brokers", "a,b")
    assert r.code == 2 and "malformed --brokers" in r.stderr, r


def _current_plan(kctl, name: str, tmp_path) -> str:
    broker = _leader_of(kctl, name)
    r = kctl(
        "partitions", "reassign", "generate", "-t", name, "--brokers", str(broker), "-o", "json"
    )
    assert r.code == 0, r
    path = tmp_path / "plan.json"
    path.write_text(r.stdout)
    return str(path)


def test_execute_needs_execute_flag_or_reports_missing_api(
    kctl, new_topic, admin, tmp_path, lacks_api
):
    name = _on_one_broker(admin, new_topic, 2)
    plan = _current_plan(kctl, name, tmp_path)
    r = kctl("partitions", "reassign", "execute", "--file", plan)
    if lacks_api("AlterPartitionReassignments"):
        _one_line_unsupported(r, "AlterPartitionReassignments")
        r = kctl("partitions", "reassign", "cancel", "--all", "--execute")
        _one_line_unsupported(r, "AlterPartitionReassignments")
        return
    assert r.code == 0 and "nothing changed" in r.stderr, r
    r = kctl("partitions", "reassign", "execute", "--file", plan, "--execute", "-o", "json")
    assert r.code == 0, r
    assert {x["status"] for x in json.loads(r.stdout)} == {"accepted"}


def test_verify_reports_complete_plan_and_no_throttle(
    kctl, new_topic, admin, tmp_path, requires_api
):
    requires_api("ListPartitionReassignments")
    name = _on_one_broker(admin, new_topic, 2)
    plan = _current_plan(kctl, name, tmp_path)
    r = kctl("partitions", "reassign", "verify", "--file", plan, "-o", "json")
    assert r.code == 0, r
    assert [x["status"] for x in json.loads(r.stdout)] == ["complete", "complete"]
    assert "reassignment complete" in r.stderr


def test_verify_plan_not_applied_exits_three(kctl, new_topic, tmp_path, requires_api):
    requires_api("ListPartitionReassignments")
    name = new_topic(partitions=1)
    broker = _leader_of(kctl, name)
    path = tmp_path / "plan.json"
    other = broker + 1000
    doc = {"version": 1, "partitions": [{"topic": name, "partition": 0, "replicas": [other]}]}
    path.write_text(json.dumps(doc))
    r = kctl("partitions", "reassign", "verify", "--file", str(path), "-o", "json")
    assert r.code == 3, r
    assert json.loads(r.stdout)[0]["status"] == "not-applied"


def test_list_shows_no_ongoing_reassignment(kctl, new_topic, requires_api):
    requires_api("ListPartitionReassignments")
    name = new_topic(partitions=1)
    r = kctl("partitions", "reassign", "list", "-o", "json")
    assert r.code == 0, r
    assert [x for x in json.loads(r.stdout) if x["topic"] == name] == []


def test_malformed_plan_is_a_usage_error(kctl, tmp_path):
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"version": 1, "partitions": [{"topic": "a", "replicas": [1]}]}))
    r = kctl("partitions", "reassign", "execute", "--file", str(path))
    assert r.code == 2 and "malformed plan" in r.stderr and "partition" in r.stderr, r
