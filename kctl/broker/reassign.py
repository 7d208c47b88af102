"""Partition reassignment (kafka-reassign-partitions.sh): AlterPartitionReassignments and
ListPartitionReassignments through kafka-python's protocol classes, replication throttles through
IncrementalAlterConfigs. Proposals and plan JSON are pure (:mod:`kctl.replicas.assign`)."""

from __future__ import annotations

from typing import Any

from kctl.broker import kafka_python
from kctl.broker.client import Admin
from kctl.broker.cluster_view import cluster_view, controller
from kctl.broker.connect import Connection
from kctl.errors import KctlError, NotFoundError, UnsupportedByBroker
from kctl.replicas.assign import Assignment, throttled_replicas

ALTER_API = "AlterPartitionReassignments"
LIST_API = "ListPartitionReassignments"
RATE_CONFIGS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
REPLICA_CONFIGS = (
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
)


# ---------------------------------------------------------------------------------------------
# Requests and responses (pure over kafka-python's protocol classes)


def _by_topic(partitions: dict[tuple[str, int], Any]) -> dict[str, list[tuple[int, Any]]]:
    out: dict[str, list[tuple[int, Any]]] = {}
    for (topic, partition), value in sorted(partitions.items()):
        out.setdefault(topic, []).append((partition, value))
    return out


def build_alter_request(
    target: dict[tuple[str, int], list[int] | None], timeout_ms: int, version: int = 0
) -> Any:
    """Reassign each partition to its replicas, or cancel its reassignment (replicas None)."""
    from kafka.protocol.admin import AlterPartitionReassignmentsRequest as R

    topics = [
        R.ReassignableTopic(
            name=topic,
            partitions=[
                R.ReassignableTopic.ReassignablePartition(partition_index=p, replicas=replicas)
                for p, replicas in parts
            ],
        )
        for topic, parts in _by_topic(target).items()
    ]
    return R(version=version, timeout_ms=timeout_ms, topics=topics)


def parse_alter_response(response: Any) -> list[dict[str, Any]]:
    from kctl.broker.logdirs import error_name

    top = response.error_code or 0
    if top:
        why = error_name(top) + (f": {response.error_message}" if response.error_message else "")
        raise KctlError("reassigning partitions", why)
    rows = []
    for topic in response.responses:
        for p in topic.partitions:
            code = p.error_code or 0
            rows.append(
                {
                    "topic": topic.name,
                    "partition": p.partition_index,
                    "status": "accepted" if code == 0 else "failed",
                    "error": None if code == 0 else error_name(code),
                    "message": p.error_message,
                }
            )
    return sorted(rows, key=lambda r: (r["topic"], r["partition"]))


def build_list_request(partitions: dict[str, list[int]] | None, timeout_ms: int) -> Any:
    from kafka.protocol.admin import ListPartitionReassignmentsRequest as R

    topics = None
    if partitions is not None:
        topics = [
            R.ListPartitionReassignmentsTopics(name=t, partition_indexes=sorted(ps))
            for t, ps in sorted(partitions.items())
        ]
    return R(version=0, timeout_ms=timeout_ms, topics=topics)


def parse_list_response(response: Any) -> list[dict[str, Any]]:
    from kctl.broker.logdirs import error_name

    top = response.error_code or 0
    if top:
        why = error_name(top) + (f": {response.error_message}" if response.error_message else "")
        raise KctlError("listing partition reassignments", why)
    rows = [
        {
            "topic": topic.name,
            "partition": p.partition_index,
            "replicas": list(p.replicas),
            "adding_replicas": list(p.adding_replicas),
            "removing_replicas": list(p.removing_replicas),
        }
        for topic in response.topics
        for p in topic.partitions
        # Nothing being added or removed is no reassignment in progress (some brokers list
        # every partition they were asked about).
        if list(p.adding_replicas) or list(p.removing_replicas)
    ]
    return sorted(rows, key=lambda r: (r["topic"], r["partition"]))


# ---------------------------------------------------------------------------------------------
# Operations


def current_assignment(admin: Admin, topics: list[str]) -> tuple[Assignment, dict[int, Any]]:
    """(assignment of every partition of ``topics``, broker id → rack)."""
    from kctl.broker import cluster

    view = cluster_view(admin)
    for t in topics:
        if t not in view.topics:
            raise NotFoundError(f"unknown topic {t!r}", "not in the cluster's metadata")
    racks = {b.id: b.rack for b in cluster.describe(admin).brokers}
    current = {
        (t, p.partition): list(p.replicas) for t in topics for p in view.topics[t].partitions
    }
    return current, racks


def _require(client: Any, api: str, what: str) -> tuple[int, int]:
    from kctl.broker.logdirs import api_range

    found = api_range(client, controller(client), api)
    if found is None:
        raise UnsupportedByBroker(api, what)
    return found


def check_alter_supported(conn: Connection, what: str) -> None:
    with kafka_python.admin_client(conn) as client:
        _require(client, ALTER_API, what)


def alter(
    conn: Connection, target: dict[tuple[str, int], list[int] | None], what: str
) -> list[dict[str, Any]]:
    with kafka_python.admin_client(conn) as client:
        _require(client, ALTER_API, what)
        request = build_alter_request(target, int(conn.timeout * 1000), 0)
        response = kafka_python.send(client, request, what, node_id=controller(client))
    return parse_alter_response(response)


def ongoing(
    conn: Connection, partitions: dict[str, list[int]] | None = None
) -> list[dict[str, Any]]:
    what = "listing partition reassignments"
    with kafka_python.admin_client(conn) as client:
        _require(client, LIST_API, what)
        request = build_list_request(partitions, int(conn.timeout * 1000))
        response = kafka_python.send(client, request, what, node_id=controller(client))
    return parse_list_response(response)


def throttle_changes(
    current: Assignment, proposed: Assignment, rate: int
) -> list[tuple[str, str, dict[str, str]]]:
    """(kind, name, configs to set): broker rates on every broker the moving partitions touch,
    throttled replica lists on their topics."""
    moving = throttled_replicas(current, proposed)
    brokers = sorted(
        {
            b
            for tp, new in proposed.items()
            if set(new) != set(current.get(tp, []))
            for b in [*new, *current.get(tp, [])]
        }
    )
    out = [("broker", str(b), {name: str(rate) for name in RATE_CONFIGS}) for b in brokers]
    out += [("topic", topic, values) for topic, values in sorted(moving.items())]
    return out


def _incremental(admin: Admin, changes: list[tuple[str, str, dict[str, str | None]]]) -> None:
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

    for kind, name, values in changes:
        resource = ConfigResource(kind, name)
        for key, value in values.items():
            op = AlterConfigOpType.DELETE if value is None else AlterConfigOpType.SET
            resource.add_incremental_config(ConfigEntry(key, value, incremental_operation=op))
        futures = admin.client.incremental_alter_configs([resource], request_timeout=admin.timeout)
        admin.result(next(iter(futures.values())), f"setting throttles on {kind} {name}")


def set_throttle(admin: Admin, current: Assignment, proposed: Assignment, rate: int) -> None:
    _incremental(admin, list(throttle_changes(current, proposed, rate)))  # type: ignore[arg-type]


def throttles_set(admin: Admin, topics: list[str]) -> list[tuple[str, str, list[str]]]:
    """(kind, name, throttle configs set dynamically) on every broker and on ``topics``."""
    from confluent_kafka.admin import ConfigResource

    from kctl.broker.configs import _source

    md = admin.metadata()
    resources = [ConfigResource("broker", str(b)) for b in sorted(md.brokers)]
    resources += [ConfigResource("topic", t) for t in sorted(set(topics))]
    out = []
    # librdkafka takes one broker resource per DescribeConfigs call (it goes to that broker).
    for res in resources:
        kind = "broker" if "BROKER" in str(res.restype).upper() else "topic"
        futures = admin.client.describe_configs([res], request_timeout=admin.timeout)
        entries = admin.result(
            next(iter(futures.values())), f"describing configs of {kind} {res.name}"
        )
        names = RATE_CONFIGS if kind == "broker" else REPLICA_CONFIGS
        own = "DYNAMIC_BROKER_CONFIG" if kind == "broker" else "DYNAMIC_TOPIC_CONFIG"
        found = [
            n
            for n in names
            if n in entries and entries[n].value and _source(entries[n].source) == own
        ]
        if found:
            out.append((kind, res.name, found))
    return out


def clear_throttles(admin: Admin, topics: list[str]) -> list[dict[str, Any]]:
    present = throttles_set(admin, topics)
    _incremental(admin, [(k, n, dict.fromkeys(names)) for k, n, names in present])
    return [{"entity": k, "name": n, "config": c} for k, n, names in present for c in names]


def verify(admin: Admin, conn: Connection, plan: Assignment) -> tuple[list[dict[str, Any]], bool]:
    """Per partition of the plan: complete | in-progress | not-applied; and whether all done."""
    view = cluster_view(admin)
    wanted: dict[str, list[int]] = {}
    for topic, partition in plan:
        wanted.setdefault(topic, []).append(partition)
    running = {(r["topic"], r["partition"]): r for r in ongoing(conn, wanted)}
    rows = []
    for (topic, partition), replicas in sorted(plan.items()):
        t = view.topics.get(topic)
        part = next((p for p in t.partitions if p.partition == partition), None) if t else None
        now = part.replicas if part is not None else []
        if (topic, partition) in running:
            status = "in-progress"
        elif part is None:
            status = "missing"
        elif now == replicas:
            status = "complete"
        elif set(now) == set(replicas):
            status = "complete (other order)"
        else:
            status = "not-applied"
        rows.append(
            {
                "topic": topic,
                "partition": partition,
                "status": status,
                "current": now,
                "target": replicas,
            }
        )
    done = all(str(r["status"]).startswith("complete") for r in rows)
    return rows, done
