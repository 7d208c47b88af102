"""kctl offsets get: earliest / latest / for-a-time offsets per partition (kafka-get-offsets.sh).

Attached to the ``offsets`` app by kctl.cli: ``offsets.app.command("get", epilog=EPILOG)``.
"""

from __future__ import annotations

import typer

from kctl.commands._common import connection, example, output_view
from kctl.commands._complete import topic_names
from kctl.parsing import INT32_MAX

EPILOG = example(
    "kctl offsets get orders",
    "kctl offsets get 'orders-.*' --time max-timestamp -o json",
    "kctl offsets get orders payments --time 2024-05-01T00:00:00Z -o json",
    "kctl offsets get --topic-partitions 'orders:0-2,payments' --time -2",
    "kctl offsets get orders --partition 0 --isolation read_committed",
)


def offsets_get(
    ctx: typer.Context,
    topics: list[str] = typer.Argument(
        None,
        help="Topics: names or regular expressions matched against whole names "
        "(default: every topic).",
        autocompletion=topic_names,
    ),
    partition: list[int] = typer.Option(
        [],
        "--partition",
        "--partitions",
        min=0,
        max=INT32_MAX,
        help="Only this partition (repeatable).",
    ),
    topic_partitions: str | None = typer.Option(
        None,
        "--topic-partitions",
        help="kafka-get-offsets.sh patterns instead of topics: "
        "TOPIC_REGEX[:P|:LO-HI|:LO-|:-HI],... (HI exclusive).",
        metavar="PATTERNS",
    ),
    exclude_internal: bool = typer.Option(
        False, "--exclude-internal-topics", help="Leave out __consumer_offsets and the like."
    ),
    at_time: str | None = typer.Option(
        None,
        "--time",
        help="Also the offset for this time: ISO-8601, @EPOCH_MS or EPOCH_MS (the first offset "
        "at or after it), or latest/-1, earliest/-2, max-timestamp/-3 (the record with the "
        "largest timestamp), earliest-local/-4, latest-tiered/-5, earliest-pending-upload/-6.",
    ),
    isolation: str = typer.Option(
        "read_uncommitted",
        "--isolation",
        help="read_committed: latest is the last stable offset.",
    ),
) -> None:
    """Per partition: earliest (log start) and latest (log end) offsets, the record count
    between them, and with --time the offset for that time; a totals row."""
    from kctl import parsing
    from kctl.broker import offsets
    from kctl.broker.client import Admin
    from kctl.errors import UsageError
    from kctl.formatters import Output, cols, emit

    if isolation not in ("read_committed", "read_uncommitted"):
        raise UsageError(f"unknown --isolation {isolation!r}", "read_committed|read_uncommitted")
    when = parsing.offset_time(at_time) if at_time is not None else None
    patterns = parsing.topic_partition_patterns(topic_partitions) if topic_partitions else None
    if patterns is not None and (topics or partition):
        raise UsageError("--topic-partitions cannot be used with topics or --partition")
    admin = Admin(connection(ctx))
    md = admin.metadata()
    layout = {name: sorted(t.partitions) for name, t in md.topics.items()}
    if patterns is not None:
        tps = parsing.match_topic_partitions(layout, patterns, exclude_internal=exclude_internal)
        chosen = sorted({t for t, _ in tps})
    else:
        chosen = parsing.select_topics(
            list(layout), topics or [], exclude_internal=exclude_internal
        )
        tps = offsets.partitions_of(admin, chosen, list(partition) or None, md)
    result = offsets.get_offsets(
        admin,
        chosen,
        at_time=when,
        read_committed=isolation == "read_committed",
        tps=tps,
        metadata=md,
    )
    rows = []
    for r in result:
        row = {
            "topic": r.topic,
            "partition": r.partition,
            "earliest": r.earliest,
            "latest": r.latest,
            "records": r.records,
        }
        if when is not None:
            row["offset_at_time"] = r.at_time
        rows.append(row)
    columns = ["topic", "partition:>", "earliest:>", "latest:>", "records:>"]
    if when is not None:
        columns.append("offset_at_time:>")
    totals = {"topic": "TOTAL", "partition": len(rows), "records": sum(r.records for r in result)}
    doc: dict[str, object] = {"partitions": rows, "total_records": totals["records"]}
    if when is not None and when >= 0:
        doc["time_ms"] = when
    elif when is not None:
        doc["time"] = parsing.OFFSET_SPEC_NAMES[when]
    emit(Output(rows, cols(*columns), doc=doc, footer=[totals]), output_view(ctx))
