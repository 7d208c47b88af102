"""Numbers at the command line's boundary (kctl/arguments.py): every integer parameter is
bounded by the width Kafka gives it (int64 unless its declaration says int16 or int32, or a
narrower range), every float is finite; outside is one usage error naming the parameter and the
range, bounds written as integers. Generated from the command tree, so a new option is covered
without being listed. No cluster: -b points where nothing listens."""

from __future__ import annotations

import math

import pytest
from argument_tree import NOWHERE, failures, kind, params, run, usage_error

from kctl.arguments import out_of_range
from kctl.errors import UsageError
from kctl.parsing import INT16_MAX, INT32_MAX, INT64_MAX, INT64_MIN, number_text


def _label(p) -> str:  # type: ignore[no-untyped-def]
    name = "/".join(p.param.opts) if p.is_option else p.param.name
    return " ".join(["kctl", *p.words, name])


def _declared(p) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """The range a parameter's declaration gives (min/max), int64 where it gives none."""
    t = p.param.type
    low = getattr(t, "min", None)
    high = getattr(t, "max", None)
    return (INT64_MIN if low is None else int(low)), (INT64_MAX if high is None else int(high))


def test_every_integer_parameter_refuses_what_int64_cannot_hold() -> None:
    cases = []
    for p in params():
        if kind(p) != "int":
            continue
        for value in (2**63, -(2**63) - 1):
            check = usage_error(p.names(), f" {value} is out of range (")
            cases.append((f"{_label(p)} {value}", p.argv(str(value).encode()), check))
    assert len(cases) > 100
    assert failures(cases) == []


def test_every_declared_range_refuses_its_first_value_outside() -> None:
    cases = []
    for p in params():
        if kind(p) != "int":
            continue
        low, high = _declared(p)
        span = f"({low}..{high})"
        for value in (low - 1, high + 1):
            if INT64_MIN <= value <= INT64_MAX:
                check = usage_error(p.names(), f" {value} is out of range {span}")
                cases.append((f"{_label(p)} {value}", p.argv(str(value).encode()), check))
    assert len(cases) > 30
    assert failures(cases) == []


def test_every_float_parameter_is_finite() -> None:
    cases = [
        (f"{_label(p)} {v}", p.argv(v.encode()), usage_error(p.names(), "is not a finite number"))
        for p in params()
        if kind(p) == "float"
        for v in ("nan", "inf", "-inf", "1e999")
    ]
    assert len(cases) >= 20
    assert failures(cases) == []


def test_the_wire_widths_are_declared_where_kafka_gives_them() -> None:
    """Kafka's protocol: ProducerEpoch int16, replication factors int16, partition and node
    ids int32, fetch sizes int32."""
    by_label = {_label(p): _declared(p) for p in params() if kind(p) == "int"}
    assert by_label["kctl transactions abort --producer-epoch"] == (0, INT16_MAX)
    assert by_label["kctl transactions abort --coordinator-epoch"] == (-1, INT32_MAX)
    assert by_label["kctl transactions abort --partition"] == (0, INT32_MAX)
    assert by_label["kctl replicas validate --min-rf"] == (1, INT16_MAX)
    assert by_label["kctl replicas verify --max-bytes"] == (1024, INT32_MAX)
    assert by_label["kctl consume --partition"] == (0, INT32_MAX)
    assert by_label["kctl offsets get --partition/--partitions"] == (0, INT32_MAX)
    assert by_label["kctl configs describe --broker"] == (0, INT32_MAX)
    assert by_label["kctl quorum add-controller node_id"] == (0, INT32_MAX)
    assert by_label["kctl transactions list --producer-id"] == (INT64_MIN, INT64_MAX)


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["transactions", "list", "--duration-filter", "9223372036854775808"],
            "--duration-filter 9223372036854775808 is out of range (0..9223372036854775807)",
        ),
        (
            # the epoch is an int16: refused before the plan (it hung after printing it)
            [
                *("transactions", "abort", "--topic", "t", "--partition", "0"),
                *("--producer-epoch", "99999", "--execute"),
            ],
            "--producer-epoch 99999 is out of range (0..32767)",
        ),
        (
            ["replicas", "verify", "--offset", "9223372036854775808"],
            "--offset 9223372036854775808 is out of range (0..9223372036854775807)",
        ),
        (
            ["topics", "create", "t", "--partitions", "99999999999"],
            "--partitions 99999999999 is out of range (1..2147483647)",
        ),
        (
            ["perf", "produce", "t", "--num-records", "1000000000001"],
            "--num-records 1000000000001 is out of range (1..1000000000000)",
        ),
        (["--timeout", "nan", "topics", "list"], "--timeout nan is not a finite number"),
        (
            # the client library's admin calls take at most an hour (was: unexpected ValueError)
            ["--timeout", "32768", "groups", "list"],
            "--timeout 32768 is out of range (0 < SECONDS <= 3600)",
        ),
        (
            ["cluster", "unregister", "2147483648"],
            "BROKER 2147483648 is out of range (0..2147483647)",
        ),
    ],
)
def test_a_number_outside_its_wire_type_is_a_usage_error(argv: list[str], line: str) -> None:
    r = run([b"-b", NOWHERE.encode(), *(a.encode() for a in argv)])
    assert (r.code, r.stdout, r.stderr) == (2, "", f"kctl: error: {line}\n")


def test_range_errors_print_integer_bounds_as_integers() -> None:
    with pytest.raises(UsageError) as caught:
        out_of_range("--partitions", number_text(2**31), 1, INT32_MAX, False, False)
    assert caught.value.line() == "--partitions 2147483648 is out of range (1..2147483647)"
    with pytest.raises(UsageError) as caught:
        out_of_range("--rate", number_text(0.001), 0.01, 1e9, False, False)
    assert caught.value.line() == "--rate 0.001 is out of range (0.01..1000000000)"
    with pytest.raises(UsageError) as caught:
        out_of_range("--rate", number_text(math.nan), 0.01, 1e9, False, False)
    assert caught.value.line() == "--rate nan is out of range (0.01..1000000000)"
