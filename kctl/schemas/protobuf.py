"""Protobuf payloads <-> JSON data, from a registry's schema at run time
(docs/schema-formats.md).

A registry holds a Protobuf schema as ``.proto`` text (what ``kctl schemas register`` and Java's
serializers register) or as a base64 serialized ``FileDescriptorProto`` (what confluent-kafka's
Python ProtobufSerializer registers; Apicurio returns either as it was given). Text is parsed by
protoc, the one bundled with grpcio-tools, in-process, with Google's well-known types on its
include path; the files land in a private DescriptorPool. Messages are decoded with dynamic
classes and rendered with protobuf's canonical proto3 JSON mapping (``MessageToDict``'s
defaults: lowerCamelCase names, 64-bit integers as strings, bytes as base64, enum names, the
well-known types' own forms; fields at their default value are left out, as proto3 writes
nothing for them). Encoding is ``ParseDict`` then ``SerializeToString``. A message with maps
goes through a copy of its descriptors where each map is its repeated entry messages, so the
JSON object's keys keep the order of the bytes and the encoder writes them back in that order
(records round-trip byte for byte; :class:`_MapOrder`).
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from kctl.schemas.model import DecodeError, EncodeError, SchemaError

_MAIN = "kctl_registry_schema.proto"


def _as_descriptor(text: str) -> bytes | None:
    """The serialized FileDescriptorProto when ``text`` is base64 (no .proto text is)."""
    stripped = text.strip()
    if not stripped or any(c in stripped for c in " ;{\n"):
        return None
    try:
        return base64.b64decode(stripped, validate=True)
    except (binascii.Error, ValueError):
        return None


def _well_known(name: str) -> bytes | None:
    """The serialized descriptor of one of Google's well-known .proto files, by import name."""
    if not name.startswith("google/protobuf/"):
        return None
    import importlib

    module = name[len("google/protobuf/") : -len(".proto")].replace("/", ".") + "_pb2"
    try:
        found = importlib.import_module(f"google.protobuf.{module}")
    except ImportError:
        return None
    return bytes(found.DESCRIPTOR.serialized_pb)


def _protoc(files: Mapping[str, str], binary: Mapping[str, bytes], main: str) -> bytes:
    """A FileDescriptorSet (with imports) of ``main`` compiled by grpcio-tools' protoc from
    ``files`` (import name -> .proto text) and ``binary`` (import name -> serialized
    FileDescriptorProto, given to protoc as a descriptor set)."""
    from google.protobuf import descriptor_pb2

    try:
        import grpc_tools
        from grpc_tools import protoc
    except ImportError as exc:  # pragma: no cover - the schemas extra
        raise SchemaError(
            "cannot parse a .proto schema",
            "grpcio-tools is not installed (pip install 'kctl[schemas]')",
        ) from exc
    wkt = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    with tempfile.TemporaryDirectory(prefix="kctl-proto-") as tmp:
        root = os.path.join(tmp, "src")
        for name, text in files.items():
            path = os.path.join(root, name)
            if os.path.relpath(path, root).startswith(".."):
                raise SchemaError("a Protobuf reference with a bad name", repr(name))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as out:
                out.write(text)
        out_path = os.path.join(tmp, "set.pb")
        args = [
            "protoc",
            f"-I{root}",
            f"-I{wkt}",
            f"--descriptor_set_out={out_path}",
            "--include_imports",
        ]
        if binary:
            given = descriptor_pb2.FileDescriptorSet()
            for data in binary.values():
                given.file.add().ParseFromString(data)
            in_path = os.path.join(tmp, "in.pb")
            with open(in_path, "wb") as out:
                out.write(given.SerializeToString())
            args.append(f"--descriptor_set_in={in_path}")
        args.append(main)
        err_path = os.path.join(tmp, "err.txt")
        code, errors = _run_capturing(protoc.main, args, err_path)
        if code != 0:
            lines = [
                line.replace(root + os.sep, "") for line in errors.splitlines() if line.strip()
            ]
            # protoc's own errors name the file and position; absl's log lines and warnings
            # (no syntax given, unused imports) count only when nothing else is said.
            located = [line for line in lines if re.match(r"\S+:\d+:\d+: ", line)]
            lines = located or [line for line in lines if not line.startswith("WARNING: All log")]
            why = "; ".join(lines[:3]) or f"protoc exit {code}"
            raise SchemaError(
                "a Protobuf schema that does not parse", why.replace(_MAIN, "<schema>")
            )
        with open(out_path, "rb") as f:
            return f.read()


def _run_capturing(main: Any, args: list[str], err_path: str) -> tuple[int, str]:
    """Run protoc's main with the process's stderr (fd 2, where protoc writes) sent to a file."""
    import sys

    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(err_path, "w") as err:
            os.dup2(err.fileno(), 2)
            try:
                code = int(main(args))
            finally:
                os.dup2(saved, 2)
    finally:
        os.close(saved)
    with open(err_path, encoding="utf-8", errors="replace") as f:
        return code, f.read()


class ProtobufSchema:
    """One Protobuf schema with its references, built into a private DescriptorPool."""

    def __init__(self, text: str, references: Sequence[tuple[str, str]] = ()) -> None:
        """``references``: (import name, schema text) of every file the schema imports,
        directly or not (the registry's references, followed)."""
        from google.protobuf import descriptor_pb2, descriptor_pool

        self.pool = descriptor_pool.DescriptorPool()
        texts: dict[str, str] = {}
        binary: dict[str, bytes] = {}
        for name, ref_text in references:
            data = _as_descriptor(ref_text)
            if data is None:
                texts[name] = ref_text
            else:
                binary[name] = _rename(data, name)
        main_data = _as_descriptor(text)
        protos: list[Any] = []
        if main_data is None or texts:
            if main_data is not None:
                binary[_MAIN] = _rename(main_data, _MAIN)
                main_name = _MAIN
            else:
                main_name = _MAIN
                texts[main_name] = text
            found = descriptor_pb2.FileDescriptorSet()
            found.ParseFromString(_protoc(texts, binary, main_name))
            protos = list(found.file)
            # protoc leaves files given as descriptor sets out of --include_imports' output.
            have = {p.name for p in protos}
            extra = [n for n in binary if n not in have]
            for name in extra:
                proto = descriptor_pb2.FileDescriptorProto()
                proto.ParseFromString(binary[name])
                protos.insert(0, proto)
        else:
            for name, data in [*binary.items(), (_MAIN, main_data)]:
                proto = descriptor_pb2.FileDescriptorProto()
                try:
                    proto.ParseFromString(data)
                except Exception as exc:
                    raise SchemaError(
                        "a Protobuf schema that does not parse", f"{name}: {exc}"
                    ) from None
                if name == _MAIN:
                    proto.name = _MAIN
                protos.append(proto)
        self._add(protos)
        try:
            self.file = self.pool.FindFileByName(_MAIN)
        except KeyError:
            raise SchemaError("a Protobuf schema that does not parse", "no file") from None
        if not self.file.message_types_by_name:
            raise SchemaError("a Protobuf schema without a message", "nothing to decode with")
        self._classes: dict[tuple[int, ...], tuple[str, Any]] = {}

    def _add(self, protos: list[Any]) -> None:
        by_name = {p.name: p for p in protos}
        added: set[str] = set()
        self._files: list[bytes] = []  # every file added, dependencies first

        def add(name: str, chain: tuple[str, ...]) -> None:
            if name in added:
                return
            proto = by_name.get(name)
            if proto is None:
                known = _well_known(name)
                if known is None:
                    raise SchemaError(
                        "a Protobuf schema with a missing import",
                        f"{name!r} is not among its references",
                    )
                self.pool.AddSerializedFile(known)
                self._files.append(known)
                added.add(name)
                return
            if name in chain:
                raise SchemaError(
                    "a Protobuf schema that does not parse", f"an import cycle through {name}"
                )
            for dep in proto.dependency:
                add(dep, (*chain, name))
            data = proto.SerializeToString()
            try:
                self.pool.AddSerializedFile(data)
                self._files.append(data)
            except Exception as exc:
                raise SchemaError(
                    "a Protobuf schema that does not parse", f"{name}: {exc}"
                ) from None
            added.add(name)

        for proto in protos:
            add(proto.name, ())
        self.main_proto = by_name[_MAIN]
        self._raw_pool: Any = None

    def raw_class(self, full_name: str) -> Any:
        """The dynamic class of a message in a copy of the files where every map is a repeated
        field of its entry messages (the entries' key and value with explicit presence): maps
        read and written in the order of the bytes (:func:`_MapOrder`). Google's own files keep
        their maps (Struct's JSON form needs them)."""
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

        if self._raw_pool is None:
            pool = descriptor_pool.DescriptorPool()
            for data in self._files:
                proto = descriptor_pb2.FileDescriptorProto()
                proto.ParseFromString(data)
                if not proto.name.startswith("google/protobuf/"):
                    for message in proto.message_type:
                        _unmap(message, proto.syntax in ("", "proto2", "editions"))
                pool.AddSerializedFile(proto.SerializeToString())
            self._raw_pool = pool
        return message_factory.GetMessageClass(self._raw_pool.FindMessageTypeByName(full_name))

    # -------------------------------------------------------------- messages

    def message_path(self, full_name: str | None = None) -> list[int]:
        """The message-index path of a message of this file by its full name (or its name
        within the file's package); the first message when None."""
        if full_name is None:
            return [0]
        package = self.file.package
        wanted = full_name.lstrip(".")
        candidates = [wanted, f"{package}.{wanted}" if package else wanted]

        def search(messages: Sequence[Any], prefix: list[int]) -> list[int] | None:
            for i, msg in enumerate(messages):
                if msg.full_name in candidates:
                    return [*prefix, i]
                found = search(_ordered(msg), [*prefix, i])
                if found is not None:
                    return found
            return None

        path = search(self._top(), [])
        if path is None:
            names = ", ".join(m.full_name for m in self._top())
            raise SchemaError(f"no message {full_name!r} in the schema", f"it has {names}")
        return path

    def message_class(self, path: Sequence[int]) -> tuple[str, Any]:
        """(full name, dynamic class) of the message at a message-index path."""
        key = tuple(path)
        found = self._classes.get(key)
        if found is not None:
            return found
        from google.protobuf import message_factory

        messages = self._top()
        desc = None
        for depth, index in enumerate(path):
            if not 0 <= index < len(messages):
                raise DecodeError(
                    f"message-index path {list(path)} names no message of the schema"
                    f" (at depth {depth})"
                )
            desc = messages[index]
            messages = _ordered(desc)
        if desc is None:
            raise DecodeError("an empty message-index path")
        found = (desc.full_name, message_factory.GetMessageClass(desc))
        self._classes[key] = found
        return found

    def first_message(self) -> str:
        return str(self._top()[0].full_name)

    def _top(self) -> list[Any]:
        """The file's messages in declaration order (the registry's index order)."""
        package = self.main_proto.package
        return [
            self.pool.FindMessageTypeByName(f"{package}.{m.name}" if package else m.name)
            for m in self.main_proto.message_type
        ]


class ProtobufCodec:
    """Decode and encode the message at one message-index path of a schema."""

    def __init__(self, schema: ProtobufSchema, path: Sequence[int]) -> None:
        from google.protobuf import json_format

        self.schema = schema
        self.path = list(path)
        self.name, self.cls = schema.message_class(self.path)
        desc = self.cls.DESCRIPTOR
        self._maps = _MapOrder(desc)
        # A message with maps is read and written through the map-less copy, which keeps
        # the entries in the order of the bytes.
        self._raw = schema.raw_class(self.name) if self._maps.any(desc) else self.cls
        self._to_dict = json_format.MessageToDict
        self._parse = json_format.ParseDict
        self._json_error = json_format.ParseError

    def decode(self, data: bytes, offset: int = 0) -> Any:
        msg = self._raw()
        try:
            msg.ParseFromString(data[offset:] if offset else data)
        except Exception as exc:  # DecodeError of the protobuf runtime
            raise DecodeError(f"the Protobuf payload does not fit {self.name} ({exc})") from None
        value = self._to_dict(msg, preserving_proto_field_name=False)
        if self._raw is not self.cls:
            self._maps.to_objects(self.cls.DESCRIPTOR, value)
        return value

    def encode(self, value: Any) -> bytes:
        if not isinstance(value, dict):
            raise EncodeError("$", f"expected an object (message {self.name})")
        if self._raw is not self.cls:
            try:
                value = self._maps.to_entries(self.cls.DESCRIPTOR, value)
            except _NotAMap as exc:
                raise EncodeError(exc.path, exc.why) from None
        msg = self._raw()
        try:
            self._parse(value, msg)
        except self._json_error as exc:
            raise EncodeError(*_parse_error_path(str(exc))) from None
        except Exception as exc:
            raise EncodeError("$", " ".join(str(exc).split())) from None
        return bytes(msg.SerializeToString(deterministic=True))


def _unmap(message: Any, proto2: bool) -> None:
    """Turn the map entry messages nested in a DescriptorProto (at any depth) into plain
    messages whose key and value have explicit presence (so an entry's zero key or value is
    written, as the runtimes write map entries)."""
    for nested in message.nested_type:
        if nested.options.map_entry:
            nested.options.map_entry = False
            if not proto2:
                for field in nested.field:
                    field.proto3_optional = True
                    field.oneof_index = len(nested.oneof_decl)
                    nested.oneof_decl.add(name=f"_{field.name}")
        else:
            _unmap(nested, proto2)


class _NotAMap(Exception):
    def __init__(self, path: str, why: str) -> None:
        super().__init__(why)
        self.path = path
        self.why = why


_WELL_KNOWN_PREFIX = "google.protobuf."


class _MapOrder:
    """Between the canonical JSON of maps (objects) and the JSON of the map-less copy (lists
    of {"key", "value"} entries), keeping the order: the JSON object's keys are in the order
    of the entries in the bytes, and produce writes them in the object's order."""

    def __init__(self, root: Any) -> None:
        self._has: dict[str, bool] = {}
        self.any(root)

    def any(self, desc: Any) -> bool:
        """Whether messages of ``desc`` can hold a map (outside Google's own types)."""
        name = desc.full_name
        if name in self._has:
            return self._has[name]
        self._has[name] = False  # recursion: assume none while looking
        found = False
        if not name.startswith(_WELL_KNOWN_PREFIX):
            for field in desc.fields:
                sub = field.message_type
                if sub is None:
                    continue
                if sub.GetOptions().map_entry or self.any(sub):
                    found = True
        self._has[name] = found
        return found

    def _fields(self, desc: Any) -> list[tuple[Any, bool, Any]]:
        out = []
        for field in desc.fields:
            sub = field.message_type
            if sub is None:
                continue
            if sub.GetOptions().map_entry:
                out.append((field, True, sub))
            elif self.any(sub):
                out.append((field, False, sub))
        return out

    def to_objects(self, desc: Any, value: dict[str, Any]) -> None:
        for field, is_map, sub in self._fields(desc):
            name = field.json_name
            got = value.get(name)
            if got is None:
                continue
            if is_map:
                key_field, value_field = sub.fields_by_name["key"], sub.fields_by_name["value"]
                inner = value_field.message_type
                deep = inner is not None and self.any(inner)
                out = {}
                for entry in got:
                    key = entry.get("key", _zero_key(key_field))
                    if key is True or key is False:
                        key = "true" if key else "false"
                    item = entry.get("value", _zero_value(value_field))
                    if deep and isinstance(item, dict):
                        self.to_objects(inner, item)
                    out[str(key)] = item
                value[name] = out
            elif isinstance(got, list):
                for item in got:
                    if isinstance(item, dict):
                        self.to_objects(sub, item)
            elif isinstance(got, dict):
                self.to_objects(sub, got)

    def to_entries(self, desc: Any, value: dict[str, Any], path: str = "$") -> dict[str, Any]:
        out = dict(value)
        for field, is_map, sub in self._fields(desc):
            name = field.json_name if field.json_name in value else field.name
            got = value.get(name)
            if got is None:
                continue
            where = f"{path}.{name}"
            if is_map:
                if not isinstance(got, dict):
                    raise _NotAMap(where, "expected an object (a map)")
                key_field, value_field = sub.fields_by_name["key"], sub.fields_by_name["value"]
                inner = value_field.message_type
                deep = inner is not None and self.any(inner)
                boolean = key_field.type == key_field.TYPE_BOOL
                entries = []
                for key, item in got.items():
                    if boolean:
                        if key not in ("true", "false"):
                            raise _NotAMap(f"{where}[{key!r}]", "a bool map key is true or false")
                        key = key == "true"
                    if deep and isinstance(item, dict):
                        item = self.to_entries(inner, item, f"{where}[{key!r}]")
                    entries.append({"key": key, "value": item})
                out[name] = entries
            elif isinstance(got, list):
                out[name] = [
                    self.to_entries(sub, x, f"{where}[{i}]") if isinstance(x, dict) else x
                    for i, x in enumerate(got)
                ]
            elif isinstance(got, dict):
                out[name] = self.to_entries(sub, got, where)
        return out


def _zero_key(field: Any) -> Any:
    if field.type == field.TYPE_STRING:
        return ""
    if field.type == field.TYPE_BOOL:
        return False
    return 0


def _zero_value(field: Any) -> Any:
    if field.message_type is not None:
        return {}
    if field.enum_type is not None:
        return field.enum_type.values[0].name
    if field.type in (field.TYPE_STRING, field.TYPE_BYTES):
        return ""
    if field.type == field.TYPE_BOOL:
        return False
    if field.cpp_type in (field.CPPTYPE_INT64, field.CPPTYPE_UINT64):
        return "0"
    return 0


def _ordered(desc: Any) -> list[Any]:
    """A message's nested messages in declaration order (map entries count: the index
    path numbers them as protoc declares them)."""
    from google.protobuf import descriptor_pb2

    proto = descriptor_pb2.DescriptorProto()
    desc.CopyToProto(proto)
    return [desc.nested_types_by_name[m.name] for m in proto.nested_type]


def _parse_error_path(text: str) -> tuple[str, str]:
    """A json_format ParseError ("Failed to parse lines field: Failed to parse qty field: ...")
    as (path, why): ("$.lines.qty", "...")."""
    import re

    text = " ".join(text.split())
    parts: list[str] = []
    while True:
        match = re.match(r"Failed to parse (\w+) field: ", text)
        if match is None:
            break
        parts.append(match[1])
        text = text[match.end() :]
    match = re.match(r'Message type "([\w.]+)" has no field named "([^"]+)"', text)
    if match:
        parts.append(match[2])
        text = f"not a field of {match[1]}"
    return "$" + "".join(f".{p}" for p in parts), text.rstrip(".") or "does not fit"


def _rename(data: bytes, name: str) -> bytes:
    """A serialized FileDescriptorProto with its file name set to ``name`` (the import name
    the importing schema uses)."""
    from google.protobuf import descriptor_pb2

    proto = descriptor_pb2.FileDescriptorProto()
    try:
        proto.ParseFromString(data)
    except Exception as exc:
        raise SchemaError("a Protobuf schema that does not parse", f"{name}: {exc}") from None
    if proto.name == name:
        return data
    proto.name = name
    return bytes(proto.SerializeToString())
