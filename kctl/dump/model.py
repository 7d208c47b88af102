"""What ``kctl dump-segment`` reads (:class:`DumpOptions`) and what reading gives back: one
stream of small result items, in output order, that :class:`kctl.formatters.dump.DumpWriter`
renders. Every problem found is a :class:`Found` item (the writer counts them for the exit
code); nothing in :mod:`kctl.dump` prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from kctl.logfmt.batch import Batch, Problem, RecordRow, V2Header
from kctl.logfmt.codecs import MAX_DECOMPRESSED


@dataclass(frozen=True, slots=True)
class DumpOptions:
    """What to read of each file, and in which shape the renderer wants it."""

    deep: bool = False  # every record, not only batch headers
    max_bytes: int | None = None
    range: tuple[int, int] | None = None  # --offsets FROM..TO, inclusive
    verify_only: bool = False  # index files: mismatches only
    sanity_only: bool = False  # index files: Kafka's sanity check only
    strict: bool = False  # stop at the first problem
    file_type: str | None = None  # instead of the type found from the name
    decoder: str | None = None  # "offsets" | "txn" | "share" | "metadata": keys/values
    # Or the command's own (key, value) decoder (kctl.dump.typed: Schema Registry formats).
    payload: Any = None
    control: bool = True  # decode control records (off with --skip-record-metadata)
    json_records: bool = False  # record metadata only, as JSON text: the fast path may apply
    text_records: bool = False  # record metadata only, as text lines: the fast path may apply
    raw_headers: bool = False  # valid magic-2 headers as V2Headers items, not Batches
    max_decompressed: int = MAX_DECOMPRESSED  # per batch payload; more is a problem (a bomb)


# -- result items --------------------------------------------------------------------------


class Note(NamedTuple):
    """A line for people (stderr), not data."""

    text: str


class Found(NamedTuple):
    """A problem found in ``path``."""

    path: Path
    problem: Problem


class FileStart(NamedTuple):
    path: Path


class LogStart(NamedTuple):
    """A segment (``kind`` "log", its base offset) or a KRaft snapshot (its (end offset,
    epoch), None for bootstrap.checkpoint) begins."""

    kind: str
    base_offset: int
    snapshot: tuple[int, int] | None


class Batches(NamedTuple):
    """Batch headers (or magic 0/1 top-level messages) of ``file``, without records."""

    file: str
    batches: list[Batch] | tuple[Batch, ...]


class V2Headers(NamedTuple):
    """Valid magic-2 batch headers as they lie on disk; positions are relative to ``base``
    (asked for with :attr:`DumpOptions.raw_headers`)."""

    base: int
    heads: list[tuple[int, V2Header]]


class RecordsJson(NamedTuple):
    """A batch whose record metadata is already JSON text (``{..},{..}``)."""

    file: str
    batch: Batch
    records: str


class RecordsText(NamedTuple):
    """A batch whose records are already DumpLogSegments' text lines (each ending in a
    newline)."""

    batch: Batch
    lines: str


class Records(NamedTuple):
    """A batch and its records: ``rows`` are :func:`kctl.logfmt.batch.decode_records` tuples
    (fields ``REC_*``) whose positions index ``data``. ``decoded``, when not None, holds one
    entry per row: the control record's meaning (control batches) or the decoded key and value
    (``{"key", "value"}``, with a record decoder), None where decoding failed (a
    :class:`Found` item came before)."""

    path: Path
    batch: Batch
    data: Any
    rows: list[RecordRow]
    decoded: list[dict[str, Any] | None] | None


class GapReport(NamedTuple):
    """Non-consecutive offsets of a deep iteration (the first pairs, and how many in all)."""

    path: Path
    pairs: list[tuple[int, int]]
    total: int


class Partition(NamedTuple):
    """One partition directory's summary (:class:`kctl.dump.summary.PartitionSummary`)."""

    summary: Any


class IndexSanityPassed(NamedTuple):
    path: Path


class IndexEmpty(NamedTuple):
    path: Path


class IndexEntry(NamedTuple):
    """An ``.index`` (:class:`kctl.logfmt.indexes.OffsetEntry`) or ``.timeindex``
    (:class:`kctl.logfmt.indexes.TimeEntry`) entry."""

    path: Path
    entry: Any


class AbortedTxn(NamedTuple):
    file: str
    txn: Any  # kctl.logfmt.indexes.AbortedTxn


class ProducerEntry(NamedTuple):
    file: str
    snapshot: Any  # kctl.logfmt.snapshot.ProducerSnapshot
    entry: Any  # kctl.logfmt.snapshot.ProducerEntry


class SmallDocument(NamedTuple):
    """A checkpoint, properties or quorum-state file, decoded into ``doc``."""

    file: str
    kind: str
    doc: dict[str, Any]


class TrailingBytes(NamedTuple):
    """Bytes after the last batch read from the start of a segment without a break: what
    DumpLogSegments calls "invalid bytes at the end" (text output; a :class:`Found` item came
    for the same bytes)."""

    path: Path
    size: int


class IndexReport(NamedTuple):
    """One index check's findings in DumpLogSegments' terms, for its report at the end of a
    text run: ``kind`` "mismatch" (index offset, log offset), "timestamp" (index timestamp,
    log timestamp), "order" (index timestamp, previous one) or "not_found" (indexed offset,
    found log offset). Each pair also came as a :class:`Found` item."""

    path: Path
    kind: str
    pairs: list[tuple[int, int]]
