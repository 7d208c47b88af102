"""Rendering of ``kctl dump-segment``: DumpLogSegments' text lines (default and ``-o plain``),
streamed ``-o json``/``jsonl`` documents, and the collected ``table``/``csv``/``yaml`` output.

:mod:`kctl.dump` reads and decodes (through :mod:`kctl.logfmt`) and yields result items
(:mod:`kctl.dump.model`: batches, record tuples with their decoded keys and values, index
entries, snapshots, summaries, problems); the command hands each to one :class:`DumpWriter`
(:meth:`DumpWriter.write`); nothing else in the dump path writes to stdout. Problems go to
stderr (and, in the structured formats, into the stream as objects).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import IO, Any

from kctl.dump import model as M
from kctl.formatters import View, to_json
from kctl.logfmt.batch import (
    COMPRESSION_MASK,
    CONTROL_BIT,
    DELETE_HORIZON_BIT,
    LOG_OVERHEAD,
    REC_CRC,
    REC_HEADERS,
    REC_IS_VALID,
    REC_KEY_LEN,
    REC_KEY_POS,
    REC_OFFSET,
    REC_SEQUENCE,
    REC_TIMESTAMP,
    REC_VALUE_LEN,
    REC_VALUE_POS,
    TIMESTAMP_TYPE_BIT,
    TRANSACTIONAL_BIT,
    RecordRow,
    V2Header,
)

TEXT_FORMATS = (None, "plain")

BATCH_COLUMNS = (
    "position",
    "base_offset",
    "last_offset",
    "count",
    "producer_id",
    "is_transactional",
    "is_control",
    "max_timestamp",
    "size",
    "codec",
    "is_valid",
)


def note(text: str) -> None:
    """A line for people: stderr, flushed."""
    import sys

    sys.stderr.write(text.rstrip("\n") + "\n")
    sys.stderr.flush()


def fmt_bytes(data: bytes | None, how: str, java: bool = False) -> str | None:
    """A key, value or header value as --key-format/--value-format say; ``java``: invalid
    UTF-8 replaced as Java does (the text output, equal to DumpLogSegments')."""
    if data is None:
        return None
    if how == "hex":
        return data.hex()
    if how == "base64":
        return base64.b64encode(data).decode()
    if java:
        from kctl.logfmt.kafka_json import java_utf8

        return java_utf8(data)
    return data.decode("utf-8", "replace")


def text_value(v: Any) -> str:
    """A scalar as DumpLogSegments-style text (true/false, none, [a,b])."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "none"
    if isinstance(v, list):
        return "[" + ",".join(str(x) for x in v) + "]"
    return str(v)


def batch_text(b: Any) -> str:
    """DumpLogSegments' line for one batch (magic 2) or top-level message (magic 0/1)."""
    if b.magic >= 2:
        horizon = (
            "OptionalLong.empty"
            if b.delete_horizon_ms is None
            else f"OptionalLong[{b.delete_horizon_ms}]"
        )
        head = (
            f"baseOffset: {b.base_offset} lastOffset: {b.last_offset} count: {b.count} "
            f"baseSequence: {b.base_sequence} lastSequence: {b.last_sequence} "
            f"producerId: {b.producer_id} producerEpoch: {b.producer_epoch} "
            f"partitionLeaderEpoch: {b.partition_leader_epoch} "
            f"isTransactional: {'true' if b.is_transactional else 'false'} "
            f"isControl: {'true' if b.is_control else 'false'} deleteHorizonMs: {horizon}"
        )
    else:
        head = f"offset: {b.last_offset}"
    return (
        f"{head} position: {b.position} {b.timestamp_type}: {b.max_timestamp} size: {b.size} "
        f"magic: {b.magic} compresscodec: {b.codec} crc: {b.crc} "
        f"isvalid: {'true' if b.is_valid else 'false'}"
    )


def batch_doc(file: str, b: Any) -> dict[str, Any]:
    """The -o json/jsonl object of one batch (without records)."""
    return {
        "file": file,
        "position": b.position,
        "base_offset": b.base_offset,
        "last_offset": b.last_offset,
        "count": b.count,
        "base_sequence": b.base_sequence,
        "last_sequence": b.last_sequence,
        "producer_id": b.producer_id,
        "producer_epoch": b.producer_epoch,
        "partition_leader_epoch": b.partition_leader_epoch,
        "is_transactional": b.is_transactional,
        "is_control": b.is_control,
        "delete_horizon_ms": b.delete_horizon_ms,
        "timestamp_type": b.timestamp_type,
        "first_timestamp": b.first_timestamp,
        "max_timestamp": b.max_timestamp,
        "size": b.size,
        "magic": b.magic,
        "codec": b.codec,
        "crc": b.crc,
        "is_valid": b.is_valid,
    }


_V2_TEMPLATES: dict[int, str] = {}


def _v2_template(attrs: int) -> str:
    """A magic-2 batch line with ``%d`` for the numbers and what ``attrs`` decides (flags,
    timestamp type, codec) written in."""
    from kctl.logfmt.codecs import codec_name

    horizon = "OptionalLong[%d]" if attrs & DELETE_HORIZON_BIT else "OptionalLong.empty"
    ts_type = "LogAppendTime" if attrs & TIMESTAMP_TYPE_BIT else "CreateTime"
    codec = codec_name(attrs & COMPRESSION_MASK).replace("%", "%%")
    return (
        "baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d "
        "producerId: %d producerEpoch: %d partitionLeaderEpoch: %d "
        f"isTransactional: {'true' if attrs & TRANSACTIONAL_BIT else 'false'} "
        f"isControl: {'true' if attrs & CONTROL_BIT else 'false'} deleteHorizonMs: {horizon} "
        f"position: %d {ts_type}: %d size: %d magic: 2 compresscodec: {codec} crc: %d "
        "isvalid: true"
    )


def _asdict(obj: Any) -> dict[str, Any]:
    return {name: getattr(obj, name) for name in obj.__slots__}


# The fields a Schema Registry decoder adds to a record of -o json/jsonl (kctl.dump.typed).
TYPED_FIELDS = ("key_schema_id", "key_message", "value_schema_id", "value_message", "error")


class DumpWriter:
    """One run's output: the format, the stream, what to show of records, and the problems
    found so far (each one also a line on stderr)."""

    def __init__(
        self,
        fmt: str | None,
        out: IO[str],
        *,
        data: bool = False,
        skip_meta: bool = False,
        key_format: str = "text",
        value_format: str = "text",
        view: View | None = None,
        typed: bool = False,
    ) -> None:
        """``fmt``: -o as given (None: Kafka's text); ``view``: for -o table|csv|yaml, how the
        collected rows are shown (headers, colour); ``typed``: records' decoded entries come
        from :func:`kctl.dump.typed.typed_payload` (Schema Registry formats)."""
        self.typed = typed
        self.path: Any = None  # the segment whose records are being written
        self.undecoded = 0  # records whose key or value did not decode (typed)
        self.fmt = fmt
        self.view = view
        self.out = out
        self.text = fmt in TEXT_FORMATS
        self.data = data
        self.skip_meta = skip_meta
        self.key_format = key_format
        self.value_format = value_format
        self.problems = 0
        self.first = True  # for the streamed -o json array
        self.collected: list[dict[str, Any]] = []
        self._render: dict[type, Callable[[Any], None]] = {
            M.V2Headers: lambda i: self.v2_lines(i.base, i.heads),
            M.RecordsJson: lambda i: self.batch_with_records_json(i.file, i.batch, i.records),
            M.RecordsText: lambda i: self.line(batch_text(i.batch) + "\n" + i.lines[:-1]),
            M.Records: lambda i: self.records(i.path, i.batch, i.data, i.rows, i.decoded),
            M.Batches: self._batches,
            M.Found: lambda i: self.problem(i.path, i.problem),
            M.Note: lambda i: note(i.text),
            M.FileStart: lambda i: self.file_start(i.path),
            M.LogStart: lambda i: self.log_start(i.kind, i.base_offset, i.snapshot),
            M.GapReport: lambda i: self.offset_gaps(i.path, i.pairs, i.total),
            M.Partition: lambda i: self.partition(i.summary),
            M.IndexSanityPassed: lambda i: self.index_sanity_passed(i.path),
            M.IndexEmpty: lambda i: self.index_empty(i.path),
            M.IndexEntry: self._index_entry,
            M.AbortedTxn: lambda i: self.aborted_txn(i.file, i.txn),
            M.ProducerEntry: lambda i: self.producer_entry(i.file, i.snapshot, i.entry),
            M.SmallDocument: lambda i: self.small_document(i.file, i.kind, i.doc),
            M.TrailingBytes: self._trailing_bytes,
            M.IndexReport: self._index_report,
        }
        self.index_reports: list[M.IndexReport] = []

    def write(self, item: Any) -> None:
        """Render one result item of :func:`kctl.dump.dump`."""
        self._render[type(item)](item)

    def _batches(self, item: M.Batches) -> None:
        batch, file = self.batch, item.file
        for b in item.batches:
            batch(file, b)

    def _trailing_bytes(self, item: M.TrailingBytes) -> None:
        """DumpLogSegments' line after a segment that ends in bytes it could not read."""
        if self.text:
            self.line(f"Found {item.size} invalid bytes at the end of {item.path.name}")

    def _index_report(self, item: M.IndexReport) -> None:
        if self.text:
            self.index_reports.append(item)

    def _print_index_reports(self) -> None:
        """DumpLogSegments' report of the index checks after all files (stderr): offset-index
        mismatches newest first, then time-index timestamp mismatches, out-of-order timestamps
        and offsets not found, in the order found."""
        reports = self.index_reports
        for r in reports:
            if r.kind == "mismatch":
                note(f"Mismatches in :{r.path.absolute()}")
                for a, b in reversed(r.pairs):
                    note(f"  Index offset: {a}, log offset: {b}")
        for kind, title, text in (
            ("timestamp", "Found timestamp mismatch in :{}",
             "  Index timestamp: {}, log timestamp: {}"),
            ("order", "Found out of order timestamp in :{}",
             "  Index timestamp: {}, Previously indexed timestamp: {}"),
        ):  # fmt: skip
            for r in reports:
                if r.kind == kind:
                    note(title.format(r.path.absolute()))
                    for a, b in r.pairs:
                        note(text.format(a, b))
        for r in reports:
            if r.kind == "not_found":
                note("The following indexed offsets are not found in the log.")
                for a, b in r.pairs:
                    note(f"Indexed offset: {a}, found log offset: {b}")

    def _index_entry(self, item: M.IndexEntry) -> None:
        from kctl.logfmt.indexes import OffsetEntry

        if isinstance(item.entry, OffsetEntry):
            self.offset_index_entry(item.path, item.entry)
        else:
            self.time_index_entry(item.path, item.entry)

    # -- the stream --------------------------------------------------------------------------
    def obj(self, doc: dict[str, Any]) -> None:
        if self.fmt == "jsonl":
            self.out.write(to_json(doc, indent=False) + "\n")
        elif self.fmt == "json":
            self.out.write(("[\n" if self.first else ",\n") + to_json(doc, indent=False))
            self.first = False
        else:
            self.collected.append(doc)

    def raw(self, text: str) -> None:
        """One document already serialised (the fast path); -o json/jsonl only."""
        if self.fmt == "jsonl":
            self.out.write(text + "\n")
        else:
            self.out.write(("[\n" if self.first else ",\n") + text)
            self.first = False

    def line(self, text: str) -> None:
        self.out.write(text + "\n")

    def problem(self, file: Any, p: Any) -> None:
        """``p`` is a :class:`kctl.logfmt.batch.Problem` found in ``file``."""
        self.problems += 1
        where = f"byte {p.position}"
        resumed = "" if p.resumed_at is None else f", resumed at byte {p.resumed_at}"
        note(f"kctl: {file}: {where}: {p.kind}: {p.reason}{resumed}")
        if not self.text:
            self.obj(
                {
                    "file": str(file),
                    "problem": p.kind,
                    "position": p.position,
                    "reason": p.reason,
                    "resumed_at": p.resumed_at,
                }
            )

    def finish(self) -> None:
        """Close the -o json array, or render what table/csv/yaml collected."""
        if self.index_reports:
            self.out.flush()
            self._print_index_reports()
        if self.fmt == "json":
            self.out.write("[]\n" if self.first else "\n]\n")
        elif not self.text and self.fmt != "jsonl":
            self._emit_collected()

    def _emit_collected(self) -> None:
        from kctl.formatters import Output, View, cols, emit

        rows = self.collected
        keys: list[str] = []
        for row in rows:
            for k in row:
                if k not in keys and k != "file" and not isinstance(row[k], list | dict):
                    keys.append(k)
        if "base_offset" in keys:  # batches: the columns that fit a terminal
            keys = [k for k in BATCH_COLUMNS if k in keys] + [k for k in keys if k == "problem"]
        view = self.view or View(self.fmt or "table")
        emit(Output(rows, cols(*keys), doc=rows), view, self.out)

    # -- files -------------------------------------------------------------------------------
    def file_start(self, path: Any) -> None:
        if self.text:
            self.line(f"Dumping {path}")

    def log_start(self, kind: str, base_offset: int, snapshot: tuple[int, int] | None) -> None:
        """The line after ``Dumping``: a segment's base offset, or which KRaft snapshot."""
        if not self.text:
            return
        if kind == "log":
            self.line(f"Log starting offset: {base_offset}")
        elif snapshot is None:
            self.line("KRaft bootstrap snapshot")
        else:
            self.line(f"Snapshot end offset: {snapshot[0]}, epoch: {snapshot[1]}")

    def partition(self, summary: Any) -> None:
        """One partition directory's summary (:class:`kctl.dump.summary.PartitionSummary`)."""
        if self.text:
            r = summary.row()
            self.line(" ".join(f"{k}: {text_value(v)}" for k, v in r.items()))
        else:
            self.obj(summary.document())

    def offset_gaps(self, path: Any, pairs: list[tuple[int, int]], count: int) -> None:
        """DumpLogSegments' non-consecutive offsets report (stderr; information, not a
        problem)."""
        if not count:
            return
        note(f"Non-consecutive offsets in {path}")
        for a, b in pairs:
            note(f"  {a} is followed by {b}")
        if count > len(pairs):
            note(f"  ... and {count - len(pairs)} more")

    # -- batches and records -----------------------------------------------------------------
    def batch(self, file: str, b: Any) -> None:
        if self.text:
            self.line(batch_text(b))
        else:
            self.obj(batch_doc(file, b))

    def v2_lines(self, base: int, heads: list[tuple[int, V2Header]]) -> None:
        """Text lines of valid magic-2 batches straight from their headers (as
        :func:`kctl.logfmt.batch.v2_headers` gives them, positions relative to ``base``):
        exactly :func:`batch_text` of their :class:`Batch`, without building one."""
        templates = _V2_TEMPLATES
        lines: list[str] = []
        append = lines.append
        for pos, h in heads:
            # Every field by name, in one step (V2Header's order; this is the hot loop).
            (
                base_offset,
                length,
                leader_epoch,
                _magic,
                crc,
                attrs,
                last_delta,
                first_ts,
                max_ts,
                producer_id,
                producer_epoch,
                base_seq,
                records_count,
            ) = h
            t = templates.get(attrs)
            if t is None:
                t = templates[attrs] = _v2_template(attrs)
            last_seq = -1 if base_seq < 0 else (base_seq + last_delta) & 0x7FFFFFFF
            if attrs & DELETE_HORIZON_BIT:  # the delete horizon is the first timestamp
                append(
                    t
                    % (
                        base_offset,
                        base_offset + last_delta,
                        records_count,
                        base_seq,
                        last_seq,
                        producer_id,
                        producer_epoch,
                        leader_epoch,
                        first_ts,
                        base + pos,
                        max_ts,
                        length + LOG_OVERHEAD,
                        crc,
                    )
                )
            else:
                append(
                    t
                    % (
                        base_offset,
                        base_offset + last_delta,
                        records_count,
                        base_seq,
                        last_seq,
                        producer_id,
                        producer_epoch,
                        leader_epoch,
                        base + pos,
                        max_ts,
                        length + LOG_OVERHEAD,
                        crc,
                    )
                )
        if lines:
            lines.append("")
            self.out.write("\n".join(lines))

    def batch_with_records_json(self, file: str, b: Any, records: str) -> None:
        """A batch whose records the fast path already wrote as JSON (``{..},{..}``)."""
        self.raw(to_json(batch_doc(file, b), indent=False)[:-1] + ',"records":[' + records + "]}")

    def records(
        self,
        path: Any,
        b: Any,
        data: Any,
        rows: list[RecordRow],
        decoded: list[dict[str, Any] | None] | None = None,
    ) -> None:
        """A batch and its records: ``rows`` are :func:`kctl.logfmt.batch.decode_records`
        tuples (fields ``REC_*``) whose positions index ``data``; ``decoded`` (see
        :class:`kctl.dump.model.Records`) the meanings of control records or the decoded keys and
        values, one per row."""
        self.path = path
        if self.text:
            self._records_text(b, data, rows, decoded)
        else:
            self._records_json(path, b, data, rows, decoded)

    def _records_text(
        self, b: Any, data: Any, rows: list[RecordRow], decoded: list[Any] | None
    ) -> None:
        """DumpLogSegments' record lines: metadata (unless skipped), a control record's meaning,
        then key and payload (decoded records in Kafka's JSON form: kctl.logfmt.kafka_json)."""
        from kctl.logfmt.kafka_json import control_text, record_text

        out: list[str] = [batch_text(b)]
        ts_type = b.timestamp_type
        v2 = b.magic >= 2
        control = b.is_control
        each = iter(decoded) if decoded is not None else None
        show_data = self.data and not control
        for r in rows:
            kl, vl = r[REC_KEY_LEN], r[REC_VALUE_LEN]
            line = ""
            prefix = "| "
            if not self.skip_meta:
                line = (
                    f"| offset: {r[REC_OFFSET]} {ts_type}: {r[REC_TIMESTAMP]} keySize: {kl} "
                    f"valueSize: {vl}"
                )
                prefix = " "
                if v2:
                    keys = ",".join(k for k, _ in r[REC_HEADERS])
                    line += f" sequence: {r[REC_SEQUENCE]} headerKeys: [{keys}]"
                else:
                    line += f" isValid: {'true' if r[REC_IS_VALID] else 'false'} crc: {r[REC_CRC]}"
                if control and each is not None:
                    c = next(each)  # None: it did not decode (a problem came before)
                    if c is not None:
                        line += control_text(c)
            if show_data:
                key_text: str | None
                value_text: str | None
                if each is not None and self.typed:
                    d = next(each)
                    kp, vp = r[REC_KEY_POS], r[REC_VALUE_POS]
                    key = None if kl < 0 else bytes(data[kp : kp + kl])
                    value = None if vl < 0 else bytes(data[vp : vp + vl])
                    key_text = self._typed_text(d, "key", key, self.key_format)
                    value_text = self._typed_text(d, "value", value, self.value_format)
                    self._typed_error(b, r[REC_OFFSET], d)
                elif each is not None:
                    d = next(each)
                    key_text, value_text = (None, None) if d is None else record_text(d)
                else:
                    kp, vp = r[REC_KEY_POS], r[REC_VALUE_POS]
                    key = None if kl < 0 else bytes(data[kp : kp + kl])
                    value = None if vl < 0 else bytes(data[vp : vp + vl])
                    key_text = fmt_bytes(key, self.key_format, java=True)
                    value_text = fmt_bytes(value, self.value_format, java=True)
                if key_text is not None:
                    line += f"{prefix}key: {key_text}"
                    prefix = " "
                if value_text is not None:
                    line += f"{prefix}payload: {value_text}"
            out.append(line)
        self.out.write("\n".join(out) + "\n")

    def _records_json(
        self,
        path: Any,
        b: Any,
        data: Any,
        rows: list[RecordRow],
        decoded: list[Any] | None,
    ) -> None:
        doc = batch_doc(str(path), b)
        recs = []
        v2 = b.magic >= 2
        each = iter(decoded) if decoded is not None else None
        for r in rows:
            kl, vl, headers = r[REC_KEY_LEN], r[REC_VALUE_LEN], r[REC_HEADERS]
            rec: dict[str, Any] = {}
            if not self.skip_meta:
                rec = {
                    "offset": r[REC_OFFSET],
                    "timestamp": r[REC_TIMESTAMP],
                    "key_size": kl,
                    "value_size": vl,
                    "sequence": r[REC_SEQUENCE],
                    "header_keys": [k for k, _ in headers],
                }
                if not v2:
                    rec["crc"] = r[REC_CRC]
                    rec["is_valid"] = r[REC_IS_VALID]
                if b.is_control and each is not None:
                    c = next(each)
                    if c is not None:
                        rec["control"] = c
            if self.data and not b.is_control:
                if each is not None and self.typed:
                    d = next(each)
                    kp, vp = r[REC_KEY_POS], r[REC_VALUE_POS]
                    key = None if kl < 0 else bytes(data[kp : kp + kl])
                    value = None if vl < 0 else bytes(data[vp : vp + vl])
                    for what, raw, how in (
                        ("key", key, self.key_format),
                        ("payload", value, self.value_format),
                    ):
                        name = "value" if what == "payload" else what
                        rec[what] = d[name] if name in d else fmt_bytes(raw, how)
                    for name in TYPED_FIELDS:
                        if name in d:
                            rec[name] = d[name]
                    if headers:
                        rec["headers"] = {k: fmt_bytes(v, self.value_format) for k, v in headers}
                    self._typed_error(b, r[REC_OFFSET], d)
                elif each is not None:
                    d = next(each)
                    if d is not None:
                        rec["key"], rec["payload"] = d["key"], d["value"]
                else:
                    kp, vp = r[REC_KEY_POS], r[REC_VALUE_POS]
                    key = None if kl < 0 else bytes(data[kp : kp + kl])
                    value = None if vl < 0 else bytes(data[vp : vp + vl])
                    rec["key"] = fmt_bytes(key, self.key_format)
                    rec["payload"] = fmt_bytes(value, self.value_format)
                    if headers:
                        rec["headers"] = {k: fmt_bytes(v, self.value_format) for k, v in headers}
            recs.append(rec)
        doc["records"] = recs
        self.obj(doc)

    def _typed_text(self, d: dict[str, Any], what: str, raw: bytes | None, how: str) -> str | None:
        """A key or value of ``--key-decoder``/``--value-decoder schema-registry`` as the line
        shows it: the decoded data as compact JSON (what a decoder class's string would be), or
        the bytes as without a decoder where there is no data (no decoder, null, not decoded)."""
        if what in d:
            return to_json(d[what], indent=False)
        return fmt_bytes(raw, how, java=True)

    def _typed_error(self, b: Any, offset: int, d: dict[str, Any]) -> None:
        """A record whose key or value did not decode: a warning on stderr, counted."""
        if "error" in d:
            self.undecoded += 1
            note(f"kctl: warning: {self.path}: offset {offset}: {d['error']}")

    # -- indexes, snapshots, checkpoints -----------------------------------------------------
    def index_sanity_passed(self, path: Any) -> None:
        if self.text:
            self.line(f"{path} passed sanity check.")
        else:
            self.obj({"file": str(path), "sanity_check": "passed"})

    def index_empty(self, path: Any) -> None:
        if self.text:
            self.line(f"{path} is empty.")

    def offset_index_entry(self, path: Any, e: Any) -> None:
        if self.text:
            self.line(f"offset: {e.offset} position: {e.position}")
        else:
            self.obj({"file": str(path), "offset": e.offset, "position": e.position})

    def time_index_entry(self, path: Any, e: Any) -> None:
        if self.text:
            self.line(f"timestamp: {e.timestamp} offset: {e.offset}")
        else:
            self.obj({"file": str(path), "timestamp": e.timestamp, "offset": e.offset})

    def aborted_txn(self, file: str, t: Any) -> None:
        if self.text:
            self.line(
                f"version: {t.version} producerId: {t.producer_id} "
                f"firstOffset: {t.first_offset} lastOffset: {t.last_offset} "
                f"lastStableOffset: {t.last_stable_offset}"
            )
        else:
            self.obj({"file": file, **_asdict(t)})

    def producer_entry(self, file: str, snap: Any, e: Any) -> None:
        if self.text:
            # DumpLogSegments: Java's OptionalLong, and the batch metadata only when the entry
            # has some (a last offset); the line then ends after "lastTimestamp: T ".
            first = e.current_txn_first_offset
            line = (
                f"producerId: {e.producer_id} producerEpoch: {e.producer_epoch} "
                f"coordinatorEpoch: {e.coordinator_epoch} currentTxnFirstOffset: "
                f"{'OptionalLong.empty' if first < 0 else f'OptionalLong[{first}]'} "
                f"lastTimestamp: {e.timestamp} "
            )
            if e.last_offset >= 0:
                line += (
                    f"firstSequence: {e.first_sequence} lastSequence: {e.last_sequence} "
                    f"lastOffset: {e.last_offset} offsetDelta: {e.offset_delta} "
                    f"timestamp: {e.timestamp}"
                )
            self.line(line)
        else:
            self.obj(
                {
                    "file": file,
                    "snapshot_version": snap.version,
                    "crc": snap.crc,
                    "crc_valid": snap.crc_valid,
                    **_asdict(e),
                    "first_sequence": e.first_sequence,
                }
            )

    def small_document(self, file: str, kind: str, doc: dict[str, Any]) -> None:
        """A checkpoint, properties or quorum-state file, decoded into ``doc``."""
        if self.text:
            if "entries" in doc:
                self.line(f"version: {doc['version']} entries: {len(doc['entries'])}")
                for e in doc["entries"]:
                    self.line(" ".join(f"{k}: {v}" for k, v in e.items()))
            else:
                for k, v in doc.items():
                    # nested values as compact JSON (the file's own notation), not Python's repr
                    shown = (
                        to_json(v, indent=False) if isinstance(v, dict | list) else text_value(v)
                    )
                    self.line(f"{k}: {shown}")
        else:
            self.obj({"file": file, "type": kind, **doc})
