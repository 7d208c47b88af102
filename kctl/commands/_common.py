"""Small helpers shared by command modules: examples in help, confirmations, stderr notes, the
brokers' answers per partition."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from kctl.errors import Refused

if TYPE_CHECKING:
    from kctl.broker.connect import Connection
    from kctl.config import Profile, SchemaRegistry
    from kctl.environment import Environment
    from kctl.formatters import View
    from kctl.registry.client import RegistryClient


EXECUTE_HELP = "Act on the plan; without it nothing is changed."


def example(*lines: str) -> str:
    """An epilog for --help: every command carries at least one example."""
    body = "\n\n".join(f"  {line}" for line in lines)
    return f"[bold]Examples[/bold]\n\n{body}"


def note(message: str) -> None:
    """A message for people: stderr, never stdout."""
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()


def confirm(question: str, *, yes: bool, action: str) -> None:
    """Go on only with --yes or an interactive 'y'; without a terminal, refuse."""
    if yes:
        return
    if not sys.stdin.isatty():
        raise Refused(f"refusing to {action} without --yes", "stdin is not a terminal")
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    if answer not in ("y", "yes"):
        raise Refused(f"not confirmed: nothing was changed ({action})")


def read_secret(value: str | None, path: str | None, option: str, prompt: str) -> tuple[str, bool]:
    """A secret from ``OPTION`` (``env:VAR``, ``file:PATH``, ``-`` or none: a prompt without
    echo, or a literal) or from ``OPTION-file PATH``: (the secret, whether it was a literal on
    the command line, which the caller warns about)."""
    from kctl import config
    from kctl.errors import UsageError

    if value is not None and path is not None:
        raise UsageError(f"give it once: {option} or {option}-file")
    if path is not None:
        secret, literal = secret_from_file(path, f"{option}-file"), False
    elif value is None or value == "-":
        secret, literal = read_hidden(prompt, option), False
    else:
        literal = not config.is_reference(value)
        secret = config.resolve_secret(value, option) or ""
    if not secret:
        raise UsageError(f"empty {option.lstrip('-')}", "nothing was changed")
    return secret, literal


def environment(ctx: typer.Context) -> Environment:
    """This invocation's :class:`~kctl.environment.Environment`, which the root command put on
    click's context (a sub-command's context hands on its parent's object)."""
    from kctl.environment import Environment

    env = ctx.obj
    if not isinstance(env, Environment):  # a command run without the root callback
        raise TypeError(f"no kctl Environment on the context of {ctx.command_path!r}")
    return env


def connection(ctx: typer.Context) -> Connection:
    """The connection this invocation's global options, environment and profile describe: built
    here, at the command boundary, once, and passed down to every operation explicitly."""
    from kctl.broker.connect import resolve

    return resolve(environment(ctx))


NO_SCHEMA_REGISTRY = (
    "no schema registry (give --schema-registry URL, KCTL_SCHEMA_REGISTRY_URL or a profile's "
    "schema_registry.url)"
)


@dataclass(frozen=True)
class RegistrySettings:
    """The Schema Registry one invocation uses: the base URL of its Confluent API, the
    ``user:password`` of HTTP basic auth (resolved: the secret itself), TLS files, and where the
    URL came from (``--schema-registry``, ``KCTL_SCHEMA_REGISTRY_URL`` or ``profile 'NAME'``)."""

    url: str
    user_info: str | None = None
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    timeout: float = 15.0
    source: str = "--schema-registry"


def _split_user_info(url: str) -> tuple[str, str | None]:
    """``http://user:pass@host/...`` -> (``http://host/...``, ``user:pass``)."""
    from urllib.parse import unquote, urlsplit, urlunsplit

    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    info, _, host = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=host)), unquote(info)


def registry_settings(env: Environment, profile: Profile | None) -> RegistrySettings:
    """Which registry: ``--schema-registry URL`` (its envvar ``KCTL_SCHEMA_REGISTRY_URL``) over
    the profile's ``schema_registry:`` block. An explicit URL uses the profile's credentials and
    TLS files only when it is the profile's own URL (they are never sent to another server); it
    may carry ``user:password@`` itself. A UsageError when none is configured."""
    from kctl.errors import UsageError

    block = profile.schema_registry if profile is not None else None
    where = f"profile {profile.name!r}" if profile is not None else ""
    url = (env.schema_registry or "").strip()
    if url:
        source = (
            "KCTL_SCHEMA_REGISTRY_URL"
            if env.variables.get("KCTL_SCHEMA_REGISTRY_URL", "").strip() == url
            else "--schema-registry"
        )
        if not url.startswith(("http://", "https://")):
            raise UsageError(
                f"{source} {url!r} is not an http:// or https:// URL",
                "such as http://127.0.0.1:8081 (Apicurio: http://HOST:PORT/apis/ccompat/v7)",
            )
        url, user_info = _split_user_info(url)
        if block is not None and block.url.rstrip("/") == url.rstrip("/"):
            return _from_block(block, where, env.timeout, source, user_info)
        return RegistrySettings(url=url, user_info=user_info, timeout=env.timeout, source=source)
    if block is None:
        raise UsageError(NO_SCHEMA_REGISTRY)
    url, user_info = _split_user_info(block.url)
    return _from_block(block, where, env.timeout, where, user_info, url=url)


def _from_block(
    block: SchemaRegistry,
    where: str,
    timeout: float,
    source: str,
    user_info: str | None,
    url: str | None = None,
) -> RegistrySettings:
    from kctl import config

    if user_info is None:  # user:password@ in the URL given wins over the profile's
        user_info = config.resolve_secret(
            block.basic_auth_user_info, f"{where} schema_registry.basic_auth_user_info"
        )
    return RegistrySettings(
        url=url or _split_user_info(block.url)[0],
        user_info=user_info,
        ca_file=block.ca_file,
        cert_file=block.cert_file,
        key_file=block.key_file,
        timeout=timeout,
        source=source,
    )


def _profile_of(env: Environment) -> Profile | None:
    """The profile this invocation names (--profile, KCTL_PROFILE, the current one), as
    :func:`kctl.broker.connect.resolve` finds it; a broken profile file is only a warning when
    a registry URL is given explicitly and no --profile."""
    from kctl import config
    from kctl.errors import ConfigError

    try:
        pfile = config.load()
    except ConfigError as exc:
        if env.profile or not env.schema_registry:
            raise
        sys.stderr.write(
            f"kctl: warning: ignoring the profile file: {exc.line()}; "
            f"using the schema registry {env.schema_registry} as given\n"
        )
        return None
    name = env.profile or pfile.current
    return pfile.get(name) if name else None


def schema_registry_settings(ctx: typer.Context) -> RegistrySettings:
    """The :class:`RegistrySettings` of this invocation (see :func:`registry_settings`)."""
    env = environment(ctx)
    return registry_settings(env, _profile_of(env))


def schema_registry(ctx: typer.Context) -> RegistryClient:
    """The Schema Registry client this invocation uses: built here, at the command boundary,
    once (it caches schemas per id and per subject version for the run)."""
    from kctl.registry.client import RegistryClient

    s = schema_registry_settings(ctx)
    return RegistryClient(
        s.url,
        user_info=s.user_info,
        ca_file=s.ca_file,
        cert_file=s.cert_file,
        key_file=s.key_file,
        timeout=s.timeout,
    )


def output_view(ctx: typer.Context) -> View:
    """How to show output (-o, --no-headers, --no-color), read at the command boundary."""
    from kctl.formatters import View

    return View.of(environment(ctx))


def emit_results(
    ctx: typer.Context, rows: Sequence[Mapping[str, object]], columns: tuple[str, ...]
) -> None:
    """A broker's answer per partition (``status`` accepted | failed ...); exit 1 when one
    failed (reassignments, leader elections, moves between log dirs)."""
    from kctl.errors import EXIT_FAILED
    from kctl.formatters import Output, cols, emit
    from kctl.reassign.rows import failed

    emit(Output(rows, cols(*columns)), output_view(ctx))
    if failed(rows):
        raise typer.Exit(EXIT_FAILED)


def state_dir(ctx: typer.Context) -> Path:
    """kctl's state dir, as this invocation's environment says (``KCTL_STATE_DIR``, ...)."""
    from kctl.local.broker import state_dir as of

    return of(environment(ctx).variables)


def one_name(positional: str | None, option: str | None, what: str) -> str:
    """A name given as the argument or as the kafka-*.sh option (``--topic``, ``--group``)."""
    from kctl.errors import UsageError

    if positional and option and positional != option:
        raise UsageError(f"give the {what} once: as the argument or as --{what}, not both")
    name = positional or option
    if not name:
        raise UsageError(f"missing {what} name", f"give it as the argument or with --{what}")
    return name


def read_hidden(prompt: str, option: str = "--sasl-password") -> str:
    """One line from the terminal on stdin, not echoed; the prompt goes to stderr. ``option``
    names the secret in the errors (``--sasl-password``, ``--key-password``)."""
    import termios

    from kctl.errors import Refused

    what = "the SASL password" if option == "--sasl-password" else "the key password"
    if not sys.stdin.isatty():
        raise Refused(
            f"cannot ask for {what}: stdin is not a terminal",
            f"give it with {option}-file PATH or as {option} env:VAR",
        )
    fd = sys.stdin.fileno()
    old = termios.tcgetattr(fd)
    new = termios.tcgetattr(fd)
    new[3] &= ~termios.ECHO
    try:
        termios.tcsetattr(fd, termios.TCSAFLUSH, new)  # echo off before the prompt shows
        sys.stderr.write(prompt)
        sys.stderr.flush()
        line = sys.stdin.readline()
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)
        sys.stderr.write("\n")
        sys.stderr.flush()
    if not line:
        raise Refused(f"no {what.removeprefix('the ')} read", "end of input at the prompt")
    return line.rstrip("\r\n")


def secret_from_file(path: str, option: str = "--sasl-password-file") -> str:
    """A secret kept in a file: its text without the final line break."""
    from kctl.errors import ConfigError
    from kctl.inputs import SECRET, read_input

    return read_input(path, option, SECRET, error=ConfigError).rstrip("\r\n")
