"""kctl.broker.record_times on the real cluster: the time of the first record not consumed, read
with one Fetch per partition leader, checked against records produced with known timestamps
(and read back by librdkafka's consumer, an independent reader)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import on_tansu, unique

from kctl.lag.record_time import RecordTime

T0 = int(time.time() * 1000) - 120_000  # two minutes old
STEP = 1000  # records spaced by a second
VALUE = b"time lag " * 20  # compresses well: many records per compressed batch


@pytest.fixture
def kadmin(bootstrap: str) -> Any:
    from kctl.broker.client import Admin
    from kctl.broker.connect import Connection

    return Admin(Connection(bootstrap_servers=bootstrap))


@pytest.fixture
def lazy(kadmin: Any) -> Iterator[Any]:
    from kctl.broker.kafka_python import LazyClient

    with LazyClient(kadmin) as client:
        yield client


def produce(
    bootstrap: str,
    topic: str,
    counts: dict[int, int],
    *,
    flush_every: int | None = None,
    **config: Any,
) -> None:
    """``counts[p]`` records into partition p, record i stamped T0 + i * STEP; librdkafka
    batches them (linger) unless ``flush_every`` flushes after that many records."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 500, **config})
    for i in range(max(counts.values())):
        for p, n in counts.items():
            if i < n:
                producer.produce(topic, VALUE, key=b"%d" % i, partition=p, timestamp=T0 + i * STEP)
        if flush_every and (i + 1) % flush_every == 0:
            assert producer.flush(30) == 0
    assert producer.flush(30) == 0


def consumed_at(bootstrap: str, topic: str, partition: int, offset: int) -> tuple[int, int]:
    """(offset, timestamp) of the first record librdkafka's consumer reads from ``offset``."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": unique("g"), "enable.auto.commit": False}
    )
    try:
        consumer.assign([TopicPartition(topic, partition, offset)])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                return msg.offset(), msg.timestamp()[1]
        pytest.fail(f"no record read from {topic}[{partition}] at {offset}")
    finally:
        consumer.close()


def counted_fetches(client: Any) -> Counter[int]:
    """Count the Fetch requests kafka-python's connection manager is handed, per broker."""
    manager = client._manager
    plain = manager.send
    sent: Counter[int] = Counter()

    def send(request: Any, node_id: int | None = None, **kw: Any) -> Any:
        if type(request).__name__ == "FetchRequest":
            sent[-1 if node_id is None else node_id] += 1
        return plain(request, node_id=node_id, **kw)

    manager.send = send
    return sent


def leaders_of(kadmin: Any, topic: str) -> dict[int, int]:
    md = kadmin.metadata(topic)
    return {p: m.leader for p, m in md.topics[topic].partitions.items()}


@pytest.mark.parametrize("codec", ["zstd", "snappy", "lz4", "gzip"])
def test_position_inside_a_compressed_batch_gives_the_record_there(
    bootstrap, new_topic, kadmin, lazy, codec
):
    from kctl.broker.record_times import first_record_times

    # three partitions on one leader: only the first non-empty one of an answer gets its whole
    # batch beyond the per-partition limit (KIP-74); the others are cut and read again whole
    brokers = sorted(kadmin.metadata().brokers)
    topic = new_topic(assignment=[[brokers[0]]] * 3)
    produce(bootstrap, topic, {0: 200, 1: 200, 2: 200}, **{"compression.type": codec})
    positions = {(topic, 0): 37, (topic, 1): 150, (topic, 2): 199}
    sent = counted_fetches(lazy.client)
    got = first_record_times(kadmin, positions, client=lazy)
    for (t, p), at in positions.items():
        assert got[(t, p)] == RecordTime(at, T0 + at * STEP, "CreateTime")
        assert consumed_at(bootstrap, t, p, at) == (at, T0 + at * STEP)
    # the batches were big compressed ones (more than the first round's bytes): a second round
    assert sent == {brokers[0]: 2}


def test_position_at_a_batch_start_gives_that_records_time(bootstrap, new_topic, kadmin):
    from kctl.broker.record_times import first_record_times

    topic = new_topic(partitions=1)
    produce(bootstrap, topic, {0: 30}, flush_every=10, **{"compression.type": "lz4"})
    for at in (0, 10, 20):
        got = first_record_times(kadmin, {(topic, 0): at})
        assert got == {(topic, 0): RecordTime(at, T0 + at * STEP, "CreateTime")}


def test_log_append_time_topic_gives_the_brokers_append_time(bootstrap, new_topic, kadmin):
    from kctl.broker.record_times import first_record_times

    topic = new_topic(partitions=1, config={"message.timestamp.type": "LogAppendTime"})
    before = int(time.time() * 1000)
    produce(bootstrap, topic, {0: 50}, **{"compression.type": "zstd"})
    after = int(time.time() * 1000)
    got = first_record_times(kadmin, {(topic, 0): 25})[(topic, 0)]
    assert got.timestamp_type == "LogAppendTime" and got.offset == 25
    assert before <= got.timestamp_ms <= after  # not the producer's two-minute-old stamp
    assert consumed_at(bootstrap, topic, 0, 25) == (25, got.timestamp_ms)


def test_position_on_a_commit_marker_gives_the_next_data_records_time(bootstrap, new_topic, kadmin):
    from confluent_kafka import Producer

    from kctl.broker.groups import watermarks
    from kctl.broker.record_times import first_record_times

    topic = new_topic(partitions=1)
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": unique("tx")})
    producer.init_transactions(30)
    stamps = iter(range(100))
    for n in (3, 2):  # offsets 0-2, marker 3, offsets 4-5, marker 6
        producer.begin_transaction()
        for _ in range(n):
            producer.produce(topic, VALUE, partition=0, timestamp=T0 + next(stamps) * STEP)
        producer.commit_transaction(30)
    assert watermarks(kadmin, [(topic, 0)]) == {(topic, 0): (0, 7)}
    assert consumed_at(bootstrap, topic, 0, 3) == (4, T0 + 3 * STEP)  # 3 is the marker
    got = first_record_times(kadmin, {(topic, 0): 3})
    assert got == {(topic, 0): RecordTime(4, T0 + 3 * STEP, "CreateTime")}
    # only the last commit marker lies between the position and the log end: left out
    assert first_record_times(kadmin, {(topic, 0): 6}) == {}


@pytest.mark.skipif(on_tansu(), reason="Tansu crashes on DeleteRecords (docs/local.md)")
def test_records_deleted_under_the_position_give_the_log_starts_record(
    bootstrap, new_topic, kadmin
):
    from kctl.broker.offsets import delete_records
    from kctl.broker.record_times import first_record_times

    topic = new_topic(partitions=1)
    produce(bootstrap, topic, {0: 10}, flush_every=1)
    assert delete_records(kadmin, {(topic, 0): 6}) == {(topic, 0): 6}
    got = first_record_times(kadmin, {(topic, 0): 2})
    assert got == {(topic, 0): RecordTime(6, T0 + 6 * STEP, "CreateTime")}


def test_position_at_the_log_end_is_left_out(bootstrap, new_topic, kadmin):
    from kctl.broker.record_times import first_record_times

    topic = new_topic(partitions=2)
    produce(bootstrap, topic, {0: 5})
    assert first_record_times(kadmin, {(topic, 0): 5, (topic, 1): 0}) == {}
    assert first_record_times(kadmin, {}) == {}


def test_many_partitions_on_every_leader_take_one_fetch_per_leader(
    bootstrap, new_topic, kadmin, lazy
):
    from kctl.broker.record_times import first_record_times

    topics = [new_topic(partitions=12), new_topic(partitions=9)]
    for topic in topics:
        # a batch per record: first batches smaller than the first round's limit
        partitions = range(12 if topic == topics[0] else 9)
        produce(bootstrap, topic, {p: 3 for p in partitions}, flush_every=1)
    leaders = {(t, p): node for t in topics for p, node in leaders_of(kadmin, t).items()}
    assert len(set(leaders.values())) == 3, leaders  # every broker leads some
    # positions where a small batch's header answers: every partition in the first round
    positions = {tp: 1 for tp in leaders}
    sent = counted_fetches(lazy.client)
    got = first_record_times(kadmin, positions, client=lazy)
    assert sent == {node: 1 for node in set(leaders.values())}
    assert got == {tp: RecordTime(1, T0 + STEP, "CreateTime") for tp in leaders}


def test_a_group_reader_shares_its_connections(bootstrap, new_topic, kadmin):
    from kctl.broker.groups import GroupReader
    from kctl.broker.record_times import first_record_times

    topic = new_topic(partitions=3)
    produce(bootstrap, topic, {0: 4, 1: 4, 2: 4})
    with GroupReader(kadmin) as reader:
        client = reader.client
        got = first_record_times(kadmin, {(topic, p): 3 for p in range(3)}, client=reader)
        assert reader.client is client  # the reader's own pool, still open
    assert got == {(topic, p): RecordTime(3, T0 + 3 * STEP, "CreateTime") for p in range(3)}


def test_a_stale_leader_is_asked_once_then_the_new_one(
    bootstrap, new_topic, kadmin, lazy, monkeypatch
):
    """The first metadata names a broker that does not lead the partition (as after a leader
    move): that broker answers NOT_LEADER_OR_FOLLOWER, metadata is read again, the leader
    answers."""
    from kctl.broker import record_times as R

    brokers = sorted(kadmin.metadata().brokers)
    topic = new_topic(assignment=[[brokers[0]]])
    produce(bootstrap, topic, {0: 5})
    real = R._leaders
    calls = []

    def stale_first(admin: Any, tps: list[Any]) -> dict[Any, int]:
        calls.append(list(tps))
        found = real(admin, tps)
        return {tp: brokers[1] for tp in found} if len(calls) == 1 else found

    monkeypatch.setattr(R, "_leaders", stale_first)
    sent = counted_fetches(lazy.client)
    got = R.first_record_times(kadmin, {(topic, 0): 2}, client=lazy)
    assert got == {(topic, 0): RecordTime(2, T0 + 2 * STEP, "CreateTime")}
    assert sent == {brokers[1]: 1, brokers[0]: 1} and len(calls) == 2


def test_a_partition_that_cannot_be_read_is_named(bootstrap, new_topic, kadmin):
    from kctl.broker.record_times import first_record_times
    from kctl.errors import KctlError

    topic = new_topic(partitions=1)
    produce(bootstrap, topic, {0: 3})
    gone = (unique("absent"), 0)
    errors: dict[tuple[str, int], str] = {}
    got = first_record_times(kadmin, {(topic, 0): 1, gone: 0}, errors=errors)
    assert got == {(topic, 0): RecordTime(1, T0 + STEP, "CreateTime")}
    assert errors == {gone: "UNKNOWN_TOPIC_OR_PARTITION"}
    with pytest.raises(KctlError, match=rf"{gone[0]}\[0\]: UNKNOWN_TOPIC_OR_PARTITION"):
        first_record_times(kadmin, {(topic, 0): 1, gone: 0})


def test_first_batches_larger_than_the_first_limit_take_one_more_fetch_per_leader(
    bootstrap, new_topic, kadmin, lazy
):
    """Kafka gives a partition whose first batch exceeds its limit no bytes (except the first
    non-empty partition of an answer): those are asked again, all in one more Fetch per leader."""
    from kctl.broker.record_times import PARTITION_BYTES, first_record_times

    topic = new_topic(partitions=9)
    produce(bootstrap, topic, {p: 100 for p in range(9)})  # one batch of ~20 KB per partition
    leaders = {(topic, p): node for p, node in leaders_of(kadmin, topic).items()}
    assert len(set(leaders.values())) == 3, leaders
    positions = {(topic, p): (0 if p % 2 else 10 * p + 3) for p in range(9)}
    sent = counted_fetches(lazy.client)
    got = first_record_times(kadmin, positions, client=lazy)
    assert got == {tp: RecordTime(at, T0 + at * STEP, "CreateTime") for tp, at in positions.items()}
    assert sent == {node: 2 for node in set(leaders.values())}
    assert len(VALUE) * 100 > PARTITION_BYTES * 10  # the batches really were large


def test_follow_up_rounds_are_bounded_and_the_partition_left_unread_is_named(
    bootstrap, new_topic, kadmin, monkeypatch
):
    from kctl.broker import record_times as R

    brokers = sorted(kadmin.metadata().brokers)
    topic = new_topic(assignment=[[brokers[0]], [brokers[0]]])
    produce(bootstrap, topic, {0: 100, 1: 100})  # a ~20 KB batch each
    monkeypatch.setattr(R, "MAX_FOLLOW_UPS", 0)
    errors: dict[tuple[str, int], str] = {}
    got = R.first_record_times(kadmin, {(topic, 0): 5, (topic, 1): 5}, errors=errors)
    # the first partition of the answer got its whole batch; the second got no bytes
    assert got == {(topic, 0): RecordTime(5, T0 + 5 * STEP, "CreateTime")}
    assert errors.keys() == {(topic, 1)}
    assert "no bytes from offset 5 with 512 allowed" in errors[(topic, 1)]
