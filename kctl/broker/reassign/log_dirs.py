"""Replicas on the brokers' log dirs (DescribeLogDirs, AlterReplicaLogDirs) for
``partitions reassign``: the size of each replica (the bytes a move copies and has copied), the
copies between a broker's log dirs in flight, and a plan's ``log_dirs`` entries
(kafka-reassign-partitions.sh's, other than ``"any"``): each replica moved into its dir on its
broker once it exists there, or a copy stopped."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kctl.broker import kafka_python
from kctl.broker.reassign.wire import by_topic_list
from kctl.errors import KctlError
from kctl.reassign.plan_file import DirKey, LogDirs
from kctl.reassign.progress import Sizes
from kctl.reassign.rows import DirAnswer, DirMove


def log_dirs_by_broker(
    client: Any, partitions: dict[str, list[int]] | None
) -> tuple[dict[int, list[Any]], list[int]]:
    """(broker → its log dirs (:class:`kctl.broker.logdirs.LogDirInfo`) holding
    ``partitions``, or every partition with None; brokers that did not answer): one
    DescribeLogDirs to every unfenced broker; a broker that fails (stopped, not yet fenced) is
    listed instead of failing the call."""
    from kctl.broker import logdirs

    found: dict[int, list[Any]] = {}
    silent: list[int] = []
    for node in logdirs.broker_ids(client):
        try:
            if logdirs.api_range(client, node, logdirs.API) is None:
                silent.append(node)
                continue
            found[node] = logdirs.dirs_of(client, node, partitions)
        except KctlError:
            silent.append(node)
    return found, silent


def sizes_of(by_broker: dict[int, list[Any]]) -> Sizes:
    """(topic, partition, broker) → bytes on disk; the "future" log of an intra-broker move is
    left out."""
    sizes: Sizes = {}
    for node, dirs in by_broker.items():
        for d in dirs:
            for r in d.replicas:
                if not r.is_future:
                    key = (r.topic, r.partition, node)
                    sizes[key] = max(sizes.get(key, 0), r.size)
    return sizes


def dir_moves_of(by_broker: dict[int, list[Any]]) -> list[DirMove]:
    """The moves between log dirs in flight: one row per replica with a "future" log (the copy
    into ``log_dir``), its current dir, and the bytes copied of the replica's size."""
    rows: list[DirMove] = []
    for node, dirs in sorted(by_broker.items()):
        current: dict[tuple[str, int], tuple[str, int]] = {}
        future: dict[tuple[str, int], tuple[str, int]] = {}
        for d in dirs:
            for r in d.replicas:
                (future if r.is_future else current)[(r.topic, r.partition)] = (d.path, r.size)
        for (topic, partition), (path, copied) in sorted(future.items()):
            src, size = current.get((topic, partition), (None, 0))
            rows.append(
                {
                    "topic": topic,
                    "partition": partition,
                    "kind": "log-dir",
                    "broker": node,
                    "replicas": [node],
                    "adding_replicas": [],
                    "removing_replicas": [],
                    "from_dir": src,
                    "log_dir": path,
                    "bytes_copied": min(copied, size) if size else copied,
                    "bytes_total": size,
                }
            )
    return rows


def replica_sizes_with(client: Any, partitions: dict[str, list[int]]) -> tuple[Sizes, set[int]]:
    """((topic, partition, broker) → bytes on disk, the brokers that answered) for
    ``partitions`` only (see :func:`log_dirs_by_broker`, :func:`sizes_of`): a broker that is
    down, fenced or did not answer is not among them."""
    if not partitions:
        return {}, set()
    found, _silent = log_dirs_by_broker(client, partitions)
    return sizes_of(found), set(found)


# ---------------------------------------------------------------------------------------------
# A plan's log_dirs: AlterReplicaLogDirs to each replica's broker, once the replica exists there


def _dir_places(client: Any, keys: Iterable[DirKey]) -> dict[DirKey, dict[bool, tuple[str, int]]]:
    """Per replica of ``keys`` its broker answers for: {is future: (log dir, bytes)}; a broker
    that does not answer is left out."""
    from kctl.broker import logdirs

    by_broker: dict[int, dict[str, list[int]]] = {}
    for topic, partition, broker in keys:
        by_broker.setdefault(broker, {}).setdefault(topic, []).append(partition)
    where: dict[DirKey, dict[bool, tuple[str, int]]] = {}
    for broker, parts in sorted(by_broker.items()):
        try:
            found = logdirs.dirs_of(client, broker, parts)
        except KctlError:
            continue
        for d in found:
            for r in d.replicas:
                where.setdefault((r.topic, r.partition, broker), {})[r.is_future] = (d.path, r.size)
    return where


def dir_states_with(
    client: Any, dirs: LogDirs
) -> tuple[dict[DirKey, str], dict[DirKey, tuple[int, int]]]:
    """Per replica of ``dirs``: ``done`` (in its log dir, nothing moving), ``moving`` (a future
    log is being copied into it), ``elsewhere`` (in another log dir), ``absent`` (the broker
    holds no replica yet, or did not answer); and (bytes in the future log, bytes of the
    replica) for those moving."""
    states: dict[DirKey, str] = dict.fromkeys(dirs, "absent")
    sizes: dict[DirKey, tuple[int, int]] = {}
    for key, places in _dir_places(client, dirs).items():
        if key not in dirs:
            continue
        target = dirs[key]
        if True in places:
            states[key] = "moving" if places[True][0] == target else "elsewhere"
            sizes[key] = (places[True][1], places.get(False, ("", 0))[1])
        elif False in places:
            states[key] = "done" if places[False][0] == target else "elsewhere"
            sizes[key] = (0, places[False][1])
    return states, sizes


def dir_moves_with(client: Any, dirs: LogDirs | None) -> list[DirMove]:
    """The copies between log dirs in flight (rows of :func:`dir_moves_of`) of ``dirs``' replicas,
    or every one with None, that can be stopped (their replica still in a dir of its own)."""
    parts = None if dirs is None else by_topic_list({(t, p) for t, p, _b in dirs})
    by_broker, _silent = log_dirs_by_broker(client, parts)
    return [
        r
        for r in dir_moves_of(by_broker)
        if r["from_dir"] is not None
        and (dirs is None or (r["topic"], r["partition"], r["broker"]) in dirs)
    ]


def stop_dir_moves_with(client: Any, moves: list[DirMove]) -> list[DirAnswer]:
    """Stop copies between log dirs (rows of :func:`dir_moves_of`): each replica is sent back
    to the dir it is in (``from_dir``), so the broker drops its future log, as
    kafka-reassign-partitions.sh --cancel does; the broker's answer per replica."""
    back: LogDirs = {
        (r["topic"], r["partition"], r["broker"]): r["from_dir"]
        for r in moves
        if r["from_dir"] is not None  # (dir_moves_with leaves out those without)
    }
    return alter_dirs_with(client, back) if back else []


def alter_dirs_with(client: Any, moves: LogDirs) -> list[DirAnswer]:
    """AlterReplicaLogDirs for each replica of ``moves`` (one request per broker and dir): one
    row per replica, ``status`` accepted | pending (REPLICA_NOT_AVAILABLE: not on the broker
    yet) | failed."""
    from kctl.broker import logdirs

    grouped: dict[tuple[int, str], dict[str, list[int]]] = {}
    for (topic, partition, broker), d in sorted(moves.items()):
        grouped.setdefault((broker, d), {}).setdefault(topic, []).append(partition)
    rows: list[DirAnswer] = []
    for (broker, d), parts in sorted(grouped.items()):
        what = f"moving replicas between log dirs of broker {broker}"
        logdirs.require_api(client, broker, logdirs.ALTER_API, what)
        response = kafka_python.send(
            client, logdirs.build_alter_request(d, parts), what, node_id=broker
        )
        for row in logdirs.parse_alter_response(broker, response):
            if row["error"] in ("REPLICA_NOT_AVAILABLE", "ReplicaNotAvailableError"):
                row["status"] = "pending"
            rows.append(
                {
                    "topic": row["topic"],
                    "partition": row["partition"],
                    "broker": row["broker"],
                    "status": row["status"],
                    "error": row["error"],
                    "log_dir": d,
                }
            )
    return sorted(rows, key=lambda r: (r["topic"], r["partition"], r["broker"]))
