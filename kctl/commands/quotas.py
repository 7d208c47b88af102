"""kctl quotas: client quotas for users, clients and IPs: describe, set, delete."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from kctl.commands._common import confirm, connection, example, note, output_view
from kctl.formatters import Output, cols, emit

if TYPE_CHECKING:
    from kctl.broker.quotas import Entity

app = typer.Typer(
    help="Client quotas for users, clients and IPs: describe, set, delete.", no_args_is_help=True
)

_USER = typer.Option(None, "--user", help="A user principal's name (alice).")
_USER_DEFAULT = typer.Option(False, "--user-default", help="The default of every user.")
_CLIENT = typer.Option(None, "--client-id", help="A client id.")
_CLIENT_DEFAULT = typer.Option(False, "--client-default", help="The default of every client.")
_IP = typer.Option(None, "--ip", help="A client IP address (connection_creation_rate).")
_IP_DEFAULT = typer.Option(False, "--ip-default", help="The default of every IP.")


def _entity(
    user: str | None, user_default: bool, client: str | None, client_default: bool,
    ip: str | None, ip_default: bool,
) -> Entity:  # fmt: skip
    from kctl.broker import quotas as Q

    return Q.entity(user, user_default, client, client_default, ip, ip_default)


@app.command(
    "describe",
    epilog=example(
        "kctl quotas describe",
        "kctl quotas describe --user alice",
        "kctl quotas describe --user-default --client-id batch -o json",
    ),
)
def describe(
    ctx: typer.Context,
    user: str | None = _USER,
    user_default: bool = _USER_DEFAULT,
    client_id: str | None = _CLIENT,
    client_default: bool = _CLIENT_DEFAULT,
    ip: str | None = _IP,
    ip_default: bool = _IP_DEFAULT,
) -> None:
    """The quotas of one entity, or of every entity that has any (kafka-configs.sh --describe
    --entity-type users|clients|ips)."""
    from kctl.broker import quotas as Q
    from kctl.broker.client import Admin

    ent = _entity(user, user_default, client_id, client_default, ip, ip_default)
    found = Q.describe(Admin(connection(ctx)), ent)
    emit(
        Output(
            [Q.row(q) for q in found],
            cols("entity", *(f"{k}:>" for k in Q.KEYS)),
            doc=[Q.document(q) for q in found],
        ),
        output_view(ctx),
    )


@app.command(
    "set",
    epilog=example(
        "kctl quotas set --user alice producer_byte_rate=1048576 consumer_byte_rate=2097152",
        "kctl quotas set --user-default request_percentage=200",
        "kctl quotas set --ip 10.0.0.7 connection_creation_rate=10",
    ),
)
def set_(
    ctx: typer.Context,
    values: list[str] = typer.Argument(..., help="KEY=VALUE quotas to set."),
    user: str | None = _USER,
    user_default: bool = _USER_DEFAULT,
    client_id: str | None = _CLIENT,
    client_default: bool = _CLIENT_DEFAULT,
    ip: str | None = _IP,
    ip_default: bool = _IP_DEFAULT,
    validate_only: bool = typer.Option(
        False, "--validate-only", help="Have the controller check it; change nothing."
    ),
) -> None:
    """Set quotas on an entity: producer_byte_rate, consumer_byte_rate, request_percentage,
    controller_mutation_rate (users, clients, user+client) or connection_creation_rate (IPs)."""
    from kctl.broker import quotas as Q
    from kctl.broker.client import Admin
    from kctl.errors import UsageError

    ent = _entity(user, user_default, client_id, client_default, ip, ip_default)
    if not ent.parts:
        raise UsageError("no entity", "--user, --client-id, --ip or their --*-default")
    parsed = Q.parse_values(values, ent)
    admin = Admin(connection(ctx))
    Q.alter(admin, ent, parsed, [], validate_only=validate_only)
    verb = "valid, nothing changed" if validate_only else "set"
    note(f"quotas of {ent.label()}: {', '.join(parsed)} {verb}")
    rows = [{"entity": ent.label(), "quota": k, "value": v} for k, v in parsed.items()]
    emit(Output(rows, cols("entity", "quota", "value:>")), output_view(ctx))


@app.command(
    "delete",
    epilog=example(
        "kctl quotas delete --user alice producer_byte_rate --yes",
        "kctl quotas delete --client-id batch --all --yes",
    ),
)
def delete(
    ctx: typer.Context,
    keys: list[str] = typer.Argument(None, help="The quotas to remove (or --all)."),
    user: str | None = _USER,
    user_default: bool = _USER_DEFAULT,
    client_id: str | None = _CLIENT,
    client_default: bool = _CLIENT_DEFAULT,
    ip: str | None = _IP,
    ip_default: bool = _IP_DEFAULT,
    all_: bool = typer.Option(False, "--all", help="Every quota the entity has."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Remove quotas from an entity (it falls back to the defaults)."""
    from kctl.broker import quotas as Q
    from kctl.broker.client import Admin
    from kctl.errors import UsageError

    ent = _entity(user, user_default, client_id, client_default, ip, ip_default)
    if not ent.parts:
        raise UsageError("no entity", "--user, --client-id, --ip or their --*-default")
    admin = Admin(connection(ctx))
    if all_:
        if keys:
            raise UsageError("give quota names or --all, not both")
        found = Q.describe(admin, ent)
        names = sorted(found[0].values) if found else []
    else:
        if not keys:
            raise UsageError("no quota to delete", "name them, or --all")
        names = Q.check_keys(list(keys), ent)
        Q.refuse_absent(names, Q.describe(admin, ent), ent)
    if not names:
        note(f"{ent.label()} has no quota: nothing to delete")
        emit(Output([], cols("entity", "quota")), output_view(ctx))
        return
    confirm(f"Delete {', '.join(names)} of {ent.label()}?", yes=yes, action="delete quotas")
    Q.alter(admin, ent, {}, names, validate_only=False)
    note(f"quotas of {ent.label()}: {', '.join(names)} deleted")
    emit(Output([{"entity": ent.label(), "quota": n} for n in names], cols("entity", "quota")),
         output_view(ctx))  # fmt: skip
