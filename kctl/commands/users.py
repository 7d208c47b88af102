"""kctl users: SCRAM users: list, describe, set passwords, delete."""

from __future__ import annotations

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
from kctl.parsing import INT32_MAX, INT32_MIN

app = typer.Typer(help="SCRAM users: list, describe, set passwords, delete.", no_args_is_help=True)

_COLS = ("user", "mechanism", "iterations:>")


def _rows(found: list) -> list[dict[str, object]]:
    return [{"user": c.user, "mechanism": c.mechanism, "iterations": c.iterations} for c in found]


@app.command("list", epilog=example("kctl users list", "kctl users list -o name"))
def list_(ctx: typer.Context) -> None:
    """Every user with SCRAM credentials, one row per mechanism (no secrets: Kafka keeps only
    salted hashes and never returns them)."""
    from kctl.broker import users as U
    from kctl.broker.client import Admin

    emit(
        Output(_rows(U.describe(Admin(connection(ctx)), None)), cols(*_COLS), name_key="user"),
        output_view(ctx),
    )


@app.command(
    "describe", epilog=example("kctl users describe alice", "kctl users describe alice bob -o json")
)
def describe(
    ctx: typer.Context, users: list[str] = typer.Argument(..., help="User names.")
) -> None:
    """The SCRAM mechanisms and iteration counts of these users (an unknown user is an error)."""
    from kctl.broker import users as U
    from kctl.broker.client import Admin

    emit(
        Output(_rows(U.describe(Admin(connection(ctx)), list(users))), cols(*_COLS)),
        output_view(ctx),
    )


def _password(value: str | None, path: str | None, user: str) -> tuple[str, bool]:
    """(the password, whether it came on the command line as a literal)."""
    return read_secret(value, path, "--password", f"New password for {user!r}: ")


@app.command(
    "set-password",
    epilog=example(
        "kctl users set-password alice          # asks for it, not echoed",
        "kctl users set-password alice --password-file alice.pw --mechanism SCRAM-SHA-512",
        "kctl users set-password alice --password env:ALICE_PASSWORD",
    ),
)
def set_password(
    ctx: typer.Context,
    user: str = typer.Argument(..., help="The user name (the principal User:NAME)."),
    password: str | None = typer.Option(
        None,
        "--password",
        help="env:VAR or file:PATH (a literal shows in the process list: kctl warns); '-' or "
        "none: asked for on the terminal.",
    ),
    password_file: str | None = typer.Option(
        None,
        "--password-file",
        metavar="FILE",
        help="Read the password from this file (first line).",
    ),
    mechanism: str = typer.Option(
        "SCRAM-SHA-256", "--mechanism", help="SCRAM-SHA-256 or SCRAM-SHA-512."
    ),
    iterations: int = typer.Option(
        8192,
        "--iterations",
        min=INT32_MIN,
        max=INT32_MAX,
        help="PBKDF2 iterations (Kafka takes 4096..16384).",
    ),
) -> None:
    """Create a SCRAM user or change its password. The password is salted and hashed here;
    it is never sent, printed or logged."""
    from kctl.broker import users as U
    from kctl.broker.client import Admin
    from kctl.errors import UsageError

    if not user.strip():
        raise UsageError("empty user name")
    mech = U.mechanism(mechanism)
    if not U.MIN_ITERATIONS <= iterations <= U.MAX_ITERATIONS:
        raise UsageError(
            f"--iterations {iterations} is out of range",
            f"Kafka takes {U.MIN_ITERATIONS}..{U.MAX_ITERATIONS}",
        )
    secret, literal = _password(password, password_file, user)
    if literal:
        note(
            "kctl: warning: --password on the command line shows in the process list: "
            "--password-file PATH, --password env:VAR or no value (a prompt) keep it out"
        )
    U.set_password(Admin(connection(ctx)), user, mech, secret, iterations)
    note(f"{mech} credentials of {user!r} set")
    emit(Output([{"user": user, "mechanism": mech, "iterations": iterations}], cols(*_COLS)),
         output_view(ctx))  # fmt: skip


@app.command(
    "delete",
    epilog=example(
        "kctl users delete alice --yes", "kctl users delete alice --mechanism SCRAM-SHA-512"
    ),
)
def delete(
    ctx: typer.Context,
    user: str = typer.Argument(..., help="The user name."),
    mechanism: list[str] = typer.Option(
        [], "--mechanism", help="Only this mechanism's credentials (default: all the user has)."
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete a user's SCRAM credentials: it can no longer log in with SCRAM."""
    from kctl.broker import users as U
    from kctl.broker.client import Admin

    admin = Admin(connection(ctx))
    has = [c.mechanism for c in U.describe(admin, [user])]
    mechs = [U.mechanism(m) for m in mechanism] or has
    missing = [m for m in mechs if m not in has]
    if missing:
        from kctl.errors import NotFoundError

        raise NotFoundError(
            f"user {user!r} has no {missing[0]} credentials", f"it has {', '.join(has)}"
        )
    confirm(f"Delete {', '.join(mechs)} credentials of {user!r}?", yes=yes, action="delete a user")
    U.delete(admin, user, mechs)
    note(f"{', '.join(mechs)} credentials of {user!r} deleted")
    emit(Output([{"user": user, "mechanism": m} for m in mechs], cols("user", "mechanism")),
         output_view(ctx))  # fmt: skip
