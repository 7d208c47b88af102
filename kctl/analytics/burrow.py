"""Consumer status after Burrow's evaluation rules (linkedin/Burrow, ``core/internal/evaluator``,
wiki "Consumer Lag Evaluation Rules"), over a sliding window of the last N lag samples.

Burrow evaluates a window of the last N *commits* of a partition, each carrying the committed
offset, the commit's timestamp and the lag when it arrived, plus the partition's current lag:

1. If the current lag is zero, or the lag is zero anywhere in the window: OK.
2. Otherwise, in this order of severity, the first that holds:
   REWIND  the committed offset decreased between two consecutive entries;
   STOP    now - (last entry's commit time) > (last entry's commit time - first entry's commit
           time): no commit for longer than the window spans;
   STALL   the committed offset is the same in every entry (commits arrive, nothing moves);
   WARN    the lag never decreased between two consecutive entries (the consumer is slower
           than the producers);
   else OK.
A group's status is the worst of its partitions', where anything worse than ERR (STOP, STALL,
REWIND) is reported as ERR.

Negative lag, our addition: Burrow stores a negative lag as 0 (its lag comes from a log end
fetched before the commit arrived), so a partition whose log ends before its commit is OK there.
A lag sample reads the committed offset *before* the log end, so a negative lag in it is real:
the log was truncated or recreated under the commit and the consumer's position is out of
range. Such a sample is never OK: its status is NEGATIVE (the most severe; ERR for the group),
and a negative lag in the window does not count as the "lag zero" of rule 1.

Our window is the last N *samples* (``groups lag --record`` rows) of each group/topic/partition.
A sample does not carry the commit's timestamp, so one is derived: while a live member owns the
partition (``member_id`` is set) the consumer is taken to be committing at the sample's time;
once no member owns it, the commit time stays at the sample where the committed offset last
changed. "now" is the time of the sample the window ends at. docs/analytics.md lists this and
the other differences.

Everything here is a pure DataFrame -> DataFrame function; pyspark is imported inside them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

PARTITION_KEYS = ("cluster", "group", "topic", "partition")

# Burrow's StatusConstant order (protocol.go): NOTFOUND < OK < WARN < ERR < STOP < STALL < REWIND.
# NEGATIVE (a committed offset beyond the log end) is kctl's own, the most severe.
SEVERITY = {
    "NOTFOUND": 0,
    "OK": 1,
    "WARN": 2,
    "ERR": 3,
    "STOP": 4,
    "STALL": 5,
    "REWIND": 6,
    "NEGATIVE": 7,
}
DEFAULT_WINDOW = 10  # Burrow's storage "intervals" default


def with_partition_status(df: DataFrame, window: int = DEFAULT_WINDOW) -> DataFrame:
    """Add ``status`` (OK/WARN/STOP/STALL/REWIND/NEGATIVE, null for a sample without a
    committed offset) and ``window_complete`` (entries in the window / N) to every sample:
    the status of its group/topic/partition over the window of the last ``window`` samples
    ending there.

    Input columns: the lag sample's ``ts_ms, cluster, group, topic, partition,
    committed_offset, lag, member_id``."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if window < 1:
        raise ValueError("the window must hold at least one sample")
    by_time = Window.partitionBy(*PARTITION_KEYS).orderBy("ts_ms")
    frame = by_time.rowsBetween(-(window - 1), 0)
    # Consecutive pairs inside the window: the pair (i-1, i) belongs to the window ending at k
    # when i-1 is in it, i.e. i > k-(window-1).
    pairs = by_time.rowsBetween(-(window - 2), 0) if window >= 2 else None

    committed = F.col("committed_offset") >= 0
    offset = F.when(committed, F.col("committed_offset"))
    # Burrow stores a negative lag (head fetched before the commit) as zero; kept for the lag
    # deltas, but a negative lag is not "lag zero" (``_min_lag`` skips it) and is NEGATIVE.
    lag0 = F.when(committed, F.greatest(F.coalesce(F.col("lag"), F.lit(0)), F.lit(0)))
    negative = committed & (F.coalesce(F.col("lag"), F.lit(0)) < 0)
    # Three window levels, each one select (one Window operator over the sorted partition):
    # the previous sample, the last change of the committed offset, the frame aggregates.
    df = df.select(
        "*",
        offset.alias("_off"),
        lag0.alias("_lag0"),
        F.lag(offset).over(by_time).alias("_prev_off"),
        F.lag(lag0).over(by_time).alias("_prev_lag"),
    )
    changed = (F.col("_prev_off").isNull() | (F.col("_off") != F.col("_prev_off"))) & committed
    df = df.select(
        "*",
        (F.col("_off") - F.col("_prev_off")).alias("_d_off"),
        (F.col("_lag0") - F.col("_prev_lag")).alias("_d_lag"),
        F.last(F.when(changed, F.col("ts_ms")), ignorenulls=True)
        .over(by_time.rowsBetween(Window.unboundedPreceding, 0))
        .alias("_last_change_ts"),
    )
    commit_ts = F.when(
        committed,
        F.when(F.col("member_id").isNotNull(), F.col("ts_ms")).otherwise(F.col("_last_change_ts")),
    )
    df = df.withColumn("_commit_ts", commit_ts)
    aggregates = [
        F.count("_off").over(frame).alias("_entries"),
        F.min(F.when(~negative, F.col("_lag0"))).over(frame).alias("_min_lag"),
        F.first("_commit_ts", ignorenulls=True).over(frame).alias("_first_commit_ts"),
    ]
    if pairs is not None:
        aggregates += [
            F.min("_d_off").over(pairs).alias("_min_d_off"),
            F.max(F.abs("_d_off")).over(pairs).alias("_max_abs_d_off"),
            F.min("_d_lag").over(pairs).alias("_min_d_lag"),
        ]
    else:  # one entry: no pairs
        null = F.lit(None).cast("bigint")
        aggregates += [null.alias("_min_d_off"), null.alias("_max_abs_d_off")]
        aggregates += [null.alias("_min_d_lag")]
    df = df.select("*", *aggregates)
    # Without pairs Burrow's loops are vacuously false (rewind) and true (stalled, not
    # decreasing); coalesce gives the same.
    rewind = F.coalesce(F.col("_min_d_off") < 0, F.lit(False))
    stalled = F.coalesce(F.col("_max_abs_d_off") == 0, F.lit(True))
    not_decreasing = F.coalesce(F.col("_min_d_lag") >= 0, F.lit(True))
    last_commit_ts = F.col("_commit_ts")
    stopped = (F.col("ts_ms") - last_commit_ts) > (last_commit_ts - F.col("_first_commit_ts"))
    status = (
        F.when(~committed, F.lit(None).cast("string"))
        .when(negative, "NEGATIVE")
        .when((F.col("_lag0") == 0) | (F.col("_min_lag") == 0), "OK")
        .when(rewind, "REWIND")
        .when(stopped, "STOP")
        .when(stalled, "STALL")
        .when(not_decreasing, "WARN")
        .otherwise("OK")
    )
    temporary = [c for c in df.columns if c.startswith("_")]
    return (
        df.withColumn("status", status)
        .withColumn(
            "window_complete", F.least(F.col("_entries") / F.lit(float(window)), F.lit(1.0))
        )
        .drop(*temporary)
    )


def severity(status: Column) -> Column:
    """Burrow's order of a status, as an int column (null for null)."""
    from pyspark.sql import functions as F

    expr = F.lit(None).cast("int")
    for name, rank in SEVERITY.items():
        expr = F.when(status == name, rank).otherwise(expr)
    return expr


def worst_status(status: Column) -> Column:
    """Aggregate: the worst partition status (partitions without a status are ignored)."""
    from pyspark.sql import functions as F

    return _name_of(F.max(severity(status)))


def group_status(status: Column) -> Column:
    """Aggregate: a group's status from its partitions' — the worst, where STOP, STALL,
    REWIND and NEGATIVE count as ERR (Burrow's evaluateConsumerStatus). OK when no partition
    has one."""
    from pyspark.sql import functions as F

    worst = F.max(severity(status))
    return _name_of(F.least(F.coalesce(worst, F.lit(SEVERITY["OK"])), F.lit(SEVERITY["ERR"])))


def _name_of(rank: Column) -> Column:
    from pyspark.sql import functions as F

    expr = F.lit(None).cast("string")
    for name, value in SEVERITY.items():
        expr = F.when(rank == value, name).otherwise(expr)
    return expr
