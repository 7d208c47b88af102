"""kctl quotas: client quotas for users, clients and IPs: describe, set, delete."""

from __future__ import annotations

import typer

app = typer.Typer(
    help="Client quotas for users, clients and IPs: describe, set, delete.", no_args_is_help=True
)
