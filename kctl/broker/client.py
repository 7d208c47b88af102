"""Client construction and error translation for confluent-kafka (librdkafka).

Every broker-facing operation goes through :class:`Admin` (or the producer/consumer builders
that later modules add) so that failures become one-line :class:`KctlError`s with the reason
librdkafka gave, and unreachable or misconfigured clusters fail fast instead of hanging.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from kctl.broker.connect import Connection, librdkafka_config
from kctl.errors import (
    ConfigError,
    ConnectionFailed,
    KctlError,
    NotFoundError,
    UnsupportedByBroker,
)

# librdkafka error names that mean: stop trying, the connection itself is wrong.
_FATAL_CONNECT = {"_AUTHENTICATION", "SASL_AUTHENTICATION_FAILED", "_SSL", "_ALL_BROKERS_DOWN"}
_NOT_FOUND = {"UNKNOWN_TOPIC_OR_PART", "UNKNOWN_TOPIC_ID", "GROUP_ID_NOT_FOUND", "_UNKNOWN_TOPIC"}


def error_name(exc: BaseException) -> str | None:
    err = exc.args[0] if exc.args else None
    name = getattr(err, "name", None)
    return name() if callable(name) else None


def error_text(exc: BaseException) -> str:
    err = exc.args[0] if exc.args else None
    text = getattr(err, "str", None)
    return text() if callable(text) else str(exc)


def translate(exc: BaseException, what: str) -> KctlError:
    """A librdkafka exception as a one-line KctlError; ``what`` says what we were doing."""
    name = error_name(exc) or type(exc).__name__
    text = error_text(exc)
    if name in _NOT_FOUND:
        return NotFoundError(what, text)
    if name in ("_UNSUPPORTED_FEATURE", "UNSUPPORTED_VERSION", "INVALID_REQUEST") and (
        "not supported" in text.lower() or name != "INVALID_REQUEST"
    ):
        return UnsupportedByBroker(_api_in(text) or "this request", what)
    if name in ("_AUTHENTICATION", "SASL_AUTHENTICATION_FAILED"):
        return ConnectionFailed(f"{what}: authentication failed", text)
    return KctlError(what, f"{name}: {text}")


def _api_in(text: str) -> str | None:
    # librdkafka: "CreatePartitions (KIP-195) not supported by broker, requires ..."
    head = text.split(" not supported", 1)[0].strip()
    return head.split(" (", 1)[0] if head and head != text.strip() else None


class Admin:
    """An AdminClient bound to this invocation's connection and timeout."""

    def __init__(self, conn: Connection, client: Any = None, log: ErrorLog | None = None) -> None:
        """``client``/``log``: an existing client (e.g. a producer) and its error log, for its
        metadata with the same fail-fast handling, without a second connection."""
        self.conn = conn
        self.log = log or ErrorLog()
        if client is not None:
            self.client = client
            return
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient

        try:
            self.client = AdminClient(librdkafka_config(self.conn, error_cb=self.log))
        except (KafkaException, ValueError, TypeError) as exc:
            raise ConfigError("invalid client configuration", error_text(exc)) from exc

    @property
    def timeout(self) -> float:
        return self.conn.timeout

    def _fatal_error(self) -> Any | None:
        self.client.poll(0)  # serves error_cb
        return self.log.fatal()

    def metadata(self, topic: str | None = None) -> Any:
        """Cluster metadata; fails fast and clearly when the cluster cannot be reached."""
        from confluent_kafka import KafkaException

        deadline = time.monotonic() + self.timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                return self.client.list_topics(topic, timeout=max(0.05, min(1.0, remaining)))
            except KafkaException as exc:
                fatal = self._fatal_error()
                if fatal is not None:
                    raise connect_error(self.conn, fatal) from exc
                if remaining <= 1.0:
                    errors = self.log.errors
                    last = errors[-1].str() if errors else error_text(exc)
                    raise ConnectionFailed(
                        f"no answer from {self.conn.bootstrap_servers} within {self.timeout:g}s",
                        last,
                    ) from exc

    def result(
        self,
        future: Any,
        what: str,
        absent: frozenset[str] = frozenset(),
        timeout: float | None = None,
    ) -> Any:
        """Wait for one admin future within the timeout (or ``timeout``), translating failures.
        A failure whose Kafka error name is in ``absent`` (the thing asked about does not exist)
        gives None."""
        import concurrent.futures

        from confluent_kafka import KafkaException

        wait = self.timeout if timeout is None else timeout
        try:
            return future.result(timeout=wait)
        except concurrent.futures.TimeoutError as exc:
            fatal = self._fatal_error()
            if fatal is not None:
                raise connect_error(self.conn, fatal) from exc
            raise KctlError(what, f"no answer within {wait:g}s") from exc
        except KafkaException as exc:
            if absent and error_name(exc) in absent:
                return None
            raise translate(exc, what) from exc


def _strip_prefix(text: str) -> str:
    # "127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: ..." -> after the broker tag
    head, sep, tail = text.partition(": ")
    return tail if sep and "/" in head else text


class ErrorLog:
    """librdkafka error_cb sink: keeps the last errors so a failure can say why."""

    def __init__(self) -> None:
        self.errors: deque[Any] = deque(maxlen=50)

    def __call__(self, err: Any) -> None:
        self.errors.append(err)

    def fatal(self) -> Any | None:
        """The most telling connection error, once librdkafka gave up on every broker."""
        names = [e.name() for e in self.errors]
        if not any(n in _FATAL_CONNECT for n in names):
            return None
        for preferred in (
            "_AUTHENTICATION",
            "SASL_AUTHENTICATION_FAILED",
            "_SSL",
            "_RESOLVE",
            "_TRANSPORT",
        ):
            for err in reversed(self.errors):
                if err.name() == preferred:
                    return err
        return self.errors[-1]


def make_producer(conn: Connection, **extra: Any) -> tuple[Any, ErrorLog]:
    """A confluent-kafka Producer for this invocation (``extra``: librdkafka properties the
    command chooses; the user's -X still wins). Returns the producer and its error log."""
    from confluent_kafka import KafkaException, Producer

    log = ErrorLog()
    try:
        return Producer(librdkafka_config(conn, error_cb=log, **extra)), log
    except (KafkaException, ValueError, TypeError) as exc:
        raise ConfigError("invalid producer configuration", error_text(exc)) from exc


def make_consumer(conn: Connection, **extra: Any) -> tuple[Any, ErrorLog]:
    """A confluent-kafka Consumer for this invocation; see :func:`make_producer`."""
    from confluent_kafka import Consumer, KafkaException

    log = ErrorLog()
    extra.setdefault("group.id", "kctl-no-group")
    extra.setdefault("enable.auto.commit", False)
    try:
        return Consumer(librdkafka_config(conn, error_cb=log, **extra)), log
    except (KafkaException, ValueError, TypeError) as exc:
        raise ConfigError("invalid consumer configuration", error_text(exc)) from exc


def connect_error(conn: Connection, err: Any) -> KctlError:
    """A fatal librdkafka connection error as the one-line error every command gives."""
    servers = conn.bootstrap_servers
    name, text = err.name(), _strip_prefix(err.str())
    if name in ("_AUTHENTICATION", "SASL_AUTHENTICATION_FAILED"):
        return ConnectionFailed(f"authentication to {servers} failed", text)
    if name == "_SSL":
        return ConnectionFailed(f"TLS handshake with {servers} failed", text)
    if name == "_RESOLVE":
        return ConnectionFailed(f"cannot resolve {servers}", text)
    return ConnectionFailed(f"cannot connect to {servers}", text)
