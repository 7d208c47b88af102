"""kctl quorum: the KRaft controller quorum: describe, add and remove controllers."""

from __future__ import annotations

import typer

app = typer.Typer(
    help="The KRaft controller quorum: describe, add and remove controllers.", no_args_is_help=True
)
