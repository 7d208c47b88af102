"""kctl profile: named connections in a YAML file (list, show, use, add, delete)."""

from __future__ import annotations

import typer

from kctl.commands._common import confirm, example, note, output_view
from kctl.commands._complete import profile_names
from kctl.formatters import Output, cols, emit

app = typer.Typer(
    help="Named connection profiles: list, show, use, add, delete.", no_args_is_help=True
)


@app.command("list", epilog=example("kctl profile list"))
def list_() -> None:
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
        output_view(),
    )


@app.command("show", epilog=example("kctl profile show prod", "kctl profile show -o json"))
def show(
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
    emit(Output(rows, cols("key", "value"), doc=data), output_view())


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

    pfile = config.load(must_exist=True)
    pfile.get(name)
    pfile.current = name
    pfile.save()
    note(f"current profile: {name}")


@app.command(
    "add",
    epilog=example(
        "kctl profile add local -b 127.0.0.1:9092 --use",
        "kctl profile add prod -b kafka-1:9093 --security-protocol SASL_SSL "
        "--sasl-mechanism SCRAM-SHA-512 "
        "--sasl-username ops --sasl-password env:KAFKA_PASSWORD --ca-file /etc/kafka/ca.pem",
    ),
)
def add(
    name: str = typer.Argument(..., help="Profile name."),
    security_protocol: str = typer.Option(
        "PLAINTEXT", "--security-protocol", help="PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL."
    ),
    sasl_mechanism: str | None = typer.Option(
        None, "--sasl-mechanism", help="PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER."
    ),
    sasl_username: str | None = typer.Option(None, "--sasl-username"),
    sasl_password: str | None = typer.Option(
        None, "--sasl-password", help="Best as a reference: env:VAR or file:PATH."
    ),
    ca_file: str | None = typer.Option(None, "--ca-file", help="PEM CA bundle."),
    cert_file: str | None = typer.Option(None, "--cert-file", help="PEM client certificate."),
    key_file: str | None = typer.Option(None, "--key-file", help="PEM client key."),
    key_password: str | None = typer.Option(None, "--key-password", help="env:VAR or file:PATH."),
    no_verify_hostname: bool = typer.Option(
        False, "--no-verify-hostname", help="Skip TLS hostname checks."
    ),
    use_it: bool = typer.Option(False, "--use", help="Also make it the current profile."),
    force: bool = typer.Option(False, "--force", help="Replace an existing profile of that name."),
) -> None:
    """Add a profile. Bootstrap servers come from the global -b, client overrides from -X."""
    from kctl import config, settings
    from kctl.broker.connect import parse_override
    from kctl.errors import ConfigError

    s = settings.current()
    pfile = config.load()
    if name in pfile.profiles and not force:
        raise ConfigError(f"profile {name!r} already exists", "use --force to replace it")
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
    profile = config.profile_from_dict(name, data, "the command line")
    for secret in (sasl_password, key_password):
        if secret and not config.is_reference(secret):
            note(
                "kctl: warning: a literal secret is stored in the profile file (mode 0600); "
                "env:VAR or file:PATH keeps it out"
            )
    pfile.profiles[name] = profile
    if use_it or pfile.current is None:
        pfile.current = name
    pfile.save()
    note(f"profile {name!r} saved to {pfile.path}")


@app.command("delete", epilog=example("kctl profile delete old-cluster --yes"))
def delete(
    name: str = typer.Argument(..., help="Profile to delete.", autocompletion=profile_names),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete a profile."""
    from kctl import config

    pfile = config.load(must_exist=True)
    pfile.get(name)
    confirm(f"Delete profile {name!r}?", yes=yes, action="delete a profile")
    del pfile.profiles[name]
    if pfile.current == name:
        pfile.current = None
    pfile.save()
    note(f"profile {name!r} deleted")
