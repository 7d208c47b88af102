"""kafka-python, for the protocol requests librdkafka's Python API does not expose
(per-broker ApiVersions, cluster-wide broker defaults, ...)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kctl.errors import ConnectionFailed, KctlError
from kctl.kafka.connect import Connection, kafka_python_config


@contextmanager
def admin_client(conn: Connection) -> Iterator[Any]:
    """A kafka-python KafkaAdminClient; connection failures become one-line errors (librdkafka
    is asked first: it fails fast and names the cause, where kafka-python only times out)."""
    from kafka import KafkaAdminClient
    from kafka.errors import KafkaError

    from kctl.kafka.client import Admin

    Admin(conn).metadata()
    try:
        client = KafkaAdminClient(**kafka_python_config(conn))
    except KafkaError as exc:
        why = str(exc) or type(exc).__name__
        raise ConnectionFailed(f"cannot connect to {conn.bootstrap_servers}", why) from exc
    try:
        yield client
    finally:
        client.close()


def send(client: Any, request: Any, what: str, node_id: int | None = None) -> Any:
    """Send one protocol request (to ``node_id``, else any broker) and return its response."""
    from kafka.errors import KafkaError

    async def call() -> Any:
        if node_id is None:
            return await client._manager.send(request)
        return await client._manager.send(request, node_id=node_id)

    try:
        return client._manager.run(call)
    except KafkaError as exc:
        raise KctlError(what, str(exc) or type(exc).__name__) from exc
