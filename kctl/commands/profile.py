"""kctl profile: named connections in a YAML file (list, show, use, add, delete)."""

from __future__ import annotations

import typer
from typer.core import TyperCommand

from kctl.commands._common import (
    confirm,
    environment,
    example,
    note,
    output_view,
    read_hidden,
    secret_from_file,
)
from kctl.commands._complete import profile_names
from kctl.formatters import Output, cols, emit

app = typer.Typer(
    help="Named connection profiles: list, show, use, add, delete.", no_args_is_help=True
)


@app.command("list", epilog=example("kctl profile list"))
def list_(ctx: typer.Context) -> None:
    """Profiles in the profile file; the current one is marked."""
    from kctl import config

    pfile = config.load()
    rows = [
        {
            "name": p.name,
            "current": p.name == pfile.current,
            "bootstrap_servers": p.bootstrap_servers,
            "security_protocol": p.security_protocol,
            "sasl_mechanism": p.sasl.mechanism if p.sasl else None,
        }
        for p in sorted(pfile.profiles.values(), key=lambda p: p.name)
    ]
    emit(
        Output(
            rows,
            cols("name", "current", "bootstrap_servers", "security_protocol", "sasl_mechanism"),
        ),
        output_view(ctx),
    )


@app.command("show", epilog=example("kctl profile show prod", "kctl profile show -o json"))
def show(
    ctx: typer.Context,
    name: str | None = typer.Argument(
        None, help="Profile (default: the current one).", autocompletion=profile_names
    ),
) -> None:
    """One profile, secrets masked (references such as env:VAR are shown)."""
    from kctl import config
    from kctl.errors import NotFoundError

    pfile = config.load()
    chosen = name or pfile.current
    if not chosen:
        raise NotFoundError("no current profile", f"add one with 'kctl profile add' ({pfile.path})")
    data = {"name": chosen, "current": chosen == pfile.current, **config.masked(pfile.get(chosen))}
    rows = [{"key": k, "value": v} for k, v in _flatten(data)]
    emit(Output(rows, cols("key", "value"), doc=data), output_view(ctx))


def _flatten(data: dict, prefix: str = "") -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for key, value in data.items():
        if isinstance(value, dict):
            out += _flatten(value, f"{prefix}{key}.")
        else:
            out.append((f"{prefix}{key}", value))
    return out


@app.command("use", epilog=example("kctl profile use prod"))
def use(
    name: str = typer.Argument(..., help="Profile to make current.", autocompletion=profile_names),
) -> None:
    """Make a profile the current one."""
    from kctl import config

    with config.edit(must_exist=True) as pfile:
        pfile.get(name)
        pfile.current = name
    note(f"current profile: {name}")


PROMPT = "-"  # --sasl-password - (or no value): read it from the terminal
_PROMPTING = ("--sasl-password", "--key-password")


class _OptionalPasswordCommand(TyperCommand):
    """``--sasl-password`` or ``--key-password`` with no value (last, or followed by another
    option of the command) means ``... -``: ask for it on the terminal."""

    def parse_args(self, ctx, args):  # type: ignore[no-untyped-def]
        options = {o: p for p in self.get_params(ctx) for o in (*p.opts, *p.secondary_opts)}
        fixed: list[str] = []
        i = 0
        while i < len(args):
            arg = args[i]
            fixed.append(arg)
            i += 1
            if arg == "--":
                fixed += args[i:]
                break
            param = options.get(arg)
            if param is None or getattr(param, "is_flag", False):
                continue
            if i == len(args) or args[i] in options or args[i] == "--":
                if arg in _PROMPTING:
                    fixed.append(PROMPT)
                continue
            fixed.append(args[i])  # the option's value
            i += 1
        return super().parse_args(ctx, fixed)


def check_name(name: str) -> str:
    """A profile name: not empty, not only whitespace, no control characters."""
    from kctl.errors import UsageError

    if not name.strip():
        raise UsageError("empty profile name", "give a name such as prod or local")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        raise UsageError(
            f"profile name {name.encode('unicode_escape').decode()!r} has control characters",
            "use letters, digits, '-', '_' or '.'",
        )
    return name


@app.command(
    "add",
    cls=_OptionalPasswordCommand,
    epilog=example(
        "kctl profile add local -b 127.0.0.1:9092 --use",
        "kctl profile add prod -b kafka-1:9093 --security-protocol SASL_SSL "
        "--sasl-mechanism SCRAM-SHA-512 "
        "--sasl-username ops --sasl-password env:KAFKA_PASSWORD --ca-file /etc/kafka/ca.pem",
        "kctl profile add prod -b kafka-1:9093 --security-protocol SASL_SSL "
        "--sasl-username ops --sasl-password   # asks for it, not echoed",
        "kctl profile add prod -b kafka-1:9093 --schema-registry https://registry:8081 "
        "--registry-user-info env:SR_USER_INFO",
    ),
)
def add(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="Profile name."),
    security_protocol: str = typer.Option(
        "PLAINTEXT", "--security-protocol", help="PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL."
    ),
    sasl_mechanism: str | None = typer.Option(
        None, "--sasl-mechanism", help="PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER."
    ),
    sasl_username: str | None = typer.Option(None, "--sasl-username"),
    sasl_password: str | None = typer.Option(
        None,
        "--sasl-password",
        help="Best as a reference: env:VAR or file:PATH. '-' or no value: ask for it on the "
        "terminal (not echoed). A literal value here shows in the process list.",
    ),
    sasl_password_file: str | None = typer.Option(
        None,
        "--sasl-password-file",
        metavar="FILE",
        help="Read the SASL password from this file (its content, the final newline removed).",
    ),
    ca_file: str | None = typer.Option(None, "--ca-file", help="PEM CA bundle."),
    cert_file: str | None = typer.Option(None, "--cert-file", help="PEM client certificate."),
    key_file: str | None = typer.Option(None, "--key-file", help="PEM client key."),
    key_password: str | None = typer.Option(
        None,
        "--key-password",
        help="The client key's password; best as env:VAR or file:PATH. '-' or no value: ask "
        "for it on the terminal (not echoed).",
    ),
    key_password_file: str | None = typer.Option(
        None,
        "--key-password-file",
        metavar="FILE",
        help="Read the client key's password from this file (the final newline removed).",
    ),
    no_verify_hostname: bool = typer.Option(
        False, "--no-verify-hostname", help="Skip TLS hostname checks."
    ),
    registry_user_info: str | None = typer.Option(
        None,
        "--registry-user-info",
        metavar="USER:PASSWORD",
        help="The Schema Registry's basic auth (with the global --schema-registry URL); best "
        "as env:VAR or file:PATH.",
    ),
    registry_ca_file: str | None = typer.Option(
        None, "--registry-ca-file", help="PEM CA bundle of the Schema Registry."
    ),
    registry_cert_file: str | None = typer.Option(
        None, "--registry-cert-file", help="PEM client certificate for the Schema Registry."
    ),
    registry_key_file: str | None = typer.Option(
        None, "--registry-key-file", help="PEM client key for the Schema Registry."
    ),
    use_it: bool = typer.Option(False, "--use", help="Also make it the current profile."),
    force: bool = typer.Option(False, "--force", help="Replace an existing profile of that name."),
) -> None:
    """Add a profile. Bootstrap servers come from the global -b, client overrides from -X, the
    Schema Registry's URL from the global --schema-registry."""
    from kctl import config
    from kctl.broker.connect import parse_override
    from kctl.errors import ConfigError, UsageError

    check_name(name)
    if sasl_password is not None and sasl_password_file is not None:
        raise UsageError("give the SASL password once: --sasl-password or --sasl-password-file")
    if key_password is not None and key_password_file is not None:
        raise UsageError("give the key password once: --key-password or --key-password-file")
    s = environment(ctx)
    if name in config.load().profiles and not force:  # before asking for a password
        raise ConfigError(f"profile {name!r} already exists", "use --force to replace it")
    password_in_argv = sasl_password not in (None, PROMPT)
    if sasl_password == PROMPT:
        sasl_password = read_hidden(f"SASL password for profile {name!r}: ")
    elif sasl_password_file is not None:
        sasl_password = secret_from_file(sasl_password_file)
    if sasl_password is not None and not sasl_password:
        raise UsageError("empty SASL password", "nothing was saved")
    key_in_argv = key_password not in (None, PROMPT)
    if key_password == PROMPT:
        key_password = read_hidden(f"Key password for profile {name!r}: ", "--key-password")
    elif key_password_file is not None:
        key_password = secret_from_file(key_password_file, "--key-password-file")
    if key_password is not None and not key_password:
        raise UsageError("empty key password", "nothing was saved")
    data: dict = {"bootstrap_servers": s.bootstrap_servers, "security_protocol": security_protocol}
    if sasl_mechanism or sasl_username or sasl_password:
        data["sasl"] = {
            "mechanism": sasl_mechanism or "PLAIN",
            "username": sasl_username,
            "password": sasl_password,
        }
    if ca_file or cert_file or key_file or key_password or no_verify_hostname:
        data["tls"] = {
            "ca_file": ca_file,
            "cert_file": cert_file,
            "key_file": key_file,
            "key_password": key_password,
            "verify_hostname": not no_verify_hostname,
        }
    data["client"] = dict(parse_override(item) for item in s.overrides)
    registry_extras = (registry_user_info, registry_ca_file, registry_cert_file, registry_key_file)
    if s.schema_registry:
        data["schema_registry"] = {
            "url": s.schema_registry,
            "basic_auth_user_info": registry_user_info,
            "ca_file": registry_ca_file,
            "cert_file": registry_cert_file,
            "key_file": registry_key_file,
        }
    elif any(v is not None for v in registry_extras):
        raise UsageError(
            "--registry-* options need the Schema Registry's URL",
            "give it with --schema-registry URL",
        )
    profile = config.profile_from_dict(name, data, "the command line")
    literal = (
        bool(sasl_password and not config.is_reference(sasl_password))
        or bool(key_password and not config.is_reference(key_password))
        or bool(registry_user_info and not config.is_reference(registry_user_info))
    )
    in_argv = []
    if password_in_argv and not config.is_reference(sasl_password or ""):
        in_argv.append(
            "--sasl-password on the command line shows in the process list: "
            "--sasl-password - asks for it, --sasl-password-file PATH reads it"
        )
    if key_in_argv and not config.is_reference(key_password or ""):
        in_argv.append(
            "--key-password on the command line shows in the process list: "
            "--key-password - asks for it, --key-password-file PATH reads it"
        )
    with config.edit() as pfile:
        if name in pfile.profiles and not force:
            raise ConfigError(f"profile {name!r} already exists", "use --force to replace it")
        pfile.profiles[name] = profile
        if use_it or pfile.current is None:
            pfile.current = name
    if literal:
        note(
            "kctl: warning: a literal secret is stored in the profile file (mode 0600); "
            "env:VAR or file:PATH keeps it out" + "".join(f"; {n}" for n in in_argv)
        )
    note(f"profile {name!r} saved to {pfile.path}")


@app.command("delete", epilog=example("kctl profile delete old-cluster --yes"))
def delete(
    name: str = typer.Argument(..., help="Profile to delete.", autocompletion=profile_names),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete a profile."""
    from kctl import config

    config.load(must_exist=True).get(name)
    confirm(f"Delete profile {name!r}?", yes=yes, action="delete a profile")
    with config.edit(must_exist=True) as pfile:
        pfile.get(name)
        del pfile.profiles[name]
        if pfile.current == name:
            pfile.current = None
    note(f"profile {name!r} deleted")
