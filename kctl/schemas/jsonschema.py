"""JSON Schema payloads <-> JSON data (docs/schema-formats.md).

The payload is JSON text: decoding parses it (orjson) and does not validate (a record is shown
as it was written). Encoding validates the value with the ``jsonschema`` library, the draft the
schema's ``$schema`` names (Draft 7 when it names none, as Confluent's serializers assume), with
``$ref`` to other subjects' schemas resolved from the schema's references (each under the name
the reference gives, and under its own ``$id``), then writes the JSON.

What the writers write: confluent-kafka's Python JSONSerializer writes compact JSON with orjson
(``{"a":1,"b":"x"}``) or, when orjson is missing, with the stdlib's json (the same separators,
UTF-8 unescaped, but Python's spelling of floats: ``1e-07`` where orjson writes ``1e-7``,
``1.5e-05`` where it writes ``0.000015``); Java's KafkaJsonSchemaSerializer writes compact JSON
with Jackson (``1.0E-7``). The encoder writes compact JSON (orjson: keys in the given order,
UTF-8 unescaped), and a number keeps the text it was written with: decoding keeps each number
whose text orjson would write otherwise as an ``orjson.Fragment`` of that text (so consume
prints it as written), :func:`loads` reads produce's input the same way into :class:`Spelled`
floats, and the encoder writes them as they were spelled. So the records of all of them
round-trip byte for byte. ``style="python"`` writes what ``json.dumps`` writes with its defaults
(``", "``, ``": "``, ASCII escapes), the form of older Python producers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import orjson

from kctl.schemas.model import DecodeError, EncodeError, SchemaError

STYLES = ("compact", "python")


# A number whose text orjson may write otherwise: a fraction or an exponent, an integer past
# 64 bits (orjson reads it as a float), a negative zero integer.
_RESPELLABLE = re.compile(rb"[0-9][.eE]|[0-9]{19}|-0(?![0-9.eE])")
_INT_RANGE = range(-(2**63), 2**64)


class Spelled(float):
    """A number of produce's input with the text it was written in, where orjson would write
    the value otherwise (``1e-07``, ``1.0E-7``, ``0.0000001``): the encoder writes the text."""

    __slots__ = ("text",)
    text: bytes

    def __new__(cls, text: str) -> Spelled:
        self = super().__new__(cls, text)
        self.text = text.encode("ascii")
        return self


def _respelled(data: bytes | memoryview, value: Any) -> bool:
    """Whether ``value`` (orjson's reading of ``data``) holds a number orjson writes otherwise
    than ``data`` spells it: never when ``data`` has no such number, or is orjson's own text."""
    if not isinstance(value, (dict, list, float)) or orjson.dumps(value) == data:
        return False  # orjson's own text (the common case: one fast comparison)
    return _RESPELLABLE.search(data) is not None and orjson.dumps(value) != bytes(data).strip()


def _reread(data: bytes | memoryview, kept: Any) -> Any:
    """``data`` read again by the stdlib's json, each number orjson would write otherwise made
    ``kept(text)`` (orjson read it before: the JSON is valid)."""

    def number(text: str) -> Any:
        value = float(text)
        return value if orjson.dumps(value) == text.encode("ascii") else kept(text)

    def integer(text: str) -> Any:
        value = int(text)
        return value if value in _INT_RANGE and text != "-0" else kept(text)

    return json.loads(bytes(data), parse_float=number, parse_int=integer)


def _fragment(text: str) -> Any:
    return orjson.Fragment(text)


def loads(data: bytes) -> Any:
    """produce's input: orjson's reading of JSON text, except that a number orjson would write
    otherwise keeps its text (a :class:`Spelled` float, which the encoder writes as given).
    orjson.JSONDecodeError as orjson.loads."""
    value = orjson.loads(data)
    if _respelled(data, value):
        return _reread(data, Spelled)
    return value


def _spelled(value: Any) -> Any:
    if isinstance(value, Spelled):
        return orjson.Fragment(value.text)
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def _load(text: str, what: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise SchemaError(f"a JSON Schema that does not parse ({what})", str(exc)) from None


def _path(parts: Sequence[Any]) -> str:
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and part.isidentifier():
            out += f".{part}"
        else:
            out += f"[{part!r}]"
    return out


class JsonSchemaCodec:
    """One JSON Schema with its references: validate and write, parse."""

    def __init__(
        self, text: str, references: Sequence[tuple[str, str]] = (), *, style: str = "compact"
    ) -> None:
        if style not in STYLES:
            raise ValueError(f"style {style!r}: one of {', '.join(STYLES)}")
        self.style = style
        self.schema = _load(text, "the schema")
        self.title = self.schema.get("title") if isinstance(self.schema, dict) else None
        self._refs = [(name, _load(ref, name)) for name, ref in references]
        self._validator: Any = None

    def _build(self) -> Any:
        import jsonschema
        import referencing
        import referencing.jsonschema

        cls = jsonschema.validators.validator_for(self.schema, default=jsonschema.Draft7Validator)
        try:
            cls.check_schema(self.schema)
        except jsonschema.SchemaError as exc:
            raise SchemaError("a JSON Schema that is not valid", exc.message) from None
        default_spec = referencing.jsonschema.specification_with(
            cls.META_SCHEMA.get("$schema", "http://json-schema.org/draft-07/schema#"),
            default=referencing.jsonschema.DRAFT7,
        )
        resources = []
        for name, contents in self._refs:
            resource = referencing.Resource.from_contents(
                contents, default_specification=default_spec
            )
            resources.append((name, resource))
            if isinstance(contents, dict) and isinstance(contents.get("$id"), str):
                resources.append((contents["$id"], resource))
        registry: Any = referencing.Registry().with_resources(resources)
        return cls(self.schema, registry=registry, format_checker=cls.FORMAT_CHECKER)

    def decode(self, data: bytes, offset: int = 0) -> Any:
        """The JSON data; a number orjson would write otherwise than the payload spells it is
        an ``orjson.Fragment`` of its text (written back as it is by every JSON output)."""
        payload = memoryview(data)[offset:] if offset else data
        try:
            value = orjson.loads(payload)
        except orjson.JSONDecodeError as exc:
            raise DecodeError(f"the JSON payload does not parse ({exc})") from None
        if _respelled(payload, value):
            return _reread(payload, _fragment)
        return value

    def validate(self, value: Any) -> None:
        """EncodeError naming the field when ``value`` does not fit the schema."""
        if self._validator is None:
            self._validator = self._build()
        import jsonschema
        import referencing.exceptions

        try:
            if self._validator.is_valid(value):
                return
            error = jsonschema.exceptions.best_match(self._validator.iter_errors(value))
        except referencing.exceptions.Unresolvable as exc:
            raise SchemaError(
                "a JSON Schema with a $ref that resolves to nothing", str(exc)
            ) from None
        if error is not None:
            raise EncodeError(_path(list(error.absolute_path)), " ".join(error.message.split()))

    def encode(self, value: Any) -> bytes:
        self.validate(value)
        if self.style == "python":
            return json.dumps(value).encode("utf-8")
        try:
            return orjson.dumps(value, default=_spelled)
        except TypeError as exc:
            raise EncodeError("$", str(exc)) from None
