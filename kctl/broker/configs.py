"""Config operations (kafka-configs.sh): describe and incrementally alter topic and broker
configs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kctl.broker.client import Admin
from kctl.errors import KctlError, NotFoundError, UsageError
from kctl.parsing import key_value

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
    # "topic" | "broker" | "broker-defaults" | "broker-logger" | "group" | "client-metrics"
    kind: str
    name: str  # topic, broker id, "" for the broker defaults, group id, client-metrics name

    def label(self) -> str:
        return "broker defaults" if self.kind == "broker-defaults" else f"{self.kind} {self.name!r}"


# DescribeConfigs/IncrementalAlterConfigs resource types sent through kafka-python (librdkafka's
# Python API has no broker-logger, group or client-metrics resources).
RAW_RESOURCE_TYPES = {"broker-defaults": 4, "broker-logger": 8, "client-metrics": 16, "group": 32}


def entity(
    topic: str | None,
    broker: int | None,
    broker_defaults: bool,
    broker_logger: int | None = None,
    group: str | None = None,
    client_metrics: str | None = None,
) -> Entity:
    given = [
        ("topic", topic),
        ("broker", None if broker is None else str(broker)),
        ("broker-defaults", "" if broker_defaults else None),
        ("broker-logger", None if broker_logger is None else str(broker_logger)),
        ("group", group),
        ("client-metrics", client_metrics),
    ]
    chosen = [(k, v) for k, v in given if v is not None]
    if len(chosen) != 1:
        raise UsageError(
            "name exactly one of --topic, --broker, --broker-defaults, --broker-logger, "
            "--group, --client-metrics"
        )
    kind, name = chosen[0]
    if kind in ("topic", "group", "client-metrics") and not name:
        raise UsageError(f"empty --{kind} name")
    return Entity(kind, name)


def _resource(ent: Entity) -> Any:
    from confluent_kafka.admin import ConfigResource

    return ConfigResource("topic" if ent.kind == "topic" else "broker", ent.name)


def _check_exists(admin: Admin, ent: Entity) -> None:
    md = admin.metadata()
    if ent.kind == "topic" and ent.name not in md.topics:
        raise NotFoundError(f"unknown topic {ent.name!r}", "not in the cluster's metadata")
    if ent.kind in ("broker", "broker-logger") and int(ent.name) not in md.brokers:
        known = ", ".join(str(b) for b in sorted(md.brokers))
        raise NotFoundError(f"unknown broker {ent.name}", f"brokers: {known}")


def _source(code: Any) -> str:
    value = getattr(code, "value", code)
    return SOURCES.get(int(value), str(value)) if isinstance(value, int) else str(value)


def describe(admin: Admin, ent: Entity, *, include_defaults: bool) -> list[ConfigValue]:
    """Without ``include_defaults`` only values set on the entity (dynamic configs), like
    kafka-configs.sh --describe; with it, every config with its source and synonyms."""
    _check_exists(admin, ent)
    if ent.kind in RAW_RESOURCE_TYPES:
        values = _describe_raw(admin, ent)
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
    own = ("DYNAMIC", "GROUP_CONFIG", "CLIENT_METRICS_CONFIG")
    for v in values:
        # A broker's loggers are all shown, as kafka-configs.sh shows them.
        if not include_defaults and ent.kind != "broker-logger" and not v.source.startswith(own):
            continue
        if not include_defaults:
            v.synonyms = []
        out.append(v)
    return out


# librdkafka error names a topic's DescribeConfigs may answer and that a second asking may not:
# a topic just created that the broker answering does not know yet, a controller moving,
# a broker or the request timing out, a connection lost.
RETRIABLE = frozenset(
    {
        "UNKNOWN_TOPIC_OR_PART",
        "NOT_CONTROLLER",
        "LEADER_NOT_AVAILABLE",
        "NOT_LEADER_FOR_PARTITION",
        "REQUEST_TIMED_OUT",
        "BROKER_NOT_AVAILABLE",
        "NETWORK_EXCEPTION",
        "_TIMED_OUT",
        "_TRANSPORT",
        "_ALL_BROKERS_DOWN",
    }
)


def retry_delays(timeout: float, first: float = 0.1, most: float = 1.0) -> list[float]:
    """The pauses before each asking again within ``timeout`` seconds: doubling from ``first``,
    each at most ``most``, all of them together within the timeout."""
    delays: list[float] = []
    delay, total = first, 0.0
    while total + delay <= timeout:
        delays.append(delay)
        total += delay
        delay = min(delay * 2, most)
    return delays


class TopicConfigLookup:
    """DescribeConfigs of many topics: one request for all of them, sent when built (librdkafka
    answers it in its own thread while the caller asks other things); :meth:`results` waits for
    the answers, asks again for the topics that failed retriably (:data:`RETRIABLE`, one
    request for all of them, with growing pauses) until the timeout, and returns per topic its
    config entries, or the reason it has none."""

    def __init__(self, admin: Admin, topics: list[str]) -> None:
        import time

        self.admin = admin
        self.started = time.monotonic()
        self.futures = self._ask(topics)

    def _ask(self, topics: list[str]) -> dict[str, Any]:
        from confluent_kafka.admin import ConfigResource

        resources = [ConfigResource("topic", t) for t in topics]
        futures = self.admin.client.describe_configs(resources, request_timeout=self.admin.timeout)
        return {res.name: fut for res, fut in futures.items()}

    def results(self) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
        import concurrent.futures
        import time

        from confluent_kafka import KafkaException

        from kctl.broker.client import error_name, error_text

        timeout = self.admin.timeout
        deadline = self.started + timeout
        delays = iter(retry_delays(timeout))
        entries: dict[str, dict[str, Any]] = {}
        errors: dict[str, str] = {}
        while True:
            again: list[str] = []
            for name, fut in self.futures.items():
                try:
                    entries[name] = fut.result(timeout=max(0.0, deadline - time.monotonic()))
                    errors.pop(name, None)
                except concurrent.futures.TimeoutError:
                    errors[name] = f"no answer within {timeout:g}s"
                except KafkaException as exc:
                    code = error_name(exc)
                    errors[name] = f"{code}: {error_text(exc)}" if code else error_text(exc)
                    if code in RETRIABLE:
                        again.append(name)
            delay = next(delays, None)
            if not again or delay is None or time.monotonic() + delay >= deadline:
                return entries, errors
            time.sleep(delay)
            self.futures = self._ask(again)


def describe_rows(
    ent: Entity, values: list[ConfigValue], *, synonyms: bool
) -> tuple[list[dict[str, Any]], dict[str, Any], list[str]]:
    """What ``configs describe`` shows of ``values``: the table's rows, the JSON document and
    the columns (with ``synonyms``: --all's synonyms column too)."""
    rows = [
        {
            "name": v.name,
            "value": v.value,
            "source": v.source,
            "sensitive": v.is_sensitive,
            "read_only": v.is_read_only,
            "synonyms": [f"{s['source']}:{s['name']}={s['value']}" for s in v.synonyms],
        }
        for v in values
    ]
    doc = {
        "entity": ent.kind,
        "name": ent.name,
        "configs": [
            {
                "name": v.name,
                "value": v.value,
                "source": v.source,
                "is_default": v.is_default,
                "is_sensitive": v.is_sensitive,
                "is_read_only": v.is_read_only,
                "synonyms": v.synonyms,
            }
            for v in values
        ],
    }
    columns = ["name", "value", "source", "sensitive", "read_only"] + (
        ["synonyms"] if synonyms else []
    )
    return rows, doc, columns


def _describe_raw(admin: Admin, ent: Entity) -> list[ConfigValue]:
    """DescribeConfigs through kafka-python for what librdkafka's Python API cannot name: the
    BROKER resource "" (the cluster-wide defaults; it refuses an empty broker name), a broker's
    loggers, a group, a client-metrics subscription."""
    import kafka.errors as Errors
    from kafka.protocol.admin import DescribeConfigsRequest

    from kctl.broker import kafka_python

    what = f"describing the configs of {ent.label()}"
    request = DescribeConfigsRequest(
        resources=[(RAW_RESOURCE_TYPES[ent.kind], ent.name, None)], include_synonyms=True
    )
    node = int(ent.name) if ent.kind == "broker-logger" else None
    with kafka_python.admin_client(admin.conn) as client:
        response = kafka_python.send(client, request, what, node_id=node)
    out = []
    for result in response.results:
        if result.error_code:
            name = Errors.for_code(result.error_code).__name__
            raise KctlError(what, f"{name}: {result.error_message or ''}".rstrip(": "))
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


def _name(text: str) -> str:
    """A config name as typed: empty or with blanks it names no config (librdkafka refused an
    empty one with a ValueError; a blank one was sent, and "deleted")."""
    if not text or any(c.isspace() or not c.isprintable() for c in text):
        raise UsageError(
            f"malformed config name {text!r}", "a config name is not empty and has no blanks"
        )
    return text


def parse_assignments(items: list[str], op: str) -> dict[str, str | None]:
    """``k=v`` pairs for set/append/subtract; bare names for delete."""
    out: dict[str, str | None] = {}
    for item in items:
        if op == "delete":
            if "=" in item:
                raise UsageError(f"configs delete takes names, got {item!r}")
            out[_name(item)] = None
            continue
        key, value = key_value(item, "config", form="name=value")
        out[_name(key)] = value
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
        from kctl.broker.config_catalog import validate_topic_configs

        problems = validate_topic_configs({k: v or "" for k, v in values.items()})
        if problems:
            raise KctlError(f"invalid config for {ent.label()}", problems[0])
    if ent.kind == "topic" and op == "delete":
        # Kafka deletes a name it does not know without a word (kafka-configs.sh refuses it:
        # "Invalid config(s): NAME"); kctl said "delete" for it.
        from kctl.broker.config_catalog import TOPIC_CONFIGS, validate_topic_config

        for name in values:
            if name not in TOPIC_CONFIGS:
                raise KctlError(
                    f"invalid config for {ent.label()}", validate_topic_config(name, "")
                )
    _check_exists(admin, ent)
    if ent.kind in RAW_RESOURCE_TYPES:
        return _alter_raw(admin, ent, op, values)
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


def _alter_raw(
    admin: Admin, ent: Entity, op: str, values: dict[str, str | None]
) -> list[dict[str, Any]]:
    """IncrementalAlterConfigs through kafka-python (see :func:`_describe_raw`); a broker's
    loggers are changed on that broker itself."""
    import kafka.errors as Errors
    from kafka.protocol.admin import IncrementalAlterConfigsRequest

    from kctl.broker import kafka_python

    what = f"altering the configs of {ent.label()}"
    code = {"set": 0, "delete": 1, "append": 2, "subtract": 3}[op]
    entries = [(k, code, None if op == "delete" else v) for k, v in values.items()]
    request = IncrementalAlterConfigsRequest(
        resources=[(RAW_RESOURCE_TYPES[ent.kind], ent.name, entries)], validate_only=False
    )
    node = int(ent.name) if ent.kind == "broker-logger" else None
    with kafka_python.admin_client(admin.conn) as client:
        response = kafka_python.send(client, request, what, node_id=node)
    for result in response.responses:
        if result.error_code:
            name = Errors.for_code(result.error_code).__name__
            raise KctlError(what, f"{name}: {result.error_message or ''}".rstrip(": "))
    return [
        {"entity": ent.kind, "name": ent.name, "config": k, "operation": op, "value": v}
        for k, v in values.items()
    ]
