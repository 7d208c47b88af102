"""Consuming records (kafka-console-consumer.sh, kcat -C): where to start (``--from``), and a
consumer positioned as asked that hands out batches of records until the end or forever."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from kctl.broker.client import Admin, make_consumer
from kctl.broker.connect import Connection
from kctl.errors import KctlError, UsageError


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
    from kctl.broker import offsets

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
    from kctl.broker import offsets

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


TANSU_CLUSTER_ID = "tansu_cluster"
TANSU_SESSION_TIMEOUT_MS = 6000


def consumer_protocol(props: dict[str, Any]) -> bool:
    """``group.protocol=consumer``: the group protocol of KIP-848 (Kafka 4.0), where the broker
    assigns and owns the session (librdkafka refuses session.timeout.ms,
    heartbeat.interval.ms and partition.assignment.strategy beside it)."""
    return str(props.get("group.protocol", "classic")).strip().lower() == "consumer"


def cooperative_rebalancing(props: dict[str, Any]) -> bool:
    """Whether librdkafka rebalances a group incrementally (rebalance protocol COOPERATIVE):
    the consumer protocol always does; the classic one with the cooperative-sticky assignor
    (librdkafka refuses a list mixing it with eager ones). Then the rebalance callbacks get only
    the partitions added or taken away and must answer with incremental_assign/unassign;
    assign() fails with _STATE. confluent-kafka does not expose rd_kafka_rebalance_protocol(),
    hence the configuration decides."""
    if consumer_protocol(props):
        return True
    strategies = str(props.get("partition.assignment.strategy", "range,roundrobin"))
    return "cooperative-sticky" in {s.strip().lower() for s in strategies.split(",")}


def _on_tansu(admin: Admin) -> bool:
    """The embedded Tansu broker answers Metadata with this fixed cluster id."""
    return bool(admin.metadata().cluster_id == TANSU_CLUSTER_ID)


class Consumption:
    """A consumer positioned as asked; iterate :meth:`batches` for lists of messages.

    Without ``--follow`` it ends when every assigned partition reached the end it had when we
    got there (partition EOF, as ``kcat -e``); with ``--group`` partitions come from the group.
    Setting ``stopping`` (a signal handler does) ends :meth:`batches` within one poll; the
    caller hands what it wrote to :meth:`written` (with ``--group``, only that is committed)."""

    def __init__(self, conn: Connection, opts: ConsumeOptions) -> None:
        from kctl.broker import offsets

        self.conn = conn
        self.opts = opts
        admin = Admin(conn)
        if opts.group and opts.partitions:
            raise UsageError("--partition cannot be combined with --group", "the group assigns")
        cfg: dict[str, Any] = {
            "enable.partition.eof": True,
            "isolation.level": "read_committed" if opts.read_committed else "read_uncommitted",
            "auto.offset.reset": "error" if not opts.group else "earliest",
            # How long the broker holds a fetch that finds nothing: an empty partition's end
            # (partition EOF) shows after it, so reads to the end wait 10 ms, not 100.
            "fetch.wait.max.ms": 100 if opts.follow else 10,
            # librdkafka stops fetching a partition whose local queue is full and waits
            # fetch.queue.backoff.ms (1 s by default) before it looks again: a reader that keeps
            # up then idles most of the time (1,000,000 records: 7.8 s with it, 1.9 s without).
            "fetch.queue.backoff.ms": 10,
            "queued.max.messages.kbytes": 262144,
            "fetch.message.max.bytes": 4 << 20,
        }
        if opts.group:
            cfg["group.id"] = opts.group
            cfg["enable.auto.commit"] = opts.commit
            cfg["enable.auto.offset.store"] = False
        # Where the user's properties land: --consumer-property over kctl's choices, -X (and
        # the profile's client properties) over both (librdkafka_config applies them last).
        chosen = {**opts.extra, **conn.extra}
        # KIP-848's consumer protocol (Kafka 4) is incremental, like the cooperative assignor.
        self.cooperative = bool(opts.group) and cooperative_rebalancing(chosen)
        if (
            opts.group
            and not consumer_protocol(chosen)  # the broker owns the session there
            and "session.timeout.ms" not in chosen
            and _on_tansu(admin)
        ):
            # Tansu (kctl local up --engine tansu) holds a classic group's join until the
            # session timeout: librdkafka's 45 s default means ~23 s before the first record.
            cfg["session.timeout.ms"] = TANSU_SESSION_TIMEOUT_MS
            cfg["heartbeat.interval.ms"] = 1000
            if conn.debug:
                import sys

                sys.stderr.write(
                    f"kctl: debug: Tansu broker: session.timeout.ms={TANSU_SESSION_TIMEOUT_MS} "
                    "for the group (it holds joins until the session timeout)\n"
                )
        cfg.update(opts.extra)
        self.tps = offsets.partitions_of(admin, opts.topics, opts.partitions or None)
        self.start: StartOffsets | None = None
        if not opts.group or opts.start is not None:
            self.start = resolve_start(
                admin, self.tps, opts.start, read_committed=opts.read_committed
            )
        # Made last: a consumer made before the lookups above and assigned after them stalls
        # for a second in about one run of three (librdkafka 2.16).
        self.consumer, self.log = make_consumer(conn, **cfg)
        self.assigned: set[tuple[str, int]] = set()
        self.eof: set[tuple[str, int]] = set()
        self.seen: set[tuple[str, int]] = set()  # every partition the group ever gave us
        self.ever_assigned = False
        self.stopping = False
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
        """The group gave us ``partitions``: all of our partitions on the classic protocol's
        eager rebalancing, only the added ones on a cooperative (incremental) one. ``--from``
        positions a partition the first time this consumer gets it; a partition given back
        later starts at the group's committed offset (what whoever held it committed)."""
        from confluent_kafka import TopicPartition

        keys = [(tp.topic, tp.partition) for tp in partitions]
        start = self.start or {}
        fresh = [
            TopicPartition(t, p, start[(t, p)])
            if (t, p) in start and (t, p) not in self.seen
            else TopicPartition(t, p)
            for t, p in keys
        ]
        if self.cooperative:
            consumer.incremental_assign(fresh)
            self.assigned |= set(keys)
        else:
            consumer.assign(fresh)
            self.assigned = set(keys)
        self.seen.update(keys)
        self.eof -= set(keys)  # each must reach its end again
        self.ever_assigned = True

    def _on_revoke(self, consumer: Any, partitions: list[Any]) -> None:
        """The group takes ``partitions`` back (on eager rebalancing: all of them, before
        handing out the new assignment). With auto-commit librdkafka commits the offsets
        stored for them as they go."""
        if self.cooperative:
            consumer.incremental_unassign(partitions)
        else:
            consumer.unassign()
        keys = {(tp.topic, tp.partition) for tp in partitions}
        self.assigned -= keys
        self.eof -= keys

    def done(self) -> bool:
        return (
            not self.opts.follow
            and self.ever_assigned
            and bool(self.assigned)
            and self.eof >= self.assigned
        )

    def batches(self) -> Iterator[list[Any]]:
        """Lists of records (messages without errors), until the end or ``max_messages``."""
        from confluent_kafka import KafkaError, Message

        error_of = Message.error
        consume = self.consumer.consume
        left = self.opts.max_messages
        size = self.opts.batch
        join_wait = max(60.0, self.conn.timeout * 4)
        join_deadline = time.monotonic() + join_wait
        # Without partitions (none given yet, or all taken away) for --timeout seconds, a read
        # to the end asks the group why, every --timeout seconds: an end never comes then.
        unassigned_since: float | None = None
        eof_code = KafkaError._PARTITION_EOF
        # consume() returns when it has ``size`` messages or the wait is over: a partial batch
        # (the tail of a read, a partition's end) waits it out in full, so reads to the end
        # wait 10 ms; --follow 50 ms (fewer wake-ups while idle).
        wait = 0.05 if self.opts.follow else 0.01
        while (left is None or left > 0) and not self.stopping:
            msgs = consume(size if left is None else min(size, left), wait)
            if not msgs:
                if self.done():
                    return
                now = time.monotonic()
                if self.opts.group and not self.opts.follow and not self.assigned:
                    if unassigned_since is None:
                        unassigned_since = now
                    elif now - unassigned_since >= self.conn.timeout:
                        self._explain_unassigned(now - unassigned_since)
                        unassigned_since = now
                else:
                    unassigned_since = None
                if not self.ever_assigned and now > join_deadline:
                    raise KctlError(
                        f"no partitions assigned to group {self.opts.group!r}",
                        f"nothing from the group coordinator within {join_wait:g}s",
                    )
                fatal = self.log.fatal()
                if fatal is not None:
                    from kctl.broker.client import connect_error

                    raise connect_error(self.conn, fatal)
                continue
            good = msgs
            if any(map(error_of, msgs)):  # end-of-partition events, errors: rare
                good = [x for x in msgs if x.error() is None]
                for bad in msgs:
                    e = bad.error()
                    if e is None:
                        continue
                    if e.code() == eof_code:
                        self.eof.add((bad.topic(), bad.partition()))
                    else:
                        self._raise(bad, e)
            if good:
                if left is not None:
                    left -= len(good)
                yield good
            if self.done():
                return

    def _explain_unassigned(self, waited: float) -> None:
        """The group gave this consumer no partition for ``waited`` seconds: when its other
        members hold every partition of the topics, that is the error (no end will come);
        otherwise (a rebalance under way, say) the wait goes on."""
        from kctl.broker import groups

        assert self.opts.group is not None
        me = self.consumer.memberid() or ""
        try:
            described = groups.describe(Admin(self.conn), [self.opts.group])
        except KctlError:
            return  # cannot tell now; the join deadline still applies
        error = unassigned_error(
            self.opts.group, described.get(self.opts.group), me, self.tps, waited
        )
        if error is not None:
            raise error

    def written(self, msgs: list[Any]) -> None:
        """Records the caller wrote out: with ``--group`` (and commit), their offsets are
        stored for the next commit (auto-commit, and the one on close)."""
        if msgs and self.opts.group and self.opts.commit:
            self._store(msgs)

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
        if name == "GROUP_AUTHORIZATION_FAILED" and self.opts.group:
            raise KctlError(
                f"not authorized to use group {self.opts.group!r}",
                f"{name}: an ACL must allow Read on the group ({err.str()})",
            )
        if name == "TOPIC_AUTHORIZATION_FAILED":
            raise KctlError(
                f"not authorized to read {where}",
                f"{name}: an ACL must allow Read on the topic ({err.str()})",
            )
        if err.fatal() or not err.retriable():
            raise KctlError(f"consuming {where} failed", f"{name}: {err.str()}")
        # transient: librdkafka retries by itself

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.consumer.close()


def unassigned_error(
    group: str, described: Any, me: str, tps: list[tuple[str, int]], waited: float
) -> KctlError | None:
    """The error of a consumer the group gives nothing because its other live members hold
    every partition of ``tps`` (``described``: the group as :func:`kctl.broker.groups.describe`
    reads it); None when some partition is free (a rebalance is under way)."""
    if described is None:
        return None
    wanted = set(tps)
    holders = [m for m in described.members if m.member_id != me and wanted & set(m.assignment)]
    held = {tp for m in holders for tp in m.assignment} & wanted
    if not holders or held != wanted:
        return None
    topics = ", ".join(sorted({t for t, _ in tps}))
    return KctlError(
        f"no partitions assigned to group {group!r}",
        f"its {len(holders)} other live member(s) hold all {len(wanted)} partition(s) of "
        f"{topics}; waited {waited:.0f}s; a group member reads only what the group assigns it",
    )
