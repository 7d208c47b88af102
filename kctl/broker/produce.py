"""Producing records (kafka-console-producer.sh, kcat -P).

The hot loops avoid per-record Python work where they can: input is read in large chunks and
split in C (:mod:`kctl.produce_input`), ``produce()`` gets positional arguments only, delivery
reports come back for failures only (``delivery.report.only.error``).
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import IO, Any

from kctl.broker.client import Admin, ErrorLog, error_text, make_producer, translate
from kctl.broker.connect import Connection
from kctl.errors import KctlError, NotFoundError
from kctl.produce_input import (
    Record,
    parse_json_record,
    rate_limited_lines,
    read_chunks,
    split_lines,
)

POLL_EVERY = 4096
# Without --linger-ms: full batches (batch.size, 1 MB by default) rather than librdkafka's 5 ms
# default; fewer, larger requests cost both the client and the broker less CPU per record.
# The end of input and a signal flush at once, whatever the linger.
LINGER_MS = 50


@dataclass
class ProduceOptions:
    topic: str
    partition: int | None = None
    partitioner: str = "murmur2_random"
    headers: list[tuple[str, bytes]] = field(default_factory=list)
    compression: str = "none"
    acks: str = "all"
    idempotence: bool = True
    linger_ms: int | None = None
    batch_size: int | None = None
    rate: float | None = None
    transactional_id: str | None = None
    key_separator: bytes | None = None
    null_marker: bytes | None = None
    jsonl: bool = False


@dataclass
class ProduceSummary:
    delivered: int = 0
    failed: int = 0
    bytes: int = 0
    seconds: float = 0.0
    first_error: str | None = None
    interrupted: bool = False
    aborted: bool = False
    # Bad input that stopped reading (malformed JSON line, partition out of range): what was
    # handed to the client before it is still flushed and counted; the caller reports this last.
    error: KctlError | None = None

    @property
    def rate(self) -> float:
        return self.delivered / self.seconds if self.seconds > 0 else 0.0


class _Stop(Exception):
    """A signal arrived while we were blocked reading input."""


class _Signals:
    """SIGINT/SIGTERM stop reading; records already handed to the producer are still flushed.
    The handler raises only while we wait for input, never inside produce() bookkeeping."""

    def __init__(self) -> None:
        self.stopped = False
        self.reading = False
        self.previous: dict[int, Any] = {}

    def _handler(self, signum: int, frame: Any) -> None:
        self.stopped = True
        if self.reading:
            raise _Stop()

    def __enter__(self) -> _Signals:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.previous[sig] = signal.signal(sig, self._handler)
        return self

    def __exit__(self, *exc: Any) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)


def check_topic(admin: Admin, topic: str, partition: int | None) -> int:
    """The topic's partition count; the topic (and partition) must exist."""
    md = admin.metadata()
    tm = md.topics.get(topic)
    if tm is None or (tm.error is not None and not tm.partitions):
        raise NotFoundError(f"unknown topic {topic!r}", "not in the cluster's metadata")
    count = len(tm.partitions)
    if partition is not None and partition not in tm.partitions:
        raise KctlError(
            f"partition {partition} of topic {topic!r} does not exist",
            f"the topic has partitions 0-{count - 1}",
        )
    return count


def producer_config(opts: ProduceOptions) -> dict[str, Any]:
    cfg: dict[str, Any] = {
        "partitioner": opts.partitioner,
        "compression.type": opts.compression,
        "acks": opts.acks,
        "enable.idempotence": opts.idempotence,
        "delivery.report.only.error": True,
        "queue.buffering.max.messages": 1_000_000,
        "linger.ms": LINGER_MS if opts.linger_ms is None else opts.linger_ms,
    }
    if opts.batch_size is not None:
        cfg["batch.size"] = opts.batch_size
    if opts.transactional_id:
        cfg["transactional.id"] = opts.transactional_id
    return cfg


def produce(
    conn: Connection,
    opts: ProduceOptions,
    sources: Iterable[tuple[str, IO[bytes]]] | None,
    single: Record | None = None,
    progress: Callable[[int], None] | None = None,
) -> ProduceSummary:
    """Send every line of every source (or the one ``single`` record); never loses what was
    handed to the client: a signal or bad input stops reading, then everything in flight is
    flushed and counted (bad input is returned in ``summary.error``, not raised)."""
    from confluent_kafka import KafkaException

    summary = ProduceSummary()
    failures: list[Any] = []

    def on_error(err: Any, msg: Any) -> None:  # delivery.report.only.error: failures only
        if err is not None:
            failures.append(err)

    # The producer first: its connection, and its producer id, are under way while we check
    # the topic through its own metadata (no second client, no second connection).
    producer, log = make_producer(conn, on_delivery=on_error, **producer_config(opts))
    txn = bool(opts.transactional_id)
    nudge = _PidNudge(producer, opts.topic) if opts.idempotence and not txn else None
    partitions = check_topic(Admin(conn, producer, log), opts.topic, opts.partition)
    started = time.monotonic()
    with _Signals() as sig:
        sender = Sender(producer, opts, partitions, sig, failures, nudge)
        try:
            if txn:
                try:
                    producer.init_transactions(conn.timeout)
                    producer.begin_transaction()
                except KafkaException as exc:
                    raise translate(exc, "starting the transaction") from exc
            if single is not None:
                sender.one(single)
            else:
                sender.sources(sources or (), progress)
        except _Stop:
            pass
        except KctlError as exc:
            if not sender.sent and not txn:
                raise  # nothing was sent: a plain one-line error
            summary.error = exc
        except BaseException:
            _finish(producer, log, summary, failures, sender.sent, conn, txn, False, nudge)
            summary.seconds = time.monotonic() - started
            raise
        summary.interrupted = sig.stopped
        commit = not sig.stopped and summary.error is None
        if txn and summary.error is not None:
            summary.first_error = summary.error.line()
        _finish(producer, log, summary, failures, sender.sent, conn, txn, commit, nudge)
    summary.seconds = time.monotonic() - started
    summary.bytes = sender.nbytes
    return summary


class _PidNudge:
    """librdkafka's idempotent producer asks for its producer id (InitProducerId) as it starts,
    before it has connected to a broker learned from the bootstrap metadata, finds none, and
    retries only after a fixed 500 ms; nothing is sent until then. A metadata response makes it
    retry at once, so for the first moments we ask for the topic's metadata now and then,
    without waiting for the answer (a timed-out request is still answered and handled)."""

    WINDOW = 0.6  # s; librdkafka's own retry has fired by then
    EVERY = 0.02  # s

    def __init__(self, producer: Any, topic: str) -> None:
        self.producer = producer
        self.topic = topic
        self.until = time.monotonic() + self.WINDOW
        self.next = 0.0

    def __call__(self) -> bool:
        """Nudge if it is time; False once the window is over."""
        now = time.monotonic()
        if now >= self.until:
            return False
        if now >= self.next:
            from confluent_kafka import KafkaException

            self.next = now + self.EVERY
            with contextlib.suppress(KafkaException):
                self.producer.list_topics(self.topic, timeout=0.0001)
        return True


def _finish(
    producer: Any,
    log: ErrorLog,
    summary: ProduceSummary,
    failures: list[Any],
    sent: int,
    conn: Connection,
    txn: bool,
    commit: bool,
    nudge: _PidNudge | None = None,
) -> None:
    """Flush (bounded), then count: delivered = handed over - failed - still queued."""
    from confluent_kafka import KafkaException

    deadline = time.monotonic() + max(30.0, conn.timeout * 2)
    remaining = len(producer)
    while remaining and nudge is not None and nudge():
        remaining = producer.flush(_PidNudge.EVERY)
    remaining = producer.flush(1.0) if remaining else 0
    while remaining and time.monotonic() < deadline:
        remaining = producer.flush(1.0)
    failed = len(failures) + remaining
    if failures:
        summary.first_error = f"{failures[0].name()}: {error_text(KafkaException(failures[0]))}"
    elif remaining:
        last = log.errors[-1].str() if log.errors else "no answer from the broker"
        summary.first_error = f"{remaining} record(s) still unsent after the flush timeout: {last}"
    if txn:
        if commit and not failed:
            try:
                producer.commit_transaction(conn.timeout)
                summary.delivered = sent
                return
            except KafkaException as exc:
                summary.first_error = summary.first_error or translate(exc, "commit").why
        with contextlib.suppress(KafkaException):
            producer.abort_transaction(conn.timeout)
        summary.aborted = True
        summary.failed = sent
        summary.first_error = summary.first_error or "interrupted"
        return
    summary.failed = failed
    summary.delivered = sent - failed


class Sender:
    """Hands records to the producer, one loop per input shape; ``sent`` and ``nbytes`` (records
    handed to the client, and their key + value bytes) stay exact even when a loop raises."""

    def __init__(
        self,
        producer: Any,
        opts: ProduceOptions,
        partitions: int,
        sig: _Signals,
        failures: list[Any],
        nudge: _PidNudge | None = None,
    ) -> None:
        self.producer = producer
        self.opts = opts
        self.partitions = partitions
        self.sig = sig
        self.failures = failures
        self.nudge = nudge
        self.headers = opts.headers or None
        self.sent = 0
        self.nbytes = 0
        self.line_no = 0
        self.started = time.monotonic()

    def send(
        self, value: bytes | None, key: bytes | None, hdrs: Any, part: int | None, ts: Any
    ) -> None:
        """One record with every option; waits while the client's queue is full."""
        from confluent_kafka import KafkaException

        kwargs: dict[str, Any] = {}
        if hdrs:
            kwargs["headers"] = hdrs
        if part is not None:
            if part >= self.partitions:
                raise KctlError(
                    f"partition {part} of topic {self.opts.topic!r} does not exist",
                    f"the topic has partitions 0-{self.partitions - 1}",
                )
            kwargs["partition"] = part
        if ts is not None:
            kwargs["timestamp"] = ts
        while True:
            try:
                self.producer.produce(self.opts.topic, value, key, **kwargs)
                return
            except BufferError:
                self.producer.poll(0.05)
            except KafkaException as exc:  # refused before sending (e.g. too large)
                self.failures.append(exc.args[0])
                return

    def one(self, record: Record) -> None:
        """The single record of ``--value``/``--key``."""
        value, key, hdrs, part, ts = record
        merged = (self.headers or []) + (hdrs or []) or None
        self.send(value, key, merged, self.opts.partition if part is None else part, ts)
        self.sent, self.nbytes = 1, len(value or b"") + len(key or b"")

    def _shape(self) -> Callable[[list[bytes], int], None]:
        opts = self.opts
        simple = (
            not opts.jsonl
            and opts.null_marker is None
            and self.headers is None
            and opts.partition is None
        )
        if simple and opts.key_separator is None:
            return self.plain
        if simple:
            return self.keyed
        return self.general

    def sources(
        self, sources: Iterable[tuple[str, IO[bytes]]], progress: Callable[[int], None] | None
    ) -> None:
        """Every line of every source, until the end or a signal."""
        loop = self._shape()
        poll = self.producer.poll
        for _name, stream in sources:
            lines_iter = split_lines(read_chunks(stream, progress))
            while True:
                self.sig.reading = True  # a signal while blocked on input raises _Stop here
                try:
                    got = next(lines_iter, None)
                finally:
                    self.sig.reading = False
                if got is None:
                    break
                all_lines, size = got
                for lines in rate_limited_lines(all_lines, self.opts.rate):
                    if lines is not all_lines:  # a --rate slice
                        size = sum(map(len, lines))
                    loop(lines, size)
                    self._pace()
                    if self.sig.stopped:
                        return
                poll(0)
                if self.nudge is not None and not self.nudge():
                    self.nudge = None
                if self.sig.stopped:
                    return

    def _pace(self) -> None:
        rate = self.opts.rate
        if not rate:
            return
        ahead = self.started + self.sent / rate - time.monotonic()
        while ahead > 0 and not self.sig.stopped:
            self.producer.poll(min(ahead, 0.1))
            ahead = self.started + self.sent / rate - time.monotonic()

    def plain(self, lines: list[bytes], size: int) -> None:
        """The fast path: value only, positional arguments, counts taken per chunk."""
        from confluent_kafka import KafkaException

        produce_, topic = self.producer.produce, self.opts.topic
        for line in lines:
            try:
                produce_(topic, line)
            except (BufferError, KafkaException):
                self.send(line, None, None, None, None)
        self.sent += len(lines)
        self.nbytes += size
        self.producer.poll(0)

    def keyed(self, lines: list[bytes], size: int) -> None:
        """KEY<sep>VALUE without other options: positional arguments too."""
        from confluent_kafka import KafkaException

        produce_, topic = self.producer.produce, self.opts.topic
        ksep = self.opts.key_separator
        assert ksep is not None
        unkeyed = 0  # lines without the separator (rare: counted there)
        for line in lines:
            k, sep, v = line.partition(ksep)
            if sep:
                try:
                    produce_(topic, v, k)
                except (BufferError, KafkaException):
                    self.send(v, k, None, None, None)
            else:
                unkeyed += 1
                try:
                    produce_(topic, line)
                except (BufferError, KafkaException):
                    self.send(line, None, None, None, None)
        self.sent += len(lines)
        self.nbytes += size - (len(lines) - unkeyed) * len(ksep)
        self.producer.poll(0)

    def general(self, lines: list[bytes], size: int) -> None:
        """JSON lines, headers, a fixed partition, null markers: one record at a time."""
        for line in lines:
            self.line_no += 1
            record = self._record(line)
            if record is None:
                continue
            value, key, hdrs, part, ts = record
            self.send(value, key, hdrs, part, ts)
            self.sent += 1
            self.nbytes += len(value or b"") + len(key or b"")
            if not self.sent % POLL_EVERY:
                self.producer.poll(0)

    def _record(self, line: bytes) -> Record | None:
        opts = self.opts
        if opts.jsonl:
            if not line.strip():
                return None
            value, key, hdrs, part, ts = parse_json_record(line, self.line_no)
            if self.headers:
                hdrs = self.headers + (hdrs or [])
            return value, key, hdrs, opts.partition if part is None else part, ts
        value, key = line, None
        if opts.key_separator is not None:
            k, sep, v = line.partition(opts.key_separator)
            if sep:
                key, value = k, v
        if opts.null_marker is not None:
            if value == opts.null_marker:
                value = None
            if key == opts.null_marker:
                key = None
        return value, key, self.headers, opts.partition, None
