"""Streaming record writers for ``kctl consume``: jsonl, table, plain and template.

Each writer takes a batch of confluent-kafka messages and writes it to a binary stream in one
call. A key or value that cannot be decoded as asked never stops the stream: it is written as
base64, with an ``error`` field (jsonl) or a warning on stderr (other formats).
A closed pipe raises BrokenPipeError, which the CLI turns into a quiet exit 0.

Schema Registry formats (avro, protobuf, json-schema, schema-registry) decode through a codec
the command hands over (:class:`Typed` around ``kctl.schemas.codec.RecordDecoder``): the value
is the record's JSON data, with its schema id (and Protobuf message name) beside it; a record
that does not decode is written raw (base64) with an ``error`` and counted in
``writer.undecoded`` (the command turns that into a warning and exit 3).

Records are written whole: to a file descriptor in slices that end at record boundaries, so
that when told to stop (``writer.stopping``, set by a signal handler) while stdout blocks,
the writer finishes the record it is in the middle of and writes no more of the batch.
"""

from __future__ import annotations

import base64
import bisect
import io
import itertools
import operator
import os
import select
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, BinaryIO

# The Schema Registry formats (kctl.schemas.model.REGISTRY_FORMATS): decoded by a codec.
REGISTRY_FORMATS = ("avro", "protobuf", "json-schema", "schema-registry")
FORMATS = ("string", "json", "bytes", "base64", "hex", *REGISTRY_FORMATS)
OUTPUTS = ("jsonl", "json", "table", "plain")
TIMESTAMP_TYPES = (None, "CreateTime", "LogAppendTime")

# A decoder: bytes -> (JSON-able value, error or None). On error the value is base64 text.
Decoder = Callable[[bytes], tuple[Any, str | None]]

# Bytes per write(2) at most (a pipe's capacity): a write retried after a signal (PEP 475)
# goes on to the end of its slice, which is always the end of a record.
SLICE = 1 << 16


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _string(data: bytes) -> tuple[Any, str | None]:
    try:
        return data.decode(), None
    except UnicodeDecodeError as exc:
        return _b64(data), f"not valid UTF-8 at byte {exc.start}; shown as base64"


def _json(data: bytes) -> tuple[Any, str | None]:
    import orjson

    try:
        return orjson.loads(data), None
    except orjson.JSONDecodeError as exc:
        return _b64(data), f"not valid JSON ({exc}); shown as base64"


def _bytes(data: bytes) -> tuple[Any, str | None]:
    # In JSON, raw bytes become text with \xNN escapes for what is not UTF-8.
    return data.decode("utf-8", "backslashreplace"), None


DECODERS: dict[str, Decoder] = {
    "string": _string,
    "json": _json,
    "bytes": _bytes,
    "base64": lambda d: (_b64(d), None),
    "hex": lambda d: (d.hex(), None),
}


def framed_id(data: bytes) -> int | None:
    """The schema id of bytes in Confluent's wire format (magic 0, a 4-byte id), else None."""
    if len(data) >= 5 and data[0] == 0:
        return int.from_bytes(data[1:5], "big")
    return None


class Typed:
    """Keys or values in a Schema Registry format: ``codec.decode(bytes)`` (a
    ``kctl.schemas.codec.RecordDecoder``: ``.value``, ``.schema_id``, ``.message``) as a
    :data:`Decoder`, the last record's schema id and message kept for the writer. Bytes that do
    not decode (``kctl.schemas.model.DecodeError``) come back as base64 with the reason; a
    registry that cannot be reached (a KctlError) propagates and ends the run."""

    def __init__(self, codec: Any, fmt: str) -> None:
        from kctl.schemas.model import DecodeError

        self.codec = codec
        self.fmt = fmt
        # Protobuf names the message (schema-registry may meet any type): the field is there
        self.messages = fmt in ("protobuf", "schema-registry")
        self.failure = DecodeError
        self.schema_id: int | None = None
        self.message: str | None = None

    def __call__(self, data: bytes) -> tuple[Any, str | None]:
        try:
            d = self.codec.decode(data)
        except self.failure as exc:
            self.schema_id, self.message = framed_id(data), None
            return _b64(data), self.why(exc)
        self.schema_id, self.message = d.schema_id, d.message
        return d.value, None

    def why(self, exc: Exception) -> str:
        return f"could not be decoded as {self.fmt} ({exc}); shown as base64"

    def many(self, datas: list[bytes | None]) -> list[tuple[Any, str | None, Any, Any]]:
        """(value, error, schema id, message) of each (all None for a null key/value), decoded
        in one call of the codec's batch method (``decode_many``: each a result or its
        DecodeError)."""
        present = [d for d in datas if d is not None]
        done = iter(self.codec.decode_many(present))
        failure = self.failure
        out: list[tuple[Any, str | None, Any, Any]] = []
        append = out.append
        for d in datas:
            if d is None:
                append((None, None, None, None))
                continue
            r = next(done)
            if isinstance(r, failure):
                append((_b64(d), self.why(r), framed_id(d), None))
            else:
                append((r.value, None, r.schema_id, r.message))
        return out


class Writer:
    """Base: decoding of keys, values and headers; subclasses render."""

    def __init__(
        self,
        out: BinaryIO,
        key_format: str = "string",
        value_format: str = "string",
        *,
        codecs: Callable[[str], Any] | None = None,
    ):
        self.out = out
        self.key_format = key_format
        self.value_format = value_format
        self.key_typed = (
            Typed(_codec(codecs, key_format), key_format)
            if key_format in REGISTRY_FORMATS
            else None
        )
        self.value_typed = (
            Typed(_codec(codecs, value_format), value_format)
            if value_format in REGISTRY_FORMATS
            else None
        )
        self.decode_key: Decoder = self.key_typed or DECODERS[key_format]
        self.decode_value: Decoder = self.value_typed or DECODERS[value_format]
        self.undecoded = 0  # records whose key or value did not decode in a registry format
        self.failed = False  # the record being written did (set by _text)
        self.warnings = 0
        self.stopping = False  # set from a signal handler: finish the record, write no more
        try:
            self.fd: int | None = out.fileno()
        except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
            self.fd = None
        self.flushed = False

    def emit(self, records: list[bytes]) -> int:
        """Write each record (bytes ending with its newline) whole; the number written: all
        of them, unless ``stopping`` was set before or while they were written."""
        if not records:
            return 0
        if self.fd is None:
            if self.stopping:
                return 0
            self.out.write(b"".join(records))
            return len(records)
        if not self.flushed:  # anything written through ``out`` before goes first
            self.out.flush()
            self.flushed = True
        data = memoryview(b"".join(records))
        ends = list(itertools.accumulate(map(len, records)))
        total = ends[-1]
        pos = 0
        while pos < total:
            if self.stopping:
                # the end of the record we are in (none if we are between two records)
                done = bisect.bisect_right(ends, pos)
                if pos == 0 or ends[done - 1] == pos:
                    return done
                stop_at = ends[done]
            else:
                # as many whole records as fit in a slice (at least one)
                at = bisect.bisect_right(ends, pos + SLICE) - 1
                stop_at = (
                    ends[at] if at >= 0 and ends[at] > pos else ends[bisect.bisect_right(ends, pos)]
                )
            try:
                pos += os.write(self.fd, data[pos:stop_at])
            except BlockingIOError:  # a non-blocking stdout: wait until it takes more
                select.select([], [self.fd], [])
        return len(records)

    def emit_lines(self, blob: bytes, count: int) -> int:
        """:meth:`emit` for ``count`` records that each end in their only newline (JSON lines):
        the boundaries are the newlines, found as the slices are cut, with no list of ends."""
        if not blob:
            return 0
        if self.fd is None:
            if self.stopping:
                return 0
            self.out.write(blob)
            return count
        if not self.flushed:
            self.out.flush()
            self.flushed = True
        data = memoryview(blob)
        total = len(blob)
        pos = 0
        while pos < total:
            if self.stopping:
                if pos == 0 or blob[pos - 1] == 0x0A:  # between two records
                    return blob.count(b"\n", 0, pos)
                stop_at = blob.index(b"\n", pos) + 1  # the end of the record we are in
            else:
                # as many whole records as fit in a slice (at least one)
                stop_at = blob.rfind(b"\n", pos, pos + SLICE) + 1
                if stop_at <= pos:
                    stop_at = blob.index(b"\n", pos) + 1
            try:
                pos += os.write(self.fd, data[pos:stop_at])
            except BlockingIOError:
                select.select([], [self.fd], [])
        return count

    def typed_fields(self) -> dict[str, Any]:
        """The schema ids (and message names) of the record just decoded, as output fields."""
        fields: dict[str, Any] = {}
        for name, typed in (("key", self.key_typed), ("value", self.value_typed)):
            if typed is not None:
                fields[f"{name}_schema_id"] = typed.schema_id
                if typed.messages:
                    fields[f"{name}_message"] = typed.message
        return fields

    def warn(self, msg: Any, what: str, error: str) -> None:
        self.warnings += 1
        sys.stderr.write(
            f"kctl: warning: {msg.topic()}[{msg.partition()}]@{msg.offset()}: {what} {error}\n"
        )

    def headers(self, raw: list[tuple[str, bytes | None]] | None) -> tuple[list[Any], str | None]:
        if not raw:
            return [], None
        out: list[Any] = []
        error = None
        for k, v in raw:
            if v is None:
                out.append([k, None])
                continue
            text, err = _string(v)
            if err:
                error = f"header {k!r} {err}"
            out.append([k, text])
        return out, error

    def write(self, msgs: list[Any]) -> int:
        """Write a batch; the number of records written (fewer only when stopping)."""
        raise NotImplementedError

    def flush(self) -> None:
        if self.fd is None:
            self.out.flush()


class JsonLinesWriter(Writer):
    """One JSON object per record: topic, partition, offset, timestamp, timestamp_type, key,
    value, headers, leader_epoch (+ error, key_encoding/value_encoding when a fallback)."""

    def write(self, msgs: list[Any]) -> int:
        if self.key_format == "string" and self.value_format == "string":
            block = jsonl_block(msgs)
            if block is not None:
                return self.emit_lines(block, len(msgs))
        return self._write(msgs)

    def _write(self, msgs: list[Any]) -> int:
        """One object per record. A key or value in a Schema Registry format is decoded for the
        whole batch in one call (values, then keys), its schema id (and message) beside it; the
        others record by record (text in line: the common case of JSON text needing escapes)."""
        import orjson
        from confluent_kafka import Message

        dumps = orjson.dumps
        opt = orjson.OPT_APPEND_NEWLINE
        types = TIMESTAMP_TYPES
        kt, vt = self.key_typed, self.value_typed
        values = vt.many(list(map(Message.value, msgs))) if vt is not None else None
        keys = kt.many(list(map(Message.key, msgs))) if kt is not None else None
        if values is not None and kt is None and self.key_format == "string":
            block = _typed_block(
                msgs, list(map(Message.key, msgs)), values, vt is not None and vt.messages
            )
            if block is not None:
                return self.emit_lines(block, len(msgs))
        fast_value = self.value_format == "string"
        fast_key = self.key_format == "string"
        decode_key, decode_value = self.decode_key, self.decode_value
        parts: list[bytes] = []
        for i, m in enumerate(msgs):
            errors: dict[str, Any] | None = None
            failed = False
            extra: dict[str, Any] | None = None
            if values is not None:
                value, err, sid, message = values[i]
                extra = {"value_schema_id": sid}
                if vt is not None and vt.messages:
                    extra["value_message"] = message
                if err:
                    failed = True
                    errors = {"value_encoding": "base64", "error": f"value {err}"}
            else:
                value = m.value()
                if value is not None:
                    if fast_value:
                        try:
                            value = value.decode()
                        except UnicodeDecodeError:
                            value, err = _string(value)
                            errors = {"value_encoding": "base64", "error": f"value {err}"}
                    else:
                        value, err = decode_value(value)
                        if err:
                            errors = {"value_encoding": "base64", "error": f"value {err}"}
            if keys is not None:
                key, err, sid, message = keys[i]
                first: dict[str, Any] = {"key_schema_id": sid}
                if kt is not None and kt.messages:
                    first["key_message"] = message
                extra = first | extra if extra else first
                if err:
                    failed = True
                    errors = _key_error(errors, err)
            else:
                key = m.key()
                if key is not None:
                    if fast_key:
                        try:
                            key = key.decode()
                        except UnicodeDecodeError:
                            key, err = _string(key)
                            errors = _key_error(errors, err)
                    else:
                        key, err = decode_key(key)
                        if err:
                            errors = _key_error(errors, err)
            raw_headers = m.headers()
            headers: list[Any] = []
            if raw_headers:
                headers, err = self.headers(raw_headers)
                if err:
                    errors = (errors or {}) | {"error": err}
            tstype, ts = m.timestamp()
            doc = {
                "topic": m.topic(),
                "partition": m.partition(),
                "offset": m.offset(),
                "timestamp": ts if tstype else None,
                "timestamp_type": types[tstype],
                "key": key,
                "value": value,
                "headers": headers,
                "leader_epoch": m.leader_epoch(),
            }
            if extra:
                doc.update(extra)
            if errors:
                doc.update(errors)
            if failed:
                self.undecoded += 1
            parts.append(dumps(doc, option=opt))
        return self.emit(parts)


def _key_error(errors: dict[str, Any] | None, err: str | None) -> dict[str, Any]:
    """``errors`` with the key's: its encoding, and its reason as the error (over the value's)."""
    errors = (errors or {}) | {"key_encoding": "base64"}
    errors["error"] = f"key {err}"
    return errors


_NULL = b"null"


def _typed_block(
    msgs: list[Any],
    raw_keys: list[bytes | None],
    values: list[tuple[Any, str | None, Any, Any]],
    messages: bool,
) -> bytes | None:
    """The JSON lines of a batch whose values decoded (a registry format) and whose keys are
    text: the exact bytes of :meth:`JsonLinesWriter._write`'s objects, made with one
    ``%`` over the batch and one orjson call per value, or None where that way does not apply
    (a value that did not decode, a key that is not UTF-8, headers, several topics or
    timestamp types, a record without a leader epoch): then record by record."""
    import orjson
    from confluent_kafka import Message

    n = len(msgs)
    if not n or any(map(Message.headers, msgs)) or any(v[1] is not None for v in values):
        return None
    topics = set(map(Message.topic, msgs))
    epochs = list(map(Message.leader_epoch, msgs))
    if len(topics) != 1 or None in epochs:
        return None
    stamps = list(map(Message.timestamp, msgs))
    kinds = set(map(_first, stamps))
    if len(kinds) != 1 or kinds == {0}:
        return None
    dumps = orjson.dumps
    try:
        keys = [_NULL if k is None else dumps(k.decode()) for k in raw_keys]
    except UnicodeDecodeError:
        return None
    (kind,) = kinds
    one = (
        b'{"topic":%s,"partition":%%d,"offset":%%d,"timestamp":%%d,"timestamp_type":"%s",'
        b'"key":%%s,"value":%%s,"headers":[],"leader_epoch":%%d,"value_schema_id":%%s%s}\n'
        % (
            dumps(topics.pop()),
            str(TIMESTAMP_TYPES[kind]).encode(),
            b',"value_message":%s' if messages else b"",
        )
    )
    rendered = [dumps(v[0]) for v in values]
    ids = [_NULL if v[2] is None else b"%d" % v[2] for v in values]
    columns = [
        list(map(Message.partition, msgs)),
        list(map(Message.offset, msgs)),
        list(map(_second, stamps)),
        keys,
        rendered,
        epochs,
        ids,
    ]
    if messages:
        columns.append([_NULL if v[3] is None else dumps(v[3]) for v in values])
    return (one * n) % tuple(itertools.chain.from_iterable(zip(*columns, strict=True)))


# The bytes of UTF-8 text a JSON string holds as they are: all but control characters, the quote
# and the backslash (deleting them with bytes.translate leaves what needs escaping: 0.3 ns a
# byte, where a regular expression search took 2.9).
_JSON_PLAIN = bytes(b for b in range(0x20, 0x100) if b not in b'"\\')


def jsonl_block(msgs: list[Any]) -> bytes | None:
    """:func:`py_jsonl_block`, in C when kctl.runtime.native chooses kctl._native (~0.3 µs a
    record instead of ~1.1: the same bytes, the same cases declined)."""
    from kctl.runtime import native

    in_c = native.jsonl_block()
    if in_c is None:
        return py_jsonl_block(msgs)
    return in_c(msgs, TIMESTAMP_TYPES)


def py_jsonl_block(msgs: list[Any]) -> bytes | None:
    """The JSON lines of a batch of one topic's records, made with one ``%`` over the whole batch
    instead of a dict and an orjson call per record — exactly the bytes
    :class:`JsonLinesWriter` writes record by record — or None when the fast way does not
    apply: keys and values must be UTF-8 text needing no JSON escape, every value present, keys
    all present or all absent, no headers, one timestamp type, a leader epoch on every record.
    (What consumers of ordinary topics mostly read.)"""
    import orjson
    from confluent_kafka import Message

    n = len(msgs)
    if not n or any(map(Message.headers, msgs)):
        return None
    topics = set(map(Message.topic, msgs))
    values: list[Any] = list(map(Message.value, msgs))
    keys: list[Any] = list(map(Message.key, msgs))
    epochs = list(map(Message.leader_epoch, msgs))
    if len(topics) != 1 or None in values or None in epochs:
        return None
    absent = keys.count(None)
    if absent not in (0, n):
        return None
    fields = values if absent else values + keys
    text = b"".join(fields)
    if text.translate(None, _JSON_PLAIN):
        return None
    if not text.isascii():
        # Every field valid UTF-8 (orjson writes such text as it is): joined with a byte that
        # cannot continue a character, one field's broken end cannot pass for valid.
        try:
            b"\n".join(fields).decode()
        except UnicodeDecodeError:
            return None
    stamps = list(map(Message.timestamp, msgs))
    kinds = set(map(_first, stamps))
    if len(kinds) != 1 or kinds == {0}:  # 0: no timestamp (null)
        return None
    (kind,) = kinds
    one = (
        b'{"topic":%s,"partition":%%d,"offset":%%d,"timestamp":%%d,"timestamp_type":"%s",'
        b'"key":%s,"value":"%%s","headers":[],"leader_epoch":%%d}\n'
        % (
            orjson.dumps(topics.pop()),
            str(TIMESTAMP_TYPES[kind]).encode(),
            b"null" if absent else b'"%s"',
        )
    )
    columns = [
        list(map(Message.partition, msgs)),
        list(map(Message.offset, msgs)),
        list(map(_second, stamps)),
        *([] if absent else [keys]),
        values,
        epochs,
    ]
    return (one * n) % tuple(itertools.chain.from_iterable(zip(*columns, strict=True)))


_first = operator.itemgetter(0)
_second = operator.itemgetter(1)


def _text(writer: Writer, msg: Any, raw: bytes | None, what: str, decode: Decoder) -> str:
    if raw is None:
        if isinstance(decode, Typed):
            decode.schema_id = decode.message = None
        return ""
    value, err = decode(raw)
    if err:
        writer.warn(msg, what, err)
        if isinstance(decode, Typed):
            writer.failed = True
    if not isinstance(value, str):
        from kctl.formatters import to_json

        return to_json(value, indent=False)
    return value


class PlainWriter(Writer):
    """The value only, one per line (raw bytes with --value-format bytes)."""

    def write(self, msgs: list[Any]) -> int:
        if self.value_format == "bytes":
            parts = [(m.value() or b"") + b"\n" for m in msgs]
        elif self.value_typed is not None:
            parts = []
            for m in msgs:
                self.failed = False
                parts.append(_text(self, m, m.value(), "value", self.decode_value).encode() + b"\n")
                self.undecoded += self.failed
        else:
            parts = [
                _text(self, m, m.value(), "value", self.decode_value).encode() + b"\n" for m in msgs
            ]
        return self.emit(parts)


class TemplateWriter(Writer):
    """``--template '{partition}:{offset} {key}={value}'``: Python format fields topic,
    partition, offset, timestamp, timestamp_type, key, value, headers, leader_epoch, and for the
    Schema Registry formats key_schema_id, value_schema_id, key_message, value_message (empty
    when there is none)."""

    FIELDS = (
        "topic",
        "partition",
        "offset",
        "timestamp",
        "timestamp_type",
        "key",
        "value",
        "headers",
        "leader_epoch",
        "key_schema_id",
        "value_schema_id",
        "key_message",
        "value_message",
    )

    def __init__(
        self,
        out: BinaryIO,
        template: str,
        key_format: str,
        value_format: str,
        *,
        codecs: Callable[[str], Any] | None = None,
    ):
        super().__init__(out, key_format, value_format, codecs=codecs)
        self.template = template.replace("\\t", "\t").replace("\\n", "\n")
        self.check()

    def check(self) -> None:
        import string

        from kctl.errors import UsageError

        try:
            names = [f for _, f, _, _ in string.Formatter().parse(self.template) if f is not None]
        except ValueError as exc:
            raise UsageError(f"malformed --template {self.template!r}", str(exc)) from None
        for name in names:
            base = name.split(".")[0].split("[")[0]
            if base not in self.FIELDS:
                raise UsageError(
                    f"unknown field {{{name}}} in --template",
                    f"fields: {', '.join(self.FIELDS)}",
                )
            if base != name:
                raise UsageError(
                    f"malformed --template field {{{name}}}", "fields take no [index] or .attribute"
                )
        # A trial with values of each field's type: bad format specs ({offset:%%%}) and
        # conversions ({offset!z}) fail here, before anything is read.
        sample = dict.fromkeys(self.FIELDS, "x") | {
            "partition": 0, "offset": 0, "timestamp": 0, "leader_epoch": 0,
            "key_schema_id": 0, "value_schema_id": 0,
        }  # fmt: skip
        try:
            self.template.format(**sample)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
            raise UsageError(f"malformed --template {self.template!r}", str(exc)) from None

    def write(self, msgs: list[Any]) -> int:
        parts = []
        for m in msgs:
            tstype, ts = m.timestamp()
            headers, err = self.headers(m.headers())
            if err:
                self.warn(m, "", err)
            self.failed = False
            fields = {
                "topic": m.topic(),
                "partition": m.partition(),
                "offset": m.offset(),
                "timestamp": ts if tstype else "",
                "timestamp_type": TIMESTAMP_TYPES[tstype] or "",
                "key": _text(self, m, m.key(), "key", self.decode_key),
                "value": _text(self, m, m.value(), "value", self.decode_value),
                "headers": ",".join(f"{k}={v if v is not None else ''}" for k, v in headers),
                "leader_epoch": m.leader_epoch() if m.leader_epoch() is not None else "",
                "key_schema_id": "",
                "value_schema_id": "",
                "key_message": "",
                "value_message": "",
            }
            for name, found in self.typed_fields().items():
                if found is not None:
                    fields[name] = found
            self.undecoded += self.failed
            parts.append((self.template.format_map(fields) + "\n").encode())
        return self.emit(parts)


NULL_CELL = "(null)"
EMPTY_CELL = '""'


class TableWriter(Writer):
    """Aligned columns for people; the header once (unless --no-headers)."""

    def __init__(
        self,
        out: BinaryIO,
        key_format: str,
        value_format: str,
        *,
        headers: bool,
        topic: bool,
        codecs: Callable[[str], Any] | None = None,
    ):
        super().__init__(out, key_format, value_format, codecs=codecs)
        self.show_topic = topic
        self.pending_header = headers

    def _row(self, cells: list[str]) -> str:
        widths = ([24] if self.show_topic else []) + [9, 12, 24, 16]
        head = "".join(c.ljust(w) + " " for c, w in zip(cells, widths, strict=False))
        return head + cells[-1]

    def _cell(self, msg: Any, raw: bytes | None, what: str, decode: Decoder) -> str:
        """A null key or value shows as (null), an empty one as "": never alike."""
        if raw is None:
            return NULL_CELL
        text = _text(self, msg, raw, what, decode).replace("\n", "\\n")
        return text if text else EMPTY_CELL

    def write(self, msgs: list[Any]) -> int:
        header = ""
        if self.pending_header:
            names = ["TOPIC"] if self.show_topic else []
            header = self._row([*names, "PARTITION", "OFFSET", "TIMESTAMP", "KEY", "VALUE"]) + "\n"
        lines = []
        for m in msgs:
            tstype, ts = m.timestamp()
            when = (
                datetime.fromtimestamp(ts / 1000, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"
                if tstype
                else ""
            )
            self.failed = False
            key = self._cell(m, m.key(), "key", self.decode_key)
            value = self._cell(m, m.value(), "value", self.decode_value)
            self.undecoded += self.failed
            cells = [m.topic()] if self.show_topic else []
            cells += [str(m.partition()), str(m.offset()), when, key, value]
            lines.append((self._row(cells) + "\n").encode())
        if header and lines:  # the header goes out with the first row
            lines[0] = header.encode() + lines[0]
        written = self.emit(lines)
        if written:
            self.pending_header = False
        return written


def make_writer(
    out: BinaryIO,
    output: str,
    *,
    template: str | None,
    key_format: str,
    value_format: str,
    headers: bool = True,
    many_topics: bool = False,
    codecs: Callable[[str], Any] | None = None,
) -> Writer:
    """The writer of ``output``; ``codecs(fmt)`` makes the decoder of a Schema Registry format
    (called only when one is asked for: the registry is not contacted otherwise)."""
    from kctl.errors import UsageError
    from kctl.parsing import payload_format

    key_format = payload_format(key_format, "--key-format", FORMATS)
    value_format = payload_format(value_format, "--value-format", FORMATS)
    if template is not None:
        return TemplateWriter(out, template, key_format, value_format, codecs=codecs)
    if output not in ("jsonl", "json", "plain", "table"):
        raise UsageError(
            f"consume cannot write -o {output}", "use jsonl, table, plain or --template"
        )
    if output in ("jsonl", "json"):
        return JsonLinesWriter(out, key_format, value_format, codecs=codecs)
    if output == "plain":
        return PlainWriter(out, key_format, value_format, codecs=codecs)
    return TableWriter(
        out, key_format, value_format, headers=headers, topic=many_topics, codecs=codecs
    )


def _codec(codecs: Callable[[str], Any] | None, fmt: str) -> Any:
    if codecs is None:
        from kctl.errors import UsageError

        raise UsageError(f"{fmt} needs a Schema Registry")
    return codecs(fmt)
