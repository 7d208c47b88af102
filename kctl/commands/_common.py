"""Small helpers shared by command modules: examples in help, confirmations, stderr notes."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

from kctl.errors import Refused

if TYPE_CHECKING:
    from kctl.broker.connect import Connection
    from kctl.environment import Environment
    from kctl.formatters import View


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


def output_view(ctx: typer.Context) -> View:
    """How to show output (-o, --no-headers, --no-color), read at the command boundary."""
    from kctl.formatters import View

    return View.of(environment(ctx))


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
