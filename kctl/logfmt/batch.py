"""Record batches (magic 2) and message sets (magic 0 and 1) as they lie in a ``.log`` segment.

Pure and streaming: :func:`scan` walks a buffer (bytes, memoryview or mmap) batch by batch and
yields :class:`Batch` headers and :class:`Problem` reports; it never raises on bad input. When
the framing breaks it looks for the next position where a batch with a valid checksum starts
and resumes there. :func:`decode_records` opens one batch (decompressing when needed) into
compact record tuples; :func:`records` turns those into :class:`Record` objects for people.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from kctl.logfmt.codecs import MAX_DECOMPRESSED, CodecError, codec_name, decompress
from kctl.logfmt.wire import DecodeError, read_uvarint

LOG_OVERHEAD = 12  # base offset (8) + length (4)
V2_HEADER = 61
V2_MIN_LENGTH = V2_HEADER - LOG_OVERHEAD
V2_CRC_START = 21  # the CRC-32C of a magic-2 batch covers its bytes from the attributes on
LEGACY_MIN_LENGTH = {0: 14, 1: 22}

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
# Offsets and timestamps this close to the ends of the 64-bit range need a check after a delta
# is added (the fast paths add deltas of at most 2**14 without one).
_NEAR = 1 << 32

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_BIT = 0x08
TRANSACTIONAL_BIT = 0x10
CONTROL_BIT = 0x20
DELETE_HORIZON_BIT = 0x40

CONTROL_TYPES = {
    0: "ABORT",
    1: "COMMIT",
    2: "LEADER_CHANGE",
    3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER",
    5: "KRAFT_VERSION",
    6: "KRAFT_VOTERS",
}
_CONTROL_SCHEMAS = {
    2: "LeaderChangeMessage",
    3: "SnapshotHeaderRecord",
    4: "SnapshotFooterRecord",
    5: "KRaftVersionRecord",
    6: "VotersRecord",
}

_HEAD = struct.Struct(">qiib")  # base offset, length, partition leader epoch / legacy crc, magic
_V2 = struct.Struct(">qiibIhiqqqhii")  # the 61 bytes of a V2Header, in its field order
_LEGACY = struct.Struct(">qiIbb")
_V2_TAIL = struct.Struct(">hiqqqhii")  # a V2Header from the attributes on
_I64 = struct.Struct(">q")
_I32 = struct.Struct(">i")
_H2 = struct.Struct(">hh")
_HI = struct.Struct(">hi")

_crc32c: Any = None


def _crc32c_fn() -> Any:
    global _crc32c
    if _crc32c is None:
        _crc32c = _load_crc32c()
    return _crc32c


def _load_crc32c() -> Any:
    """``crc32c.crc32c`` (the C extension) without running the package's ``__init__``, which
    imports importlib.metadata only to set ``__version__``: ~18 ms of every dump's start-up."""
    import sys

    mod = sys.modules.get("crc32c._crc32c")
    if mod is None and "crc32c" not in sys.modules:
        try:
            from importlib.machinery import PathFinder
            from importlib.util import find_spec, module_from_spec

            pkg = find_spec("crc32c")
            spec = (
                PathFinder.find_spec("crc32c._crc32c", list(pkg.submodule_search_locations))
                if pkg is not None and pkg.submodule_search_locations
                else None
            )
            if spec is not None and spec.loader is not None:
                mod = module_from_spec(spec)
                spec.loader.exec_module(mod)
                sys.modules["crc32c._crc32c"] = mod
        except (ImportError, AttributeError, OSError):
            mod = None
    if mod is None:
        import crc32c

        return crc32c.crc32c
    return mod.crc32c


class V2Header(NamedTuple):
    """The 61-byte header of a magic-2 record batch, as it lies on disk (``_V2`` unpacks it;
    :func:`v2_headers` wraps each result with ``V2Header._make``). ``length`` excludes the
    12-byte log overhead; ``attributes`` holds the codec (:data:`COMPRESSION_MASK`) and the
    ``*_BIT`` flags."""

    base_offset: int
    length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    first_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int


_v2_header = V2Header._make


@dataclass(slots=True)
class Batch:
    """One batch header (magic 2) or one top-level message (magic 0/1), as DumpLogSegments names
    the fields. ``position`` is the byte position in the file; ``size`` includes the 12-byte log
    overhead. Fields that a magic does not have are ``None``."""

    position: int
    base_offset: int
    last_offset: int
    count: int | None
    size: int
    magic: int
    crc: int
    is_valid: bool
    attributes: int
    codec: str
    timestamp_type: str
    max_timestamp: int
    first_timestamp: int | None = None
    partition_leader_epoch: int | None = None
    base_sequence: int | None = None
    last_sequence: int | None = None
    producer_id: int | None = None
    producer_epoch: int | None = None
    is_transactional: bool = False
    is_control: bool = False
    delete_horizon_ms: int | None = None
    computed_crc: int | None = None

    @property
    def codec_id(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def next_position(self) -> int:
        return self.position + self.size


@dataclass(slots=True)
class Problem:
    """Something invalid at ``position`` (bytes from the start of the file)."""

    position: int
    kind: str  # truncated | length | magic | crc | codec | records | trailing | index | file
    reason: str
    resumed_at: int | None = None  # where decoding went on, None when it could not


@dataclass(slots=True)
class Record:
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    sequence: int = -1
    attributes: int = 0
    crc: int | None = None  # magic 0/1 only
    is_valid: bool | None = None  # magic 0/1 only

    @property
    def key_size(self) -> int:
        return -1 if self.key is None else len(self.key)

    @property
    def value_size(self) -> int:
        return -1 if self.value is None else len(self.value)


def _wrap64(value: int) -> int:
    """``value`` as Java's long arithmetic leaves it (Kafka computes last offsets that way)."""
    return ((value + (1 << 63)) & ((1 << 64) - 1)) - (1 << 63)


def offset_overflow(batch: Batch) -> str | None:
    """Why ``batch``'s offsets leave the 64-bit range (its last offset was wrapped as Java
    wraps it), or None."""
    if batch.magic != 2 or abs(batch.last_offset - batch.base_offset) <= 1 << 31:
        return None  # the delta is an int32: only a wrapped sum lies further away
    return (
        f"base offset {batch.base_offset} and its last offset delta leave the 64-bit range "
        f"(last offset wraps to {batch.last_offset})"
    )


def _timestamp_type(magic: int, attributes: int) -> str:
    if magic == 0:
        return "NoTimestampType"
    return "LogAppendTime" if attributes & TIMESTAMP_TYPE_BIT else "CreateTime"


def _last_sequence(base_sequence: int, delta: int) -> int:
    # Sequences wrap from Integer.MAX_VALUE to 0.
    return -1 if base_sequence < 0 else (base_sequence + delta) & 0x7FFFFFFF


def v2_batch(pos: int, h: V2Header, computed_crc: int) -> Batch:
    """The :class:`Batch` of the magic-2 header ``h`` found at ``pos``."""
    attrs = h.attributes
    first_ts = h.first_timestamp
    last = h.base_offset + h.last_offset_delta
    if not INT64_MIN <= last <= INT64_MAX:
        last = _wrap64(last)
    return Batch(
        position=pos,
        base_offset=h.base_offset,
        last_offset=last,
        count=h.records_count,
        size=LOG_OVERHEAD + h.length,
        magic=2,
        crc=h.crc,
        is_valid=computed_crc == h.crc,
        attributes=attrs,
        codec=codec_name(attrs & COMPRESSION_MASK),
        timestamp_type=_timestamp_type(2, attrs),
        max_timestamp=h.max_timestamp,
        first_timestamp=first_ts,
        partition_leader_epoch=h.partition_leader_epoch,
        base_sequence=h.base_sequence,
        last_sequence=_last_sequence(h.base_sequence, h.last_offset_delta),
        producer_id=h.producer_id,
        producer_epoch=h.producer_epoch,
        is_transactional=bool(attrs & TRANSACTIONAL_BIT),
        is_control=bool(attrs & CONTROL_BIT),
        delete_horizon_ms=first_ts if attrs & DELETE_HORIZON_BIT else None,
        computed_crc=computed_crc,
    )


def parse_at(buf: Any, pos: int, end: int) -> tuple[Batch | None, str | None, str]:
    """The batch starting at ``pos``, or (None, kind, reason)."""
    avail = end - pos
    if avail < LOG_OVERHEAD:
        return None, "truncated", f"{avail} bytes left, too few for a batch header"
    base_offset, length = struct.unpack_from(">qi", buf, pos)
    if avail < 17:
        return None, "truncated", f"{avail} bytes left, too few for a batch header"
    magic = buf[pos + 16]
    if magic > 2:
        return None, "magic", f"unknown magic {magic}"
    min_len = V2_MIN_LENGTH if magic == 2 else LEGACY_MIN_LENGTH[magic]
    if length < min_len:
        return None, "length", f"batch length {length} is below the minimum {min_len}"
    size = LOG_OVERHEAD + length
    if size > avail:
        return (
            None,
            "truncated",
            f"batch of {size} bytes runs past the end of the data ({avail} bytes left)",
        )
    if magic == 2:
        head = _v2_header(_V2.unpack_from(buf, pos))
        return v2_batch(pos, head, _crc32c_fn()(buf[pos + V2_CRC_START : pos + size])), None, ""
    _, _, crc, _, attrs = _LEGACY.unpack_from(buf, pos)
    computed = zlib.crc32(buf[pos + 16 : pos + size]) & 0xFFFFFFFF
    ts = -1
    if magic == 1:
        (ts,) = _I64.unpack_from(buf, pos + 18)
    return (
        Batch(
            position=pos,
            base_offset=base_offset,
            last_offset=base_offset,
            count=None,
            size=size,
            magic=magic,
            crc=crc,
            is_valid=computed == crc,
            attributes=attrs,
            codec=codec_name(attrs & COMPRESSION_MASK),
            timestamp_type=_timestamp_type(magic, attrs),
            max_timestamp=ts,
            partition_leader_epoch=-1,
            base_sequence=-1,
            last_sequence=-1,
            producer_id=-1,
            producer_epoch=-1,
            computed_crc=computed,
        ),
        None,
        "",
    )


def cut_v2_header(buf: Any, pos: int, end: int) -> V2Header | None:
    """The header of the magic-2 batch at ``pos`` when its 61 bytes lie before ``end``, even if
    the batch runs on past ``end`` (a Fetch answer cut at its byte limit, where
    :func:`parse_at` reports it truncated); its checksum cannot be checked. None when fewer
    bytes are there, or the batch is not magic 2."""
    if end - pos < V2_HEADER or buf[pos + 16] != 2:
        return None
    return _v2_header(_V2.unpack_from(buf, pos))


def v2_headers(buf: Any, start: int, end: int) -> tuple[list[tuple[int, V2Header]], int, int]:
    """The fast walk for what most segments hold from end to end: well-formed magic-2 batches
    whose checksum holds, lying wholly in ``buf[start:end]``. Returns ([(position, header)],
    the position where it stopped, and the size of the batch there when ``end`` cut it (0 when
    it stopped at anything else, which :func:`scan` then reports exactly as it would have)."""
    crc32c = _crc32c_fn()
    unpack = _V2.unpack_from
    new, header = tuple.__new__, V2Header  # as V2Header._make, without its call overhead
    overhead, min_length, crc_start, header_size = (
        LOG_OVERHEAD,
        V2_MIN_LENGTH,
        V2_CRC_START,
        V2_HEADER,
    )
    near_lo, near_hi = INT64_MIN + _NEAR, INT64_MAX - _NEAR
    heads: list[tuple[int, V2Header]] = []
    append = heads.append
    pos = start
    while end - pos >= header_size:
        head = new(header, unpack(buf, pos))
        length = head.length
        if head.magic != 2 or length < min_length:
            return heads, pos, 0
        if not near_lo < head.base_offset < near_hi and not (
            INT64_MIN <= head.base_offset + head.last_offset_delta <= INT64_MAX
        ):
            return heads, pos, 0  # B.scan reports it
        nxt = pos + overhead + length
        if nxt > end:
            return heads, pos, overhead + length
        if crc32c(buf[pos + crc_start : nxt]) != head.crc:
            return heads, pos, 0
        append((pos, head))
        pos = nxt
    return heads, pos, V2_HEADER if pos < end else 0


# Resync's checksum budget: the candidates checked while looking for the next valid batch may
# checksum at most this many bytes per byte searched, plus a constant. Without it a stretch of
# plausible headers whose lengths reach far ahead costs quadratic time.
RESYNC_BUDGET_RATIO = 32
RESYNC_BUDGET_BASE = 1 << 16


def _plausible(buf: Any, pos: int, end: int, magic: int) -> bool:
    """O(1) checks a batch at ``pos`` must pass before it is worth a checksum: its length fits
    in ``end``; a magic-0/1 message's key and value fill it exactly; a magic-2 batch's unused
    attribute bits are clear, its codec and record count possible."""
    avail = end - pos
    if avail < LOG_OVERHEAD + 5:
        return False
    (length,) = _I32.unpack_from(buf, pos + 8)
    if magic == 2:
        if length < V2_MIN_LENGTH or LOG_OVERHEAD + length > avail:
            return False
        attrs, _, _, _, _, _, _, count = _V2_TAIL.unpack_from(buf, pos + 21)
        if attrs & ~0x7F or attrs & COMPRESSION_MASK > 4 or count < 0:
            return False
        return bool(attrs & COMPRESSION_MASK or 7 * count <= length - V2_MIN_LENGTH)
    if length < LEGACY_MIN_LENGTH[magic] or LOG_OVERHEAD + length > avail:
        return False
    nxt = pos + LOG_OVERHEAD + length
    p = pos + (26 if magic == 1 else 18)
    (klen,) = _I32.unpack_from(buf, p)
    if klen < -1 or p + 4 + max(klen, 0) + 4 > nxt:
        return False
    p += 4 + max(klen, 0)
    (vlen,) = _I32.unpack_from(buf, p)
    return bool(vlen >= -1 and p + 4 + max(vlen, 0) == nxt)


def _resync(
    buf: Any,
    finder: Any,
    start: int,
    end: int,
    magics: tuple[int, ...],
    stats: dict[str, int] | None = None,
) -> tuple[Batch | None, int]:
    """The first position >= ``start`` where a batch of one of ``magics`` parses and its
    checksum holds, and how many candidates were passed over unchecked because the checksum
    budget (:data:`RESYNC_BUDGET_RATIO`) was spent. The magic byte sits 16 bytes into a batch,
    so search for it in C; a candidate is checksummed only when :func:`_plausible` and within
    budget, so the search is linear in the bytes searched."""
    best: Batch | None = None
    spent = 0
    skipped = 0
    candidates = 0
    for magic in magics:
        needle = bytes([magic])
        i = start + 16
        limit = end if best is None else min(end, best.position + 16)
        while True:
            i = finder.find(needle, i, limit)
            if i < 0:
                break
            pos = i - 16
            candidates += 1
            if _plausible(buf, pos, end, magic):
                (length,) = _I32.unpack_from(buf, pos + 8)
                allowed = RESYNC_BUDGET_RATIO * (pos - start + 1) + RESYNC_BUDGET_BASE
                if spent + length > allowed:
                    skipped += 1
                else:
                    spent += length
                    batch, _, _ = parse_at(buf, pos, end)
                    if batch is not None and batch.is_valid:
                        best = batch
                        break
            i += 1
    if stats is not None:
        stats["candidates"] = stats.get("candidates", 0) + candidates
        stats["checksummed_bytes"] = stats.get("checksummed_bytes", 0) + spent
        stats["skipped"] = stats.get("skipped", 0) + skipped
    return best, skipped


def scan(
    buf: Any,
    start: int = 0,
    end: int | None = None,
    *,
    resync: bool = True,
    stop_at_partial: bool = False,
    seen_magic: int | None = None,
) -> Iterator[Batch | Problem]:
    """Every batch in ``buf[start:end]``, in file order, with a :class:`Problem` before each
    stretch that could not be read. A batch whose checksum does not hold is yielded (with
    ``is_valid`` False) followed by a ``crc`` problem; decoding goes on after it.
    ``stop_at_partial``: a batch cut by ``end`` ends the scan quietly (``--max-bytes``).
    ``seen_magic``: the magic of the batches before ``start`` (resync then looks only for it),
    for a scan that goes on from where another reader stopped."""
    finder = buf if hasattr(buf, "find") else bytes(buf)
    if not isinstance(buf, memoryview):
        buf = memoryview(buf)
    end = len(buf) if end is None else min(end, len(buf))
    pos = start
    while pos < end:
        batch, kind, reason = parse_at(buf, pos, end)
        if batch is not None:
            seen_magic = batch.magic
            yield batch
            overflow = offset_overflow(batch) if batch.magic == 2 else None
            if overflow is not None:
                yield Problem(
                    pos,
                    "offset",
                    overflow,
                    batch.next_position if batch.next_position < end else None,
                )
            if not batch.is_valid:
                yield Problem(
                    pos,
                    "crc",
                    f"CRC mismatch: stored {batch.crc}, computed {batch.computed_crc}",
                    batch.next_position if batch.next_position < end else None,
                )
            pos = batch.next_position
            continue
        if stop_at_partial and kind == "truncated":
            return
        if not resync:
            yield Problem(pos, kind or "length", reason, None)
            return
        magics: tuple[int, ...] = (2, 1, 0) if seen_magic is None else (seen_magic,)
        found, unchecked = _resync(buf, finder, pos + 1, end, magics)
        note = (
            f" ({unchecked} candidate batches left unchecked: their lengths reach too far)"
            if unchecked
            else ""
        )
        if found is None:
            yield Problem(pos, kind or "length", f"{reason}; no valid batch after it{note}", None)
            return
        yield Problem(
            pos,
            kind or "length",
            f"{reason}; skipped {found.position - pos} bytes to the next valid batch{note}",
            found.position,
        )
        pos = found.position


# ---------------------------------------------------------------------------------------------
# Records
#
# A record as :func:`decode_records` gives it is a plain tuple, its fields at these positions;
# every reader takes a field by its name here (``row[REC_OFFSET]``), never by a number. A plain
# tuple, not a NamedTuple: :func:`_v2_records` builds one per record in the hot loop of deep
# dumps, and a NamedTuple instance (``tuple.__new__(cls, t)``, the cheapest way to make one)
# cost 130 ns more a record there, 12% of the loop on a 64 MiB segment (benchmarks/dump.py's
# generator), where indexing with these names reads as fast as unpacking by position.
REC_OFFSET: Final = 0  # absolute offset
REC_TIMESTAMP: Final = 1
REC_KEY_POS: Final = 2  # where the key starts in the data decode_records returns
REC_KEY_LEN: Final = 3  # -1: null
REC_VALUE_POS: Final = 4
REC_VALUE_LEN: Final = 5  # -1: null
REC_HEADERS: Final = 6  # [(key, value or None)], empty when there are none
REC_SEQUENCE: Final = 7  # -1 when the batch has no base sequence (and always for magic 0/1)
REC_ATTRIBUTES: Final = 8
REC_CRC: Final = 9  # magic 0/1 only: the message's stored CRC-32 ...
REC_IS_VALID: Final = 10  # ... and whether it holds
V2_RECORD_FIELDS: Final = 9  # a magic-2 record has the fields up to REC_ATTRIBUTES
LEGACY_RECORD_FIELDS: Final = 11  # a magic 0/1 message has REC_CRC and REC_IS_VALID too

# One record of decode_records: REC_* fields, V2_RECORD_FIELDS or LEGACY_RECORD_FIELDS of them.
RecordRow = tuple[Any, ...]


class LegacyMessage(NamedTuple):
    """One magic 0/1 message as it lies in a message set (:func:`_legacy_message`);
    ``key_pos``/``value_pos`` index the buffer it was read from, ``*_len`` is -1 for null."""

    offset: int
    magic: int
    attributes: int
    crc: int
    is_valid: bool
    timestamp: int  # -1 for magic 0
    key_pos: int
    key_len: int
    value_pos: int
    value_len: int


def _varint_slow(data: Any, pos: int) -> tuple[int, int]:
    raw, pos = read_uvarint(data, pos)
    return (raw >> 1) ^ -(raw & 1), pos


def _v2_records(
    data: bytes, base_offset: int, first_ts: int, count: int, base_seq: int, where: str
) -> list[RecordRow]:
    """The records of a magic-2 batch: tuples of the fields :data:`REC_OFFSET` to
    :data:`REC_ATTRIBUTES`, positions indexing ``data``. This is the hot loop: single-byte
    varints are decoded inline."""
    out: list[RecordRow] = []
    append = out.append
    pos = 0
    end = len(data)
    slow = _varint_slow
    if count > end:
        raise DecodeError(f"{where}: {count} records cannot fit in {end} bytes")
    for _ in range(count):
        b = data[pos]
        if b < 0x80:
            length = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            length, pos = slow(data, pos)
        rec_end = pos + length
        if length < 6 or rec_end > end:
            raise DecodeError(f"{where}: record length {length} runs past the batch")
        attributes = data[pos]
        pos += 1
        b = data[pos]
        if b < 0x80:
            ts_delta = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            ts_delta, pos = slow(data, pos)
            if not INT64_MIN <= first_ts + ts_delta <= INT64_MAX:
                raise DecodeError(f"{where}: a record's timestamp leaves the 64-bit range")
        b = data[pos]
        if b < 0x80:
            off_delta = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            off_delta, pos = slow(data, pos)
            if not -(1 << 31) <= off_delta < 1 << 31:
                raise DecodeError(f"{where}: offset delta {off_delta} does not fit in 32 bits")
        b = data[pos]
        if b < 0x80:
            key_len = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            key_len, pos = slow(data, pos)
        key_pos = pos
        if key_len > 0:
            pos += key_len
        b = data[pos]
        if b < 0x80:
            value_len = (b >> 1) ^ -(b & 1)
            pos += 1
        else:
            value_len, pos = slow(data, pos)
        value_pos = pos
        if value_len > 0:
            pos += value_len
        b = data[pos]
        if b == 0:
            headers: list[tuple[str, bytes | None]] = []
            pos += 1
        else:
            headers, pos = _headers(data, pos, rec_end, where)
        if pos != rec_end:
            raise DecodeError(
                f"{where}: record at offset delta {off_delta} has {rec_end - pos} bytes "
                f"unaccounted for"
            )
        append(
            (  # REC_OFFSET .. REC_ATTRIBUTES, in that order
                base_offset + off_delta,
                first_ts + ts_delta,
                key_pos,
                key_len,
                value_pos,
                value_len,
                headers,
                -1 if base_seq < 0 else (base_seq + off_delta) & 0x7FFFFFFF,
                attributes,
            )
        )
    if pos != end:
        raise DecodeError(f"{where}: {end - pos} bytes left after {count} records")
    if not (INT64_MIN + _NEAR < base_offset < INT64_MAX - _NEAR) or not (
        INT64_MIN + _NEAR < first_ts < INT64_MAX - _NEAR
    ):
        _check_range(out, where)
    return out


def _check_range(rows: list[RecordRow], where: str) -> None:
    """Record offsets and timestamps must stay in the 64-bit range (Kafka's longs)."""
    for row in rows:
        offset, timestamp = row[REC_OFFSET], row[REC_TIMESTAMP]
        if not INT64_MIN <= offset <= INT64_MAX:
            raise DecodeError(f"{where}: record offset {offset} leaves the 64-bit range")
        if not INT64_MIN <= timestamp <= INT64_MAX:
            raise DecodeError(f"{where}: record timestamp {timestamp} leaves the 64-bit range")


def _headers(
    data: Any, pos: int, end: int, where: str
) -> tuple[list[tuple[str, bytes | None]], int]:
    n, pos = _varint_slow(data, pos)
    if n < 0 or n > end - pos:
        raise DecodeError(f"{where}: header count {n} is impossible")
    headers = []
    for _ in range(n):
        klen, pos = _varint_slow(data, pos)
        if klen < 0 or pos + klen > end:
            raise DecodeError(f"{where}: header key of {klen} bytes runs past the record")
        key = bytes(data[pos : pos + klen]).decode("utf-8", "replace")
        pos += klen
        vlen, pos = _varint_slow(data, pos)
        if vlen >= 0:
            if pos + vlen > end:
                raise DecodeError(f"{where}: header value of {vlen} bytes runs past the record")
            value: bytes | None = bytes(data[pos : pos + vlen])
            pos += vlen
        else:
            value = None
        headers.append((key, value))
    return headers, pos


def _legacy_message(data: Any, pos: int, end: int, where: str) -> tuple[LegacyMessage, int]:
    """The magic 0/1 message at ``pos``, and the position after it."""
    if end - pos < LOG_OVERHEAD + 14:
        raise DecodeError(f"{where}: message header cut short at byte {pos}")
    offset, size, crc, magic, attrs = _LEGACY.unpack_from(data, pos)
    if magic not in (0, 1) or size < LEGACY_MIN_LENGTH[magic] or pos + 12 + size > end:
        raise DecodeError(f"{where}: inner message at byte {pos} is malformed")
    nxt = pos + 12 + size
    valid = (zlib.crc32(data[pos + 16 : nxt]) & 0xFFFFFFFF) == crc
    p = pos + 18
    ts = -1
    if magic == 1:
        (ts,) = _I64.unpack_from(data, p)
        p += 8
    (klen,) = _I32.unpack_from(data, p)
    p += 4
    kpos = p
    if klen > 0:
        p += klen
    if p + 4 > nxt:
        raise DecodeError(f"{where}: key of message at byte {pos} runs past it")
    (vlen,) = _I32.unpack_from(data, p)
    p += 4
    vpos = p
    if vlen > 0:
        p += vlen
    if p != nxt:
        raise DecodeError(f"{where}: message at byte {pos} has {nxt - p} bytes unaccounted for")
    return LegacyMessage(offset, magic, attrs, crc, valid, ts, kpos, klen, vpos, vlen), nxt


def v2_payload(buf: Any, batch: Batch, limit: int = MAX_DECOMPRESSED) -> bytes:
    """The records section of a magic-2 batch, decompressed to at most ``limit`` bytes;
    DecodeError when it does not."""
    start = batch.position + V2_HEADER
    end = batch.position + batch.size
    if batch.codec_id:
        try:
            return decompress(batch.codec_id, buf[start:end], limit)
        except CodecError as exc:
            raise DecodeError(
                f"batch at byte {batch.position}: payload does not decompress ({exc})"
            ) from None
    return bytes(buf[start:end])


def decode_records(
    buf: Any, batch: Batch, limit: int = MAX_DECOMPRESSED
) -> tuple[Any, list[RecordRow]]:
    """Open ``batch``: (data, records) where the records are :data:`RecordRow` tuples whose
    positions index ``data``: the fields :data:`REC_OFFSET` to :data:`REC_ATTRIBUTES` for
    magic 2; for magic 0/1 also :data:`REC_CRC` and :data:`REC_IS_VALID` (no headers, sequence
    -1).
    Raises :class:`DecodeError` (with CodecError as a subclass of ValueError) on bad content,
    and on a payload that decompresses to more than ``limit`` bytes."""
    where = f"batch at byte {batch.position}"
    start, end = batch.position, batch.position + batch.size
    if batch.magic == 2:
        if batch.count is None or batch.count < 0:
            raise DecodeError(f"{where}: negative record count")
        data = v2_payload(buf, batch, limit)
        try:
            rows = _v2_records(
                data,
                batch.base_offset,
                batch.first_timestamp or 0,
                batch.count,
                batch.base_sequence if batch.base_sequence is not None else -1,
                where,
            )
        except IndexError:
            raise DecodeError(f"{where}: records run past the end of the batch") from None
        return data, rows
    data = bytes(buf[start:end])
    (wrapper, _) = _legacy_message(data, 0, len(data), where)
    attrs = wrapper.attributes
    codec = attrs & COMPRESSION_MASK
    if not codec:
        return data, [_legacy_row(wrapper, wrapper.offset, wrapper.timestamp)]
    if wrapper.value_len < 0:
        raise DecodeError(f"{where}: compressed wrapper message has no value")
    vpos = wrapper.value_pos
    try:
        inner = decompress(codec, data[vpos : vpos + wrapper.value_len], limit)
    except CodecError as exc:
        raise DecodeError(f"{where}: payload does not decompress ({exc})") from None
    msgs = []
    p, n = 0, len(inner)
    while p < n:
        m, p = _legacy_message(inner, p, n, where)
        if m.attributes & COMPRESSION_MASK:
            raise DecodeError(f"{where}: compressed message nested in a compressed message")
        msgs.append(m)
    if not msgs:
        raise DecodeError(f"{where}: compressed wrapper holds no messages")
    rows = []
    last_rel = msgs[-1].offset
    log_append = bool(attrs & TIMESTAMP_TYPE_BIT)
    for m in msgs:
        # Magic 1: inner offsets are relative, the wrapper's offset is the last one's absolute.
        absolute = wrapper.offset - last_rel + m.offset if wrapper.magic == 1 else m.offset
        stamp = wrapper.timestamp if (m.magic == 1 and log_append) else m.timestamp
        rows.append(_legacy_row(m, absolute, stamp))
    _check_range(rows, where)
    return inner, rows


def _legacy_row(m: LegacyMessage, offset: int, timestamp: int) -> RecordRow:
    """The :data:`RecordRow` of the magic 0/1 message ``m`` (its offset and timestamp as the
    wrapper around it decides)."""
    return (  # REC_OFFSET .. REC_IS_VALID, in that order
        offset,
        timestamp,
        m.key_pos,
        m.key_len,
        m.value_pos,
        m.value_len,
        [],
        -1,
        m.attributes,
        m.crc,
        m.is_valid,
    )


def records(buf: Any, batch: Batch) -> list[Record]:
    """The records of ``batch`` as objects (keys and values copied)."""
    data, rows = decode_records(buf, batch)
    out = []
    legacy = batch.magic != 2  # decode_records' rows carry REC_CRC and REC_IS_VALID
    for row in rows:
        kp, kl = row[REC_KEY_POS], row[REC_KEY_LEN]
        vp, vl = row[REC_VALUE_POS], row[REC_VALUE_LEN]
        out.append(
            Record(
                offset=row[REC_OFFSET],
                timestamp=row[REC_TIMESTAMP],
                key=None if kl < 0 else bytes(data[kp : kp + kl]),
                value=None if vl < 0 else bytes(data[vp : vp + vl]),
                headers=row[REC_HEADERS],
                sequence=row[REC_SEQUENCE],
                attributes=row[REC_ATTRIBUTES],
                crc=row[REC_CRC] if legacy else None,
                is_valid=row[REC_IS_VALID] if legacy else None,
            )
        )
    return out


def control_record(key: bytes | None, value: bytes | None) -> dict[str, Any]:
    """A control record's meaning: ``{"type": "COMMIT", "coordinator_epoch": 5}``, or the
    decoded KRaft control message (LeaderChange, SnapshotHeader/Footer, KRaftVersion, Voters)."""
    from kctl.logfmt.wire import decode_message

    if key is None or len(key) < 4:
        raise DecodeError("control record key is shorter than 4 bytes")
    _version, type_id = _H2.unpack_from(key, 0)
    name = CONTROL_TYPES.get(type_id, f"UNKNOWN({type_id})")
    out: dict[str, Any] = {"type": name}
    if type_id in (0, 1):
        if value is None or len(value) < 6:
            raise DecodeError("end transaction marker value is shorter than 6 bytes")
        version, epoch = _HI.unpack_from(value, 0)
        out.update(version=version, coordinator_epoch=epoch)
    elif type_id in _CONTROL_SCHEMAS and value is not None:
        out["data"] = decode_message(_CONTROL_SCHEMAS[type_id], value, 0, exact=False)
    return out
