"""Config operations (kafka-configs.sh): describe and incrementally alter topic and broker
configs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kctl.broker.client import Admin
from kctl.errors import KctlError, NotFoundError, UsageError

MASK = "********"

# ConfigSource codes of DescribeConfigs v1+, as Kafka names them.
SOURCES = {
    0: "UNKNOWN",
    1: "DYNAMIC_TOPIC_CONFIG",
    2: "DYNAMIC_BROKER_CONFIG",
    3: "DYNAMIC_DEFAULT_BROKER_CONFIG",
    4: "STATIC_BROKER_CONFIG",
    5: "DEFAULT_CONFIG",
    6: "DYNAMIC_BROKER_LOGGER_CONFIG",
    7: "CLIENT_METRICS_CONFIG",
    8: "GROUP_CONFIG",
}
OPERATIONS = ("set", "delete", "append", "subtract")


@dataclass
class ConfigValue:
    name: str
    value: str | None
    source: str
    is_default: bool
    is_sensitive: bool
    is_read_only: bool
    synonyms: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Entity:
    kind: str  # "topic" | "broker" | "broker-defaults"
    name: str  # topic name, broker id, or "" for cluster-wide broker defaults

    def label(self) -> str:
        return "broker defaults" if self.kind == "broker-defaults" else f"{self.kind} {self.name!r}"


def entity(topic: str | None, broker: int | None, broker_defaults: bool) -> Entity:
    chosen = [x for x in (topic is not None, broker is not None, broker_defaults) if x]
    if len(chosen) != 1:
        raise UsageError("name exactly one of --topic, --broker, --broker-defaults")
    if topic is not None:
        return Entity("topic", topic)
    if broker is not None:
        return Entity("broker", str(broker))
    return Entity("broker-defaults", "")


def _resource(ent: Entity) -> Any:
    from confluent_kafka.admin import ConfigResource

    return ConfigResource("topic" if ent.kind == "topic" else "broker", ent.name)


def _check_exists(admin: Admin, ent: Entity) -> None:
    md = admin.metadata()
    if ent.kind == "topic" and ent.name not in md.topics:
        raise NotFoundError(f"unknown topic {ent.name!r}", "not in the cluster's metadata")
    if ent.kind == "broker" and int(ent.name) not in md.brokers:
        known = ", ".join(str(b) for b in sorted(md.brokers))
        raise NotFoundError(f"unknown broker {ent.name}", f"brokers: {known}")


def _source(code: Any) -> str:
    value = getattr(code, "value", code)
    return SOURCES.get(int(value), str(value)) if isinstance(value, int) else str(value)


def describe(admin: Admin, ent: Entity, *, include_defaults: bool) -> list[ConfigValue]:
    """Without ``include_defaults`` only values set on the entity (dynamic configs), like
    kafka-configs.sh --describe; with it, every config with its source and synonyms."""
    _check_exists(admin, ent)
    if ent.kind == "broker-defaults":
        values = _describe_broker_defaults(admin)
    else:
        futures = admin.client.describe_configs([_resource(ent)], request_timeout=admin.timeout)
        entries = admin.result(next(iter(futures.values())), f"describing configs of {ent.label()}")
        values = [
            ConfigValue(
                name=name,
                value=MASK if e.is_sensitive else e.value,
                source=_source(e.source),
                is_default=bool(e.is_default),
                is_sensitive=bool(e.is_sensitive),
                is_read_only=bool(e.is_read_only),
                synonyms=[
                    {
                        "name": s.name,
                        "value": MASK if e.is_sensitive else s.value,
                        "source": _source(s.source),
                    }
                    for s in (e.synonyms.values() if e.synonyms else [])
                ],
            )
            for name, e in sorted(entries.items())
        ]
    out = []
    for v in values:
        if not include_defaults and not v.source.startswith("DYNAMIC"):
            continue
        if not include_defaults:
            v.synonyms = []
        out.append(v)
    return out


def _describe_broker_defaults(admin: Admin) -> list[ConfigValue]:
    """DescribeConfigs for the BROKER resource named "" (the cluster-wide defaults), through
    kafka-python: librdkafka's Python API refuses an empty broker name."""
    from kafka.protocol.admin import DescribeConfigsRequest

    from kctl.broker import kafka_python

    request = DescribeConfigsRequest(resources=[(4, "", None)], include_synonyms=True)
    with kafka_python.admin_client(admin.conn) as client:
        response = kafka_python.send(client, request, "describing the broker defaults")
    out = []
    for result in response.results:
        if result.error_code:
            raise KctlError("describing the broker defaults", result.error_message or "")
        for config in result.configs:
            c = config.to_dict()
            sensitive = bool(c.get("is_sensitive"))
            source = _source(c.get("config_source", 3))
            synonyms = [
                {
                    "name": syn["name"],
                    "value": MASK if sensitive else syn["value"],
                    "source": _source(syn["source"]),
                }
                for syn in c.get("synonyms") or []
            ]
            out.append(
                ConfigValue(
                    name=c["name"],
                    value=MASK if sensitive else c.get("value"),
                    source=source,
                    is_default=source == "DEFAULT_CONFIG",
                    is_sensitive=sensitive,
                    is_read_only=bool(c.get("read_only")),
                    synonyms=synonyms,
                )
            )
    return sorted(out, key=lambda v: v.name)


def parse_assignments(items: list[str], op: str) -> dict[str, str | None]:
    """``k=v`` pairs for set/append/subtract; bare names for delete."""
    out: dict[str, str | None] = {}
    for item in items:
        if op == "delete":
            if "=" in item:
                raise UsageError(f"configs delete takes names, got {item!r}")
            out[item] = None
            continue
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise UsageError(f"malformed config {item!r}", "expected name=value")
        out[key] = value
    if not out:
        raise UsageError("name at least one config")
    return out


def alter(
    admin: Admin, ent: Entity, op: str, values: dict[str, str | None]
) -> list[dict[str, Any]]:
    """Incremental alter (IncrementalAlterConfigs): set, delete, append or subtract."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry

    if op not in OPERATIONS:
        raise UsageError(f"unknown operation {op!r}")
    if ent.kind == "topic" and op in ("set", "append", "subtract"):
        from kctl.config_catalog import validate_topic_configs

        problems = validate_topic_configs({k: v or "" for k, v in values.items()})
        if problems:
            raise KctlError(f"invalid config for {ent.label()}", problems[0])
    _check_exists(admin, ent)
    if ent.kind == "broker-defaults":
        return _alter_broker_defaults(admin, op, values)
    optype = {
        "set": AlterConfigOpType.SET,
        "delete": AlterConfigOpType.DELETE,
        "append": AlterConfigOpType.APPEND,
        "subtract": AlterConfigOpType.SUBTRACT,
    }[op]
    resource = _resource(ent)
    for name, value in values.items():
        resource.add_incremental_config(ConfigEntry(name, value, incremental_operation=optype))
    futures = admin.client.incremental_alter_configs([resource], request_timeout=admin.timeout)
    admin.result(next(iter(futures.values())), f"altering configs of {ent.label()}")
    return [
        {"entity": ent.kind, "name": ent.name, "config": k, "operation": op, "value": v}
        for k, v in values.items()
    ]


def _alter_broker_defaults(
    admin: Admin, op: str, values: dict[str, str | None]
) -> list[dict[str, Any]]:
    from kafka.protocol.admin import IncrementalAlterConfigsRequest

    from kctl.broker import kafka_python

    code = {"set": 0, "delete": 1, "append": 2, "subtract": 3}[op]
    entries = [(k, code, None if op == "delete" else v) for k, v in values.items()]
    request = IncrementalAlterConfigsRequest(resources=[(4, "", entries)], validate_only=False)
    with kafka_python.admin_client(admin.conn) as client:
        response = kafka_python.send(client, request, "altering the broker defaults")
    for result in response.responses:
        if result.error_code:
            raise KctlError("altering the broker defaults", result.error_message or "")
    return [
        {"entity": "broker-defaults", "name": "", "config": k, "operation": op, "value": v}
        for k, v in values.items()
    ]
