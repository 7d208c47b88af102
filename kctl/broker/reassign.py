"""Partition reassignment (kafka-reassign-partitions.sh): AlterPartitionReassignments and
ListPartitionReassignments through kafka-python's protocol classes, replication throttles through
IncrementalAlterConfigs. Plans, throttle configs and the waves are pure (:mod:`kctl.reassign`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from kctl.broker import kafka_python
from kctl.broker.client import Admin
from kctl.broker.cluster_view import cluster_view, controller
from kctl.broker.connect import Connection
from kctl.errors import KctlError, NotFoundError, UnsupportedByBroker
from kctl.reassign.assign import Assignment
from kctl.reassign.progress import ProgressLine
from kctl.reassign.throttles import (
    BROKER_CONFIGS,
    DIR_RATE_CONFIG,
    REPLICA_CONFIGS,
    throttle_changes,
)

ALTER_API = "AlterPartitionReassignments"
LIST_API = "ListPartitionReassignments"


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
    client: Any, target: dict[tuple[str, int], list[int] | None], what: str, timeout: float
) -> list[dict[str, Any]]:
    node = _require(client, ALTER_API, what)
    request = build_alter_request(target, int(timeout * 1000), 0)
    response = kafka_python.send_any(client, request, what, first=node)
    return parse_alter_response(response)


def alter(
    conn: Connection, target: dict[tuple[str, int], list[int] | None], what: str
) -> list[dict[str, Any]]:
    with kafka_python.admin_client(conn) as client:
        return alter_with(client, target, what, conn.timeout)


def ongoing_with(
    client: Any, partitions: dict[str, list[int]] | None, timeout: float
) -> list[dict[str, Any]]:
    what = "listing partition reassignments"
    node = _require(client, LIST_API, what)
    request = build_list_request(partitions, int(timeout * 1000))
    response = kafka_python.send_any(client, request, what, first=node)
    return parse_list_response(response)


def ongoing(conn: Connection, partitions: dict[str, list[int]] | None = None) -> list[Any]:
    with kafka_python.admin_client(conn) as client:
        return ongoing_with(client, partitions, conn.timeout)


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
    _incremental(admin, list(throttle_changes(current, proposed, rate)))


def throttles_set(
    admin: Admin, topics: list[str], brokers: set[int] | None = None
) -> list[tuple[str, str, list[str]]]:
    """(kind, name, throttle configs set dynamically) on every broker (or ``brokers``) and on
    ``topics``."""
    return [(k, n, list(v)) for k, n, v in throttle_values(admin, topics, brokers)]


def throttle_values(
    admin: Admin,
    topics: list[str],
    brokers: set[int] | None = None,
    silent: list[int] | None = None,
) -> list[tuple[str, str, dict[str, str]]]:
    """(kind, name, {throttle config: value}) set dynamically on every broker (or those of
    ``brokers`` the metadata names) and on ``topics`` (all of them in one DescribeConfigs).
    With ``silent`` a broker that does not answer (dead, not yet fenced) is appended to it
    instead of failing the whole call."""
    from confluent_kafka.admin import ConfigResource

    from kctl.broker.configs import _source

    md = admin.metadata()
    ids = sorted(b for b in md.brokers if brokers is None or b in brokers)
    out: list[tuple[str, str, dict[str, str]]] = []

    # librdkafka takes one broker resource per DescribeConfigs call (it goes to that broker).
    for b in ids:
        futures = admin.client.describe_configs(
            [ConfigResource("broker", str(b))], request_timeout=admin.timeout
        )
        try:
            entries = admin.result(
                next(iter(futures.values())), f"describing configs of broker {b}"
            )
        except KctlError:
            if silent is None:
                raise
            silent.append(b)
            continue
        rates = {
            n: entries[n].value
            for n in BROKER_CONFIGS
            if n in entries
            and entries[n].value
            and _source(entries[n].source) == "DYNAMIC_BROKER_CONFIG"
        }
        if rates:
            out.append(("broker", str(b), rates))
    wanted = sorted(set(topics))
    if not wanted:
        return out
    try:
        # librdkafka sends topic configs to the controller its metadata names, which in KRaft
        # is any broker: one that just died makes it wait out the timeout. Tolerant callers
        # wait half of it, then ask every live broker in turn through kafka-python.
        wait = admin.timeout / 2 if silent is not None else admin.timeout
        futures = admin.client.describe_configs(
            [ConfigResource("topic", t) for t in wanted], request_timeout=wait
        )
        found: list[tuple[str, dict[str, tuple[str | None, str]]]] = []
        for res, fut in sorted(futures.items(), key=lambda kv: kv[0].name):
            what = f"describing configs of topic {res.name}"
            got = admin.result(fut, what, frozenset({"UNKNOWN_TOPIC_OR_PART"}), wait)
            if got is not None:
                found.append((res.name, {n: (e.value, _source(e.source)) for n, e in got.items()}))
    except KctlError:
        if silent is None:
            raise
        found = _topic_configs_from_any(admin, wanted)
    for name, entries in found:
        values = {
            n: entries[n][0]
            for n in REPLICA_CONFIGS
            if n in entries and entries[n][0] and entries[n][1] == "DYNAMIC_TOPIC_CONFIG"
        }
        if values:
            out.append(("topic", name, values))  # type: ignore[arg-type]
    return out


def _topic_configs_from_any(
    admin: Admin, topics: list[str]
) -> list[tuple[str, dict[str, tuple[str | None, str]]]]:
    """Topics' configs (name -> (value, source)) through kafka-python, from the first broker
    that answers (see :func:`kafka_python.send_any`)."""
    from kafka.protocol.admin import DescribeConfigsRequest

    from kctl.broker.configs import _source

    what = f"describing configs of {len(topics)} topic(s)"
    request = DescribeConfigsRequest(resources=[(2, t, list(REPLICA_CONFIGS)) for t in topics])
    with kafka_python.admin_client(admin.conn) as client:
        ids = kafka_python.broker_ids(client)
        if not ids:
            raise KctlError(what, "no broker known")
        response = kafka_python.send_any(client, request, what, first=ids[0])
    out = []
    for result in response.results:
        if result.error_code:
            continue  # a topic deleted meanwhile
        configs = {}
        for c in result.configs:
            d = c.to_dict()
            configs[d["name"]] = (d.get("value"), _source(d.get("config_source", 5)))
        out.append((result.resource_name, configs))
    return sorted(out)


def clear_throttles(
    admin: Admin, topics: list[str], brokers: set[int] | None = None
) -> list[dict[str, Any]]:
    """Remove the throttle configs (replication rates, the log-dir move rate) from every broker
    (or only ``brokers``) and the replica lists from ``topics``; what was removed."""
    present = throttles_set(admin, topics, brokers)
    _incremental(admin, [(k, n, dict.fromkeys(names)) for k, n, names in present])
    return [{"entity": k, "name": n, "config": c} for k, n, names in present for c in names]


def verify(
    admin: Admin, conn: Connection, plan: Assignment, dirs: dict[DirKey, str] | None = None
) -> tuple[list[dict[str, Any]], bool]:
    """Per partition of the plan: complete | in-progress | not-applied; and whether all done.
    With ``dirs`` (the plan's log_dirs), a partition on its brokers but with a replica not yet
    in its log dir is ``in-progress (log dir)`` (being copied) or ``not-applied (log dir)``."""
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
    if dirs:
        with kafka_python.admin_client(conn) as client:
            states, _ = dir_states_with(client, dirs)
        for r in rows:
            if not str(r["status"]).startswith("complete"):
                continue
            mine = [
                st for (t, p, _b), st in states.items() if (t, p) == (r["topic"], r["partition"])
            ]
            if "moving" in mine:
                r["status"] = "in-progress (log dir)"
            elif any(st != "done" for st in mine):
                r["status"] = "not-applied (log dir)"
    done = all(str(r["status"]).startswith("complete") for r in rows)
    return rows, done


def apply_throttle_changes(
    admin: Admin, changes: list[tuple[str, str, dict[str, str | None]]]
) -> None:
    """Set (a value) or remove (None) throttle configs: IncrementalAlterConfigs per entity."""
    _incremental(admin, [c for c in changes if c[2]])


# ---------------------------------------------------------------------------------------------
# Sizes of replicas (DescribeLogDirs), for the bytes a move copies and has copied


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


def sizes_of(by_broker: dict[int, list[Any]]) -> dict[tuple[str, int, int], int]:
    """(topic, partition, broker) → bytes on disk; the "future" log of an intra-broker move is
    left out."""
    sizes: dict[tuple[str, int, int], int] = {}
    for node, dirs in by_broker.items():
        for d in dirs:
            for r in d.replicas:
                if not r.is_future:
                    key = (r.topic, r.partition, node)
                    sizes[key] = max(sizes.get(key, 0), r.size)
    return sizes


def dir_moves_of(by_broker: dict[int, list[Any]]) -> list[dict[str, Any]]:
    """The moves between log dirs in flight: one row per replica with a "future" log (the copy
    into ``log_dir``), its current dir, and the bytes copied of the replica's size."""
    rows = []
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


def replica_sizes_with(
    client: Any, partitions: dict[str, list[int]]
) -> tuple[dict[tuple[str, int, int], int], set[int]]:
    """((topic, partition, broker) → bytes on disk, the brokers that answered) for
    ``partitions`` only (see :func:`log_dirs_by_broker`, :func:`sizes_of`): a broker that is
    down, fenced or did not answer is not among them."""
    if not partitions:
        return {}, set()
    found, _silent = log_dirs_by_broker(client, partitions)
    return sizes_of(found), set(found)


def _by_topic_list(tps: list[tuple[str, int]] | set[tuple[str, int]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for t, p in sorted(tps):
        out.setdefault(t, []).append(p)
    return out


# ---------------------------------------------------------------------------------------------
# A plan's log_dirs (kafka-reassign-partitions.sh's "log_dirs" entries other than "any"):
# AlterReplicaLogDirs to each replica's broker, once the replica exists there

DirKey = tuple[str, int, int]  # (topic, partition, broker)


def _dir_places(client: Any, keys: Any) -> dict[DirKey, dict[bool, tuple[str, int]]]:
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
    client: Any, dirs: dict[DirKey, str]
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


def dir_moves_with(client: Any, dirs: dict[DirKey, str] | None) -> list[dict[str, Any]]:
    """The copies between log dirs in flight (rows of :func:`dir_moves_of`) of ``dirs``' replicas,
    or every one with None, that can be stopped (their replica still in a dir of its own)."""
    parts = None if dirs is None else _by_topic_list({(t, p) for t, p, _b in dirs})
    by_broker, _silent = log_dirs_by_broker(client, parts)
    return [
        r
        for r in dir_moves_of(by_broker)
        if r["from_dir"] is not None
        and (dirs is None or (r["topic"], r["partition"], r["broker"]) in dirs)
    ]


def stop_dir_moves_with(client: Any, moves: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stop copies between log dirs (rows of :func:`dir_moves_of`): each replica is sent back
    to the dir it is in (``from_dir``), so the broker drops its future log, as
    kafka-reassign-partitions.sh --cancel does; the broker's answer per replica."""
    back = {(r["topic"], r["partition"], r["broker"]): r["from_dir"] for r in moves}
    return alter_dirs_with(client, back) if back else []


def alter_dirs_with(client: Any, moves: dict[DirKey, str]) -> list[dict[str, Any]]:
    """AlterReplicaLogDirs for each replica of ``moves`` (one request per broker and dir): one
    row per replica, ``status`` accepted | pending (REPLICA_NOT_AVAILABLE: not on the broker
    yet) | failed."""
    from kctl.broker import logdirs

    grouped: dict[tuple[int, str], dict[str, list[int]]] = {}
    for (topic, partition, broker), d in sorted(moves.items()):
        grouped.setdefault((broker, d), {}).setdefault(topic, []).append(partition)
    rows: list[dict[str, Any]] = []
    for (broker, d), parts in sorted(grouped.items()):
        what = f"moving replicas between log dirs of broker {broker}"
        logdirs.require_api(client, broker, logdirs.ALTER_API, what)
        response = kafka_python.send(
            client, logdirs.build_alter_request(d, parts), what, node_id=broker
        )
        for row in logdirs.parse_alter_response(broker, response):
            if row["error"] in ("REPLICA_NOT_AVAILABLE", "ReplicaNotAvailableError"):
                row["status"] = "pending"
            rows.append({**row, "log_dir": d})
    return sorted(rows, key=lambda r: (r["topic"], r["partition"], r["broker"]))


# ---------------------------------------------------------------------------------------------
# Executing a plan in waves (reassign execute --wait, verify --resume)


LOST_GRACE = 15.0  # seconds a move may look neither in flight nor done (metadata lag)


class StuckError(KctlError):
    """Moves made no progress for the stall timeout (e.g. an adding replica's broker is down)."""


class PlanFailed(KctlError):
    """A wave was refused by the controller or a move was cancelled from outside."""


class WaveRun:
    """One run of a plan in waves, everything derived from the cluster (the plan, the current
    replicas and the ongoing reassignments): partitions already done are skipped, moves of the
    plan already in flight are waited for first (wave 0), the rest is submitted in waves of at
    most ``max_concurrent`` partitions / ``max_bytes`` bytes, each when the previous completes.

    With ``throttle`` each wave sets the throttle for only its moving replicas and their brokers
    (and removes it from those of the previous wave that no longer move). :meth:`finish` removes
    every throttle once nothing of the plan is in flight; :meth:`narrow` keeps it only for the
    moves still in flight; :meth:`cancel` cancels those moves, then removes it."""

    def __init__(
        self,
        admin: Admin,
        client: Any,
        plan: Assignment,
        *,
        max_concurrent: int | None = None,
        max_bytes: int | None = None,
        throttle: int | None = None,
        stall_timeout: float = 60.0,
        interval: float = 1.0,
        dirs: dict[DirKey, str] | None = None,
        dir_throttle: int | None = None,
        clear_all: bool = False,
    ) -> None:
        from kctl.reassign import progress, waves

        self.admin = admin
        self.client = client
        self.timeout = admin.conn.timeout
        self.plan = plan
        self.throttle = throttle
        self.stall_timeout = stall_timeout
        self.interval = interval
        self.topics = sorted({t for t, _ in plan})
        self.tracker = progress.Tracker()
        self.throttles: list[tuple[str, str, dict[str, str | None]]] = []
        self.throttled = False  # whether this run set a throttle
        self.dir_throttle = dir_throttle
        self.dirs_throttled = False
        self.clear_all = clear_all
        self.started = time.monotonic()
        self.refresh()
        self.start_state = dict(self.states)
        self.original = self._from()
        moving = [tp for tp, s in self.states.items() if s in (waves.PENDING, waves.IN_FLIGHT)]
        sizes, _ = replica_sizes_with(client, _by_topic_list(moving))
        self.sizes = progress.partition_sizes(sizes)
        # What a move copies is counted against the replicas it started from (the cluster's
        # replicas when this run began; for a move already in flight, the ones being removed
        # are still listed, so its adding replicas are the ongoing reassignment's).
        self.cost = waves.move_bytes(self._from(), plan, self.sizes)
        self.bytes_total = sum(self.cost[tp] for tp in moving)
        in_flight = [tp for tp in moving if self.states[tp] == waves.IN_FLIGHT]
        pending = [tp for tp in moving if self.states[tp] == waves.PENDING]
        self.waves: list[list[tuple[str, int]]] = (
            [in_flight] if in_flight else []
        ) + waves.schedule(pending, self.cost, max_concurrent, max_bytes)
        self.resumed_wave = bool(in_flight)
        self.wave = 0  # 1-based number of the wave in flight (0: none yet)
        self.lost_since: dict[tuple[str, int], float] = {}
        self.seen_sizes: progress.Sizes = {}  # the last replica sizes progress() read
        self.dirs = dict(dirs or {})
        # called with the broker's answers each time log-dir moves are submitted
        self.on_dirs_submitted: Callable[[list[dict[str, Any]]], None] | None = None
        # The only brokers finish() clears (every throttle this run sets is on one of them), so
        # a rate another tool set on a broker this plan never touches stays. ``clear_all``
        # (verify --resume): every broker, as verify does.
        self.plan_brokers = {b for tp, reps in plan.items() for b in (*reps, *self.original[tp])}
        self.plan_brokers.update(b for _t, _p, b in self.dirs)

    # --- the cluster ---------------------------------------------------------------------------
    def refresh(self) -> None:
        from kctl.reassign import waves

        view = cluster_view(self.admin)
        self.current = {
            (t, p.partition): list(p.replicas)
            for t in self.topics
            if t in view.topics
            for p in view.topics[t].partitions
        }
        rows = ongoing_with(self.client, _by_topic_list(set(self.plan)), self.timeout)
        self.running = {
            (r["topic"], r["partition"]): r
            for r in rows
            if (r["topic"], r["partition"]) in self.plan
        }
        self.states = waves.classify(self.plan, self.current, self.running)

    def _from(self) -> Assignment:
        """Per partition, the replicas its move starts from (without the adding ones)."""
        out: Assignment = {}
        for tp in self.plan:
            row = getattr(self, "running", {}).get(tp)
            now = self.current.get(tp, [])
            if row is not None:
                out[tp] = [b for b in now if b not in row["adding_replicas"]]
            else:
                out[tp] = list(now)
        return out

    # --- throttles -----------------------------------------------------------------------------
    def _set_throttle_for(self, tps: list[tuple[str, int]]) -> None:
        from kctl.reassign.throttles import throttle_diff

        if self.throttle is None and not self.throttles:
            return
        start = self.original
        after = (
            throttle_changes(
                {tp: start[tp] for tp in tps}, {tp: self.plan[tp] for tp in tps}, self.throttle
            )
            if tps and self.throttle is not None
            else []
        )
        changes = throttle_diff(self.throttles, after)  # type: ignore[arg-type]
        apply_throttle_changes(self.admin, changes)
        self.throttles = after  # type: ignore[assignment]
        self.throttled = self.throttled or bool(after)

    def _throttle_dirs(self) -> None:
        """The log-dir move rate on every broker with a replica to move between its log dirs
        (once; it stays until :meth:`finish`)."""
        if self.dir_throttle is None or self.dirs_throttled or not self.dirs:
            return
        brokers = sorted({b for _t, _p, b in self.dirs})
        rate = str(self.dir_throttle)
        apply_throttle_changes(
            self.admin, [("broker", str(b), {DIR_RATE_CONFIG: rate}) for b in brokers]
        )
        self.dirs_throttled = self.throttled = True

    def narrow(self) -> list[tuple[str, int]]:
        """Keep the throttle only for the moves of the plan still in flight (their list)."""
        self.refresh()
        flying = sorted(self.running)
        if self.throttles or self.throttle is not None:
            self._set_throttle_for(flying)
        return flying

    def finish(self, everywhere: bool = False) -> list[dict[str, Any]]:
        """Remove the throttle: the replica lists of the plan's topics and the rates of the
        brokers of the plan (its partitions' replicas when the run began, their targets, and
        the brokers of its log-dir moves: every throttle this run sets is on one); or, with
        ``everywhere`` or ``clear_all`` (a plan found done, verify --resume: an earlier run's
        throttles may be anywhere), of every broker, as kafka-reassign-partitions.sh --verify
        does."""
        self.throttles = []
        every = everywhere or self.clear_all
        return clear_throttles(self.admin, self.topics, None if every else self.plan_brokers)

    def dirs_moving(self) -> bool:
        """Whether a replica of the plan is being copied into its log dir (a future log)."""
        if not self.dirs:
            return False
        states, _ = dir_states_with(self.client, self.dirs)
        return "moving" in states.values()

    def cancel(self) -> list[tuple[str, int]]:
        """Cancel the plan's moves in flight (and its replicas' copies into their log dirs),
        wait (bounded) until they are gone, then remove the throttle. The cancelled
        partitions."""
        self.refresh()
        flying = sorted(self.running)
        if self.dirs:
            stopped = dir_moves_with(self.client, self.dirs)
            stop_dir_moves_with(self.client, stopped)
            flying = sorted({*flying, *((r["topic"], r["partition"]) for r in stopped)})
        if self.running:
            alter_with(
                self.client, dict.fromkeys(sorted(self.running)), "cancelling reassignments",
                self.timeout,
            )  # fmt: skip
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                self.refresh()
                if not self.running:
                    break
                time.sleep(0.5)
        self.finish()
        return flying

    # --- progress ------------------------------------------------------------------------------
    def progress(self, stuck: list[tuple[str, int]] | None = None) -> ProgressLine:
        from kctl.reassign import progress, waves

        now = time.monotonic()
        flying = sorted(self.running)
        sizes, answered = (
            replica_sizes_with(self.client, _by_topic_list(flying)) if flying else ({}, set())
        )
        sizes = self.seen_sizes = progress.carry_forward(self.seen_sizes, sizes, answered)
        copied = 0
        for tp in flying:
            adding = list(self.running[tp]["adding_replicas"])
            done, _total = progress.copied(tp, adding, sizes, self.sizes.get(tp, 0))
            copied += done
            self.tracker.watch(now, tp, done)
        done_bytes = sum(
            self.cost.get(tp, 0)
            for tp, s in self.states.items()
            if s == waves.DONE and self.start_state.get(tp) != waves.DONE
        )
        total_copied = min(self.bytes_total, done_bytes + copied)
        self.tracker.sample(now, total_copied)
        done_count = sum(1 for s in self.states.values() if s == waves.DONE)
        return progress.progress_line(
            wave=self.wave,
            waves=len(self.waves),
            partitions_done=done_count,
            partitions_total=len(self.plan),
            bytes_copied=total_copied,
            bytes_total=self.bytes_total,
            rate=self.tracker.rate(),
            in_flight=flying,
            stuck=stuck or [],
            elapsed=now - self.started,
        )

    # --- running -------------------------------------------------------------------------------
    def submit(self, index: int) -> list[dict[str, Any]]:
        """Submit wave ``index`` (0-based), its throttle first. Wave 0 of a resumed plan is
        already in flight: only its throttle is set."""
        wave = self.waves[index]
        self.wave = index + 1
        self._set_throttle_for(wave)
        if index == 0 and self.resumed_wave:
            return []
        results = alter_with(
            self.client, {tp: self.plan[tp] for tp in wave}, "reassigning partitions", self.timeout
        )
        failed = [r for r in results if r["status"] == "failed"]
        if failed:
            first = failed[0]
            raise PlanFailed(
                f"wave {self.wave}: the controller refused {first['topic']}-{first['partition']}",
                f"{first['error']}" + (f": {first['message']}" if first.get("message") else ""),
            )
        for tp in wave:
            self.tracker.watch(time.monotonic(), tp, 0)
        return results

    def wave_done(self, index: int) -> bool:
        """Whether every partition of wave ``index`` is done (no longer moving, replicas as
        planned); a partition no longer moving but not as planned was cancelled from outside."""
        wave = self.waves[index]

        def done(tp: tuple[str, int]) -> bool:
            # Replicas as planned; a reorder left (other order) counts as done too.
            return tp not in self.running and set(self.current.get(tp, [])) == set(self.plan[tp])

        # No longer moving but not as planned: the metadata this broker answers with may lag
        # the controller for a moment, so only after LOST_GRACE seconds is it a cancelled move.
        now = time.monotonic()
        lost = [tp for tp in wave if tp not in self.running and not done(tp)]
        for tp in lost:
            self.lost_since.setdefault(tp, now)
        for tp in [tp for tp in self.lost_since if tp not in lost]:
            del self.lost_since[tp]
        gone = [tp for tp in lost if now - self.lost_since[tp] >= LOST_GRACE]
        if gone:
            names = ", ".join(f"{t}-{p}" for t, p in gone[:5])
            raise PlanFailed(
                f"wave {index + 1}: {names} stopped moving without reaching the plan",
                "cancelled by another tool?",
            )
        return all(done(tp) for tp in wave)

    def wait_wave(self, index: int, report: Any) -> None:
        """Poll until wave ``index`` completes, calling ``report(progress line)`` each poll;
        :class:`StuckError` when its moves stall for the stall timeout. A poll that fails (a
        broker just killed is still named in the metadata, as the controller or a leader, until
        the controller fences it) is tried again, up to the stall timeout."""
        failing_since: float | None = None
        while True:
            try:
                self.refresh()
            except KctlError:
                now = time.monotonic()
                failing_since = now if failing_since is None else failing_since
                if now - failing_since >= self.stall_timeout:
                    raise
                time.sleep(self.interval)
                continue
            failing_since = None
            stuck = self.tracker.stalled(time.monotonic(), self.stall_timeout, sorted(self.running))
            line = self.progress(stuck)
            report(line)
            if self.wave_done(index):
                for tp in self.waves[index]:
                    self.tracker.forget(tp)
                return
            if stuck and len(stuck) == len(self.running):
                names = ", ".join(f"{t}-{p}" for t, p in stuck[:10])
                more = f" and {len(stuck) - 10} more" if len(stuck) > 10 else ""
                raise StuckError(
                    f"no progress for {self.stall_timeout:g}s on {names}{more}",
                    "an adding replica's broker may be down; the throttle stays only for the "
                    "moves in flight; run 'reassign verify --resume' when it is back",
                )
            time.sleep(self.interval)

    # --- log dirs (the plan's log_dirs entries), once every replica is on its broker -----------
    def submit_dirs(self) -> list[dict[str, Any]]:
        """AlterReplicaLogDirs for every replica of the plan not yet in (or moving to) its log
        dir; a replica not on its broker yet is ``pending`` (submitted again by the next call)."""
        states, _ = dir_states_with(self.client, self.dirs)
        todo = {k: d for k, d in self.dirs.items() if states[k] in ("elsewhere", "absent")}
        if not todo:
            return []
        self._throttle_dirs()
        rows = alter_dirs_with(self.client, todo)
        if self.on_dirs_submitted is not None:
            self.on_dirs_submitted(rows)
        failed = [r for r in rows if r["status"] == "failed"]
        if failed:
            f = failed[0]
            raise PlanFailed(
                f"moving {f['topic']}-{f['partition']} to {f['log_dir']} on broker {f['broker']}",
                str(f["error"]),
            )
        return rows

    def wait_dirs(self, report: Any) -> None:
        """Move the plan's replicas into their log dirs and poll until every one is there (its
        future log swapped in), reporting progress lines with ``phase`` ``log-dirs``;
        :class:`StuckError` when nothing moves for the stall timeout."""
        from kctl.reassign import progress

        if not self.dirs:
            return
        tracker = progress.Tracker()
        first, _ = dir_states_with(self.client, self.dirs)
        moving_keys = [k for k, st in first.items() if st != "done"]
        size: dict[DirKey, int] = {}
        last_change = time.monotonic()
        before: dict[DirKey, str] = {}
        before_bytes = -1
        while True:
            self.submit_dirs()
            states, sizes = dir_states_with(self.client, self.dirs)
            now = time.monotonic()
            copied = 0
            for k in moving_keys:
                fut, cur = sizes.get(k, (0, 0))
                size[k] = max(size.get(k, 0), cur)
                copied += size[k] if states[k] == "done" else min(fut, size[k])
            total = sum(size.get(k, 0) for k in moving_keys)
            tracker.sample(now, copied)
            done = sum(1 for st in states.values() if st == "done")
            flying = sorted({(t, p) for (t, p, _b), st in states.items() if st != "done"})
            if states != before or copied > before_bytes:
                last_change = now
            before, before_bytes = dict(states), copied
            stuck = flying if now - last_change >= self.stall_timeout else []
            line = progress.progress_line(
                wave=len(self.waves) + 1,
                waves=len(self.waves) + 1,
                partitions_done=done,
                partitions_total=len(self.dirs),
                bytes_copied=copied,
                bytes_total=total,
                rate=tracker.rate(),
                in_flight=flying,
                stuck=stuck,
                elapsed=now - self.started,
                phase="log-dirs",
            )
            report(line)
            if done == len(self.dirs):
                return
            if stuck:
                names = ", ".join(f"{t}-{p}" for t, p in stuck[:10])
                raise StuckError(
                    f"no log dir move progressed for {self.stall_timeout:g}s ({names})",
                    "see 'kctl cluster log-dirs'; run 'reassign verify --resume' to try again",
                )
            time.sleep(self.interval)
