"""Confluent's Schema Registry wire format (docs/schema-formats.md).

A framed value is the magic byte 0, the schema id as a 4-byte big-endian signed int, for
Protobuf the message-index path (a zigzag-varint count then that many zigzag-varint indexes;
the single byte 0 stands for the path [0], the file's first message), then the payload: Avro
binary, a Protobuf message, or JSON text. Pure: bytes in, numbers out.
"""

from __future__ import annotations

import struct

from kctl.schemas.model import DecodeError

MAGIC = 0
HEADER = 5  # magic byte + schema id
_ID = struct.Struct(">bi")
_MAX_INDEXES = 1 << 16  # a path longer than this is garbage, not nesting


def parse(data: bytes) -> tuple[int, int]:
    """``(schema_id, payload_offset)`` of a framed value: the offset is 5 (for Protobuf the
    message-index path starts there: :func:`read_indexes`). DecodeError when ``data`` is not
    the wire format."""
    if not data:
        raise DecodeError("empty value: not the Schema Registry wire format")
    first = data[0]
    if first != MAGIC:
        raise DecodeError(f"not the Schema Registry wire format: first byte 0x{first:02x}")
    if len(data) < HEADER:
        raise DecodeError(
            f"not the Schema Registry wire format: {len(data)} bytes, the header alone is 5"
        )
    return _ID.unpack_from(data)[1], HEADER


def _read_zigzag(data: bytes, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    end = len(data)
    while True:
        if pos >= end:
            raise DecodeError("truncated message-index path (a varint runs past the end)")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            break
        shift += 7
        if shift > 63:
            raise DecodeError("malformed message-index path (a varint longer than 10 bytes)")
    return (result >> 1) ^ -(result & 1), pos


def read_indexes(data: bytes, pos: int = HEADER) -> tuple[list[int], int]:
    """The Protobuf message-index path at ``pos`` and the offset of the payload after it."""
    count, pos = _read_zigzag(data, pos)
    if count == 0:
        return [0], pos
    if count < 0 or count > _MAX_INDEXES:
        raise DecodeError(f"malformed message-index path (a count of {count})")
    indexes = []
    for _ in range(count):
        index, pos = _read_zigzag(data, pos)
        if index < 0:
            raise DecodeError(f"malformed message-index path (an index of {index})")
        indexes.append(index)
    return indexes, pos


def _zigzag(value: int) -> bytes:
    value = (value << 1) ^ (value >> 63)
    out = bytearray()
    while value & ~0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def header(schema_id: int) -> bytes:
    """The magic byte and the schema id."""
    if not -(1 << 31) <= schema_id < (1 << 31):
        raise ValueError(f"schema id {schema_id} does not fit 4 bytes")
    return _ID.pack(MAGIC, schema_id)


def indexes_bytes(indexes: list[int] | tuple[int, ...]) -> bytes:
    """The message-index path as Confluent's serializers write it (``[0]`` is the one byte 0)."""
    if not indexes or list(indexes) == [0]:
        return b"\x00"
    return _zigzag(len(indexes)) + b"".join(_zigzag(i) for i in indexes)


def frame(
    schema_id: int, payload: bytes, indexes: list[int] | tuple[int, ...] | None = None
) -> bytes:
    """A framed value: header, the message-index path when ``indexes`` is given (Protobuf),
    then ``payload``."""
    head = header(schema_id)
    if indexes is not None:
        head += indexes_bytes(indexes)
    return head + payload
