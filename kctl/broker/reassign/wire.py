"""AlterPartitionReassignments and ListPartitionReassignments (kafka-reassign-partitions.sh's
requests) through kafka-python's protocol classes: the requests and their answers as rows
(:mod:`kctl.reassign.rows`), sent to a broker that takes them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kctl.broker import kafka_python
from kctl.broker.cluster_view import controller
from kctl.broker.connect import Connection
from kctl.errors import KctlError, UnsupportedByBroker
from kctl.reassign.assign import TP
from kctl.reassign.rows import Answer, Ongoing

ALTER_API = "AlterPartitionReassignments"
LIST_API = "ListPartitionReassignments"


# ---------------------------------------------------------------------------------------------
# Requests and responses (pure over kafka-python's protocol classes)


def _by_topic(
    partitions: Mapping[TP, list[int] | None],
) -> dict[str, list[tuple[int, list[int] | None]]]:
    out: dict[str, list[tuple[int, list[int] | None]]] = {}
    for (topic, partition), value in sorted(partitions.items()):
        out.setdefault(topic, []).append((partition, value))
    return out


def build_alter_request(
    target: Mapping[TP, list[int] | None], timeout_ms: int, version: int = 0
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


def parse_alter_response(response: Any) -> list[Answer]:
    from kctl.broker.logdirs import error_name

    top = response.error_code or 0
    if top:
        why = error_name(top) + (f": {response.error_message}" if response.error_message else "")
        raise KctlError("reassigning partitions", why)
    rows: list[Answer] = []
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


def parse_list_response(response: Any) -> list[Ongoing]:
    from kctl.broker.logdirs import error_name

    top = response.error_code or 0
    if top:
        why = error_name(top) + (f": {response.error_message}" if response.error_message else "")
        raise KctlError("listing partition reassignments", why)
    rows: list[Ongoing] = [
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
# Sending them


def _require(client: Any, api: str, what: str) -> int:
    """A broker that takes ``api`` (the KRaft admin requests go to any broker, which forwards
    them to the controller): the one DescribeCluster names, else, when it cannot be reached
    (a broker dead but not yet fenced is still listed), the next broker that can. Fails naming
    the API when the cluster lacks it, or every broker tried when none answers."""
    from kctl.broker.logdirs import api_range

    first = controller(client)
    failed: list[str] = []
    for node in [first, *(b for b in kafka_python.broker_ids(client) if b != first)]:
        try:
            found = api_range(client, node, api)
        except KctlError as exc:
            failed.append(f"broker {node}: {exc.why}")
            continue
        if found is None:
            raise UnsupportedByBroker(api, what)
        return node
    raise KctlError(what, "; ".join(failed) or "no broker known")


def check_alter_supported(conn: Connection, what: str) -> None:
    with kafka_python.admin_client(conn) as client:
        _require(client, ALTER_API, what)


def alter_with(
    client: Any, target: Mapping[TP, list[int] | None], what: str, timeout: float
) -> list[Answer]:
    node = _require(client, ALTER_API, what)
    request = build_alter_request(target, int(timeout * 1000), 0)
    response = kafka_python.send_any(client, request, what, first=node)
    return parse_alter_response(response)


def alter(conn: Connection, target: Mapping[TP, list[int] | None], what: str) -> list[Answer]:
    with kafka_python.admin_client(conn) as client:
        return alter_with(client, target, what, conn.timeout)


def ongoing_with(
    client: Any, partitions: dict[str, list[int]] | None, timeout: float
) -> list[Ongoing]:
    what = "listing partition reassignments"
    node = _require(client, LIST_API, what)
    request = build_list_request(partitions, int(timeout * 1000))
    response = kafka_python.send_any(client, request, what, first=node)
    return parse_list_response(response)


def ongoing(conn: Connection, partitions: dict[str, list[int]] | None = None) -> list[Ongoing]:
    with kafka_python.admin_client(conn) as client:
        return ongoing_with(client, partitions, conn.timeout)


def by_topic_list(tps: Iterable[TP]) -> dict[str, list[int]]:
    """Partitions as topic -> partition numbers (the shape of the requests), sorted."""
    out: dict[str, list[int]] = {}
    for t, p in sorted(tps):
        out.setdefault(t, []).append(p)
    return out
