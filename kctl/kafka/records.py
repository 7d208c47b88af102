"""Producing and consuming records (kafka-console-producer.sh / kafka-console-consumer.sh).

The hot loops avoid per-record Python work where they can: input is read in large chunks and
split in C, ``produce()`` gets positional arguments only, delivery reports come back for
failures only (``delivery.report.only.error``), and the consumer takes records in batches.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from kctl.errors import KctlError, NotFoundError, UsageError
from kctl.kafka.client import Admin, ErrorLog, error_text, make_consumer, make_producer, translate
from kctl.kafka.connect import Connection

CHUNK = 1 << 20
POLL_EVERY = 4096
# Without --linger-ms: full batches (batch.size, 1 MB by default) rather than librdkafka's 5 ms
# default; fewer, larger requests cost both the client and the broker less CPU per record.
# The end of input and a signal flush at once, whatever the linger.
LINGER_MS = 50

# ---- input --------------------------------------------------------------------------------

# A record to send: (value, key, headers, partition, timestamp); None means "not given".
Record = tuple[bytes | None, bytes | None, list[tuple[str, bytes]] | None, int | None, int | None]


def read_chunks(stream: IO[bytes], progress: Callable[[int], None] | None) -> Iterator[bytes]:
    """Large chunks of a binary stream; ``progress`` gets the byte count of each chunk."""
    read = getattr(stream, "read1", stream.read)
    while True:
        chunk = read(CHUNK)
        if not chunk:
            return
        if progress is not None:
            progress(len(chunk))
        yield chunk


def split_lines(chunks: Iterable[bytes]) -> Iterator[tuple[list[bytes], int]]:
    """Lists of complete lines (without the newline) from chunks of bytes, each with the sum of
    its lines' lengths (known from the chunk's length, without a pass over the lines)."""
    tail = b""
    for chunk in chunks:
        if tail:
            chunk = tail + chunk
        lines = chunk.split(b"\n")
        tail = lines.pop()
        if lines:
            yield lines, len(chunk) - len(tail) - len(lines)
    if tail:
        yield [tail], len(tail)


def decode_field(value: Any, encoding: str | None, what: str, line: int) -> bytes | None:
    """A JSON input field as bytes: string (UTF-8), base64, hex; non-strings become JSON."""
    if value is None:
        return None
    if not isinstance(value, str):
        import orjson

        return orjson.dumps(value)
    if encoding in (None, "string", "utf-8", "utf8", "json"):
        return value.encode()
    try:
        if encoding == "base64":
            return base64.b64decode(value, validate=True)
        if encoding == "hex":
            return bytes.fromhex(value)
    except (binascii.Error, ValueError):
        raise UsageError(f"malformed JSON line {line}", f"{what} is not valid {encoding}") from None
    raise UsageError(
        f"malformed JSON line {line}", f"unknown encoding {encoding!r} (string|base64|hex)"
    )


def parse_json_record(text: bytes, line: int) -> Record:
    """One ``--format jsonl`` line: {"key", "value", "headers", "partition", "timestamp"} with
    optional "encoding" (or "key_encoding"/"value_encoding"): string, base64 or hex."""
    import orjson

    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"malformed JSON line {line}", str(exc)) from None
    if not isinstance(doc, dict):
        raise UsageError(f"malformed JSON line {line}", "expected a JSON object")
    enc = doc.get("encoding")
    value = decode_field(doc.get("value"), doc.get("value_encoding", enc), "value", line)
    key = decode_field(doc.get("key"), doc.get("key_encoding", enc), "key", line)
    headers: list[tuple[str, bytes]] | None = None
    raw = doc.get("headers")
    if raw:
        pairs = raw.items() if isinstance(raw, dict) else raw
        try:
            headers = [
                (str(k), decode_field(v, doc.get("headers_encoding"), "header", line) or b"")
                for k, v in pairs
            ]
        except (TypeError, ValueError):
            raise UsageError(
                f"malformed JSON line {line}", "headers must be an object or [[key, value], ...]"
            ) from None
    partition, ts = doc.get("partition"), doc.get("timestamp")
    for name, v in (("partition", partition), ("timestamp", ts)):
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise UsageError(f"malformed JSON line {line}", f"{name} must be an integer >= 0")
    return value, key, headers, partition, ts


# ---- produce ------------------------------------------------------------------------------


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
    tally = [0, 0]  # records handed to the client, their bytes
    with _Signals() as sig:
        try:
            if txn:
                try:
                    producer.init_transactions(conn.timeout)
                    producer.begin_transaction()
                except KafkaException as exc:
                    raise translate(exc, "starting the transaction") from exc
            _send_all(
                producer, opts, partitions, sources, single, sig, progress, failures, tally, nudge
            )
        except _Stop:
            pass
        except KctlError as exc:
            if not tally[0] and not txn:
                raise  # nothing was sent: a plain one-line error
            summary.error = exc
        except BaseException:
            _finish(producer, log, summary, failures, tally[0], conn, txn, False, nudge)
            summary.seconds = time.monotonic() - started
            raise
        summary.interrupted = sig.stopped
        commit = not sig.stopped and summary.error is None
        if txn and summary.error is not None:
            summary.first_error = summary.error.line()
        _finish(producer, log, summary, failures, tally[0], conn, txn, commit, nudge)
    summary.seconds = time.monotonic() - started
    summary.bytes = tally[1]
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


def _send_all(
    producer: Any,
    opts: ProduceOptions,
    partitions: int,
    sources: Iterable[tuple[str, IO[bytes]]] | None,
    single: Record | None,
    sig: _Signals,
    progress: Callable[[int], None] | None,
    failures: list[Any],
    tally: list[int],
    nudge: _PidNudge | None = None,
) -> None:
    """Hand every record to the producer; ``tally`` is kept exact even when this raises."""
    from confluent_kafka import KafkaException

    topic = opts.topic
    headers = opts.headers or None
    sent = 0
    nbytes = 0
    produce_ = producer.produce
    poll = producer.poll
    rate = opts.rate
    started = time.monotonic()

    def send(value: bytes | None, key: bytes | None, hdrs: Any, part: int | None, ts: Any) -> None:
        kwargs: dict[str, Any] = {}
        if hdrs:
            kwargs["headers"] = hdrs
        if part is not None:
            if part >= partitions:
                raise KctlError(
                    f"partition {part} of topic {topic!r} does not exist",
                    f"the topic has partitions 0-{partitions - 1}",
                )
            kwargs["partition"] = part
        if ts is not None:
            kwargs["timestamp"] = ts
        while True:
            try:
                produce_(topic, value, key, **kwargs)
                return
            except BufferError:
                poll(0.05)
            except KafkaException as exc:  # refused before sending (e.g. too large)
                failures.append(exc.args[0])
                return

    if single is not None:
        value, key, hdrs, part, ts = single
        merged = (headers or []) + (hdrs or []) or None
        send(value, key, merged, opts.partition if part is None else part, ts)
        tally[0], tally[1] = 1, len(value or b"") + len(key or b"")
        return

    plain = (
        not opts.jsonl
        and opts.key_separator is None
        and opts.null_marker is None
        and headers is None
        and opts.partition is None
    )
    keyed = (
        not opts.jsonl
        and opts.key_separator is not None
        and opts.null_marker is None
        and headers is None
        and opts.partition is None
    )
    ksep = opts.key_separator
    line_no = 0
    for _name, stream in sources or ():
        chunks = read_chunks(stream, progress)
        lines_iter = split_lines(chunks)
        while True:
            sig.reading = True
            try:
                got = next(lines_iter, None)
            finally:
                sig.reading = False
            if got is None:
                break
            all_lines, size = got
            try:
                for lines in rate_limited_lines(all_lines, rate):
                    if lines is not all_lines:  # a --rate slice
                        size = sum(map(len, lines))
                    if plain:
                        # The fast path: value only, positional arguments, no per-record
                        # bookkeeping (counts are taken per chunk; signals never raise here).
                        for line in lines:
                            try:
                                produce_(topic, line)
                            except (BufferError, KafkaException):
                                send(line, None, None, None, None)
                        sent += len(lines)
                        nbytes += size
                        poll(0)
                    elif keyed:
                        # KEY<sep>VALUE without other options: positional arguments too.
                        unkeyed = 0  # lines without the separator (rare: counted there)
                        for line in lines:
                            k, sep, v = line.partition(ksep)
                            if sep:
                                try:
                                    produce_(topic, v, k)
                                except (BufferError, KafkaException):
                                    send(v, k, None, None, None)
                            else:
                                unkeyed += 1
                                try:
                                    produce_(topic, line)
                                except (BufferError, KafkaException):
                                    send(line, None, None, None, None)
                        sent += len(lines)
                        nbytes += size - (len(lines) - unkeyed) * len(ksep)
                        poll(0)
                    else:
                        for line in lines:
                            line_no += 1
                            if opts.jsonl:
                                if not line.strip():
                                    continue
                                value, key, hdrs, part, ts = parse_json_record(line, line_no)
                                if headers:
                                    hdrs = headers + (hdrs or [])
                                if part is None:
                                    part = opts.partition
                            else:
                                value, key, hdrs, part, ts = (
                                    line,
                                    None,
                                    headers,
                                    opts.partition,
                                    None,
                                )
                                if opts.key_separator is not None:
                                    k, sep, v = line.partition(opts.key_separator)
                                    if sep:
                                        key, value = k, v
                                if opts.null_marker is not None:
                                    if value == opts.null_marker:
                                        value = None
                                    if key == opts.null_marker:
                                        key = None
                            send(value, key, hdrs, part, ts)
                            sent += 1
                            nbytes += len(value or b"") + len(key or b"")
                            if not sent % POLL_EVERY:
                                poll(0)
                    if rate:
                        ahead = started + sent / rate - time.monotonic()
                        while ahead > 0 and not sig.stopped:
                            poll(min(ahead, 0.1))
                            ahead = started + sent / rate - time.monotonic()
                    if sig.stopped:
                        return
            finally:
                tally[0], tally[1] = sent, nbytes
            poll(0)
            if nudge is not None and not nudge():
                nudge = None
            if sig.stopped:
                return
    return


def rate_limited_lines(lines: list[bytes], rate: float | None) -> list[list[bytes]]:
    """With --rate, hand lines over in slices of about 1/20 s worth, so pacing is smooth."""
    if not rate:
        return [lines]
    step = max(1, int(rate / 20))
    return [lines[i : i + step] for i in range(0, len(lines), step)]


# ---- consume ------------------------------------------------------------------------------

OFFSET_BEGINNING = -2
OFFSET_END = -1


@dataclass
class ConsumeOptions:
    topics: list[str]
    start: str | None = None  # earliest | latest | OFFSET | -N | ISO time | @ms; None: default
    partitions: list[int] = field(default_factory=list)
    group: str | None = None
    commit: bool = True
    follow: bool = False
    max_messages: int | None = None
    read_committed: bool = False
    batch: int = 10_000
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ConsumeSummary:
    records: int = 0
    seconds: float = 0.0
    partitions: int = 0


StartOffsets = dict[tuple[str, int], int]


def resolve_start(
    admin: Admin, tps: list[tuple[str, int]], start: str | None, *, read_committed: bool
) -> StartOffsets:
    """Absolute (or logical) start offsets for ``--from``."""
    from kctl.kafka import offsets

    spec = (start or "earliest").strip()
    # Absolute offsets from one ListOffsets round: librdkafka resolving logical offsets
    # itself costs a fetch wait per partition.
    if spec in ("earliest", "beginning", "start"):
        return offsets.list_offsets(admin, tps, "earliest")
    if spec in ("latest", "end"):
        return offsets.list_offsets(admin, tps, "latest", read_committed=read_committed)
    if offsets.looks_like_time(spec):
        return offsets.list_offsets(
            admin, tps, offsets.parse_time(spec), read_committed=read_committed
        )
    try:
        number = int(spec)
    except ValueError:
        raise UsageError(
            f"malformed --from {spec!r}",
            "expected earliest, latest, OFFSET, -N, an ISO-8601 time or @EPOCH_MS",
        ) from None
    low = offsets.list_offsets(admin, tps, "earliest")
    high = offsets.list_offsets(admin, tps, "latest", read_committed=read_committed)
    if number < 0:
        return {tp: max(low[tp], high[tp] + number) for tp in tps}
    for tp in tps:
        if not low[tp] <= number <= high[tp]:
            raise KctlError(
                f"start offset {number} is out of range for {tp[0]}[{tp[1]}]",
                f"its offsets run from {low[tp]} to {high[tp]}",
            )
    return dict.fromkeys(tps, number)


def check_start(start: str | None) -> None:
    """Reject a malformed ``--from`` before contacting the cluster."""
    from kctl.kafka import offsets

    if start is None:
        return
    spec = start.strip()
    if spec in ("earliest", "beginning", "start", "latest", "end"):
        return
    if offsets.looks_like_time(spec):
        offsets.parse_time(spec)
        return
    try:
        int(spec)
    except ValueError:
        raise UsageError(
            f"malformed --from {spec!r}",
            "expected earliest, latest, OFFSET, -N, an ISO-8601 time or @EPOCH_MS",
        ) from None


class Consumption:
    """A consumer positioned as asked; iterate :meth:`batches` for lists of messages.

    Without ``--follow`` it ends when every assigned partition reached the end it had when we
    got there (partition EOF, as ``kcat -e``); with ``--group`` partitions come from the group."""

    def __init__(self, conn: Connection, opts: ConsumeOptions) -> None:
        from kctl.kafka import offsets

        self.conn = conn
        self.opts = opts
        admin = Admin(conn)
        if opts.group and opts.partitions:
            raise UsageError("--partition cannot be combined with --group", "the group assigns")
        self.tps = offsets.partitions_of(admin, opts.topics, opts.partitions or None)
        self.start: StartOffsets | None = None
        if not opts.group or opts.start is not None:
            self.start = resolve_start(
                admin, self.tps, opts.start, read_committed=opts.read_committed
            )
        cfg: dict[str, Any] = {
            "enable.partition.eof": True,
            "isolation.level": "read_committed" if opts.read_committed else "read_uncommitted",
            "auto.offset.reset": "error" if not opts.group else "earliest",
            "fetch.wait.max.ms": 100,
            "queued.max.messages.kbytes": 262144,
            "fetch.message.max.bytes": 4 << 20,
        }
        if opts.group:
            cfg["group.id"] = opts.group
            cfg["enable.auto.commit"] = opts.commit
            cfg["enable.auto.offset.store"] = False
        cfg.update(opts.extra)
        self.consumer, self.log = make_consumer(conn, **cfg)
        self.assigned: set[tuple[str, int]] = set()
        self.eof: set[tuple[str, int]] = set()
        self.ever_assigned = False
        if opts.group:
            self.consumer.subscribe(
                opts.topics, on_assign=self._on_assign, on_revoke=self._on_revoke
            )
        else:
            self._assign(self.tps)

    def _assign(self, tps: list[tuple[str, int]]) -> None:
        from confluent_kafka import TopicPartition

        assert self.start is not None
        self.consumer.assign([TopicPartition(t, p, self.start[(t, p)]) for t, p in tps])
        self.assigned = set(tps)
        self.ever_assigned = True

    def _on_assign(self, consumer: Any, partitions: list[Any]) -> None:
        from confluent_kafka import TopicPartition

        keys = [(tp.topic, tp.partition) for tp in partitions]
        if self.start is not None:
            consumer.assign([TopicPartition(t, p, self.start[(t, p)]) for t, p in keys])
        else:
            consumer.assign(partitions)
        self.assigned = set(keys)
        self.eof -= self.assigned
        self.ever_assigned = True

    def _on_revoke(self, consumer: Any, partitions: list[Any]) -> None:
        self.assigned -= {(tp.topic, tp.partition) for tp in partitions}

    def done(self) -> bool:
        return (
            not self.opts.follow
            and self.ever_assigned
            and bool(self.assigned)
            and self.eof >= self.assigned
        )

    def batches(self) -> Iterator[list[Any]]:
        """Lists of records (messages without errors), until the end or ``max_messages``."""
        from confluent_kafka import KafkaError

        consume = self.consumer.consume
        left = self.opts.max_messages
        size = self.opts.batch
        join_deadline = time.monotonic() + max(60.0, self.conn.timeout * 4)
        eof_code = KafkaError._PARTITION_EOF
        while left is None or left > 0:
            msgs = consume(size if left is None else min(size, left), 0.05)
            if not msgs:
                if self.done():
                    return
                if not self.ever_assigned and time.monotonic() > join_deadline:
                    raise KctlError(
                        f"no partitions assigned to group {self.opts.group!r}",
                        f"nothing from the group coordinator within {join_deadline:g}s",
                    )
                fatal = self.log.fatal()
                if fatal is not None:
                    from kctl.kafka.client import connect_error

                    raise connect_error(self.conn, fatal)
                continue
            good = msgs
            for i, m in enumerate(msgs):
                err = m.error()
                if err is None:
                    continue
                good = [x for x in msgs if x.error() is None]
                for bad in msgs[i:]:
                    e = bad.error()
                    if e is None:
                        continue
                    if e.code() == eof_code:
                        self.eof.add((bad.topic(), bad.partition()))
                    else:
                        self._raise(bad, e)
                break
            if good:
                if left is not None:
                    left -= len(good)
                yield good
                if self.opts.group and self.opts.commit:
                    self._store(good)
            if self.done():
                return

    def _store(self, msgs: list[Any]) -> None:
        from confluent_kafka import TopicPartition

        last: dict[tuple[str, int], int] = {}
        for m in msgs:
            last[(m.topic(), m.partition())] = m.offset()
        self.consumer.store_offsets(
            offsets=[TopicPartition(t, p, o + 1) for (t, p), o in last.items()]
        )

    def _raise(self, msg: Any, err: Any) -> None:
        where = f"{msg.topic()}[{msg.partition()}]" if msg.topic() else "the consumer"
        name = err.name()
        if name == "_AUTO_OFFSET_RESET" or "out of range" in err.str().lower():
            raise KctlError(f"start offset out of range for {where}", err.str())
        if err.fatal() or not err.retriable():
            raise KctlError(f"consuming {where} failed", f"{name}: {err.str()}")
        # transient: librdkafka retries by itself

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.consumer.close()


# ---- rendering helpers shared by formatters -----------------------------------------------


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()
