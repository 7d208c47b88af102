"""Tests for kctl.broker.config_catalog: the topic-config catalogue and its validator."""

from __future__ import annotations

import dataclasses

import pytest

from kctl.broker.config_catalog import (
    CONFIG_TYPES,
    TOPIC_CONFIGS,
    ConfigSpec,
    validate_topic_config,
    validate_topic_configs,
)

REQUIRED = {
    "cleanup.policy", "compression.type", "compression.gzip.level", "compression.lz4.level",
    "compression.zstd.level", "delete.retention.ms", "file.delete.delay.ms", "flush.messages",
    "flush.ms", "follower.replication.throttled.replicas", "index.interval.bytes",
    "leader.replication.throttled.replicas", "local.retention.bytes", "local.retention.ms",
    "max.compaction.lag.ms", "max.message.bytes", "message.downconversion.enable",
    "message.format.version", "message.timestamp.after.max.ms", "message.timestamp.before.max.ms",
    "message.timestamp.difference.max.ms", "message.timestamp.type", "min.cleanable.dirty.ratio",
    "min.compaction.lag.ms", "min.insync.replicas", "preallocate", "remote.storage.enable",
    "retention.bytes", "retention.ms", "segment.bytes", "segment.index.bytes", "segment.jitter.ms",
    "segment.ms", "unclean.leader.election.enable", "remote.log.copy.disable",
    "remote.log.delete.on.disable",
}  # fmt: skip


# --- catalogue -------------------------------------------------------------------------------


def test_catalogue_covers_every_required_topic_config() -> None:
    assert REQUIRED - TOPIC_CONFIGS.keys() == set()


def test_catalogue_keys_match_spec_names_and_types_are_known() -> None:
    for name, spec in TOPIC_CONFIGS.items():
        assert spec.name == name
        assert spec.type in CONFIG_TYPES
        assert spec.valid


def test_every_default_passes_its_own_validation() -> None:
    for spec in TOPIC_CONFIGS.values():
        if spec.default is not None:
            assert validate_topic_config(spec.name, spec.default) is None, spec.name


def test_specs_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        TOPIC_CONFIGS["retention.ms"].default = "1"  # type: ignore[misc]


def test_spec_with_unknown_type_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown config type"):
        ConfigSpec("x", "float", None, "anything")


def test_known_defaults_match_kafka() -> None:
    expected = {
        "retention.ms": "604800000",
        "segment.bytes": "1073741824",
        "max.message.bytes": "1048588",
        "min.cleanable.dirty.ratio": "0.5",
        "cleanup.policy": "delete",
        "compression.type": "producer",
        "local.retention.ms": "-2",
        "compression.gzip.level": "-1",
    }
    assert {n: TOPIC_CONFIGS[n].default for n in expected} == expected


# --- names -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("retention.ms", "86400000"),
        ("retention.ms", "-1"),
        ("retention.bytes", "-5"),
        ("segment.bytes", "1048576"),
        ("min.insync.replicas", "2"),
        ("min.cleanable.dirty.ratio", "0.1"),
        ("cleanup.policy", "compact"),
        ("compression.type", "zstd"),
        ("message.timestamp.type", "LogAppendTime"),
        ("unclean.leader.election.enable", "true"),
        ("leader.replication.throttled.replicas", "*"),
        ("message.format.version", "2.8"),
        ("local.retention.ms", "-2"),
    ],
)
def test_known_config_with_valid_value_is_accepted(name: str, value: str) -> None:
    assert validate_topic_config(name, value) is None


def test_unknown_name_suggests_closest() -> None:
    assert validate_topic_config("retention.msx", "1") == (
        "unknown topic config 'retention.msx' (did you mean 'retention.ms'?)"
    )


def test_unknown_name_in_wrong_case_suggests_lowercase_name() -> None:
    assert "did you mean 'retention.ms'?" in validate_topic_config("Retention.MS", "1")


def test_unknown_name_without_close_match_has_no_suggestion() -> None:
    assert validate_topic_config("zzz", "1") == "unknown topic config 'zzz'"


def test_broker_level_name_points_to_topic_config() -> None:
    reason = validate_topic_config("log.retention.hours", "24")
    assert (
        reason == "unknown topic config 'log.retention.hours' (broker config; use 'retention.ms')"
    )
    assert "'max.message.bytes'" in validate_topic_config("message.max.bytes", "1")


# --- integers and longs ----------------------------------------------------------------------


def test_long_below_minus_one_is_rejected() -> None:
    assert validate_topic_config("retention.ms", "-2") == (
        "retention.ms must be a long >= -1, got '-2'"
    )


def test_non_numeric_long_is_rejected() -> None:
    assert validate_topic_config("retention.ms", "abc") == (
        "retention.ms must be a long >= -1, got 'abc'"
    )


def test_unbounded_long_still_needs_a_number() -> None:
    assert validate_topic_config("retention.bytes", "1GB") == (
        "retention.bytes must be a long, got '1GB'"
    )


def test_min_insync_replicas_below_one_is_rejected() -> None:
    assert validate_topic_config("min.insync.replicas", "0") == (
        "min.insync.replicas must be an int >= 1, got '0'"
    )


def test_values_outside_java_integer_ranges_are_rejected() -> None:
    assert validate_topic_config("retention.ms", str(2**63 - 1)) is None
    assert validate_topic_config("retention.ms", str(2**63)) is not None
    assert validate_topic_config("max.message.bytes", str(2**31 - 1)) is None
    assert validate_topic_config("max.message.bytes", str(2**31)) is not None


@pytest.mark.parametrize("value", ["1_000", "1e3", "1.0", "0x10", ""])
def test_integers_use_java_syntax_only(value: str) -> None:
    assert validate_topic_config("segment.ms", value) is not None


def test_surrounding_whitespace_is_trimmed_like_kafka() -> None:
    assert validate_topic_config("segment.ms", " 1000\t") is None
    assert validate_topic_config("segment.ms", "+1000") is None


@pytest.mark.parametrize(
    ("name", "good", "bad"),
    [
        ("compression.gzip.level", ["-1", "1", "9"], ["0", "10", "-2"]),
        ("compression.lz4.level", ["1", "17"], ["0", "18"]),
        ("compression.zstd.level", ["-131072", "0", "22"], ["-131073", "23"]),
        ("segment.index.bytes", ["4"], ["-1"]),
        ("segment.ms", ["1"], ["0"]),
        ("max.compaction.lag.ms", ["1"], ["0"]),
        ("local.retention.bytes", ["-2", "-1", "0"], ["-3"]),
    ],
)
def test_numeric_bounds_follow_kafka(name: str, good: list[str], bad: list[str]) -> None:
    assert [v for v in good if validate_topic_config(name, v)] == []
    assert [v for v in bad if validate_topic_config(name, v) is None] == []


def test_gzip_message_mentions_the_lone_default_level() -> None:
    assert validate_topic_config("compression.gzip.level", "0") == (
        "compression.gzip.level must be an int in [1, 9] or -1, got '0'"
    )


# --- doubles ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["0", "1", "0.5", ".5", "1.", "5e-1", "0.25d"])
def test_dirty_ratio_accepts_any_java_double_in_zero_to_one(value: str) -> None:
    assert validate_topic_config("min.cleanable.dirty.ratio", value) is None


@pytest.mark.parametrize("value", ["1.01", "-0.1", "nan", "inf", "half"])
def test_dirty_ratio_outside_zero_to_one_is_rejected(value: str) -> None:
    assert validate_topic_config("min.cleanable.dirty.ratio", value) == (
        f"min.cleanable.dirty.ratio must be a double in [0, 1], got {value!r}"
    )


# --- booleans --------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["true", "false", "TRUE", "False", " tRuE "])
def test_boolean_is_case_insensitive(value: str) -> None:
    assert validate_topic_config("preallocate", value) is None


@pytest.mark.parametrize("value", ["yes", "1", "on", ""])
def test_boolean_rejects_anything_but_true_or_false(value: str) -> None:
    assert validate_topic_config("preallocate", value) == (
        f"preallocate must be true or false, got {value!r}"
    )


# --- enums -----------------------------------------------------------------------------------


def test_enum_rejects_unknown_value() -> None:
    assert validate_topic_config("compression.type", "brotli") == (
        "compression.type must be one of uncompressed, zstd, lz4, snappy, gzip, producer, "
        "got 'brotli'"
    )


def test_enum_is_case_sensitive_and_says_so() -> None:
    reason = validate_topic_config("compression.type", "GZIP")
    assert reason is not None and reason.endswith("(values are case-sensitive)")
    assert validate_topic_config("message.timestamp.type", "createtime") is not None
    assert validate_topic_config("message.timestamp.type", "CreateTime") is None


# --- lists -----------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["delete", "compact", "delete,compact", "compact , delete", ""])
def test_cleanup_policy_accepts_allowed_items_in_any_combination(value: str) -> None:
    assert validate_topic_config("cleanup.policy", value) is None


def test_list_rejects_unknown_item() -> None:
    assert validate_topic_config("cleanup.policy", "foo") == (
        "cleanup.policy must be a list of delete, compact, got 'foo'"
    )


@pytest.mark.parametrize("value", ["delete,", "delete,,compact", "delete;compact", "Delete"])
def test_list_rejects_empty_or_malformed_items(value: str) -> None:
    assert validate_topic_config("cleanup.policy", value) is not None


def test_list_rejects_duplicate_items() -> None:
    assert validate_topic_config("cleanup.policy", "delete,delete") == (
        "cleanup.policy must not repeat a value, got 'delete,delete'"
    )


@pytest.mark.parametrize("value", ["*", " * ", "0:1", "0:1,1:2", " 0:101 , 3:102 ", ""])
def test_throttled_replicas_accept_wildcard_or_partition_broker_pairs(value: str) -> None:
    assert validate_topic_config("leader.replication.throttled.replicas", value) is None
    assert validate_topic_config("follower.replication.throttled.replicas", value) is None


@pytest.mark.parametrize("value", ["*,0:1", "0-1", "a:b", "0:", ":1", "0:1:2", "all"])
def test_throttled_replicas_reject_malformed_lists(value: str) -> None:
    assert validate_topic_config("leader.replication.throttled.replicas", value) == (
        "leader.replication.throttled.replicas must be '*' or a list of partition:broker pairs, "
        f"got {value!r}"
    )


# --- message.format.version ------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", ["0.8.2", "0.10.2", "0.10.2.1", "1.0", "2.8", "2.8.1", "3.0-IV1", "3.9"]
)
def test_message_format_version_accepts_kafka_releases(value: str) -> None:
    assert validate_topic_config("message.format.version", value) is None


@pytest.mark.parametrize("value", ["4.0", "0.12.0", "2.9", "latest", "3.0-X", ""])
def test_message_format_version_rejects_non_releases(value: str) -> None:
    assert validate_topic_config("message.format.version", value) is not None


# --- broker versions -------------------------------------------------------------------------


def test_segment_bytes_minimum_depends_on_broker_version() -> None:
    assert validate_topic_config("segment.bytes", "14") is None
    assert validate_topic_config("segment.bytes", "14", broker_version="4.0") is None
    assert validate_topic_config("segment.bytes", "14", broker_version="4.1.0") == (
        "segment.bytes must be an int >= 1048576, got '14'"
    )
    assert validate_topic_config("segment.bytes", "13") == (
        "segment.bytes must be an int >= 14, got '13'"
    )


def test_flush_messages_zero_is_only_accepted_before_kafka_3_3() -> None:
    assert validate_topic_config("flush.messages", "0", broker_version="3.2") is None
    assert validate_topic_config("flush.messages", "0", broker_version="3.3") is not None


def test_config_removed_in_kafka_4_is_rejected_for_kafka_4_brokers() -> None:
    assert validate_topic_config("message.format.version", "2.8", broker_version="3.9") is None
    assert validate_topic_config("message.format.version", "2.8", broker_version="4.0.1") == (
        "message.format.version was removed in Kafka 4.0 (broker is 4.0)"
    )


def test_config_newer_than_broker_is_rejected() -> None:
    assert validate_topic_config("compression.zstd.level", "5", broker_version="3.7") == (
        "compression.zstd.level needs Kafka 3.8 or newer (broker is 3.7)"
    )
    assert validate_topic_config("compression.zstd.level", "5", broker_version="3.8") is None


def test_unparseable_broker_version_raises() -> None:
    with pytest.raises(ValueError, match="unrecognised Kafka version"):
        validate_topic_config("retention.ms", "1", broker_version="latest")


# --- several configs -------------------------------------------------------------------------


def test_validate_topic_configs_is_empty_for_valid_configs() -> None:
    assert validate_topic_configs({"retention.ms": "1000", "cleanup.policy": "delete"}) == []


def test_validate_topic_configs_returns_every_problem() -> None:
    problems = validate_topic_configs(
        {"retention.msx": "1", "retention.ms": "abc", "preallocate": "yes", "segment.ms": "10"}
    )
    assert problems == [
        "unknown topic config 'retention.msx' (did you mean 'retention.ms'?)",
        "retention.ms must be a long >= -1, got 'abc'",
        "preallocate must be true or false, got 'yes'",
    ]


def test_min_compaction_lag_above_max_is_rejected() -> None:
    assert validate_topic_configs(
        {"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"}
    ) == ["min.compaction.lag.ms (10) must not exceed max.compaction.lag.ms (5)"]


def test_tiered_storage_on_compacted_topic_is_rejected() -> None:
    problems = validate_topic_configs(
        {"remote.storage.enable": "true", "cleanup.policy": "compact"}
    )
    assert problems == ["remote.storage.enable=true needs cleanup.policy=delete (no compaction)"]
    assert (
        validate_topic_configs({"remote.storage.enable": "false", "cleanup.policy": "compact"})
        == []
    )


def test_local_retention_above_total_retention_is_rejected_with_tiered_storage() -> None:
    configs = {
        "remote.storage.enable": "true",
        "retention.ms": "1000",
        "local.retention.ms": "2000",
    }
    assert validate_topic_configs(configs) == [
        "local.retention.ms (2000) must be within retention.ms (1000)"
    ]
    configs |= {"local.retention.ms": "-2", "retention.bytes": "100", "local.retention.bytes": "-1"}
    assert validate_topic_configs(configs) == [
        "local.retention.bytes (-1) must be within retention.bytes (100)"
    ]


def test_every_reason_is_a_single_line() -> None:
    samples = {"retention.ms": "a\nb", "bad\nname": "1", "cleanup.policy": "x\r\ny"}
    for problem in validate_topic_configs(samples):
        assert "\n" not in problem and "\r" not in problem
