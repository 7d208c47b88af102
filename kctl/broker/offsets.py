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
    admin: Admin, topics: list[str], only: list[int] | None = None
) -> list[TopicPartitionKey]:
    """(topic, partition) pairs of existing topics; ``only`` restricts and validates partitions."""
    md = admin.metadata()
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


def get_offsets(
    admin: Admin,
    topics: list[str],
    *,
    partitions: list[int] | None = None,
    at_time: int | None = None,
    read_committed: bool = False,
    tps: list[TopicPartitionKey] | None = None,
) -> list[PartitionOffsets]:
    """Earliest and latest offsets of the partitions (``tps``, else those of ``topics``), and
    with ``at_time`` the offset ListOffsets answers for it: a timestamp (ms), or one of the
    special values -1..-6 of kafka-get-offsets.sh's ``--time`` (None where Kafka has none)."""
    if tps is None:
        tps = partitions_of(admin, topics, partitions)
    low = list_offsets(admin, tps, "earliest")
    high = list_offsets(admin, tps, "latest", read_committed=read_committed)
    when: dict[TopicPartitionKey, int | None] = {}
    if at_time == -1:
        when = dict(high)
    elif at_time == -2:
        when = dict(low)
    elif at_time == -3:
        when = dict(max_timestamp_offsets(admin, tps))
    elif at_time is not None and at_time < 0:
        when = dict(special_offsets(admin, tps, at_time, read_committed=read_committed))
    elif at_time is not None:
        when = dict(list_offsets(admin, tps, at_time, read_committed=read_committed))
    return [PartitionOffsets(t, p, low[(t, p)], high[(t, p)], when.get((t, p))) for t, p in tps]


def max_timestamp_offsets(
    admin: Admin, tps: list[TopicPartitionKey]
) -> dict[TopicPartitionKey, int]:
    """ListOffsets(MAX_TIMESTAMP): the offset of the record with the largest timestamp; empty
    partitions are left out (Kafka answers -1)."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import OffsetSpec

    if not tps:
        return {}
    request = {TopicPartition(t, p): OffsetSpec.max_timestamp() for t, p in tps}
    futures = admin.client.list_offsets(request, request_timeout=admin.timeout)
    out: dict[TopicPartitionKey, int] = {}
    for tp, fut in futures.items():
        info = admin.result(fut, f"listing max-timestamp offsets of {tp.topic}[{tp.partition}]")
        if info.offset >= 0:
            out[(tp.topic, tp.partition)] = info.offset
    return out


# Minimum ListOffsets version for each special timestamp librdkafka cannot send.
_SPECIAL_MIN_VERSION = {-4: 8, -5: 9, -6: 11}


def special_offsets(
    admin: Admin, tps: list[TopicPartitionKey], spec: int, *, read_committed: bool = False
) -> dict[TopicPartitionKey, int]:
    """ListOffsets with earliest-local (-4), latest-tiered (-5) or earliest-pending-upload (-6),
    which librdkafka refuses to send: one kafka-python request per partition leader. Partitions
    for which Kafka has no such offset (-1: nothing tiered) are left out."""
    from kafka.protocol.consumer.offsets import ListOffsetsRequest

    from kctl.broker import kafka_python
    from kctl.parsing import OFFSET_SPEC_NAMES

    name = OFFSET_SPEC_NAMES[spec]
    md = admin.metadata()
    by_leader: dict[int, dict[str, list[int]]] = {}
    for t, p in tps:
        leader = md.topics[t].partitions[p].leader
        if leader < 0:
            raise KctlError(f"listing {name} offsets of {t}[{p}]", "the partition has no leader")
        by_leader.setdefault(leader, {}).setdefault(t, []).append(p)
    out: dict[TopicPartitionKey, int] = {}
    with kafka_python.LazyClient(admin) as lazy:
        version = kafka_python.api_version(lazy.client, ListOffsetsRequest)
        if version < _SPECIAL_MIN_VERSION[spec]:
            raise KctlError(
                f"listing {name} offsets",
                f"the cluster's ListOffsets is v{version}; {name} needs "
                f"v{_SPECIAL_MIN_VERSION[spec]} (Kafka 3.8+ or newer)",
            )
        P = ListOffsetsRequest.ListOffsetsTopic.ListOffsetsPartition
        for leader, topics in sorted(by_leader.items()):
            request = ListOffsetsRequest(
                replica_id=-1,
                isolation_level=1 if read_committed else 0,
                topics=[
                    ListOffsetsRequest.ListOffsetsTopic(
                        name=t,
                        partitions=[
                            P(partition_index=p, current_leader_epoch=-1, timestamp=spec)
                            for p in ps
                        ],
                    )
                    for t, ps in sorted(topics.items())
                ],
            )
            response = kafka_python.send(
                lazy.client, request, f"listing {name} offsets on broker {leader}", leader
            )
            for topic in response.topics:
                for part in topic.partitions:
                    if part.error_code:
                        import kafka.errors as errors

                        raise KctlError(
                            f"listing {name} offsets of {topic.name}[{part.partition_index}]",
                            str(getattr(errors.for_code(part.error_code), "message", "")),
                        )
                    if part.offset >= 0:
                        out[(topic.name, part.partition_index)] = part.offset
    return out


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
