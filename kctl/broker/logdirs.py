"""DescribeLogDirs (kafka-log-dirs.sh), per broker, through kafka-python's protocol classes.

Request building and response parsing are plain functions over kafka-python's
``DescribeLogDirsRequest`` / ``DescribeLogDirsResponse`` so they are tested without a broker
that has the API; :func:`describe` sends them to each broker that advertises it.
"""

from __future__ import annotations

from typing import Any

from kctl.broker import kafka_python
from kctl.broker.connect import Connection
from kctl.errors import KctlError, NotFoundError, UnsupportedByBroker
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


def broker_ids(client: Any, fenced: bool = False) -> list[int]:
    """The registered brokers that are not fenced (stopped, or not yet caught up), or with
    ``fenced`` only the fenced ones: DescribeCluster lists both."""
    return sorted(
        b["broker_id"]
        for b in client.describe_cluster()["brokers"]
        if bool(b.get("is_fenced")) == fenced
    )


def _unknown_broker(client: Any, broker: int, known: list[int]) -> KctlError:
    if broker in broker_ids(client, fenced=True):
        return KctlError(f"broker {broker} is fenced", "stopped or not caught up with the metadata")
    return NotFoundError(f"unknown broker {broker}", f"live brokers: {', '.join(map(str, known))}")


def api_range(client: Any, node: int, api: str) -> tuple[int, int] | None:
    """The (min, max) version broker ``node`` advertises for ``api``, None when it does not."""
    from kafka.errors import KafkaError

    from kctl.broker.apis import API_KEYS

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


def dirs_of(client: Any, node: int, topics: dict[str, list[int]] | None) -> list[LogDirInfo]:
    """One DescribeLogDirs to broker ``node`` (for ``topics``, or every partition), parsed."""
    response = kafka_python.send(
        client, build_request(topics), f"describing log dirs of broker {node}", node_id=node
    )
    return parse_response(node, response)


def describe_with(
    client: Any, brokers: list[int] | None, topics: dict[str, list[int]] | None
) -> tuple[list[LogDirInfo], list[int]]:
    """(log dirs of the brokers that answered, brokers that do not support DescribeLogDirs)."""
    known = broker_ids(client)
    chosen = brokers or known
    for b in chosen:
        if b not in known:
            raise _unknown_broker(client, b, known)
    dirs: list[LogDirInfo] = []
    unsupported: list[int] = []
    for node in chosen:
        if api_range(client, node, API) is None:
            unsupported.append(node)
            continue
        dirs += dirs_of(client, node, topics)
    return dirs, unsupported


def describe(
    conn: Connection, brokers: list[int] | None = None, topics: dict[str, list[int]] | None = None
) -> list[LogDirInfo]:
    """``kctl cluster log-dirs``: every chosen broker must support DescribeLogDirs."""
    with kafka_python.admin_client(conn) as client:
        dirs, unsupported = describe_with(client, brokers, topics)
    if unsupported:
        raise UnsupportedByBroker(
            API, f"describing log dirs (broker {', '.join(map(str, unsupported))})"
        )
    return dirs


# ---------------------------------------------------------------------------------------------
# AlterReplicaLogDirs: move replicas between the log dirs of one broker (kafka-reassign-
# partitions.sh with a "log_dirs" entry). The broker copies the replica into a "future" log in
# the target dir, which DescribeLogDirs shows with is_future, and swaps it in once caught up.

ALTER_API = "AlterReplicaLogDirs"


def build_alter_request(to_dir: str, partitions: dict[str, list[int]]) -> Any:
    """Move the named partitions' replicas on the receiving broker to ``to_dir``."""
    from kafka.protocol.admin import AlterReplicaLogDirsRequest as R

    topics = [
        R.AlterReplicaLogDir.AlterReplicaLogDirTopic(name=topic, partitions=sorted(parts))
        for topic, parts in sorted(partitions.items())
    ]
    return R(dirs=[R.AlterReplicaLogDir(path=to_dir, topics=topics)])


def parse_alter_response(broker: int, response: Any) -> list[dict[str, Any]]:
    """One row per partition: ``status`` accepted | failed with Kafka's error name."""
    rows = []
    for topic in response.results:
        for p in topic.partitions:
            code = p.error_code or 0
            rows.append(
                {
                    "topic": topic.topic_name,
                    "partition": p.partition_index,
                    "broker": broker,
                    "status": "accepted" if code == 0 else "failed",
                    "error": None if code == 0 else error_name(code),
                }
            )
    return sorted(rows, key=lambda r: (r["topic"], r["partition"]))


def move_plan(
    dirs: list[LogDirInfo], broker: int, partitions: dict[str, list[int]], to_dir: str
) -> list[dict[str, Any]]:
    """Per partition: where the broker keeps its replica now and whether it moves. Pure over
    the broker's DescribeLogDirs answer; a target that is not one of the broker's log dirs, or a
    replica the broker does not hold, is an error."""
    paths = [d.path for d in dirs]
    target = next((d for d in dirs if d.path == to_dir), None)
    if target is None:
        raise NotFoundError(
            f"broker {broker} has no log dir {to_dir!r}", f"its log dirs: {', '.join(paths)}"
        )
    if target.error is not None:
        raise KctlError(f"log dir {to_dir} of broker {broker} is offline", target.error)
    rows = []
    for topic, parts in sorted(partitions.items()):
        for partition in sorted(parts):
            where = [
                (d.path, r.is_future)
                for d in dirs
                for r in d.replicas
                if r.topic == topic and r.partition == partition
            ]
            current = next((path for path, future in where if not future), None)
            moving_to = next((path for path, future in where if future), None)
            if current is None:
                raise NotFoundError(
                    f"broker {broker} holds no replica of {topic}-{partition}",
                    "see 'kctl topics describe' for its replicas",
                )
            if current == to_dir and moving_to is None:
                action, reason = "skip", "already in the target log dir"
            elif moving_to == to_dir:
                action, reason = "skip", "already moving to the target log dir"
            else:
                action, reason = "move", f"copy to {to_dir}, then swap in"
            rows.append(
                {
                    "topic": topic,
                    "partition": partition,
                    "broker": broker,
                    "log_dir": current,
                    "future_log_dir": moving_to,
                    "target": to_dir,
                    "action": action,
                    "reason": reason,
                }
            )
    return rows


def plan_move(
    conn: Connection, broker: int, partitions: dict[str, list[int]], to_dir: str
) -> list[dict[str, Any]]:
    """The plan of :func:`move_plan` from the broker's current DescribeLogDirs answer."""
    with kafka_python.admin_client(conn) as client:
        dirs = _broker_dirs(client, broker, partitions)
    return move_plan(dirs, broker, partitions, to_dir)


def _broker_dirs(client: Any, broker: int, partitions: dict[str, list[int]]) -> list[LogDirInfo]:
    known = broker_ids(client)
    if broker not in known:
        raise _unknown_broker(client, broker, known)
    require_api(client, broker, API, "describing log dirs")
    return dirs_of(client, broker, partitions)


def move(
    conn: Connection, broker: int, partitions: dict[str, list[int]], to_dir: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(plan, broker's answer per moved partition): AlterReplicaLogDirs for the partitions whose
    replica is not already in (or moving to) ``to_dir``."""
    with kafka_python.admin_client(conn) as client:
        plan = move_plan(_broker_dirs(client, broker, partitions), broker, partitions, to_dir)
        todo: dict[str, list[int]] = {}
        for row in plan:
            if row["action"] == "move":
                todo.setdefault(row["topic"], []).append(row["partition"])
        if not todo:
            return plan, []
        require_api(client, broker, ALTER_API, "moving replicas between log dirs")
        what = f"moving replicas between log dirs of broker {broker}"
        response = kafka_python.send(
            client, build_alter_request(to_dir, todo), what, node_id=broker
        )
    return plan, parse_alter_response(broker, response)


def kafka_document(dirs: list[LogDirInfo]) -> dict[str, Any]:
    """The document kafka-log-dirs.sh --describe prints: brokers by id, each log dir with its
    replicas (``partition`` as ``topic-N``), in Kafka's field names and order. ``error`` is
    Kafka's error name (KAFKA_STORAGE_ERROR) where kafka-log-dirs.sh prints its Java class."""
    brokers: dict[int, list[dict[str, Any]]] = {}
    for d in dirs:
        brokers.setdefault(d.broker, []).append(
            {
                "partitions": [
                    {
                        "partition": f"{r.topic}-{r.partition}",
                        "size": r.size,
                        "offsetLag": r.offset_lag,
                        "isFuture": r.is_future,
                    }
                    for r in d.replicas
                ],
                "error": d.error,
                "logDir": d.path,
            }
        )
    return {
        "brokers": [{"broker": b, "logDirs": brokers[b]} for b in sorted(brokers)],
        "version": 1,
    }
