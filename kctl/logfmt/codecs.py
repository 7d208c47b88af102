"""Decompression of batch payloads: gzip, snappy and lz4 through cramjam, zstd through zstandard.

Kafka-specific framing handled here: xerial-framed snappy (the Java client's SnappyOutputStream
blocks) next to raw snappy, and the LZ4 frame whose header checksum byte was computed over the
magic number too (Kafka's magic-0 writers before KIP-57).
"""

from __future__ import annotations

import struct
from typing import Any

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_LZ4_MAGIC = b"\x04\x22\x4d\x18"


class CodecError(ValueError):
    """The payload does not decompress with its batch's codec."""


def codec_name(codec_id: int) -> str:
    return CODECS[codec_id] if 0 <= codec_id < len(CODECS) else f"unknown({codec_id})"


def _snappy(data: bytes) -> bytes:
    import cramjam

    if data[:8] == _XERIAL_MAGIC and len(data) >= 16:
        out = []
        pos, end = 16, len(data)
        while pos < end:
            if pos + 4 > end:
                raise CodecError("xerial snappy block length cut short")
            (size,) = struct.unpack_from(">i", data, pos)
            pos += 4
            if size < 0 or pos + size > end:
                raise CodecError(f"xerial snappy block of {size} bytes runs past the payload")
            out.append(bytes(cramjam.snappy.decompress_raw(data[pos : pos + size])))
            pos += size
        return b"".join(out)
    return bytes(cramjam.snappy.decompress_raw(data))


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


def _lz4(data: bytes) -> bytes:
    import cramjam

    try:
        return bytes(cramjam.lz4.decompress(data))
    except Exception as first:
        fixed = _lz4_fix_header(data)
        if fixed == data:
            raise CodecError(f"lz4: {first}") from None
        try:
            return bytes(cramjam.lz4.decompress(fixed))
        except Exception:
            raise CodecError(f"lz4: {first}") from None


_ZSTD: Any = None


def _zstd(data: bytes) -> bytes:
    """zstd through the zstandard library: about 3-4x faster than cramjam's on batch-sized
    frames. Kafka's producers write frames without a content size, so each frame goes through
    a streaming decompressor; a payload may hold several frames."""
    global _ZSTD
    if _ZSTD is None:
        import zstandard

        _ZSTD = zstandard.ZstdDecompressor()
    out = []
    while data:
        frame = _ZSTD.decompressobj()
        out.append(frame.decompress(data))
        if not frame.eof:
            raise CodecError("zstd: the frame is cut short")
        data = frame.unused_data
    return out[0] if len(out) == 1 else b"".join(out)


def decompress(codec_id: int, payload: Any) -> bytes:
    """Decompress ``payload`` (bytes-like) with Kafka codec id 1..4; raise CodecError."""
    import cramjam

    data = bytes(payload)
    try:
        if codec_id == 1:
            return bytes(cramjam.gzip.decompress(data))
        if codec_id == 2:
            return _snappy(data)
        if codec_id == 3:
            return _lz4(data)
        if codec_id == 4:
            return _zstd(data)
    except CodecError:
        raise
    except Exception as exc:
        raise CodecError(
            f"{codec_name(codec_id)}: {' '.join(str(exc).split()) or type(exc).__name__}"
        ) from None
    raise CodecError(f"unknown compression codec id {codec_id}")
