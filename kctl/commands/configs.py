"""kctl configs: describe and incrementally alter topic and broker configs (kafka-configs.sh)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import typer

from kctl.commands._common import connection, example, output_view
from kctl.commands._complete import entity_names, topic_names
from kctl.formatters import Output, cols, emit
from kctl.parsing import INT32_MAX

if TYPE_CHECKING:
    from kctl.broker.configs import Entity

app = typer.Typer(
    help="Describe and change configs: topics, brokers, broker loggers, groups, client metrics.",
    no_args_is_help=True,
)

TOPIC = typer.Option(None, "--topic", "-t", help="A topic.", autocompletion=topic_names)
BROKER = typer.Option(None, "--broker", min=0, max=INT32_MAX, help="A broker id.")
DEFAULTS = typer.Option(False, "--broker-defaults", help="The cluster-wide broker defaults.")
# kafka-configs.sh's spelling of the same: --entity-type topics|brokers with --entity-name NAME
# or --entity-default.
ENTITY_TYPE = typer.Option(
    None, "--entity-type", help="topics or brokers (kafka-configs.sh; with --entity-name)."
)
ENTITY_NAME = typer.Option(
    None, "--entity-name", help="Topic name or broker id.", autocompletion=entity_names
)
ENTITY_DEFAULT = typer.Option(
    False, "--entity-default", help="With --entity-type brokers: same as --broker-defaults."
)
BROKER_LOGGER = typer.Option(
    None,
    "--broker-logger",
    min=0,
    max=INT32_MAX,
    help="A broker's log levels (dynamic; kafka.* logger names).",
)
GROUP = typer.Option(None, "--group", help="A consumer or share group's configs.")
CLIENT_METRICS = typer.Option(
    None, "--client-metrics", help="A client-metrics subscription (KIP-714) by name."
)
_KINDS = {
    "topic": "topic",
    "broker": "broker",
    "broker-logger": "broker-logger",
    "group": "group",
    "client-metric": "client-metrics",
}


@dataclass(frozen=True)
class Where:
    """The entity a configs command names, as its options gave it."""

    topic: str | None = None
    broker: int | None = None
    broker_defaults: bool = False
    entity_type: str | None = None
    entity_name: str | None = None
    entity_default: bool = False
    broker_logger: int | None = None
    group: str | None = None
    client_metrics: str | None = None


def _entity(w: Where) -> Entity:
    """The entity from kctl's options or kafka-configs.sh's --entity-type/--entity-name."""
    from kctl.broker import configs
    from kctl.errors import UsageError

    if w.entity_type is None:
        if w.entity_name is not None or w.entity_default:
            raise UsageError("--entity-name and --entity-default need --entity-type")
        return configs.entity(
            w.topic, w.broker, w.broker_defaults, w.broker_logger, w.group, w.client_metrics
        )
    own = (w.topic, w.broker, w.broker_logger, w.group, w.client_metrics)
    if any(x is not None for x in own) or w.broker_defaults:
        raise UsageError("--entity-type replaces --topic, --broker, --group, ...")
    kind = _KINDS.get(w.entity_type.lower().rstrip("s"))
    if kind is None:
        raise UsageError(
            f"unsupported --entity-type {w.entity_type!r}",
            "expected topics, brokers, broker-loggers, groups or client-metrics "
            "(users, clients, ips: kctl quotas and kctl users)",
        )
    if (w.entity_name is None) == (not w.entity_default):
        raise UsageError("give one of --entity-name and --entity-default with --entity-type")
    if w.entity_default:
        if kind != "broker":
            raise UsageError(
                f"{w.entity_type} have no --entity-default", "use --entity-type brokers"
            )
        return configs.entity(None, None, True)
    name = w.entity_name or ""
    if kind in ("broker", "broker-logger"):
        try:
            number = int(name)
        except ValueError:
            raise UsageError(f"--entity-name {w.entity_name!r} is not a broker id") from None
        return configs.Entity(kind, str(number))
    return configs.entity(
        name if kind == "topic" else None,
        None,
        False,
        None,
        name if kind == "group" else None,
        name if kind == "client-metrics" else None,
    )


@app.command(
    "describe",
    epilog=example(
        "kctl configs describe --topic orders",
        "kctl configs describe --broker 1 --all -o json",
        "kctl configs describe --broker-defaults",
        "kctl configs describe --broker-logger 1",
        "kctl configs describe --group orders-app",
    ),
)
def describe(
    ctx: typer.Context,
    topic: str | None = TOPIC,
    broker: int | None = BROKER,
    broker_defaults: bool = DEFAULTS,
    entity_type: str | None = ENTITY_TYPE,
    entity_name: str | None = ENTITY_NAME,
    entity_default: bool = ENTITY_DEFAULT,
    broker_logger: int | None = BROKER_LOGGER,
    group: str | None = GROUP,
    client_metrics: str | None = CLIENT_METRICS,
    all_: bool = typer.Option(
        False, "--all", help="Every config with its source and synonyms, defaults too."
    ),
) -> None:
    """Configs set on a topic or broker; --all adds defaults with source and synonyms.
    Sensitive values are always masked."""
    from kctl.broker import configs
    from kctl.broker.client import Admin

    ent = _entity(
        Where(
            topic, broker, broker_defaults, entity_type, entity_name, entity_default,
            broker_logger, group, client_metrics,
        )
    )  # fmt: skip
    values = configs.describe(Admin(connection(ctx)), ent, include_defaults=all_)
    rows, doc, columns = configs.describe_rows(ent, values, synonyms=all_)
    emit(Output(rows, cols(*columns), doc=doc), output_view(ctx))


def _alter(ctx: typer.Context, op: str, items: list[str], where: Where) -> None:
    from kctl.broker import configs
    from kctl.broker.client import Admin

    ent = _entity(where)
    values = configs.parse_assignments(items, op)
    rows = configs.alter(Admin(connection(ctx)), ent, op, values)
    emit(Output(rows, cols("entity", "name", "config", "operation", "value")), output_view(ctx))


def _add_alter_command(op: str, doc: str, argument: tuple[str, str], epilog: str) -> None:
    """Add the command of one incremental operation: its items (``argument``: help, metavar), then
    the options naming the entity. One signature for set, delete, append and subtract, from
    which Typer builds their --help and completion."""

    def command(
        ctx: typer.Context,
        items: list[str] = typer.Argument(..., help=argument[0], metavar=argument[1]),
        topic: str | None = TOPIC,
        broker: int | None = BROKER,
        broker_defaults: bool = DEFAULTS,
        entity_type: str | None = ENTITY_TYPE,
        entity_name: str | None = ENTITY_NAME,
        entity_default: bool = ENTITY_DEFAULT,
        broker_logger: int | None = BROKER_LOGGER,
        group: str | None = GROUP,
        client_metrics: str | None = CLIENT_METRICS,
    ) -> None:
        where = Where(
            topic, broker, broker_defaults, entity_type, entity_name, entity_default,
            broker_logger, group, client_metrics,
        )  # fmt: skip
        _alter(ctx, op, items, where)

    command.__name__ = command.__qualname__ = op
    command.__doc__ = doc
    app.command(op, epilog=epilog)(command)


_PAIRS = ("name=value pairs.", "NAME=VALUE...")

_add_alter_command(
    "set",
    "Set configs (incremental: other configs are left alone).",
    _PAIRS,
    example(
        "kctl configs set --topic orders retention.ms=86400000 cleanup.policy=compact",
        "kctl configs set --broker-logger 1 kafka.server.ReplicaManager=DEBUG",
        "kctl configs set --group orders-app consumer.session.timeout.ms=60000",
        "kctl configs set --client-metrics basic metrics=org.apache.kafka.producer. "
        "interval.ms=60000",
    ),
)
_add_alter_command(
    "delete",
    "Remove configs so they fall back to their defaults.",
    ("Config names.", "NAME..."),
    example("kctl configs delete --topic orders retention.ms"),
)
_add_alter_command(
    "append",
    "Append a value to a list config.",
    _PAIRS,
    example("kctl configs append --topic orders leader.replication.throttled.replicas=0:1"),
)
_add_alter_command(
    "subtract",
    "Remove a value from a list config.",
    _PAIRS,
    example("kctl configs subtract --topic orders cleanup.policy=delete"),
)
