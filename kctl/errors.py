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


def client_library_error(exc: object) -> KctlError | None:
    """An exception of a client library as kctl's one-line error (exit 1), else None.

    confluent-kafka raises ``KafkaException`` (its first argument a ``KafkaError``) and, when
    ``consume()``/``poll()`` re-raise what went wrong in a librdkafka callback, the
    ``KafkaError`` object itself (not a ``BaseException``: only a bare ``except`` catches it);
    kafka-python raises subclasses of ``kafka.errors.KafkaError``. The line names the error
    (librdkafka's code name, kafka-python's class) and what the library said. Only libraries
    already imported are consulted: an exception cannot come from one that is not, and
    ``kctl --help`` must not import them."""
    import sys

    kind = type(exc).__name__
    package = (type(exc).__module__ or "").split(".")[0]
    rdkafka = sys.modules.get("confluent_kafka")
    if rdkafka is not None:
        err = exc
        if isinstance(exc, rdkafka.KafkaException) and exc.args:
            err = exc.args[0]
        if isinstance(err, rdkafka.KafkaError):
            return _client_error(err.name(), err.str(), "confluent-kafka", kind)
    kp = sys.modules.get("kafka.errors")
    if kp is not None and isinstance(exc, kp.KafkaError):
        text = " ".join(str(a) for a in exc.args if str(a))
        errno = getattr(exc, "errno", None)
        if isinstance(errno, int) and errno >= 0 and kind != "KafkaError":  # a broker's code
            text = f"error code {errno}" + (f", {text}" if text else "")
        return _client_error(kind, text, "kafka-python", kind)
    if package in ("confluent_kafka", "cimpl"):  # cimpl: confluent-kafka's C module
        return _client_error(kind, str(exc), "confluent-kafka", kind)
    if package == "kafka":
        return _client_error(kind, str(exc), "kafka-python", kind)
    return None


def _client_error(name: str, text: str, library: str, kind: str) -> KctlError:
    what = f"Kafka client: {name}" + (f": {text}" if text and text != name else "")
    return KctlError(what, f"{library} raised {kind}")
