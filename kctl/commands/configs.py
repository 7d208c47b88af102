"""kctl configs: describe and incrementally alter topic and broker configs (kafka-configs.sh)."""

from __future__ import annotations

import typer

from kctl.commands._common import example
from kctl.formatters import Output, cols, emit

app = typer.Typer(help="Describe and change topic and broker configs.", no_args_is_help=True)

TOPIC = typer.Option(None, "--topic", "-t", help="A topic.")
BROKER = typer.Option(None, "--broker", help="A broker id.")
DEFAULTS = typer.Option(False, "--broker-defaults", help="The cluster-wide broker defaults.")


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
    all_: bool = typer.Option(
        False, "--all", help="Every config with its source and synonyms, defaults too."
    ),
) -> None:
    """Configs set on a topic or broker; --all adds defaults with source and synonyms.
    Sensitive values are always masked."""
    from kctl.kafka import configs
    from kctl.kafka.client import Admin

    ent = configs.entity(topic, broker, broker_defaults)
    values = configs.describe(Admin(), ent, include_defaults=all_)
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
    emit(Output(rows, cols(*columns), doc=doc))


def _alter(
    op: str, items: list[str], topic: str | None, broker: int | None, broker_defaults: bool
) -> None:
    from kctl.kafka import configs
    from kctl.kafka.client import Admin

    ent = configs.entity(topic, broker, broker_defaults)
    values = configs.parse_assignments(items, op)
    rows = configs.alter(Admin(), ent, op, values)
    emit(Output(rows, cols("entity", "name", "config", "operation", "value")))


@app.command(
    "set",
    epilog=example("kctl configs set --topic orders retention.ms=86400000 cleanup.policy=compact"),
)
def set_(
    items: list[str] = typer.Argument(..., help="name=value pairs.", metavar="NAME=VALUE..."),
    topic: str | None = TOPIC,
    broker: int | None = BROKER,
    broker_defaults: bool = DEFAULTS,
) -> None:
    """Set configs (incremental: other configs are left alone)."""
    _alter("set", items, topic, broker, broker_defaults)


@app.command("delete", epilog=example("kctl configs delete --topic orders retention.ms"))
def delete(
    items: list[str] = typer.Argument(..., help="Config names.", metavar="NAME..."),
    topic: str | None = TOPIC,
    broker: int | None = BROKER,
    broker_defaults: bool = DEFAULTS,
) -> None:
    """Remove configs so they fall back to their defaults."""
    _alter("delete", items, topic, broker, broker_defaults)


@app.command(
    "append",
    epilog=example("kctl configs append --topic orders leader.replication.throttled.replicas=0:1"),
)
def append(
    items: list[str] = typer.Argument(..., help="name=value pairs.", metavar="NAME=VALUE..."),
    topic: str | None = TOPIC,
    broker: int | None = BROKER,
    broker_defaults: bool = DEFAULTS,
) -> None:
    """Append a value to a list config."""
    _alter("append", items, topic, broker, broker_defaults)


@app.command(
    "subtract", epilog=example("kctl configs subtract --topic orders cleanup.policy=delete")
)
def subtract(
    items: list[str] = typer.Argument(..., help="name=value pairs.", metavar="NAME=VALUE..."),
    topic: str | None = TOPIC,
    broker: int | None = BROKER,
    broker_defaults: bool = DEFAULTS,
) -> None:
    """Remove a value from a list config."""
    _alter("subtract", items, topic, broker, broker_defaults)
