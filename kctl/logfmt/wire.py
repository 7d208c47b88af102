"""Kafka's wire primitives and a schema-driven reader for the messages kept on disk.

Pure: bytes in, plain Python values out. The field layouts come from :mod:`kctl.logfmt.schemas`
(names, types and versions transcribed from Apache Kafka's message definitions).
"""

from __future__ import annotations

import base64
import struct
from typing import Any

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_U16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_F64 = struct.Struct(">d")


class DecodeError(ValueError):
    """The bytes do not hold what they should; ``str()`` says what and where."""


def read_uvarint(buf: Any, pos: int) -> tuple[int, int]:
    """An unsigned LEB128 varint at ``pos``: (value, next position)."""
    result = 0
    shift = 0
    end = len(buf)
    while True:
        if pos >= end:
            raise DecodeError("varint runs past the end of the data")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise DecodeError("varint longer than 10 bytes")


def read_varint(buf: Any, pos: int) -> tuple[int, int]:
    """A zigzag-encoded signed varint (Kafka's varint and varlong)."""
    raw, pos = read_uvarint(buf, pos)
    return (raw >> 1) ^ -(raw & 1), pos


def write_uvarint(value: int) -> bytes:
    """Unsigned LEB128 (used by tests' round trips and by nothing on the read path)."""
    if value < 0:
        raise ValueError("negative")
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def write_varint(value: int) -> bytes:
    """Zigzag then LEB128, for 64-bit signed values."""
    return write_uvarint((value << 1) ^ (value >> 63))


def uuid_text(raw: bytes) -> str:
    """Kafka prints a Uuid as URL-safe base64 without padding (22 characters)."""
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


class Reader:
    """A cursor over bytes with Kafka's primitive types; every read is bounds-checked."""

    __slots__ = ("buf", "end", "pos")

    def __init__(self, buf: Any, pos: int = 0, end: int | None = None) -> None:
        self.buf = buf
        self.pos = pos
        self.end = len(buf) if end is None else end

    def remaining(self) -> int:
        return self.end - self.pos

    def _take(self, n: int) -> int:
        p = self.pos
        if n < 0 or p + n > self.end:
            raise DecodeError(f"needs {n} bytes at byte {p}, {self.end - p} left")
        self.pos = p + n
        return p

    def _fixed(self, st: struct.Struct) -> Any:
        return st.unpack_from(self.buf, self._take(st.size))[0]

    def int8(self) -> int:
        return int(self._fixed(_I8))

    def int16(self) -> int:
        return int(self._fixed(_I16))

    def uint16(self) -> int:
        return int(self._fixed(_U16))

    def int32(self) -> int:
        return int(self._fixed(_I32))

    def uint32(self) -> int:
        return int(self._fixed(_U32))

    def int64(self) -> int:
        return int(self._fixed(_I64))

    def float64(self) -> float:
        return float(self._fixed(_F64))

    def bool(self) -> bool:
        return bool(self._fixed(_I8) != 0)

    def uvarint(self) -> int:
        value, self.pos = read_uvarint(self.buf, self.pos)
        if self.pos > self.end:
            raise DecodeError("varint runs past the end of the data")
        return value

    def varint(self) -> int:
        raw = self.uvarint()
        return (raw >> 1) ^ -(raw & 1)

    def raw(self, n: int) -> bytes:
        p = self._take(n)
        return bytes(self.buf[p : p + n])

    def uuid(self) -> str:
        return uuid_text(self.raw(16))

    def text(self, n: int) -> str:
        try:
            return self.raw(n).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError(f"string is not UTF-8 ({exc.reason})") from None


def _in(rng: tuple[int, int] | None, version: int) -> bool:
    return rng is not None and rng[0] <= version <= rng[1]


def _read_value(
    r: Reader,
    ftype: str,
    sub: Any,
    version: int,
    flexible: bool,
    nullable: bool,
    tagged: bool = False,
) -> Any:
    if ftype.startswith("[]"):
        n = (r.uvarint() - 1) if flexible else r.int32()
        if n < 0:
            if nullable:
                return None
            raise DecodeError(f"negative array length {n} in a non-nullable field")
        if n > r.remaining():
            raise DecodeError(f"array of {n} items cannot fit in {r.remaining()} bytes")
        inner = ftype[2:]
        return [_read_value(r, inner, sub, version, flexible, False) for _ in range(n)]
    if ftype == "struct":
        if nullable:
            # Kafka's nullable struct: an int8 marker (-1 null, 1 present) before it, or, when
            # the struct is a tagged field, an unsigned varint (0 null).
            present = r.uvarint() > 0 if tagged else r.int8() >= 0
            if not present:
                return None
        return read_fields(r, sub, version, flexible)
    if ftype in ("string", "bytes", "records"):
        if flexible:
            n = r.uvarint() - 1
        elif ftype == "string":
            n = r.int16()
        else:
            n = r.int32()
        if n < 0:
            if nullable or n == -1:
                return None
            raise DecodeError(f"negative length {n}")
        return r.text(n) if ftype == "string" else r.raw(n)
    if ftype == "uuid":
        return r.uuid()
    reader = getattr(r, ftype, None)
    if reader is None:
        raise DecodeError(f"unknown field type {ftype}")
    return reader()


def read_fields(r: Reader, fields: Any, version: int, flexible: bool) -> dict[str, Any]:
    """Read one message body (or struct) of ``version``; tagged fields land under their names,
    unknown tags under ``_unknown_tags`` (tag number → hex of its bytes).

    A field is tagged in the versions that are both in its ``versions`` and its
    ``tagged_versions`` (Kafka's rule); there it is read only from the tagged-field section and,
    when absent, left out. A tagged field's bytes must be used up exactly by its value."""
    out: dict[str, Any] = {}
    tagged: dict[int, Any] = {}
    for name, ftype, versions, nullable, tagged_v, tag, sub in fields:
        if not _in(versions, version):
            continue
        if flexible and _in(tagged_v, version):
            tagged[tag] = (name, ftype, sub, _in(nullable, version))
            continue
        out[name] = _read_value(r, ftype, sub, version, flexible, _in(nullable, version))
    if flexible:
        for _ in range(r.uvarint()):
            tag = r.uvarint()
            size = r.uvarint()
            start = r.pos
            r._take(size)
            if tag in tagged:
                name, ftype, sub, nullable = tagged[tag]
                sub_r = Reader(r.buf, start, start + size)
                out[name] = _read_value(sub_r, ftype, sub, version, True, nullable, tagged=True)
                if sub_r.remaining():
                    raise DecodeError(
                        f"tagged field {name} (tag {tag}) leaves {sub_r.remaining()} of its "
                        f"{size} bytes unread"
                    )
            else:
                out.setdefault("_unknown_tags", {})[tag] = bytes(r.buf[start : start + size]).hex()
    return out


def decode_message(name: str, buf: Any, version: int, *, exact: bool = True) -> dict[str, Any]:
    """Decode ``buf`` as message ``name`` at ``version`` (no version prefix in ``buf``)."""
    from kctl.logfmt.schemas import SCHEMAS  # ~6 ms to build; only decoders of messages need it

    schema = SCHEMAS[name]
    lo, hi = schema["valid"]
    if not lo <= version <= hi:
        raise DecodeError(f"{name} version {version} is not one of {lo}..{hi}")
    flexible = _in(schema["flexible"], version)
    r = Reader(buf)
    out = read_fields(r, schema["fields"], version, flexible)
    if exact and r.remaining():
        raise DecodeError(f"{r.remaining()} bytes left over after {name} v{version}")
    return out
