"""kctl tokens: delegation tokens (kafka-delegation-tokens.sh): create, describe, renew,
expire. They need a SASL login (not a token) and brokers with delegation.token.secret.key."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

import typer

from kctl.commands._common import (
    confirm,
    connection,
    example,
    note,
    output_view,
    read_secret,
)
from kctl.formatters import Output, cols, emit

app = typer.Typer(
    help="Delegation tokens: create, describe, renew, expire (kafka-delegation-tokens.sh).",
    no_args_is_help=True,
)

_COLS = ("token_id", "hmac", "owner", "renewers", "issued", "expires", "max_lifetime")


def _when(ms: int) -> str:
    return (
        datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    )


def _row(t: Any, hmac: str | None) -> dict[str, object]:
    return {
        "token_id": t.token_id,
        "hmac": hmac,
        "owner": t.owner,
        "requester": t.requester,
        "renewers": ",".join(t.renewers),
        "issued": _when(t.issued_ms),
        "expires": _when(t.expiry_ms),
        "max_lifetime": _when(t.max_ms),
        "issued_ms": t.issued_ms,
        "expiry_ms": t.expiry_ms,
        "max_ms": t.max_ms,
    }


def _hmac(value: str | None, path: str | None) -> str:
    secret, literal = read_secret(value, path, "--hmac", "Token HMAC: ")
    if literal:
        note(
            "kctl: warning: --hmac on the command line shows in the process list: "
            "--hmac-file PATH, --hmac env:VAR or no value (a prompt) keep it out"
        )
    return secret


def _write_private(path: str, text: str) -> None:
    """``text`` into a new file only its owner may read (an existing file is refused)."""
    from kctl.errors import KctlError

    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise KctlError(f"cannot write {path}", exc.strerror or str(exc)) from None
    with os.fdopen(fd, "w") as f:
        f.write(text + "\n")


@app.command(
    "create",
    epilog=example(
        "kctl tokens create --hmac-file token.hmac",
        "kctl tokens create --renewer-principal User:ops --max-life-time-period 86400000 -o json",
    ),
)
def create(
    ctx: typer.Context,
    renewers: list[str] = typer.Option(
        [], "--renewer-principal", help="TYPE:NAME who may renew it (repeatable)."
    ),
    owner: str | None = typer.Option(
        None, "--owner-principal", help="Create it for this TYPE:NAME (default: yourself)."
    ),
    max_lifetime_ms: int = typer.Option(
        -1,
        "--max-life-time-period",
        help="Maximum lifetime in ms (-1: the broker's delegation.token.max.lifetime.ms).",
    ),
    hmac_file: str | None = typer.Option(
        None,
        "--hmac-file",
        metavar="FILE",
        help="Write the HMAC (the token's secret) to this new file, mode 0600, instead of "
        "printing it.",
    ),
) -> None:
    """Create a delegation token for the principal logged in (or --owner-principal). Its HMAC
    is the secret a client logs in with (SCRAM: username = token id, password = HMAC,
    tokenauth=true): printed unless --hmac-file."""
    from kctl.broker import tokens as T
    from kctl.broker.client import Admin

    for p in [*renewers, *([owner] if owner else [])]:
        T.principal(p)
    token = T.create(Admin(connection(ctx)), renewers, owner, max_lifetime_ms)
    shown = token.hmac
    if hmac_file is not None:
        _write_private(hmac_file, token.hmac)
        shown = f"file:{hmac_file}"
        note(f"token {token.token_id} created; its HMAC is in {hmac_file}")
    else:
        note(f"token {token.token_id} created; its HMAC is a secret: keep it like a password")
    emit(Output([_row(token, shown)], cols(*_COLS)), output_view(ctx))


@app.command(
    "describe",
    epilog=example(
        "kctl tokens describe", "kctl tokens describe --owner-principal User:alice -o json"
    ),
)
def describe(
    ctx: typer.Context,
    owners: list[str] = typer.Option(
        [], "--owner-principal", help="Only tokens of this TYPE:NAME (repeatable)."
    ),
    show_hmac: bool = typer.Option(
        False, "--show-hmac", help="Show each token's HMAC (its secret; hidden by default)."
    ),
) -> None:
    """The tokens this principal may see: its own, those it may renew, and all with Describe
    on delegation tokens. The HMAC is shown as ******** unless --show-hmac."""
    from kctl.broker import tokens as T
    from kctl.broker.client import Admin
    from kctl.config import MASK

    found = T.describe(Admin(connection(ctx)), owners)
    rows = [_row(t, t.hmac if show_hmac else MASK) for t in found]
    emit(Output(rows, cols(*_COLS), name_key="token_id"), output_view(ctx))


@app.command(
    "renew",
    epilog=example(
        "kctl tokens renew --hmac-file token.hmac",
        "kctl tokens renew --hmac env:TOKEN_HMAC --renew-time-period 3600000",
    ),
)
def renew(
    ctx: typer.Context,
    hmac: str | None = typer.Option(
        None, "--hmac", help="env:VAR or file:PATH ('-' or none: asked for, not echoed)."
    ),
    hmac_file: str | None = typer.Option(
        None, "--hmac-file", metavar="FILE", help="Read the HMAC from a file."
    ),
    period_ms: int = typer.Option(
        -1,
        "--renew-time-period",
        help="Extend by this many ms (-1: the broker's delegation.token.expiry.time.ms), never "
        "past the token's maximum lifetime.",
    ),
) -> None:
    """Renew a token (the owner or a renewer): its new expiry time."""
    from kctl.broker import tokens as T
    from kctl.broker.client import Admin

    expiry = T.renew(Admin(connection(ctx)), _hmac(hmac, hmac_file), period_ms)
    note(f"token renewed: it expires at {_when(expiry)}")
    emit(
        Output([{"expires": _when(expiry), "expiry_ms": expiry}], cols("expires")), output_view(ctx)
    )


@app.command(
    "expire",
    epilog=example(
        "kctl tokens expire --hmac-file token.hmac --yes",
        "kctl tokens expire --hmac-file token.hmac --expiry-time-period 600000",
    ),
)
def expire(
    ctx: typer.Context,
    hmac: str | None = typer.Option(
        None, "--hmac", help="env:VAR or file:PATH ('-' or none: asked for, not echoed)."
    ),
    hmac_file: str | None = typer.Option(
        None, "--hmac-file", metavar="FILE", help="Read the HMAC from a file."
    ),
    period_ms: int = typer.Option(
        -1,
        "--expiry-time-period",
        help="Expire it this many ms from now (-1: at once: clients using it are cut off).",
        min=-1,
        max=2**62,
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask before expiring it now."),
) -> None:
    """Expire a token now (asks unless --yes) or after --expiry-time-period ms."""
    from kctl.broker import tokens as T
    from kctl.broker.client import Admin

    secret = _hmac(hmac, hmac_file)
    if period_ms < 0:
        confirm("Expire this token now?", yes=yes, action="expire a token now")
    expiry = T.expire(Admin(connection(ctx)), secret, period_ms)
    note(f"token expires at {_when(expiry)}" if period_ms >= 0 else "token expired")
    emit(
        Output([{"expires": _when(expiry), "expiry_ms": expiry}], cols("expires")), output_view(ctx)
    )
