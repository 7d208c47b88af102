"""kctl features: feature levels (metadata.version and others): describe, upgrade, downgrade."""

from __future__ import annotations

import typer

app = typer.Typer(
    help="Feature levels (metadata.version and others): describe, upgrade, downgrade.",
    no_args_is_help=True,
)
