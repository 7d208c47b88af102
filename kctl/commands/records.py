"""kctl records: delete records before an offset (kafka-delete-records.sh)."""

from __future__ import annotations

import typer

from kctl.commands._common import confirm, connection, example, note, output_view
from kctl.commands._complete import topic_names

app = typer.Typer(help="Delete records at the start of partitions.", no_args_is_help=True)


@app.command(
    "delete",
    epilog=example(
        "kctl records delete orders --before 1000 --yes",
        "kctl records delete orders --before 0:500 --before 3:42",
        "kctl records delete --offsets-json delete.json --yes",
    ),
)
def delete(
    ctx: typer.Context,
    topic: str | None = typer.Argument(
        None, help="Topic (not needed with --offsets-json).", autocompletion=topic_names
    ),
    before: list[str] = typer.Option(
        [],
        "--before",
        help="Delete records before OFFSET in every partition, or P:OFFSET for one partition "
        "(repeatable; -1 means up to the high watermark).",
    ),
    offsets_json: str | None = typer.Option(
        None,
        "--offsets-json",
        "--offset-json-file",
        metavar="FILE",
        help="kafka-delete-records.sh's JSON file of partitions/offsets.",
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete records (DeleteRecords): shows the plan, asks unless --yes, then reports the
    new low watermark of each partition."""
    from kctl import parsing
    from kctl.broker import offsets
    from kctl.broker.client import Admin
    from kctl.errors import UsageError
    from kctl.formatters import Output, cols, emit

    if offsets_json is not None and (before or topic):
        raise UsageError("--offsets-json replaces TOPIC and --before")
    if offsets_json is None and (not topic or not before):
        raise UsageError("give TOPIC with --before, or --offsets-json FILE")
    # Everything typed is checked before anything is sent.
    if offsets_json is not None:
        from kctl.inputs import OFFSETS, read_input

        text = read_input(offsets_json, "--offsets-json", OFFSETS)
        plan = parsing.delete_records_json(text, offsets_json)
    else:
        everywhere, per = parsing.before_offsets(before)
    admin = Admin(connection(ctx))
    if offsets_json is not None:
        for t in sorted({t for t, _ in plan}):
            wanted = sorted(p for tt, p in plan if tt == t)
            offsets.partitions_of(admin, [t], wanted)
    else:
        assert topic is not None
        tps = offsets.partitions_of(admin, [topic], sorted(per) if everywhere is None else None)
        if per:
            offsets.partitions_of(admin, [topic], sorted(per))
        plan = {(t, p): per.get(p, everywhere) for t, p in tps}  # type: ignore[misc]
    if not plan:
        raise UsageError("nothing to delete", "the plan is empty")
    low = offsets.list_offsets(admin, list(plan), "earliest")
    high = offsets.list_offsets(admin, list(plan), "latest")
    offsets.refuse_past_end(plan, high)
    note("plan: delete records before")
    for (t, p), off in plan.items():
        target = high[(t, p)] if off == -1 else off
        note(f"  {t}[{p}]: offset {target} (now {low[(t, p)]}..{high[(t, p)]})")
    confirm(f"Delete records in {len(plan)} partition(s)?", yes=yes, action="delete records")
    result = offsets.delete_records(admin, plan)
    rows = [
        {
            "topic": t,
            "partition": p,
            "before": plan[(t, p)],
            "previous_low_watermark": low[(t, p)],
            "low_watermark": result[(t, p)],
        }
        for t, p in plan
    ]
    emit(
        Output(
            rows,
            cols("topic", "partition:>", "before:>", "previous_low_watermark:>", "low_watermark:>"),
        ),
        output_view(ctx),
    )
