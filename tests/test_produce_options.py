"""kctl.produce.options: produce's options checked without a broker (the refusals, the
defaults they settle, the escapes), and handed over to the sender's ProduceOptions whole."""

from __future__ import annotations

import dataclasses

import pytest

from kctl.errors import UsageError
from kctl.produce.options import Options, check, unescape


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"input_format": "xml"}, "unknown --format 'xml' (expected lines or jsonl)"),
        (
            {"partitioner": "fnv"},
            "unknown --partitioner 'fnv' (murmur2_random|consistent_random|random)",
        ),
        ({"compression": "brotli"}, "unknown --compression 'brotli' (none|gzip|snappy|lz4|zstd)"),
        ({"acks": "2"}, "unknown --acks '2' (expected 0, 1 or all)"),
        (
            {"key": "k", "files": ["a.txt"]},
            "--key/--value send one record and cannot be combined with --file",
        ),
        (
            {"value": "v", "input_format": "jsonl"},
            "--key/--value cannot be combined with --format jsonl",
        ),
        (
            {"input_format": "jsonl", "key_separator": ","},
            "--key-separator and --null-marker apply to --format lines only",
        ),
        (
            {"input_format": "jsonl", "null_marker": "N"},
            "--key-separator and --null-marker apply to --format lines only",
        ),
        (
            {"idempotence": True, "acks": "1"},
            "--idempotence needs --acks all (--acks 1 was given)",
        ),
        (
            {"transactional_id": "t", "acks": "0"},
            "--transactional-id needs --acks all (--acks 0 was given)",
        ),
        ({"rate": 0.0}, "--rate must be above 0"),
        ({"partition": -1}, "--partition must be >= 0"),
        ({"partition": 2**31}, "--partition 2147483648 is out of range (0..2147483647)"),
        ({"linger_ms": -1}, "--linger-ms -1 is out of range (0..900000, librdkafka's linger.ms)"),
        ({"linger_ms": 900_001}, "--linger-ms 900001 is out of range (0..900000"),
        ({"batch_size": 0}, "--batch-size 0 is out of range (1..2147483647, librdkafka's batch"),
        ({"batch_size": 2**63}, "--batch-size 9223372036854775808 is out of range (1..2147483647"),
        ({"key_separator": ""}, "--key-separator must not be empty"),
        (
            {"key_separator": "\\x"},
            "malformed escape in --key-separator '\\\\x' "
            "(truncated \\xXX escape; write a backslash as \\\\)",
        ),
        ({"value": "a\\x"}, "malformed escape in --value 'a\\\\x'"),
        ({"key": "\\u12"}, "malformed escape in --key '\\\\u12'"),
        ({"header": ["=v"]}, "malformed --header '=v' (expected key=value)"),
    ],
)
def test_each_refused_option_is_a_usage_error_with_its_message(options, message):
    with pytest.raises(UsageError) as caught:
        check("orders", **options)
    assert caught.value.line().startswith(message), caught.value.line()
    assert caught.value.exit_code == 2


def test_the_first_wrong_option_in_the_documented_order_is_the_one_reported():
    with pytest.raises(UsageError, match="unknown --format"):
        check("t", input_format="xml", acks="2", partition=-1)
    with pytest.raises(UsageError, match="--idempotence needs"):
        check("t", idempotence=True, acks="0", rate=0.0, key_separator="")


def test_acks_minus_one_is_all_and_idempotence_follows_acks_unless_given():
    assert check("t").acks == "all" and check("t").idempotence is True
    assert check("t", acks="-1").acks == "all"
    assert check("t", acks="-1", idempotence=True).idempotence is True
    assert check("t", acks="1").idempotence is False
    assert check("t", acks="0").idempotence is False
    assert check("t", idempotence=False).idempotence is False


def test_key_and_value_make_the_single_record_with_escapes_and_no_stdin_or_files():
    opts = check("t", key="id\\t7", value='{"n": 7}\\n')
    assert opts.single == (b'{"n": 7}\n', b"id\t7", None, None, None)
    assert opts.files == ()
    assert check("t", value="v").single == (b"v", None, None, None, None)
    assert check("t").single is None
    assert check("t", files=["a", "b"]).files == ("a", "b")


def test_separator_and_null_marker_are_unescaped_bytes_and_jsonl_is_a_flag():
    opts = check("t", key_separator="\\t", null_marker="NULL")
    assert (opts.key_separator, opts.null_marker, opts.jsonl) == (b"\t", b"NULL", False)
    assert check("t", input_format="jsonl").jsonl is True
    assert unescape("a\\\\b") == b"a\\b" and unescape("plain") == b"plain"
    assert unescape("\\xe9") == b"\xe9"  # a byte, not UTF-8 of U+00E9
    assert unescape(None) is None


def test_headers_are_key_value_pairs_in_order_with_repeats_and_empty_values():
    assert check("t", header=["a=1", "b=", "a=x=y"]).headers == [
        ("a", b"1"),
        ("b", b""),
        ("a", b"x=y"),
    ]
    with pytest.raises(UsageError, match=r"malformed --header 'nokey'"):
        check("t", header=["nokey"])
    with pytest.raises(UsageError, match=r"malformed --header '=v'"):
        check("t", header=["=v"])


def test_sending_carries_exactly_the_fields_of_the_senders_produce_options():
    from kctl.broker.produce import ProduceOptions

    opts = check(
        "orders",
        partition=2,
        partitioner="random",
        header=["h=v"],
        compression="zstd",
        acks="all",
        linger_ms=5,
        batch_size=1000,
        rate=10.0,
        transactional_id="tx",
        key_separator=",",
        null_marker="N",
        offsets=False,
        max_line_bytes=4096,
    )
    built = opts.sending()
    assert type(built) is ProduceOptions
    assert dataclasses.asdict(built) == {
        "topic": "orders",
        "partition": 2,
        "partitioner": "random",
        "headers": [("h", b"v")],
        "compression": "zstd",
        "acks": "all",
        "idempotence": True,
        "linger_ms": 5,
        "batch_size": 1000,
        "rate": 10.0,
        "transactional_id": "tx",
        "key_separator": b",",
        "null_marker": b"N",
        "jsonl": False,
        "offsets": False,
        "max_line_bytes": 4096,
        "typed": None,  # set by the command once the schemas are resolved (produce.typed)
    }
    assert {f.name for f in dataclasses.fields(Options)} - set(dataclasses.asdict(built)) == {
        "files",
        "single",
    }


def test_the_ends_of_each_integer_range_are_accepted():
    low = check("t", partition=0, linger_ms=0, batch_size=1)
    high = check("t", partition=2**31 - 1, linger_ms=900_000, batch_size=2**31 - 1)
    assert (low.linger_ms, low.batch_size, high.linger_ms, high.batch_size) == (
        0, 1, 900_000, 2**31 - 1,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--linger-ms", "-1"], "kctl: error: --linger-ms -1 is out of range (0..900000"),
        (["--batch-size", "0"], "kctl: error: --batch-size 0 is out of range (1..2147483647"),
        (["--batch-size", "9223372036854775808"], "--batch-size"),
    ],
)
def test_an_option_out_of_range_is_a_usage_error_before_anything_is_sent(args, message):
    # Nothing listens on the bootstrap address: the refusal comes before any connection.
    from conftest import kctl_environment, run_kctl

    env = kctl_environment(KCTL_BOOTSTRAP_SERVERS="127.0.0.1:1")
    r = run_kctl(env, "produce", "t", *args, input="a\n", timeout=60)
    assert r.code == 2 and r.stdout == "", r
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("kctl: error:") and message in line, r
    assert "value -1" not in line


@pytest.mark.parametrize("value", [0, -1, 2**30 + 1])
def test_max_line_bytes_out_of_range_is_a_usage_error(value):
    with pytest.raises(UsageError, match=rf"--max-line-bytes {value} is out of range \(1\.\."):
        check("t", max_line_bytes=value)
