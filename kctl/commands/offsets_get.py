"""kctl offsets get: earliest / latest / for-a-time offsets per partition (kafka-get-offsets.sh).

Attached to the ``offsets`` app by kctl.cli: ``offsets.app.command("get", epilog=EPILOG)``.
"""

from __future__ import annotations

import typer

from kctl.commands._common import connection, example, output_view
from kctl.commands._complete import topic_names

EPILOG = example(
    "kctl offsets get orders",
    "kctl offsets get orders payments --time 2024-05-01T00:00:00Z -o json",
    "kctl offsets get orders --partition 0 --isolation read_committed",
)


def offsets_get(
    topics: list[str] = typer.Argument(..., help="Topics.", autocompletion=topic_names),
    partition: list[int] = typer.Option(
        [], "--partition", help="Only this partition (repeatable)."
    ),
    at_time: str | None = typer.Option(
        None, "--time", help="Also the first offset at or after this time (ISO-8601 or @EPOCH_MS)."
    ),
    isolation: str = typer.Option(
        "read_uncommitted",
        "--isolation",
        help="read_committed: latest is the last stable offset.",
    ),
) -> None:
    """Per partition: earliest (log start) and latest (log end) offsets, the record count
    between them, and with --time the offset for that time; a totals row."""
    from kctl.broker import offsets
    from kctl.broker.client import Admin
    from kctl.errors import UsageError
    from kctl.formatters import Output, cols, emit

    if isolation not in ("read_committed", "read_uncommitted"):
        raise UsageError(f"unknown --isolation {isolation!r}", "read_committed|read_uncommitted")
    when = offsets.parse_time(at_time) if at_time is not None else None
    result = offsets.get_offsets(
        Admin(connection()),
        list(dict.fromkeys(topics)),
        partitions=list(partition) or None,
        at_time=when,
        read_committed=isolation == "read_committed",
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
    doc = {"partitions": rows, "total_records": totals["records"]}
    if when is not None:
        doc["time_ms"] = when
    emit(Output(rows, cols(*columns), doc=doc, footer=[totals]), output_view())
