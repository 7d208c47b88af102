"""Replication throttles on the cluster (IncrementalAlterConfigs, DescribeConfigs): set the
throttle of a plan, apply the changes between waves, read what is set (the rates on brokers,
the throttled replica lists on topics) and remove it. Which configs:
:mod:`kctl.reassign.throttles`."""

from __future__ import annotations

from kctl.broker import kafka_python
from kctl.broker.client import Admin
from kctl.errors import KctlError
from kctl.reassign.assign import Assignment
from kctl.reassign.rows import Cleared
from kctl.reassign.throttles import (
    BROKER_CONFIGS,
    REPLICA_CONFIGS,
    Changes,
    ThrottleValue,
    throttle_changes,
)


def _incremental(admin: Admin, changes: Changes) -> None:
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource

    for kind, name, values in changes:
        resource = ConfigResource(kind, name)
        for key, value in values.items():
            op = AlterConfigOpType.DELETE if value is None else AlterConfigOpType.SET
            resource.add_incremental_config(ConfigEntry(key, value, incremental_operation=op))
        futures = admin.client.incremental_alter_configs([resource], request_timeout=admin.timeout)
        admin.result(next(iter(futures.values())), f"setting throttles on {kind} {name}")


def set_throttle(admin: Admin, current: Assignment, proposed: Assignment, rate: int) -> None:
    """kafka-reassign-partitions.sh --throttle: the rates on every broker the moving partitions
    touch, the throttled replica lists on their topics."""
    _incremental(admin, throttle_changes(current, proposed, rate))


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
) -> list[ThrottleValue]:
    """(kind, name, {throttle config: value}) set dynamically on every broker (or those of
    ``brokers`` the metadata names) and on ``topics`` (all of them in one DescribeConfigs).
    With ``silent`` a broker that does not answer (dead, not yet fenced) is appended to it
    instead of failing the whole call."""
    from confluent_kafka.admin import ConfigResource

    from kctl.broker.configs import _source

    md = admin.metadata()
    ids = sorted(b for b in md.brokers if brokers is None or b in brokers)
    out: list[ThrottleValue] = []

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
) -> list[Cleared]:
    """Remove the throttle configs (replication rates, the log-dir move rate) from every broker
    (or only ``brokers``) and the replica lists from ``topics``; what was removed."""
    present = throttles_set(admin, topics, brokers)
    _incremental(admin, [(k, n, dict.fromkeys(names)) for k, n, names in present])
    return [{"entity": k, "name": n, "config": c} for k, n, names in present for c in names]


def apply_throttle_changes(admin: Admin, changes: Changes) -> None:
    """Set (a value) or remove (None) throttle configs: IncrementalAlterConfigs per entity."""
    _incremental(admin, [c for c in changes if c[2]])
