"""KRaft ``__cluster_metadata`` records: the value of each record is a frame
(frame version, api key, record version, all unsigned varints) around one metadata message."""

from __future__ import annotations

from typing import Any

from kctl.logfmt.schemas import SCHEMAS
from kctl.logfmt.wire import DecodeError, Reader, decode_message

RECORD_TYPES: dict[int, str] = {
    s["api_key"]: name for name, s in SCHEMAS.items() if s.get("type") == "metadata"
}


def decode_metadata_record(value: Any) -> dict[str, Any]:
    """``{"type": "TopicRecord", "version": 0, "data": {...}}`` for one record value."""
    if value is None:
        raise DecodeError("metadata record has no value")
    r = Reader(value)
    frame = r.uvarint()
    if frame != 1:
        raise DecodeError(f"unknown metadata frame version {frame}")
    api_key = r.uvarint()
    version = r.uvarint()
    name = RECORD_TYPES.get(api_key)
    if name is None:
        raise DecodeError(f"unknown metadata record type {api_key}")
    data = decode_message(name, bytes(value[r.pos :]), version)
    return {"type": name, "version": version, "data": data}
