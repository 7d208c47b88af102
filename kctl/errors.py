"""Errors that end a command: each carries an exit code and a one-line message.

The CLI prints ``kctl: error: <what> (<why>)`` on stderr and exits with ``exit_code``;
only ``--debug`` shows a traceback.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_FINDINGS = 3
EXIT_INTERRUPTED = 130


class KctlError(Exception):
    """An operation failed: broker error, not found, corrupt input. Exit code 1."""

    exit_code = EXIT_FAILED

    def __init__(self, what: str, why: str | None = None) -> None:
        self.what = what
        self.why = why
        super().__init__(self.line())

    def line(self) -> str:
        text = self.what if not self.why else f"{self.what} ({self.why})"
        # One line, always: a broker's multi-line message is folded.
        return " ".join(text.split())


class UsageError(KctlError):
    """The command line or its input files are malformed. Exit code 2."""

    exit_code = EXIT_USAGE


class ConfigError(KctlError):
    """A profile file or client configuration is missing or malformed. Exit code 1."""


class NotFoundError(KctlError):
    """A topic, group, profile or broker does not exist. Exit code 1."""


class ConnectionFailed(KctlError):
    """The bootstrap servers could not be reached or refused us. Exit code 1."""


class UnsupportedByBroker(KctlError):
    """The broker does not implement an API the command needs. Exit code 1."""

    def __init__(self, api: str, what: str) -> None:
        self.api = api
        super().__init__(f"{what}: the broker does not support {api}", "not in its ApiVersions")


class Refused(KctlError):
    """A destructive command was not confirmed. Exit code 1."""


class FindingsError(KctlError):
    """A check ran and found problems. Exit code 3."""

    exit_code = EXIT_FINDINGS
