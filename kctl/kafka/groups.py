"""Consumer-group operations (kafka-consumer-groups.sh): list, describe, lag, delete, reset.

Requests are batched: one DescribeGroups per coordinator (librdkafka groups the ids), one
ListOffsets per partition leader for all partitions at once, and the OffsetFetch requests for
all groups in flight together. The arithmetic (lag, reset plans, clamping) is pure and lives in
kctl.kafka.lagmath so it can be tested without a broker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kctl.errors import KctlError, NotFoundError, UnsupportedByBroker
from kctl.kafka.client import Admin
from kctl.kafka.lagmath import TP

ACTIVE_STATES = ("Stable", "PreparingRebalance", "CompletingRebalance")


@dataclass
class Member:
    member_id: str
    group_instance_id: str | None
    client_id: str
    host: str
    assignment: list[TP] = field(default_factory=list)


@dataclass
class Group:
    group: str
    state: str
    protocol_type: str | None
    assignor: str | None
    coordinator: int | None
    members: list[Member] = field(default_factory=list)

    @property
    def active(self) -> bool:
        return bool(self.members) or self.state in ACTIVE_STATES


_STATE_NAMES = {
    "UNKNOWN": "Unknown",
    "PREPARING_REBALANCING": "PreparingRebalance",
    "COMPLETING_REBALANCING": "CompletingRebalance",
    "STABLE": "Stable",
    "DEAD": "Dead",
    "EMPTY": "Empty",
}


def _state(value: Any) -> str:
    name = getattr(value, "name", str(value))
    return _STATE_NAMES.get(name, name.title())


def list_group_ids(admin: Admin) -> list[tuple[str, str, bool]]:
    """(group id, state, is simple consumer group) for every group the cluster knows."""
    result = admin.result(
        admin.client.list_consumer_groups(request_timeout=admin.timeout), "listing groups"
    )
    return sorted(
        (g.group_id, _state(g.state), bool(g.is_simple_consumer_group)) for g in result.valid
    )


def describe(admin: Admin, group_ids: list[str]) -> dict[str, Group]:
    """Describe groups: for several, one FindCoordinator (v4+) and one DescribeGroups per
    coordinator through kafka-python; otherwise (or on older brokers) librdkafka, which sends a
    FindCoordinator and a describe request per group."""
    if not group_ids:
        return {}
    if len(group_ids) > 1:
        batched = _describe_batched(admin, group_ids)
        if batched is not None:
            return batched
    futures = admin.client.describe_consumer_groups(group_ids, request_timeout=admin.timeout)
    out: dict[str, Group] = {}
    for gid, fut in futures.items():
        d = admin.result(fut, f"describing group {gid!r}")
        members = [
            Member(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                host=m.host,
                assignment=sorted(
                    (tp.topic, tp.partition)
                    for tp in (m.assignment.topic_partitions if m.assignment else [])
                ),
            )
            for m in d.members
        ]
        out[gid] = Group(
            group=gid,
            state=_state(d.state),
            protocol_type="consumer" if not d.is_simple_consumer_group else "",
            assignor=d.partition_assignor or None,
            coordinator=d.coordinator.id if d.coordinator is not None else None,
            members=sorted(members, key=lambda m: m.member_id),
        )
    return out


def coordinators(client: Any, group_ids: list[str]) -> dict[str, int] | None:
    """Group id -> coordinator broker, in one FindCoordinator v4+ request (None if older)."""
    from kafka.protocol.metadata import FindCoordinatorRequest

    from kctl.kafka import kp

    if client._manager.broker_version_data.api_version(FindCoordinatorRequest) < 4:
        return None
    request = FindCoordinatorRequest(key_type=0, coordinator_keys=list(group_ids))
    response = kp.send(client, request, "finding group coordinators")
    out = {}
    for c in response.coordinators:
        if c.error_code:
            raise KctlError(
                f"finding the coordinator of group {c.key!r}", f"error code {c.error_code}"
            )
        out[c.key] = c.node_id
    return out


def _describe_batched(admin: Admin, group_ids: list[str]) -> dict[str, Group] | None:
    from collections import defaultdict

    from kafka.protocol.admin import DescribeGroupsRequest

    from kctl.kafka import kp
    from kctl.logfmt.internal import _embedded

    with kp.admin_client(admin.conn) as client:
        coords = coordinators(client, group_ids)
        if coords is None:
            return None
        by_node: dict[int, list[str]] = defaultdict(list)
        for gid in group_ids:
            by_node[coords[gid]].append(gid)
        out: dict[str, Group] = {}
        for node, gids in by_node.items():
            request = DescribeGroupsRequest(groups=gids, include_authorized_operations=False)
            response = kp.send(client, request, "describing groups", node_id=node)
            for g in response.groups:
                if g.error_code and g.error_code != 69:  # 69 GROUP_ID_NOT_FOUND: reported as Dead
                    raise KctlError(
                        f"describing group {g.group_id!r}", f"error code {g.error_code}"
                    )
                members = []
                for m in g.members:
                    assigned = _embedded("ConsumerProtocolAssignment", m.member_assignment)
                    tps: list[TP] = []
                    if isinstance(assigned, dict):
                        for item in assigned.get("assigned_partitions") or []:
                            tps += [(item["topic"], p) for p in item["partitions"]]
                    members.append(
                        Member(
                            member_id=m.member_id,
                            group_instance_id=getattr(m, "group_instance_id", None),
                            client_id=m.client_id,
                            host=m.client_host,
                            assignment=sorted(tps),
                        )
                    )
                out[g.group_id] = Group(
                    group=g.group_id,
                    state=g.group_state or ("Dead" if g.error_code == 69 else "Unknown"),
                    protocol_type=g.protocol_type or None,
                    assignor=g.protocol_data or None,
                    coordinator=node,
                    members=sorted(members, key=lambda m: m.member_id),
                )
    return {gid: out[gid] for gid in group_ids if gid in out}


def require_known(
    admin: Admin, groups: dict[str, Group], committed: dict[str, dict[TP, int]]
) -> None:
    """A group with no members and no committed offsets that ListGroups does not know (Kafka
    describes it as Dead, some brokers as Empty) does not exist for an operator."""
    suspects = [
        gid
        for gid, g in groups.items()
        if not g.members and not committed.get(gid) and g.state in ("Dead", "Empty", "Unknown")
    ]
    if not suspects:
        return
    listed = {gid for gid, _, _ in list_group_ids(admin)}
    for gid in suspects:
        if groups[gid].state == "Dead" or gid not in listed:
            raise NotFoundError(
                f"unknown group {gid!r}",
                f"state {groups[gid].state}: no members and no committed offsets",
            )


def committed_offsets(admin: Admin, group_ids: list[str]) -> dict[str, dict[TP, int]]:
    """Committed offsets of every group. Several groups go through kafka-python, which sends
    one FindCoordinator and then one OffsetFetch (v8+, KIP-709) per coordinator for all of them;
    a single group, or a broker without OffsetFetch v8, takes librdkafka's one-group requests
    (all in flight together)."""
    if len(group_ids) > 1:
        batched = _committed_offsets_batched(admin, group_ids)
        if batched is not None:
            return batched
    from confluent_kafka import ConsumerGroupTopicPartitions

    futures = {
        gid: admin.client.list_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(gid)], request_timeout=admin.timeout
        )[gid]
        for gid in group_ids
    }
    out: dict[str, dict[TP, int]] = {}
    for gid, fut in futures.items():
        res = admin.result(fut, f"fetching committed offsets of group {gid!r}")
        out[gid] = {
            (tp.topic, tp.partition): tp.offset
            for tp in res.topic_partitions
            if tp.error is None and tp.offset >= 0
        }
    return out


def _committed_offsets_batched(
    admin: Admin, group_ids: list[str]
) -> dict[str, dict[TP, int]] | None:
    from collections import defaultdict

    from kafka.protocol.consumer import OffsetFetchRequest

    from kctl.kafka import kp

    with kp.admin_client(admin.conn) as client:
        if client._manager.broker_version_data.api_version(OffsetFetchRequest) < 8:
            return None
        coords = coordinators(client, group_ids)
        if coords is None:
            return None
        by_node: dict[int, list[str]] = defaultdict(list)
        for gid in group_ids:
            by_node[coords[gid]].append(gid)
        out: dict[str, dict[TP, int]] = {gid: {} for gid in group_ids}
        for node, gids in by_node.items():
            request = OffsetFetchRequest(
                groups=[
                    OffsetFetchRequest.OffsetFetchRequestGroup(group_id=g, topics=None)
                    for g in gids
                ],
                require_stable=False,
                min_version=8,
            )
            response = kp.send(client, request, "fetching committed offsets", node_id=node)
            for g in response.groups:
                if g.error_code and g.error_code != 69:
                    raise KctlError(
                        f"fetching committed offsets of group {g.group_id!r}",
                        f"error code {g.error_code}",
                    )
                for t in g.topics:
                    for part in t.partitions:
                        if not part.error_code and part.committed_offset >= 0:
                            out[g.group_id][(t.name, part.partition_index)] = part.committed_offset
    return out


def watermarks(admin: Admin, tps: list[TP]) -> dict[TP, tuple[int, int]]:
    """(log start, log end) per partition: two ListOffsets rounds, batched per leader."""
    if not tps:
        return {}
    starts = _list_offsets(admin, tps, "earliest")
    ends = _list_offsets(admin, tps, "latest")
    return {tp: (starts[tp], ends[tp]) for tp in tps}


def offsets_for_time(admin: Admin, tps: list[TP], ts_ms: int) -> dict[TP, int]:
    """The first offset at or after ``ts_ms`` per partition (-1 when there is none)."""
    return _list_offsets(admin, tps, ts_ms)


def _list_offsets(admin: Admin, tps: list[TP], spec: str | int) -> dict[TP, int]:
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import OffsetSpec

    if spec == "earliest":
        offset_spec = OffsetSpec.earliest()
    elif spec == "latest":
        offset_spec = OffsetSpec.latest()
    else:
        offset_spec = OffsetSpec.for_timestamp(int(spec))
    request = {TopicPartition(t, p): offset_spec for t, p in tps}
    futures = admin.client.list_offsets(request, request_timeout=admin.timeout)
    out: dict[TP, int] = {}
    for tp, fut in futures.items():
        info = admin.result(fut, f"listing offsets of {tp.topic}[{tp.partition}]")
        out[(tp.topic, tp.partition)] = info.offset
    return out


def partitions_of(admin: Admin, topics: list[str]) -> dict[str, int]:
    """Partition count per topic; an unknown topic is an error naming it."""
    md = admin.metadata()
    out = {}
    for t in topics:
        if t not in md.topics or md.topics[t].error is not None:
            raise NotFoundError(f"unknown topic {t!r}", "not in the cluster's metadata")
        out[t] = len(md.topics[t].partitions)
    return out


def commit(admin: Admin, group: str, targets: dict[TP, int]) -> None:
    """OffsetCommit the targets for an inactive group (AlterConsumerGroupOffsets)."""
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

    request = ConsumerGroupTopicPartitions(
        group, [TopicPartition(t, p, o) for (t, p), o in sorted(targets.items())]
    )
    futures = admin.client.alter_consumer_group_offsets([request], request_timeout=admin.timeout)
    res = admin.result(futures[group], f"committing offsets for group {group!r}")
    for tp in res.topic_partitions:
        if tp.error is not None:
            raise KctlError(
                f"committing offset {tp.offset} of {tp.topic}[{tp.partition}] for group {group!r}",
                tp.error.str(),
            )


def delete(admin: Admin, group_ids: list[str]) -> None:
    futures = admin.client.delete_consumer_groups(group_ids, request_timeout=admin.timeout)
    for gid, fut in futures.items():
        admin.result(fut, f"deleting group {gid!r}")


def delete_offsets(admin: Admin, group: str, tps: list[TP]) -> None:
    """OffsetDelete (Kafka 2.4+) through kafka-python; brokers without it are named."""
    from kctl.kafka import kp
    from kctl.kafka.apis import API_KEYS
    from kctl.local.broker import probe_api_versions

    host, _, port = admin.conn.bootstrap_servers.split(",")[0].rpartition(":")
    if admin.conn.security_protocol == "PLAINTEXT":
        try:
            apis = probe_api_versions(host, int(port), timeout=admin.timeout)
        except (OSError, ValueError):
            apis = None
        if apis is not None and API_KEYS["OffsetDelete"] not in apis:
            raise UnsupportedByBroker("OffsetDelete", f"deleting offsets of group {group!r}")
    with kp.admin_client(admin.conn) as client:
        from kafka.structs import TopicPartition

        try:
            result = client.delete_consumer_group_offsets(
                group, [TopicPartition(t, p) for t, p in tps]
            )
        except Exception as exc:  # kafka-python raises its own error classes
            if "OffsetDelete" in type(exc).__name__ or "version" in str(exc).lower():
                raise UnsupportedByBroker(
                    "OffsetDelete", f"deleting offsets of group {group!r}"
                ) from exc
            raise KctlError(
                f"deleting offsets of group {group!r}", str(exc) or type(exc).__name__
            ) from exc
    for tp, err in (result or {}).items():
        if err is not None and getattr(err, "errno", 0):
            raise KctlError(f"deleting the offset of {tp.topic}[{tp.partition}]", str(err))
