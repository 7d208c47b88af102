"""The whole lag analysis on one SparkSession: read, enrich, summarise, write, plot.

What comes back to the driver is bounded: the rows of the asked level (all groups, or the top
N), and for a plot at most ``plot_groups`` x ``PLOT_POINTS`` points. Full tables go to
``--out`` as Parquet, written by the executors."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kctl.analytics import burrow
from kctl.analytics import transforms as T
from kctl.errors import KctlError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

LEVELS = {"group": T.GROUP_KEYS, "topic": T.TOPIC_KEYS, "partition": T.PARTITION_KEYS}
PLOT_POINTS = 1000  # per group
ROWS_PER_SHUFFLE_PARTITION = 500_000
MIN_SHUFFLE_PARTITIONS = 16


def shuffle_partitions(rows: int) -> int:
    """Shuffle partitions for ``rows`` samples: about half a million rows per sort, so a task's
    sort stays in memory at any input size (16 partitions for 50 M rows ran out of a 2 GiB
    heap merging spill files), and no fewer than 16 (Spark's 200 made 1 M rows 2.4x slower on
    two cores: adaptive execution did not coalesce the window shuffles)."""
    return max(MIN_SHUFFLE_PARTITIONS, -(-rows // ROWS_PER_SHUFFLE_PARTITION))


@dataclass
class Analysis:
    level: str
    rows: list[dict[str, Any]]
    laggards: list[dict[str, Any]]
    written: list[str] = field(default_factory=list)
    plot_points: int = 0


def _rows(df: DataFrame) -> list[dict[str, Any]]:
    return [r.asDict(recursive=True) for r in df.collect()]


def _ordered(df: DataFrame, keys: tuple[str, ...]) -> DataFrame:
    from pyspark.sql import functions as F

    return df.orderBy(
        burrow.severity(F.col("status")).desc_nulls_last(),
        F.col("lag").desc_nulls_last(),
        *keys,
    )


def analyse(
    samples: DataFrame,
    *,
    window: int = burrow.DEFAULT_WINDOW,
    level: str = "group",
    top: int | None = None,
    laggards: int = 10,
    out_dir: Path | str | None = None,
    plot_path: Path | None = None,
    plot_groups: int = 10,
    progress: Any = None,
    auto_partitions: bool = True,
) -> Analysis:
    """The whole analysis. ``auto_partitions``: size ``spark.sql.shuffle.partitions`` from the
    number of samples (off when the user set it)."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    say = progress or (lambda _msg: None)
    if level not in LEVELS:
        raise KctlError(f"unknown level {level!r}", "group, topic or partition")
    count = samples.count()  # Parquet: from the footers; JSONL: one parse
    if count == 0:
        raise KctlError("no lag samples in the input", "is it a groups lag --record file?")
    if auto_partitions:
        parts_n = shuffle_partitions(count)
        samples.sparkSession.conf.set("spark.sql.shuffle.partitions", str(parts_n))
        say(f"{count:,} samples, {parts_n} shuffle partitions")
    say("enriching samples (time lag, rates, status)")
    enriched = T.enrich(samples, window).persist(StorageLevel.MEMORY_AND_DISK)
    parts = T.partition_summary(enriched).persist(StorageLevel.MEMORY_AND_DISK)
    group_series = T.series(enriched, T.GROUP_KEYS)
    tables: dict[str, DataFrame] = {"partitions": parts}
    if level == "topic" or out_dir is not None:
        tables["topics"] = T.rollup(T.series(enriched, T.TOPIC_KEYS), parts, T.TOPIC_KEYS)
    groups = T.rollup(group_series, parts, T.GROUP_KEYS).persist(StorageLevel.MEMORY_AND_DISK)
    tables["groups"] = groups
    try:
        written: list[str] = []
        if out_dir is not None:
            base = str(out_dir).rstrip("/")
            outputs = {
                **tables,
                "group_series": group_series,
                "samples": enriched,
            }
            for name, df in outputs.items():
                say(f"writing {base}/{name}")
                df.write.mode("overwrite").parquet(f"{base}/{name}")
                written.append(f"{base}/{name}")
        say(f"summarising per {level}")
        table = {"group": groups, "topic": tables.get("topics"), "partition": parts}[level]
        assert table is not None
        ordered = _ordered(table, LEVELS[level])
        rows = _rows(ordered.limit(top) if top else ordered)
        worst = _rows(T.laggards(parts, laggards)) if laggards else []
        plotted = 0
        if plot_path is not None:
            from kctl.analytics import plot

            chosen = [
                r["group"]
                for r in _rows(
                    groups.orderBy(F.col("max_lag").desc_nulls_last(), "group")
                    .select("group")
                    .limit(plot_groups)
                )
            ]
            span = groups.agg(F.min("first_ts_ms"), F.max("last_ts_ms")).first()
            first, last = (span[0], span[1]) if span is not None else (0, 0)
            bucket = max(1, int(((last or 0) - (first or 0)) / PLOT_POINTS) + 1)
            say(f"plotting {len(chosen)} group(s) to {plot_path}")
            pts = _rows(
                group_series.filter(F.col("group").isin(chosen))
                .groupBy("group", (F.floor(F.col("ts_ms") / bucket) * bucket).alias("ts_ms"))
                .agg(F.max("lag").alias("lag"), F.max("time_lag_s").alias("time_lag_s"))
            )
            plot.draw(pts, plot_path)
            plotted = len(pts)
        return Analysis(level, rows, worst, written, plotted)
    finally:
        groups.unpersist()
        parts.unpersist()
        enriched.unpersist()
