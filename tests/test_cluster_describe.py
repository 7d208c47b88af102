"""kctl cluster describe names the active controller as the KRaft quorum reports it, not the
random live broker KRaft brokers answer DescribeCluster's "controller" with: on the session
cluster, and in the pure merge of the two answers."""

from __future__ import annotations

import json

from kctl.broker.cluster import Broker, ClusterInfo, Quorum, controller_line, with_quorum


def _brokers(controller: int | None = None) -> list[Broker]:
    return [Broker(i, "h", 9091 + i, None, i == controller) for i in (1, 2, 3)]


def test_the_quorum_leader_is_the_controller_and_no_separate_broker_is():
    described = ClusterInfo("c", 2, _brokers(controller=2))  # a random broker, as KRaft answers
    info = with_quorum(described, Quorum(1000, 7, [1000, 1001, 1002]))
    assert info.controller_id == 1000 and info.controller_source == "DescribeQuorum"
    assert info.quorum_voters == [1000, 1001, 1002]
    assert [b.is_controller for b in info.brokers] == [False, False, False]
    assert controller_line(info) == (
        "active controller 1000 (KRaft quorum leader; voters 1000, 1001, 1002)"
    )


def test_a_combined_broker_and_controller_leading_the_quorum_is_the_controller():
    info = with_quorum(ClusterInfo("c", 3, _brokers(controller=3)), Quorum(1, 4, [1, 2, 3]))
    assert info.controller_id == 1
    assert [(b.id, b.is_controller) for b in info.brokers] == [(1, True), (2, False), (3, False)]


def test_no_quorum_leader_or_no_quorum_at_all():
    electing = with_quorum(ClusterInfo("c", 2, _brokers(controller=2)), Quorum(-1, 8, [1000]))
    assert electing.controller_id is None and not any(b.is_controller for b in electing.brokers)
    assert controller_line(electing) == "active controller unknown (voters 1000)"
    # ZooKeeper mode (no DescribeQuorum): DescribeCluster's controller is the real one.
    zk = ClusterInfo("c", 2, _brokers(controller=2))
    assert with_quorum(zk, None) is zk
    assert controller_line(zk) == "controller 2"


def test_describe_names_the_same_controller_twice_the_one_the_quorum_reports(kctl, lacks_api):
    docs = []
    for _ in range(2):
        r = kctl("cluster", "describe", "-o", "json")
        assert r.code == 0, r
        docs.append(json.loads(r.stdout))
    assert docs[0] == docs[1]
    doc = docs[0]
    assert doc["controller_id"] is not None
    for b in doc["brokers"]:
        assert b["controller"] == (b["broker"] == doc["controller_id"])
    if lacks_api("DescribeQuorum"):  # not KRaft (Tansu): DescribeCluster's answer
        assert (doc["controller_source"], doc["quorum_voters"]) == ("DescribeCluster", None)
        return
    q = kctl("quorum", "describe", "-o", "json")
    assert q.code == 0, q
    quorum = json.loads(q.stdout)
    assert doc["controller_id"] == quorum["leader_id"]
    assert doc["controller_source"] == "DescribeQuorum"
    assert doc["quorum_voters"] == sorted(v["id"] for v in quorum["voters"])
    # The table says it in words on stderr (its CONTROLLER column is per broker).
    r = kctl("cluster", "describe", "-o", "plain")
    assert r.code == 0, r
    assert f"active controller {quorum['leader_id']} (KRaft quorum leader; voters" in r.stderr
