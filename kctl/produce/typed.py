"""Typed records for ``kctl produce`` (``--value-format avro|protobuf|json-schema``, keys
likewise): which schema each side uses, and input lines turned into Confluent wire-format
bytes before anything of a line is sent. Pure: the schemas come from a
:class:`~kctl.schemas.model.SchemaSource` (the registry client the command hands in), the
encoders from :mod:`kctl.schemas.codec`; no client library, no broker.

A line that does not fit its schema stops reading with a usage error naming the line and the
field (``line 7 does not fit the value schema ($.qty: ...)``, exit 2): the lines before it are
sent, nothing of it is (produce's rule for a malformed line, docs/produce.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from kctl.errors import UsageError
from kctl.produce.lines import Record, json_doc_record
from kctl.schemas.model import (
    JSON,
    PROTOBUF,
    RECORD_FORMATS,
    Reference,
    RegisteredSchema,
    Schema,
    SchemaSource,
)
from kctl.schemas.names import subject_and_version

# --subject-name-strategy: Confluent's TopicNameStrategy, RecordNameStrategy and
# TopicRecordNameStrategy.
STRATEGIES = ("topic", "record", "topic-record")
# What a schema file's extension says its type is (kctl schemas register reads them alike).
EXTENSIONS = {".avsc": "AVRO", ".proto": "PROTOBUF", ".json": "JSON"}


Encode = Callable[[Any], bytes]
Read = Callable[[bytes], Any]  # JSON text -> JSON data (orjson.loads, or a side's own)


@dataclass(frozen=True)
class Side:
    """What the options ask for the key or the value: ``fmt`` (avro|protobuf|json-schema), and
    either a schema file to register (``schema_file``, its text in ``schema_text``) or a subject
    to look up (``subject`` at ``version``, None: the latest); ``message``: the Protobuf message
    to write (None: the file's first)."""

    what: str  # "key" | "value"
    fmt: str
    schema_file: str | None = None
    schema_text: str | None = None
    subject: str | None = None
    version: int | None = None
    message: str | None = None
    # --{what}-reference: the subjects the schema file imports (registered with it)
    references: tuple[Reference, ...] = ()
    # --as-descriptor: a .proto file registered as its base64 FileDescriptorProto
    descriptor: bool = False

    @property
    def schema_type(self) -> str:
        return RECORD_FORMATS[self.fmt]


def check_side(
    what: str,
    fmt: str | None,
    schema_file: str | None,
    subject: str | None,
    message: str | None,
    references: tuple[Reference, ...] = (),
) -> Side | None:
    """The ``--{what}-format``/``-schema``/``-subject``/``-message`` options, checked (usage
    errors, exit 2); None when no registry format is asked for that side. The schema file is
    not read here (:func:`read_schema`)."""
    if fmt is None:
        for option, given in (
            ("schema", schema_file),
            ("subject", subject),
            ("message", message),
            ("reference", references or None),
        ):
            if given is not None:
                raise UsageError(
                    f"--{what}-{option} needs --{what}-format",
                    f"{'|'.join(RECORD_FORMATS)}",
                )
        return None
    if fmt not in RECORD_FORMATS:
        raise UsageError(f"unknown --{what}-format {fmt!r}", "|".join(RECORD_FORMATS))
    if schema_file is None and subject is None:
        raise UsageError(
            f"--{what}-format {fmt} needs --{what}-schema FILE or --{what}-subject SUBJECT"
        )
    version = None
    if subject is not None:
        subject, version = subject_and_version(subject, f"--{what}-subject")
        if schema_file is not None and version is not None:
            raise UsageError(
                f"--{what}-subject with --{what}-schema names where the file is registered",
                "it takes no version",
            )
    if references and schema_file is None:
        raise UsageError(
            f"--{what}-reference applies to --{what}-schema",
            "a subject's schema carries its references",
        )
    if message is not None and fmt != "protobuf":
        raise UsageError(f"--{what}-message applies to --{what}-format protobuf only")
    if schema_file is not None:
        suffix = schema_file[schema_file.rfind(".") :].lower() if "." in schema_file else ""
        kind = EXTENSIONS.get(suffix)
        if kind is not None and kind != RECORD_FORMATS[fmt]:
            raise UsageError(
                f"--{what}-schema {schema_file} is a {kind} schema by its extension",
                f"--{what}-format {fmt} writes {RECORD_FORMATS[fmt]}",
            )
    return Side(what, fmt, schema_file, None, subject, version, message, references)


def as_descriptors(sides: list[Side]) -> list[Side]:
    """``--as-descriptor``: the sides that register a Protobuf schema file do it as its
    descriptor; a usage error when no side does."""
    chosen = [
        replace(s, descriptor=True)
        if s.schema_file is not None and s.schema_type == PROTOBUF
        else s
        for s in sides
    ]
    if not any(s.descriptor for s in chosen):
        raise UsageError(
            "--as-descriptor applies to a .proto file registered with --value-schema or "
            "--key-schema",
            "with --value-format/--key-format protobuf",
        )
    return chosen


@dataclass(frozen=True)
class Resolved:
    """One side's schema as the registry holds it, and whether this run registered it."""

    side: Side
    registered: RegisteredSchema
    registered_now: bool

    def line(self) -> str:
        """The registry's answer, for stderr."""
        r = self.registered
        verb = "registered" if self.registered_now else "using"
        version = f" version {r.version}" if r.version is not None else ""
        return f"{self.side.what} schema: {verb} subject {r.subject!r}{version}, id {r.id}"


def resolve(
    source: SchemaSource,
    side: Side,
    topic: str,
    strategy: str,
    record_name: Callable[[Schema, str | None], str],
    subject_for: Callable[[str, str, bool, str], str],
) -> Resolved:
    """The schema ``side`` writes with: its file registered under ``--{what}-subject`` or the
    subject the naming strategy gives (the registry's id and version), or the subject's
    version looked up (nothing registered). The subject's schema must be of the side's type."""
    if side.schema_text is not None:
        schema = Schema(side.schema_type, side.schema_text, side.references)
        subject = side.subject
        if subject is None:
            name = record_name(schema, side.message) if strategy != "topic" else ""
            subject = subject_for(strategy, topic, side.what == "key", name)
        schema_id = source.register(subject, schema)
        version = _version_of(source, subject, schema, schema_id)
        return Resolved(side, RegisteredSchema(schema_id, schema, subject, version), True)
    assert side.subject is not None
    got = source.subject_version(side.subject, side.version)
    if got.schema.schema_type != side.schema_type:
        raise UsageError(
            f"subject {side.subject!r} holds a {got.schema.schema_type} schema",
            f"--{side.what}-format {side.fmt} writes {side.schema_type}",
        )
    if got.subject is None:
        got = RegisteredSchema(got.id, got.schema, side.subject, got.version)
    return Resolved(side, got, False)


def _version_of(source: SchemaSource, subject: str, schema: Schema, schema_id: int) -> int | None:
    """The version ``schema`` has under ``subject`` (the registry's register answer carries
    only the id): asked with the client's ``lookup`` when it has one, else the latest version
    when its id is ``schema_id``, else None."""
    lookup = getattr(source, "lookup", None)
    if callable(lookup):
        from kctl.errors import KctlError

        try:
            found = lookup(subject, schema)
        except KctlError:  # a registry without the lookup: the version is only informative
            found = None
        version = getattr(found, "version", None)
        if isinstance(version, int):
            return version
    latest = source.subject_version(subject)
    return latest.version if latest.id == schema_id else None


class TypedInput:
    """Input lines as records whose key and/or value are encoded with a schema (``value`` and
    ``key``: the encoders, None for a side sent as today). Counts no lines itself: callers pass
    each line's number (1-based, over all inputs, as produce counts JSON lines).

    ``messages``: per Protobuf side without ``--{what}-message``, the encoder of another
    message of the same schema by its full name: a JSON line's ``value_message``/
    ``key_message`` (what ``kctl consume`` prints beside each Protobuf record) picks the
    message that line is written as, so a topic holding several messages of one file round-trips.
    """

    def __init__(
        self,
        value: Encode | None,
        key: Encode | None,
        messages: dict[str, Callable[[str], Encode]] | None = None,
        readers: dict[str, Read] | None = None,
    ) -> None:
        self.value = value
        self.key = key
        self.messages = messages or {}
        # per side, how its JSON data is read when not with orjson.loads: a JSON Schema side
        # keeps each number's text (kctl.schemas.jsonschema.loads), so it is written as given
        self.readers = readers or {}
        self._by_message: dict[tuple[str, str], Encode] = {}

    def _pick(self, what: str, default: Encode, doc: dict[str, Any], line: int) -> Encode:
        """The encoder of the message ``doc``'s ``{what}_message`` names, when that side
        writes Protobuf without a fixed --{what}-message; else ``default``."""
        make = self.messages.get(what)
        name = doc.get(f"{what}_message")
        if make is None or not isinstance(name, str):
            return default
        got = self._by_message.get((what, name))
        if got is None:
            from kctl.errors import KctlError

            try:
                got = make(name)
            except KctlError as exc:
                raise UsageError(
                    f"line {line} does not fit the {what} schema",
                    f"{what}_message {name!r}: {exc.line()}",
                ) from None
            self._by_message[(what, name)] = got
        return got

    def _encode(
        self, encode: Encode, data: Any, what: str, line: int, source: str | None = None
    ) -> bytes:
        """``source``: what the data came from when not an input line (``--value``)."""
        from kctl.schemas.model import EncodeError

        try:
            return encode(data)
        except EncodeError as exc:
            raise UsageError(
                f"{source or f'line {line}'} does not fit the {what} schema",
                f"{exc.path}: {exc.why}",
            ) from None

    def json_record(self, text: bytes, line: int) -> Record:
        """One ``--format jsonl`` line: {"key", "value", "headers", "partition",
        "timestamp"}; the typed sides' fields are their JSON data (null: a null key, a
        tombstone value), the other sides as produce reads them without a format; other fields
        (topic, offset, value_schema_id: what ``kctl consume -o jsonl`` adds) are ignored."""
        doc = _json(text, line)
        if not isinstance(doc, dict):
            raise UsageError(f"malformed JSON line {line}", "expected a JSON object")
        spelled = {}
        for what, read in self.readers.items():  # the side's data as that side reads it
            spelled[what] = read(text).get(what)
        plain: dict[str, Any] = dict(doc)
        if self.value is not None:
            plain.pop("value", None)
        if self.key is not None:
            plain.pop("key", None)
        value, key, headers, partition, ts = json_doc_record(plain, line)
        if self.value is not None:
            data = spelled["value"] if "value" in spelled else doc.get("value")
            if data is not None:
                value = self._encode(
                    self._pick("value", self.value, doc, line), data, "value", line
                )
        if self.key is not None:
            data = spelled["key"] if "key" in spelled else doc.get("key")
            if data is not None:
                key = self._encode(self._pick("key", self.key, doc, line), data, "key", line)
        return value, key, headers, partition, ts

    def line_record(
        self, text: bytes, line: int, key_separator: bytes | None, null_marker: bytes | None
    ) -> tuple[bytes | None, bytes | None]:
        """One ``--format lines`` line: the value's JSON data (``KEY<sep>VALUE`` with
        ``--key-separator``, the key JSON data when the key is typed); a side equal to
        ``--null-marker`` is null (for the value: a tombstone)."""
        value: bytes | None = text
        key: bytes | None = None
        if key_separator is not None:
            k, sep, v = text.partition(key_separator)
            if sep:
                key, value = k, v
        if null_marker is not None:
            if value == null_marker:
                value = None
            if key == null_marker:
                key = None
        if self.value is not None and value is not None:
            value = self._encode(self.value, self._read("value", value, line), "value", line)
        if self.key is not None and key is not None:
            key = self._encode(self.key, self._read("key", key, line), "key", line)
        return value, key

    def _read(self, what: str, text: bytes, line: int, source: str | None = None) -> Any:
        return _json(text, line, source, self.readers.get(what))

    def values(self, lines: list[bytes], first: int) -> tuple[list[bytes], UsageError | None]:
        """The fast shape: each line the value's JSON data, no key, no marker. The encoded
        values of ``lines`` (numbered from ``first``) up to the first line that is malformed or
        does not fit, and that line's error (None when all fit). Blank lines are skipped (an
        empty line is no JSON data); they keep their numbers."""
        import orjson

        encode = self.value
        assert encode is not None
        from kctl.schemas.model import EncodeError

        loads = self.readers.get("value", orjson.loads)
        try:  # the common case, every line fits: the loop in C (map), no Python per line
            return list(map(encode, map(loads, lines))), None
        except (orjson.JSONDecodeError, EncodeError):
            pass  # again line by line, to send what comes before the bad line and name it
        out: list[bytes] = []
        append = out.append
        n = first
        try:
            for n, text in enumerate(lines, first):  # noqa: B007 - n names the failing line
                if not text or text.isspace():
                    continue
                append(encode(loads(text)))
        except orjson.JSONDecodeError as exc:
            return out, UsageError(f"malformed JSON line {n}", str(exc))
        except EncodeError as exc:
            return out, UsageError(
                f"line {n} does not fit the value schema", f"{exc.path}: {exc.why}"
            )
        return out, None

    def single(self, value: bytes | None, key: bytes | None) -> tuple[bytes | None, bytes | None]:
        """``--value``/``--key``: their text is the JSON data of a typed side (line 1)."""
        if self.value is not None and value is not None:
            data = self._read("value", value, 1, "--value")
            value = self._encode(self.value, data, "value", 1, "--value")
        if self.key is not None and key is not None:
            key = self._encode(self.key, self._read("key", key, 1, "--key"), "key", 1, "--key")
        return value, key


def _json(text: bytes, line: int, source: str | None = None, read: Read | None = None) -> Any:
    import orjson

    try:
        return (read or orjson.loads)(text)
    except orjson.JSONDecodeError as exc:
        what = f"{source} is not JSON data" if source else f"malformed JSON line {line}"
        raise UsageError(what, str(exc)) from None


def build(
    source: SchemaSource,
    sides: list[Side],
    topic: str,
    strategy: str,
) -> tuple[TypedInput, list[Resolved]]:
    """The encoders of the typed sides, each schema resolved once (:func:`resolve`) and
    compiled once (:class:`kctl.schemas.codec.RecordEncoder`): nothing per record asks the
    registry again."""
    from kctl.schemas import codec

    encoders: dict[str, Encode] = {}
    messages: dict[str, Callable[[str], Encode]] = {}
    readers: dict[str, Read] = {}
    resolved: list[Resolved] = []
    for side in sides:
        if side.descriptor and side.schema_text is not None and side.schema_type == PROTOBUF:
            name = (side.schema_file or "schema.proto").replace("\\", "/").rsplit("/", 1)[-1]
            as_text = Schema(PROTOBUF, side.schema_text, side.references)
            side = replace(side, schema_text=codec.protobuf_descriptor(source, as_text, name).text)
        got = resolve(source, side, topic, strategy, codec.record_name, codec.subject_for)
        encoder = codec.RecordEncoder.for_schema(source, got.registered, message=side.message)
        encoders[side.what] = encoder.encode
        if got.registered.schema.schema_type == JSON:
            from kctl.schemas.jsonschema import loads

            readers[side.what] = loads
        if side.fmt == "protobuf" and side.message is None:
            registered = got.registered

            def other(name: str, registered: RegisteredSchema = registered) -> Encode:
                return codec.RecordEncoder.for_schema(source, registered, message=name).encode

            messages[side.what] = other
        resolved.append(got)
    return TypedInput(encoders.get("value"), encoders.get("key"), messages, readers), resolved
