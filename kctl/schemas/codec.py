"""The face the commands use: a record's framed bytes <-> JSON data through a SchemaSource
(docs/schema-formats.md).

:class:`RecordDecoder` reads the wire format, asks the source for the schema of each id once
(the compiled codec is cached per id, an unknown id too), and decodes with the Avro, Protobuf
or JSON Schema codec. :class:`RecordEncoder` frames what one registered schema encodes.
:func:`record_name` and :func:`subject_for` name subjects as Confluent's serializers do.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from kctl.errors import KctlError, NotFoundError
from kctl.schemas import wire
from kctl.schemas.model import (
    AVRO,
    JSON,
    PROTOBUF,
    RECORD_FORMATS,
    REGISTRY_FORMATS,
    DecodeError,
    EncodeError,
    RegisteredSchema,
    Schema,
    SchemaError,
    SchemaSource,
)

_TYPE_WORDS = {AVRO: "Avro", PROTOBUF: "Protobuf", JSON: "JSON Schema"}


class Decoded(NamedTuple):
    """One decoded key or value: JSON data, the schema id it was written with and, for
    Protobuf, the message's full name (a tuple: cheap to make once per record)."""

    value: Any
    schema_id: int
    message: str | None = None
    schema_type: str = AVRO


def _references(source: SchemaSource, schema: Schema) -> list[tuple[str, Schema]]:
    """Every schema ``schema`` references, directly or not, dependencies first, each once:
    (the name the importing schema uses, the schema)."""
    out: list[tuple[str, Schema]] = []
    seen: set[tuple[str, int]] = set()

    def visit(current: Schema, depth: int) -> None:
        if depth > 64:
            raise SchemaError("schema references nest deeper than 64", "a cycle?")
        for ref in current.references:
            key = (ref.subject, ref.version)
            if key in seen:
                continue
            seen.add(key)
            try:
                found = source.subject_version(ref.subject, ref.version).schema
            except NotFoundError as exc:
                raise SchemaError(
                    f"reference {ref.name!r} ({ref.subject} version {ref.version}) not found",
                    exc.line(),
                ) from None
            visit(found, depth + 1)
            out.append((ref.name, found))

    visit(schema, 0)
    return out


class _Compiled:
    """A schema compiled for decoding and encoding (Protobuf: per message-index path)."""

    def __init__(
        self, source: SchemaSource, schema: Schema, *, json_style: str = "compact"
    ) -> None:
        self.schema = schema
        refs = _references(source, schema)
        self.type = schema.schema_type
        self.avro: Any = None
        self.proto: Any = None
        self.json: Any = None
        self._proto_codecs: dict[tuple[int, ...], Any] = {}
        if self.type == AVRO:
            from kctl.schemas.avro import AvroCodec

            self.avro = AvroCodec(schema.text, [s.text for _, s in refs])
        elif self.type == PROTOBUF:
            from kctl.schemas.protobuf import ProtobufSchema

            self.proto = ProtobufSchema(schema.text, [(n, s.text) for n, s in refs])
        elif self.type == JSON:
            from kctl.schemas.jsonschema import JsonSchemaCodec

            self.json = JsonSchemaCodec(
                schema.text, [(n, s.text) for n, s in refs], style=json_style
            )
        else:
            raise SchemaError(f"schema type {self.type!r}", "not AVRO, PROTOBUF or JSON")

    def proto_codec(self, path: Sequence[int]) -> Any:
        key = tuple(path)
        codec = self._proto_codecs.get(key)
        if codec is None:
            from kctl.schemas.protobuf import ProtobufCodec

            codec = ProtobufCodec(self.proto, key)
            self._proto_codecs[key] = codec
        return codec


def protobuf_descriptor(source: SchemaSource, schema: Schema, file_name: str) -> Schema:
    """``schema`` (.proto text; its references' versions resolved, the referenced schemas in
    ``source``) as the form confluent-kafka's Python ProtobufSerializer registers: its
    FileDescriptorProto (named ``file_name``) serialized and base64-encoded, compiled by protoc
    with its imports. That is what confluent-kafka's ProtobufDeserializer expects to get back
    for ``GET /schemas/ids/N?format=serialized`` (docs/schemas.md: on a registry that ignores
    ``format``, it reads only this form). A schema that is a descriptor already is returned
    as it is."""
    import base64
    from dataclasses import replace

    from kctl.schemas.protobuf import ProtobufSchema, _as_descriptor

    if schema.schema_type != PROTOBUF:
        raise SchemaError(
            "only a Protobuf schema has a descriptor", f"this one is {schema.schema_type}"
        )
    if _as_descriptor(schema.text) is not None:
        return schema
    refs = _references(source, schema)
    compiled = ProtobufSchema(schema.text, [(name, found.text) for name, found in refs])
    from google.protobuf import descriptor_pb2

    proto = descriptor_pb2.FileDescriptorProto()
    proto.CopyFrom(compiled.main_proto)
    proto.name = file_name
    return replace(schema, text=base64.b64encode(proto.SerializeToString()).decode("ascii"))


class RecordDecoder:
    """Decode framed keys or values of one format (``avro``, ``protobuf``, ``json-schema``, or
    ``schema-registry``: whatever type the id's schema has)."""

    def __init__(self, source: SchemaSource, fmt: str) -> None:
        if fmt not in REGISTRY_FORMATS:
            raise ValueError(f"format {fmt!r}: one of {', '.join(REGISTRY_FORMATS)}")
        self.source = source
        self.fmt = fmt
        self.wanted = RECORD_FORMATS.get(fmt)  # None: any type
        self._by_id: dict[int, _Compiled | DecodeError] = {}

    def compiled(self, schema_id: int) -> _Compiled:
        found = self._by_id.get(schema_id)
        if found is None:
            found = self._compile(schema_id)
            self._by_id[schema_id] = found
        if isinstance(found, DecodeError):
            raise found
        return found

    def _compile(self, schema_id: int) -> _Compiled | DecodeError:
        try:
            schema = self.source.schema_by_id(schema_id)
        except NotFoundError:
            return DecodeError(f"schema id {schema_id} is not in the registry")
        if self.wanted is not None and schema.schema_type != self.wanted:
            kind = _TYPE_WORDS.get(schema.schema_type, schema.schema_type)
            return DecodeError(f"schema id {schema_id} is {kind}, not {_TYPE_WORDS[self.wanted]}")
        try:
            return _Compiled(self.source, schema)
        except SchemaError as exc:
            # A schema kctl cannot use: every record written with it says why.
            return DecodeError(f"schema id {schema_id}: {exc.line()}")

    def decode(self, data: bytes) -> Decoded:
        """The JSON data of one framed key or value. DecodeError when it does not decode; a
        registry that cannot be reached raises its KctlError."""
        if data is None:
            raise DecodeError("no value (null)")
        if len(data) >= 5 and data[0] == 0:
            schema_id = int.from_bytes(data[1:5], "big", signed=True)
            offset = 5
        else:
            schema_id, offset = wire.parse(data)  # raises the reason
        found = self._by_id.get(schema_id)
        compiled = found if isinstance(found, _Compiled) else self.compiled(schema_id)
        avro = compiled.avro
        if avro is not None:
            return Decoded(avro.decode(data, offset), schema_id, None, AVRO)
        if compiled.proto is not None:
            path, offset = wire.read_indexes(data, offset)
            codec = compiled.proto_codec(path)
            return Decoded(codec.decode(data, offset), schema_id, codec.name, PROTOBUF)
        return Decoded(compiled.json.decode(data, offset), schema_id, None, JSON)

    def decode_many(self, datas: Iterable[bytes]) -> list[Decoded | DecodeError]:
        """Each framed value decoded, or the DecodeError it raised, in order (KctlErrors of an
        unreachable registry propagate)."""
        out: list[Decoded | DecodeError] = []
        append = out.append
        decode = self.decode
        for data in datas:
            try:
                append(decode(data))
            except DecodeError as exc:
                append(exc)
        return out


class RecordEncoder:
    """Encode JSON data with one registered schema into framed bytes."""

    def __init__(self, compiled: _Compiled, schema_id: int, message: str | None = None) -> None:
        self.schema_id = schema_id
        self.type = compiled.type
        self.message: str | None = None
        self._indexes: list[int] | None = None
        self._header = wire.header(schema_id)
        if compiled.proto is not None:
            path = compiled.proto.message_path(message)
            codec = compiled.proto_codec(path)
            self.message = codec.name
            self._indexes = path
            self._header += wire.indexes_bytes(path)
            self._codec: Any = codec
        elif compiled.avro is not None:
            if message is not None:
                raise SchemaError(
                    "--message is for Protobuf schemas", f"this one is {compiled.type}"
                )
            self._codec = compiled.avro
        else:
            if message is not None:
                raise SchemaError(
                    "--message is for Protobuf schemas", f"this one is {compiled.type}"
                )
            self._codec = compiled.json

    @classmethod
    def for_schema(
        cls,
        source: SchemaSource,
        registered: RegisteredSchema,
        message: str | None = None,
        *,
        json_style: str = "compact",
    ) -> RecordEncoder:
        """``message``: for Protobuf, the full name (or the name within the package) of the
        message to write; the file's first message when None."""
        compiled = _Compiled(source, registered.schema, json_style=json_style)
        return cls(compiled, registered.id, message)

    def encode(self, value: Any) -> bytes:
        """Framed bytes; EncodeError(path, why) when ``value`` does not fit."""
        return self._header + self._codec.encode(value)

    def payload(self, value: Any) -> bytes:
        """The payload alone (no framing)."""
        return bytes(self._codec.encode(value))


# ---------------------------------------------------------------- subject names

STRATEGIES = ("topic", "record", "topic-record")
_STRATEGY_ALIASES = {
    "topic": "topic",
    "topicnamestrategy": "topic",
    "topic-name": "topic",
    "record": "record",
    "recordnamestrategy": "record",
    "record-name": "record",
    "topic-record": "topic-record",
    "topicrecordnamestrategy": "topic-record",
    "topic-record-name": "topic-record",
}


def _strip_proto_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _proto_names(text: str) -> tuple[str, list[str]]:
    """(package, top-level message names in order) of .proto text or a base64 descriptor."""
    from kctl.schemas.protobuf import _as_descriptor

    data = _as_descriptor(text)
    if data is not None:
        from google.protobuf import descriptor_pb2

        proto = descriptor_pb2.FileDescriptorProto()
        proto.ParseFromString(data)
        return proto.package, [m.name for m in proto.message_type]
    body = _strip_proto_comments(text)
    package_match = re.search(r"\bpackage\s+([\w.]+)\s*;", body)
    names: list[str] = []
    depth = 0
    for token in re.finditer(r"[{}]|\bmessage\s+(\w+)\s*\{", body):
        if token.group(1) is not None:
            if depth == 0:
                names.append(token.group(1))
            depth += 1
        elif token.group(0) == "{":
            depth += 1
        else:
            depth -= 1
    return (package_match.group(1) if package_match else ""), names


def record_name(schema: Schema, message: str | None = None) -> str:
    """The name the record-name strategies use: Avro, the record's full name; Protobuf, the
    chosen (by default the first) message's full name; JSON Schema, its "title"."""
    import orjson

    if schema.schema_type == AVRO:
        try:
            parsed = orjson.loads(schema.text)
        except orjson.JSONDecodeError:
            raise SchemaError("an Avro schema that does not parse", "not JSON") from None
        if not isinstance(parsed, dict) or not isinstance(parsed.get("name"), str):
            raise SchemaError(
                "the record name strategies need a named Avro type", "this schema has no name"
            )
        name = parsed["name"]
        namespace = parsed.get("namespace")
        return name if "." in name or not namespace else f"{namespace}.{name}"
    if schema.schema_type == PROTOBUF:
        package, names = _proto_names(schema.text)
        if message:
            wanted = message.lstrip(".")
            if package and wanted.startswith(package + "."):
                return wanted
            return f"{package}.{wanted}" if package else wanted
        if not names:
            raise SchemaError("a Protobuf schema without a message", "nothing to name")
        return f"{package}.{names[0]}" if package else names[0]
    try:
        parsed = orjson.loads(schema.text)
    except orjson.JSONDecodeError:
        raise SchemaError("a JSON Schema that does not parse", "not JSON") from None
    title = parsed.get("title") if isinstance(parsed, dict) else None
    if not isinstance(title, str) or not title:
        raise SchemaError(
            'the record name strategies need a JSON Schema with a "title"', "this one has none"
        )
    return title


def subject_for(strategy: str, topic: str, is_key: bool, name: str | None = None) -> str:
    """The subject of a topic's keys or values under a naming strategy: ``topic``
    (TopicNameStrategy: "<topic>-key"/"<topic>-value"), ``record`` (RecordNameStrategy: the
    record's name), ``topic-record`` (TopicRecordNameStrategy: "<topic>-<name>")."""
    found = _STRATEGY_ALIASES.get(strategy.lower())
    if found is None:
        raise ValueError(f"subject naming strategy {strategy!r}: one of {', '.join(STRATEGIES)}")
    if found == "topic":
        return f"{topic}-{'key' if is_key else 'value'}"
    if not name:
        raise ValueError(f"the {found} strategy needs the record's name")
    return name if found == "record" else f"{topic}-{name}"


__all__ = [
    "STRATEGIES",
    "DecodeError",
    "Decoded",
    "EncodeError",
    "KctlError",
    "RecordDecoder",
    "RecordEncoder",
    "protobuf_descriptor",
    "record_name",
    "subject_for",
]
