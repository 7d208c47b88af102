"""kctl configs and kctl cluster against the real session broker."""

from __future__ import annotations

import json


def _configs(kctl, *args: str) -> dict[str, dict]:
    r = kctl("configs", "describe", *args, "--all", "-o", "json")
    assert r.code == 0, r
    return {c["name"]: c for c in json.loads(r.stdout)["configs"]}


def test_set_then_describe_shows_value_and_delete_removes_it(kctl, new_topic):
    name = new_topic()
    r = kctl(
        "configs",
        "set",
        "--topic",
        name,
        "retention.ms=7200000",
        "max.message.bytes=2097152",
        "-o",
        "json",
    )
    assert r.code == 0, r
    assert [(x["config"], x["value"]) for x in json.loads(r.stdout)] == [
        ("retention.ms", "7200000"),
        ("max.message.bytes", "2097152"),
    ]
    configs = _configs(kctl, "--topic", name)
    assert configs["retention.ms"]["value"] == "7200000"
    assert configs["max.message.bytes"]["value"] == "2097152"

    r = kctl("configs", "delete", "--topic", name, "retention.ms")
    assert r.code == 0, r
    configs = _configs(kctl, "--topic", name)
    assert configs.get("retention.ms", {}).get("value") != "7200000"
    assert configs["max.message.bytes"]["value"] == "2097152"


def test_append_and_subtract_edit_list_configs(kctl, new_topic):
    name = new_topic(config={"cleanup.policy": "delete"})
    assert kctl("configs", "append", "--topic", name, "cleanup.policy=compact").code == 0
    policy = _configs(kctl, "--topic", name)["cleanup.policy"]["value"]
    assert sorted(policy.split(",")) == ["compact", "delete"]
    assert kctl("configs", "subtract", "--topic", name, "cleanup.policy=delete").code == 0
    assert _configs(kctl, "--topic", name)["cleanup.policy"]["value"] == "compact"


def test_set_rejects_unknown_name_and_bad_value_naming_them(kctl, new_topic):
    name = new_topic()
    r = kctl("configs", "set", "--topic", name, "retension.ms=1")
    assert r.code == 1
    assert "retension.ms" in r.stderr and "did you mean 'retention.ms'" in r.stderr
    r = kctl("configs", "set", "--topic", name, "min.insync.replicas=0")
    assert r.code == 1 and "min.insync.replicas" in r.stderr
    r = kctl("configs", "set", "--topic", name, "cleanup.policy=sometimes")
    assert r.code == 1 and "sometimes" in r.stderr
    assert "Traceback" not in r.stderr


def test_malformed_assignment_is_a_usage_error(kctl, new_topic):
    r = kctl("configs", "set", "--topic", new_topic(), "retention.ms")
    assert r.code == 2 and "malformed config 'retention.ms' (expected name=value)" in r.stderr


def test_entity_must_be_named_exactly_once(kctl):
    r = kctl("configs", "describe")
    assert r.code == 2 and "exactly one of --topic, --broker, --broker-defaults" in r.stderr
    r = kctl("configs", "describe", "--topic", "a", "--broker", "1")
    assert r.code == 2


def test_unknown_topic_and_broker_are_not_found(kctl):
    r = kctl("configs", "describe", "--topic", "no-such-topic-cfg")
    assert r.code == 1 and "unknown topic 'no-such-topic-cfg'" in r.stderr
    r = kctl("configs", "describe", "--broker", "987654")
    assert r.code == 1 and "unknown broker 987654" in r.stderr


def test_broker_configs_describe_for_a_live_broker(kctl, admin):
    broker = min(admin.list_topics(timeout=10).brokers)
    r = kctl("configs", "describe", "--broker", str(broker), "--all", "-o", "json")
    assert r.code == 0, r
    doc = json.loads(r.stdout)
    assert doc["entity"] == "broker" and doc["name"] == str(broker)
    for c in doc["configs"]:
        assert set(c) == {
            "name",
            "value",
            "source",
            "is_default",
            "is_sensitive",
            "is_read_only",
            "synonyms",
        }
        if c["is_sensitive"]:
            assert c["value"] == "********"


def test_cluster_describe_lists_brokers_and_controller(kctl, admin):
    md = admin.list_topics(timeout=10)
    r = kctl("cluster", "describe", "-o", "json")
    assert r.code == 0, r
    doc = json.loads(r.stdout)
    assert doc["cluster_id"] == md.cluster_id
    assert {b["broker"] for b in doc["brokers"]} == set(md.brokers)
    for b in doc["brokers"]:
        host, port = md.brokers[b["broker"]].host, md.brokers[b["broker"]].port
        assert (b["host"], b["port"]) == (host, port)
        assert b["controller"] == (b["broker"] == doc["controller_id"])


def test_api_versions_match_what_the_broker_advertises(kctl, broker_apis, admin):
    r = kctl("cluster", "api-versions", "-o", "json")
    assert r.code == 0, r
    rows = json.loads(r.stdout)
    assert {row["broker"] for row in rows} == set(admin.list_topics(timeout=10).brokers)
    first = min(row["broker"] for row in rows)
    got = {
        row["api_key"]: (row["min_version"], row["max_version"])
        for row in rows
        if row["broker"] == first
    }
    assert got == broker_apis
    names = {row["api"] for row in rows}
    assert {"Produce", "Fetch", "Metadata", "ApiVersions"} <= names


def test_broker_defaults_describe_answers_with_the_entity(kctl):
    r = kctl("configs", "describe", "--broker-defaults", "-o", "json")
    assert r.code == 0, r
    doc = json.loads(r.stdout)
    assert doc["entity"] == "broker-defaults" and doc["name"] == ""
    assert all(c["source"] == "DYNAMIC_DEFAULT_BROKER_CONFIG" for c in doc["configs"])


def test_broker_defaults_can_be_set_and_deleted(kctl):
    # The same value as Kafka's default, so a shared real cluster is left as it was.
    r = kctl("configs", "set", "--broker-defaults", "log.cleaner.backoff.ms=15000", "-o", "json")
    assert r.code == 0, r
    assert json.loads(r.stdout) == [
        {
            "entity": "broker-defaults",
            "name": "",
            "config": "log.cleaner.backoff.ms",
            "operation": "set",
            "value": "15000",
        }
    ]
    shown = kctl("configs", "describe", "--broker-defaults", "-o", "json")
    assert shown.code == 0
    for c in json.loads(shown.stdout)["configs"]:
        if c["name"] == "log.cleaner.backoff.ms":
            assert c["value"] == "15000"
    assert kctl("configs", "delete", "--broker-defaults", "log.cleaner.backoff.ms").code == 0


def test_delete_refuses_a_blank_or_unknown_config_name_and_deletes_nothing(kctl, new_topic):
    name = new_topic()
    assert kctl("configs", "set", "--topic", name, "retention.ms=123456").code == 0
    for bad in ("", " ", "retention.ms "):
        r = kctl("configs", "delete", "--topic", name, bad, "retention.ms")
        assert r.code == 2 and r.stdout == "", r
        assert r.stderr.strip().splitlines() == [
            f"kctl: error: malformed config name {bad!r} (a config name is not empty and has "
            "no blanks)"
        ], r
    # Kafka deletes a name it does not know without a word; kafka-configs.sh and kctl refuse.
    r = kctl("configs", "delete", "--topic", name, "retention.ms", "retension.ms")
    assert r.code == 1 and r.stdout == "", r
    assert "unknown topic config 'retension.ms'" in r.stderr and r.stderr.count("\n") == 1, r
    assert _configs(kctl, "--topic", name)["retention.ms"]["value"] == "123456"  # still there
    r = kctl("configs", "set", "--topic", name, " =1")
    assert r.code == 2 and "malformed config name ' '" in r.stderr, r
