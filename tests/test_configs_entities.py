"""kctl configs on broker loggers, groups and client-metrics subscriptions, beside
kafka-configs.sh (ConfigCommand from the same jars) on the session cluster."""

from __future__ import annotations

import json

import pytest
from conftest import on_tansu, unique

pytestmark = pytest.mark.skipif(on_tansu(), reason="Tansu has none of these config resources")


def _kafka(kafka_tool, bootstrap: str, kind: str, name: str) -> str:
    return kafka_tool(
        "kafka.admin.ConfigCommand", "--bootstrap-server", bootstrap, "--describe",
        "--entity-type", kind, "--entity-name", name,
    ).stdout  # fmt: skip


def _values(kctl, *entity: str) -> dict[str, str]:
    r = kctl("configs", "describe", *entity, "-o", "json")
    assert r.code == 0, r
    return {c["name"]: c["value"] for c in json.loads(r.stdout)["configs"]}


def test_a_broker_logger_level_changes_and_resets(kctl, kafka_tool, bootstrap):
    logger = "kafka.server.ReplicaFetcherManager"
    broker = str(
        json.loads(kctl("cluster", "describe", "-o", "json").stdout)["brokers"][0]["broker"]
    )
    before = _values(kctl, "--broker-logger", broker)[logger]
    try:
        r = kctl("configs", "set", "--broker-logger", broker, f"{logger}=TRACE")
        assert r.code == 0, r
        assert _values(kctl, "--broker-logger", broker)[logger] == "TRACE"
        assert f"{logger}=TRACE" in _kafka(kafka_tool, bootstrap, "broker-loggers", broker)
    finally:
        r = kctl("configs", "delete", "--entity-type", "broker-loggers", "--entity-name", broker,
                 logger)  # fmt: skip
        assert r.code == 0, r
    assert _values(kctl, "--broker-logger", broker)[logger] == before


def test_group_configs_are_set_described_and_deleted(kctl, kafka_tool, bootstrap):
    group = unique("cfg-group")
    r = kctl("configs", "set", "--group", group, "consumer.session.timeout.ms=60000",
             "consumer.heartbeat.interval.ms=6000")  # fmt: skip
    assert r.code == 0, r
    assert _values(kctl, "--group", group) == {
        "consumer.session.timeout.ms": "60000",
        "consumer.heartbeat.interval.ms": "6000",
    }
    theirs = _kafka(kafka_tool, bootstrap, "groups", group)
    assert "consumer.session.timeout.ms=60000" in theirs and "heartbeat.interval.ms=6000" in theirs
    assert "consumer.heartbeat.interval.ms" in _values(kctl, "--group", group, "--all")
    r = kctl("configs", "delete", "--group", group, "consumer.heartbeat.interval.ms")
    assert r.code == 0, r
    assert _values(kctl, "--group", group) == {"consumer.session.timeout.ms": "60000"}
    r = kctl("configs", "set", "--group", group, "no.such.config=1")
    assert r.code == 1 and "Unknown group config name" in r.stderr, r


def test_a_client_metrics_subscription_is_set_and_seen_by_kafka(kctl, kafka_tool, bootstrap):
    name = unique("metrics")
    r = kctl("configs", "set", "--client-metrics", name,
             "metrics=org.apache.kafka.producer.", "interval.ms=60000")  # fmt: skip
    assert r.code == 0, r
    assert _values(kctl, "--entity-type", "client-metrics", "--entity-name", name) == {
        "metrics": "org.apache.kafka.producer.",
        "interval.ms": "60000",
    }
    assert "interval.ms=60000" in _kafka(kafka_tool, bootstrap, "client-metrics", name)
    r = kctl("configs", "delete", "--client-metrics", name, "metrics", "interval.ms")
    assert r.code == 0, r


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--broker-logger", "424242"), "unknown broker 424242"),
        (("--entity-type", "users", "--entity-name", "a"), "unsupported --entity-type"),
        (("--entity-type", "groups", "--entity-default"), "have no --entity-default"),
        (("--group", "g", "--topic", "t"), "name exactly one of"),
        (("--entity-type", "broker-loggers", "--entity-name", "x"), "is not a broker id"),
    ],
)
def test_bad_entities_are_one_line(kctl, args, message):
    r = kctl("configs", "describe", *args)
    lines = r.stderr.strip().splitlines()
    assert r.code in (1, 2) and len(lines) == 1 and message in lines[0], r
