"""The lag sample (DESIGN.md) as a Spark schema, and a reader for JSONL/Parquet files,
directories and globs.

pyspark is imported inside functions only: importing this module costs nothing.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kctl.errors import NotFoundError, UsageError
from kctl.lag.samples import SAMPLE_FIELDS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_SQL_TYPES = {"int64": "bigint", "int32": "int", "string": "string"}
REQUIRED = ("ts_ms", "group", "topic", "partition", "log_end_offset")

JSON_SUFFIXES = (".jsonl", ".json", ".ndjson", ".jsonl.gz", ".json.gz", ".ndjson.gz")
PARQUET_SUFFIXES = (".parquet", ".parq")


def sample_schema() -> Any:
    """The lag sample as a ``pyspark.sql.types.StructType``."""
    from pyspark.sql.types import (
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
    )

    kinds = {"int64": LongType(), "int32": IntegerType(), "string": StringType()}
    return StructType(
        [StructField(name, kinds[kind], nullable=True) for name, kind in SAMPLE_FIELDS]
    )


def _is_remote(path: str) -> bool:
    return "://" in path and not path.startswith("file://")


def _kind_of_name(name: str) -> str | None:
    lower = name.lower()
    if lower.endswith(JSON_SUFFIXES):
        return "json"
    if lower.endswith(PARQUET_SUFFIXES):
        return "parquet"
    return None


def _kind_of_dir(path: Path) -> str:
    kinds = set()
    for _root, _dirs, files in os.walk(path):
        for f in files:
            if f.startswith((".", "_")):
                continue
            kind = _kind_of_name(f)
            if kind:
                kinds.add(kind)
        if len(kinds) > 1:
            break
    if not kinds:
        raise UsageError(f"no .jsonl or .parquet lag samples under {path}")
    if len(kinds) > 1:
        raise UsageError(f"{path} mixes JSONL and Parquet files", "give them as separate inputs")
    return kinds.pop()


def resolve_inputs(inputs: list[str], fmt: str | None = None) -> dict[str, list[str]]:
    """Group the inputs by format: ``{"json": [...], "parquet": [...]}``.

    Local globs are expanded here so a pattern that matches nothing is an error naming it;
    remote URIs (hdfs://, s3a://, ...) and their globs go to Spark as given, with the format
    taken from their suffix or ``fmt``."""
    out: dict[str, list[str]] = {"json": [], "parquet": []}
    for raw in inputs:
        if _is_remote(raw):
            kind = fmt or _kind_of_name(raw.rstrip("/*"))
            if kind is None:
                raise UsageError(f"cannot tell the format of {raw}", "give --format jsonl|parquet")
            out[kind].append(raw)
            continue
        local = raw[len("file://") :] if raw.startswith("file://") else raw
        paths = sorted(glob.glob(local, recursive=True)) if glob.has_magic(local) else [local]
        if not paths or not all(os.path.exists(p) for p in paths):
            missing = next((p for p in paths if not os.path.exists(p)), raw)
            raise NotFoundError(f"no lag samples at {missing}", "no such file or directory")
        for p in paths:
            path = Path(p)
            if path.is_dir():
                kind = fmt or _kind_of_dir(path)
            else:
                kind = fmt or _kind_of_name(path.name)
                if kind is None:
                    raise UsageError(
                        f"cannot tell the format of {p}", "name it .jsonl or .parquet, or --format"
                    )
            out[kind].append(str(path.resolve()))
    return out


def read_samples(spark: SparkSession, inputs: list[str], fmt: str | None = None) -> DataFrame:
    """One DataFrame in the lag-sample schema from JSONL and/or Parquet inputs.

    Rows without the fields every analysis needs (ts_ms, group, topic, partition,
    log_end_offset) and malformed JSON lines (say, a line cut short by a recorder that is
    still writing) are dropped; columns added to the schema later are ignored."""
    from pyspark.sql import functions as F

    if fmt is not None:
        fmt = {"jsonl": "json", "json": "json", "parquet": "parquet"}.get(fmt)
        if fmt is None:
            raise UsageError("--format must be jsonl or parquet")
    groups = resolve_inputs(inputs, fmt)
    schema = sample_schema()
    frames = []
    if groups["json"]:
        frames.append(
            spark.read.schema(schema)
            .option("mode", "DROPMALFORMED")
            .option("recursiveFileLookup", "true")
            .option("pathGlobFilter", "*.json*")
            .json(groups["json"])
            if any(Path(p).is_dir() for p in groups["json"] if not _is_remote(p))
            else spark.read.schema(schema).option("mode", "DROPMALFORMED").json(groups["json"])
        )
    if groups["parquet"]:
        reader = spark.read
        if any(Path(p).is_dir() for p in groups["parquet"] if not _is_remote(p)):
            reader = reader.option("recursiveFileLookup", "true").option(
                "pathGlobFilter", "*.parq*"
            )
        raw = reader.parquet(*groups["parquet"])
        present = set(raw.columns)
        frames.append(
            raw.select(
                *[
                    (F.col(f"`{name}`") if name in present else F.lit(None))
                    .cast(_SQL_TYPES[kind])
                    .alias(name)
                    for name, kind in SAMPLE_FIELDS
                ]
            )
        )
    df = frames[0]
    for other in frames[1:]:
        df = df.unionByName(other)
    for name in REQUIRED:
        df = df.filter(F.col(f"`{name}`").isNotNull())
    return df.withColumn("cluster", F.coalesce(F.col("cluster"), F.lit("")))


CHECK_BYTES = 4 << 20  # of each local JSONL file, checked before Spark starts


def check_jsonl(paths: list[str]) -> list[str]:
    """Check the start of every local JSONL input before Spark starts, so a wrong or broken
    file is one line naming the file and line at once (not "no lag samples" after Spark's
    start-up). A file whose first complete line is not a lag sample, or with no sample in its
    first 4 MiB, is a usage error; a bad line after good ones is a warning returned (Spark
    drops such lines, as it drops a last line cut short by a recorder still writing)."""
    import orjson

    warnings: list[str] = []
    files: list[Path] = []
    for p in paths:
        if _is_remote(p):
            continue
        path = Path(p)
        if path.is_dir():
            files += sorted(f for f in path.rglob("*.json*") if f.is_file())
        else:
            files.append(path)
    for path in files:
        from kctl.inputs import require_regular

        require_regular(path, "")  # a FIFO or /dev/zero: refused, not read (or waited on)
        with open(path, "rb") as fh:
            head = fh.read(CHECK_BYTES)
        lines = head.split(b"\n")
        lines.pop()  # cut by the read, or a last line still being written: not judged
        good = 0
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            why = _sample_problem(line, orjson)
            if why is None:
                good += 1
                continue
            if not good:
                raise UsageError(f"{path} line {number} is not a lag sample", why)
            warnings.append(f"{path} line {number} is not a lag sample ({why}): skipped")
        if not good and any(line.strip() for line in lines):
            raise UsageError(f"no lag samples in {path}", "not one line has the sample fields")
    return warnings


def _sample_problem(line: bytes, orjson: Any) -> str | None:
    try:
        doc = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        return f"not JSON: {exc}"
    if not isinstance(doc, dict):
        return "not a JSON object"
    for name in REQUIRED:
        value = doc.get(name)
        if value is None:
            return f"no {name}"
        wanted = str if name in ("group", "topic") else int
        if not isinstance(value, wanted) or isinstance(value, bool):
            return f"{name} is not {'a string' if wanted is str else 'an integer'}"
    return None
