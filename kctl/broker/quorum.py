"""The KRaft controller quorum (kafka-metadata-quorum.sh): its state from DescribeQuorum, and
voters added or removed with AddRaftVoter / RemoveRaftVoter (KIP-853, dynamic quorums).

librdkafka has none of these; kafka-python sends them (its own DescribeQuorum class, and
:mod:`kctl.broker.messages` for the two voter calls). Brokers forward all three to the active
controller. The shaping of the answer into rows is pure (:func:`quorum_state`).
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass, field
from typing import Any

from kctl.broker import kafka_python
from kctl.broker.client import Admin
from kctl.errors import KctlError, NotFoundError, UsageError

METADATA_TOPIC = "__cluster_metadata"


def kafka_uuid(value: uuid.UUID | str | None) -> str | None:
    """A Uuid as Kafka prints it (URL-safe base64 of its 16 bytes, no padding); None for none
    or the zero Uuid (a voter of a static quorum has no directory id)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = uuid.UUID(value)
    if value.int == 0:
        return None
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode()


def parse_kafka_uuid(text: str) -> uuid.UUID:
    """A directory id typed as Kafka prints it (22 characters of URL-safe base64) or in the
    canonical 8-4-4-4-12 form."""
    try:
        if len(text) == 22:
            return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=="))
        return uuid.UUID(text)
    except ValueError as exc:
        raise UsageError(
            f"{text!r} is not a directory id", "22 characters of base64, as Kafka prints it"
        ) from exc


@dataclass
class Replica:
    node_id: int
    directory_id: str | None  # None: the zero Uuid (a static quorum's voters have none)
    log_end_offset: int
    lag: int  # the leader's log end offset minus this one's
    last_fetch_timestamp: int | None
    last_caught_up_timestamp: int | None
    status: str  # Leader | Follower | Observer
    endpoints: list[str] = field(default_factory=list)  # LISTENER://host:port


@dataclass
class QuorumState:
    cluster_id: str | None
    leader_id: int
    leader_epoch: int
    high_watermark: int
    max_follower_lag: int
    max_follower_lag_time_ms: int
    replicas: list[Replica]  # the leader, the other voters, then the observers

    @property
    def voters(self) -> list[Replica]:
        return [r for r in self.replicas if r.status != "Observer"]

    @property
    def observers(self) -> list[Replica]:
        return [r for r in self.replicas if r.status == "Observer"]


def _ts(value: int | None) -> int | None:
    return value if value is not None and value >= 0 else None


def quorum_state(answer: dict[str, Any], cluster_id: str | None) -> QuorumState:
    """The quorum from a DescribeQuorum answer (kafka-python's dict of it), with the figures
    kafka-metadata-quorum.sh derives: each replica's lag behind the leader's log end offset,
    the largest among the voters, and how far the most lagging voter's last catch-up is behind
    the leader's."""
    (topic,) = [t for t in answer["topics"] if t["topic_name"] == METADATA_TOPIC]
    (part,) = topic["partitions"]
    if part.get("error"):
        raise KctlError("describing the metadata quorum", str(part["error"]))
    endpoints = {
        n["node_id"]: [f"{lst['name']}://{lst['host']}:{lst['port']}" for lst in n["listeners"]]
        for n in answer.get("nodes") or []
    }
    leader_id = part["leader_id"]
    voters = part["current_voters"]
    leader = next((v for v in voters if v["replica_id"] == leader_id), None)
    if leader is None:
        raise KctlError(
            "describing the metadata quorum", f"no leader among the voters ({leader_id})"
        )
    leo = leader["log_end_offset"]

    def replica(info: dict[str, Any], status: str) -> Replica:
        return Replica(
            info["replica_id"],
            kafka_uuid(info.get("replica_directory_id")),
            info["log_end_offset"],
            leo - info["log_end_offset"],
            _ts(info.get("last_fetch_timestamp")),
            _ts(info.get("last_caught_up_timestamp")),
            status,
            endpoints.get(info["replica_id"], []),
        )

    rows = [replica(leader, "Leader")]
    rows += [replica(v, "Follower") for v in voters if v["replica_id"] != leader_id]
    rows += [replica(o, "Observer") for o in part["observers"]]
    laggard = min(voters, key=lambda v: v["log_end_offset"])
    if laggard is leader or laggard["log_end_offset"] == leo:
        lag_time = 0
    elif _ts(leader.get("last_caught_up_timestamp")) is not None and (
        _ts(laggard.get("last_caught_up_timestamp")) is not None
    ):
        lag_time = leader["last_caught_up_timestamp"] - laggard["last_caught_up_timestamp"]
    else:
        lag_time = -1
    return QuorumState(
        cluster_id,
        leader_id,
        part["leader_epoch"],
        part["high_watermark"],
        leo - laggard["log_end_offset"],
        lag_time,
        rows,
    )


def describe(admin: Admin) -> QuorumState:
    """DescribeQuorum for ``__cluster_metadata-0``, through any broker."""
    from kafka.errors import KafkaError

    from kctl.broker import cluster

    cluster_id = cluster.describe(admin).cluster_id
    with kafka_python.LazyClient(admin) as lazy:
        try:
            answer = lazy.client.describe_metadata_quorum()
        except KafkaError as exc:
            raise KctlError(
                "describing the metadata quorum", str(exc) or type(exc).__name__
            ) from exc
    return quorum_state(answer, cluster_id)


def _raft_voter_call(admin: Admin, request: Any, what: str) -> None:
    import kafka.errors as Errors

    with kafka_python.LazyClient(admin) as lazy:
        if kafka_python.api_version(lazy.client, type(request)) < 0:
            raise KctlError(what, "the cluster does not support it (Kafka 3.9+, KIP-853)")
        answer = kafka_python.send(lazy.client, request, what)
    if answer.error_code:
        name = Errors.for_code(answer.error_code).__name__
        raise KctlError(what, f"{name}: {answer.error_message or ''}".rstrip(": "))


def remove_controller(admin: Admin, node_id: int, directory_id: str) -> None:
    """RemoveRaftVoter: ``node_id`` (with its metadata directory id) stops being a voter."""
    from kctl.broker.messages import RemoveRaftVoterRequest

    request = RemoveRaftVoterRequest(
        cluster_id=None, voter_id=node_id, voter_directory_id=parse_kafka_uuid(directory_id)
    )
    _raft_voter_call(admin, request, f"removing controller {node_id} from the quorum")


def add_controller(
    admin: Admin, node_id: int, directory_id: str, listeners: list[tuple[str, str, int]]
) -> None:
    """AddRaftVoter: a running controller (an observer of the metadata log) becomes a voter."""
    from kctl.broker.messages import AddRaftVoterRequest as R

    request = R(
        cluster_id=None,
        timeout_ms=int(admin.timeout * 1000),
        voter_id=node_id,
        voter_directory_id=parse_kafka_uuid(directory_id),
        listeners=[R.Listener(name=n, host=h, port=p) for n, h, p in listeners],
    )
    _raft_voter_call(admin, request, f"adding controller {node_id} to the quorum")


def find_replica(state: QuorumState, node_id: int) -> Replica:
    for r in state.replicas:
        if r.node_id == node_id:
            return r
    raise NotFoundError(f"node {node_id} is not in the metadata quorum", "kctl quorum describe")
