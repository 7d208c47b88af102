"""kafka-python, for the protocol requests librdkafka's Python API does not expose
(per-broker ApiVersions, cluster-wide broker defaults, group APIs, log dirs, ...).

This is the one place that connects kafka-python and sends raw requests with it. kafka-python
3.0 has no public call that sends a request object and returns its response: ``send`` and
``api_version`` use its connection manager (``KafkaAdminClient._manager``), here and nowhere
else, so an upgrade that moves it breaks one module.
"""

from __future__ import annotations

import builtins
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any, Self

from kctl.broker.connect import Connection, kafka_python_config
from kctl.errors import ConnectionFailed, KctlError

_preloading: threading.Thread | None = None
_plain_import = builtins.__import__


def _import_after_preload(
    name: str,
    globals: Any = None,
    locals: Any = None,
    fromlist: Any = (),
    level: int = 0,
) -> Any:
    """``__import__`` while kafka-python is being imported in the background: an import of
    kafka-python from any other thread waits for that import to end first. Python's import
    locks do not make this safe on their own: kafka-python's packages import each other in a
    circle, and a second thread entering the circle is handed a partially initialised module
    ("cannot import name 'ApiVersionsRequest' from partially initialized module
    'kafka.protocol.metadata'": 4 runs in 30 when a command imported it right after preload)."""
    if level == 0 and (name == "kafka" or name.startswith("kafka.")):
        loading = _preloading
        if loading is not None and loading is not threading.current_thread():
            loading.join()
    return _plain_import(name, globals, locals, fromlist, level)


def preload() -> None:
    """Start importing kafka-python (~0.1 s of CPU) in a background thread, once per process, so
    that it overlaps the librdkafka round trips a command makes before it needs kafka-python
    (connecting, metadata, listing groups: time the main thread spends waiting in C, without the
    GIL). Until it is done, other threads' imports of kafka-python wait for it
    (:func:`_import_after_preload`). A failed import is left to the main thread's own import,
    which reports it."""
    global _preloading
    if _preloading is not None or "kafka.admin" in sys.modules:
        return

    def load() -> None:
        try:
            with suppress(Exception):  # the main thread imports it again and reports the failure
                import kafka.admin  # noqa: F401
        finally:
            if builtins.__import__ is _import_after_preload:
                builtins.__import__ = _plain_import

    _preloading = threading.Thread(target=load, name="kctl-import-kafka-python", daemon=True)
    builtins.__import__ = _import_after_preload
    _preloading.start()


def connect(conn: Connection, admin: Any = None) -> Any:
    """A kafka-python KafkaAdminClient; connection failures become one-line errors (librdkafka
    is asked first, through ``admin`` or a new Admin: it fails fast and names the cause, where
    kafka-python only times out). The caller closes it."""
    from kctl.broker.client import Admin

    # librdkafka first, kafka-python's import after: the Metadata round trip (in C, without the
    # GIL) overlaps the import that preload() started in the background.
    metadata = (admin or Admin(conn)).metadata()
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaError

    config = kafka_python_config(conn)
    # kafka-python bootstraps from a random server of the list and, when it picks one that is
    # down, waits out that server's growing backoff before it draws again: with brokers down,
    # --timeout could pass before it tried the live one. The brokers librdkafka just found
    # registered are where it starts instead.
    live = [f"{b.host}:{b.port}" for b in metadata.brokers.values()]
    if live:
        config["bootstrap_servers"] = sorted(live)
    try:
        return KafkaAdminClient(**config)
    except KafkaError as exc:
        why = str(exc) or type(exc).__name__
        raise ConnectionFailed(f"cannot connect to {conn.bootstrap_servers}", why) from exc


@contextmanager
def admin_client(conn: Connection) -> Iterator[Any]:
    """:func:`connect`, closed at the end of the block."""
    client = connect(conn)
    try:
        yield client
    finally:
        client.close()


class NoAnswer(KctlError):
    """A request got no answer: the broker could not be reached, the connection broke, or the
    request timed out (kafka-python raised; an error the broker answers is in the response)."""


def _no_answer(what: str, exc: BaseException) -> NoAnswer:
    return NoAnswer(what, str(exc) or type(exc).__name__)


def _learn(manager: Any, nodes: list[int | None]) -> None:
    """Before requests to ``nodes``: when the client's metadata does not know one of them (a
    broker that registered after the client started, as when brokers restart one by one),
    read the cluster's metadata again (kafka-python's own refresh, one Metadata request). A
    node still unknown then fails its request as before (UnknownBrokerIdError)."""
    from kafka.errors import KafkaError

    known = {b.node_id for b in manager.cluster.brokers()}
    if any(n is not None and n not in known for n in nodes):
        with suppress(KafkaError):
            manager.run(manager.cluster.refresh_metadata)


def send(client: Any, request: Any, what: str, node_id: int | None = None) -> Any:
    """Send one protocol request (to ``node_id``, else any broker) and return its response;
    :class:`NoAnswer` when none comes."""
    from kafka.errors import KafkaError

    manager = client._manager
    _learn(manager, [node_id])

    async def call() -> Any:
        if node_id is None:
            return await manager.send(request)
        return await manager.send(request, node_id=node_id)

    try:
        return manager.run(call)
    except KafkaError as exc:
        raise _no_answer(what, exc) from exc


def send_any(client: Any, request: Any, what: str, first: int) -> Any:
    """Send a request any broker answers (it forwards it to the controller: the KRaft admin
    requests) to ``first``, else, when that broker gives no answer (dead but not yet fenced,
    so still in the metadata), to each other broker in turn. Fails naming every broker tried."""
    tried: list[str] = []
    for node in [first, *(b for b in broker_ids(client) if b != first)]:
        try:
            return send(client, request, what, node_id=node)
        except NoAnswer as exc:
            tried.append(f"broker {node}: {exc.why}")
    raise NoAnswer(what, "; ".join(tried) or "no broker known")


def broker_ids(client: Any) -> list[int]:
    """The brokers the client's last Metadata listed (no request of its own)."""
    return sorted(b.node_id for b in client._manager.cluster.brokers())


# Requests in flight on one kafka-python connection at most (its default
# max_in_flight_requests_per_connection): kafka-python 3.0 queues more without sending them and,
# from twice that many, never sends the rest (they time out), so no more go at once.
IN_FLIGHT = 5


def waves(requests: list[tuple[int, Any]], most: int | None = None) -> list[list[int]]:
    """The positions of ``(node, request)`` pairs in rounds sent one after the other, each
    with at most ``most`` (default :data:`IN_FLIGHT`) requests per node: the i-th round holds
    the i-th group of ``most`` of each node's requests."""
    most = most or IN_FLIGHT
    seen: dict[int, int] = {}
    rounds: list[list[int]] = []
    for i, (node, _request) in enumerate(requests):
        k = seen.get(node, 0)
        seen[node] = k + 1
        if len(rounds) <= k // most:
            rounds.append([])
        rounds[k // most].append(i)
    return rounds


def send_all(client: Any, requests: list[tuple[int, Any]], what: str) -> list[Any]:
    """Send several requests at once, each to its node (``(node_id, request)``), and return
    their responses in the same order: one round trip for all, not one after another (in
    rounds of at most :data:`IN_FLIGHT` per node, what one connection takes at once)."""
    from kafka.errors import KafkaError

    manager = client._manager
    if not requests:
        return []
    _learn(manager, [node for node, _request in requests])
    out: list[Any] = [None] * len(requests)
    for wave in waves(requests):

        async def call(wave: list[int] = wave) -> list[Any]:
            futures = [manager.send(requests[i][1], node_id=requests[i][0]) for i in wave]
            return [await f for f in futures]

        try:
            for i, response in zip(wave, manager.run(call), strict=True):
                out[i] = response
        except KafkaError as exc:
            raise _no_answer(what, exc) from exc
    return out


def send_each(client: Any, requests: list[tuple[int, Any]], what: str) -> list[Any]:
    """:func:`send_all`, but a request that gets no answer does not fail the others: its place
    in the answer holds a :class:`NoAnswer` (naming its node) instead of a response. For
    callers that go on with the brokers that answer (a broker down, say)."""
    from kafka.errors import KafkaError

    manager = client._manager
    _learn(manager, [node for node, _request in requests])
    out: list[Any] = [None] * len(requests)
    for wave in waves(requests):

        async def call(wave: list[int] = wave) -> list[Any]:
            futures: list[Any] = []
            for i in wave:
                try:  # an unknown node id raises here, not in the future
                    futures.append(manager.send(requests[i][1], node_id=requests[i][0]))
                except KafkaError as exc:
                    futures.append(exc)
            answers: list[Any] = []
            for i, f in zip(wave, futures, strict=True):
                try:
                    answers.append(f if isinstance(f, KafkaError) else await f)
                except KafkaError as exc:
                    answers.append(exc)
                if isinstance(answers[-1], KafkaError):
                    answers[-1] = _no_answer(f"{what} (broker {requests[i][0]})", answers[-1])
            return answers

        for i, answer in zip(wave, manager.run(call), strict=True):
            out[i] = answer
    return out


def api_version(client: Any, request_class: Any) -> int:
    """The highest version of an API both kafka-python and the cluster speak (-1: none)."""
    from kafka.errors import IncompatibleBrokerVersion

    try:
        return int(client._manager.broker_version_data.api_version(request_class))
    except IncompatibleBrokerVersion:
        return -1


class LazyClient:
    """One kafka-python connection pool for a command, connected on first use and closed at the
    end (a context manager); operation classes (group reader, transactions) build on it."""

    def __init__(self, admin: Any) -> None:
        self.admin = admin
        self._client: Any = None
        preload()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = connect(self.admin.conn, self.admin)
        return self._client
