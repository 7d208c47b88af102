"""Each analytics transform on tiny frames, on real local Spark, against values worked out by
hand in the test."""

from __future__ import annotations

import pytest
from analytics_support import BASE_TS, by_ts, frame, sample, series, spark  # noqa: F401

from kctl.analytics import burrow
from kctl.analytics import transforms as T


def statuses(spark, committed, leo, members=None, window=4):  # noqa: F811
    df = burrow.with_partition_status(frame(spark, series(committed, leo, members)), window)
    return by_ts(df, "status")


# --- Burrow's rules -------------------------------------------------------------------------


def test_lag_zero_anywhere_in_the_window_is_ok(spark):  # noqa: F811
    # lags 0, 5, 10, 10: the zero is still inside a window of 4 at the last sample
    assert statuses(spark, [0, 5, 10, 20], [0, 10, 20, 30])[-1] == "OK"


def test_lag_zero_leaving_the_window_lets_the_rules_speak(spark):  # noqa: F811
    # lags 0, 10, 20, 30, 40 with offsets advancing: window 4 at the last sample holds no zero
    assert statuses(spark, [0, 10, 20, 30, 40], [0, 20, 40, 60, 80]) == [
        "OK", "OK", "OK", "OK", "WARN",
    ]  # fmt: skip


def test_offsets_advancing_while_lag_never_decreases_is_warn(spark):  # noqa: F811
    growing = statuses(spark, [10, 20, 30, 40], [20, 40, 60, 80])  # lags 10 20 30 40
    fixed = statuses(spark, [10, 20, 30, 40], [20, 30, 40, 50])  # lags 10 10 10 10
    assert growing[-1] == "WARN"
    assert fixed[-1] == "WARN"  # Burrow: "fixed or increasing"


def test_lag_that_decreases_once_in_the_window_is_ok(spark):  # noqa: F811
    # lags 10, 20, 15, 30
    assert statuses(spark, [10, 20, 35, 40], [20, 40, 50, 70])[-1] == "OK"


def test_committed_offset_not_moving_with_a_live_member_is_stall(spark):  # noqa: F811
    assert statuses(spark, [10, 10, 10, 10], [20, 30, 40, 50])[-1] == "STALL"


def test_no_commit_for_longer_than_the_window_spans_is_stop(spark):  # noqa: F811
    # The member leaves after sample 3 (t=3s). Commit times: 0,1,2,3,3,3 s.
    # t=4: now-last = 1 s, last-first = 2 s (window 1..4)  -> not stopped; lag non-decreasing
    # t=5: window 2..5: now-last = 2 s > last-first = 1 s  -> STOP
    members = ["m", "m", "m", "m", None, None]
    got = statuses(spark, [10, 20, 30, 40, 40, 40], [20, 30, 40, 50, 60, 70], members)
    assert got[1:] == ["WARN", "WARN", "WARN", "WARN", "STOP"]


def test_committed_offset_going_backwards_is_rewind_before_anything_else(spark):  # noqa: F811
    # lags 20, 20, 35, 35; no member either (STOP would hold too): REWIND is checked first
    got = statuses(spark, [10, 20, 15, 25], [30, 40, 50, 60], [None] * 4)
    assert got[-1] == "REWIND"


def test_current_lag_zero_is_ok_whatever_came_before(spark):  # noqa: F811
    assert statuses(spark, [10, 10, 10, 50], [50, 50, 50, 50])[-1] == "OK"


def test_negative_lag_is_never_ok(spark):  # noqa: F811
    # A sample reads the commit before the log end, so a negative lag is real: the log ends
    # before the commit (truncated or recreated under it). Burrow would store 0 and say OK.
    assert statuses(spark, [10, 20, 60], [30, 40, 50]) == ["STALL", "WARN", "NEGATIVE"]
    # caught up (lag 0) and then the log is cut under the commit: NEGATIVE, not OK
    assert statuses(spark, [50, 50, 50], [50, 50, 20])[-1] == "NEGATIVE"


def test_a_negative_lag_in_the_window_is_not_the_lag_zero_of_rule_1(spark):  # noqa: F811
    # lags -10, 10, 20, 30 with offsets advancing: no lag zero in the window, lag growing: WARN
    got = statuses(spark, [60, 60, 70, 80], [50, 70, 90, 110])
    assert got == ["NEGATIVE", "STALL", "WARN", "WARN"]


def test_negative_lag_makes_the_group_err_and_the_topic_negative(spark):  # noqa: F811
    ok = series([0, 10, 20], [0, 10, 20], partition=0)  # lag 0 throughout: OK
    cut = series([10, 20, 500], [10, 20, 100], partition=1)  # lags 0, 0, -400
    enriched = T.enrich(frame(spark, ok + cut), 4)
    parts = {r["partition"]: r for r in T.partition_summary(enriched).collect()}
    assert (parts[0]["status"], parts[1]["status"]) == ("OK", "NEGATIVE")
    assert parts[1]["lag"] == -400 and parts[1]["catch_up_s"] is None
    topic = T.rollup(T.series(enriched, T.TOPIC_KEYS), T.partition_summary(enriched),
                     T.TOPIC_KEYS).first()  # fmt: skip
    group = T.rollup(T.series(enriched, T.GROUP_KEYS), T.partition_summary(enriched),
                     T.GROUP_KEYS).first()  # fmt: skip
    assert topic["status"] == "NEGATIVE" and group["status"] == "ERR"
    assert group["lag"] == 0  # the negative partition counts 0 in the sum, not -400


def test_sample_without_a_committed_offset_has_no_status(spark):  # noqa: F811
    assert statuses(spark, [-1, -1], [10, 20]) == [None, None]


def test_window_complete_is_the_share_of_the_window_filled(spark):  # noqa: F811
    df = burrow.with_partition_status(frame(spark, series([1, 2, 3], [5, 6, 7])), 4)
    assert by_ts(df, "window_complete") == [0.25, 0.5, 0.75]


def test_spark_statuses_are_the_rules_of_kctl_lag_burrow_across_arrow_batches(spark):  # noqa: F811
    # One implementation: every sample's status and window_complete in Spark equal
    # kctl.lag.burrow.statuses over its partition's samples, also when a partition's samples
    # are split across Arrow batches of 3 rows (the window carries on) and partitions
    # of several groups interleave.
    import random

    from kctl.lag import burrow as rules

    rnd = random.Random(33)
    rows = []
    for group in ("a", "b"):
        for partition in range(3):
            committed, leo = [], []
            c, e = 0, 0
            for _ in range(12):
                e += rnd.choice([0, 0, 5, 10])
                c = rnd.choice([c, c, min(c + 5, e), e, max(c - 3, 0), -1 if c == 0 else c])
                committed.append(c)
                leo.append(e)
            members = [rnd.choice(["m", None]) for _ in committed]
            rows += series(committed, leo, members, group=group, partition=partition)
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "3")
    try:
        got = burrow.with_partition_status(frame(spark, rows), 4).collect()
    finally:
        spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")
    spark_rows = {(r["group"], r["partition"], r["ts_ms"]): r for r in got}
    assert len(spark_rows) == len(rows)
    for group in ("a", "b"):
        for partition in range(3):
            mine = sorted(
                (r for r in rows if (r["group"], r["partition"]) == (group, partition)),
                key=lambda r: r["ts_ms"],
            )
            entries = [
                rules.Entry(r["ts_ms"], r["committed_offset"], r["lag"], r["member_id"])
                for r in mine
            ]
            expected = rules.statuses(entries, 4)
            judged = [spark_rows[(group, partition, r["ts_ms"])] for r in mine]
            assert [(r["status"], r["window_complete"]) for r in judged] == expected


def _group_status(spark, partition_statuses):  # noqa: F811
    from pyspark.sql import functions as F

    rows = [(s,) for s in partition_statuses]
    df = spark.createDataFrame(rows, "status string")
    return df.agg(burrow.group_status(F.col("status")).alias("s")).first()["s"]


def test_group_status_is_the_worst_partition_with_stop_stall_rewind_as_err(spark):  # noqa: F811
    assert _group_status(spark, ["OK", "OK"]) == "OK"
    assert _group_status(spark, ["OK", "WARN"]) == "WARN"
    assert _group_status(spark, ["WARN", "STOP"]) == "ERR"
    assert _group_status(spark, ["OK", "STALL"]) == "ERR"
    assert _group_status(spark, ["REWIND", "OK"]) == "ERR"
    assert _group_status(spark, ["NEGATIVE", "OK"]) == "ERR"
    assert _group_status(spark, [None, "OK"]) == "OK"


# --- time lag -------------------------------------------------------------------------------


def _time_lag(spark, committed, leo):  # noqa: F811
    df = T.with_time_lag(frame(spark, series(committed, leo)))
    rows = df.orderBy("ts_ms").collect()
    return [(r["time_lag_s"], r["time_lag_extrapolated"]) for r in rows]


def test_time_lag_interpolates_between_log_end_offset_points(spark):  # noqa: F811
    # LEO 100 @0s, 200 @1s, 300 @2s; committed 150 at t=2s: LEO was 150 at 0.5 s -> 1.5 s behind
    assert _time_lag(spark, [100, 200, 150], [100, 200, 300])[-1] == (1.5, False)


def test_time_lag_of_an_offset_on_a_flat_stretch_is_from_its_last_time(spark):  # noqa: F811
    # LEO 100 @0s and @1s, 200 @2s, 300 @3s; committed 100 at t=3s: LEO left 100 after 1 s
    assert _time_lag(spark, [100, 100, 200, 100], [100, 100, 200, 300])[-1] == (2.0, False)


def test_time_lag_below_the_table_is_extrapolated_and_marked(spark):  # noqa: F811
    # first point (100 @0s), own point (300 @2s): 100 offsets/s, so offset 50 was at -0.5 s
    assert _time_lag(spark, [100, 200, 50], [100, 200, 300])[-1] == (2.5, True)


def test_time_lag_is_zero_when_caught_up_and_null_without_a_commit(spark):  # noqa: F811
    assert _time_lag(spark, [100, -1], [100, 200]) == [(0.0, False), (None, None)]


def test_time_lag_uses_the_log_end_offsets_other_groups_saw(spark):  # noqa: F811
    # group "a" sampled LEO 100 @0s and 200 @1s; group "b" only at 2 s, committed 150
    rows = [
        sample(0, 100, 100, group="a"),
        sample(1, 200, 200, group="a"),
        sample(2, 150, 300, group="b"),
    ]
    df = T.with_time_lag(frame(spark, rows)).filter("group = 'b'").first()
    assert (df["time_lag_s"], df["time_lag_extrapolated"]) == (1.5, False)


# --- rates, summaries, trend, catch-up, roll-ups ----------------------------------------------


def test_rates_come_from_consecutive_samples(spark):  # noqa: F811
    df = T.with_rates(frame(spark, series([0, 50, 50], [0, 100, 300])))
    assert by_ts(df, "production_rate") == [None, 100.0, 200.0]
    assert by_ts(df, "consumption_rate") == [None, 50.0, 0.0]


def test_partition_summary_lag_statistics_trend_and_rates(spark):  # noqa: F811
    # lags 0, 50, 150, 200 at 0..3 s
    enriched = T.enrich(frame(spark, series([0, 50, 50, 100], [0, 100, 200, 300])), 4)
    row = T.partition_summary(enriched).first()
    assert (row["lag"], row["max_lag"], row["mean_lag"], row["p95_lag"]) == (200, 200, 100.0, 200)
    # slope: cov(x, y) = 87.5, var(x) = 1.25 -> 70 offsets/s
    assert row["lag_trend"] == pytest.approx(70.0)
    assert row["production_rate"] == pytest.approx(100.0)
    assert row["consumption_rate"] == pytest.approx(100 / 3)
    assert row["catch_up_s"] is None  # consuming slower than producing: never
    assert row["samples"] == 4
    assert row["status"] == "OK"  # the window of 4 still holds the lag of 0


def test_p95_is_the_nearest_rank(spark):  # noqa: F811
    enriched = T.enrich(frame(spark, series([0] * 20, list(range(1, 21)))), 4)
    row = T.partition_summary(enriched).first()
    assert (row["p95_lag"], row["mean_lag"]) == (19, 10.5)


def test_catch_up_time_at_the_net_rate(spark):  # noqa: F811
    # lags 200, 150, 50; producing 100 offsets in 2 s, consuming 250: net 75/s, 50 left
    enriched = T.enrich(frame(spark, series([0, 100, 250], [200, 250, 300])), 4)
    row = T.partition_summary(enriched).first()
    assert row["catch_up_s"] == pytest.approx(50 / 75)


def test_topic_and_group_rollups_sum_lag_per_sample_time(spark):  # noqa: F811
    p0 = series([0, 0, 0], [0, 10, 20], partition=0)  # lags 0, 10, 20
    p1 = series([0, 0, 0], [5, 5, 5], partition=1)  # lags 5, 5, 5
    enriched = T.enrich(frame(spark, p0 + p1), 4)
    parts = T.partition_summary(enriched)
    topic = T.rollup(T.series(enriched, T.TOPIC_KEYS), parts, T.TOPIC_KEYS).first()
    group = T.rollup(T.series(enriched, T.GROUP_KEYS), parts, T.GROUP_KEYS).first()
    for row in (topic, group):
        assert (row["lag"], row["max_lag"], row["mean_lag"]) == (25, 25, 15.0)
        assert row["partitions"] == 2
        assert row["production_rate"] == pytest.approx(10.0)
        assert row["lag_trend"] == pytest.approx(10.0)
    assert topic["status"] == "STALL"  # p1: offset 0 never moves under a live member, lag 5
    assert group["status"] == "ERR"


def test_laggards_are_the_partitions_with_the_most_lag(spark):  # noqa: F811
    rows = (
        series([0, 0], [1, 2], partition=0)
        + series([0, 0], [7, 9], partition=1)
        + series([0, 0], [3, 4], partition=2)
    )
    parts = T.partition_summary(T.enrich(frame(spark, rows), 4))
    assert [r["partition"] for r in T.laggards(parts, 2).collect()] == [1, 2]


def test_group_series_carries_the_group_status_at_every_sample(spark):  # noqa: F811
    stalled = series([10, 10, 10], [20, 30, 40], partition=0)
    fine = series([1, 2, 3], [1, 2, 3], partition=1)
    s = T.series(T.enrich(frame(spark, stalled + fine), 2), T.GROUP_KEYS)
    assert by_ts(s, "status") == ["ERR", "ERR", "ERR"]
    assert by_ts(s, "ts_ms") == [BASE_TS, BASE_TS + 1000, BASE_TS + 2000]


def test_the_rule_modules_shipped_to_spark_workers_work_without_kctl_installed(tmp_path):
    # runner.build_session ships this zip with every job: a worker with neither kctl nor
    # site-packages imports the Arrow step and its rules from it alone.
    import subprocess
    import sys

    from kctl.analytics import runner

    archive = runner.rules_archive()
    code = (
        "import sys; sys.path[:] = [sys.argv[1]] + [p for p in sys.path if 'site-packages' not in p]\n"
        "from kctl.analytics import burrow\n"
        "from kctl.lag import burrow as rules\n"
        "assert burrow.__file__.startswith(sys.argv[1]), burrow.__file__\n"
        "entries = [rules.Entry(i, 10, 5, 'm') for i in range(3)]\n"
        "print([s for s, _ in rules.statuses(entries, 3)])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code, archive], capture_output=True, text=True, timeout=60,
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['STALL', 'STALL', 'STALL']"
