"""The lag sample of DESIGN.md: its fields, and writing samples to JSONL or Parquet.

The contract between ``kctl groups lag --record`` / ``kctl analytics lag --live`` (writers)
and ``kctl analytics`` (reader). Fields are only ever added, at the end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

# (name, Arrow type name) in the order of DESIGN.md "The lag sample".
SAMPLE_FIELDS: tuple[tuple[str, str], ...] = (
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
    ("group_type", "string"),  # classic | consumer | share | streams (added later)
    # now - timestamp of the first record not consumed (groups lag --time-lag; null otherwise
    # and without a commit). Added later: older samples lack it.
    ("time_lag_ms", "int64"),
)
JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")
RECORD_SUFFIXES = (*JSONL_SUFFIXES, ".parquet")


def check_record_path(path: Path, option: str = "--record") -> None:
    """A usage error unless ``path`` names a file type samples can be recorded to."""
    from kctl.errors import UsageError

    if path.suffix not in RECORD_SUFFIXES:
        raise UsageError(f"{option} {path}: unknown file type", "name it .jsonl or .parquet")


def record_samples(path: Path, rows: list[dict[str, Any]], cluster: str | None, ts_ms: int) -> int:
    """Append samples in the lag-sample schema. ``.jsonl``: lines appended.
    ``.parquet``: Parquet files cannot be appended in place, so each call writes the next file
    part beside the path (``lag.parquet``, ``lag.1.parquet``, ...), one dataset for Spark and
    pyarrow (read the directory or the glob ``lag*.parquet``). Returns the rows written."""
    from kctl.errors import KctlError

    check_record_path(path)
    samples = [{"ts_ms": ts_ms, "cluster": cluster or "", **r} for r in rows]
    try:
        if path.suffix == ".parquet":
            _record_parquet(path, samples)
        else:
            import orjson

            with open(path, "ab") as fh:
                fh.write(b"".join(orjson.dumps(s) + b"\n" for s in samples))
    except OSError as exc:
        raise KctlError(f"cannot write samples to {path}", exc.strerror) from exc
    return len(samples)


def _record_parquet(path: Path, samples: list[dict[str, Any]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(name, getattr(pa, kind)()) for name, kind in SAMPLE_FIELDS])
    table = pa.Table.from_pylist(samples, schema=schema)
    target = path
    n = 0
    while target.exists():
        n += 1
        target = path.with_name(f"{path.stem}.{n}.parquet")
    pq.write_table(table, target)
