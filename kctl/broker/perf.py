"""Load generators (kafka-producer-perf-test.sh / kafka-consumer-perf-test.sh)."""

from __future__ import annotations

import os
import time
from array import array
from dataclasses import asdict, dataclass
from typing import Any

from kctl.broker.client import make_consumer, make_producer
from kctl.broker.connect import Connection
from kctl.errors import KctlError


@dataclass
class PerfResult:
    records: int
    bytes: int
    seconds: float
    failed: int
    latency_avg_ms: float | None
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    latency_p99_ms: float | None
    latency_max_ms: float | None
    latency_kind: str

    @property
    def records_per_s(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else 0.0

    @property
    def mb_per_s(self) -> float:
        return self.bytes / 1e6 / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["records_per_s"] = round(self.records_per_s, 1)
        doc["mb_per_s"] = round(self.mb_per_s, 3)
        doc["seconds"] = round(self.seconds, 3)
        return doc


def percentiles(values: array, kind: str) -> dict[str, Any]:
    """Average, p50/p95/p99 (nearest rank) and max of latencies in seconds, as ms."""
    if not values:
        return dict.fromkeys(("avg", "p50", "p95", "p99", "max"))
    data = sorted(values)
    n = len(data)

    def rank(q: float) -> float:
        return round(data[min(n - 1, max(0, int(q * n + 0.5) - 1))] * 1000, 3)

    return {
        "avg": round(sum(data) / n * 1000, 3),
        "p50": rank(0.50),
        "p95": rank(0.95),
        "p99": rank(0.99),
        "max": round(data[-1] * 1000, 3),
    }


def _result(
    records: int, nbytes: int, seconds: float, failed: int, lat: array, kind: str
) -> PerfResult:
    p = percentiles(lat, kind)
    return PerfResult(
        records, nbytes, seconds, failed, p["avg"], p["p50"], p["p95"], p["p99"], p["max"], kind
    )


DEFAULT_MESSAGE_MAX_BYTES = 1_000_000  # librdkafka's message.max.bytes


def _refused(exc: Any, record_size: int, limit: Any) -> KctlError:
    """What produce() raised at once, before sending: a record above the producer's
    message.max.bytes names that limit; anything else is the client's error line."""
    from confluent_kafka import KafkaError

    from kctl.errors import client_library_error

    err = exc.args[0] if exc.args else None
    if isinstance(err, KafkaError) and err.code() == KafkaError.MSG_SIZE_TOO_LARGE:
        return KctlError(
            f"--record-size {record_size} is too large",
            f"above the producer's message.max.bytes, {limit}: raise it with --producer-prop "
            "message.max.bytes=N, and the topic's max.message.bytes",
        )
    return client_library_error(exc) or KctlError("producing failed", str(exc))


def perf_produce(
    conn: Connection,
    topic: str,
    *,
    num_records: int,
    record_size: int,
    throughput: float,
    props: dict[str, Any],
) -> PerfResult:
    """Send ``num_records`` records of ``record_size`` random bytes, at most ``throughput``
    records/s (<= 0: unlimited). Latency: produce() call to delivery report, per record."""
    from confluent_kafka import KafkaError, KafkaException

    from kctl.broker.client import Admin
    from kctl.broker.produce import check_topic

    check_topic(Admin(conn), topic, None)
    latencies = array("d")
    failures: list[Any] = []

    def on_delivery(err: Any, msg: Any) -> None:
        if err is not None:
            failures.append(err)
        else:
            latencies.append(msg.latency())

    cfg: dict[str, Any] = {"linger.ms": 5, "queue.buffering.max.messages": 1_000_000}
    cfg.update(props)
    producer, _log = make_producer(conn, on_delivery=on_delivery, **cfg)
    payload = os.urandom(record_size)
    produce, poll = producer.produce, producer.poll
    limit = {**cfg, **conn.extra}.get("message.max.bytes", DEFAULT_MESSAGE_MAX_BYTES)
    start = time.monotonic()
    for i in range(num_records):
        while True:
            try:
                produce(topic, payload)
                break
            except BufferError:
                poll(0.01)
            except KafkaException as exc:
                raise _refused(exc, record_size, limit) from None
        if not i % 100:
            poll(0)
            if throughput > 0:
                ahead = start + (i + 1) / throughput - time.monotonic()
                while ahead > 0:
                    poll(ahead)
                    ahead = start + (i + 1) / throughput - time.monotonic()
    remaining = producer.flush(max(30.0, conn.timeout))
    seconds = time.monotonic() - start
    failed = len(failures) + remaining
    delivered = num_records - failed
    if failures and not delivered:
        why = str(failures[0].str())
        if failures[0].code() == KafkaError.MSG_SIZE_TOO_LARGE:
            why += f": a record of {record_size} bytes is above the topic's max.message.bytes"
        raise KctlError(f"no record delivered to {topic!r}", why)
    return _result(delivered, delivered * record_size, seconds, failed, latencies, "delivery")


def perf_consume(
    conn: Connection,
    topic: str,
    *,
    num_records: int,
    timeout: float,
    props: dict[str, Any],
) -> PerfResult:
    """Read ``num_records`` records from the start of every partition (or until ``timeout``
    seconds without a record). Latency: each consume() call that returned records."""
    from confluent_kafka import OFFSET_BEGINNING, TopicPartition

    from kctl.broker.client import Admin
    from kctl.broker.offsets import partitions_of

    parts = [p for _, p in partitions_of(Admin(conn), [topic])]
    cfg: dict[str, Any] = {"fetch.wait.max.ms": 100, "queued.max.messages.kbytes": 262144}
    cfg.update(props)
    consumer, _log = make_consumer(conn, **cfg)
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in parts])
    latencies = array("d")
    count = nbytes = 0
    start = time.monotonic()
    last = start
    try:
        while count < num_records:
            t0 = time.monotonic()
            msgs = consumer.consume(min(10_000, num_records - count), 0.5)
            t1 = time.monotonic()
            good = [m for m in msgs if m.error() is None]
            if not good:
                if t1 - last > timeout:
                    break
                continue
            latencies.append(t1 - t0)
            last = t1
            count += len(good)
            nbytes += sum(len(m.value() or b"") for m in good)
    finally:
        consumer.close()
    seconds = (last if count else time.monotonic()) - start
    return _result(count, nbytes, seconds, num_records - count, latencies, "fetch batch")
