"""Avro payloads <-> JSON data, with fastavro (docs/schema-formats.md has the rendering).

A schema is compiled once into an :class:`AvroCodec`: fastavro reads and writes with a copy of
the schema whose logical types are stripped (so it hands back and takes the underlying ints,
longs, bytes and strings), and two functions compiled per schema turn those into the JSON
rendering and back; a part of the schema that needs no conversion costs nothing.

The rendering, which round-trips (``encode(decode(b)) == b``):
records are objects in field order; a union of null and one other type is the bare value; any
other union is Avro's JSON encoding ``{"branch": value}`` (a named type's full name, else the
type's name: "int", "string", "array", "map"); bytes and fixed are base64; enums the symbol;
decimal a string with exactly the schema's scale; date "YYYY-MM-DD"; time-millis/-micros
"HH:MM:SS.fff"/".ffffff"; timestamp-millis/-micros/-nanos ISO-8601 UTC with 3/6/9 fraction
digits and "Z", local-timestamp-* the same without "Z"; uuid the string; NaN and the infinities
of float/double "NaN", "Infinity", "-Infinity". A value outside what the text form holds (a
date past year 9999, a time past midnight) stays the underlying number. The encoder takes the
rendered form and the underlying one (ints for dates and timestamps, numbers for decimals when
exact, a bare value for a union's branch).
"""

from __future__ import annotations

import base64
import binascii
import copy
import datetime
import decimal
import io
import math
import re
from collections.abc import Callable, Iterable
from typing import Any

import orjson

from kctl.schemas.model import DecodeError, EncodeError, SchemaError

PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
_NAMED = ("record", "error", "enum", "fixed")
_INT32 = (-(1 << 31), (1 << 31) - 1)
_INT64 = (-(1 << 63), (1 << 63) - 1)
_FLOAT32_MAX = 3.4028234663852886e38
_EPOCH_ORDINAL = datetime.date(1970, 1, 1).toordinal()
_MIN_ORDINAL = 1
_MAX_ORDINAL = datetime.date(9999, 12, 31).toordinal()
_DAY = 86400
_WIDE = decimal.Context(prec=4096, Emax=999999, Emin=-999999)  # exact for any decimal here
_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
# A timestamp as the encoder reads it: date, time, up to 9 fraction digits, Z or an offset.
_TIMESTAMP = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
    r"(Z|z|[+-]\d{2}:?\d{2})?\Z"
)
_TIME = re.compile(r"(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?\Z")
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})\Z")

Render = Callable[[Any], Any]


class _Miss(Exception):
    """A value does not fit; ``parts`` collects the path on the way up (innermost first)."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why
        self.parts: list[str] = []


def _path(parts: list[str]) -> str:
    out = "$"
    for part in reversed(parts):
        out += part
    return out


def _key(name: str) -> str:
    return f".{name}" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else f"[{name!r}]"


# ---------------------------------------------------------------- the schema


def _fullname(name: str, namespace: str | None) -> str:
    if "." in name or not namespace:
        return name
    return f"{namespace}.{name}"


def _child_namespace(fullname: str) -> str | None:
    return fullname.rsplit(".", 1)[0] if "." in fullname else None


class _Names:
    """The named types of a schema and of the schemas it references, by full name."""

    def __init__(self) -> None:
        self.types: dict[str, tuple[dict[str, Any], str | None]] = {}

    def collect(self, schema: Any, namespace: str | None) -> None:
        if isinstance(schema, list):
            for branch in schema:
                self.collect(branch, namespace)
            return
        if not isinstance(schema, dict):
            return
        kind = schema.get("type")
        if kind in _NAMED:
            name = schema.get("name")
            if not isinstance(name, str):
                raise SchemaError("an Avro schema that does not parse", f"a {kind} without a name")
            full = _fullname(name, schema.get("namespace", namespace))
            inner = _child_namespace(full)
            self.types[full] = (schema, inner)
            if kind in ("record", "error"):
                for field in schema.get("fields", ()):
                    self.collect(field.get("type"), inner)
            return
        if kind == "array":
            self.collect(schema.get("items"), namespace)
        elif kind == "map":
            self.collect(schema.get("values"), namespace)
        elif isinstance(kind, dict | list):
            self.collect(kind, namespace)

    def lookup(self, name: str, namespace: str | None) -> tuple[str, dict[str, Any], str | None]:
        for candidate in (_fullname(name, namespace), name):
            found = self.types.get(candidate)
            if found is not None:
                return candidate, found[0], found[1]
        raise SchemaError("an Avro schema that does not parse", f"unknown type {name!r}")


def _strip(schema: Any) -> Any:
    """A copy of ``schema`` without logical types: fastavro then reads and writes the
    underlying values."""
    if isinstance(schema, list):
        return [_strip(branch) for branch in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: v for k, v in schema.items() if k not in ("logicalType", "precision", "scale")}
    kind = out.get("type")
    if kind in ("record", "error"):
        out["fields"] = [{**f, "type": _strip(f.get("type"))} for f in out.get("fields", ())]
    elif kind == "array":
        out["items"] = _strip(out.get("items"))
    elif kind == "map":
        out["values"] = _strip(out.get("values"))
    elif isinstance(kind, dict | list):
        out["type"] = _strip(kind)
    elif kind in PRIMITIVES and len(out) == 1:
        return kind
    return out


def _type_name(schema: Any, names: _Names, namespace: str | None) -> str:
    """The name of a union branch in Avro's JSON encoding (a named type's full name)."""
    if isinstance(schema, str):
        if schema in PRIMITIVES:
            return schema
        return names.lookup(schema, namespace)[0]
    if isinstance(schema, dict):
        kind = schema.get("type")
        if kind in _NAMED:
            return _fullname(schema["name"], schema.get("namespace", namespace))
        if isinstance(kind, str | dict | list) and kind not in ("array", "map"):
            return _type_name(kind, names, namespace)
        return str(kind)
    raise SchemaError("an Avro schema that does not parse", "a union inside a union")


def _logical(schema: Any) -> tuple[str | None, str]:
    """(logical type, underlying type name) of a schema node."""
    if isinstance(schema, dict):
        kind = schema.get("type")
        logical = schema.get("logicalType")
        if isinstance(kind, str):
            return (logical if isinstance(logical, str) else None), kind
        if isinstance(kind, dict):
            return _logical(kind)
    return None, schema if isinstance(schema, str) else ""


# ---------------------------------------------------------------- rendering (decode side)


def _b64(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


def _render_float(value: float) -> Any:
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "Infinity" if value > 0 else "-Infinity"
    return value


_date_cache: dict[int, str] = {}


def _date_text(days: int) -> str | None:
    text = _date_cache.get(days)
    if text is None:
        ordinal = days + _EPOCH_ORDINAL
        if not _MIN_ORDINAL <= ordinal <= _MAX_ORDINAL:
            return None
        text = datetime.date.fromordinal(ordinal).isoformat()
        if len(_date_cache) > 4096:
            _date_cache.clear()
        _date_cache[days] = text
    return text


def _render_date(value: int) -> Any:
    text = _date_text(value)
    return value if text is None else text


def _time_renderer(per_second: int, digits: int) -> Render:
    limit = _DAY * per_second

    def render(value: int) -> Any:
        if not 0 <= value < limit:
            return value
        seconds, frac = divmod(value, per_second)
        hours, rest = divmod(seconds, 3600)
        return f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}.{frac:0{digits}d}"

    return render


def _timestamp_renderer(per_second: int, digits: int, zone: str) -> Render:
    per_day = _DAY * per_second

    def render(value: int) -> Any:
        days, rest = divmod(value, per_day)
        date = _date_text(days)
        if date is None:
            return value
        seconds, frac = divmod(rest, per_second)
        hours, rest = divmod(seconds, 3600)
        return f"{date}T{hours:02d}:{rest // 60:02d}:{rest % 60:02d}.{frac:0{digits}d}{zone}"

    return render


def _decimal_renderer(scale: int, fixed: bool) -> Render:
    def render(value: bytes) -> str:
        unscaled = int.from_bytes(value, "big", signed=True)
        if scale == 0:
            return str(unscaled)
        sign = "-" if unscaled < 0 else ""
        digits = str(abs(unscaled)).rjust(scale + 1, "0")
        return f"{sign}{digits[:-scale]}.{digits[-scale:]}"

    return render


_TIMESTAMPS = {
    "timestamp-millis": (1000, 3, "Z"),
    "timestamp-micros": (1_000_000, 6, "Z"),
    "timestamp-nanos": (1_000_000_000, 9, "Z"),
    "local-timestamp-millis": (1000, 3, ""),
    "local-timestamp-micros": (1_000_000, 6, ""),
    "local-timestamp-nanos": (1_000_000_000, 9, ""),
}
_TIMES = {"time-millis": (1000, 3, "int"), "time-micros": (1_000_000, 6, "long")}


def _logical_render(schema: Any, logical: str | None, base: str) -> Render | bool | None:
    """The renderer of a logical type; False when the node has none kctl renders."""
    if logical == "decimal" and base in ("bytes", "fixed"):
        scale = schema.get("scale", 0) if isinstance(schema, dict) else 0
        return _decimal_renderer(int(scale), base == "fixed")
    if logical == "date" and base == "int":
        return _render_date
    if logical in _TIMES and base == _TIMES[logical][2]:
        return _time_renderer(*_TIMES[logical][:2])
    if logical in _TIMESTAMPS and base == "long":
        return _timestamp_renderer(*_TIMESTAMPS[logical])
    return False


class _RenderCompiler:
    def __init__(self, names: _Names) -> None:
        self.names = names
        self.done: dict[str, Render | None] = {}
        self.cells: dict[str, list[Render | None]] = {}

    def compile(self, schema: Any, namespace: str | None) -> Render | None:
        if isinstance(schema, list):
            return self._union(schema, namespace)
        if isinstance(schema, str):
            if schema in ("float", "double"):
                return _render_float
            if schema == "bytes":
                return _b64
            if schema in PRIMITIVES:
                return None
            return self._named(*self.names.lookup(schema, namespace))
        if not isinstance(schema, dict):
            raise SchemaError("an Avro schema that does not parse", f"unexpected {schema!r}")
        kind = schema.get("type")
        logical, base = _logical(schema)
        if logical:
            found = _logical_render(schema, logical, base)
            if found is not False:
                return found  # type: ignore[return-value]
        if kind in _NAMED:
            full = _fullname(schema["name"], schema.get("namespace", namespace))
            return self._named(full, schema, _child_namespace(full))
        if kind == "array":
            item = self.compile(schema.get("items"), namespace)
            return None if item is None else (lambda v: [item(x) for x in v])
        if kind == "map":
            value = self.compile(schema.get("values"), namespace)
            return None if value is None else (lambda v: {k: value(x) for k, x in v.items()})
        return self.compile(kind, namespace)

    def _named(self, full: str, schema: dict[str, Any], inner: str | None) -> Render | None:
        if full in self.done:
            return self.done[full]
        if full in self.cells:  # recursion: bind late through a cell
            cell = self.cells[full]
            return lambda v: cell[0](v) if cell[0] is not None else v
        kind = schema.get("type")
        logical, _ = _logical(schema)
        result: Render | None
        if kind == "fixed":
            found = _logical_render(schema, logical, "fixed") if logical else False
            result = _b64 if found is False else found  # type: ignore[assignment]
        elif kind == "enum":
            result = None
        else:
            slot: list[Render | None] = [None]
            self.cells[full] = slot
            result = self._record(schema, inner)
            slot[0] = result
            del self.cells[full]
        self.done[full] = result
        return result

    def _record(self, schema: dict[str, Any], namespace: str | None) -> Render | None:
        conv: list[tuple[str, Render]] = []
        for field in schema.get("fields", ()):
            f = self.compile(field.get("type"), namespace)
            if f is not None:
                conv.append((field["name"], f))
        if not conv:
            return None
        return _record_renderer(conv)

    def _union(self, branches: list[Any], namespace: str | None) -> Render | None:
        others = [
            b
            for b in branches
            if b != "null" and not (isinstance(b, dict) and b.get("type") == "null")
        ]
        nullable = len(others) < len(branches)
        named: dict[str, Render | None] = {}
        by_kind: dict[str, tuple[str, Render | None]] = {}
        for branch in others:
            name = _type_name(branch, self.names, namespace)
            render = self.compile(branch, namespace)
            if self._is_named(branch, namespace):
                named[name] = render
            else:
                _, base = _logical(branch) if isinstance(branch, dict) else (None, branch)
                if isinstance(branch, dict) and branch.get("type") in ("array", "map"):
                    base = branch["type"]
                by_kind.setdefault(_PY_KIND.get(base, base), (name, render))
        if nullable and len(others) == 1:
            (only,) = others
            render = self.compile(only, namespace)
            if self._is_named(only, namespace):
                if render is None:
                    return lambda v: None if v is None else v[1]
                return lambda v: None if v is None else render(v[1])  # type: ignore[misc]
            if render is None:
                return None
            return lambda v: None if v is None else render(v)  # type: ignore[misc]

        def union(v: Any) -> Any:
            if v is None:
                return None
            if type(v) is tuple:
                name, inner = v
                f = named[name]
                return {name: inner if f is None else f(inner)}
            found = by_kind.get(_python_kind(v))
            if found is None:
                return v
            name, f = found
            return {name: v if f is None else f(v)}

        return union

    def _is_named(self, branch: Any, namespace: str | None) -> bool:
        if isinstance(branch, str):
            return branch not in PRIMITIVES
        if isinstance(branch, dict):
            kind = branch.get("type")
            if kind in _NAMED:
                return True
            if isinstance(kind, str | dict | list) and kind not in ("array", "map"):
                return self._is_named(kind, namespace)
        return False


def _record_renderer(conv: list[tuple[str, Render]]) -> Render:
    """One function that renders a record's fields that need it, generated as straight-line
    code (one statement per field: no loop, no call for a finite float)."""
    lines = ["def render(v):"]
    env: dict[str, Any] = {}
    for i, (name, f) in enumerate(conv):
        key = repr(name)
        if f is _render_float:
            # x - x is 0.0 for a finite float, NaN for NaN and the infinities.
            lines.append(f"    x = v[{key}]")
            lines.append(f"    if x - x != 0.0: v[{key}] = _rf(x)")
            env["_rf"] = f
        else:
            env[f"_f{i}"] = f
            lines.append(f"    v[{key}] = _f{i}(v[{key}])")
    lines.append("    return v")
    exec("\n".join(lines), env)  # generated from field names through repr() only
    render: Render = env["render"]
    return render


# The Python type fastavro returns for a union branch, by the branch's underlying type: int and
# long (float and double) share one, so the first of them in the union is the one rendered.
_PY_KIND = {
    "boolean": "bool",
    "int": "int",
    "long": "int",
    "float": "float",
    "double": "float",
    "string": "str",
    "bytes": "bytes",
    "array": "list",
    "map": "dict",
}


def _python_kind(value: Any) -> str:
    return type(value).__name__


# ---------------------------------------------------------------- the encoder side

Convert = Callable[[Any], Any]


def _int_in(low: int, high: int, what: str) -> Convert:
    def conv(v: Any) -> Any:
        if type(v) is not int:
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            else:
                raise _Miss(f"expected {what}, got {_json_kind(v)}")
        if not low <= v <= high:
            raise _Miss(f"{v} does not fit {what}")
        return v

    return conv


def _json_kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int | float):
        return f"the number {v!r}"
    if isinstance(v, str):
        return f"the string {v[:40]!r}"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


def _conv_null(v: Any) -> Any:
    if v is not None:
        raise _Miss(f"expected null, got {_json_kind(v)}")
    return None


def _conv_bool(v: Any) -> Any:
    if type(v) is not bool:
        raise _Miss(f"expected a boolean, got {_json_kind(v)}")
    return v


def _conv_string(v: Any) -> Any:
    if type(v) is not str:
        raise _Miss(f"expected a string, got {_json_kind(v)}")
    return v


def _float_conv(single: bool) -> Convert:
    def conv(v: Any) -> Any:
        t = type(v)
        if t is float:
            if single and abs(v) > _FLOAT32_MAX and not math.isinf(v):
                raise _Miss(f"{v!r} does not fit a float")
            return v
        if t is int:
            return float(v)
        if t is str and v in _NONFINITE:
            return _NONFINITE[v]
        raise _Miss(f"expected a number, got {_json_kind(v)}")

    return conv


def _bytes_value(v: Any) -> bytes:
    if isinstance(v, bytes):
        return v
    if type(v) is not str:
        raise _Miss(f"expected base64 text, got {_json_kind(v)}")
    try:
        return base64.b64decode(v, validate=True)
    except (binascii.Error, ValueError):
        raise _Miss(f"not base64: {v[:40]!r}") from None


def _fixed_conv(size: int) -> Convert:
    def conv(v: Any) -> Any:
        data = _bytes_value(v)
        if len(data) != size:
            raise _Miss(f"{len(data)} bytes, the fixed type holds {size}")
        return data

    return conv


def _decimal_conv(precision: int | None, scale: int, size: int | None) -> Convert:
    def conv(v: Any) -> Any:
        if isinstance(v, bytes):
            return v
        t = type(v)
        if t is str:
            try:
                number = decimal.Decimal(v)
            except decimal.InvalidOperation:
                raise _Miss(f"not a decimal: {v[:40]!r}") from None
        elif t is int:
            number = decimal.Decimal(v)
        elif t is float:
            number = decimal.Decimal(repr(v))
        else:
            raise _Miss(f"expected a decimal string, got {_json_kind(v)}")
        if not number.is_finite():
            raise _Miss(f"{v!r} is not a finite decimal")
        exponent = number.as_tuple().exponent
        assert isinstance(exponent, int)
        if -exponent > scale:
            stripped = number.normalize(_WIDE)
            exp2 = stripped.as_tuple().exponent
            assert isinstance(exp2, int)
            if -exp2 > scale:
                raise _Miss(f"{v!r} has more than {scale} fraction digits (the schema's scale)")
        unscaled = int(number.scaleb(scale, _WIDE).to_integral_exact(context=_WIDE))
        if precision is not None and len(str(abs(unscaled))) > precision:
            raise _Miss(f"{v!r} has more than {precision} digits (the schema's precision)")
        if size is None:
            length = (unscaled + (unscaled < 0)).bit_length() // 8 + 1
            return unscaled.to_bytes(length, "big", signed=True)
        try:
            return unscaled.to_bytes(size, "big", signed=True)
        except OverflowError:
            raise _Miss(f"{v!r} does not fit {size} bytes") from None

    return conv


def _date_conv(v: Any) -> Any:
    if type(v) is int:
        return _int_in(*_INT32, "an int")(v)
    if type(v) is str:
        m = _DATE.match(v)
        if m:
            try:
                return datetime.date(*map(int, m.groups())).toordinal() - _EPOCH_ORDINAL
            except ValueError:
                pass
        raise _Miss(f"not a date (YYYY-MM-DD): {v[:40]!r}")
    raise _Miss(f"expected a date string, got {_json_kind(v)}")


def _frac(text: str | None, digits: int) -> int:
    if not text:
        return 0
    if len(text) > digits:
        if int(text[digits:]):
            raise _Miss(f"more than {digits} fraction digits")
        text = text[:digits]
    return int(text.ljust(digits, "0"))


def _time_conv(per_second: int, digits: int, base: str) -> Convert:
    low, high = _INT32 if base == "int" else _INT64

    def conv(v: Any) -> Any:
        if type(v) is int:
            if not low <= v <= high:
                raise _Miss(f"{v} does not fit {base}")
            return v
        if type(v) is str:
            m = _TIME.match(v)
            if m:
                h, mi, s = int(m[1]), int(m[2]), int(m[3])
                if h < 24 and mi < 60 and s < 60:
                    return ((h * 60 + mi) * 60 + s) * per_second + _frac(m[4], digits)
            raise _Miss(f"not a time (HH:MM:SS.fff): {v[:40]!r}")
        raise _Miss(f"expected a time string, got {_json_kind(v)}")

    return conv


_day_cache: dict[str, int | None] = {}


def _day_number(text: str) -> int | None:
    """Days since 1970-01-01 of "YYYY-MM-DD", None when it is not a date (cached)."""
    if text in _day_cache:
        return _day_cache[text]
    found: int | None = None
    m = _DATE.match(text)
    if m:
        try:
            found = datetime.date(*map(int, m.groups())).toordinal() - _EPOCH_ORDINAL
        except ValueError:
            found = None
    if len(_day_cache) > 4096:
        _day_cache.clear()
    _day_cache[text] = found
    return found


def _timestamp_conv(per_second: int, digits: int, zone: str) -> Convert:
    general = _timestamp_general(per_second, digits, zone)
    # The canonical rendering ("2024-01-02T03:04:05.678Z"): one int() of its time digits.
    size = 20 + digits + len(zone)
    scale = 10**digits

    def conv(v: Any) -> Any:
        if (
            v.__class__ is str
            and len(v) == size
            and v[10] == "T"
            and v[13] == ":"
            and v[16] == ":"
            and v[19] == "."
            and v.endswith(zone)
        ):
            clock = v[11:13] + v[14:16] + v[17:19] + v[20 : 20 + digits]
            day = _day_number(v[:10])
            if day is not None and clock.isascii() and clock.isdigit():
                n = int(clock)
                frac = n % scale
                n //= scale
                sec = n % 100
                n //= 100
                minute = n % 100
                hour = n // 100
                if hour < 24 and minute < 60 and sec < 60:
                    return (day * _DAY + hour * 3600 + minute * 60 + sec) * per_second + frac
        return general(v)

    return conv


def _timestamp_general(per_second: int, digits: int, zone: str) -> Convert:
    def conv(v: Any) -> Any:
        if type(v) is int:
            if not _INT64[0] <= v <= _INT64[1]:
                raise _Miss(f"{v} does not fit long")
            return v
        if type(v) is str:
            m = _TIMESTAMP.match(v)
            if m:
                try:
                    day = datetime.date(int(m[1]), int(m[2]), int(m[3])).toordinal()
                except ValueError:
                    day = -1
                h, mi, s = int(m[4]), int(m[5]), int(m[6])
                if day > 0 and h < 24 and mi < 60 and s < 60:
                    seconds = (day - _EPOCH_ORDINAL) * _DAY + (h * 60 + mi) * 60 + s
                    offset = m[8]
                    if offset and offset not in ("Z", "z"):
                        sign = -1 if offset[0] == "-" else 1
                        oh, om = int(offset[1:3]), int(offset[-2:])
                        seconds -= sign * (oh * 3600 + om * 60)
                    result = seconds * per_second + _frac(m[7], digits)
                    if not _INT64[0] <= result <= _INT64[1]:
                        raise _Miss(f"{v!r} does not fit long")
                    return result
            suffix = "Z" if zone else ""
            raise _Miss(f"not a timestamp (YYYY-MM-DDTHH:MM:SS.{'f' * digits}{suffix}): {v[:40]!r}")
        raise _Miss(f"expected a timestamp string, got {_json_kind(v)}")

    return conv


def _default_value(schema: Any, default: Any, names: _Names, namespace: str | None) -> Any:
    """A field's default (Avro's JSON form) as the writer takes it (stripped schema)."""
    if isinstance(schema, list):
        if not schema:
            return default
        first = schema[0]
        value = _default_value(first, default, names, namespace)
        return (_type_name(first, names, namespace), value)
    if isinstance(schema, str):
        if schema in ("bytes",) and isinstance(default, str):
            return default.encode("latin-1")
        if schema in PRIMITIVES:
            return default
        _, found, inner = names.lookup(schema, namespace)
        return _default_value(found, default, names, inner)
    if isinstance(schema, dict):
        kind = schema.get("type")
        if kind == "fixed" and isinstance(default, str):
            return default.encode("latin-1")
        if kind in ("record", "error") and isinstance(default, dict):
            full = _fullname(schema["name"], schema.get("namespace", namespace))
            inner = _child_namespace(full)
            return {
                f["name"]: _default_value(
                    f["type"], default.get(f["name"], f.get("default")), names, inner
                )
                for f in schema.get("fields", ())
            }
        if kind == "array" and isinstance(default, list):
            return [_default_value(schema.get("items"), x, names, namespace) for x in default]
        if kind == "map" and isinstance(default, dict):
            return {
                k: _default_value(schema.get("values"), x, names, namespace)
                for k, x in default.items()
            }
        if isinstance(kind, str | dict | list) and kind not in _NAMED:
            return _default_value(kind, default, names, namespace)
    return default


class _EncodeCompiler:
    def __init__(self, names: _Names) -> None:
        self.names = names
        self.done: dict[str, Convert] = {}
        self.cells: dict[str, list[Convert | None]] = {}

    def compile(self, schema: Any, namespace: str | None) -> Convert:
        if isinstance(schema, list):
            return self._union(schema, namespace)
        if isinstance(schema, str):
            prim = _PRIMITIVE_CONV.get(schema)
            if prim is not None:
                return prim
            return self._named(*self.names.lookup(schema, namespace))
        if not isinstance(schema, dict):
            raise SchemaError("an Avro schema that does not parse", f"unexpected {schema!r}")
        kind = schema.get("type")
        logical, base = _logical(schema)
        if logical:
            found = self._logical(schema, logical, base)
            if found is not None:
                return found
        if kind in _NAMED:
            full = _fullname(schema["name"], schema.get("namespace", namespace))
            return self._named(full, schema, _child_namespace(full))
        if kind == "array":
            item = self.compile(schema.get("items"), namespace)

            def array(v: Any) -> Any:
                if type(v) is not list:
                    raise _Miss(f"expected an array, got {_json_kind(v)}")
                out = []
                for i, x in enumerate(v):
                    try:
                        out.append(item(x))
                    except _Miss as e:
                        e.parts.append(f"[{i}]")
                        raise
                return out

            return array
        if kind == "map":
            value = self.compile(schema.get("values"), namespace)

            def mapping(v: Any) -> Any:
                if type(v) is not dict:
                    raise _Miss(f"expected an object (a map), got {_json_kind(v)}")
                out = {}
                for k, x in v.items():
                    try:
                        out[k] = value(x)
                    except _Miss as e:
                        e.parts.append(_key(k))
                        raise
                return out

            return mapping
        return self.compile(kind, namespace)

    def _logical(self, schema: dict[str, Any], logical: str, base: str) -> Convert | None:
        if logical == "decimal" and base in ("bytes", "fixed"):
            size = schema.get("size") if base == "fixed" else None
            precision = schema.get("precision")
            return _decimal_conv(
                int(precision) if isinstance(precision, int) else None,
                int(schema.get("scale", 0)),
                int(size) if size is not None else None,
            )
        if logical == "date" and base == "int":
            return _date_conv
        if logical in _TIMES and base == _TIMES[logical][2]:
            return _time_conv(*_TIMES[logical])
        if logical in _TIMESTAMPS and base == "long":
            return _timestamp_conv(*_TIMESTAMPS[logical])
        return None

    def _named(self, full: str, schema: dict[str, Any], inner: str | None) -> Convert:
        if full in self.done:
            return self.done[full]
        if full in self.cells:
            cell = self.cells[full]
            return lambda v: cell[0](v)  # type: ignore[misc]
        kind = schema.get("type")
        result: Convert
        if kind == "fixed":
            logical, _ = _logical(schema)
            found = self._logical(schema, logical, "fixed") if logical else None
            result = found if found is not None else _fixed_conv(int(schema.get("size", 0)))
        elif kind == "enum":
            symbols = frozenset(schema.get("symbols", ()))

            def enum(v: Any) -> Any:
                if v not in symbols or type(v) is not str:
                    raise _Miss(f"{v!r} is not a symbol of enum {full}")
                return v

            result = enum
        else:
            slot: list[Convert | None] = [None]
            self.cells[full] = slot
            result = self._record(full, schema, inner)
            slot[0] = result
            del self.cells[full]
        self.done[full] = result
        return result

    def _record(self, full: str, schema: dict[str, Any], namespace: str | None) -> Convert:
        fields = []
        for field in schema.get("fields", ()):
            ftype = field.get("type")
            conv = self.compile(ftype, namespace)
            if "default" in field:
                missing: Any = (
                    "default",
                    _default_value(ftype, field["default"], self.names, namespace),
                )
            elif self._nullable(ftype):
                missing = ("default", conv(None))
            else:
                missing = None
            fields.append((field["name"], conv, missing))
        known = frozenset(name for name, _, _ in fields)

        def record(v: Any) -> Any:
            if type(v) is not dict:
                raise _Miss(f"expected an object (record {full}), got {_json_kind(v)}")
            out = {}
            for name, conv, missing in fields:
                if name in v:
                    try:
                        out[name] = conv(v[name])
                    except _Miss as e:
                        e.parts.append(_key(name))
                        raise
                elif missing is None:
                    miss = _Miss("missing (the field has no default)")
                    miss.parts.append(_key(name))
                    raise miss
                else:
                    out[name] = missing[1]
            if len(v) > len(out) or any(k not in known for k in v):
                extra = next(k for k in v if k not in known)
                miss = _Miss(f"not a field of record {full}")
                miss.parts.append(_key(extra))
                raise miss
            return out

        return _record_fast_path(fields, record)

    def _nullable(self, schema: Any) -> bool:
        return isinstance(schema, list) and any(b == "null" for b in schema)

    def _union(self, branches: list[Any], namespace: str | None) -> Convert:
        entries = []
        for branch in branches:
            name = _type_name(branch, self.names, namespace)
            entries.append((name, self.compile(branch, namespace)))
        by_name = dict(entries)
        others = [(n, c) for n, c in entries if n != "null"]
        has_null = len(others) < len(entries)
        names_text = ", ".join(n for n, _ in entries)

        def union(v: Any) -> Any:
            if v is None:
                if has_null:
                    return ("null", None)
                raise _Miss(f"null is not a branch of the union [{names_text}]")
            if type(v) is dict and len(v) == 1:
                ((name, inner),) = v.items()
                conv = by_name.get(name)
                if conv is not None and not (len(others) == 1 and _bare_ok(others[0][1], v)):
                    try:
                        return (name, conv(inner))
                    except _Miss as e:
                        e.parts.append(_key(name))
                        raise
            first: _Miss | None = None
            for name, conv in others:
                try:
                    return (name, conv(v))
                except _Miss as e:
                    if first is None:
                        first = e
            if len(others) == 1 and first is not None:
                raise first
            raise _Miss(f"{_json_kind(v)} fits no branch of the union [{names_text}]")

        return union


def _bare_ok(conv: Convert, v: Any) -> bool:
    try:
        conv(v)
    except _Miss:
        return False
    return True


def _record_fast_path(fields: list[tuple[str, Convert, Any]], slow: Convert) -> Convert:
    """The record converter as straight-line code for the common input: an object with every
    field and nothing else, the plain fields (ints, longs, strings, booleans) checked inline.
    Anything else (a missing or extra field, a value that does not fit) goes to ``slow``,
    which converts it field by field and names the field that does not fit."""
    count = len(fields)
    env: dict[str, Any] = {"_slow": slow, "_Miss": _Miss}
    lines = ["def record(v):", f"    if v.__class__ is not dict or len(v) != {count}:"]
    lines.append("        return _slow(v)")
    lines.append("    try:")
    items = []
    for i, (name, _conv, _) in enumerate(fields):
        lines.append(f"        x{i} = v[{name!r}]")
    lines.append("    except KeyError:")
    lines.append("        return _slow(v)")
    checks = []
    for i, (name, conv, _) in enumerate(fields):
        inline = _INLINE.get(conv)
        if inline is not None:
            checks.append(inline.format(x=f"x{i}"))
            items.append(f"{name!r}: x{i}")
        else:
            env[f"_c{i}"] = conv
            items.append(f"{name!r}: _c{i}(x{i})")
    if checks:
        lines.append("    if not (" + " and ".join(checks) + "):")
        lines.append("        return _slow(v)")
    lines.append("    try:")
    lines.append("        return {" + ", ".join(items) + "}")
    lines.append("    except _Miss:")
    lines.append("        return _slow(v)")
    exec("\n".join(lines), env)  # generated from field names through repr() only
    record: Convert = env["record"]
    return record


_PRIMITIVE_CONV: dict[str, Convert] = {
    "null": _conv_null,
    "boolean": _conv_bool,
    "int": _int_in(*_INT32, "an int"),
    "long": _int_in(*_INT64, "a long"),
    "float": _float_conv(True),
    "double": _float_conv(False),
    "bytes": _bytes_value,
    "string": _conv_string,
}


# Inline checks of the record fast path, by converter: a plain value goes to fastavro as is.
_INLINE: dict[Convert, str] = {
    _PRIMITIVE_CONV["boolean"]: "{x}.__class__ is bool",
    _PRIMITIVE_CONV["int"]: "({x}.__class__ is int and -2147483648 <= {x} <= 2147483647)",
    _PRIMITIVE_CONV["long"]: (
        "({x}.__class__ is int and -9223372036854775808 <= {x} <= 9223372036854775807)"
    ),
    _PRIMITIVE_CONV["string"]: "{x}.__class__ is str",
    _PRIMITIVE_CONV["null"]: "{x} is None",
}


# ---------------------------------------------------------------- the codec


def _load(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        # A bare primitive name ("string") is a valid Avro schema that is not JSON text.
        stripped = text.strip()
        if stripped in PRIMITIVES:
            return stripped
        raise SchemaError("an Avro schema that does not parse", "not JSON") from None


class AvroCodec:
    """One Avro schema compiled: payload bytes <-> JSON data."""

    def __init__(self, text: str, references: Iterable[str] = ()) -> None:
        import fastavro

        refs = [_load(t) for t in references]
        main = _load(text)
        names = _Names()
        for ref in refs:
            names.collect(ref, None)
        names.collect(main, None)
        self.schema = main
        self.name = _type_name(main, names, None) if not isinstance(main, list) else "union"
        named: dict[str, Any] = {}
        try:
            for ref in refs:
                fastavro.parse_schema(_strip(ref), named_schemas=named)
            self._parsed = fastavro.parse_schema(_strip(main), named_schemas=named)
        except Exception as exc:  # fastavro raises SchemaParseException, ValueError, KeyError
            raise SchemaError("an Avro schema that does not parse", str(exc)) from None
        self._named = named
        self._render = _RenderCompiler(names).compile(main, None)
        self._convert = _EncodeCompiler(names).compile(main, None)
        self._reader = fastavro.schemaless_reader
        self._writer = fastavro.schemaless_writer

    def decode(self, data: bytes, offset: int = 0) -> Any:
        """The JSON data of the Avro payload at ``data[offset:]``."""
        fo = io.BytesIO(data)
        if offset:
            fo.seek(offset)
        try:
            value = self._reader(fo, self._parsed, None, return_named_type=True)
        except Exception as exc:  # EOFError, UnicodeDecodeError, IndexError, ...
            raise DecodeError(f"the Avro payload does not fit the schema ({_why(exc)})") from None
        if fo.tell() != len(data):
            left = len(data) - fo.tell()
            raise DecodeError(f"the Avro payload does not fit the schema ({left} bytes left over)")
        render = self._render
        return value if render is None else render(value)

    def decode_many(self, payloads: Iterable[tuple[bytes, int]]) -> list[Any | DecodeError]:
        """Each ``(data, offset)`` decoded, or the DecodeError it raised, in order."""
        out: list[Any] = []
        for data, offset in payloads:
            try:
                out.append(self.decode(data, offset))
            except DecodeError as exc:
                out.append(exc)
        return out

    def encode(self, value: Any) -> bytes:
        """The Avro payload of JSON data ``value``; EncodeError names the field that does not
        fit."""
        try:
            datum = self._convert(value)
        except _Miss as exc:
            raise EncodeError(_path(exc.parts), exc.why) from None
        fo = io.BytesIO()
        try:
            self._writer(fo, self._parsed, datum)
        except Exception as exc:  # what our checks let through: fastavro's word
            raise EncodeError("$", _why(exc)) from None
        return fo.getvalue()


def _why(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def canonical_copy(schema: Any) -> Any:
    return copy.deepcopy(schema)
