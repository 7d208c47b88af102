"""``replicas verify``: fetch the same offset range from every replica of a partition (Fetch with
replica_id -1, sent to each replica's broker; Fetch v11+ lets a follower serve it) and compare
the record batches (:mod:`kctl.replicas.compare`), as kafka-replica-verification.sh did."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kctl.broker import kafka_python
from kctl.broker.client import Admin
from kctl.errors import KctlError
from kctl.replicas.compare import ReplicaLog, batch_keys, compare

MAX_VERSION = 12  # v13+ names topics by id only
MAX_ROUNDS = 1000


@dataclass
class Fetched:
    error: str | None
    high_watermark: int
    log_start_offset: int
    records: bytes


def build_request(topic: str, partition: int, offset: int, max_bytes: int, version: int) -> Any:
    from kafka.protocol.consumer import FetchRequest as F

    return F(
        version=version,
        replica_id=-1,
        max_wait_ms=100,  # some brokers answer nothing at all to a zero wait
        min_bytes=1,
        max_bytes=max_bytes,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=[
            F.FetchTopic(
                topic=topic,
                partitions=[
                    F.FetchTopic.FetchPartition(
                        partition=partition,
                        current_leader_epoch=-1,
                        fetch_offset=offset,
                        last_fetched_epoch=-1,
                        log_start_offset=-1,
                        partition_max_bytes=max_bytes,
                    )
                ],
            )
        ],
        forgotten_topics_data=[],
        rack_id="",
    )


def parse_response(response: Any, topic: str, partition: int) -> Fetched:
    from kctl.broker.logdirs import error_name

    top = getattr(response, "error_code", 0) or 0
    if top:
        return Fetched(error_name(top), -1, -1, b"")
    for t in response.responses:
        if t.topic != topic:
            continue
        for p in t.partitions:
            if p.partition_index == partition:
                code = p.error_code or 0
                return Fetched(
                    None if code == 0 else error_name(code),
                    p.high_watermark,
                    p.log_start_offset,
                    bytes(p.records or b""),
                )
    return Fetched("the broker returned no data for the partition", -1, -1, b"")


def fetch_replica(
    client: Any,
    node: int,
    topic: str,
    partition: int,
    start: int,
    budget: int,
    version: int,
    chunk: int = 1024 * 1024,
) -> tuple[ReplicaLog, str | None]:
    """The batches broker ``node`` serves from ``start`` up to its high watermark or ``budget``
    bytes; and the error that stopped it, if any."""
    log = ReplicaLog(f"broker {node}")
    offset = start
    for _ in range(MAX_ROUNDS):
        if log.bytes >= budget:
            break
        size = max(1024, min(chunk, budget - log.bytes))
        request = build_request(topic, partition, offset, size, version)
        what = f"fetching {topic}-{partition} from broker {node}"
        got = parse_response(
            kafka_python.send(client, request, what, node_id=node), topic, partition
        )
        if got.error is not None:
            return log, got.error
        keys, problems = batch_keys(got.records, partial_tail_ok=True)
        keys = [k for k in keys if k.last_offset >= offset]
        log.problems += [(start, p) for p in problems]
        if not keys:
            break
        log.batches += keys
        log.bytes += sum(k.size for k in keys)
        offset = keys[-1].last_offset + 1
        if offset >= got.high_watermark:
            break
    return log, None


def verify(
    admin: Admin, topics: list[str], *, offset: int | None, budget: int
) -> list[dict[str, Any]]:
    """One row per replica of every partition of ``topics``, the leader first."""
    from kctl.broker.logdirs import api_range
    from kctl.broker.offsets import list_offsets
    from kctl.broker.topics import resolve_names

    view, names = resolve_names(admin, topics, None, internal=False, missing_ok=False)
    if not topics:
        names = [n for n in sorted(view.topics) if not view.topics[n].internal]
    parts = [(n, p) for n in names for p in view.topics[n].partitions]
    tps = [(n, p.partition) for n, p in parts if p.leader >= 0]  # offline ones get no answer
    starts = {} if offset is not None else list_offsets(admin, tps, "earliest")
    # A replica has nothing to compare where the leader holds nothing from the start: its log
    # is empty there, and a Fetch would only wait out max_wait_ms (one partition at a time).
    ends = list_offsets(admin, tps, "latest")
    rows: list[dict[str, Any]] = []
    with kafka_python.admin_client(admin.conn) as client:
        versions: dict[int, int] = {}
        for name, p in parts:
            if p.leader < 0:
                rows.append(
                    _row(name, p.partition, p.leader, "leader", "offline", None, None, "no leader")
                )
                continue
            start = offset if offset is not None else starts[(name, p.partition)]
            order = [p.leader] + [r for r in p.replicas if r != p.leader]
            logs, errors = [], {}
            for node in order:
                if node not in view.brokers:
                    errors[node] = "broker not alive"
                    continue
                if node not in versions:
                    found = api_range(client, node, "Fetch")
                    if found is None:
                        raise KctlError(f"broker {node} does not answer Fetch")
                    versions[node] = min(found[1], MAX_VERSION)
                if start >= ends[(name, p.partition)]:
                    logs.append(ReplicaLog(f"broker {node}"))
                    continue
                log, err = fetch_replica(
                    client, node, name, p.partition, start, budget, versions[node]
                )
                if err is not None:
                    errors[node] = err
                    continue
                logs.append(log)
            results = (
                compare(logs, common_only=True)
                if logs and logs[0].name == f"broker {p.leader}"
                else []
            )
            by_name = {r.replica: r for r in results}
            for node in order:
                role = "leader" if node == p.leader else "follower"
                if node in errors:
                    status = "offline" if errors[node] == "broker not alive" else "unfetchable"
                    rows.append(
                        _row(name, p.partition, node, role, status, None, None, errors[node])
                    )
                    continue
                r = by_name.get(f"broker {node}")
                if r is None:
                    rows.append(
                        _row(
                            name,
                            p.partition,
                            node,
                            role,
                            "unfetchable",
                            None,
                            None,
                            "the leader could not be fetched",
                        )
                    )
                    continue
                reason = r.differences[0].reason if r.differences else ""
                span = (
                    f"{r.log_start_offset}-{r.log_end_offset - 1}"
                    if r.log_start_offset is not None and r.log_end_offset is not None
                    else "empty"
                )
                rows.append(
                    _row(
                        name,
                        p.partition,
                        node,
                        role,
                        r.status,
                        r.first_divergent_offset,
                        span,
                        reason,
                        r.batches,
                    )
                )
    return rows


def _row(
    topic: str,
    partition: int,
    broker: int,
    role: str,
    status: str,
    first: int | None,
    span: str | None,
    reason: str,
    batches: int | None = None,
) -> dict[str, Any]:
    return {
        "topic": topic,
        "partition": partition,
        "broker": broker,
        "role": role,
        "status": status,
        "first_divergent_offset": first,
        "offsets": span,
        "batches": batches,
        "reason": reason,
    }
