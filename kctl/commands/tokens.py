"""kctl tokens: delegation tokens: create, renew, expire, describe."""

from __future__ import annotations

import typer

app = typer.Typer(help="Delegation tokens: create, renew, expire, describe.", no_args_is_help=True)
