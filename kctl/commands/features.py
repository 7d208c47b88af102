"""kctl features: feature levels (metadata.version and others): describe, upgrade, downgrade
(kafka-features.sh)."""

from __future__ import annotations

import typer

from kctl.commands._common import confirm, connection, example, note, output_view
from kctl.formatters import Output, cols, emit

app = typer.Typer(
    help="Feature levels (metadata.version and others): describe, upgrade, downgrade.",
    no_args_is_help=True,
)


@app.command(
    "describe",
    epilog=example("kctl features describe", "kctl features describe -o json"),
)
def describe(ctx: typer.Context) -> None:
    """Every feature with the levels the brokers support and the level the cluster finalized
    (0: off), metadata.version also by release name (kafka-features.sh describe)."""
    from kctl.broker import features as F
    from kctl.broker.client import Admin

    rows = [
        {
            "feature": f.name,
            "supported_min": f.supported_min,
            "supported_max": f.supported_max,
            "finalized_level": f.finalized_level,
            "finalized_version": F.level_name(f.name, f.finalized_level),
            "epoch": f.epoch,
        }
        for f in F.describe(Admin(connection(ctx)))
    ]
    emit(
        Output(
            rows,
            cols("feature", "supported_min:>", "supported_max:>", "finalized_level:>",
                 "finalized_version", "epoch:>"),
        ),
        output_view(ctx),
    )  # fmt: skip


def _wanted(feature: list[str], metadata: str | None) -> dict[str, int]:
    from kctl.broker import features as F
    from kctl.errors import UsageError
    from kctl.parsing import key_value

    wanted: dict[str, int] = {}
    for item in feature:
        name, level = key_value(
            item,
            "--feature",
            form="NAME=LEVEL",
            example="share.version=1",
            strip_key=True,
            value_pattern=r"\s*-?\d+\s*",
        )
        wanted[name] = int(level)
    if metadata is not None:
        wanted[F.METADATA] = F.metadata_level(metadata)
    if not wanted:
        raise UsageError("nothing to change", "give --feature NAME=LEVEL or --metadata VERSION")
    return wanted


def _change(
    ctx: typer.Context,
    feature: list[str],
    metadata: str | None,
    execute: bool,
    downgrade: str | None,
    yes: bool,
) -> None:
    from kctl.broker import features as F
    from kctl.broker.client import Admin

    admin = Admin(connection(ctx))
    changes = F.plan(F.describe(admin), _wanted(feature, metadata), downgrade)
    # The controller validates first (nothing changes), so a change it refuses is neither
    # confirmed nor shown as a plan: the error line says why, stdout stays empty.
    results = F.apply(admin, changes, validate_only=True)
    refused = F.refusal(changes, results, execute=False)
    if refused is not None:
        raise refused
    if execute:
        if downgrade is not None:
            what = ", ".join(f"{c.feature} {c.current}->{c.target}" for c in changes)
            confirm(f"Downgrade {what}?", yes=yes, action="downgrade features")
        results = F.apply(admin, changes, validate_only=False)
        refused = F.refusal(changes, results, execute=True)
        if refused is not None:
            raise refused
    emit(Output(F.rows(changes, results), cols("feature", "from", "to", "change", "result")),
         output_view(ctx))  # fmt: skip
    if not execute:
        note("plan only (the controller validated it), nothing changed: add --execute")


@app.command(
    "upgrade",
    epilog=example(
        "kctl features upgrade --metadata 4.3",
        "kctl features upgrade --feature share.version=1 --execute",
    ),
)
def upgrade(
    ctx: typer.Context,
    feature: list[str] = typer.Option(
        [], "--feature", help="NAME=LEVEL to upgrade to (repeatable)."
    ),
    metadata: str | None = typer.Option(
        None,
        "--metadata",
        help="metadata.version to upgrade to: a release (4.3, 4.3-IV0) or level.",
    ),
    execute: bool = typer.Option(
        False, "--execute", help="Do it (default: the plan, validated by the controller)."
    ),
) -> None:
    """Raise feature levels: the plan first (validated by the controller without changing
    anything, as kafka-features.sh --dry-run), --execute to apply."""
    _change(ctx, feature, metadata, execute, None, True)


@app.command(
    "downgrade",
    epilog=example(
        "kctl features downgrade --feature share.version=0",
        "kctl features downgrade --feature share.version=0 --execute --yes",
    ),
)
def downgrade(
    ctx: typer.Context,
    feature: list[str] = typer.Option(
        [], "--feature", help="NAME=LEVEL to downgrade to (repeatable; 0 turns it off)."
    ),
    metadata: str | None = typer.Option(
        None, "--metadata", help="metadata.version to downgrade to: a release or level."
    ),
    unsafe: bool = typer.Option(
        False, "--unsafe", help="Allow a downgrade that may lose metadata (UNSAFE_DOWNGRADE)."
    ),
    execute: bool = typer.Option(
        False, "--execute", help="Do it (default: the plan, validated by the controller)."
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Lower feature levels: the plan first (validated by the controller), --execute (and a
    confirmation or --yes) to apply."""
    _change(ctx, feature, metadata, execute, "unsafe" if unsafe else "safe", yes)
