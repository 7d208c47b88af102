"""kctl.broker.topic_rows on hand-built topic states (no broker): which partitions the health
filters of `topics describe` keep, and the rows and documents of list and describe."""

from __future__ import annotations

from kctl.broker.cluster_view import PartitionState, TopicState
from kctl.broker.topic_rows import Health, describe_rows, list_rows, reassigning

LIVE = {1, 2, 3}


def part(n: int, leader: int, replicas: list[int], isr: list[int], **kw) -> PartitionState:
    return PartitionState(n, leader, replicas, isr, kw.pop("offline_replicas", []), **kw)


def topic(name: str, parts: list[PartitionState], min_isr: int | None = 2) -> TopicState:
    return TopicState(name, False, parts, topic_id=f"id-{name}", min_insync_replicas=min_isr)


HEALTHY = part(0, 1, [1, 2, 3], [1, 2, 3])
UNDER = part(1, 2, [1, 2, 3], [2, 3])  # under-replicated, ISR 2 = min ISR 2
BELOW = part(2, 3, [1, 2, 3], [3])  # ISR 1 < min ISR 2
LEADERLESS = part(3, -1, [1, 2, 3], [1, 2, 3])  # full ISR, no leader
GONE_LEADER = part(4, 4, [4, 2, 3], [4, 2, 3])  # leader 4 not among the live brokers
ORDERS = topic("orders", [HEALTHY, UNDER, BELOW, LEADERLESS, GONE_LEADER])


def kept(health: Health, t: TopicState = ORDERS) -> list[int]:
    return [p.partition for p in t.partitions if health.keeps(t, p, LIVE)]


def test_without_a_filter_every_partition_is_kept():
    assert not Health().filtering
    assert kept(Health()) == [0, 1, 2, 3, 4]


def test_under_replicated_is_an_isr_smaller_than_the_replicas():
    assert kept(Health(under_replicated=True)) == [1, 2]


def test_under_min_isr_is_an_isr_below_min_insync_replicas_or_no_leader():
    assert kept(Health(under_min_isr=True)) == [2, 3]


def test_at_min_isr_is_an_isr_equal_to_min_insync_replicas():
    assert kept(Health(at_min_isr=True)) == [1]


def test_unavailable_is_no_leader_or_a_leader_not_among_the_live_brokers():
    assert kept(Health(unavailable=True)) == [3, 4]


def test_several_filters_keep_what_any_of_them_selects():
    assert kept(Health(at_min_isr=True, unavailable=True)) == [1, 3, 4]
    assert kept(Health(True, True, True, True)) == [1, 2, 3, 4]


def test_an_unknown_min_isr_counts_as_one():
    t = topic("single", [part(0, 1, [1], [1]), part(1, -1, [2], [])], min_isr=None)
    assert kept(Health(at_min_isr=True), t) == [0]
    assert kept(Health(under_min_isr=True), t) == [1]


def test_describe_rows_show_a_missing_leader_as_none_and_documents_keep_minus_one():
    moving = part(0, 1, [1, 2, 4], [1, 2], adding_replicas=[4], removing_replicas=[2])
    t = topic("t", [moving, LEADERLESS], min_isr=1)
    rows, docs = describe_rows([t], LIVE)
    assert [r["leader"] for r in rows] == [1, "none"]
    assert rows[0] == {
        "topic": "t",
        "partition": 0,
        "leader": 1,
        "replicas": [1, 2, 4],
        "isr": [1, 2],
        "elr": None,
        "offline_replicas": [],
        "reassigning": "+4 -2",
    }
    (doc,) = docs
    assert doc["partitions"][1]["leader"] == -1
    assert {k: doc[k] for k in ("topic", "topic_id", "partition_count", "min_insync_replicas")} == {
        "topic": "t",
        "topic_id": "id-t",
        "partition_count": 2,
        "min_insync_replicas": 1,
    }
    # A reassignment's added replica is not part of the factor (kafka-topics.sh's count).
    assert doc["replication_factor"] == 3
    assert doc["partitions"][0]["adding_replicas"] == [4]


def test_a_filter_leaves_out_topics_with_no_partition_it_keeps_but_counts_all_partitions():
    healthy = topic("healthy", [HEALTHY])
    rows, docs = describe_rows([healthy, ORDERS], LIVE, Health(under_replicated=True))
    assert [(r["topic"], r["partition"]) for r in rows] == [("orders", 1), ("orders", 2)]
    assert [d["topic"] for d in docs] == ["orders"]
    assert docs[0]["partition_count"] == 5 and len(docs[0]["partitions"]) == 2
    rows, docs = describe_rows([healthy], LIVE)
    assert len(rows) == 1 and [d["topic"] for d in docs] == ["healthy"]


def test_list_rows_give_partition_count_and_replication_factor():
    internal = TopicState("__consumer_offsets", True, [part(0, 1, [1, 2], [1, 2])])
    assert list_rows([ORDERS, internal]) == [
        {"topic": "orders", "partitions": 5, "replication_factor": 3, "internal": False},
        {"topic": "__consumer_offsets", "partitions": 1, "replication_factor": 2, "internal": True},
    ]


def test_reassigning_lists_replicas_being_added_then_removed():
    assert reassigning(HEALTHY) == ""
    p = part(0, 1, [1, 2, 5, 6], [1, 2], adding_replicas=[5, 6], removing_replicas=[1])
    assert reassigning(p) == "+5 +6 -1"
