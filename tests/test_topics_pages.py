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
