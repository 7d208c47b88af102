"""JSON Schema payloads <-> JSON data (docs/schema-formats.md).

The payload is JSON text: decoding parses it (orjson) and does not validate (a record is shown
as it was written). Encoding validates the value with the ``jsonschema`` library, the draft the
schema's ``$schema`` names (Draft 7 when it names none, as Confluent's serializers assume), with
``$ref`` to other subjects' schemas resolved from the schema's references (each under the name
the reference gives, and under its own ``$id``), then writes the JSON.

What the writers write: confluent-kafka's Python JSONSerializer writes compact JSON with orjson
(``{"a":1,"b":"x"}``; with the stdlib's json when orjson is missing: the same separators) and
Java's KafkaJsonSchemaSerializer writes compact JSON with Jackson. The encoder writes compact
JSON (orjson: keys in the given order, UTF-8 unescaped), so their records round-trip;
``style="python"`` writes what ``json.dumps`` writes with its defaults (``", "``, ``": "``,
ASCII escapes), the form of older Python producers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import orjson

from kctl.schemas.model import DecodeError, EncodeError, SchemaError

STYLES = ("compact", "python")


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
        try:
            return orjson.loads(memoryview(data)[offset:] if offset else data)
        except orjson.JSONDecodeError as exc:
            raise DecodeError(f"the JSON payload does not parse ({exc})") from None

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
            return orjson.dumps(value)
        except TypeError as exc:
            raise EncodeError("$", str(exc)) from None
