"""groups lag sends a number of requests per broker that does not grow with the groups: counted
on the real cluster from the two clients themselves (kafka-python's requests at its connection
manager, and any librdkafka ListOffsets from its own protocol log)."""

from __future__ import annotations

import logging
import re
from collections import Counter
from typing import Any

import pytest
from conftest import commit_offsets, unique

PARTITIONS = 6


class _SentLog(logging.Handler):
    """librdkafka's protocol log: "<broker>/<id>: Sent ListOffsetsRequest (v..)" lines."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.sent: Counter[tuple[str, str]] = Counter()

    def emit(self, record: logging.LogRecord) -> None:
        match = re.search(r"(\S+/\d+): Sent (\w+)Request ", record.getMessage())
        if match:
            self.sent[(match.group(2), match.group(1))] += 1


def lag_requests(
    bootstrap: str, groups: list[str], time_lag: bool = False
) -> tuple[int, Counter[tuple[str, Any]]]:
    """Rows of ``kctl groups lag GROUPS [--time-lag]`` (the function behind it) and the
    requests it sent, per (API, broker)."""
    from kctl.broker import groups as G
    from kctl.broker.client import Admin
    from kctl.broker.connect import Connection

    conn = Connection(bootstrap_servers=bootstrap, extra={"debug": "protocol"})
    admin = Admin(conn)
    log = _SentLog()
    rdkafka = logging.getLogger("kctl.librdkafka")
    rdkafka.addHandler(log)
    rdkafka.setLevel(logging.DEBUG)
    sent: Counter[tuple[str, Any]] = Counter()
    try:
        with G.GroupReader(admin) as reader:
            # Every kafka-python request (groups, Metadata, ListOffsets, the time lag's
            # Fetches) passes kafka-python's connection manager: counted there.
            manager = reader.client._manager
            plain_manager_send = manager.send

            def counted(request: Any, node_id: int | None = None, **kw: Any) -> Any:
                sent[(type(request).__name__.removesuffix("Request"), node_id)] += 1
                return plain_manager_send(request, node_id=node_id, **kw)

            manager.send = counted
            rows = G.lag_samples(admin, reader, groups, time_lag=time_lag)
        for _ in range(50):  # serve the log lines librdkafka queued (bounded)
            if not admin.client.poll(0.1):
                break
    finally:
        rdkafka.removeHandler(log)
    sent.update({(api, broker): n for (api, broker), n in log.sent.items() if api == "ListOffsets"})
    assert {r["group"] for r in rows} == set(groups)
    assert all(r["lag"] == 1 for r in rows), rows[:3]
    if time_lag:
        assert all(r["time_lag_ms"] is not None and r["time_lag_ms"] >= 0 for r in rows), rows[:3]
    return len(rows), sent


@pytest.mark.parametrize("time_lag", [False, True], ids=["lag", "time-lag"])
def test_lag_requests_per_broker_do_not_grow_with_the_number_of_groups(
    bootstrap, new_topic, broker_apis, time_lag
):
    from confluent_kafka import Producer

    from kctl.broker.apis import API_KEYS

    for api, version in (("FindCoordinator", 4), ("OffsetFetch", 8)):  # the batched versions
        if broker_apis.get(API_KEYS[api], (0, -1))[1] < version:
            pytest.skip(f"the broker's {api} stops below v{version}: kctl asks per group there")

    topic = new_topic(partitions=PARTITIONS)
    producer = Producer({"bootstrap.servers": bootstrap})
    for p in range(PARTITIONS):
        producer.produce(topic, b"x", partition=p)
        producer.produce(topic, b"y", partition=p)
    assert producer.flush(30) == 0
    groups = [unique("lag-requests") for _ in range(36)]
    for g in groups:
        commit_offsets(bootstrap, g, {(topic, p): 1 for p in range(PARTITIONS)})

    few_rows, few = lag_requests(bootstrap, groups[:3], time_lag)
    many_rows, many = lag_requests(bootstrap, groups, time_lag)
    assert (few_rows, many_rows) == (3 * PARTITIONS, 36 * PARTITIONS)
    for sent in (few, many):
        per_api = Counter(api for api, _broker in sent.elements())
        # One FindCoordinator (batched, v4+) for all groups; one DescribeGroups and one
        # OffsetFetch per coordinator; one Metadata for the leaders; two ListOffsets rounds
        # (earliest, latest), one request per leader each.
        assert per_api["FindCoordinator"] == 1 and per_api["Metadata"] == 1, sent
        assert all(n == 1 for (api, _), n in sent.items() if api != "ListOffsets"), sent
        assert all(n <= 2 for (api, _), n in sent.items() if api == "ListOffsets"), sent
        assert 1 <= per_api["DescribeGroups"] == per_api["OffsetFetch"] <= 3, sent
        assert 2 <= per_api["ListOffsets"] <= 6, sent
        # --time-lag: one Fetch per partition leader for every group's first unread records
        # (the groups sit at the same position: one round).
        fetches = [n for (api, _broker), n in sent.items() if api == "Fetch"]
        assert (1 <= len(fetches) <= 3 and set(fetches) == {1}) if time_lag else not fetches, sent
    # Twelve times the groups, at most the brokers' count of each request: never per group.
    assert sum(many.values()) <= 1 + 1 + 3 + 3 + 6 + (3 if time_lag else 0) < len(groups), many
