"""kctl analytics lag on files: JSONL and Parquet inputs (files, directories, globs), the
output formats, --out Parquet tables, --plot PNG/HTML, and one-line errors."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from analytics_support import series

SPARK = ("--master", "local[2]", "--conf", "spark.sql.shuffle.partitions=2")


def _stopped_and_fine() -> list[dict]:
    # "stop": commits until sample 4, then its member leaves while the log grows 10/s.
    leo = [10 * (i + 1) for i in range(12)]
    stop = series(
        [min(e, 50) for e in leo], leo, ["m"] * 5 + [None] * 7, group="stop", topic="orders"
    )
    fine = series(leo, leo, group="fine", topic="orders")
    return stop + fine


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_jsonl_file_gives_group_status_lag_and_time_lag_as_json(offline_kctl, tmp_path):
    src = _write_jsonl(tmp_path / "lag.jsonl", _stopped_and_fine())
    with src.open("a") as fh:
        fh.write('{"ts_ms": 17000000')  # a recorder cut short mid-line: dropped
    out = tmp_path / "report"
    png = tmp_path / "lag.png"
    r = offline_kctl(
        "analytics", "lag", str(src), "--window", "5", "--out", str(out), "--plot", str(png),
        *SPARK, "-o", "json", timeout=240,
    )  # fmt: skip
    assert r.code == 0, r
    doc = json.loads(r.stdout)
    groups = {g["group"]: g for g in doc["groups"]}
    assert groups["stop"]["status"] == "ERR"
    assert (groups["stop"]["lag"], groups["stop"]["time_lag_s"]) == (70, 7.0)
    assert groups["fine"]["status"] == "OK"
    assert (groups["fine"]["lag"], groups["fine"]["catch_up_s"]) == (0, 0.0)
    assert doc["laggards"][0]["group"] == "stop"
    assert doc["laggards"][0]["status"] == "STOP"
    assert "kctl: starting Spark" in r.stderr  # people's progress on stderr, data on stdout
    # Spark's launcher noise is not passed on; only kctl's lines remain
    for noise in ("Using incubator modules", "Setting default log level", "sc.setLogLevel"):
        assert noise not in r.stderr, r.stderr
    assert all(line.startswith("kctl: ") for line in r.stderr.splitlines()), r.stderr
    for table in ("groups", "topics", "partitions", "group_series", "samples"):
        assert list((out / table).glob("*.parquet")), table
    import pyarrow.parquet as pq

    parts = pq.read_table(out / "partitions").to_pylist()
    assert {(p["group"], p["status"]) for p in parts} == {("stop", "STOP"), ("fine", "OK")}
    assert pq.read_table(out / "samples").num_rows == 24
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_parquet_glob_at_partition_level_as_csv_with_an_html_plot(offline_kctl, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from kctl.lag.samples import SAMPLE_FIELDS

    rows = _stopped_and_fine()
    schema = pa.schema([(n, getattr(pa, k)()) for n, k in SAMPLE_FIELDS])
    (tmp_path / "samples").mkdir()
    half = len(rows) // 2
    pq.write_table(pa.Table.from_pylist(rows[:half], schema), tmp_path / "samples" / "a.parquet")
    pq.write_table(pa.Table.from_pylist(rows[half:], schema), tmp_path / "samples" / "b.parquet")
    page = tmp_path / "lag.html"
    r = offline_kctl(
        "analytics", "lag", str(tmp_path / "samples" / "*.parquet"), "--level", "partition",
        "--top", "1", "--window", "5", "--plot", str(page), *SPARK, "-o", "csv", timeout=240,
    )  # fmt: skip
    assert r.code == 0, r
    table = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [(t["group"], t["topic"], t["partition"], t["status"]) for t in table] == [
        ("stop", "orders", "0", "STOP")
    ]
    text = page.read_text()
    assert "<svg" in text and "stop" in text and "fine" in text


def test_missing_input_is_one_line_without_starting_spark(offline_kctl, tmp_path):
    r = offline_kctl("analytics", "lag", str(tmp_path / "nope.jsonl"))
    assert r.code == 1
    assert r.stderr.strip() == (
        f"kctl: error: no lag samples at {tmp_path / 'nope.jsonl'} (no such file or directory)"
    )
    assert r.stdout == ""


def test_no_input_and_no_live_is_a_usage_error(offline_kctl):
    r = offline_kctl("analytics", "lag")
    assert r.code == 2
    assert "give lag-sample files (groups lag --record), or --live" in r.stderr


def test_a_file_of_unknown_format_is_a_usage_error(offline_kctl, tmp_path):
    (tmp_path / "lag.txt").write_text("x\n")
    r = offline_kctl("analytics", "lag", str(tmp_path / "lag.txt"))
    assert r.code == 2
    assert "cannot tell the format of" in r.stderr


def test_missing_java_is_one_line_naming_the_fix(offline_kctl, tmp_path):
    import os
    import sys

    src = _write_jsonl(tmp_path / "lag.jsonl", _stopped_and_fine())
    # PATH keeps only the interpreter's directory: no java there, and no JAVA_HOME.
    env = {"PATH": os.path.dirname(sys.executable), "JAVA_HOME": ""}
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "kctl", "analytics", "lag", str(src)],
        capture_output=True,
        text=True,
        env={**{k: v for k, v in os.environ.items() if k not in env}, **env},
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        "kctl: error: Java was not found (install a Java 17 or 21 runtime, or set JAVA_HOME)"
    )


def test_help_ends_with_examples(offline_kctl):
    r = offline_kctl("analytics", "lag", "--help")
    assert r.code == 0
    assert "kctl analytics lag lag.jsonl" in r.stdout


def test_a_duration_reads_like_an_operator_writes_it():
    from kctl.commands.analytics import parse_duration  # kctl.parsing.duration in seconds

    assert parse_duration("10m", "--duration") == 600
    assert parse_duration("1h30m", "--duration") == 5400
    assert parse_duration("500ms", "--interval") == 0.5
    assert parse_duration("15", "--interval") == 15
    from kctl.errors import UsageError

    with pytest.raises(UsageError):
        parse_duration("ten minutes", "--duration")


def test_missing_pyspark_is_one_line_naming_the_extra(tmp_path):
    import os
    import subprocess
    import sys

    src = _write_jsonl(tmp_path / "lag.jsonl", _stopped_and_fine())
    # An interpreter on which `import pyspark` fails, as on an install without the extra.
    code = (
        "import runpy, sys; sys.modules['pyspark'] = None; "
        f"sys.argv = ['kctl', 'analytics', 'lag', {str(src)!r}]; "
        "runpy.run_module('kctl', run_name='__main__')"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ),
        timeout=60,
    )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        "kctl: error: pyspark is not installed (pip install 'kctl[spark]')"
    )
    assert proc.stdout == ""


def test_live_record_must_be_jsonl(offline_kctl, tmp_path):
    r = offline_kctl(
        "analytics", "lag", "--live", "--duration", "1s", "--record", str(tmp_path / "x.csv")
    )
    assert r.code == 2
    assert "live samples are written as .jsonl" in r.stderr


def test_a_file_that_is_not_lag_samples_is_named_before_spark_starts(offline_kctl, tmp_path):
    src = tmp_path / "other.jsonl"
    src.write_text('{"user": "alice", "ts_ms": 5}\n{"user": "bob"}\n')
    r = offline_kctl("analytics", "lag", str(src), *SPARK, timeout=60)
    assert r.code == 2, r
    assert r.stderr == (
        f"kctl: error: {src} line 1 is not a lag sample (no group)\n"
    )  # one line, and Spark never started
    rows = _stopped_and_fine()
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(
        json.dumps(rows[0]) + "\n" + '{"ts_ms": "soon"}\n'
        + "".join(json.dumps(r) + "\n" for r in rows[1:])
    )  # fmt: skip
    from kctl.analytics.schema import check_jsonl

    assert check_jsonl([str(mixed)]) == [
        f"{mixed} line 2 is not a lag sample (ts_ms is not an integer): skipped"
    ]
