"""``topics describe`` reads DescribeTopicPartitions a page (2,000 partitions) per request, all
the pages at once: the topics grouped into runs that fill at most a page each."""

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
