"""Producing records (kafka-console-producer.sh, kcat -P).

The hot loops avoid per-record Python work where they can: input is read in large chunks and
split in C (:mod:`kctl.produce.lines`), ``produce()`` gets positional arguments only. Delivery
reports come back for every record (a C call into a small callback, ~0.2 µs a record): the
summary gives each partition's first and last acknowledged offset.

Plain and keyed lines from files or stdin (--rate too; no transaction) go through kctl's own
producer on librdkafka's C API where it can be used (:mod:`kctl.broker.native_producer`): the
C loop hands each line to ``rd_kafka_produce()`` and counts delivery reports in C, as kcat
does; everything else here (the stall watch, signals, the final flush, the counts) is the same
code for both producers.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import IO, TYPE_CHECKING, Any, TypeVar

from kctl.broker.client import Admin, ErrorLog, error_text, make_producer, translate
from kctl.broker.connect import Connection
from kctl.broker.native_producer import NativeProducer
from kctl.errors import KctlError
from kctl.produce.lines import (
    Record,
    parse_json_record,
    rate_limited_lines,
    read_chunks,
    split_lines,
)
from kctl.produce.options import ProduceOptions
from kctl.runtime.signals import SignalTrap

if TYPE_CHECKING:
    from kctl.produce.typed import TypedInput

POLL_EVERY = 4096
QUEUE_FULL = -184  # librdkafka's RD_KAFKA_RESP_ERR__QUEUE_FULL
T = TypeVar("T")
# Without --linger-ms: full batches (batch.size, 1 MB by default) rather than librdkafka's 5 ms
# default; fewer, larger requests cost both the client and the broker less CPU per record.
# The end of input and a signal flush at once, whatever the linger.
LINGER_MS = 50


# Delivery report errors that mean the record is not on the broker: the client refused it or
# the broker rejected it for what it is. Any other error (timeouts, purges, lost connections,
# retriable broker errors after their retries, idempotence errors) leaves its fate unknown:
# an earlier attempt may have been written. The Python client has no message persistence
# status (librdkafka's rd_kafka_message_status), so the error code is all there is.
DEFINITE_FAILURES = frozenset(
    {
        "MSG_SIZE_TOO_LARGE",
        "INVALID_MSG",
        "INVALID_MSG_SIZE",
        "RECORD_LIST_TOO_LARGE",
        "INVALID_RECORD",
        "INVALID_TIMESTAMP",
        "INVALID_REQUIRED_ACKS",
        "UNSUPPORTED_FOR_MESSAGE_FORMAT",
        "UNSUPPORTED_COMPRESSION_TYPE",
        "POLICY_VIOLATION",
        "TOPIC_AUTHORIZATION_FAILED",
        "CLUSTER_AUTHORIZATION_FAILED",
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
        "_UNKNOWN_TOPIC",
        "_UNKNOWN_PARTITION",
        "_INVALID_ARG",
    }
)


@dataclass
class ProduceSummary:
    delivered: int = 0  # acknowledged by the broker
    failed: int = 0  # definitely not on the broker
    unknown: int = 0  # may or may not be on the broker (timed out, in flight, still queued)
    bytes: int = 0
    seconds: float = 0.0
    first_error: str | None = None
    interrupted: bool = False  # a signal stopped reading input
    abandoned: bool = False  # a signal during the final flush ended it at once
    stalled: bool = False  # nothing delivered for --timeout seconds: kctl gave up
    aborted: bool = False
    # Throttle time the brokers reported in produce answers (a quota: KIP-219), summed over
    # the throttled answers, and how many answers were throttled.
    throttle_seconds: float = 0.0
    throttled_responses: int = 0
    # Per partition, the records that failed or whose fate is unknown: {partition: [failed,
    # unknown]} (records that never got a partition are not in it).
    partitions: dict[int, list[int]] = field(default_factory=dict)
    # Per partition, what the broker acknowledged: {partition: [delivered, first offset, last
    # offset]} (offsets -1 when the broker gives none: acks=0).
    spans: dict[int, list[int]] = field(default_factory=dict)
    # Bad input that stopped reading (malformed JSON line, partition out of range): what was
    # handed to the client before it is still flushed and counted; the caller reports this last.
    error: KctlError | None = None
    # False (--no-offsets): acknowledged records were not reported one by one, so per partition
    # only failures are known; delivered counts and offsets per partition are None.
    offsets: bool = True

    @property
    def rate(self) -> float:
        return self.delivered / self.seconds if self.seconds > 0 else 0.0

    def doc(self, topic: str, transactional: bool) -> dict[str, Any]:
        """The summary as ``-o json`` prints it (field names documented in docs/produce.md)."""
        txn = ("aborted" if self.aborted else "committed") if transactional else None
        return {
            "topic": topic,
            "delivered": self.delivered,
            "failed": self.failed,
            "unknown": self.unknown,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
            "records_per_second": round(self.rate, 1),
            "interrupted": self.interrupted,
            "flush_abandoned": self.abandoned,
            "stalled": self.stalled,
            "transaction": txn,
            "first_error": self.first_error,
            "throttle_seconds": round(self.throttle_seconds, 3),
            "throttled_responses": self.throttled_responses,
            "partitions": self.partition_rows(),
        }

    def partition_rows(self) -> list[dict[str, Any]]:
        """Every partition that was handed records: what the broker acknowledged there (count,
        first and last offset; null offsets when it gave none) and what failed or is unknown.
        Without per-record reports (``offsets`` False): the partitions with failed or unknown
        records, their delivered count and offsets null."""
        rows = []
        for p in sorted(set(self.partitions) | set(self.spans)):
            failed, unknown = self.partitions.get(p, (0, 0))
            count, first, last = self.spans.get(p, (0, -1, -1))
            rows.append(
                {
                    "partition": p,
                    "delivered": count if self.offsets else None,
                    "first_offset": first if first >= 0 else None,
                    "last_offset": last if last >= 0 else None,
                    "failed": failed,
                    "unknown": unknown,
                }
            )
        return rows


class _Stop(Exception):
    """Stop handing records over: a signal, or delivery stalled."""


class _Signals(SignalTrap):
    """SIGINT/SIGTERM stop reading; records already handed to the producer are flushed, unless
    a signal arrives during that flush, which ends it at once. The handler raises only while we
    wait for input, never inside produce() bookkeeping."""

    def __init__(self) -> None:
        super().__init__()
        self.stopped = False
        self.reading = False
        self.count = 0

    def _handler(self, signum: int, frame: Any) -> None:
        self.stopped = True
        self.count += 1
        if self.reading:
            raise _Stop()


def check_topic(admin: Admin, topic: str, partition: int | None) -> int:
    """The topic's partition count; the topic (and partition) must exist."""
    md = admin.metadata()
    tm = md.topics.get(topic)
    if tm is None or (tm.error is not None and not tm.partitions):
        from kctl.broker.topics import missing_topic

        if isinstance(admin.client, NativeProducer):  # the error path: a client that can say why
            admin = Admin(admin.conn)
        raise missing_topic(admin, topic)
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
        "queue.buffering.max.messages": 1_000_000,
        "linger.ms": LINGER_MS if opts.linger_ms is None else opts.linger_ms,
    }
    if opts.batch_size is not None:
        cfg["batch.size"] = opts.batch_size
    if opts.transactional_id:
        cfg["transactional.id"] = opts.transactional_id
    if not opts.offsets:
        cfg["delivery.report.only.error"] = True
    return cfg


def produce(
    conn: Connection,
    opts: ProduceOptions,
    sources: Iterable[tuple[str, IO[bytes]]] | None,
    single: Record | None = None,
    progress: Callable[[int], None] | None = None,
    waiting: Callable[[int], None] | None = None,
    typed: Callable[[], TypedInput] | None = None,
) -> ProduceSummary:
    """Send every line of every source (or the one ``single`` record) and count every record
    handed to the client as delivered, failed or unknown. A signal or bad input stops reading,
    then what is in flight is flushed (bad input is returned in ``summary.error``, not raised).
    Reading stops, and the flush ends, when nothing was delivered for ``conn.timeout`` seconds
    while records wait; a signal during the flush ends it at once. ``waiting(n)`` is called
    once when the final flush has taken a second with ``n`` records still unconfirmed.
    ``typed``: the encoders of --value-format/--key-format, made once the topic is known to
    exist (a schema is registered for a topic that is there, not for a misspelt one)."""
    from confluent_kafka import KafkaException

    summary = ProduceSummary(offsets=opts.offsets)

    # The producer first: its connection, and its producer id, are under way while we check
    # the topic through its own metadata (no second client, no second connection).
    watches: list[_Watch] = []

    def throttled(event: Any) -> None:  # served by poll()/flush(), on this thread
        if event.throttle_time > 0:
            summary.throttle_seconds += event.throttle_time
            summary.throttled_responses += 1
            for w in watches:  # a throttled producer waits as told: that is no stall
                w.throttled(event.throttle_time)

    txn = bool(opts.transactional_id)
    made = None
    if sources is not None and single is None and not txn and _simple(opts) and typed is None:
        from kctl.broker import native_producer

        made = native_producer.create(
            conn, producer_config(opts), opts.topic, DEFINITE_FAILURES, throttled
        )
    tally: _Tally
    producer: Any
    if made is not None:
        producer, log = made
        tally = _CTally(producer.c)
    else:
        tally = _Tally()
        producer, log = make_producer(
            conn, on_delivery=tally, throttle_cb=throttled, **producer_config(opts)
        )
    nudge = _PidNudge(producer, opts.topic) if opts.idempotence and not txn else None
    partitions = check_topic(Admin(conn, producer, log), opts.topic, opts.partition)
    if typed is not None:
        opts = replace(opts, typed=typed())
    started = time.monotonic()
    # Records wait up to linger.ms before they are even sent: that is not a stall.
    linger = LINGER_MS if opts.linger_ms is None else opts.linger_ms
    watch = _Watch(producer, tally, conn.timeout + linger / 1000)
    watches.append(watch)
    with _Signals() as sig:
        sender = Sender(producer, opts, partitions, sig, tally, nudge, watch)
        end = _End(producer, log, summary, tally, conn, sig, watch, waiting)
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
        except KafkaException as exc:
            if not _fatal(exc):
                end.finish(sender.sent, txn, False, nudge)
                summary.seconds = time.monotonic() - started
                raise
            end.fatal = exc  # the client is done: count what it holds, then say why
        except BaseException:
            end.finish(sender.sent, txn, False, nudge)
            summary.seconds = time.monotonic() - started
            raise
        summary.interrupted = sig.stopped
        commit = (
            not sig.stopped and summary.error is None and not watch.tripped and end.fatal is None
        )
        if txn and summary.error is not None:
            summary.first_error = summary.error.line()
        end.finish(sender.sent, txn, commit, nudge)
    summary.seconds = time.monotonic() - started
    summary.bytes = sender.nbytes
    return summary


class _Tally:
    """The delivery report callback, and the records refused by ``produce()`` itself: failures
    counted as failed or unknown per partition; acknowledged records counted per partition with
    their first and last offset (reports of one partition come in offset order)."""

    def __init__(self) -> None:
        self.failed = 0
        self.unknown = 0
        self.first_failed: Any = None
        self.first_unknown: Any = None
        self.partitions: dict[int, list[int]] = {}
        self.spans: dict[int, list[int]] = {}  # partition -> [delivered, first, last offset]

    def __call__(self, err: Any, msg: Any) -> None:
        if err is None:
            offset = msg.offset()
            if offset is None:  # acks=0: the broker answers nothing, so no offset is known
                offset = -1
            span = self.spans.get(msg.partition())
            if span is None:
                self.spans[msg.partition()] = [1, offset, offset]
            else:
                span[0] += 1
                span[2] = offset
            return
        self.add(err, msg.partition(), err.name() in DEFINITE_FAILURES)

    def refused(self, err: Any, partition: int | None) -> None:
        """Refused by produce(): never handed over, so never on the broker."""
        self.add(err, partition, True)

    def add(self, err: Any, partition: int | None, definite: bool) -> None:
        if definite:
            self.failed += 1
            if self.first_failed is None:
                self.first_failed = err
        else:
            self.unknown += 1
            if self.first_unknown is None:
                self.first_unknown = err
        if partition is not None and partition >= 0:
            counts = self.partitions.setdefault(partition, [0, 0])
            counts[0 if definite else 1] += 1

    @property
    def errors(self) -> int:
        return self.failed + self.unknown

    def settle(self) -> None:
        """Bring the counts up to date (the C producer's tally is kept in C)."""


class _CTally(_Tally):
    """The tally of kctl's C producer (:mod:`kctl.broker.native_producer`): its delivery
    reports are counted in C as :class:`_Tally` counts them (the same DEFINITE_FAILURES,
    refusals by the client definite), read from there."""

    def __init__(self, c: Any) -> None:
        super().__init__()
        self.c = c

    @property
    def errors(self) -> int:
        return int(self.c.error_count())

    def settle(self) -> None:
        from confluent_kafka import KafkaError

        t = self.c.tally()
        self.failed, self.unknown = t["failed"], t["unknown"]
        ff, fu = t["first_failed"], t["first_unknown"]
        self.first_failed = None if ff is None else KafkaError(ff)
        self.first_unknown = None if fu is None else KafkaError(fu)
        self.partitions, self.spans = t["partitions"], t["spans"]


class _Watch:
    """Delivery progress. Stalled (for good) once no record was delivered for ``limit``
    seconds while records wait or fail; waiting with nothing outstanding is not a stall."""

    def __init__(self, producer: Any, tally: _Tally, limit: float) -> None:
        self.producer = producer
        self.tally = tally
        self.limit = limit
        self.best = 0
        self.errors = 0
        self.since = time.monotonic()
        self.throttled_until = 0.0
        self.tripped = False

    def throttled(self, seconds: float) -> None:
        """The broker throttles this producer for ``seconds`` (a quota): the stall clock starts
        again when that is over."""
        self.throttled_until = max(self.throttled_until, time.monotonic() + seconds)

    def stalled(self, handed: int) -> bool:
        """``handed``: records handed to the client so far (exact at the time of the call)."""
        if self.tripped:
            return True
        now = time.monotonic()
        pending = len(self.producer)
        errors = self.tally.errors
        delivered = handed - pending - errors
        if delivered > self.best or (pending == 0 and errors == self.errors):
            self.best = max(self.best, delivered)
            self.errors = errors
            self.since = now
            return False
        if now - max(self.since, self.throttled_until) > self.limit:
            self.tripped = True
        return self.tripped


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


def _describe(err: Any) -> str:
    from confluent_kafka import KafkaException

    return f"{err.name()}: {error_text(KafkaException(err))}"


def _fatal(exc: BaseException) -> bool:
    """A librdkafka exception that ends the client (every later call raises it again)."""
    err = exc.args[0] if exc.args else None
    return bool(getattr(err, "fatal", lambda: False)())


def _fatal_reason(exc: Exception) -> str:
    """A fatal producer error, said for an operator: what the broker refused and what helps."""
    err = exc.args[0]
    text = f"{err.name()}: {error_text(exc)}"
    if err.name() == "CLUSTER_AUTHORIZATION_FAILED" and "PID" in err.str():
        return (
            f"{text}; an idempotent producer needs Write on a topic (or IdempotentWrite on the "
            "cluster): grant it, or send with --no-idempotence"
        )
    return text


class _End:
    """The end of a run: flush what the client holds, give up on it when delivery stalls or a
    signal arrives during the flush, then count (delivered = handed over - failed - unknown)."""

    def __init__(
        self,
        producer: Any,
        log: ErrorLog,
        summary: ProduceSummary,
        tally: _Tally,
        conn: Connection,
        sig: _Signals,
        watch: _Watch,
        waiting: Callable[[int], None] | None,
    ) -> None:
        self.producer = producer
        self.log = log
        self.summary = summary
        self.tally = tally
        self.conn = conn
        self.sig = sig
        self.watch = watch
        self.waiting = waiting
        self.fatal: Exception | None = None

    def flush(self, sent: int, nudge: _PidNudge | None) -> int:
        """Flush until empty, stalled, signalled or a fatal client error; the records still
        unconfirmed."""
        from confluent_kafka import KafkaException

        producer = self.producer
        remaining = len(producer)
        try:
            while remaining and nudge is not None and nudge():
                remaining = producer.flush(_PidNudge.EVERY)
            signals = self.sig.count
            announce = time.monotonic() + 1.0
            while remaining:
                if self.sig.count > signals:
                    self.summary.abandoned = self.summary.interrupted = True
                    break
                if self.watch.stalled(sent):
                    break
                if self.waiting is not None and time.monotonic() > announce:
                    self.waiting(remaining)
                    self.waiting = None
                remaining = producer.flush(0.1)
        except KafkaException as exc:  # fatal (e.g. no producer id): the client is done
            if not _fatal(exc):
                raise
            self.fatal = exc
            remaining = len(producer)
        if remaining:
            self.give_up()
            remaining = len(producer)
        return remaining

    def give_up(self) -> None:
        """Purge what is queued and in flight: each gets a delivery report (_PURGE_QUEUE,
        _PURGE_INFLIGHT: unknown), served here within a bounded time."""
        from confluent_kafka import KafkaException

        producer = self.producer
        with contextlib.suppress(KafkaException, RuntimeError):
            producer.purge(in_queue=True, in_flight=True, blocking=False)
        deadline = time.monotonic() + 2.0
        while len(producer) and time.monotonic() < deadline:
            try:
                producer.flush(0.1)
            except KafkaException:  # fatal: raised again on every call; reports still served
                time.sleep(0.01)

    def finish(self, sent: int, txn: bool, commit: bool, nudge: _PidNudge | None = None) -> None:
        from confluent_kafka import KafkaException

        summary, tally, producer, conn = self.summary, self.tally, self.producer, self.conn
        remaining = self.flush(sent, nudge)
        tally.settle()
        summary.stalled = self.watch.tripped
        if self.fatal is not None:
            summary.first_error = _fatal_reason(self.fatal)
        elif tally.first_failed is not None:
            summary.first_error = _describe(tally.first_failed)
        elif summary.stalled:
            last = self.log.errors[-1].str() if self.log.errors else "no answer from the broker"
            summary.first_error = f"nothing delivered for {conn.timeout:g}s; last: {last}"
        elif summary.abandoned:
            summary.first_error = "interrupted while waiting for the broker"
        elif tally.first_unknown is not None:
            summary.first_error = _describe(tally.first_unknown)
        if txn:
            if commit and not tally.errors and not remaining:
                try:
                    producer.commit_transaction(conn.timeout)
                    summary.delivered = sent
                    summary.spans = tally.spans
                    return
                except KafkaException as exc:
                    summary.first_error = summary.first_error or translate(exc, "commit").why
            with contextlib.suppress(KafkaException):
                producer.abort_transaction(conn.timeout)
            summary.aborted = True
            summary.failed = sent  # an aborted transaction is never visible to read_committed
            summary.first_error = summary.first_error or "interrupted"
            return
        summary.failed = tally.failed
        summary.unknown = tally.unknown + remaining
        summary.delivered = sent - summary.failed - summary.unknown
        summary.partitions = tally.partitions
        summary.spans = tally.spans


def _simple(opts: ProduceOptions) -> bool:
    """The plain and keyed shapes: lines as values, or KEY<sep>VALUE, with no other option."""
    return (
        not opts.jsonl
        and opts.null_marker is None
        and not opts.headers
        and opts.partition is None
        and opts.typed is None
    )


class Sender:
    """Hands records to the producer, one loop per input shape; ``sent`` and ``nbytes`` (records
    handed to the client, and their key + value bytes) stay exact even when a loop raises."""

    def __init__(
        self,
        producer: Any,
        opts: ProduceOptions,
        partitions: int,
        sig: _Signals,
        tally: _Tally,
        nudge: _PidNudge | None,
        watch: _Watch,
    ) -> None:
        self.producer = producer
        self.opts = opts
        self.partitions = partitions
        self.sig = sig
        self.tally = tally
        self.nudge = nudge
        self.watch = watch
        self.headers = opts.headers or None
        self.sent = 0
        self.nbytes = 0
        self.line_no = 0
        self.started = time.monotonic()
        from kctl.runtime import native

        # The plain and keyed shapes' loop in C (:meth:`_chunks`), or None.
        self.c_chunk = native.produce_chunk()
        # kctl's C producer (its loop walks a chunk's lines into rd_kafka_produce), or None.
        self.rk = producer.c if isinstance(producer, NativeProducer) else None

    def halt(self, ahead: int = 0) -> bool:
        """Stop handing records over: a signal, or nothing delivered for --timeout seconds.
        ``ahead``: records handed over but not yet in ``self.sent``."""
        return self.sig.stopped or self.watch.stalled(self.sent + ahead)

    def send(
        self,
        value: bytes | None,
        key: bytes | None,
        hdrs: Any,
        part: int | None,
        ts: Any,
        ahead: int = 0,
    ) -> None:
        """One record with every option; waits while the client's queue is full, unless
        :meth:`halt` says to stop (raises _Stop; the record was not handed over)."""
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
                if self.halt(ahead):
                    raise _Stop() from None
                self.producer.poll(0.05)
            except KafkaException as exc:  # refused before sending (e.g. too large)
                self.tally.refused(exc.args[0], part)
                return

    def one(self, record: Record) -> None:
        """The single record of ``--value``/``--key``."""
        value, key, hdrs, part, ts = record
        if self.opts.typed is not None:
            value, key = self.opts.typed.single(value, key)
        merged = (self.headers or []) + (hdrs or []) or None
        self.send(value, key, merged, self.opts.partition if part is None else part, ts)
        self.sent, self.nbytes = 1, len(value or b"") + len(key or b"")

    def _shape(self) -> Callable[[list[bytes], int], None]:
        opts = self.opts
        typed = opts.typed
        if typed is not None:
            lone = typed.key is None and opts.key_separator is None and opts.null_marker is None
            if lone and not opts.jsonl and opts.partition is None and not opts.headers:
                return self.typed_values
            return self.general
        simple = _simple(opts)
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
        c_loop = (self.c_chunk is not None and not self.opts.rate) or self.rk is not None
        if c_loop and loop in (self.plain, self.keyed):
            self._chunks(sources, progress)
            return
        for name, stream in sources:
            chunks = read_chunks(stream, progress, self.opts.max_line_bytes, name)
            for all_lines, size in self._inputs(split_lines(chunks)):
                for lines in rate_limited_lines(all_lines, self.opts.rate):
                    if lines is not all_lines:  # a --rate slice
                        size = sum(map(len, lines))
                    loop(lines, size)
                    self._pace()
                    if self.halt():
                        return
            if self.halt():
                return

    def _inputs(self, items: Iterator[T]) -> Iterator[T]:
        """What is read from one input (line lists or chunks), until its end, a signal or a
        stall; after each item the producer is polled and the producer-id nudge goes on."""
        while True:
            self.sig.reading = True  # a signal while blocked on input raises _Stop here
            try:
                got = next(items, None)
            finally:
                self.sig.reading = False
            if got is None:
                return
            if self.halt():  # delivery stalled while we waited for input
                return
            yield got
            self.producer.poll(0)
            if self.nudge is not None and not self.nudge():
                self.nudge = None
            if self.halt():
                return

    def _chunks(
        self, sources: Iterable[tuple[str, IO[bytes]]], progress: Callable[[int], None] | None
    ) -> None:
        """:meth:`sources` for the plain and keyed shapes with kctl._native: the C loop walks
        the lines of each chunk as read (no bytes object per line)."""
        for name, stream in sources:
            tail = b""
            chunks = read_chunks(stream, progress, self.opts.max_line_bytes, name)
            for chunk in self._inputs(chunks):
                data = tail + chunk if tail else chunk
                end = data.rfind(b"\n") + 1  # complete lines only; the rest waits
                self._native_chunk(data, end)
                tail = data[end:]
            if self.halt():
                return
            if tail:
                self._native_chunk(tail, len(tail))  # the last line, without a newline

    def _native_chunk(self, data: bytes, end: int) -> None:
        """The lines of ``data[:end]`` through kctl._native.produce_chunk; a line produce()
        refuses (queue full, too large) goes through :meth:`send`, then the C loop goes on."""
        from confluent_kafka import KafkaException

        if self.rk is not None:
            self._rk_chunk(data, end)
            return
        loop = self.c_chunk
        assert loop is not None
        produce_, topic = self.producer.produce, self.opts.topic
        ksep = self.opts.key_separator
        catch = (BufferError, KafkaException)
        pos = 0
        while pos < end:
            pos, records, nbytes, _ = loop(produce_, topic, data, pos, end, ksep, catch)
            self.sent += records
            self.nbytes += nbytes
            if pos >= end:
                break
            nl = data.find(b"\n", pos, end)
            line_end = end if nl < 0 else nl
            line = data[pos:line_end]
            k, sep, v = line.partition(ksep) if ksep is not None else (b"", b"", line)
            if sep:
                self.send(v, k, None, None, None)  # raises _Stop: counts are exact
                self.nbytes += len(k) + len(v)
            else:
                self.send(line, None, None, None, None)
                self.nbytes += len(line)
            self.sent += 1
            pos = line_end + 1
        self.producer.poll(0)

    def _rk_chunk(self, data: bytes, end: int) -> None:
        """The lines of ``data[:end]`` through kctl's C producer; while its queue is full it is
        polled (unless :meth:`halt` says stop: raises _Stop with the counts exact); a fatal
        producer error is raised as confluent-kafka's produce() raises it. With --rate, in
        slices of 1/20 s worth (as :func:`rate_limited_lines`), each followed by the pacing."""
        c, ksep, rate = self.rk, self.opts.key_separator, self.opts.rate
        assert c is not None and isinstance(self.producer, NativeProducer)
        step = max(1, int(rate / 20)) if rate else 0
        pos = 0
        while pos < end:
            pos, records, nbytes, _, err = c.produce_lines(data, pos, end, ksep, step)
            self.sent += records
            self.nbytes += nbytes
            if not err:
                if rate:
                    self._pace()
                    if self.halt():
                        raise _Stop()
                    continue
                break
            if err != QUEUE_FULL:
                raise self.producer.fatal_exception()
            if self.halt():
                raise _Stop()
            self.producer.poll(0.05)
        self.producer.poll(0)

    def _pace(self) -> None:
        rate = self.opts.rate
        if not rate:
            return
        ahead = self.started + self.sent / rate - time.monotonic()
        while ahead > 0 and not self.halt():
            self.producer.poll(min(ahead, 0.1))
            ahead = self.started + self.sent / rate - time.monotonic()

    def plain(self, lines: list[bytes], size: int) -> None:
        """Value only, positional arguments, counts taken per chunk (without kctl._native, or
        with --rate: else :meth:`_chunks`)."""
        from confluent_kafka import KafkaException

        produce_, topic = self.producer.produce, self.opts.topic
        for i, line in enumerate(lines):
            try:
                produce_(topic, line)
            except (BufferError, KafkaException):
                try:
                    self.send(line, None, None, None, None, i)
                except _Stop:
                    self.sent += i
                    self.nbytes += sum(map(len, lines[:i]))
                    raise
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
        for i, line in enumerate(lines):
            k, sep, v = line.partition(ksep)
            try:
                if sep:
                    try:
                        produce_(topic, v, k)
                    except (BufferError, KafkaException):
                        self.send(v, k, None, None, None, i)
                else:
                    unkeyed += 1
                    try:
                        produce_(topic, line)
                    except (BufferError, KafkaException):
                        self.send(line, None, None, None, None, i)
            except _Stop:
                self.sent += i
                self.nbytes += sum(len(x) - (ksep in x) * len(ksep) for x in lines[:i])
                raise
        self.sent += len(lines)
        self.nbytes += size - (len(lines) - unkeyed) * len(ksep)
        self.producer.poll(0)

    def typed_values(self, lines: list[bytes], size: int) -> None:
        """Each line a typed value's JSON data (``--value-format``, nothing else per record):
        the lines encoded first, as far as they fit (:meth:`TypedInput.values`), then handed
        over with positional arguments; a line that is malformed or does not fit is raised
        after the lines before it were handed over."""
        from confluent_kafka import KafkaException

        typed = self.opts.typed
        assert typed is not None
        values, error = typed.values(lines, self.line_no + 1)
        self.line_no += len(lines)
        produce_, topic = self.producer.produce, self.opts.topic
        for i, value in enumerate(values):
            try:
                produce_(topic, value)
            except (BufferError, KafkaException):
                try:
                    self.send(value, None, None, None, None, i)
                except _Stop:
                    self.sent += i
                    self.nbytes += sum(map(len, values[:i]))
                    raise
        self.sent += len(values)
        self.nbytes += sum(map(len, values))
        self.producer.poll(0)
        if error is not None:
            raise error

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
        typed = opts.typed
        if opts.jsonl:
            if not line.strip():
                return None
            if typed is not None:
                value, key, hdrs, part, ts = typed.json_record(line, self.line_no)
            else:
                value, key, hdrs, part, ts = parse_json_record(line, self.line_no)
            if self.headers:
                hdrs = self.headers + (hdrs or [])
            return value, key, hdrs, opts.partition if part is None else part, ts
        if typed is not None:
            if not line.strip():
                return None  # no JSON data; the line keeps its number
            value, key = typed.line_record(line, self.line_no, opts.key_separator, opts.null_marker)
            return value, key, self.headers, opts.partition, None
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
