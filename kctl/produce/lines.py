"""Reading the records to produce (kafka-console-producer.sh's input): large chunks of a stream,
complete lines split in C, ``--format jsonl`` lines, and ``--rate`` slices. Pure: no client
library, no broker.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

from kctl.errors import UsageError

CHUNK = 1 << 20
# The longest input line kctl buffers (--max-line-bytes): a line never ends on /dev/zero.
# 1 MiB, the size of one read: a chunk then never holds a whole line over the cap between two
# of its newlines, so the check looks at a chunk's ends only.
MAX_LINE_BYTES = 1 << 20
MAX_LINE_LIMIT = 1 << 30  # the largest --max-line-bytes accepted

# A record to send: (value, key, headers, partition, timestamp); None means "not given".
Record = tuple[bytes | None, bytes | None, list[tuple[str, bytes]] | None, int | None, int | None]


def read_chunks(
    stream: IO[bytes],
    progress: Callable[[int], None] | None,
    max_line: int | None = None,
    name: str = "-",
) -> Iterator[bytes]:
    """Large chunks of a binary stream; ``progress`` gets the byte count of each chunk.

    With ``max_line``, no line (its newline not counted) may be longer: the complete lines
    before a longer one are still yielded, then a UsageError names the line's number in
    ``name`` (``-``: standard input). So what follows never buffers more than ``max_line``
    bytes of one line, whichever loop (Python or C) splits the chunks."""
    read = getattr(stream, "read1", stream.read)
    run = 0  # bytes of the line not yet ended at the end of the last chunk
    line = 1  # that line's number
    while True:
        chunk = read(CHUNK)
        if not chunk:
            return
        if progress is not None:
            progress(len(chunk))
        if max_line is not None:
            bad = long_line(chunk, run, max_line)
            if bad is not None:
                start, newlines = bad
                if start:
                    yield chunk[:start]  # the complete lines before it
                shown = "standard input" if name == "-" else name
                raise UsageError(
                    f"line {line + newlines} of {shown} is longer than {max_line} bytes",
                    "--max-line-bytes",
                )
            last = chunk.rfind(b"\n")
            if last < 0:
                run += len(chunk)
            else:
                line += chunk.count(b"\n")
                run = len(chunk) - last - 1
        yield chunk


def long_line(chunk: bytes, run: int, cap: int) -> tuple[int, int] | None:
    """The first line longer than ``cap`` bytes that ``chunk`` shows, ``run`` bytes of its
    first line having come before it: (where that line starts in the chunk, 0 when before it;
    the newlines before that start), or None."""
    first = chunk.find(b"\n")
    if first < 0:
        return (0, 0) if run + len(chunk) > cap else None
    if run + first > cap:
        return 0, 0
    last = chunk.rfind(b"\n")
    if last - first - 1 > cap:  # a line between the first and last newline may be too long
        pos, n = first + 1, 1
        while pos <= last:
            nl = chunk.find(b"\n", pos)
            if nl - pos > cap:
                return pos, n
            pos, n = nl + 1, n + 1
    if len(chunk) - last - 1 > cap:  # the unfinished last line, already too long
        return last + 1, chunk.count(b"\n")
    return None


def split_lines(chunks: Iterable[bytes]) -> Iterator[tuple[list[bytes], int]]:
    """Lists of complete lines (without the newline) from chunks of bytes, each with the sum of
    its lines' lengths (known from the chunk's length, without a pass over the lines)."""
    tail = b""
    for chunk in chunks:
        if tail:
            chunk = tail + chunk
        lines = chunk.split(b"\n")
        tail = lines.pop()
        if lines:
            yield lines, len(chunk) - len(tail) - len(lines)
    if tail:
        yield [tail], len(tail)


def decode_field(value: Any, encoding: str | None, what: str, line: int) -> bytes | None:
    """A JSON input field as bytes: string (UTF-8), base64, hex; non-strings become JSON."""
    if value is None:
        return None
    if not isinstance(value, str):
        import orjson

        return orjson.dumps(value)
    if encoding in (None, "string", "utf-8", "utf8", "json"):
        return value.encode()
    try:
        if encoding == "base64":
            return base64.b64decode(value, validate=True)
        if encoding == "hex":
            return bytes.fromhex(value)
    except (binascii.Error, ValueError):
        raise UsageError(f"malformed JSON line {line}", f"{what} is not valid {encoding}") from None
    raise UsageError(
        f"malformed JSON line {line}", f"unknown encoding {encoding!r} (string|base64|hex)"
    )


def parse_json_record(text: bytes, line: int) -> Record:
    """One ``--format jsonl`` line: {"key", "value", "headers", "partition", "timestamp"} with
    optional "encoding" (or "key_encoding"/"value_encoding"): string, base64 or hex."""
    import orjson

    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"malformed JSON line {line}", str(exc)) from None
    if not isinstance(doc, dict):
        raise UsageError(f"malformed JSON line {line}", "expected a JSON object")
    return json_doc_record(doc, line)


def json_doc_record(doc: dict[str, Any], line: int) -> Record:
    """:func:`parse_json_record` of a line already parsed into an object."""
    enc = doc.get("encoding")
    value = decode_field(doc.get("value"), doc.get("value_encoding", enc), "value", line)
    key = decode_field(doc.get("key"), doc.get("key_encoding", enc), "key", line)
    headers: list[tuple[str, bytes]] | None = None
    raw = doc.get("headers")
    if raw:
        pairs = raw.items() if isinstance(raw, dict) else raw
        try:
            headers = [
                (str(k), decode_field(v, doc.get("headers_encoding"), "header", line) or b"")
                for k, v in pairs
            ]
        except (TypeError, ValueError):
            raise UsageError(
                f"malformed JSON line {line}", "headers must be an object or [[key, value], ...]"
            ) from None
    partition, ts = doc.get("partition"), doc.get("timestamp")
    for name, v in (("partition", partition), ("timestamp", ts)):
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise UsageError(f"malformed JSON line {line}", f"{name} must be an integer >= 0")
    return value, key, headers, partition, ts


def rate_limited_lines(lines: list[bytes], rate: float | None) -> list[list[bytes]]:
    """With --rate, hand lines over in slices of about 1/20 s worth, so pacing is smooth."""
    if not rate:
        return [lines]
    step = max(1, int(rate / 20))
    return [lines[i : i + step] for i in range(0, len(lines), step)]
