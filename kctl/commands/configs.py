"""kctl configs: describe and incrementally alter topic and broker configs (kafka-configs.sh)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from kctl.commands._common import connection, example, output_view
from kctl.commands._complete import entity_names, topic_names
from kctl.formatters import Output, cols, emit

if TYPE_CHECKING:
    from kctl.broker.configs import Entity

app = typer.Typer(help="Describe and change topic and broker configs.", no_args_is_help=True)

TOPIC = typer.Option(None, "--topic", "-t", help="A topic.", autocompletion=topic_names)
BROKER = typer.Option(None, "--broker", help="A broker id.")
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


def _entity(
    topic: str | None,
    broker: int | None,
    broker_defaults: bool,
    entity_type: str | None,
    entity_name: str | None,
    entity_default: bool,
) -> Entity:
    """The entity from kctl's options or kafka-configs.sh's --entity-type/--entity-name."""
    from kctl.broker import configs
    from kctl.errors import UsageError

    if entity_type is None:
        if entity_name is not None or entity_default:
            raise UsageError("--entity-name and --entity-default need --entity-type")
        return configs.entity(topic, broker, broker_defaults)
    if topic is not None or broker is not None or broker_defaults:
        raise UsageError("--entity-type replaces --topic, --broker and --broker-defaults")
    kind = entity_type.lower().rstrip("s")
    if kind not in ("topic", "broker"):
        raise UsageError(f"unsupported --entity-type {entity_type!r}", "expected topics or brokers")
    if (entity_name is None) == (not entity_default):
        raise UsageError("give one of --entity-name and --entity-default with --entity-type")
    if entity_default:
        if kind == "topic":
            raise UsageError("topics have no --entity-default", "use --entity-type brokers")
        return configs.entity(None, None, True)
    if kind == "topic":
        return configs.entity(entity_name, None, False)
    try:
        return configs.entity(None, int(entity_name or ""), False)
    except ValueError:
        raise UsageError(f"--entity-name {entity_name!r} is not a broker id") from None


@app.command(
    "describe",
    epilog=example(
        "kctl configs describe --topic orders",
        "kctl configs describe --broker 1 --all -o json",
        "kctl configs describe --broker-defaults",
    ),
)
def describe(
    topic: str | None = TOPIC,
    broker: int | None = BROKER,
    broker_defaults: bool = DEFAULTS,
    entity_type: str | None = ENTITY_TYPE,
    entity_name: str | None = ENTITY_NAME,
    entity_default: bool = ENTITY_DEFAULT,
    all_: bool = typer.Option(
        False, "--all", help="Every config with its source and synonyms, defaults too."
    ),
) -> None:
    """Configs set on a topic or broker; --all adds defaults with source and synonyms.
    Sensitive values are always masked."""
    from kctl.broker import configs
    from kctl.broker.client import Admin

    ent = _entity(topic, broker, broker_defaults, entity_type, entity_name, entity_default)
    values = configs.describe(Admin(connection()), ent, include_defaults=all_)
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
    columns = ["name", "value", "source", "sensitive", "read_only"] + (["synonyms"] if all_ else [])
    emit(Output(rows, cols(*columns), doc=doc), output_view())


def _alter(op: str, items: list[str], *where: object) -> None:
    from kctl.broker import configs
    from kctl.broker.client import Admin

    ent = _entity(*where)  # type: ignore[arg-type]
    values = configs.parse_assignments(items, op)
    rows = configs.alter(Admin(connection()), ent, op, values)
    emit(Output(rows, cols("entity", "name", "config", "operation", "value")), output_view())


@app.command(
    "set",
    epilog=example("kctl configs set --topic orders retention.ms=86400000 cleanup.policy=compact"),
)
def set_(
    items: list[str] = typer.Argument(..., help="name=value pairs.", metavar="NAME=VALUE..."),
    topic: str | None = TOPIC,
    broker: int | None = BROKER,
    broker_defaults: bool = DEFAULTS,
    entity_type: str | None = ENTITY_TYPE,
    entity_name: str | None = ENTITY_NAME,
    entity_default: bool = ENTITY_DEFAULT,
) -> None:
    """Set configs (incremental: other configs are left alone)."""
    _alter("set", items, topic, broker, broker_defaults, entity_type, entity_name, entity_default)


@app.command("delete", epilog=example("kctl configs delete --topic orders retention.ms"))
def delete(
    items: list[str] = typer.Argument(..., help="Config names.", metavar="NAME..."),
    topic: str | None = TOPIC,
    broker: int | None = BROKER,
    broker_defaults: bool = DEFAULTS,
    entity_type: str | None = ENTITY_TYPE,
    entity_name: str | None = ENTITY_NAME,
    entity_default: bool = ENTITY_DEFAULT,
) -> None:
    """Remove configs so they fall back to their defaults."""
    _alter(
        "delete", items, topic, broker, broker_defaults, entity_type, entity_name, entity_default
    )


@app.command(
    "append",
    epilog=example("kctl configs append --topic orders leader.replication.throttled.replicas=0:1"),
)
def append(
    items: list[str] = typer.Argument(..., help="name=value pairs.", metavar="NAME=VALUE..."),
    topic: str | None = TOPIC,
    broker: int | None = BROKER,
    broker_defaults: bool = DEFAULTS,
    entity_type: str | None = ENTITY_TYPE,
    entity_name: str | None = ENTITY_NAME,
    entity_default: bool = ENTITY_DEFAULT,
) -> None:
    """Append a value to a list config."""
    _alter(
        "append", items, topic, broker, broker_defaults, entity_type, entity_name, entity_default
    )


@app.command(
    "subtract", epilog=example("kctl configs subtract --topic orders cleanup.policy=delete")
)
def subtract(
    items: list[str] = typer.Argument(..., help="name=value pairs.", metavar="NAME=VALUE..."),
    topic: str | None = TOPIC,
    broker: int | None = BROKER,
    broker_defaults: bool = DEFAULTS,
    entity_type: str | None = ENTITY_TYPE,
    entity_name: str | None = ENTITY_NAME,
    entity_default: bool = ENTITY_DEFAULT,
) -> None:
    """Remove a value from a list config."""
    _alter(
        "subtract", items, topic, broker, broker_defaults, entity_type, entity_name, entity_default
    )
