"""kctl users: sCRAM users: list, describe, set passwords, delete."""

from __future__ import annotations

import typer

app = typer.Typer(help="SCRAM users: list, describe, set passwords, delete.", no_args_is_help=True)
