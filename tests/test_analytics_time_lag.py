"""Time lag in analytics, on real local Spark: the exact figure of samples that carry
``time_lag_ms`` (``groups lag --time-lag``), kafka-lag-exporter's estimate for samples without
it, each figure marked (``time_lag_estimated``); and samples written before the field existed
(JSONL lines without it, Parquet files of the old schema) still read and analyse."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from analytics_support import frame, sample, series, spark  # noqa: F401

from kctl.analytics import transforms as T
from kctl.analytics.schema import read_samples

# The lag sample before group_type and time_lag_ms were added (fields are only ever added, at
# the end: this is the schema samples were recorded with until then).
OLD_FIELDS = (
    ("ts_ms", "int64"),
    ("cluster", "string"),
    ("group", "string"),
    ("topic", "string"),
    ("partition", "int32"),
    ("committed_offset", "int64"),
    ("log_start_offset", "int64"),
    ("log_end_offset", "int64"),
    ("lag", "int64"),
    ("group_state", "string"),
    ("member_id", "string"),
    ("client_id", "string"),
    ("host", "string"),
)


def _with_time_lag(
    rows: list[dict[str, Any]], time_lag_ms: list[int | None]
) -> list[dict[str, Any]]:
    return [{**r, "time_lag_ms": t} for r, t in zip(rows, time_lag_ms, strict=True)]


def _figures(spark, rows):  # noqa: F811
    df = T.with_time_lag(frame(spark, rows)).orderBy("ts_ms").collect()
    return [(r["time_lag_s"], r["time_lag_estimated"], r["time_lag_extrapolated"]) for r in df]


# LEO 100 @0s, 200 @1s, 300 @2s; committed 150 at t=2s: the log end was 150 at 0.5 s, so the
# estimate is 1.5 s behind.
COMMITTED, LEO = [100, 200, 150], [100, 200, 300]


def test_a_sample_without_time_lag_ms_is_estimated_and_marked(spark):  # noqa: F811
    got = _figures(spark, series(COMMITTED, LEO))
    assert got == [(0.0, False, False), (0.0, False, False), (1.5, True, False)]


def test_a_sample_with_time_lag_ms_has_its_exact_figure_not_the_estimate(spark):  # noqa: F811
    rows = _with_time_lag(series(COMMITTED, LEO), [0, 0, 4250])
    assert _figures(spark, rows)[-1] == (4.25, False, False)


def test_exact_and_estimated_samples_mix_in_one_partition(spark):  # noqa: F811
    # the last sample lacks the field (recorded without --time-lag): estimated from the table,
    # which every sample's log end offset still builds
    rows = _with_time_lag(series([100, 200, 150, 150], [100, 200, 300, 300]), [0, 0, 9000, None])
    got = _figures(spark, rows)
    assert got[2] == (9.0, False, False)
    assert got[3] == (2.5, True, False)  # 150 was the log end at 0.5 s; the sample is at 3 s


def test_an_extrapolated_estimate_is_estimated_too(spark):  # noqa: F811
    # first point (100 @0s), own point (300 @2s): 100 offsets/s, so offset 50 was at -0.5 s
    assert _figures(spark, series([100, 200, 50], [100, 200, 300]))[-1] == (2.5, True, True)


def test_a_negative_exact_figure_is_zero_and_no_figure_is_not_marked(spark):  # noqa: F811
    # a record time ahead of the sampler's clock: 0 s behind, exact
    ahead = _with_time_lag(series([100, 150], [100, 300]), [0, -700])
    assert _figures(spark, ahead)[-1] == (0.0, False, False)
    # no committed offset: no figure, so neither exact nor estimated
    assert _figures(spark, series([100, -1], [100, 200]))[-1] == (None, None, None)


def test_summaries_carry_the_mark_of_the_figure_they_show(spark):  # noqa: F811
    exact = _with_time_lag(series(COMMITTED, LEO, group="exact"), [0, 0, 4250])
    estimated = series(COMMITTED, LEO, group="estimated")
    enriched = T.enrich(frame(spark, exact + estimated), 4)
    parts = {r["group"]: r for r in T.partition_summary(enriched).collect()}
    assert (parts["exact"]["time_lag_s"], parts["exact"]["time_lag_estimated"]) == (4.25, False)
    assert parts["exact"]["max_time_lag_estimated"] is False
    assert (parts["estimated"]["time_lag_s"], parts["estimated"]["time_lag_estimated"]) == (
        1.5,
        True,
    )
    groups = {
        r["group"]: r
        for r in T.rollup(
            T.series(enriched, T.GROUP_KEYS), T.partition_summary(enriched), T.GROUP_KEYS
        ).collect()
    }
    for name, marked in (("exact", False), ("estimated", True)):
        row = groups[name]
        assert (row["time_lag_estimated"], row["max_time_lag_estimated"]) == (marked, marked)
    series_rows = T.series(enriched, T.GROUP_KEYS).filter("group = 'exact'").orderBy("ts_ms")
    assert [r["time_lag_estimated"] for r in series_rows.collect()] == [False, False, False]


def test_a_group_shows_the_mark_of_its_largest_time_lag(spark):  # noqa: F811
    # partition 0 exact 4.25 s, partition 1 estimated 1.5 s: the group's time lag is the exact
    # one; with partition 0 at 1 s, the estimated 1.5 s is the group's figure
    p1 = series(COMMITTED, LEO, partition=1)
    for p0_ms, figure, marked in ((4250, 4.25, False), (1000, 1.5, True)):
        p0 = _with_time_lag(series(COMMITTED, LEO, partition=0), [0, 0, p0_ms])
        enriched = T.enrich(frame(spark, p0 + p1), 4)
        group = T.rollup(
            T.series(enriched, T.GROUP_KEYS), T.partition_summary(enriched), T.GROUP_KEYS
        ).first()
        assert (group["time_lag_s"], group["time_lag_estimated"]) == (figure, marked)


# --- samples recorded before the field existed ------------------------------------------------


def _old_rows() -> list[dict[str, Any]]:
    rows = series(COMMITTED, LEO)
    return [{name: r.get(name) for name, _ in OLD_FIELDS} for r in rows]


def _partition(spark, path: Path) -> dict[str, Any]:  # noqa: F811
    samples = read_samples(spark, [str(path)])
    assert samples.filter("time_lag_ms is not null or group_type is not null").count() == 0
    return T.partition_summary(T.enrich(samples, 4)).first().asDict()


def test_old_jsonl_samples_without_the_field_read_and_are_estimated(spark, tmp_path):  # noqa: F811
    path = tmp_path / "old.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _old_rows()))
    assert "time_lag_ms" not in path.read_text()
    row = _partition(spark, path)
    assert (row["samples"], row["time_lag_s"], row["time_lag_estimated"]) == (3, 1.5, True)


def test_old_parquet_samples_of_the_old_schema_read_and_are_estimated(spark, tmp_path):  # noqa: F811
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "old.parquet"
    schema = pa.schema([(n, getattr(pa, k)()) for n, k in OLD_FIELDS])
    pq.write_table(pa.Table.from_pylist(_old_rows(), schema), path)
    assert "time_lag_ms" not in pq.read_schema(path).names
    row = _partition(spark, path)
    assert (row["samples"], row["time_lag_s"], row["time_lag_estimated"]) == (3, 1.5, True)


def test_old_and_new_parquet_files_read_as_one_dataset(spark, tmp_path):  # noqa: F811
    import pyarrow as pa
    import pyarrow.parquet as pq

    from kctl.lag.samples import SAMPLE_FIELDS

    old = _old_rows()[:2]
    new = _with_time_lag([sample(2, 150, 300)], [4250])
    (tmp_path / "lag").mkdir()
    old_schema = pa.schema([(n, getattr(pa, k)()) for n, k in OLD_FIELDS])
    new_schema = pa.schema([(n, getattr(pa, k)()) for n, k in SAMPLE_FIELDS])
    pq.write_table(pa.Table.from_pylist(old, old_schema), tmp_path / "lag" / "lag.parquet")
    pq.write_table(pa.Table.from_pylist(new, new_schema), tmp_path / "lag" / "lag.1.parquet")
    samples = read_samples(spark, [str(tmp_path / "lag")])
    got = sorted((r["ts_ms"], r["time_lag_ms"]) for r in samples.collect())
    assert [t for _, t in got] == [None, None, 4250]
    row = T.partition_summary(T.enrich(samples, 4)).first()
    assert (row["time_lag_s"], row["time_lag_estimated"]) == (4.25, False)


def test_jsonl_samples_with_time_lag_ms_read_with_their_exact_figure(spark, tmp_path):  # noqa: F811
    path = tmp_path / "lag.jsonl"
    rows = _with_time_lag(series(COMMITTED, LEO), [0, 0, 4250])
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    row = T.partition_summary(T.enrich(read_samples(spark, [str(path)]), 4)).first()
    assert (row["time_lag_s"], row["time_lag_estimated"]) == (4.25, False)
