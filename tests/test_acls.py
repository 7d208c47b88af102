"""kctl acls on a real Kafka cluster with Kafka's StandardAuthorizer (its own 1-broker cluster):
ACLs added with kctl are enforced by the broker and seen by kafka-acls.sh (AclCommand from the
same jars), and the other way round.

The cluster's listener is PLAINTEXT, so every client is User:ANONYMOUS; the authorizer lets
User:admin do anything (no client is admin) and lets everyone use a resource that has no ACL
at all (allow.everyone.if.no.acl.found), so each test grants and denies on resources of its
own: once a resource has an ACL, only what an ACL allows is allowed."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Run, kctl_environment, run_kctl, start_kafka_cluster, unique

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("KCTL_TEST_BOOTSTRAP"))
    or os.environ.get("KCTL_TEST_ENGINE", "kafka") != "kafka",
    reason="needs the local Apache Kafka engine (a cluster of its own with an authorizer)",
)

AUTHORIZER = {
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "super.users": "User:admin",
    "allow.everyone.if.no.acl.found": "true",
}
ME = "User:ANONYMOUS"


class Secured:
    def __init__(self, bootstrap: str, home: Path) -> None:
        self.bootstrap = bootstrap
        self.home = home

    def kctl(self, *args: str, input: str | None = None) -> Run:
        env = kctl_environment(
            KCTL_BOOTSTRAP_SERVERS=self.bootstrap, KCTL_CONFIG=str(self.home / "c.yaml")
        )
        return run_kctl(env, *args, input=input, timeout=90)

    def ok(self, *args: str, input: str | None = None) -> Any:
        r = self.kctl(*args, "-o", "json", input=input)
        assert r.code == 0, r
        return json.loads(r.stdout)

    def topic(self, prefix: str) -> str:
        name = unique(prefix)
        r = self.kctl("topics", "create", name, "--partitions", "1", "--replication-factor", "1")
        assert r.code == 0, r
        return name


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secured]:
    from kctl.local import kafka_cluster

    state = tmp_path_factory.mktemp("acl-cluster")
    c: Any = start_kafka_cluster(state, brokers=1, broker_config=AUTHORIZER)
    try:
        secured = Secured(c.bootstrap, tmp_path_factory.mktemp("acl-kctl"))
        # The nodes talk to each other as ANONYMOUS too: once the cluster resource has any ACL
        # (the file test adds one), their ClusterAction needs a grant, as do the clients'
        # IdempotentWrite and Create. All on the cluster keeps cluster-level calls open.
        secured.ok("acls", "add", "--principal", ME, "--operation", "All", "--cluster")
        yield secured
    finally:
        recorded = kafka_cluster.read_state(state)
        kafka_cluster.kill_all(recorded if recorded is not None else c)


def _kafka_acls(kafka_tool: Any, bootstrap: str, *args: str) -> set[tuple[str, ...]]:
    """(resource type, name, pattern type, principal, host, operation, permission) as
    kafka-acls.sh --list prints them."""
    import re

    out = kafka_tool(
        "org.apache.kafka.tools.AclCommand", "--bootstrap-server", bootstrap, "--list", *args
    ).stdout
    found = set()
    resource = None
    for line in out.splitlines():
        m = re.search(r"resourceType=(\w+), name=(.*), patternType=(\w+)\)", line)
        if m:
            resource = m.groups()
            continue
        m = re.search(r"principal=(.*), host=(.*), operation=(\w+), permissionType=(\w+)\)", line)
        if m and resource:
            found.add((*resource, *m.groups()))
    return found


def _as_tuples(rows: list[dict[str, str]]) -> set[tuple[str, ...]]:
    keys = ("resource_type", "resource_name", "pattern_type", "principal", "host", "operation",
            "permission")  # fmt: skip
    return {tuple(r[k] for k in keys) for r in rows}


def produce(cluster: Secured, topic: str) -> Run:
    return cluster.kctl("produce", topic, "--timeout", "10", input="a record\n")


def test_a_prefixed_grant_a_deny_and_their_removal_are_enforced(cluster, kafka_tool):
    prefix = unique("orders") + "-"
    eu, us = cluster.topic(prefix + "eu"), cluster.topic(prefix + "us")
    payments = cluster.topic("payments")
    # alice's grants put ACLs on the resources: from then on ANONYMOUS needs its own.
    for topic, ptype in ((prefix, "prefixed"), (payments, "literal")):
        cluster.ok("acls", "add", "--principal", "User:alice", "--operation", "Write",
                   "--topic", topic, "--pattern-type", ptype)  # fmt: skip
    r = produce(cluster, eu)
    assert r.code == 1 and "TOPIC_AUTHORIZATION_FAILED" in r.stderr, r

    rows = cluster.ok("acls", "add", "--principal", ME, "--producer", "--topic", prefix,
                      "--pattern-type", "prefixed")  # fmt: skip
    assert {(r["operation"], r["state"]) for r in rows} == {
        ("CREATE", "added"), ("DESCRIBE", "added"), ("WRITE", "added")
    }  # fmt: skip
    assert produce(cluster, eu).code == 0 and produce(cluster, us).code == 0
    r = produce(cluster, payments)
    lines = r.stderr.strip().splitlines()
    assert r.code == 1 and lines[-1].startswith("kctl: error: not authorized to access topic")
    assert repr(payments) in lines[-1] and "Traceback" not in r.stderr

    # A DENY beats the prefixed ALLOW, for that topic only.
    cluster.ok("acls", "add", "--deny-principal", ME, "--operation", "Write", "--topic", eu)
    r = produce(cluster, eu)
    assert r.code == 1 and "TOPIC_AUTHORIZATION_FAILED" in r.stderr, r
    assert produce(cluster, us).code == 0

    # What ANONYMOUS may do on these topics: exactly what was added, as kafka-acls.sh lists it.
    mine = cluster.ok("acls", "list", "--principal", ME, "--topic", eu, "--pattern-type", "match")
    assert _as_tuples(mine) == {
        ("TOPIC", prefix, "PREFIXED", ME, "*", op, "ALLOW") for op in ("CREATE", "DESCRIBE", "WRITE")
    } | {("TOPIC", eu, "LITERAL", ME, "*", "WRITE", "DENY")}  # fmt: skip
    theirs = _kafka_acls(kafka_tool, cluster.bootstrap, "--principal", ME)
    everything = cluster.ok("acls", "list", "--principal", ME)
    assert _as_tuples(everything) == theirs

    # remove: listed, refused without --yes (no terminal), then gone; the refusal comes back.
    r = cluster.kctl("acls", "remove", "--principal", ME, "--topic", eu)
    assert r.code == 1 and "without --yes" in r.stderr and "DENY User:ANONYMOUS WRITE" in r.stderr
    gone = cluster.ok("acls", "remove", "--principal", ME, "--topic", eu, "--yes")
    assert _as_tuples(gone) == {("TOPIC", eu, "LITERAL", ME, "*", "WRITE", "DENY")}
    assert produce(cluster, eu).code == 0
    cluster.ok("acls", "remove", "--principal", ME, "--topic", prefix,
               "--pattern-type", "prefixed", "--yes")  # fmt: skip
    r = produce(cluster, eu)
    assert r.code == 1 and "TOPIC_AUTHORIZATION_FAILED" in r.stderr, r


def test_the_consumer_shortcut_lets_a_group_read(cluster):
    topic = cluster.topic("reads")
    group, other = unique("g"), unique("h")
    assert produce(cluster, topic).code == 0
    cluster.ok("acls", "add", "--principal", "User:alice", "--operation", "Read",
               "--topic", topic, "--group", group, "--group", other)  # fmt: skip
    r = cluster.kctl("consume", topic, "--group", group, "-o", "jsonl", "--timeout", "10")
    assert r.code == 1 and "authorization" in r.stderr.lower(), r
    rows = cluster.ok("acls", "add", "--principal", ME, "--consumer", "--topic", topic,
                      "--group", group)  # fmt: skip
    assert {(r["resource_type"], r["operation"]) for r in rows} == {
        ("TOPIC", "READ"), ("TOPIC", "DESCRIBE"), ("GROUP", "READ")
    }  # fmt: skip
    r = cluster.kctl("consume", topic, "--group", group, "-o", "jsonl", "--timeout", "20")
    assert r.code == 0 and len(r.stdout.splitlines()) == 1, r
    r = cluster.kctl("consume", topic, "--group", other, "-o", "jsonl", "--timeout", "10")
    assert r.code == 1 and "GROUP_AUTHORIZATION_FAILED" in r.stderr, r


def test_an_acl_file_is_applied_idempotently_and_kafka_sees_it(cluster, kafka_tool, tmp_path):
    topic, txn = unique("filed"), unique("txn")
    path = tmp_path / "acls.yaml"
    path.write_text(
        f"""# ACLs kept in git
- resource_type: topic
  resource_name: {topic}
  principal: User:carol
  operation: Read
- resource_type: transactional-id
  resource_name: {txn}
  pattern_type: prefixed
  principal: User:carol
  operation: Write
  permission: allow
- resource_type: cluster
  principal: User:carol
  operation: IdempotentWrite
"""
    )
    first = cluster.ok("acls", "add", "--from-file", str(path))
    assert [r["state"] for r in first] == ["added"] * 3
    again = cluster.ok("acls", "add", "--from-file", str(path))
    assert [r["state"] for r in again] == ["exists"] * 3
    theirs = _kafka_acls(kafka_tool, cluster.bootstrap, "--principal", "User:carol")
    assert (
        theirs
        == _as_tuples(first)
        == {
            ("TOPIC", topic, "LITERAL", "User:carol", "*", "READ", "ALLOW"),
            ("TRANSACTIONAL_ID", txn, "PREFIXED", "User:carol", "*", "WRITE", "ALLOW"),
            ("CLUSTER", "kafka-cluster", "LITERAL", "User:carol", "*", "IDEMPOTENT_WRITE", "ALLOW"),
        }
    )
    # ACLs kafka-acls.sh adds, kctl lists.
    kafka_tool(
        "org.apache.kafka.tools.AclCommand", "--bootstrap-server", cluster.bootstrap, "--add",
        "--allow-principal", "User:dave", "--operation", "Describe", "--group", "audit",
    )  # fmt: skip
    rows = cluster.ok("acls", "list", "--principal", "User:dave")
    assert _as_tuples(rows) == {
        ("GROUP", "audit", "LITERAL", "User:dave", "*", "DESCRIBE", "ALLOW")
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--principal", "alice", "--operation", "Read", "--topic", "t"), "is not TYPE:NAME"),
        (("--principal", "User:a", "--operation", "IdempotentWrite", "--topic", "t"),
         "operation IDEMPOTENT_WRITE does not apply to TOPIC resources"),
        (("--principal", "User:a", "--operation", "Fly", "--topic", "t"), "unknown operation"),
        (("--principal", "User:a", "--consumer", "--topic", "t"), "--consumer needs --group"),
        (("--principal", "User:a", "--operation", "Read"), "no resource"),
        (("--principal", "User:a", "--operation", "Read", "--topic", "t",
          "--pattern-type", "match"), "unknown pattern type"),
    ],
)  # fmt: skip
def test_bad_acls_are_one_line_usage_errors(cluster, args, message):
    r = cluster.kctl("acls", "add", *args)
    lines = r.stderr.strip().splitlines()
    assert r.code == 2 and len(lines) == 1 and message in lines[0], r


def test_a_malformed_acl_file_names_the_line(cluster, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("- resource_type: topic\n  resource_name: t\n  principal: User:a\n"
                    "  operation: Read\n- resource_type: topic\n  resource_name: t\n"
                    "  principal: User:a\n  operation: Jump\n")  # fmt: skip
    r = cluster.kctl("acls", "add", "--from-file", str(path))
    assert r.code == 2 and "ACL file, line 5: unknown operation 'Jump'" in r.stderr, r
    path.write_text("- resource_type: topic\n  resource_name: [t\n")
    r = cluster.kctl("acls", "add", "--from-file", str(path))
    assert r.code == 2 and f"ACL file {path}: line" in r.stderr, r
    r = cluster.kctl("acls", "remove", "--yes")
    assert r.code == 2 and "refusing to remove every ACL" in r.stderr, r


def test_acls_without_an_authorizer_is_one_line(kctl):
    r = kctl("acls", "list")
    assert r.code == 1 and "no authorizer is configured" in r.stderr, r
