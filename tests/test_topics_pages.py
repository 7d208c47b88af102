"""``topics describe`` at scale: DescribeTopicPartitions a page (2,000 partitions) per request, all
the pages at once (the topics grouped into runs that fill at most a page each); with a health
filter, only for the topics it keeps."""

from __future__ import annotations

from kctl.broker.topics import pages


def test_topics_fill_pages_in_name_order_without_splitting_a_topic() -> None:
    counts = {f"scale-{i:02d}": 1000 for i in range(5)}
    assert pages(counts) == [
        ["scale-00", "scale-01"],
        ["scale-02", "scale-03"],
        ["scale-04"],
    ]


def test_a_topic_larger_than_a_page_is_a_run_of_its_own_and_small_ones_share() -> None:
    counts = {"a": 1, "b": 5000, "c": 3, "d": 0, "e": 1998}
    assert pages(counts) == [["a"], ["b"], ["c", "d"], ["e"]]
    assert pages({"a": 1, "b": 2}, page=3) == [["a", "b"]]
    assert pages({}) == []
    assert pages({"empty": 0}) == [["empty"]]


def test_a_filter_reads_detail_for_the_topics_it_keeps_and_shows_them_as_unfiltered(
    kctl, new_topic
) -> None:
    """With a health filter the ids, ELRs and configs are read for the topics with a kept
    partition only: what those topics show is what the unfiltered describe shows."""
    import json

    a, b = new_topic(partitions=3), new_topic(partitions=2)
    everything = json.loads(kctl("topics", "describe", a, b, "-o", "json").stdout)
    # Single-replica topics: every partition's ISR (1) equals min.insync.replicas (1).
    kept = json.loads(kctl("topics", "describe", a, b, "--at-min-isr", "-o", "json").stdout)
    assert kept == everything
    assert all(doc["topic_id"] and doc["partitions"][0]["elr"] is not None for doc in kept)
    assert (
        json.loads(kctl("topics", "describe", a, b, "--under-replicated", "-o", "json").stdout)
        == []
    )


def test_requests_go_in_rounds_of_at_most_five_per_broker() -> None:
    """kafka-python 3.0 never sends the requests queued behind twice its in-flight limit (5)
    on one connection: they time out. One broker with 10 pages (20,000 partitions) must not."""
    from kctl.broker.kafka_python import waves

    requests = [(1, f"r{i}") for i in range(11)] + [(2, "s0"), (2, "s1")]
    rounds = waves(requests)
    assert [[requests[i] for i in r if requests[i][0] == 1] for r in rounds] == [
        requests[0:5], requests[5:10], requests[10:11]]  # fmt: skip
    assert [requests[i] for i in rounds[0][-2:]] == [(2, "s0"), (2, "s1")]
    assert sorted(i for r in rounds for i in r) == list(range(len(requests)))
    assert waves([]) == []
    assert waves(requests, 20) == [list(range(len(requests)))]


def test_describe_in_many_rounds_reads_what_one_round_reads(
    bootstrap: str, new_topic, monkeypatch
) -> None:
    """On the real cluster: a page of one partition and one request in flight per broker (12
    topics: 12 DescribeTopicPartitions in 4-5 rounds) give the same ids and ELRs."""
    from kctl.broker import kafka_python, topics
    from kctl.broker.client import Admin
    from kctl.broker.connect import Connection

    names = sorted(new_topic(partitions=1) for _ in range(12))

    def described() -> list[tuple[str, str | None, object]]:
        _, states = topics.describe_topics(
            Admin(Connection(bootstrap_servers=bootstrap)), names, detail=True
        )
        return [(t.topic, t.topic_id, [p.elr for p in t.partitions]) for t in states]

    whole = described()
    monkeypatch.setattr(topics, "PAGE", 1)
    monkeypatch.setattr(kafka_python, "IN_FLIGHT", 1)
    assert described() == whole
    assert all(topic_id and elr == [[]] for _, topic_id, elr in whole)
