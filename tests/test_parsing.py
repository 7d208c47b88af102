"""The one parser module: topic scopes, durations in both spellings, points in time (UTC when
no zone is given) — the same rules for every command."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kctl import parsing as P
from kctl.errors import UsageError


def test_topic_scope_merges_repeats_and_a_bare_topic_means_every_partition():
    assert P.topic_scope(["a", "b:0,2"]) == {"a": None, "b": [0, 2]}
    assert P.topic_scope(["b:2", "b:0,2"]) == {"b": [0, 2]}
    assert P.topic_scope(["b:1", "b", "b:3"]) == {"b": None}


@pytest.mark.parametrize(
    ("item", "why"),
    [
        ("b:x", "partitions must be integers"),
        (":1", "expected TOPIC or TOPIC:P"),
        ("b:", "no partitions after ':'"),
        ("t1:-1", "partitions are 0 or more"),
    ],
)
def test_topic_scope_names_the_option_and_the_fault(item, why):
    with pytest.raises(UsageError) as info:
        P.topic_scope([item], "--topic")
    assert info.value.line().startswith(f"malformed --topic {item!r} (")
    assert why in info.value.line()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PT30M", timedelta(minutes=30)),
        ("P1DT2H", timedelta(days=1, hours=2)),
        ("-PT1S", timedelta(seconds=-1)),
        ("pt1.5s", timedelta(seconds=1.5)),
        ("30m", timedelta(minutes=30)),
        ("1h30m", timedelta(hours=1, minutes=30)),
        ("500ms", timedelta(milliseconds=500)),
        ("90", timedelta(seconds=90)),
        ("2d", timedelta(days=2)),
    ],
)
def test_a_duration_in_either_spelling(text, expected):
    assert P.duration(text) == expected


@pytest.mark.parametrize("text", ["1 hour", "P", "PT", "P1DT", "10x", "", "h"])
def test_a_malformed_duration_is_a_usage_error_naming_the_option(text):
    with pytest.raises(UsageError, match=r"malformed --by-duration"):
        P.duration(text, "--by-duration")


def test_an_absurd_duration_is_refused_not_overflowed():
    with pytest.raises(UsageError, match="too long"):
        P.duration("P1000000000D", "--by-duration")
    with pytest.raises(UsageError, match="too long"):
        P.duration("99999999999999d", "--duration")


def test_points_in_time_are_utc_without_a_zone():
    assert P.time_ms("1970-01-01T00:00:01Z") == 1000
    assert P.time_ms("1970-01-01T00:00:01") == 1000  # no zone: UTC, whatever the machine says
    assert P.time_ms("1970-01-01T01:00:00+01:00") == 0
    assert P.time_ms("1970-01-02") == 86_400_000
    assert P.time_ms("@1700000000000") == 1_700_000_000_000
    assert P.looks_like_time("2024-05-01") and P.looks_like_time("@5")
    assert not P.looks_like_time("-5")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("yesterday", "malformed --to-datetime 'yesterday'"),
        ("@soon", "malformed --to-datetime '@soon'"),
        ("@99999999999999999999", "out of range"),
        ("0001-01-01T00:00:00", "out of range"),
    ],
)
def test_a_bad_point_in_time_is_a_usage_error(text, why):
    with pytest.raises(UsageError, match=why):
        P.time_ms(text, "--to-datetime")


def test_one_vocabulary_for_key_and_value_formats():
    shown = ("string", "json", "bytes", "base64", "hex")
    assert P.payload_format("text", "--value-format", shown) == "string"
    assert P.payload_format("STRING", "--value-format", shown) == "string"
    assert P.payload_format("hex", "--key-format", ("string", "hex", "base64")) == "hex"
    with pytest.raises(UsageError) as info:
        P.payload_format("avro", "--value-format", shown)
    assert info.value.line() == (
        "unknown --value-format 'avro' (expected one of string (text)|json|bytes|base64|hex)"
    )


def test_consume_and_dump_take_text_and_string_alike(offline_kctl, tmp_path):
    from conftest import FIXTURES

    seg = FIXTURES / "kafka-3.8-kraft-logs" / "foo-0" / "00000000000000000000.log"
    a = offline_kctl("dump-segment", "--print-data-log", "--value-format", "string", str(seg))
    b = offline_kctl("dump-segment", "--print-data-log", "--value-format", "text", str(seg))
    assert a.code == b.code == 0 and a.stdout == b.stdout and "payload:" in a.stdout
    bad = offline_kctl("dump-segment", "--value-format", "json", str(seg))
    assert bad.code == 2 and "unknown --value-format 'json'" in bad.stderr


def test_offset_time_knows_kafkas_special_times_by_name_and_number():
    from kctl.parsing import offset_time

    assert [offset_time(x) for x in ("latest", "-1", "EARLIEST", "-2", "max-timestamp", "-3")] == [
        -1,
        -1,
        -2,
        -2,
        -3,
        -3,
    ]
    assert offset_time("earliest-local") == -4 and offset_time("-5") == -5
    assert offset_time("earliest-pending-upload") == -6
    assert offset_time("1700000000000") == offset_time("@1700000000000") == 1700000000000
    assert offset_time("2023-11-14T22:13:20Z") == 1700000000000
    for bad in ("-7", "noon", "-0x1", "@-5"):
        with pytest.raises(UsageError):
            offset_time(bad)


def test_topic_partition_patterns_follow_kafka_get_offsets_syntax():
    from kctl.parsing import match_topic_partitions, topic_partition_patterns

    layout = {"orders": [0, 1, 2, 3], "payments": [0, 1], "__consumer_offsets": [0, 1]}
    pick = lambda text, **kw: match_topic_partitions(layout, topic_partition_patterns(text), **kw)  # noqa: E731
    assert pick("orders:1-3") == [("orders", 1), ("orders", 2)]  # upper bound exclusive
    assert pick("orders:2-") == [("orders", 2), ("orders", 3)]
    assert pick("orders:-1") == [("orders", 0)]
    assert pick("orders:3,payments") == [("orders", 3), ("payments", 0), ("payments", 1)]
    assert pick(":1", exclude_internal=True) == [("orders", 1), ("payments", 1)]
    assert pick("pay.*:0") == [("payments", 0)]
    assert pick("ord") == []  # a regex matches whole names
    for bad in ("orders:x", "orders:", "orders:1-2-3", "[bad:1"):
        with pytest.raises(UsageError):
            topic_partition_patterns(bad)


def test_select_topics_takes_names_then_regexes_over_whole_names():
    from kctl.errors import NotFoundError
    from kctl.parsing import select_topics

    names = ["orders", "orders.v1", "payments", "__consumer_offsets"]
    assert select_topics(names, []) == ["__consumer_offsets", "orders", "orders.v1", "payments"]
    assert select_topics(names, [], exclude_internal=True) == ["orders", "orders.v1", "payments"]
    assert select_topics(names, ["payments", "orders.*"]) == ["payments", "orders", "orders.v1"]
    assert select_topics(names, ["orders.v1"]) == ["orders.v1"]  # an exact name is not a regex
    for missing in (["nope"], ["nope.*"]):
        with pytest.raises(NotFoundError):
            select_topics(names, missing)
    with pytest.raises(UsageError):
        select_topics(names, ["bad[regex"])


# -- KEY=VALUE: one parser for configs, quotas, -X, --feature, --conf and --header -------------


def _usage_line(parse, *args, **kwargs) -> str:
    with pytest.raises(UsageError) as info:
        parse(*args, **kwargs)
    assert info.value.exit_code == 2
    return info.value.line()


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ("retention.ms=100", ("retention.ms", "100")),
        ("a=b=c", ("a", "b=c")),  # split at the first '='
        ("a=", ("a", "")),  # an empty value is a value
        (" a = b ", (" a ", " b ")),  # kept as typed
        (" =1", (" ", "1")),  # a blank key is a key unless it is stripped
    ],
)
def test_key_value_splits_at_the_first_equals_sign_and_keeps_both_sides_as_typed(item, expected):
    assert P.key_value(item, "--header") == expected


def test_key_value_strips_only_the_key_when_asked():
    assert P.key_value(" a = b ", "--conf", strip_key=True) == ("a", " b ")


@pytest.mark.parametrize("item", ["retention.ms", "=1", "", "="])
def test_key_value_without_equals_sign_or_key_names_the_option_and_the_form(item):
    line = _usage_line(P.key_value, item, "config", form="name=value")
    assert line == f"malformed config {item!r} (expected name=value)"


@pytest.mark.parametrize("item", [" =1", "\t=x"])
def test_key_value_with_a_blank_key_is_malformed_when_keys_are_stripped(item):
    line = _usage_line(P.key_value, item, "--conf", strip_key=True)
    assert line == f"malformed --conf {item!r} (expected key=value)"


def test_key_value_with_an_example_says_what_the_item_is_not():
    line = _usage_line(
        P.key_value, "share.version", "--feature", form="NAME=LEVEL", example="share.version=1"
    )
    assert line == "--feature 'share.version' is not NAME=LEVEL (e.g. share.version=1)"


def test_key_value_of_a_positional_argument_shows_the_item_alone():
    line = _usage_line(P.key_value, "rate", "", form="KEY=VALUE", example="producer_byte_rate=1")
    assert line == "'rate' is not KEY=VALUE (e.g. producer_byte_rate=1)"
    assert _usage_line(P.key_value, "rate", "") == "malformed 'rate' (expected key=value)"


@pytest.mark.parametrize(
    ("item", "ok"),
    [("f=1", True), ("f= -2 ", True), ("f=", False), ("f=1x", False), ("f=x1", False)],
)
def test_key_value_checks_the_whole_value_against_a_pattern(item, ok):
    parse = lambda: P.key_value(item, "--feature", value_pattern=r"\s*-?\d+\s*")  # noqa: E731
    if ok:
        assert parse() == ("f", item[2:])
    else:
        assert _usage_line(parse) == f"malformed --feature {item!r} (expected key=value)"


@pytest.mark.parametrize("item", ["hunter2", "=hunter2"])
def test_key_value_of_a_secret_never_shows_the_item(item):
    line = _usage_line(P.key_value, item, "-X", strip_key=True, secret=True)
    assert line == "malformed -X value (expected key=value)"
    assert "hunter2" not in line


# -- A..B ranges: metadata image --diff and dump-segment --offsets -----------------------------

_DIFF = {"hint": "two offsets, e.g. --diff 20..30"}
_OFFSETS = {"form": "FROM..TO", "hint": "e.g. 100..200", "open_ends": True, "single": True}


def test_offset_range_includes_both_ends():
    assert P.offset_range("20..30", "--diff", **_DIFF) == (20, 30)
    assert P.offset_range("7..7", "--diff", **_DIFF) == (7, 7)


@pytest.mark.parametrize("text", ["20", "20..", "..30", "..", "a..b", "1..2..3", "", "1.5..2"])
def test_offset_range_needs_two_whole_numbers_by_default(text):
    line = _usage_line(P.offset_range, text, "--diff", **_DIFF)
    assert line == f"--diff {text!r} is not A..B (two offsets, e.g. --diff 20..30)"


@pytest.mark.parametrize("text", ["30..20", "-1..5", "-3..-1"])
def test_offset_range_is_ordered_from_zero_by_default(text):
    line = _usage_line(P.offset_range, text, "--diff", **_DIFF)
    assert line == f"--diff {text!r}: want 0 <= A <= B"


def test_an_unordered_range_names_the_ends_as_its_form_does():
    line = _usage_line(P.offset_range, "9..1", "--offsets", form="FROM..TO", hint="")
    assert line == "--offsets '9..1': want 0 <= FROM <= TO"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("100..", (100, 2**63 - 1)), ("..200", (0, 200)), ("..", (0, 2**63 - 1)), ("5", (5, 5))],
)
def test_offset_range_with_open_ends_and_a_single_offset(text, expected):
    assert P.offset_range(text, "--offsets", **_OFFSETS) == expected


@pytest.mark.parametrize("text", ["x", "1..y", "..z", "1..2..3"])
def test_offset_range_with_open_ends_still_refuses_what_is_not_a_number(text):
    line = _usage_line(P.offset_range, text, "--offsets", **_OFFSETS)
    assert line == f"--offsets {text!r} is not FROM..TO (e.g. 100..200)"


def test_offset_range_unordered_when_asked_takes_any_integers():
    assert P.offset_range("200..100", "--offsets", **_OFFSETS, ordered=False) == (200, 100)
    assert P.offset_range("-5", "--offsets", **_OFFSETS, ordered=False) == (-5, -5)
    # the same texts refused when ordered (the default)
    assert "want 0 <= FROM <= TO" in _usage_line(P.offset_range, "-5", "--offsets", **_OFFSETS)


def test_listen_address_needs_an_explicit_host_and_a_port_in_range():
    from kctl.parsing import listen_address

    assert listen_address("127.0.0.1:9308", "--serve") == ("127.0.0.1", 9308)
    assert listen_address("[::1]:9308", "--serve") == ("::1", 9308)
    assert listen_address(" exporter.local:80 ", "--serve") == ("exporter.local", 80)
    for bad, line in (
        (":9308", "malformed --serve ':9308'"),
        ("9308", "malformed --serve '9308'"),
        ("::1:9308", "malformed --serve '::1:9308'"),
        ("host:", "malformed --serve 'host:'"),
        ("host:0", "--serve 'host:0': port 0 out of range"),
        ("host:70000", "--serve 'host:70000': port 70000 out of range"),
    ):
        with pytest.raises(UsageError) as info:
            listen_address(bad, "--serve")
        assert info.value.line().startswith(line), bad
