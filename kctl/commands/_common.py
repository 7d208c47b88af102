"""Small helpers shared by command modules: examples in help, confirmations, stderr notes."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from kctl.errors import Refused

if TYPE_CHECKING:
    from kctl.broker.connect import Connection
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
    from kctl.commands.profile import _password_from_file, read_hidden
    from kctl.errors import UsageError

    if value is not None and path is not None:
        raise UsageError(f"give it once: {option} or {option}-file")
    if path is not None:
        secret, literal = _password_from_file(path, f"{option}-file"), False
    elif value is None or value == "-":
        secret, literal = read_hidden(prompt, option), False
    else:
        literal = not config.is_reference(value)
        secret = config.resolve_secret(value, option) or ""
    if not secret:
        raise UsageError(f"empty {option.lstrip('-')}", "nothing was changed")
    return secret, literal


def connection() -> Connection:
    """The connection this invocation's global options, environment and profile describe: built
    here, at the command boundary, once, and passed down to every operation explicitly."""
    from kctl import settings
    from kctl.broker.connect import resolve

    return resolve(settings.current())


def output_view() -> View:
    """How to show output (-o, --no-headers, --no-color), read at the command boundary."""
    from kctl import settings
    from kctl.formatters import View

    return View.of(settings.current())


def one_name(positional: str | None, option: str | None, what: str) -> str:
    """A name given as the argument or as the kafka-*.sh option (``--topic``, ``--group``)."""
    from kctl.errors import UsageError

    if positional and option and positional != option:
        raise UsageError(f"give the {what} once: as the argument or as --{what}, not both")
    name = positional or option
    if not name:
        raise UsageError(f"missing {what} name", f"give it as the argument or with --{what}")
    return name
