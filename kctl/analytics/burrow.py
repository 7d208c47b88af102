"""Burrow's consumer status in the Spark pipeline: the rules themselves are
``kctl.lag.burrow`` (one implementation, shared with the lag exporter; its docstring and
docs/analytics.md state them and where kctl differs from Burrow). Here they run per
group/topic/partition inside Spark, through Arrow (``mapInArrow``: the samples, sorted by
partition and time, stream through a Python worker and come back with ``status`` and
``window_complete``), and the status ranks become Column aggregates.

pyspark and pyarrow are imported inside the functions. Spark's Python workers run this module
and ``kctl.lag.burrow``: ``runner.build_session`` ships both with the job (``rules_archive``),
so executors need Python with pyarrow, not kctl.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from kctl.lag import burrow as rules
from kctl.lag.burrow import DEFAULT_WINDOW, PARTITION_KEYS, SEVERITY

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

__all__ = [
    "DEFAULT_WINDOW",
    "PARTITION_KEYS",
    "SEVERITY",
    "group_status",
    "severity",
    "with_partition_status",
    "worst_status",
]


def with_partition_status(df: DataFrame, window: int = DEFAULT_WINDOW) -> DataFrame:
    """Add ``status`` (OK/WARN/STOP/STALL/REWIND/NEGATIVE, null for a sample without a
    committed offset) and ``window_complete`` (samples with a commit in the window / N) to every
    sample: the status of its group/topic/partition over the window of the last ``window``
    samples ending there (``kctl.lag.burrow``).

    Input columns: the lag sample's ``ts_ms, cluster, group, topic, partition,
    committed_offset, lag, member_id`` (others pass through).

    How: the samples are clustered by topic/partition and sorted by group/topic/partition and
    time within each Spark partition (Spark elides both when the input already is, as
    ``transforms.enrich``'s is: no shuffle), then streamed through Arrow (``mapInArrow``) into
    a Python worker that walks them in order with one ``PartitionWindow`` per partition."""
    from pyspark.sql.types import DoubleType, StringType, StructField, StructType

    if window < 1:
        raise ValueError("the window must hold at least one sample")
    schema = StructType(
        [
            *df.schema.fields,
            StructField("status", StringType(), nullable=True),
            StructField("window_complete", DoubleType(), nullable=False),
        ]
    )

    # A plain function without annotations: pyspark infers the UDF kind from type hints.
    def judge(batches):  # type: ignore[no-untyped-def]
        return judge_batches(batches, window)

    clustered = df.repartition(*CLUSTER_KEYS).sortWithinPartitions(*PARTITION_KEYS, "ts_ms")
    return clustered.mapInArrow(judge, schema)


# All samples of a group/topic/partition land in one Spark partition when clustered by these
# (the time-lag step's partitioning, so the pipeline shuffles once).
CLUSTER_KEYS = ("cluster", "topic", "partition")


def judge_batches(batches: Iterable[Any], window: int) -> Iterator[Any]:
    """Arrow record batches of samples sorted by group/topic/partition and time (a partition's
    samples contiguous, possibly across batches), each with ``status`` and
    ``window_complete`` appended. Runs in Spark's Python workers."""
    import pyarrow as pa

    extra = [
        pa.field("status", pa.string()),
        pa.field("window_complete", pa.float64(), nullable=False),
    ]
    current: tuple[Any, ...] | None = None
    partition = rules.PartitionWindow(window)
    for batch in batches:
        keys = zip(*(batch.column(k).to_pylist() for k in PARTITION_KEYS), strict=True)
        columns = zip(
            batch.column("ts_ms").to_pylist(),
            batch.column("committed_offset").to_pylist(),
            batch.column("lag").to_pylist(),
            batch.column("member_id").to_pylist(),
            strict=True,
        )
        status: list[str | None] = []
        complete: list[float] = []
        for key, (ts_ms, committed, lag, member) in zip(keys, columns, strict=True):
            if key != current:
                current = key
                partition = rules.PartitionWindow(window)
            s, c = partition.add(ts_ms, committed, lag, member)
            status.append(s)
            complete.append(c)
        yield pa.RecordBatch.from_arrays(
            [*batch.columns, pa.array(status, pa.string()), pa.array(complete, pa.float64())],
            schema=pa.schema([*batch.schema, *extra]),
        )


def severity(status: Column) -> Column:
    """Burrow's order of a status (``SEVERITY``), as an int column (null for null)."""
    from pyspark.sql import functions as F

    expr = F.lit(None).cast("int")
    for name, rank in SEVERITY.items():
        expr = F.when(status == name, rank).otherwise(expr)
    return expr


def worst_status(status: Column) -> Column:
    """Aggregate: the worst partition status (partitions without a status are ignored), as
    ``kctl.lag.burrow.worst_status``."""
    from pyspark.sql import functions as F

    return _named(F.max(severity(status)), lambda name: name, None)


def group_status(status: Column) -> Column:
    """Aggregate: a group's status from its partitions', as ``kctl.lag.burrow.group_status``
    (the worst, where STOP, STALL, REWIND and NEGATIVE count as ERR; OK when no partition has
    one). That rule depends on the worst status alone, so the aggregate is the worst rank,
    named through ``group_status`` of that one status."""
    from pyspark.sql import functions as F

    return _named(
        F.max(severity(status)),
        lambda name: rules.group_status([name]),
        rules.group_status([]),
    )


def _named(rank: Column, name_of: Any, default: str | None) -> Column:
    """The status ``name_of(status)`` for the status of rank ``rank``; ``default`` for null."""
    from pyspark.sql import functions as F

    expr = F.lit(default).cast("string")
    for name, value in SEVERITY.items():
        expr = F.when(rank == value, F.lit(name_of(name))).otherwise(expr)
    return expr
