"""The lag pipeline as pure DataFrame -> DataFrame functions over lag samples (DESIGN.md).

    samples  - with_time_lag - with_rates - with_partition_status (burrow.py) = enriched
    enriched - partition_summary                           one row per group/topic/partition
    enriched - series(keys) - rollup(keys, partitions)     one row per topic, per group
    partitions - laggards(n)                               the top-N partitions

Nothing here collects to the driver; pyspark is imported inside the functions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kctl.analytics import burrow

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

PARTITION_KEYS = burrow.PARTITION_KEYS
TOPIC_KEYS = ("cluster", "group", "topic")
GROUP_KEYS = ("cluster", "group")
TP_KEYS = burrow.CLUSTER_KEYS  # (cluster, topic, partition): a log, its end shared by every group
P95_ACCURACY = 10_000


def with_time_lag(df: DataFrame) -> DataFrame:
    """Add ``time_lag_s`` (seconds behind), ``time_lag_estimated`` and
    ``time_lag_extrapolated`` to every sample with a committed offset.

    A sample that carries ``time_lag_ms`` (``groups lag --time-lag``: now - timestamp of the
    first record the group has not consumed) has its exact time lag: that figure (a negative
    one, a record time ahead of the sampler's clock, is 0), ``time_lag_estimated`` false.
    Others (older samples, or recorded without --time-lag) get it estimated the way
    kafka-lag-exporter does, ``time_lag_estimated`` true (false for lag <= 0: 0 s is exact).

    The log-end-offset history of each topic/partition (every group's samples contribute; one
    point per sample time) is a lookup table of (offset, time) points. The time at which the
    log end offset equalled the committed offset C is interpolated between the latest point at
    or below C and the earliest point above it; time lag = sample time - that time. When C is
    below every point of the table, the time is extrapolated along the line through the
    table's first point and the sample's own point (marked ``time_lag_extrapolated``). A
    sample with lag <= 0 is 0 s behind; without a committed offset, or with nothing to
    extrapolate from (no production seen), it is null, and so is ``time_lag_estimated``.

    One sort does it: each point carries its predecessor in (offset, time) order; samples and
    points sorted together by offset, descending, give each sample the earliest point above C
    (the last point seen) and, through it, the latest point at or below C."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if "time_lag_ms" not in df.columns:  # a frame from before the field: every figure estimated
        df = df.withColumn("time_lag_ms", F.lit(None).cast("bigint"))
    cols = df.columns
    # Shuffle the samples once, by topic/partition: the table, the lookup and every later
    # window (by group/topic/partition) and aggregation per partition reuse that partitioning.
    df = df.repartition(*TP_KEYS)
    by_offset = Window.partitionBy(*TP_KEYS).orderBy("_o", "_pts")
    table = (
        df.groupBy(*TP_KEYS, F.col("ts_ms").alias("_pts"))
        .agg(F.max("log_end_offset").alias("_o"))
        .withColumn(
            "_prev",
            F.lag(F.struct(F.col("_pts").alias("ts"), F.col("_o").alias("o"))).over(by_offset),
        )
    )
    points = table.select(
        *[
            F.col(c) if c in TP_KEYS else F.lit(None).cast(df.schema[c].dataType).alias(c)
            for c in cols
        ],
        "_o",
        F.lit(0).alias("_q"),
        "_pts",
        "_prev",
    )
    queries = df.select(
        *cols,
        F.col("committed_offset").alias("_o"),
        F.lit(1).alias("_q"),
        F.lit(None).cast("bigint").alias("_pts"),
        F.lit(None).cast(table.schema["_prev"].dataType).alias("_prev"),
    )
    # Descending by offset, samples before points at the same offset: looking back, the last
    # point is the earliest time the log end offset was > C. (The frame runs from the
    # partition's start: Spark computes it incrementally, unlike a frame running to its end.)
    down = (
        Window.partitionBy(*TP_KEYS)
        .orderBy(F.col("_o").desc(), F.col("_q").desc(), F.col("_pts").desc())
        .rowsBetween(Window.unboundedPreceding, 0)
    )
    point = F.struct(
        F.col("_pts").alias("ts"), F.col("_o").alias("o"), F.col("_prev").alias("prev")
    )
    both = (
        queries.unionByName(points)
        .withColumn("_r", F.last(F.when(F.col("_q") == 0, point), ignorenulls=True).over(down))
        .filter(F.col("_q") == 1)
    )
    c = F.col("committed_offset").cast("double")
    ts = F.col("ts_ms").cast("double")
    r_ts, r_o = F.col("_r.ts"), F.col("_r.o")
    l_ts, l_o = F.col("_r.prev.ts"), F.col("_r.prev.o")
    interpolated = r_ts - (r_o - c) * (r_ts - l_ts) / (r_o - l_o)
    leo = F.col("log_end_offset")
    # No point at or below C: the earliest point above it is the table's first point.
    extrapolated = F.when(
        (leo > r_o) & (F.col("ts_ms") > r_ts),
        ts - (leo - c) * (ts - r_ts) / (leo - r_o),
    )
    has_commit = F.col("committed_offset") >= 0
    behind = leo - F.col("committed_offset")
    left_missing = F.col("_r.prev").isNull()
    at = F.when(left_missing, extrapolated).otherwise(interpolated)
    exact = F.col("time_lag_ms").isNotNull()
    time_lag = (
        F.when(exact, F.greatest(F.col("time_lag_ms"), F.lit(0)) / 1000.0)
        .when(~has_commit, F.lit(None).cast("double"))
        .when(behind <= 0, F.lit(0.0))
        .when(at.isNotNull(), F.greatest((ts - at) / 1000.0, F.lit(0.0)))
    )
    estimated = has_commit & (behind > 0)  # where the figure, if any, comes from the table
    return (
        both.withColumn("time_lag_s", time_lag)
        .withColumn(
            "time_lag_estimated",
            F.when(F.col("time_lag_s").isNull(), F.lit(None).cast("boolean"))
            .when(exact, F.lit(False))
            .otherwise(estimated),
        )
        .withColumn(
            "time_lag_extrapolated",
            F.when(exact, F.lit(False))
            .when(estimated & F.col("time_lag_s").isNotNull(), left_missing)
            .when(has_commit, F.lit(False)),
        )
        .select(*cols, "time_lag_s", "time_lag_estimated", "time_lag_extrapolated")
    )


def with_rates(df: DataFrame) -> DataFrame:
    """Add, from each sample and the one before it of the same group/topic/partition:
    ``dt_s``, ``produced`` and ``consumed`` (offsets), ``production_rate`` and
    ``consumption_rate`` (offsets/s). Null on a partition's first sample; ``consumed`` is null
    unless both samples have a committed offset (negative after a rewind)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    w = Window.partitionBy(*PARTITION_KEYS).orderBy("ts_ms")
    cols = df.columns
    df = df.select(
        "*",
        F.lag("ts_ms").over(w).alias("_prev_ts"),
        F.lag("log_end_offset").over(w).alias("_prev_leo"),
        F.lag("committed_offset").over(w).alias("_prev_c"),
    )
    dt = (F.col("ts_ms") - F.col("_prev_ts")) / 1000.0
    prev_c = F.col("_prev_c")
    df = (
        df.withColumn("dt_s", F.when(dt > 0, dt))
        .withColumn(
            "produced",
            F.when(
                F.col("dt_s").isNotNull(),
                F.col("log_end_offset") - F.col("_prev_leo"),
            ),
        )
        .withColumn(
            "consumed",
            F.when(
                F.col("dt_s").isNotNull() & (F.col("committed_offset") >= 0) & (prev_c >= 0),
                F.col("committed_offset") - prev_c,
            ),
        )
    )
    return df.select(
        *cols,
        "dt_s",
        "produced",
        "consumed",
        (F.col("produced") / F.col("dt_s")).alias("production_rate"),
        (F.col("consumed") / F.col("dt_s")).alias("consumption_rate"),
    )


def enrich(samples: DataFrame, window: int = burrow.DEFAULT_WINDOW) -> DataFrame:
    """Samples with time lag, rates and Burrow status per sample.

    The time-lag step partitions by topic/partition; the later windows by group/topic/partition
    are satisfied by that partitioning, so Spark shuffles the samples once."""
    return burrow.with_partition_status(with_rates(with_time_lag(samples)), window)


def _slope(x: Column, y: Column) -> Column:
    """Aggregate: least-squares slope of y over x (null with fewer than two distinct x)."""
    from pyspark.sql import functions as F

    return F.covar_pop(x, y) / F.when(F.var_pop(x) > 0, F.var_pop(x))


def _catch_up(lag: Column, consumption: Column, production: Column) -> Column:
    """Seconds to reach lag 0 at the net rate consumption - production; 0 when caught up,
    null when the net rate does not shrink the lag or the lag is negative (a commit beyond the
    log end is not caught up: the consumer's position is out of range)."""
    from pyspark.sql import functions as F

    net = consumption - production
    return (
        F.when(lag < 0, F.lit(None).cast("double"))
        .when(lag == 0, F.lit(0.0))
        .when(net > 0, lag / net)
    )


def _lag_stats() -> list[Column]:
    """Aggregates of a lag series over the window: samples, first and last time, current
    (last), max, mean and p95 lag, and its trend (least-squares slope, offsets/s)."""
    from pyspark.sql import functions as F

    ts = F.col("ts_ms")
    lag = F.col("lag")
    return [
        F.count(F.lit(1)).alias("samples"),
        F.min(ts).alias("first_ts_ms"),
        F.max(ts).alias("last_ts_ms"),
        F.max_by(lag, ts).alias("lag"),
        F.max(lag).alias("max_lag"),
        F.avg(lag).alias("mean_lag"),
        F.percentile_approx(lag, 0.95, P95_ACCURACY).alias("p95_lag"),
        _slope(ts / 1000.0, lag).alias("lag_trend"),
    ]


def partition_summary(enriched: DataFrame) -> DataFrame:
    """One row per group/topic/partition over the sampled window."""
    from pyspark.sql import functions as F

    ts = F.col("ts_ms")
    out = enriched.groupBy(*PARTITION_KEYS).agg(
        *_lag_stats(),
        F.max_by("committed_offset", ts).alias("committed_offset"),
        F.max_by("log_end_offset", ts).alias("log_end_offset"),
        F.max_by("time_lag_s", ts).alias("time_lag_s"),
        F.max_by("time_lag_estimated", ts).alias("time_lag_estimated"),
        F.max_by("time_lag_extrapolated", ts).alias("time_lag_extrapolated"),
        F.max("time_lag_s").alias("max_time_lag_s"),
        F.max_by("time_lag_estimated", F.col("time_lag_s")).alias("max_time_lag_estimated"),
        (F.sum("produced") / F.sum(F.when(F.col("produced").isNotNull(), F.col("dt_s")))).alias(
            "production_rate"
        ),
        (F.sum("consumed") / F.sum(F.when(F.col("consumed").isNotNull(), F.col("dt_s")))).alias(
            "consumption_rate"
        ),
        F.max_by("status", ts).alias("status"),
        F.max_by("window_complete", ts).alias("window_complete"),
        F.max_by("group_state", ts).alias("group_state"),
        F.max_by("client_id", ts).alias("client_id"),
        F.max_by("host", ts).alias("host"),
    )
    return out.withColumn(
        "catch_up_s", _catch_up(F.col("lag"), F.col("consumption_rate"), F.col("production_rate"))
    )


def series(enriched: DataFrame, keys: tuple[str, ...]) -> DataFrame:
    """Lag over time at a coarser level (``TOPIC_KEYS`` or ``GROUP_KEYS``): per key and sample
    time the summed lag (a negative partition lag counts 0, as in ``groups lag`` totals), the
    largest time lag (and whether it is estimated) and the worst status (Burrow's group rule
    at the group level)."""
    from pyspark.sql import functions as F

    status = (
        burrow.group_status(F.col("status"))
        if keys == GROUP_KEYS
        else burrow.worst_status(F.col("status"))
    )
    return enriched.groupBy(*keys, "ts_ms").agg(
        F.sum(F.when(F.col("lag") < 0, F.lit(0)).otherwise(F.col("lag"))).alias("lag"),
        F.max("time_lag_s").alias("time_lag_s"),
        F.max_by("time_lag_estimated", F.col("time_lag_s")).alias("time_lag_estimated"),
        F.max_by("time_lag_extrapolated", F.col("time_lag_s")).alias("time_lag_extrapolated"),
        status.alias("status"),
        F.count(F.lit(1)).alias("partitions"),
    )


def rollup(series_df: DataFrame, partitions: DataFrame, keys: tuple[str, ...]) -> DataFrame:
    """One row per topic (``TOPIC_KEYS``) or per group (``GROUP_KEYS``) over the window: lag
    statistics of the summed series, summed rates, the largest current time lag, status
    (worst partition; Burrow's group rule for groups), trend and time to catch up."""
    from pyspark.sql import functions as F

    stats = series_df.groupBy(*keys).agg(
        *_lag_stats(),
        F.max("time_lag_s").alias("max_time_lag_s"),
        F.max_by("time_lag_estimated", F.col("time_lag_s")).alias("max_time_lag_estimated"),
    )
    status = (
        burrow.group_status(F.col("status"))
        if keys == GROUP_KEYS
        else burrow.worst_status(F.col("status"))
    )
    parts = partitions.groupBy(*keys).agg(
        F.count(F.lit(1)).alias("partitions"),
        status.alias("status"),
        F.max("time_lag_s").alias("time_lag_s"),
        F.max_by("time_lag_estimated", F.col("time_lag_s")).alias("time_lag_estimated"),
        F.max_by("time_lag_extrapolated", F.col("time_lag_s")).alias("time_lag_extrapolated"),
        F.sum("production_rate").alias("production_rate"),
        F.sum("consumption_rate").alias("consumption_rate"),
    )
    out = stats.join(parts, list(keys), "inner")
    return out.withColumn(
        "catch_up_s", _catch_up(F.col("lag"), F.col("consumption_rate"), F.col("production_rate"))
    )


def laggards(partitions: DataFrame, n: int) -> DataFrame:
    """The ``n`` group/topic/partitions with the largest current lag (ties: larger time lag)."""
    from pyspark.sql import functions as F

    return partitions.orderBy(
        F.col("lag").desc_nulls_last(), F.col("time_lag_s").desc_nulls_last(), *PARTITION_KEYS
    ).limit(n)
