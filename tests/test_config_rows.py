"""configs describe's rows, document and columns, built from config values without a broker."""

from __future__ import annotations

from kctl.broker.configs import ConfigValue, Entity, describe_rows

VALUES = [
    ConfigValue("retention.ms", "86400000", "DYNAMIC_TOPIC_CONFIG", False, False, False,
                [{"source": "DYNAMIC_TOPIC_CONFIG", "name": "retention.ms", "value": "86400000"},
                 {"source": "DEFAULT_CONFIG", "name": "log.retention.ms", "value": None}]),
    ConfigValue("sasl.jaas.config", None, "STATIC_BROKER_CONFIG", False, True, True),
]  # fmt: skip


def test_rows_flatten_synonyms_and_the_document_keeps_them_whole() -> None:
    rows, doc, columns = describe_rows(Entity("topic", "orders"), VALUES, synonyms=False)
    assert columns == ["name", "value", "source", "sensitive", "read_only"]
    assert rows[0]["synonyms"] == [
        "DYNAMIC_TOPIC_CONFIG:retention.ms=86400000",
        "DEFAULT_CONFIG:log.retention.ms=None",
    ]
    assert rows[1] == {"name": "sasl.jaas.config", "value": None, "source": "STATIC_BROKER_CONFIG",
                       "sensitive": True, "read_only": True, "synonyms": []}  # fmt: skip
    assert doc["entity"] == "topic" and doc["name"] == "orders"
    assert doc["configs"][0]["synonyms"] == VALUES[0].synonyms
    assert [c["is_default"] for c in doc["configs"]] == [False, False]


def test_all_adds_the_synonyms_column() -> None:
    _, _, columns = describe_rows(Entity("broker", "1"), VALUES, synonyms=True)
    assert columns[-1] == "synonyms"
