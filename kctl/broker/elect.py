"""ElectLeaders (kafka-leader-election.sh) through kafka-python's protocol classes: the plan comes
from Metadata (:func:`kctl.elect.election.election_step`), the request is sent only on
``--execute``, and only to a broker that advertises ElectLeaders."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kctl.broker import kafka_python
from kctl.broker.client import Admin
from kctl.broker.cluster_view import cluster_view, controller
from kctl.broker.connect import Connection
from kctl.elect.election import ElectionStep, election_step
from kctl.errors import KctlError, UnsupportedByBroker

API = "ElectLeaders"
ELECTION_TYPES = {"preferred": 0, "unclean": 1}


def build_request(
    kind: str, partitions: dict[str, list[int]], timeout_ms: int, version: int
) -> Any:
    """An ElectLeadersRequest for the named partitions (v0 knows only preferred elections)."""
    from kafka.protocol.admin import ElectLeadersRequest

    if kind not in ELECTION_TYPES:
        raise ValueError(f"unknown election type {kind!r}")
    if version == 0 and kind != "preferred":
        raise UnsupportedByBroker("ElectLeaders v1 (unclean elections)", "electing leaders")
    topics = [
        ElectLeadersRequest.TopicPartitions(topic=t, partitions=sorted(ps))
        for t, ps in sorted(partitions.items())
    ]
    fields: dict[str, Any] = {"topic_partitions": topics, "timeout_ms": timeout_ms}
    if version >= 1:
        fields["election_type"] = ELECTION_TYPES[kind]
    return ElectLeadersRequest(version=version, **fields)


def parse_response(response: Any) -> list[dict[str, Any]]:
    """One row per partition: ``status`` elected | not-needed | failed, with the error."""
    from kctl.broker.logdirs import error_name

    top = getattr(response, "error_code", 0) or 0
    if top:
        raise KctlError("electing leaders", error_name(top))
    rows = []
    for result in response.replica_election_results:
        for p in result.partition_result:
            code = p.error_code or 0
            name = None if code == 0 else error_name(code)
            status = (
                "elected"
                if code == 0
                else "not-needed"
                if name == "ELECTION_NOT_NEEDED"
                else "failed"
            )
            rows.append(
                {
                    "topic": result.topic,
                    "partition": p.partition_id,
                    "status": status,
                    "error": name,
                    "message": p.error_message,
                }
            )
    return sorted(rows, key=lambda r: (r["topic"], r["partition"]))


def check_supported(client: Any) -> tuple[int, int]:
    from kctl.broker.logdirs import api_range

    node = controller(client)
    found = api_range(client, node, API)
    if found is None:
        raise UnsupportedByBroker(API, "electing leaders")
    return found


def supported(conn: Connection) -> tuple[int, int]:
    """ElectLeaders' version range on the controller; UnsupportedByBroker when absent."""
    with kafka_python.admin_client(conn) as client:
        return check_supported(client)


def elect(conn: Connection, kind: str, partitions: dict[str, list[int]]) -> list[dict[str, Any]]:
    from kafka.protocol.admin import ElectLeadersRequest

    with kafka_python.admin_client(conn) as client:
        _, high = check_supported(client)
        version = min(high, ElectLeadersRequest.max_version)
        request = build_request(kind, partitions, int(conn.timeout * 1000), version)
        response = kafka_python.send(
            client, request, "electing leaders", node_id=controller(client)
        )
    return parse_response(response)


@dataclass
class ElectionPlan:
    kind: str  # preferred | unclean
    steps: list[ElectionStep]  # one per partition shown
    todo: dict[str, list[int]]  # the partitions to elect, per topic

    @property
    def count(self) -> int:
        return sum(map(len, self.todo.values()))


def plan_election(
    admin: Admin, kind: str, scope: dict[str, list[int] | None] | None
) -> ElectionPlan:
    """Per partition in ``scope`` (None: every topic, and then only what would change), the
    current and the expected leader, as kafka-leader-election.sh decides; unknown topics and
    partitions fail. Checks first that the cluster supports ElectLeaders."""
    from kctl.errors import NotFoundError

    supported(admin.conn)
    view = cluster_view(admin)
    live = set(view.brokers)
    steps = []
    names = sorted(view.topics) if scope is None else sorted(scope)
    for name in names:
        t = view.topics.get(name)
        if t is None:
            raise NotFoundError(f"unknown topic {name!r}", "not in the cluster's metadata")
        wanted = None if scope is None else scope[name]
        have = {p.partition for p in t.partitions}
        for number in wanted or []:
            if number not in have:
                raise NotFoundError(f"unknown partition {name}-{number}", f"{name} has {len(have)}")
        for p in t.partitions:
            if wanted is not None and p.partition not in wanted:
                continue
            step = election_step(name, p.partition, p.leader, p.replicas, p.isr, live, kind)
            if scope is None and step.action == "skip":
                continue  # every topic: only what would change
            steps.append(step)
    todo: dict[str, list[int]] = {}
    for step in steps:
        if step.action == "elect":
            todo.setdefault(step.topic, []).append(step.partition)
    return ElectionPlan(kind, steps, todo)
