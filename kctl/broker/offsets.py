"""Partition offsets (kafka-get-offsets.sh) and record deletion (kafka-delete-records.sh).

ListOffsets answers earliest (log start offset), latest (log end offset, or the last stable
offset under read_committed) and "first offset whose timestamp is at or after T".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kctl.broker.client import Admin
from kctl.errors import KctlError

TopicPartitionKey = tuple[str, int]


@dataclass
class PartitionOffsets:
    topic: str
    partition: int
    earliest: int
    latest: int
    at_time: int | None = None  # offset for --time; None when not asked

    @property
    def records(self) -> int:
        return max(0, self.latest - self.earliest)


def parse_time(text: str) -> int:
    """``@EPOCH_MS`` or ISO-8601 (no zone = UTC) as epoch ms: :func:`kctl.parsing.time_ms`."""
    from kctl.parsing import time_ms

    return time_ms(text)


def looks_like_time(text: str) -> bool:
    from kctl.parsing import looks_like_time as check

    return check(text)


def partitions_of(
    admin: Admin, topics: list[str], only: list[int] | None = None, metadata: Any = None
) -> list[TopicPartitionKey]:
    """(topic, partition) pairs of existing topics; ``only`` restricts and validates partitions.
    ``metadata``: the cluster's Metadata when the caller has it (else it is asked)."""
    md = admin.metadata() if metadata is None else metadata
    out: list[TopicPartitionKey] = []
    for topic in topics:
        tm = md.topics.get(topic)
        if tm is None or (tm.error is not None and not tm.partitions):
            from kctl.broker.topics import missing_topic

            raise missing_topic(admin, topic)
        ids = sorted(tm.partitions)
        if only:
            for p in only:
                if p not in tm.partitions:
                    raise KctlError(
                        f"partition {p} of topic {topic!r} does not exist",
                        f"the topic has partitions 0-{len(ids) - 1}",
                    )
            ids = sorted(set(only))
        out += [(topic, p) for p in ids]
    return out


# Error names of a partition that does not exist (any more): a deleted topic, say.
PARTITION_GONE = frozenset(
    {"UNKNOWN_TOPIC_OR_PART", "_UNKNOWN_PARTITION", "_UNKNOWN_TOPIC", "UNKNOWN_TOPIC_ID"}
)


def list_offsets(
    admin: Admin,
    tps: list[TopicPartitionKey],
    spec: str | int,
    *,
    read_committed: bool = False,
    skip_gone: bool = False,
) -> dict[TopicPartitionKey, int]:
    """One ListOffsets round for every partition (librdkafka batches them per leader):
    ``spec`` is "earliest", "latest" or a timestamp in ms. For a timestamp after every record
    the answer is the latest offset. ``skip_gone``: partitions that do not exist are left out
    of the answer instead of failing it."""
    from confluent_kafka import IsolationLevel, TopicPartition
    from confluent_kafka.admin import OffsetSpec

    if not tps:
        return {}
    if spec == "earliest":
        offset_spec = OffsetSpec.earliest()
    elif spec == "latest":
        offset_spec = OffsetSpec.latest()
    else:
        offset_spec = OffsetSpec.for_timestamp(int(spec))
    level = IsolationLevel.READ_COMMITTED if read_committed else IsolationLevel.READ_UNCOMMITTED
    request = {TopicPartition(t, p): offset_spec for t, p in tps}
    what = f"listing {spec} offsets" if isinstance(spec, str) else "listing offsets for a time"
    futures = admin.client.list_offsets(
        request, isolation_level=level, request_timeout=admin.timeout
    )
    absent = PARTITION_GONE if skip_gone else frozenset()
    out: dict[TopicPartitionKey, int] = {}
    missing: list[TopicPartitionKey] = []
    for tp, fut in futures.items():
        info = admin.result(fut, f"{what} of {tp.topic}[{tp.partition}]", absent)
        if info is None:
            continue
        key = (tp.topic, tp.partition)
        # No record at or after the time: Kafka answers offset -1; some brokers (Tansu) answer
        # offset 0 with timestamp -1.
        if not isinstance(spec, str) and (info.offset < 0 or info.timestamp < 0):
            missing.append(key)
        else:
            out[key] = info.offset
    if missing:
        out.update(
            list_offsets(
                admin, missing, "latest", read_committed=read_committed, skip_gone=skip_gone
            )
        )
    return out


# ListOffsets timestamps with a meaning (kafka-get-offsets.sh's --time -1..-6) and the lowest
# ListOffsets version that knows each; a time in ms needs v1.
LATEST, EARLIEST, MAX_TIMESTAMP = -1, -2, -3
_MIN_VERSION = {-1: 1, -2: 1, -3: 7, -4: 8, -5: 9, -6: 11}
# Partition errors that a fresh look at the leaders cures: LEADER_NOT_AVAILABLE,
# NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT, NETWORK_EXCEPTION, FENCED_LEADER_EPOCH,
# UNKNOWN_LEADER_EPOCH, OFFSET_NOT_AVAILABLE (a new leader's high watermark not known yet).
_RETRIABLE = frozenset({5, 6, 7, 13, 74, 75, 78})
_GONE = frozenset({3, 100})  # UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID


@dataclass(frozen=True)
class Spec:
    """One ListOffsets question: a time in ms, or -1..-6 (latest, earliest, max-timestamp,
    earliest-local, latest-tiered, earliest-pending-upload), under an isolation level."""

    timestamp: int
    read_committed: bool = False

    def name(self) -> str:
        from kctl.parsing import OFFSET_SPEC_NAMES

        if self.timestamp >= 0:
            return "offsets for a time"
        return f"{OFFSET_SPEC_NAMES[self.timestamp]} offsets"


def _error_name(code: int) -> str:
    import kafka.errors as errors

    return str(getattr(errors.for_code(code), "message", f"error code {code}"))


def leaders(client: Any, topics: list[str]) -> dict[TopicPartitionKey, int]:
    """Partition -> leader (-1: none) of ``topics``, from ONE Metadata request (kafka-python,
    no topic auto-creation); a topic the cluster does not know has no entries."""
    from kafka.protocol.metadata import MetadataRequest

    from kctl.broker import kafka_python

    if not topics:
        return {}
    Topic = MetadataRequest.MetadataRequestTopic
    request = MetadataRequest(
        topics=[Topic(name=t) for t in sorted(set(topics))], allow_auto_topic_creation=False
    )
    response = kafka_python.send(client, request, "reading partition leaders")
    out: dict[TopicPartitionKey, int] = {}
    for t in response.topics:
        if t.error_code:
            continue
        name = t.name
        for p in t.partitions:
            out[(name, p.partition_index)] = p.leader_id
    return out


def read_offsets(
    client: Any,
    tps: list[TopicPartitionKey],
    specs: list[Spec],
    *,
    timeout: float,
    skip_gone: bool = False,
    known_leaders: dict[TopicPartitionKey, int] | None = None,
) -> list[dict[TopicPartitionKey, tuple[int, int]]]:
    """ListOffsets for every partition and every spec, all at once: one Metadata request for
    the leaders, then ONE request per (partition leader, spec), sent together over kafka-python's
    connections (one round trip, not one per leader). Per spec, partition -> (offset, timestamp)
    as Kafka answers it (-1, -1 where it has none). A partition whose leader is missing or
    moved is asked again after a fresh Metadata, within ``timeout`` seconds. ``skip_gone``:
    partitions that do not exist are left out, else they fail the whole call like any other
    error (naming the partition). ``known_leaders``: the leaders as a Metadata the caller
    just read says, used for the first round instead of asking again."""
    import time
    from collections import defaultdict

    from kafka.protocol.consumer.offsets import ListOffsetsRequest

    from kctl.broker import kafka_python

    out: list[dict[TopicPartitionKey, tuple[int, int]]] = [{} for _ in specs]
    if not tps or not specs:
        return out
    version = kafka_python.api_version(client, ListOffsetsRequest)
    for spec in specs:
        need = _MIN_VERSION.get(spec.timestamp, 1)
        if version < need:
            raise KctlError(
                f"listing {spec.name()}",
                f"the cluster's ListOffsets is v{version}; {spec.name()} need v{need}"
                + (" (Kafka 3.8+ or newer)" if spec.timestamp <= -4 else ""),
            )
    Topic = ListOffsetsRequest.ListOffsetsTopic
    Part = Topic.ListOffsetsPartition
    pending = {i: list(dict.fromkeys(tps)) for i in range(len(specs))}
    deadline = time.monotonic() + timeout
    where = known_leaders
    while True:
        if where is None:
            where = leaders(client, sorted({t for want in pending.values() for t, _ in want}))
        requests: list[tuple[int, Any]] = []
        asked: list[int] = []
        again: dict[int, list[TopicPartitionKey]] = defaultdict(list)
        why: dict[TopicPartitionKey, str] = {}
        for i, want in pending.items():
            spec = specs[i]
            by_leader: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
            for tp in want:
                leader = where.get(tp)
                if leader is None:
                    if not skip_gone:
                        t, p = tp
                        raise KctlError(
                            f"listing {spec.name()} of {t}[{p}]", "Unknown topic or partition"
                        )
                elif leader < 0:
                    again[i].append(tp)
                    why[tp] = "the partition has no leader"
                else:
                    by_leader[leader][tp[0]].append(tp[1])
            for leader, topics in sorted(by_leader.items()):
                parts = [
                    Topic(
                        name=t,
                        partitions=[
                            Part(partition_index=p, current_leader_epoch=-1,
                                 timestamp=spec.timestamp)
                            for p in ps
                        ],
                    )
                    for t, ps in topics.items()
                ]  # fmt: skip
                request = ListOffsetsRequest(
                    replica_id=-1, isolation_level=int(spec.read_committed), topics=parts
                )
                requests.append((leader, request))
                asked.append(i)
        responses = kafka_python.send_all(client, requests, "listing offsets")
        for i, response in zip(asked, responses, strict=True):
            got = out[i]
            for t in response.topics:
                name = t.name
                for p in t.partitions:
                    code = p.error_code
                    if not code:
                        got[(name, p.partition_index)] = (p.offset, p.timestamp)
                    elif code in _RETRIABLE:
                        again[i].append((name, p.partition_index))
                        why[(name, p.partition_index)] = _error_name(code)
                    elif not (skip_gone and code in _GONE):
                        raise KctlError(
                            f"listing {specs[i].name()} of {name}[{p.partition_index}]",
                            _error_name(code),
                        )
        if not again:
            return out
        if time.monotonic() >= deadline:
            i, (tp, *_rest) = next(iter(again.items()))
            raise KctlError(
                f"listing {specs[i].name()} of {tp[0]}[{tp[1]}]",
                f"{why.get(tp, 'no answer')}, still after {timeout:g}s",
            )
        pending, where = dict(again), None
        time.sleep(0.2)


def get_offsets(
    admin: Admin,
    topics: list[str],
    *,
    partitions: list[int] | None = None,
    at_time: int | None = None,
    read_committed: bool = False,
    tps: list[TopicPartitionKey] | None = None,
    metadata: Any = None,
) -> list[PartitionOffsets]:
    """Earliest and latest offsets of the partitions (``tps``, else those of ``topics``), and
    with ``at_time`` the offset ListOffsets answers for it: a timestamp (ms), or one of the
    special values -1..-6 of kafka-get-offsets.sh's ``--time`` (None where Kafka has none).

    Requests: one Metadata (none when ``metadata``, librdkafka's, is given), then one
    ListOffsets per partition leader per offset asked (earliest, latest, and the --time one
    unless it is -1 or -2), all sent at once."""
    from kctl.broker import kafka_python

    if tps is None:
        tps = partitions_of(admin, topics, partitions, metadata)
    known: dict[TopicPartitionKey, int] | None = None
    if metadata is not None:
        md_topics = metadata.topics
        known = {}
        for t, p in tps:
            tm = md_topics.get(t)
            pm = tm.partitions.get(p) if tm is not None else None
            if pm is not None:
                known[(t, p)] = pm.leader
    specs = [Spec(EARLIEST), Spec(LATEST, read_committed)]
    if at_time is not None and at_time not in (LATEST, EARLIEST):
        # max-timestamp as librdkafka asked it before: read_uncommitted.
        specs.append(Spec(at_time, read_committed and at_time != MAX_TIMESTAMP))
    with kafka_python.LazyClient(admin) as lazy:
        answers = read_offsets(lazy.client, tps, specs, timeout=admin.timeout, known_leaders=known)
    low, high = answers[0], answers[1]
    when: dict[TopicPartitionKey, int | None] = {}
    if at_time == LATEST:
        when = {tp: off for tp, (off, _ts) in high.items()}
    elif at_time == EARLIEST:
        when = {tp: off for tp, (off, _ts) in low.items()}
    elif at_time is not None and at_time < 0:
        # Kafka has none (-1: nothing tiered, an empty partition's max timestamp): left out.
        when = {tp: off for tp, (off, _ts) in answers[2].items() if off >= 0}
    elif at_time is not None:
        # No record at or after the time: Kafka answers offset -1; some brokers (Tansu) answer
        # offset 0 with timestamp -1. Both mean the latest offset.
        when = {
            tp: (high[tp][0] if off < 0 or ts < 0 else off) for tp, (off, ts) in answers[2].items()
        }
    return [
        PartitionOffsets(t, p, low[(t, p)][0], high[(t, p)][0], when.get((t, p))) for t, p in tps
    ]


# ---- DeleteRecords ------------------------------------------------------------------------


def refuse_past_end(plan: dict[TopicPartitionKey, int], high: dict[TopicPartitionKey, int]) -> None:
    """Every partition's bounds before anything is deleted: DeleteRecords refuses an offset
    above a partition's high watermark (OFFSET_OUT_OF_RANGE) partition by partition, so a plan
    with one such offset would delete in the others and fail in that one. Such a plan is
    refused whole, naming each partition it overshoots (-1, "up to the high watermark", never
    does)."""
    past = [(tp, off) for tp, off in plan.items() if off != -1 and off > high[tp]]
    if not past:
        return
    shown = ", ".join(
        f"{t}[{p}] before {off} > its high watermark {high[(t, p)]}" for (t, p), off in past[:5]
    )
    more = f" and {len(past) - 5} more" if len(past) > 5 else ""
    raise KctlError(
        f"offset past the end of {len(past)} of {len(plan)} partition(s): {shown}{more}",
        "nothing was deleted: DeleteRecords refuses an offset above the high watermark",
    )


def delete_records(admin: Admin, plan: dict[TopicPartitionKey, int]) -> dict[Any, int]:
    """DeleteRecords: everything before each offset goes (-1: up to the high watermark).
    Returns the new low watermark per partition."""
    from confluent_kafka import TopicPartition

    request = [TopicPartition(t, p, off) for (t, p), off in plan.items()]
    futures = admin.client.delete_records(request, request_timeout=admin.timeout)
    out: dict[Any, int] = {}
    for tp, fut in futures.items():
        result = admin.result(fut, f"deleting records of {tp.topic}[{tp.partition}]")
        out[(tp.topic, tp.partition)] = int(result.low_watermark)
    return out
