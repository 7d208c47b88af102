"""kctl quotas on the session cluster beside kafka-configs.sh (Kafka's ConfigCommand from the
same jars), and a quota the broker enforces: a producer whose client id has 1 MB/s is throttled,
as the broker itself reports in the throttle time of its answers."""

from __future__ import annotations

import json

import pytest
from conftest import on_tansu, unique, wait_for

pytestmark = pytest.mark.skipif(on_tansu(), reason="Tansu has no client quota APIs")


def _kafka_quotas(kafka_tool, bootstrap: str, *entity: str) -> str:
    return kafka_tool(
        "kafka.admin.ConfigCommand", "--bootstrap-server", bootstrap, "--describe", *entity
    ).stdout


def test_quotas_set_described_and_deleted_as_kafka_configs_sees_them(kctl, kafka_tool, bootstrap):
    user = unique("quser")
    r = kctl("quotas", "set", "--user", user, "producer_byte_rate=1048576",
             "consumer_byte_rate=2000000")  # fmt: skip
    assert r.code == 0, r
    r = kctl("quotas", "set", "--user", user, "--client-id", "app", "request_percentage=50.5")
    assert r.code == 0, r
    r = kctl("quotas", "describe", "--user", user, "-o", "json")
    assert r.code == 0, r
    assert json.loads(r.stdout) == [
        {"entity": {"user": user},
         "quotas": {"consumer_byte_rate": 2000000.0, "producer_byte_rate": 1048576.0}}
    ]  # fmt: skip
    theirs = _kafka_quotas(kafka_tool, bootstrap, "--entity-type", "users", "--entity-name", user)
    assert "consumer_byte_rate=2000000.0, producer_byte_rate=1048576.0" in theirs, theirs
    r = kctl("quotas", "describe", "-o", "json")
    entities = [d["entity"] for d in json.loads(r.stdout)]
    assert {"user": user} in entities and {"user": user, "client-id": "app"} in entities
    r = kctl("quotas", "describe")
    assert f"user={user},client-id=app" in r.stdout and "50.5" in r.stdout, r

    r = kctl("quotas", "delete", "--user", user, "producer_byte_rate")
    assert r.code == 1 and "without --yes" in r.stderr, r
    r = kctl("quotas", "delete", "--user", user, "producer_byte_rate", "--yes")
    assert r.code == 0, r
    theirs = _kafka_quotas(kafka_tool, bootstrap, "--entity-type", "users", "--entity-name", user)
    assert "consumer_byte_rate=2000000.0" in theirs and "producer_byte_rate" not in theirs
    for args in (("--user", user), ("--user", user, "--client-id", "app")):
        r = kctl("quotas", "delete", *args, "--all", "--yes")
        assert r.code == 0, r
    r = kctl("quotas", "describe", "--user", user, "-o", "json")
    assert r.code == 0 and json.loads(r.stdout) == [], r


def test_deleting_a_quota_the_entity_lacks_is_refused_as_kafka_configs_refuses_it(
    kctl, kafka_tool, bootstrap
):
    user = unique("quser")
    theirs = kafka_tool(
        "kafka.admin.ConfigCommand", "--bootstrap-server", bootstrap, "--alter",
        "--entity-type", "users", "--entity-name", user, "--delete-config", "producer_byte_rate",
        check=False,
    )  # fmt: skip
    assert theirs.returncode == 1 and "Invalid config(s): producer_byte_rate" in theirs.stderr
    r = kctl("quotas", "delete", "--user", user, "producer_byte_rate", "--yes")
    assert r.code == 1 and r.stdout == "", r
    assert r.stderr.strip().splitlines() == [
        f"kctl: error: user={user} has no quota producer_byte_rate: nothing deleted (it has none)"
    ], r
    try:
        assert kctl("quotas", "set", "--user", user, "consumer_byte_rate=1000").code == 0
        # One absent key refuses the whole deletion: the present one stays.
        r = kctl("quotas", "delete", "--user", user, "consumer_byte_rate", "producer_byte_rate",
                 "--yes")  # fmt: skip
        assert r.code == 1 and r.stdout == "", r
        assert "has no quota producer_byte_rate: nothing deleted (it has consumer_byte_rate)" in (
            r.stderr
        ), r
        r = kctl("quotas", "describe", "--user", user, "-o", "json")
        assert json.loads(r.stdout)[0]["quotas"] == {"consumer_byte_rate": 1000.0}, r
    finally:
        r = kctl("quotas", "delete", "--user", user, "--all", "--yes")
        assert r.code == 0, r
    r = kctl("quotas", "delete", "--user", user, "--all", "--yes")  # none left: a note, exit 0
    assert r.code == 0 and "nothing to delete" in r.stderr, r


def test_a_producer_quota_is_enforced_by_the_broker(kctl, bootstrap, new_topic, kafka_tool):
    """100 KB/s on a client id, then 1.3 MB at once: the broker measures the rate over its
    quota window (11 one-second samples) and answers with a throttle time (KIP-219), which
    librdkafka hands to throttle_cb."""
    from confluent_kafka import Producer

    topic = new_topic(partitions=1)
    client = unique("throttled")
    r = kctl("quotas", "set", "--client-id", client, "producer_byte_rate=102400")
    assert r.code == 0, r
    theirs = _kafka_quotas(kafka_tool, bootstrap, "--entity-type", "clients",
                           "--entity-name", client)  # fmt: skip
    assert "producer_byte_rate=102400.0" in theirs, theirs
    throttle: list[float] = []
    p = Producer({"bootstrap.servers": bootstrap, "client.id": client, "linger.ms": 20,
                  "throttle_cb": lambda event: throttle.append(event.throttle_time)})  # fmt: skip
    try:
        for _ in range(130):  # 1.3 MB
            p.produce(topic, b"x" * 10_000)
        assert p.flush(120) == 0
        wait_for(lambda: (p.poll(0.1) or True) and any(t > 0 for t in throttle),
                 "the broker to report throttle time", 60)  # fmt: skip
    finally:
        r = kctl("quotas", "delete", "--client-id", client, "--all", "--yes")
        assert r.code == 0, r
    assert max(throttle) > 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("set", "--user", "a", "producer_byte_rate=fast"), "is not a number"),
        (("set", "--user", "a", "producer_byte_rate=-1"), "out of range"),
        (("set", "--user", "a", "producer_byte_rate=1.5"), "not a whole number"),
        (("set", "--user", "a", "bandwidth=1"), "unknown quota 'bandwidth'"),
        (("set", "--ip", "10.0.0.1", "producer_byte_rate=1"), "does not apply to ip"),
        (("set", "--user", "a", "connection_creation_rate=1"), "does not apply to user"),
        (("set", "--user", "a", "--ip", "10.0.0.1", "producer_byte_rate=1"), "stands alone"),
        (("set", "--user", "a", "--user-default", "producer_byte_rate=1"), "exclusive"),
        (("set", "producer_byte_rate=1"), "no entity"),
        (("set", "--user", "a", "producer_byte_rate"), "is not KEY=VALUE"),
        (("delete", "--user", "a"), "no quota to delete"),
    ],
)
def test_bad_quota_input_is_one_line(kctl, args, message):
    r = kctl("quotas", *args)
    lines = r.stderr.strip().splitlines()
    assert r.code == 2 and len(lines) == 1 and message in lines[0], r
