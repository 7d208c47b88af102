"""kctl's own producer on librdkafka's C API, for ``produce``'s plain and keyed file lines.

confluent-kafka's ``Producer.produce()`` costs ~0.5 µs a record however it is called (argument
parsing, a topic lookup, a Python object per message and per delivery report); kcat pays none
of it. :class:`kctl._native.Producer` is a producer of kctl's own on the very librdkafka
confluent-kafka already loaded (found among the process's loaded libraries and opened again by
its path: one copy of the library, nothing vendored, no new system package): the C loop hands
each line to ``rd_kafka_produce()`` as kcat does and counts the delivery reports in C. It is
not confluent-kafka's own ``rd_kafka_t`` (its Handle struct is private and may change in any
release); it is a second handle built from the same configuration dict
(:func:`kctl.broker.connect.librdkafka_config`: security settings, ``-X`` properties), so SASL,
TLS, the partitioner and every librdkafka property behave identically.

:class:`NativeProducer` wraps it in the subset of confluent-kafka's Producer that
:func:`kctl.broker.produce.produce` uses (``poll``, ``flush``, ``len``, ``purge``,
``list_topics``), turning librdkafka's errors and throttle times into the same callbacks, so
the stall watch, the signal handling, the final flush and the summary are one implementation
for both producers. :func:`create` returns None wherever the C producer cannot be used (the
extension not built, ``KCTL_NATIVE=0`` or ``KCTL_NATIVE_PRODUCER=0``, a librdkafka outside the
supported range or missing a symbol, a configuration value confluent-kafka would translate
(a callable), or one librdkafka refuses): the caller then uses confluent-kafka, which reports a
bad configuration exactly as before. With ``--debug`` the reason is one line on stderr.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

from kctl.broker.client import ErrorLog
from kctl.broker.connect import Connection, librdkafka_config
from kctl.runtime import native

# What confluent-kafka's Producer takes as Python objects (callbacks): not librdkafka
# properties. The C producer has its own callbacks for these.
_CALLBACKS = {"logger", "error_cb", "throttle_cb", "on_delivery", "stats_cb", "oauth_cb"}


def _value(v: Any) -> str | None:
    """A configuration value as confluent-kafka hands it to librdkafka, or None when it is not
    a plain value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (str, int, float)):
        return str(v)
    return None


def _debug(conn: Connection, text: str) -> None:
    if conn.debug:
        print(f"kctl: debug: produce: {text}", file=sys.stderr)


def create(
    conn: Connection,
    extra: dict[str, Any],
    topic: str,
    definite: frozenset[str],
    throttle_cb: Any,
) -> tuple[NativeProducer, ErrorLog] | None:
    """kctl's C producer for ``topic`` with the configuration confluent-kafka would get
    (``extra``: the command's librdkafka properties; the user's ``-X`` still wins), or None
    when it cannot be used (see the module's docstring). ``definite``: the librdkafka error
    names that mean a record is definitely not on the broker."""
    cls = native.producer()
    if cls is None:
        _debug(conn, "librdkafka C producer not chosen (extension or KCTL_NATIVE_PRODUCER)")
        return None
    from confluent_kafka import KafkaError

    pairs: list[tuple[str, str]] = []
    for key, value in librdkafka_config(conn, **extra).items():
        if key in _CALLBACKS:
            continue
        text = _value(value)
        if text is None:
            _debug(conn, f"confluent-kafka path: property {key} is not a plain value")
            return None
        pairs.append((key, text))
    codes = [getattr(KafkaError, name) for name in definite if hasattr(KafkaError, name)]
    try:
        c = cls(pairs, topic, codes, conn.debug)
    except (RuntimeError, ValueError, TypeError, UnicodeError) as exc:
        _debug(conn, f"confluent-kafka path: librdkafka C producer unavailable ({exc})")
        return None
    log = ErrorLog()
    _debug(conn, "librdkafka C producer ({} {})".format(*native.rdkafka_library() or ("?", "?")))
    return NativeProducer(c, log, throttle_cb), log


class NativeProducer:
    """The subset of confluent-kafka's Producer that kctl's produce uses, on
    :class:`kctl._native.Producer`; ``c`` is the C object (its ``produce_lines`` walks the
    lines of a chunk)."""

    def __init__(self, c: Any, log: ErrorLog, throttle_cb: Any) -> None:
        self.c = c
        self.log = log
        self.throttle_cb = throttle_cb
        self._throttle_ms = 0
        self._throttled = 0

    def _served(self) -> None:
        """Hand what librdkafka reported while polling to the callbacks confluent-kafka would
        have called: errors to the error log, throttle times to ``throttle_cb``."""
        from confluent_kafka import KafkaError

        for code, reason, fatal in self.c.errors():
            self.log(KafkaError(code, reason, fatal=fatal))
        if self.throttle_cb is None:
            return
        t = self.c.tally()
        count = t["throttled"] - self._throttled
        if count:
            each = (t["throttle_ms"] - self._throttle_ms) / count / 1000
            self._throttle_ms, self._throttled = t["throttle_ms"], t["throttled"]
            for _ in range(count):
                self.throttle_cb(SimpleNamespace(throttle_time=each))

    def poll(self, timeout: float = 0) -> int:
        n: int = self.c.poll(timeout)
        self._served()
        return n

    def flush(self, timeout: float = 0) -> int:
        n: int = self.c.flush(timeout)
        self._served()
        return n

    def __len__(self) -> int:
        return len(self.c)

    def purge(self, in_queue: bool = True, in_flight: bool = True, blocking: bool = True) -> None:
        self.c.purge(in_queue, in_flight, blocking)

    def fatal_exception(self) -> Exception:
        """The producer's fatal error as confluent-kafka raises it from produce()."""
        from confluent_kafka import KafkaError, KafkaException

        got = self.c.fatal()
        code, reason = got if got is not None else (KafkaError._FATAL, "fatal error")
        return KafkaException(KafkaError(code, reason, fatal=True))

    def list_topics(self, topic: str | None = None, timeout: float = -1) -> Any:
        """Cluster metadata as confluent-kafka's ``list_topics`` gives the fields kctl reads:
        ``topics[name].error`` and ``.partitions``."""
        from confluent_kafka import KafkaError, KafkaException

        err, rows = self.c.metadata(topic, timeout if timeout >= 0 else 3600.0)
        self._served()
        if err:
            raise KafkaException(KafkaError(err))
        topics = {
            name: SimpleNamespace(
                topic=name,
                error=KafkaError(terr) if terr else None,
                partitions={p: SimpleNamespace(id=p) for p in ids},
            )
            for name, terr, ids in rows
        }
        return SimpleNamespace(topics=topics)
