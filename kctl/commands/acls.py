"""kctl acls: aCLs: list, add and remove who may do what (kafka-acls.sh)."""

from __future__ import annotations

import typer

app = typer.Typer(
    help="ACLs: list, add and remove who may do what (kafka-acls.sh).", no_args_is_help=True
)
