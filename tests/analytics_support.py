"""Shared pieces of the analytics tests: one real local SparkSession per test session, and
tiny lag-sample frames written out row by row."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

BASE_TS = 1_700_000_000_000


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from kctl.analytics import runner

    session = runner.build_session(
        "local[2]",
        {"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"},
    )
    try:
        yield session
    finally:
        session.stop()


def sample(
    i: int,
    committed: int,
    leo: int,
    *,
    group: str = "g",
    topic: str = "t",
    partition: int = 0,
    member: str | None = "m-1",
    step_ms: int = 1000,
) -> dict[str, Any]:
    """Sample number ``i`` (at BASE_TS + i * step_ms) in the lag-sample schema."""
    return {
        "ts_ms": BASE_TS + i * step_ms,
        "cluster": "c1",
        "group": group,
        "topic": topic,
        "partition": partition,
        "committed_offset": committed,
        "log_start_offset": 0,
        "log_end_offset": leo,
        "lag": None if committed < 0 else leo - committed,
        "group_state": "Stable" if member else "Empty",
        "member_id": member,
        "client_id": "c" if member else None,
        "host": "/127.0.0.1" if member else None,
    }


def frame(spark: Any, rows: list[dict[str, Any]]) -> Any:
    from kctl.analytics.schema import sample_schema
    from kctl.lag.samples import SAMPLE_FIELDS

    return spark.createDataFrame(
        [tuple(r.get(name) for name, _ in SAMPLE_FIELDS) for r in rows], sample_schema()
    )


def series(
    committed: list[int], leo: list[int], members: list[str | None] | None = None, **kw: Any
) -> list[dict[str, Any]]:
    members = members or ["m-1"] * len(committed)
    return [
        sample(i, c, e, member=m, **kw)
        for i, (c, e, m) in enumerate(zip(committed, leo, members, strict=True))
    ]


def by_ts(df: Any, column: str) -> list[Any]:
    return [r[column] for r in df.orderBy("ts_ms").select(column).collect()]
