"""Segment indexes: ``.index`` (offset → position), ``.timeindex`` (timestamp → offset) and
``.txnindex`` (aborted transactions). Entries are relative to the segment's base offset, which
is the number in the file name. Indexes are preallocated, so a crash can leave zero entries at
the end: like Kafka, reading stops at an entry equal to the first possible one after entry 0.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

_OFF = struct.Struct(">ii")
_TIME = struct.Struct(">qi")
_TXN = struct.Struct(">hqqqq")


@dataclass(slots=True)
class OffsetEntry:
    offset: int
    position: int


@dataclass(slots=True)
class TimeEntry:
    timestamp: int
    offset: int


@dataclass(slots=True)
class AbortedTxn:
    version: int
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


def offset_entries(buf: Any, base_offset: int) -> Iterator[OffsetEntry]:
    for i in range(len(buf) // _OFF.size):
        rel, pos = _OFF.unpack_from(buf, i * _OFF.size)
        if i > 0 and rel == 0:
            return
        yield OffsetEntry(base_offset + rel, pos)


def time_entries(buf: Any, base_offset: int) -> Iterator[TimeEntry]:
    for i in range(len(buf) // _TIME.size):
        ts, rel = _TIME.unpack_from(buf, i * _TIME.size)
        if i > 0 and rel == 0:
            return
        yield TimeEntry(ts, base_offset + rel)


def aborted_txns(buf: Any) -> Iterator[AbortedTxn]:
    for i in range(len(buf) // _TXN.size):
        yield AbortedTxn(*_TXN.unpack_from(buf, i * _TXN.size))


def offset_index_sanity(buf: Any, base_offset: int) -> list[str]:
    """Kafka's OffsetIndex.sanityCheck: the reasons the index would be rebuilt, if any."""
    problems = []
    if len(buf) % _OFF.size:
        problems.append(
            f"index file size {len(buf)} is not a multiple of the entry size {_OFF.size}"
        )
    entries = list(offset_entries(buf, base_offset))
    if entries and entries[-1].offset < base_offset:
        problems.append(f"last offset {entries[-1].offset} is below the base offset {base_offset}")
    return problems


def time_index_sanity(buf: Any, base_offset: int) -> list[str]:
    """Kafka's TimeIndex.sanityCheck."""
    problems = []
    if len(buf) % _TIME.size:
        problems.append(
            f"time index file size {len(buf)} is not a multiple of the entry size {_TIME.size}"
        )
    entries = list(time_entries(buf, base_offset))
    if entries:
        if entries[-1].offset < base_offset:
            problems.append(
                f"last offset {entries[-1].offset} is below the base offset {base_offset}"
            )
        if entries[-1].timestamp < entries[0].timestamp:
            problems.append(
                f"last timestamp {entries[-1].timestamp} is below the first timestamp "
                f"{entries[0].timestamp}"
            )
    return problems
