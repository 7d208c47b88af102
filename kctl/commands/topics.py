"""kctl topics: list, describe, create, delete, add-partitions (kafka-topics.sh)."""

from __future__ import annotations

import typer

from kctl.commands._common import confirm, connection, example, note, one_name, output_view
from kctl.commands._complete import topic_names
from kctl.errors import EXIT_FAILED, KctlError
from kctl.formatters import Output, cols, emit
from kctl.parsing import INT16_MAX, INT32_MAX

app = typer.Typer(
    help="List, describe, create and delete topics; add partitions.", no_args_is_help=True
)

_TOPIC_OPTION_HELP = "A topic, as kafka-topics.sh takes it (same as the argument)."


def _parse_configs(items: list[str]) -> dict[str, str]:
    from kctl.broker.configs import parse_assignments

    return {k: v or "" for k, v in parse_assignments(items, "set").items()} if items else {}


@app.command(
    "list", epilog=example("kctl topics list", "kctl topics list --pattern 'orders\\..*' -o json")
)
def list_(
    ctx: typer.Context,
    internal: bool = typer.Option(
        False, "--internal", help="Include internal topics (names starting '__')."
    ),
    pattern: str | None = typer.Option(
        None, "--pattern", help="Regular expression the whole name must match."
    ),
) -> None:
    """List topics with their partition count and replication factor."""
    from kctl.broker import topic_rows, topics
    from kctl.broker.client import Admin

    states = topics.list_topics(Admin(connection(ctx)), internal=internal, pattern=pattern)
    rows = topic_rows.list_rows(states)
    emit(
        Output(rows, cols("topic", "partitions:>", "replication_factor:>", "internal")),
        output_view(ctx),
    )


@app.command(
    "describe",
    epilog=example(
        "kctl topics describe orders",
        "kctl topics describe --under-replicated -o json",
        "kctl topics describe --unavailable --no-headers -o plain | cut -f1,2",
    ),
)
def describe(
    ctx: typer.Context,
    names: list[str] = typer.Argument(
        None, help="Topics (default: all).", autocompletion=topic_names
    ),
    topic_option: list[str] = typer.Option(
        [], "--topic", help=_TOPIC_OPTION_HELP + " Repeatable.", autocompletion=topic_names
    ),
    internal: bool = typer.Option(
        False, "--internal", help="Include internal topics when listing all."
    ),
    under_replicated: bool = typer.Option(
        False,
        "--under-replicated",
        "--under-replicated-partitions",
        help="Only partitions whose ISR is smaller than the replica set.",
    ),
    under_min_isr: bool = typer.Option(
        False,
        "--under-min-isr",
        "--under-min-isr-partitions",
        help="Only partitions whose ISR is below min.insync.replicas, or without a leader.",
    ),
    at_min_isr: bool = typer.Option(
        False,
        "--at-min-isr",
        "--at-min-isr-partitions",
        help="Only partitions whose ISR equals min.insync.replicas.",
    ),
    unavailable: bool = typer.Option(
        False,
        "--unavailable",
        "--unavailable-partitions",
        help="Only partitions without a live leader.",
    ),
) -> None:
    """Per partition: leader, replicas, ISR, ELR, offline replicas and a reassignment in
    progress; per topic its id and configs not at their default (kafka-topics.sh --describe)."""
    from kctl.broker import topic_rows, topics
    from kctl.broker.client import Admin

    chosen = list(dict.fromkeys([*(names or []), *topic_option]))
    health = topic_rows.Health(under_replicated, under_min_isr, at_min_isr, unavailable)
    view, states = topics.describe_topics(
        Admin(connection(ctx)), chosen, internal=internal, detail=True, health=health
    )
    rows, doc = topic_rows.describe_rows(states, set(view.brokers), health)
    emit(Output(rows, cols(*topic_rows.describe_columns(states)), doc=doc), output_view(ctx))
    failed = topic_rows.failures(states)
    for name, why in failed:
        note(f"kctl: error: {KctlError(f'describing configs of topic {name!r}', why).line()}")
    if failed:
        raise typer.Exit(EXIT_FAILED)


@app.command(
    "create",
    epilog=example(
        "kctl topics create orders --partitions 6 --replication-factor 3 "
        "--config retention.ms=604800000",
        "kctl topics create audit --replica-assignment 1:2,2:3,3:1 --if-not-exists",
    ),
)
def create(
    ctx: typer.Context,
    name: str | None = typer.Argument(None, help="Topic name (or --topic)."),
    topic_option: str | None = typer.Option(None, "--topic", help=_TOPIC_OPTION_HELP),
    partitions: int | None = typer.Option(
        None,
        "--partitions",
        help="Partition count (default: the broker's).",
        min=1,
        max=INT32_MAX,
    ),
    replication_factor: int | None = typer.Option(
        None,
        "--replication-factor",
        help="Replicas per partition (default: the broker's).",
        min=1,
        max=INT16_MAX,
    ),
    config: list[str] = typer.Option([], "--config", help="Topic config name=value (repeatable)."),
    replica_assignment: str | None = typer.Option(
        None,
        "--replica-assignment",
        help="Explicit placement: partitions by ',', brokers by ':' (1:2,2:3).",
    ),
    if_not_exists: bool = typer.Option(
        False, "--if-not-exists", help="Succeed when the topic already exists."
    ),
) -> None:
    """Create a topic; configs are checked against Kafka's topic configs before sending."""
    from kctl.broker import topics
    from kctl.broker.client import Admin
    from kctl.errors import UsageError

    name = one_name(name, topic_option, "topic")
    configs = _parse_configs(config)
    assignment = None
    if replica_assignment is not None:
        if partitions is not None or replication_factor is not None:
            raise UsageError("--replica-assignment replaces --partitions and --replication-factor")
        assignment = topics.parse_replica_assignment(replica_assignment)
    result = topics.create_topic(
        Admin(connection(ctx)),
        name,
        partitions=partitions,
        replication_factor=replication_factor,
        configs=configs,
        assignment=assignment,
        if_not_exists=if_not_exists,
    )
    if result["status"] == "exists":
        note(f"topic {name!r} already exists")
    emit(
        Output([result], cols("topic", "status", "partitions:>", "replication_factor:>")),
        output_view(ctx),
    )


@app.command(
    "delete",
    epilog=example(
        "kctl topics delete orders-tmp --yes", "kctl topics delete --pattern 'load-test-.*'"
    ),
)
def delete(
    ctx: typer.Context,
    names: list[str] = typer.Argument(None, help="Topics to delete.", autocompletion=topic_names),
    topic_option: list[str] = typer.Option(
        [], "--topic", help=_TOPIC_OPTION_HELP + " Repeatable.", autocompletion=topic_names
    ),
    pattern: str | None = typer.Option(
        None, "--pattern", help="Also delete topics whose whole name matches this regex."
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    if_exists: bool = typer.Option(
        False, "--if-exists", help="Named topics that do not exist are not an error."
    ),
    internal: bool = typer.Option(
        False, "--internal", help="Let --pattern match internal topics too."
    ),
) -> None:
    """Delete topics: lists what will go and asks unless --yes."""
    from kctl.broker import topics
    from kctl.broker.client import Admin
    from kctl.errors import UsageError

    names = [*(names or []), *topic_option]
    if not names and pattern is None:
        raise UsageError("name topics to delete, or give --pattern")
    admin = Admin(connection(ctx))
    _, chosen = topics.resolve_names(
        admin, list(names or []), pattern, internal=internal, missing_ok=if_exists
    )
    if not chosen:
        note("no topic matches: nothing to delete")
        emit(Output([], cols("topic", "status")), output_view(ctx))
        return
    note(f"will delete {len(chosen)} topic(s): {', '.join(chosen)}")
    confirm(f"Delete {len(chosen)} topic(s)?", yes=yes, action="delete topics")
    emit(Output(topics.delete_topics(admin, chosen), cols("topic", "status")), output_view(ctx))


@app.command(
    "add-partitions",
    epilog=example("kctl topics add-partitions orders --partitions 12"),
)
def add_partitions(
    ctx: typer.Context,
    name: str | None = typer.Argument(None, help="Topic (or --topic).", autocompletion=topic_names),
    topic_option: str | None = typer.Option(
        None, "--topic", help=_TOPIC_OPTION_HELP, autocompletion=topic_names
    ),
    partitions: int = typer.Option(
        ...,
        "--partitions",
        help="The new total partition count.",
        min=1,
        max=INT32_MAX,
    ),
    replica_assignment: str | None = typer.Option(
        None, "--replica-assignment", help="Placement of the new partitions only (1:2,2:3)."
    ),
) -> None:
    """Raise a topic's partition count (keyed records will map to other partitions afterwards)."""
    from kctl.broker import topics
    from kctl.broker.client import Admin

    name = one_name(name, topic_option, "topic")
    assignment = topics.parse_replica_assignment(replica_assignment) if replica_assignment else None
    result = topics.add_partitions(Admin(connection(ctx)), name, partitions, assignment)
    emit(
        Output([result], cols("topic", "status", "partitions_before:>", "partitions:>")),
        output_view(ctx),
    )
