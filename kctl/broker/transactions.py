"""Transaction operations (kafka-transactions.sh): list, describe, producers, find-hanging, abort.

librdkafka's Python API (confluent-kafka 2.16) has no transaction admin calls (no
list_transactions, describe_transactions, describe_producers, abort_transaction), so every
request here goes through kafka-python's protocol classes (:mod:`kctl.broker.kafka_python`):

- ListTransactions: to every broker (each coordinates the transactional ids of its
  ``__transaction_state`` partitions); ``--duration-filter`` needs v1 (KIP-994);
- FindCoordinator (key type 1) then DescribeTransactions to the coordinator;
- DescribeProducers to the partition leader;
- WriteTxnMarkers (abort) to the partition leader, as Kafka's ``Admin.abortTransaction`` does.

The choice of which open transactions are hanging is pure (:func:`verdict`).
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from kctl.broker import kafka_python
from kctl.broker.client import Admin
from kctl.errors import KctlError, NotFoundError, UnsupportedByBroker, UsageError

# States in which the coordinator still holds the transaction open (markers not yet written).
OPEN_STATES = ("Ongoing", "PrepareCommit", "PrepareAbort")
STATES = (
    "Empty",
    "Ongoing",
    "PrepareCommit",
    "PrepareAbort",
    "CompleteCommit",
    "CompleteAbort",
    "Dead",
    "PrepareEpochFence",
)
MAX_TIMEOUT_CONFIG = "transaction.max.timeout.ms"
_RETRIABLE = {
    14,
    15,
    16,
}  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR


@dataclass(frozen=True)
class Listed:
    transactional_id: str
    producer_id: int
    state: str
    coordinator: int


@dataclass
class Transaction:
    transactional_id: str
    state: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    start_time_ms: int  # -1: no transaction in progress
    coordinator: int
    partitions: list[tuple[str, int]] = field(default_factory=list)


@dataclass(frozen=True)
class Producer:
    topic: str
    partition: int
    leader: int
    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int
    current_txn_start_offset: int  # -1: no open transaction on this partition


@dataclass(frozen=True)
class Hanging:
    producer: Producer
    age_ms: int
    hanging: bool
    reason: str
    transactional_id: str | None


def _error_name(code: int) -> str:
    import kafka.errors as Errors

    return str(getattr(Errors.for_code(code), "message", f"error code {code}"))


class TxnClient(kafka_python.LazyClient):
    """One kafka-python connection pool for a command; a context manager."""

    def version(self, request_class: Any, api: str, what: str) -> int:
        v = kafka_python.api_version(self.client, request_class)
        if v < 0:
            raise UnsupportedByBroker(api, what)
        return v

    def send(self, request: Any, what: str, node_id: int | None = None) -> Any:
        return kafka_python.send(self.client, request, what, node_id)

    # -- ListTransactions -----------------------------------------------------------------

    def list_transactions(
        self,
        states: list[str] | None = None,
        producer_ids: list[int] | None = None,
        duration_ms: int | None = None,
    ) -> list[Listed]:
        """Every transactional id every broker coordinates, filtered by the broker."""
        from kafka.protocol.admin.transactions import ListTransactionsRequest

        what = "listing transactions"
        version = self.version(ListTransactionsRequest, "ListTransactions", what)
        fields: dict[str, Any] = {
            "state_filters": list(states or []),
            "producer_id_filters": list(producer_ids or []),
        }
        if duration_ms is not None:
            if version < 1:
                raise UnsupportedByBroker("ListTransactions v1 (--duration-filter)", what)
            fields["duration_filter"] = duration_ms
        out: list[Listed] = []
        for node in sorted(b.id for b in self.admin.metadata().brokers.values()):
            r = self.send(ListTransactionsRequest(**fields), f"{what} on broker {node}", node)
            if r.error_code:
                raise KctlError(f"{what} on broker {node}", _error_name(r.error_code))
            out += [
                Listed(t.transactional_id, t.producer_id, t.transaction_state, node)
                for t in r.transaction_states
            ]
        return sorted(out, key=lambda t: t.transactional_id)

    # -- FindCoordinator + DescribeTransactions -------------------------------------------

    def coordinators(self, txn_ids: list[str]) -> dict[str, int]:
        from kafka.protocol.metadata import FindCoordinatorRequest

        out: dict[str, int] = {}
        pending = list(dict.fromkeys(txn_ids))
        deadline = time.monotonic() + self.admin.timeout
        while pending:
            answers: list[tuple[str, int, int]] = []
            if kafka_python.api_version(self.client, FindCoordinatorRequest) >= 4:
                r = self.send(
                    FindCoordinatorRequest(key_type=1, coordinator_keys=pending),
                    "finding transaction coordinators",
                )
                answers = [(c.key, c.error_code, c.node_id) for c in r.coordinators]
            else:
                for tid in pending:
                    r = self.send(
                        FindCoordinatorRequest(key=tid, key_type=1, max_version=3),
                        f"finding the coordinator of transactional id {tid!r}",
                    )
                    answers.append((tid, r.error_code, r.node_id))
            pending = []
            for tid, code, node in answers:
                if code in _RETRIABLE:
                    pending.append(tid)
                elif code:
                    raise KctlError(f"finding the coordinator of {tid!r}", _error_name(code))
                else:
                    out[tid] = node
            if pending:
                if time.monotonic() > deadline:
                    raise KctlError("finding transaction coordinators", "coordinator not available")
                time.sleep(0.2)
        return out

    def describe(self, txn_ids: list[str]) -> dict[str, Transaction]:
        """DescribeTransactions at each id's coordinator; an id it does not know is absent."""
        from kafka.protocol.admin.transactions import DescribeTransactionsRequest

        what = "describing transactions"
        self.version(DescribeTransactionsRequest, "DescribeTransactions", what)
        by_node: dict[int, list[str]] = defaultdict(list)
        for tid, node in self.coordinators(txn_ids).items():
            by_node[node].append(tid)
        out: dict[str, Transaction] = {}
        for node, ids in sorted(by_node.items()):
            r = self.send(DescribeTransactionsRequest(transactional_ids=ids), what, node)
            for t in r.transaction_states:
                if t.error_code == 105:  # TRANSACTIONAL_ID_NOT_FOUND
                    continue
                if t.error_code:
                    raise KctlError(
                        f"describing transaction {t.transactional_id!r}", _error_name(t.error_code)
                    )
                out[t.transactional_id] = Transaction(
                    transactional_id=t.transactional_id,
                    state=t.transaction_state,
                    producer_id=t.producer_id,
                    producer_epoch=t.producer_epoch,
                    timeout_ms=t.transaction_timeout_ms,
                    start_time_ms=t.transaction_start_time_ms,
                    coordinator=node,
                    partitions=sorted((d.topic, p) for d in t.topics for p in d.partitions),
                )
        return out

    # -- DescribeProducers ----------------------------------------------------------------

    def leaders(self, topic: str | None = None) -> dict[tuple[str, int], int]:
        md = self.admin.metadata(topic)
        out = {}
        for name, t in md.topics.items():
            if t.error is not None:
                if topic is not None:
                    raise NotFoundError(f"topic {name!r}", t.error.str())
                continue
            for p in t.partitions.values():
                out[(name, p.id)] = p.leader
        return out

    def producers(
        self, partitions: list[tuple[str, int]], leaders: dict[tuple[str, int], int]
    ) -> list[Producer]:
        """Active producers of the partitions, asked of each partition's leader."""
        from kafka.protocol.admin.transactions import DescribeProducersRequest

        what = "describing producers"
        self.version(DescribeProducersRequest, "DescribeProducers", what)
        by_node: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        for tp in partitions:
            if tp not in leaders:
                raise NotFoundError(f"partition {tp[0]}:{tp[1]}", "not in the cluster's metadata")
            if leaders[tp] < 0:
                raise KctlError(f"describing producers of {tp[0]}:{tp[1]}", "no leader")
            by_node[leaders[tp]][tp[0]].append(tp[1])
        out: list[Producer] = []
        for node, topics in sorted(by_node.items()):
            request = DescribeProducersRequest(
                topics=[
                    DescribeProducersRequest.TopicRequest(name=t, partition_indexes=sorted(ps))
                    for t, ps in sorted(topics.items())
                ]
            )
            r = self.send(request, f"{what} on broker {node}", node)
            for t in r.topics:
                for p in t.partitions:
                    if p.error_code:
                        why = p.error_message or _error_name(p.error_code)
                        raise KctlError(f"{what} of {t.name}:{p.partition_index}", why)
                    out += [
                        Producer(
                            topic=t.name,
                            partition=p.partition_index,
                            leader=node,
                            producer_id=s.producer_id,
                            producer_epoch=s.producer_epoch,
                            last_sequence=s.last_sequence,
                            last_timestamp=s.last_timestamp,
                            coordinator_epoch=s.coordinator_epoch,
                            current_txn_start_offset=s.current_txn_start_offset,
                        )
                        for s in p.active_producers
                    ]
        return sorted(out, key=lambda s: (s.topic, s.partition, s.producer_id))

    # -- WriteTxnMarkers ------------------------------------------------------------------

    def abort(self, producer: Producer) -> None:
        """Write an abort marker for the producer's open transaction on its partition, at the
        partition leader (what ``Admin.abortTransaction`` sends)."""
        from kafka.protocol.producer.transaction import WriteTxnMarkersRequest

        tp = f"{producer.topic}:{producer.partition}"
        what = f"aborting the transaction of producer {producer.producer_id} on {tp}"
        self.version(WriteTxnMarkersRequest, "WriteTxnMarkers", what)
        marker = WriteTxnMarkersRequest.WritableTxnMarker(
            producer_id=producer.producer_id,
            producer_epoch=producer.producer_epoch,
            transaction_result=False,  # abort
            topics=[
                WriteTxnMarkersRequest.WritableTxnMarker.WritableTxnMarkerTopic(
                    name=producer.topic, partition_indexes=[producer.partition]
                )
            ],
            coordinator_epoch=producer.coordinator_epoch,
        )
        r = self.send(WriteTxnMarkersRequest(markers=[marker]), what, producer.leader)
        for m in r.markers:
            for t in m.topics:
                for p in t.partitions:
                    if p.error_code:
                        raise KctlError(what, _error_name(p.error_code))


def max_transaction_timeout_ms(admin: Admin, broker: int) -> int:
    """The broker's transaction.max.timeout.ms."""
    from kctl.broker import configs

    values = configs.describe(admin, configs.Entity("broker", str(broker)), include_defaults=True)
    for v in values:
        if v.name == MAX_TIMEOUT_CONFIG and v.value is not None:
            return int(v.value)
    raise KctlError(f"reading {MAX_TIMEOUT_CONFIG} of broker {broker}", "not in its configs")


def verdict(
    producer: Producer, txn_id: str | None, described: Transaction | None
) -> tuple[bool, str]:
    """Whether an open transaction found on a partition is hanging, as kafka-transactions.sh
    find-hanging decides: the coordinator does not know the producer, or holds no open
    transaction for it on this partition (pure)."""
    tp = (producer.topic, producer.partition)
    if txn_id is None:
        return True, "no transactional id has this producer id"
    if described is None:
        return True, f"coordinator does not know {txn_id!r}"
    if described.producer_id != producer.producer_id:
        return True, f"{txn_id!r} now has producer id {described.producer_id}"
    if described.state not in OPEN_STATES:
        return True, f"{txn_id!r} is {described.state}"
    if tp not in described.partitions:
        return True, f"{txn_id!r} is {described.state} without this partition"
    return False, f"{txn_id!r} is {described.state} with this partition"


def find_hanging(
    admin: Admin,
    *,
    broker: int | None,
    topic: str | None,
    max_age_ms: int | None,
    now_ms: int | None = None,
) -> tuple[int, list[Hanging]]:
    """(threshold used, every open transaction older than it with its verdict). Scope: the
    partitions ``broker`` leads, or every partition of ``topic``. The threshold is the
    broker's transaction.max.timeout.ms unless ``max_age_ms``."""
    if (broker is None) == (topic is None):
        raise UsageError("give exactly one of --broker, --topic")
    with TxnClient(admin) as c:
        leaders = c.leaders(topic)
        if broker is not None:
            brokers = {b.id for b in admin.metadata().brokers.values()}
            if broker not in brokers:
                raise NotFoundError(f"broker {broker}", f"known brokers: {sorted(brokers)}")
            scope = [tp for tp, leader in leaders.items() if leader == broker]
        else:
            scope = list(leaders)
        if max_age_ms is None:
            max_age_ms = max_transaction_timeout_ms(
                admin, broker if broker is not None else min(set(leaders.values()) - {-1})
            )
        now = int(time.time() * 1000) if now_ms is None else now_ms
        open_ = [
            p
            for p in (c.producers(scope, leaders) if scope else [])
            if p.current_txn_start_offset >= 0 and now - p.last_timestamp > max_age_ms
        ]
        if not open_:
            return max_age_ms, []
        listed = c.list_transactions(producer_ids=sorted({p.producer_id for p in open_}))
        ids = {t.producer_id: t.transactional_id for t in listed}
        described = c.describe(sorted(set(ids.values()))) if ids else {}
        out = []
        for p in open_:
            tid = ids.get(p.producer_id)
            hanging, reason = verdict(p, tid, described.get(tid) if tid else None)
            out.append(Hanging(p, now - p.last_timestamp, hanging, reason, tid))
        return max_age_ms, out


def plan_abort(
    admin: Admin,
    topic: str,
    partition: int,
    *,
    start_offset: int | None,
    producer_id: int | None,
    producer_epoch: int | None,
    coordinator_epoch: int | None,
) -> Producer:
    """The open transaction to abort on a partition: the producer whose current transaction
    starts at ``start_offset`` (found with DescribeProducers), or the one given by id, epoch
    and coordinator epoch (as kafka-transactions.sh abort takes them)."""
    by_id = (producer_id, producer_epoch, coordinator_epoch)
    if start_offset is not None and any(v is not None for v in by_id):
        raise UsageError(
            "give --start-offset or --producer-id/--producer-epoch/--coordinator-epoch"
        )
    with TxnClient(admin) as c:
        leaders = c.leaders(topic)
        tp = (topic, partition)
        if tp not in leaders:
            raise NotFoundError(f"partition {topic}:{partition}", "not in the cluster's metadata")
        if start_offset is None:
            if producer_id is None or producer_epoch is None or coordinator_epoch is None:
                raise UsageError(
                    "give --start-offset, or all of --producer-id, --producer-epoch,"
                    " --coordinator-epoch"
                )
            return Producer(topic, partition, leaders[tp], producer_id, producer_epoch, -1, -1,
                            coordinator_epoch, -1)  # fmt: skip
        found = [
            p for p in c.producers([tp], leaders) if p.current_txn_start_offset == start_offset
        ]
        if not found:
            raise NotFoundError(
                f"no open transaction starts at offset {start_offset} of {topic}:{partition}",
                "see 'kctl transactions producers'",
            )
        return found[0]


def abort(admin: Admin, producer: Producer) -> None:
    with TxnClient(admin) as c:
        c.abort(producer)
