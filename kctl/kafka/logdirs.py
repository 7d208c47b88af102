"""DescribeLogDirs (kafka-log-dirs.sh), per broker, through kafka-python's protocol classes.

Request building and response parsing are plain functions over kafka-python's
``DescribeLogDirsRequest`` / ``DescribeLogDirsResponse`` so they are tested without a broker
that has the API; :func:`describe` sends them to each broker that advertises it.
"""

from __future__ import annotations

from typing import Any

from kctl.errors import KctlError, NotFoundError, UnsupportedByBroker
from kctl.kafka import kp
from kctl.kafka.connect import Connection
from kctl.replicas.model import LogDirInfo, ReplicaDir

API = "DescribeLogDirs"


def error_name(code: int) -> str:
    """Kafka's name for an error code (KAFKA_STORAGE_ERROR, ...)."""
    import kafka.errors as E

    cls = E.for_code(code)
    return str(getattr(cls, "message", None) or cls.__name__)


def build_request(topics: dict[str, list[int]] | None, version: int | None = None) -> Any:
    """All log dirs of every replica (``topics`` None), or only the named partitions."""
    from kafka.protocol.admin import DescribeLogDirsRequest

    wanted = None
    if topics is not None:
        wanted = [
            DescribeLogDirsRequest.DescribableLogDirTopic(topic=name, partitions=sorted(parts))
            for name, parts in sorted(topics.items())
        ]
    if version is None:
        return DescribeLogDirsRequest(topics=wanted)
    return DescribeLogDirsRequest(topics=wanted, version=version)


def parse_response(broker: int, response: Any) -> list[LogDirInfo]:
    """The broker's log dirs with their replicas; a whole-response error raises."""
    top = getattr(response, "error_code", 0) or 0
    if top:
        raise KctlError(f"describing log dirs of broker {broker}", error_name(top))
    out = []
    for result in response.results:
        code = result.error_code or 0
        replicas = [
            ReplicaDir(
                topic=topic.name,
                partition=p.partition_index,
                size=p.partition_size,
                offset_lag=p.offset_lag,
                is_future=bool(p.is_future_key),
            )
            for topic in result.topics or []
            for p in topic.partitions or []
        ]
        total = getattr(result, "total_bytes", None)
        usable = getattr(result, "usable_bytes", None)
        out.append(
            LogDirInfo(
                broker=broker,
                path=result.log_dir,
                error=None if code == 0 else error_name(code),
                replicas=sorted(replicas, key=lambda r: (r.topic, r.partition, r.is_future)),
                total_bytes=None if total is None or total < 0 else total,
                usable_bytes=None if usable is None or usable < 0 else usable,
            )
        )
    return sorted(out, key=lambda d: d.path)


def broker_ids(client: Any) -> list[int]:
    return sorted(b["broker_id"] for b in client.describe_cluster()["brokers"])


def api_range(client: Any, node: int, api: str) -> tuple[int, int] | None:
    """The (min, max) version broker ``node`` advertises for ``api``, None when it does not."""
    from kafka.errors import KafkaError

    from kctl.kafka.apis import API_KEYS

    try:
        data = client.get_broker_version_data(node)
    except KafkaError as exc:
        raise KctlError(f"asking broker {node} for its API versions", str(exc)) from exc
    found = data.api_versions.get(API_KEYS[api])
    return None if found is None else (int(found[0]), int(found[1]))


def require_api(client: Any, node: int, api: str, what: str) -> tuple[int, int]:
    found = api_range(client, node, api)
    if found is None:
        raise UnsupportedByBroker(api, what if node < 0 else f"{what} (broker {node})")
    return found


def describe_with(
    client: Any, brokers: list[int] | None, topics: dict[str, list[int]] | None
) -> tuple[list[LogDirInfo], list[int]]:
    """(log dirs of the brokers that answered, brokers that do not support DescribeLogDirs)."""
    known = broker_ids(client)
    chosen = brokers or known
    for b in chosen:
        if b not in known:
            raise NotFoundError(f"unknown broker {b}", f"brokers: {', '.join(map(str, known))}")
    dirs: list[LogDirInfo] = []
    unsupported: list[int] = []
    for node in chosen:
        if api_range(client, node, API) is None:
            unsupported.append(node)
            continue
        response = kp.send(
            client, build_request(topics), f"describing log dirs of broker {node}", node_id=node
        )
        dirs += parse_response(node, response)
    return dirs, unsupported


def describe(
    conn: Connection, brokers: list[int] | None = None, topics: dict[str, list[int]] | None = None
) -> list[LogDirInfo]:
    """``kctl cluster log-dirs``: every chosen broker must support DescribeLogDirs."""
    with kp.admin_client(conn) as client:
        dirs, unsupported = describe_with(client, brokers, topics)
    if unsupported:
        raise UnsupportedByBroker(
            API, f"describing log dirs (broker {', '.join(map(str, unsupported))})"
        )
    return dirs
