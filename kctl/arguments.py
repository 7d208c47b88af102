"""The boundary of the command line: every argument and option value is checked once, as it is
converted, before any command sees it (:func:`install`, called by ``kctl.cli.main`` on the whole
command tree).

- **Text** must be valid UTF-8 (Python hands argv bytes that are not as surrogate escapes, which
  crash or hang the client library) and, where it may reach the wire as a Kafka string, at most
  32767 bytes encoded (an int16 length). Else a usage error naming the option:
  ``--group is not valid UTF-8 (byte 0xff at position 3)``.
- **Paths** stay bytes-clean: a file name that is not UTF-8 is a valid file on Linux. A parameter
  is a path when its type is a ``Path`` or its metavar is one of :data:`PATH_METAVARS`
  (``FILE``, ``DIR``, ``PATH``): declared at the option.
- **Numbers** are bounded by their wire type: an int by the option's declared ``min``/``max``
  (Typer's), else by int64; a float must be finite, and within its declared ``min``/``max``.
  Declare the wire width at the option with ``kctl.parsing``'s ``INT16_MAX``/``INT32_MAX``,
  e.g. ``typer.Option(None, "--producer-epoch", min=0, max=INT16_MAX)``; the range then shows in
  the option's help.

Each parameter gets a copy of its own type (same class and attributes, so help pages render as
before) whose ``convert`` checks. Errors are :class:`~kctl.errors.UsageError`: one line, exit 2.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from typing import Any

from kctl.errors import UsageError
from kctl.parsing import INT16_MAX, INT64_MAX, INT64_MIN, number_text

# Kafka's STRING: an int16 length, then that many UTF-8 bytes.
MAX_WIRE_STRING = INT16_MAX

# A str parameter with one of these metavars names a file or directory kctl opens itself: any
# bytes the file system allows.
PATH_METAVARS = frozenset({"FILE", "DIR", "PATH", "FILE...", "DIR...", "PATH..."})

# Text that never travels as a Kafka STRING, so longer than 32767 bytes is fine: record keys,
# values and headers (bytes with a varint length) and client properties (a CA bundle in
# -X ssl.ca.pem=... is easily 200 KB). Still UTF-8.
UNLIMITED_TEXT = frozenset(
    {
        "--key",
        "--value",
        "--header",
        "-X",
        "--consumer-property",
        "--producer-prop",
        "--consumer-prop",
        "--conf",
    }
)


def install(command: Any) -> Any:
    """Check every parameter of ``command`` and its sub-commands as it is converted; returns
    ``command``. Idempotent."""
    for cmd in _walk(command):
        for param in cmd.params:
            _guard(param)
    return command


def _walk(command: Any) -> Iterator[Any]:
    yield command
    for sub in (getattr(command, "commands", None) or {}).values():
        yield from _walk(sub)


def _guard(param: Any) -> None:
    kind = _kind(param)
    if kind is None or getattr(param.type, "_kctl_checked", False):
        return
    original = param.type
    checked = copy.copy(original)
    checks = {"text": _text, "int": _int, "float": _float}[kind]

    def convert(value: Any, param: Any, ctx: Any) -> Any:
        return checks(original, value, param, ctx)

    checked.convert = convert
    checked._kctl_checked = True
    param.type = checked


def _kind(param: Any) -> str | None:
    """What the boundary checks in ``param``: "text", "int", "float", or None (a path, a flag,
    anything else)."""
    from typer._click import types

    t = param.type
    if isinstance(t, types.BoolParamType):
        return None
    if isinstance(t, types.IntParamType):
        return "int"
    if isinstance(t, types.FloatParamType):
        return "float"
    if isinstance(t, types.StringParamType):
        return None if is_path(param) else "text"
    return None


def is_path(param: Any) -> bool:
    """A file or directory kctl opens itself: a Path type, or a FILE/DIR/PATH metavar."""
    return type(param.type).__name__ == "TyperPath" or param.metavar in PATH_METAVARS


def name_of(param: Any) -> str:
    """How an error names the parameter: its first long option (``--group``), else its first
    option (``-X``), else an argument's name in capitals (``TOPIC``)."""
    opts = [o for o in getattr(param, "opts", []) if o.startswith("-")]
    long = [o for o in opts if o.startswith("--")]
    if long:
        return long[0]
    if opts:
        return opts[0]
    return str(param.metavar or (param.name or "argument").upper())


# -- the checks ---------------------------------------------------------------------------------


def check_text(value: str, name: str, *, limit: int | None = MAX_WIRE_STRING) -> str:
    """``value`` if it is valid UTF-8 (no surrogate escapes) of at most ``limit`` bytes."""
    try:
        encoded = value.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = value[exc.start]
        code = ord(bad)
        byte = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"
        position = len(value[: exc.start].encode("utf-8", "surrogateescape"))
        raise UsageError(f"{name} is not valid UTF-8", f"{byte} at position {position}") from None
    if limit is not None and len(encoded) > limit:
        raise UsageError(
            f"{name} is too long",
            f"{len(encoded)} bytes; a Kafka string holds at most {limit}",
        )
    return value


def _text(original: Any, value: Any, param: Any, ctx: Any) -> Any:
    converted = original.convert(value, param, ctx)
    if isinstance(converted, str):
        name = name_of(param)
        unlimited = any(o in UNLIMITED_TEXT for o in getattr(param, "opts", []))
        check_text(converted, name, limit=None if unlimited else MAX_WIRE_STRING)
    return converted


def _bounds(t: Any, lo: float, hi: float) -> tuple[float, float, bool, bool]:
    """The declared range of a number type, within [lo, hi]."""
    low = getattr(t, "min", None)
    high = getattr(t, "max", None)
    return (
        lo if low is None else max(low, lo),
        hi if high is None else min(high, hi),
        bool(getattr(t, "min_open", False)) and low is not None,
        bool(getattr(t, "max_open", False)) and high is not None,
    )


def out_of_range(name: str, text: str, lo: float, hi: float, lo_open: bool, hi_open: bool) -> None:
    """The usage error of a number outside its range, bounds as integers where they are."""
    if lo_open or hi_open:
        low = f"> {number_text(lo)}" if lo_open else f">= {number_text(lo)}"
        high = f"< {number_text(hi)}" if hi_open else f"<= {number_text(hi)}"
        span = f"{low} and {high}"
    else:
        span = f"{number_text(lo)}..{number_text(hi)}"
    raise UsageError(f"{name} {text} is out of range", span)


def _within(param: Any, original: Any, value: float, text: str, lo: float, hi: float) -> None:
    """A usage error when ``value`` is outside the range ``original`` declares within [lo, hi]."""
    lo, hi, lo_open, hi_open = _bounds(original, lo, hi)
    below = value <= lo if lo_open else value < lo
    above = value >= hi if hi_open else value > hi
    if below or above:
        out_of_range(name_of(param), text, lo, hi, lo_open, hi_open)


def _int(original: Any, value: Any, param: Any, ctx: Any) -> Any:
    from typer._click import types

    converted = types.IntParamType().convert(value, param, ctx)
    _within(param, original, converted, str(converted), INT64_MIN, INT64_MAX)
    return converted


def _float(original: Any, value: Any, param: Any, ctx: Any) -> Any:
    from typer._click import types

    converted = types.FloatParamType().convert(value, param, ctx)
    if not math.isfinite(converted):
        raise UsageError(f"{name_of(param)} {converted!r} is not a finite number")
    _within(param, original, converted, number_text(converted), -math.inf, math.inf)
    return converted
