"""``kctl produce``'s options, checked before anything is sent: the names it accepts, the
combinations it refuses and the escapes its texts may carry. Pure: no client library, no
broker; every refusal is a :class:`~kctl.errors.UsageError` (exit 2)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

from kctl.errors import UsageError
from kctl.produce.lines import MAX_LINE_BYTES, MAX_LINE_LIMIT, Record

if TYPE_CHECKING:
    from kctl.produce.typed import TypedInput

PARTITIONERS = ("murmur2_random", "consistent_random", "random", "murmur2", "consistent")
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
ACKS = ("0", "1", "all", "-1")
FORMATS = ("lines", "jsonl")
# The integer options' ranges, librdkafka's for the property each sets (an out-of-range value
# there is refused only when the producer is built, and a value past int32 wraps: 2^63 was
# reported as -1); --partition is an int32.
RANGES: dict[str, tuple[int, int, str | None]] = {
    "--partition": (0, 2**31 - 1, None),
    "--linger-ms": (0, 900_000, "linger.ms"),
    "--batch-size": (1, 2**31 - 1, "batch.size"),
}


@dataclass(frozen=True)
class ProduceOptions:
    """What the sender (:func:`kctl.broker.produce.run`) is told: the topic, the producer's
    settings and how input lines are split."""

    topic: str
    partition: int | None = None
    partitioner: str = "murmur2_random"
    headers: list[tuple[str, bytes]] = field(default_factory=list)
    compression: str = "none"
    acks: str = "all"
    idempotence: bool = True
    linger_ms: int | None = None
    batch_size: int | None = None
    rate: float | None = None
    transactional_id: str | None = None
    key_separator: bytes | None = None
    null_marker: bytes | None = None
    jsonl: bool = False
    # Delivery reports for acknowledged records too (their partition and offset, for the
    # summary's per-partition rows); False: librdkafka reports failures only (much less
    # Python per record), and the totals stay exact (delivered = handed over - failed - unknown).
    offsets: bool = True
    # The longest input line read (--max-line-bytes; docs/limits.md).
    max_line_bytes: int = MAX_LINE_BYTES
    # --value-format/--key-format avro|protobuf|json-schema: the encoders of the typed sides
    # (kctl.produce.typed), or None: bytes as read.
    typed: TypedInput | None = None


@dataclass(frozen=True)
class Options(ProduceOptions):
    """What to send and how, checked: the sender's :class:`ProduceOptions` (:meth:`sending`),
    the input files (none: stdin) and ``single``, the one record of ``--key``/``--value``."""

    files: tuple[str, ...] = ()
    single: Record | None = None

    def sending(self) -> ProduceOptions:
        """The sender's part of these options."""
        return ProduceOptions(**{f.name: getattr(self, f.name) for f in fields(ProduceOptions)})


def unescape(text: str | None, option: str = "value") -> bytes | None:
    """Option text with \\t, \\n and \\\\ escapes (a tab is hard to type in a shell)."""
    if text is None:
        return None
    if "\\" not in text:
        return text.encode()
    try:
        return text.encode().decode("unicode_escape").encode("latin-1")
    except (UnicodeDecodeError, UnicodeEncodeError) as exc:
        raise UsageError(
            f"malformed escape in {option} {text!r}", f"{exc.reason}; write a backslash as \\\\"
        ) from None


def check(
    topic: str,
    *,
    files: list[str] | tuple[str, ...] = (),
    input_format: str = "lines",
    key_separator: str | None = None,
    null_marker: str | None = None,
    key: str | None = None,
    value: str | None = None,
    partition: int | None = None,
    partitioner: str = "murmur2_random",
    header: list[str] | tuple[str, ...] = (),
    compression: str = "none",
    acks: str = "all",
    idempotence: bool | None = None,
    linger_ms: int | None = None,
    batch_size: int | None = None,
    rate: float | None = None,
    transactional_id: str | None = None,
    offsets: bool = True,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Options:
    """The options as given on the command line, checked: the first wrong one is the error.
    ``--acks -1`` becomes ``all``; idempotence defaults to on with ``--acks all`` only.
    ``header`` holds the ``--header`` texts, ``key=value`` each."""
    if input_format not in FORMATS:
        raise UsageError(f"unknown --format {input_format!r}", "expected lines or jsonl")
    if partitioner not in PARTITIONERS:
        raise UsageError(f"unknown --partitioner {partitioner!r}", "|".join(PARTITIONERS[:3]))
    if compression not in CODECS:
        raise UsageError(f"unknown --compression {compression!r}", "|".join(CODECS))
    if acks not in ACKS:
        raise UsageError(f"unknown --acks {acks!r}", "expected 0, 1 or all")
    acks = "all" if acks == "-1" else acks
    single = key is not None or value is not None
    jsonl = input_format == "jsonl"
    if single and files:
        raise UsageError("--key/--value send one record and cannot be combined with --file")
    if single and jsonl:
        raise UsageError("--key/--value cannot be combined with --format jsonl")
    if jsonl and (key_separator is not None or null_marker is not None):
        raise UsageError("--key-separator and --null-marker apply to --format lines only")
    if idempotence and acks != "all":
        raise UsageError("--idempotence needs --acks all", f"--acks {acks} was given")
    if transactional_id and acks != "all":
        raise UsageError("--transactional-id needs --acks all", f"--acks {acks} was given")
    if rate is not None and rate <= 0:
        raise UsageError("--rate must be above 0")
    if partition is not None and partition < 0:
        raise UsageError("--partition must be >= 0")
    for option, number in (
        ("--partition", partition),
        ("--linger-ms", linger_ms),
        ("--batch-size", batch_size),
    ):
        in_range(option, number)
    if not 1 <= max_line_bytes <= MAX_LINE_LIMIT:
        raise UsageError(
            f"--max-line-bytes {max_line_bytes} is out of range", f"1..{MAX_LINE_LIMIT}"
        )
    if key_separator == "":
        raise UsageError("--key-separator must not be empty")
    pairs = headers(header)
    separator = unescape(key_separator, "--key-separator")
    marker = unescape(null_marker, "--null-marker")
    record: Record | None = None
    if single:
        record = (unescape(value, "--value"), unescape(key, "--key"), None, None, None)
    return Options(
        topic=topic,
        partition=partition,
        partitioner=partitioner,
        headers=pairs,
        compression=compression,
        acks=acks,
        idempotence=(acks == "all") if idempotence is None else idempotence,
        linger_ms=linger_ms,
        batch_size=batch_size,
        rate=rate,
        transactional_id=transactional_id,
        key_separator=separator,
        null_marker=marker,
        jsonl=jsonl,
        offsets=offsets,
        max_line_bytes=max_line_bytes,
        files=tuple(files),
        single=record,
    )


def in_range(option: str, value: int | None) -> None:
    """A usage error naming ``option`` and its range (:data:`RANGES`) when ``value`` is
    outside it; None (not given) passes."""
    if value is None:
        return
    lo, hi, prop = RANGES[option]
    if not lo <= value <= hi:
        why = f"{lo}..{hi}" + (f", librdkafka's {prop}" if prop else "")
        raise UsageError(f"{option} {value} is out of range", why)


def headers(items: list[str] | tuple[str, ...]) -> list[tuple[str, bytes]]:
    """The ``--header key=value`` texts as pairs, in order (a key may repeat; a value may be
    empty)."""
    from kctl.parsing import key_value

    return [(key, value.encode()) for key, value in (key_value(i, "--header") for i in items)]
