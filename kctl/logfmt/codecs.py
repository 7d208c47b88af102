"""Decompression of batch payloads: gzip, snappy and lz4 through cramjam, zstd through zstandard.

Kafka-specific framing handled here: xerial-framed snappy (the Java client's SnappyOutputStream
blocks) next to raw snappy, and the LZ4 frame whose header checksum byte was computed over the
magic number too (Kafka's magic-0 writers before KIP-57).

Every decompression is bounded: no payload may decompress to more than ``limit`` bytes
(:data:`MAX_DECOMPRESSED`, 256 MiB, unless the caller asks otherwise), and no codec is asked to
reserve memory for a size a header merely claims: snappy's announced length is checked against
the most its format can expand to, gzip/lz4/zstd are read in bounded steps. A payload that
would go past the limit is a :class:`CodecError` (a decompression bomb, or a batch larger than
the limit allows).
"""

from __future__ import annotations

import struct
from typing import Any

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_LZ4_MAGIC = b"\x04\x22\x4d\x18"


MAX_DECOMPRESSED = 256 << 20
# Snappy's densest element is a 3-byte copy of 64 bytes (a 5-byte one at worst is the same):
# no snappy block expands more than ~21.4 times.
_SNAPPY_RATIO = 22
_STEP = 1 << 20


class CodecError(ValueError):
    """The payload does not decompress with its batch's codec."""


def _too_big(limit: int) -> CodecError:
    return CodecError(
        f"decompresses to more than {limit} bytes (the limit; --max-decompressed-bytes raises it)"
    )


def _snappy_raw(block: bytes, limit: int) -> bytes:
    import cramjam

    from kctl.logfmt.wire import DecodeError, read_uvarint

    try:
        size, _ = read_uvarint(block, 0)
    except DecodeError as exc:
        raise CodecError(f"snappy: length prefix: {exc}") from None
    if size > limit:
        raise _too_big(limit)
    if size > _SNAPPY_RATIO * len(block) + 64:
        raise CodecError(
            f"snappy: block of {len(block)} bytes announces {size} bytes, more than snappy can "
            f"expand to"
        )
    return bytes(cramjam.snappy.decompress_raw(block))


def codec_name(codec_id: int) -> str:
    return CODECS[codec_id] if 0 <= codec_id < len(CODECS) else f"unknown({codec_id})"


def _snappy(data: bytes, limit: int) -> bytes:
    if data[:8] == _XERIAL_MAGIC and len(data) >= 16:
        out = []
        total = 0
        pos, end = 16, len(data)
        while pos < end:
            if pos + 4 > end:
                raise CodecError("xerial snappy block length cut short")
            (size,) = struct.unpack_from(">i", data, pos)
            pos += 4
            if size < 0 or pos + size > end:
                raise CodecError(f"xerial snappy block of {size} bytes runs past the payload")
            block = _snappy_raw(data[pos : pos + size], limit - total)
            total += len(block)
            out.append(block)
            pos += size
        return b"".join(out)
    return _snappy_raw(data, limit)


_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M32 = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def xxh32(data: bytes, seed: int = 0) -> int:
    """XXH32 as the LZ4 frame format specifies it (used only to repair a frame header byte)."""
    n = len(data)
    pos = 0
    if n >= 16:
        v = [(seed + _P1 + _P2) & _M32, (seed + _P2) & _M32, seed & _M32, (seed - _P1) & _M32]
        while pos + 16 <= n:
            for i in range(4):
                (lane,) = struct.unpack_from("<I", data, pos + 4 * i)
                v[i] = (_rotl((v[i] + lane * _P2) & _M32, 13) * _P1) & _M32
            pos += 16
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M32
    else:
        h = (seed + _P5) & _M32
    h = (h + n) & _M32
    while pos + 4 <= n:
        (word,) = struct.unpack_from("<I", data, pos)
        h = (_rotl((h + word * _P3) & _M32, 17) * _P4) & _M32
        pos += 4
    while pos < n:
        h = (_rotl((h + data[pos] * _P5) & _M32, 11) * _P1) & _M32
        pos += 1
    h ^= h >> 15
    h = (h * _P2) & _M32
    h ^= h >> 13
    h = (h * _P3) & _M32
    h ^= h >> 16
    return h


def _lz4_fix_header(data: bytes) -> bytes:
    """Rewrite the frame descriptor's checksum byte as the LZ4 spec computes it."""
    if data[:4] != _LZ4_MAGIC or len(data) < 7:
        return data
    flg = data[4]
    desc_end = 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)
    if len(data) <= desc_end:
        return data
    hc = (xxh32(data[4:desc_end]) >> 8) & 0xFF
    return data[:desc_end] + bytes([hc]) + data[desc_end + 1 :]


def _lz4_frames(data: bytes, limit: int) -> bytes:
    """Every LZ4 frame of ``data``, read in bounded steps."""
    import lz4.frame

    out = []
    total = 0
    while data:
        d = lz4.frame.LZ4FrameDecompressor()
        # LZ4 expands at most ~255 times: never reserve more than the input can give
        step = min(_STEP, 256 * len(data) + (1 << 16))
        chunk = d.decompress(data, max_length=min(step, limit + 1 - total))
        while True:
            total += len(chunk)
            out.append(chunk)
            if total > limit:
                raise _too_big(limit)
            if d.eof or d.needs_input:
                break
            chunk = d.decompress(b"", max_length=min(step, limit + 1 - total))
        if not d.eof:
            raise CodecError("the frame is cut short")
        data = d.unused_data
    return b"".join(out)


def _lz4(data: bytes, limit: int) -> bytes:
    try:
        return _lz4_frames(data, limit)
    except CodecError as exc:
        if "more than" in str(exc):
            raise
        first: Exception = exc
    except Exception as exc:
        first = exc
    fixed = _lz4_fix_header(data)
    if fixed == data:
        raise CodecError(f"lz4: {first}") from None
    try:
        return _lz4_frames(fixed, limit)
    except CodecError as exc:
        if "more than" in str(exc):
            raise
    except Exception:
        pass
    raise CodecError(f"lz4: {first}") from None


_ZSTD: Any = None


def _zstd(data: bytes, limit: int) -> bytes:
    """zstd through the zstandard library (about 3-4x faster than cramjam's on batch-sized
    frames). Kafka's producers write frames without a content size; a payload may hold several
    frames. The input goes in steps small enough that no step can expand past the limit (a zstd
    byte expands at most ~32,768 times: a 4-byte RLE block of 128 KiB)."""
    global _ZSTD
    if _ZSTD is None:
        import zstandard

        _ZSTD = zstandard.ZstdDecompressor()
    out = []
    total = 0
    pos, end = 0, len(data)
    while pos < end:
        frame = _ZSTD.decompressobj()
        while True:
            step = max(64, (limit - total) >> 16)
            piece = data[pos : pos + step]
            pos += len(piece)
            chunk = frame.decompress(piece)
            total += len(chunk)
            out.append(chunk)
            if total > limit:
                raise _too_big(limit)
            if frame.eof:
                rest = frame.unused_data
                pos -= len(rest)
                break
            if pos >= end:
                raise CodecError("zstd: the frame is cut short")
    return out[0] if len(out) == 1 else b"".join(out)


def _gzip(data: bytes, limit: int) -> bytes:
    """gzip members (one or more), read in bounded steps."""
    import zlib

    out = []
    total = 0
    while True:
        d = zlib.decompressobj(47)
        # deflate expands at most 1,032 times: never reserve more than the input can give
        step = min(_STEP, 1032 * len(data) + (1 << 16))
        chunk = d.decompress(data, min(step, limit + 1 - total))
        while True:
            total += len(chunk)
            out.append(chunk)
            if total > limit:
                raise _too_big(limit)
            if d.eof or not d.unconsumed_tail:
                break
            chunk = d.decompress(d.unconsumed_tail, min(step, limit + 1 - total))
        if not d.eof:
            tail = d.flush()
            if tail or not d.eof:
                raise CodecError("gzip: the stream is cut short")
        data = d.unused_data
        if not data.strip(b"\x00"):
            return b"".join(out)


def decompress(codec_id: int, payload: Any, limit: int = MAX_DECOMPRESSED) -> bytes:
    """Decompress ``payload`` (bytes-like) with Kafka codec id 1..4 to at most ``limit`` bytes;
    raise CodecError."""
    data = bytes(payload)
    try:
        if codec_id == 1:
            return _gzip(data, limit)
        if codec_id == 2:
            return _snappy(data, limit)
        if codec_id == 3:
            return _lz4(data, limit)
        if codec_id == 4:
            return _zstd(data, limit)
    except CodecError:
        raise
    except Exception as exc:
        raise CodecError(
            f"{codec_name(codec_id)}: {' '.join(str(exc).split()) or type(exc).__name__}"
        ) from None
    raise CodecError(f"unknown compression codec id {codec_id}")
