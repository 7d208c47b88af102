"""Topic operations (kafka-topics.sh): plain functions taking an :class:`Admin`."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from kctl.broker.client import Admin

# PartitionState and TopicState are what this module's functions return: named here too, so
# that callers holding a topics module can spell them (topics.TopicState).
from kctl.broker.cluster_view import ClusterView, TopicState, cluster_view, is_internal
from kctl.broker.cluster_view import PartitionState as PartitionState
from kctl.errors import KctlError, NotFoundError, UsageError

if TYPE_CHECKING:
    from kctl.broker.configs import TopicConfigLookup
    from kctl.broker.topic_rows import Health

_TOPIC_NAME = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")


def validate_topic_name(name: str) -> None:
    if name in (".", "..") or not _TOPIC_NAME.match(name):
        raise UsageError(
            f"invalid topic name {name!r}",
            "use 1-249 characters from a-z A-Z 0-9 . _ -, and not '.' or '..'",
        )


def list_topics(
    admin: Admin, *, internal: bool = False, pattern: str | None = None
) -> list[TopicState]:
    view = cluster_view(admin)
    rx = _compile(pattern)
    return [
        t
        for name, t in sorted(view.topics.items())
        if (internal or not t.internal) and (rx is None or rx.fullmatch(name))
    ]


def _compile(pattern: str | None) -> re.Pattern[str] | None:
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise UsageError(f"invalid --pattern {pattern!r}", str(exc)) from exc


def topic_authorization_failed(admin: Admin, topic: str) -> bool:
    """Whether the broker hides ``topic`` because this principal may not describe it: the
    metadata of every topic leaves such a topic out, as if it did not exist; asked for by name
    (never creating it), it answers TOPIC_AUTHORIZATION_FAILED."""
    from kafka.errors import KafkaError
    from kafka.protocol.metadata import MetadataRequest

    from kctl.broker import kafka_python

    try:
        with kafka_python.LazyClient(admin) as lazy:
            request = MetadataRequest(
                topics=[MetadataRequest.MetadataRequestTopic(name=topic)],
                allow_auto_topic_creation=False,
            )
            answer = kafka_python.send(lazy.client, request, "asking for the topic")
    except (KctlError, KafkaError):
        return False
    return any(t.name == topic and t.error_code == 29 for t in answer.topics)


def missing_topic(admin: Admin, name: str) -> KctlError:
    """The error for a topic the cluster's metadata does not list: not authorized when the
    broker hides it from this principal, else unknown."""
    if topic_authorization_failed(admin, name):
        return KctlError(
            f"not authorized to access topic {name!r}",
            "TOPIC_AUTHORIZATION_FAILED: an ACL denies it, or none allows it",
        )
    return NotFoundError(f"unknown topic {name!r}", "not in the cluster's metadata")


def resolve_names(
    admin: Admin, names: list[str], pattern: str | None, *, internal: bool, missing_ok: bool
) -> tuple[ClusterView, list[str]]:
    """Named topics (each must exist unless ``missing_ok``) plus those matching ``pattern``."""
    view = cluster_view(admin)
    chosen: list[str] = []
    for name in names:
        if name in view.topics:
            chosen.append(name)
        elif not missing_ok:
            raise missing_topic(admin, name)
    rx = _compile(pattern)
    if rx is not None:
        chosen += [
            n for n in sorted(view.topics) if rx.fullmatch(n) and (internal or not is_internal(n))
        ]
    return view, list(dict.fromkeys(chosen))


def describe_topics(
    admin: Admin,
    names: list[str],
    *,
    internal: bool = False,
    detail: bool = False,
    health: Health | None = None,
) -> tuple[ClusterView, list[TopicState]]:
    """Full state of the named topics (all topics when ``names`` is empty), with topic ids and
    the effective min.insync.replicas. ``detail`` adds what kafka-topics.sh --describe shows
    besides: configs not at their default, ELR and last known ELR, reassignments in progress.
    With a ``health`` filter, ids and detail are read for the topics with a partition it keeps
    only (the others are not shown): on a healthy cluster, none.

    Requests, whatever the number of topics: one Metadata; one DescribeConfigs for all the
    topics (again for those that failed retriably, within the timeout); with ``detail``,
    DescribeTopicPartitions (one per 2,000 partitions, the broker's page size: it also gives
    the topic ids) and one ListPartitionReassignments. A topic whose configs cannot be read
    keeps its partitions and carries the error (:attr:`TopicState.config_error`); when every
    topic fails, that is the command's error."""
    from kctl.broker import kafka_python
    from kctl.broker.configs import TopicConfigLookup

    filtering = health is not None and health.filtering
    if detail and not filtering:
        kafka_python.preload()  # its import overlaps the Metadata round trip
    view, chosen = resolve_names(admin, names, None, internal=internal, missing_ok=False)
    if not names:
        chosen = [n for n in sorted(view.topics) if internal or not view.topics[n].internal]
    topics = [view.topics[n] for n in chosen]
    if not topics:
        return view, []
    lookup = TopicConfigLookup(admin, chosen)  # answered while the rest is asked
    wanted = topics
    if health is not None and filtering:
        _take_configs(view, lookup, detail)  # min.insync.replicas, for the filter
        live = set(view.brokers)
        wanted = [t for t in topics if any(health.keeps(t, p, live) for p in t.partitions)]
    if wanted:
        ids_known = detail and _add_detail(admin, view, wanted)
        if not ids_known:
            _add_ids(admin, view, [t.topic for t in wanted])
    if not filtering:
        _take_configs(view, lookup, detail)
    return view, topics


def _take_configs(view: ClusterView, lookup: TopicConfigLookup, detail: bool) -> None:
    """The lookup's answers into the topics: min.insync.replicas, the configs not at their
    default (``detail``), or why there are none; every topic failing is an error."""
    entries, errors = lookup.results()
    if errors and not entries:
        name, why = next(iter(errors.items()))
        raise KctlError(f"describing configs of topic {name!r}", why)
    for name, configs in entries.items():
        min_isr, changed = _effective(configs)
        view.topics[name].min_insync_replicas = min_isr
        if detail:
            view.topics[name].configs = changed
    for name, why in errors.items():
        view.topics[name].config_error = why


def _add_ids(admin: Admin, view: ClusterView, chosen: list[str]) -> None:
    """Topic ids and the internal flag through librdkafka (DescribeTopicPartitions, or Metadata
    where the broker lacks it); optional: ids stay unknown when it fails."""
    from confluent_kafka import TopicCollection

    try:
        futures = admin.client.describe_topics(
            TopicCollection(chosen), request_timeout=admin.timeout
        )
        for name, fut in futures.items():
            desc = admin.result(fut, f"describing topic {name!r}")
            view.topics[name].topic_id = kafka_uuid(str(desc.topic_id)) if desc.topic_id else None
            view.topics[name].internal = bool(desc.is_internal) or view.topics[name].internal
    except KctlError:
        pass


def kafka_uuid(text: str) -> str:
    """A topic id as Kafka prints it (``Uuid.toString``: URL-safe base64, no padding);
    librdkafka prints the standard alphabet (``+`` and ``/``)."""
    return text.replace("+", "-").replace("/", "_").rstrip("=")


class _KnownBrokers:
    """An :class:`Admin` for :class:`kafka_python.LazyClient` that answers its metadata question
    (where the brokers are) from the Metadata already read, instead of a second full one."""

    def __init__(self, admin: Admin, view: ClusterView) -> None:
        from types import SimpleNamespace

        self.conn = admin.conn
        self._brokers = {
            node: SimpleNamespace(id=node, host=host, port=port)
            for node, (host, port) in view.brokers.items()
        }

    def metadata(self, topic: str | None = None) -> Any:
        from types import SimpleNamespace

        return SimpleNamespace(brokers=self._brokers)


# Partitions per DescribeTopicPartitions response: Kafka's default and largest page
# (max.request.partition.size.limit); a broker configured lower pages by its cursor.
PAGE = 2000


def pages(counts: dict[str, int], page: int | None = None) -> list[list[str]]:
    """Topics (name -> partition count) in runs of consecutive names whose partitions fill at
    most one page, for one DescribeTopicPartitions each; a topic of more partitions is a run
    of its own, read on by its cursor."""
    page = page or PAGE
    runs: list[list[str]] = []
    size = 0
    for name in sorted(counts):
        if not runs or size + counts[name] > page:
            runs.append([])
            size = 0
        runs[-1].append(name)
        size += counts[name]
    return runs


def _add_detail(admin: Admin, view: ClusterView, states: list[TopicState]) -> bool:
    """ELR and last known ELR per partition and the topic ids (DescribeTopicPartitions) and the
    replicas being added/removed (ListPartitionReassignments, all of the cluster's, kept for
    these topics), through kafka-python: what librdkafka's describe does not return. All sent
    at once, the DescribeTopicPartitions one per page of partitions spread over the brokers.
    Whether the topic ids came with it (False: the broker lacks DescribeTopicPartitions)."""
    from kafka.protocol.admin import ListPartitionReassignmentsRequest as L
    from kafka.protocol.admin.topics import DescribeTopicPartitionsRequest as R

    from kctl.broker import kafka_python
    from kctl.broker.reassign import wire

    by_name = {t.topic: {p.partition: p for p in t.partitions} for t in states}
    nodes = sorted(view.brokers) or [-1]
    with kafka_python.LazyClient(_KnownBrokers(admin, view)) as lazy:
        client = lazy.client
        requests: list[tuple[int, Any]] = []
        has_dtp = kafka_python.api_version(client, R) >= 0
        if has_dtp:
            for i, run in enumerate(pages({t.topic: len(t.partitions) for t in states})):
                request = R(
                    topics=[R.TopicRequest(name=n) for n in run], response_partition_limit=PAGE
                )
                requests.append((nodes[i % len(nodes)], request))
        if kafka_python.api_version(client, L) >= 0:
            # Every reassignment in the cluster (a short list, usually empty) rather than a
            # request naming each of the partitions; any broker forwards it to the controller.
            node = view.controller_id if view.controller_id in view.brokers else nodes[0]
            requests.append((node, wire.build_list_request(None, int(admin.timeout * 1000))))
        what = "describing topic partitions"
        responses = kafka_python.send_all(client, requests, what)
        for (node, request), response in zip(requests, responses, strict=True):
            if isinstance(request, L):
                for row in wire.parse_list_response(response):
                    p = by_name.get(row["topic"], {}).get(row["partition"])
                    if p is not None:
                        p.adding_replicas = row["adding_replicas"]
                        p.removing_replicas = row["removing_replicas"]
                continue
            for _ in range(100_000):  # bounded: one page per partition at the very worst
                _take_partitions(view, by_name, response)
                cursor = response.next_cursor
                if cursor is None:
                    break
                request = R(
                    topics=request.topics,
                    response_partition_limit=PAGE,
                    cursor=R.Cursor(
                        topic_name=cursor.topic_name, partition_index=cursor.partition_index
                    ),
                )
                response = kafka_python.send(client, request, what, node_id=node)
    return has_dtp


def _take_partitions(
    view: ClusterView, by_name: dict[str, dict[int, PartitionState]], response: Any
) -> None:
    """The topic ids and ELRs of one DescribeTopicPartitions response into the view."""
    for topic in response.topics:
        parts = by_name.get(topic.name)
        if parts is None:
            continue
        state = view.topics[topic.name]
        if topic.topic_id is not None and topic.topic_id.int:
            state.topic_id = _uuid_text(topic.topic_id.bytes)
        state.internal = bool(topic.is_internal) or state.internal
        for part in topic.partitions:
            p = parts.get(part.partition_index)
            if p is not None:
                elr = part.eligible_leader_replicas
                known = part.last_known_elr
                p.elr = None if elr is None else list(elr)
                p.last_known_elr = None if known is None else list(known)


def _uuid_text(raw: bytes) -> str:
    """A topic id as Kafka prints it (``Uuid.toString``: URL-safe base64, no padding)."""
    import base64

    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _effective(entries: dict[str, Any]) -> tuple[int, dict[str, str | None]]:
    """The effective min.insync.replicas (the topic's value, else the broker default, 1) and
    the configs not at Kafka's default (what kafka-topics.sh --describe lists: the topic's own
    and the broker's static or dynamic values; secrets as None) of one topic's entries."""
    entry = entries.get("min.insync.replicas")
    try:
        min_isr = int(entry.value) if entry is not None and entry.value else 1
    except ValueError:
        min_isr = 1
    changed = {
        k: (None if e.is_sensitive else e.value)
        for k, e in sorted(entries.items())
        if not e.is_default
    }
    return min_isr, changed


def topic_configs(admin: Admin, topics: list[str]) -> dict[str, tuple[int, dict[str, str | None]]]:
    """Per topic: :func:`_effective` of its configs (one DescribeConfigs for all; a topic that
    fails retriably is asked again within the timeout; one still failing is an error)."""
    from kctl.broker.configs import TopicConfigLookup

    if not topics:
        return {}
    entries, errors = TopicConfigLookup(admin, topics).results()
    for name, why in errors.items():
        raise KctlError(f"describing configs of topic {name!r}", why)
    return {name: _effective(configs) for name, configs in entries.items()}


def parse_replica_assignment(text: str) -> list[list[int]]:
    """kafka-topics.sh syntax: partitions separated by ',', replicas by ':' ("1:2,2:3")."""
    assignment: list[list[int]] = []
    for i, part in enumerate(text.split(",")):
        try:
            replicas = [int(b) for b in part.split(":")]
        except ValueError:
            raise UsageError(
                f"malformed --replica-assignment {text!r}",
                f"partition {i}: expected broker ids like 1:2:3, got {part!r}",
            ) from None
        if len(set(replicas)) != len(replicas):
            raise UsageError(
                f"malformed --replica-assignment {text!r}", f"partition {i} repeats a broker"
            )
        assignment.append(replicas)
    if len({len(r) for r in assignment}) > 1:
        raise UsageError(
            f"malformed --replica-assignment {text!r}",
            "every partition needs the same number of replicas",
        )
    return assignment


def _check_brokers(assignment: list[list[int]], view: ClusterView) -> None:
    for i, replicas in enumerate(assignment):
        unknown = [b for b in replicas if b not in view.brokers]
        if unknown:
            raise KctlError(
                f"replica assignment for partition {i} names unknown broker {unknown[0]}",
                f"brokers: {', '.join(str(b) for b in sorted(view.brokers))}",
            )


# librdkafka refuses a topic of more partitions (RD_KAFKAP_PARTITIONS_MAX) with a ValueError as
# the request is built; Kafka's controller refuses more than 10000 new partitions per request.
MAX_PARTITIONS = 100_000


def check_partition_count(total: int) -> None:
    """A partition count the client can ask for: 1..MAX_PARTITIONS, else a usage error."""
    if not 1 <= total <= MAX_PARTITIONS:
        raise UsageError(
            f"--partitions {total} is out of range",
            f"1..{MAX_PARTITIONS}, librdkafka's limit; Kafka creates at most 10000 partitions "
            "per request",
        )


def _request(make: Any, *args: Any, **kwargs: Any) -> Any:
    """A NewTopic/NewPartitions request; what the client library refuses to build (its
    ValueError) is a usage error, not an unexpected exception."""
    try:
        return make(*args, **kwargs)
    except ValueError as exc:
        raise UsageError(f"invalid request for topic {args[0]!r}", str(exc)) from None


def create_topic(
    admin: Admin,
    name: str,
    *,
    partitions: int | None,
    replication_factor: int | None,
    configs: dict[str, str],
    assignment: list[list[int]] | None,
    if_not_exists: bool,
) -> dict[str, Any]:
    from confluent_kafka.admin import NewTopic

    from kctl.broker.config_catalog import validate_topic_configs

    validate_topic_name(name)
    problems = validate_topic_configs(configs)
    if problems:
        raise KctlError(f"invalid config for topic {name!r}", problems[0])
    view = cluster_view(admin)
    if name in view.topics:
        if if_not_exists:
            return {
                "topic": name,
                "status": "exists",
                "partitions": len(view.topics[name].partitions),
                "replication_factor": view.topics[name].replication_factor,
            }
        raise KctlError(f"topic {name!r} already exists", "use --if-not-exists to accept that")
    if partitions is not None and partitions < 1:
        raise UsageError(f"--partitions must be at least 1, got {partitions}")
    if partitions is not None or assignment is not None:
        check_partition_count(len(assignment) if assignment is not None else partitions or 0)
    if replication_factor is not None:
        if replication_factor < 1:
            raise UsageError(f"--replication-factor must be at least 1, got {replication_factor}")
        if replication_factor > len(view.brokers):
            raise KctlError(
                f"replication factor {replication_factor} is larger than the number of brokers",
                f"{len(view.brokers)} available",
            )
    if assignment is not None:
        _check_brokers(assignment, view)
        topic = _request(
            NewTopic,
            name,
            num_partitions=len(assignment),
            replica_assignment=assignment,
            config=configs,
        )
    else:
        topic = _request(
            NewTopic,
            name,
            num_partitions=-1 if partitions is None else partitions,
            replication_factor=-1 if replication_factor is None else replication_factor,
            config=configs,
        )
    futures = admin.client.create_topics([topic], request_timeout=admin.timeout)
    try:
        admin.result(futures[name], f"creating topic {name!r}")
    except KctlError as exc:
        if if_not_exists and "TOPIC_ALREADY_EXISTS" in str(exc.why):
            return {
                "topic": name,
                "status": "exists",
                "partitions": None,
                "replication_factor": None,
            }
        raise
    placed = assignment
    if assignment is not None or partitions is None or replication_factor is None:
        # The broker's defaults (num.partitions, default.replication.factor) or the asked
        # placement: read the new topic back rather than print blanks or trust the request.
        placed = _read_back(admin, name)
        if assignment is not None and placed != assignment:
            raise KctlError(
                f"topic {name!r} was created, but the broker did not apply the replica assignment",
                f"asked {_placement(assignment)}, got {_placement(placed)}",
            )
    return {
        "topic": name,
        "status": "created",
        "partitions": len(placed) if placed else partitions,
        "replication_factor": len(placed[0]) if placed else replication_factor,
    }


def _read_back(admin: Admin, name: str) -> list[list[int]]:
    """The replicas of each partition of a topic just created, once metadata shows it (bounded
    by the timeout; empty when it never did)."""
    import time

    deadline = time.monotonic() + admin.timeout
    while time.monotonic() < deadline:
        topic = cluster_view(admin, name).topics.get(name)
        if topic is not None and topic.partitions and topic.error is None:
            return [p.replicas for p in topic.partitions]
        time.sleep(0.1)
    return []


def _placement(assignment: list[list[int]]) -> str:
    return ",".join(":".join(str(b) for b in replicas) for replicas in assignment) or "nothing"


def delete_topics(admin: Admin, names: list[str]) -> list[dict[str, Any]]:
    futures = admin.client.delete_topics(names, request_timeout=admin.timeout)
    results = []
    for name in names:
        admin.result(futures[name], f"deleting topic {name!r}")
        results.append({"topic": name, "status": "deleted"})
    return results


def add_partitions(
    admin: Admin, name: str, total: int, assignment: list[list[int]] | None
) -> dict[str, Any]:
    from confluent_kafka.admin import NewPartitions

    view, _ = resolve_names(admin, [name], None, internal=True, missing_ok=False)
    current = len(view.topics[name].partitions)
    if total <= current:
        raise KctlError(
            f"topic {name!r} already has {current} partitions",
            f"--partitions must be above {current}; Kafka cannot remove partitions",
        )
    check_partition_count(total)
    if assignment is not None:
        if len(assignment) != total - current:
            raise UsageError(
                "--replica-assignment must list the new partitions only",
                f"expected {total - current}, got {len(assignment)}",
            )
        _check_brokers(assignment, view)
    request = (
        _request(NewPartitions, name, total, replica_assignment=assignment)
        if assignment
        else _request(NewPartitions, name, total)
    )
    futures = admin.client.create_partitions([request], request_timeout=admin.timeout)
    admin.result(futures[name], f"adding partitions to topic {name!r}")
    return {
        "topic": name,
        "status": "partitions added",
        "partitions_before": current,
        "partitions": total,
    }
