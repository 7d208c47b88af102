"""Malformed values of every option that takes a number, a date, a duration, a partition or a
file: each is a usage error (exit 2) in one line naming the option and what is allowed, decided
before anything is sent. The cluster address points nowhere: a value that got through would
end in a connection error (exit 1) instead."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import kctl_environment, run_kctl

NOWHERE = "127.0.0.1:1"

CASES = [
    (["--timeout", "inf", "topics", "list"], "--timeout"),
    (["--timeout", "nan", "topics", "list"], "--timeout"),
    (["--timeout", "-1", "topics", "list"], "--timeout"),
    (["--timeout", "99999999", "topics", "list"], "--timeout"),
    (["topics", "create", "t", "--partitions", "2147483648"], "--partitions"),
    (["topics", "create", "t", "--partitions", "0"], "--partitions"),
    (["topics", "create", "t", "--replication-factor", "40000"], "--replication-factor"),
    (["topics", "add-partitions", "t", "--partitions", "2147483648"], "--partitions"),
    (["records", "delete", "t", "--before", "99999999999999999999", "--yes"], "--before"),
    (["records", "delete", "t", "--before", "-2", "--yes"], "--before"),
    (["records", "delete", "t", "--before", "4294967296:1", "--yes"], "--before"),
    (["offsets", "get", "t", "--time", "@99999999999999999999"], "time"),
    (["groups", "reset-offsets", "g", "--topic", "t1:-1", "--to-earliest"], "--topic"),
    (["groups", "reset-offsets", "g", "-t", "t", "--to-datetime", "0001-01-01T00:00:00"],
     "--to-datetime"),
    (["groups", "reset-offsets", "g", "-t", "t", "--by-duration", "P1000000000D"],
     "--by-duration"),
    (["groups", "reset-offsets", "g", "-t", "t", "--by-duration", "soon"], "--by-duration"),
    (["perf", "produce", "t", "--record-size", "4000000000"], "--record-size"),
    (["perf", "produce", "t", "--num-records", "100000000000000000000"], "--num-records"),
    (["perf", "produce", "t", "--throughput", "nan"], "--throughput"),
    (["perf", "consume", "t", "--messages", "0"], "--num-records"),
    (["perf", "consume", "t", "--idle-timeout", "inf"], "--idle-timeout"),
    (["local", "up", "--port", "65536"], "--port"),
    (["local", "up", "--port", "-1"], "--port"),
    (["local", "up", "--port", "1e20"], "--port"),
    (["local", "up", "--brokers", "0"], "--brokers"),
    (["local", "up", "--wait", "inf"], "--wait"),
    (["analytics", "lag", "--live", "--duration", "forever"], "--duration"),
    (["-X", "secret-without-key", "topics", "list"], "-X"),
    (["consume", "t", "--consumer-property", "nokey"], "--consumer-property"),
    (["perf", "produce", "t", "--producer-prop", "nokey"], "--producer-prop"),
    (["perf", "consume", "t", "--consumer-prop", "nokey"], "--consumer-prop"),
    (["produce", "t", "--rate", "nan"], "--rate"),
    (["produce", "t", "--rate", "inf"], "--rate"),
    (["produce", "t", "--rate", "1e-300"], "--rate"),
    (["produce", "t", "--key", "\\x"], "--key"),
    (["produce", "t", "--key-separator", "\\u12"], "--key-separator"),
    (["consume", "t", "--template", "{offset:%%%}"], "--template"),
    (["consume", "t", "--template", "{offset!z}"], "--template"),
    (["consume", "t", "--template", "{offset[0]}"], "--template"),
    (["consume", "t", "--template", "{offset"], "--template"),
    (["consume", "t", "--max-messages", "0"], "--max-messages"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "option"), CASES, ids=lambda v: " ".join(v) if isinstance(v, list) else v
)
def test_a_malformed_value_is_a_usage_error_naming_the_option(tmp_path, args, option):
    env = kctl_environment(
        KCTL_BOOTSTRAP_SERVERS=NOWHERE,
        KCTL_CONFIG=str(tmp_path / "config.yaml"),
        KCTL_STATE_DIR=str(tmp_path / "state"),
    )
    r = run_kctl(env, *args, timeout=60)
    assert r.code == 2, r
    assert r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert line.startswith("kctl: error: ") and option in line, line
    assert "unexpected" not in line and "cannot connect" not in line


@pytest.mark.parametrize(
    ("option", "args"),
    [
        ("--offsets-json", ["records", "delete", "--offsets-json", "{path}", "--yes"]),
        ("--from-file", ["groups", "reset-offsets", "g", "--from-file", "{path}"]),
        ("--command-config", ["--command-config", "{path}", "topics", "list"]),
    ],
)
def test_a_file_that_is_not_utf8_is_a_usage_error_naming_the_option(tmp_path, option, args):
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"t,0,5\n\xe9t\xe9,1,2\n")
    env = kctl_environment(
        KCTL_BOOTSTRAP_SERVERS=NOWHERE, KCTL_CONFIG=str(tmp_path / "config.yaml")
    )
    r = run_kctl(env, *[a.format(path=path) for a in args])
    assert r.code == 2, r
    assert r.stderr == (
        f"kctl: error: {option} {path} is not UTF-8 text (undecodable byte at offset 6)\n"
    )


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        (
            '{"topic": "t", "partition": 0, "offset": 1e300}',
            "partitions[0].offset must be an integer",
        ),
        (
            '{"topic": "t", "partition": 1e20, "offset": 1}',
            "partitions[0].partition must be an integer",
        ),
        (
            '{"topic": "t", "partition": 4294967296, "offset": 1}',
            "partitions[0].partition is out of range",
        ),
        ('{"topic": "t", "partition": 0, "offset": -5}', "partitions[0].offset is out of range"),
        ('{"topic": "", "partition": 0, "offset": 1}', "partitions[0] needs a topic name"),
    ],
)
def test_a_delete_records_file_with_impossible_numbers_is_refused(tmp_path: Path, entry, why):
    path = tmp_path / "plan.json"
    path.write_text('{"version": 1, "partitions": [' + entry + "]}")
    env = kctl_environment(
        KCTL_BOOTSTRAP_SERVERS=NOWHERE, KCTL_CONFIG=str(tmp_path / "config.yaml")
    )
    r = run_kctl(env, "records", "delete", "--offsets-json", str(path), "--yes")
    assert r.code == 2, r
    assert r.stderr == f"kctl: error: malformed {path} ({why})\n"
