"""Producer-state snapshots (``*.snapshot`` next to segments) and the small text files of a log
directory: leader-epoch-checkpoint, ``*-offset-checkpoint``, partition.metadata,
meta.properties, quorum-state."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from typing import Any

from kctl.logfmt.wire import DecodeError

_ENTRY = struct.Struct(">qhiqiqiq")


@dataclass(slots=True)
class ProducerEntry:
    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int

    @property
    def first_sequence(self) -> int:
        return -1 if self.last_sequence < 0 else self.last_sequence - self.offset_delta


@dataclass(slots=True)
class ProducerSnapshot:
    version: int
    crc: int
    computed_crc: int
    entries: list[ProducerEntry] = field(default_factory=list)

    @property
    def crc_valid(self) -> bool:
        return self.crc == self.computed_crc


def producer_snapshot(buf: Any) -> ProducerSnapshot:
    """Version int16, CRC-32C (uint32) of everything after it, int32 count, then per producer:
    id, epoch, last sequence, last offset, offset delta, timestamp, coordinator epoch, first
    offset of the ongoing transaction (-1 if none)."""
    import crc32c

    if len(buf) < 10:
        raise DecodeError(f"producer snapshot of {len(buf)} bytes is shorter than 10")
    version, crc, count = struct.unpack_from(">hIi", buf, 0)
    if version != 1:
        raise DecodeError(f"unknown producer snapshot version {version}")
    computed = crc32c.crc32c(bytes(buf[6:]))
    if count < 0 or 10 + count * _ENTRY.size > len(buf):
        raise DecodeError(f"{count} producer entries cannot fit in {len(buf)} bytes")
    entries = [ProducerEntry(*_ENTRY.unpack_from(buf, 10 + i * _ENTRY.size)) for i in range(count)]
    return ProducerSnapshot(version, crc, computed, entries)


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _int(text: str, bits: int) -> int:
    """A Java int (32) or long (64) as Kafka's checkpoint reader parses it; ValueError else."""
    if len(text) > 24:
        raise ValueError(f"{text[:24]!r}... is too long for a number")
    value = int(text)
    if not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
        raise ValueError(f"{value} does not fit in {bits} bits")
    return value


def checkpoint(text: str, kind: str) -> dict[str, Any]:
    """A Kafka checkpoint text file: version line, count line, then entries.
    ``kind`` ``leader-epoch``: "epoch start_offset"; ``offset``: "topic partition offset"."""
    lines = _lines(text)
    if not lines:
        return {"version": None, "entries": []}
    try:
        version = _int(lines[0], 32)
        count = _int(lines[1], 32) if len(lines) > 1 else 0
    except ValueError as exc:
        raise DecodeError(f"checkpoint header is not numeric ({exc})") from None
    entries: list[dict[str, Any]] = []
    for line in lines[2:]:
        parts = line.split()
        try:
            if kind == "leader-epoch" and len(parts) == 2:
                entries.append({"epoch": _int(parts[0], 32), "start_offset": _int(parts[1], 64)})
            elif kind == "offset" and len(parts) == 3:
                entries.append(
                    {
                        "topic": parts[0],
                        "partition": _int(parts[1], 32),
                        "offset": _int(parts[2], 64),
                    }
                )
            else:
                raise ValueError(line)
        except ValueError:
            raise DecodeError(f"malformed checkpoint line {line!r}") from None
    if len(entries) != count:
        raise DecodeError(f"checkpoint announces {count} entries but holds {len(entries)}")
    return {"version": version, "entries": entries}


def properties(text: str) -> dict[str, str]:
    """meta.properties / partition.metadata: ``key=value`` or ``key: value`` lines."""
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        eq, colon = line.find("="), line.find(":")
        cut = min(i for i in (eq, colon) if i >= 0) if max(eq, colon) >= 0 else -1
        if cut < 0:
            raise DecodeError(f"malformed properties line {line!r}")
        out[line[:cut].strip()] = line[cut + 1 :].strip()
    return out


_MAX_DEPTH = 32  # quorum-state nests two levels; orjson refuses more than 255


def _plain_json(value: Any, depth: int = 0) -> None:
    """Refuse what no quorum-state holds and no JSON writer takes back: nesting deeper than
    :data:`_MAX_DEPTH`, integers outside the 64-bit range."""
    if depth > _MAX_DEPTH:
        raise DecodeError(f"quorum-state nests deeper than {_MAX_DEPTH} levels")
    if isinstance(value, dict):
        for v in value.values():
            _plain_json(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            _plain_json(v, depth + 1)
    elif isinstance(value, int) and not isinstance(value, bool) and not _is_int64(value):
        raise DecodeError(f"quorum-state holds {value}, outside the 64-bit range")


def _is_int64(value: int) -> bool:
    return -(1 << 63) <= value < 1 << 63


def quorum_state(text: str) -> dict[str, Any]:
    """quorum-state: a JSON object (leader, epoch, voters)."""
    # json.loads recurses once per nesting level: 1,000 ``[`` would raise RecursionError.
    depth = 0
    deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if depth > _MAX_DEPTH:
                    raise DecodeError(f"quorum-state nests deeper than {_MAX_DEPTH} levels")
        elif ch in "]}":
            depth -= 1
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise DecodeError(f"quorum-state is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise DecodeError("quorum-state is not a JSON object")
    _plain_json(data)
    return data
