"""A fast path for the commonest deep dump: the record metadata of one magic-2 batch straight to
JSON text (``-o jsonl``) or to DumpLogSegments' record lines (text), with no per-record tuple,
dict or object.

Pure: payload bytes in, text out. It handles records whose varints are one to three bytes long
(offset and timestamp deltas below 2^20: batches of up to a million records spanning up to 17
minutes, as librdkafka's 1 MB batches of small records need) and that carry no headers (what
producers write for ordinary topics); for anything else, and for any
malformed record, it returns ``None`` and the caller takes the general path
(:func:`kctl.logfmt.batch.decode_records`), which reports problems precisely. The text is exactly
what ``orjson`` makes of the general path's record dicts. kctl._native has the same function in
C (:mod:`kctl.runtime.native`); :func:`py_records_json` stays the reference.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kctl.runtime import native

# Zigzag varints of one byte (b < 0x80) and of two bytes (index: first | second << 8).
_ZZ1 = [(b >> 1) ^ -(b & 1) for b in range(128)]
_ZZ2 = [0] * 32768
for _lo in range(128, 256):
    for _hi in range(128):
        _raw = (_lo & 0x7F) | (_hi << 7)
        _ZZ2[_lo | (_hi << 8)] = (_raw >> 1) ^ -(_raw & 1)
del _lo, _hi, _raw


class _Declined(Exception):
    """A varint longer than the fast path reads."""


def _zz3(data: bytes, pos: int) -> int:
    """The zigzag varint of three bytes at ``pos`` (the rarer case, so not inlined as the one-
    and two-byte cases are: a call per varint would slow every record)."""
    b3 = data[pos + 2]
    if b3 >= 0x80:
        raise _Declined
    raw = (data[pos] & 0x7F) | ((data[pos + 1] & 0x7F) << 7) | (b3 << 14)
    return (raw >> 1) ^ -(raw & 1)


_LO, _HI = -(1 << 63) + (1 << 32), (1 << 63) - (1 << 32)

_REC = '{"offset":%d,"timestamp":%d,%s},'
_REC_SEQ = '{"offset":%d,"timestamp":%d,%s,"sequence":%d,"header_keys":[]},'
_templates: dict[tuple[int, bool], str] = {}
_tails: dict[int, str] = {}
_sizes: dict[int, str] = {}


_TEXT_REC = "| offset: %d {ts}: %d%s\n"
_TEXT_REC_SEQ = "| offset: %d {ts}: %d%s sequence: %d headerKeys: []\n"
_text_templates: dict[tuple[int, bool, str], str] = {}
_text_tails: dict[int, str] = {}
_text_sizes: dict[int, str] = {}


def records_text(
    data: bytes, base_offset: int, first_ts: int, count: int, base_seq: int, ts_type: str
) -> tuple[str, Sequence[int]] | None:
    """(DumpLogSegments' record lines of a magic-2 batch, each ending in a newline —
    ``| offset: N CreateTime: T keySize: K valueSize: V sequence: S headerKeys: []`` — their
    absolute offsets), or None when the fast path does not apply. ``ts_type`` is the batch's
    timestamp type as Kafka names it (the caller keeps LogAppendTime batches, whose records
    show the batch's timestamp, on the general path)."""
    return records_json(data, base_offset, first_ts, count, base_seq, text=ts_type)


def py_records_json(
    data: bytes,
    base_offset: int,
    first_ts: int,
    count: int,
    base_seq: int,
    text: str | None = None,
) -> tuple[str, list[int]] | None:
    """(``{...},{...}`` — the records of a magic-2 batch as JSON objects joined by commas, their
    absolute offsets), or None when the fast path does not apply. ``data`` is the (decompressed)
    records section. With ``text`` (a timestamp type name): :func:`records_text`'s lines.
    The pure Python reference of :func:`records_json` (kctl._native's when built)."""
    if count <= 0 or not (_LO < base_offset < _HI and _LO < first_ts < _HI):
        return None  # near the ends of the 64-bit range: the general path checks
    zz1 = _ZZ1
    zz2 = _ZZ2
    flat: list[object] = []
    ext = flat.extend
    seq = base_seq >= 0
    caches = (_sizes, _tails) if text is None else (_text_sizes, _text_tails)
    cache = caches[0] if seq else caches[1]
    pos = 0
    try:
        for _ in range(count):
            b = data[pos]
            if b < 0x80:
                rec_end = pos + 1 + zz1[b]
                pos += 2  # the length and the attributes byte
            else:
                b2 = data[pos + 1]
                if b2 < 0x80:
                    rec_end = pos + 2 + zz2[b | (b2 << 8)]
                    pos += 3
                else:
                    rec_end = pos + 3 + _zz3(data, pos)
                    pos += 4
            b = data[pos]
            if b < 0x80:
                ts_delta = zz1[b]
                pos += 1
            else:
                b2 = data[pos + 1]
                if b2 < 0x80:
                    ts_delta = zz2[b | (b2 << 8)]
                    pos += 2
                else:
                    ts_delta = _zz3(data, pos)
                    pos += 3
            b = data[pos]
            if b < 0x80:
                off_delta = zz1[b]
                pos += 1
            else:
                b2 = data[pos + 1]
                if b2 < 0x80:
                    off_delta = zz2[b | (b2 << 8)]
                    pos += 2
                else:
                    off_delta = _zz3(data, pos)
                    pos += 3
            b = data[pos]
            if b < 0x80:
                key_len = zz1[b]
                pos += 1
            else:
                b2 = data[pos + 1]
                if b2 < 0x80:
                    key_len = zz2[b | (b2 << 8)]
                    pos += 2
                else:
                    key_len = _zz3(data, pos)
                    pos += 3
            if key_len > 0:
                pos += key_len
            b = data[pos]
            if b < 0x80:
                value_len = zz1[b]
                pos += 1
            else:
                b2 = data[pos + 1]
                if b2 < 0x80:
                    value_len = zz2[b | (b2 << 8)]
                    pos += 2
                else:
                    value_len = _zz3(data, pos)
                    pos += 3
            if value_len > 0:
                pos += value_len
            # No headers (a zero count byte) and nothing left over: else the general path.
            if data[pos] or pos + 1 != rec_end or key_len < -1 or value_len < -1:
                return None
            pos = rec_end
            k = (key_len << 32) + value_len
            sizes = cache.get(k)
            if sizes is None:
                if len(cache) > 4096:
                    cache.clear()
                if text is not None:
                    sizes = f" keySize: {key_len} valueSize: {value_len}" + (
                        "" if seq else " sequence: -1 headerKeys: []"
                    )
                else:
                    sizes = (
                        f'"key_size":{key_len},"value_size":{value_len}'
                        if seq
                        else f'"key_size":{key_len},"value_size":{value_len},"sequence":-1,'
                        f'"header_keys":[]'
                    )
                cache[k] = sizes
            if seq:
                ext(
                    (
                        base_offset + off_delta,
                        first_ts + ts_delta,
                        sizes,
                        (base_seq + off_delta) & 0x7FFFFFFF,
                    )
                )
            else:
                ext((base_offset + off_delta, first_ts + ts_delta, sizes))
    except (IndexError, _Declined):
        return None
    if pos != len(data):
        return None
    offsets: list[int] = flat[0 :: 4 if seq else 3]  # type: ignore[assignment]
    if text is not None:
        key = (count, seq, text)
        template = _text_templates.get(key)
        if template is None:
            if len(_text_templates) > 64:
                _text_templates.clear()
            one = (_TEXT_REC_SEQ if seq else _TEXT_REC).replace("{ts}", text)
            template = _text_templates[key] = one * count
        return template % tuple(flat), offsets
    template = _templates.get((count, seq))
    if template is None:
        if len(_templates) > 64:
            _templates.clear()
        template = _templates[(count, seq)] = (_REC_SEQ if seq else _REC) * count
    return (template % tuple(flat))[:-1], offsets


# The C loop when kctl.runtime.native chooses it (the same text 20-30x faster), else the Python
# one.
records_json: Callable[..., tuple[str, Sequence[int]] | None] = (
    native.records_json() or py_records_json
)
