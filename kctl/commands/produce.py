"""kctl produce: write records from stdin, files or the command line (kafka-console-producer.sh,
kcat -P)."""

from __future__ import annotations

import sys
from typing import IO, Any

import typer

from kctl.commands._common import connection, environment, example, note, one_name
from kctl.commands._complete import topic_names
from kctl.errors import EXIT_INTERRUPTED
from kctl.parsing import bounded

EPILOG = example(
    "echo hello | kctl produce orders",
    "kctl produce orders --key-separator $'\\t' --file records.tsv --compression zstd",
    "kctl produce orders --format jsonl < records.jsonl",
    "kctl produce orders --key id-7 --value '{\"n\": 7}' --header source=cli",
    "kctl produce orders --transactional-id loader-1 --file batch.txt",
    "kctl produce orders --file bulk.txt --no-offsets   # bulk load: totals only, faster",
)

PARTITIONERS = ("murmur2_random", "consistent_random", "random", "murmur2", "consistent")
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
ACKS = ("0", "1", "all", "-1")


def _escape(text: str | None, option: str = "value") -> bytes | None:
    """Option text with \\t, \\n and \\\\ escapes (a tab is hard to type in a shell)."""
    from kctl.errors import UsageError

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


def _headers(items: list[str]) -> list[tuple[str, bytes]]:
    from kctl.errors import UsageError

    out = []
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise UsageError(f"malformed --header {item!r}", "expected key=value")
        out.append((key, value.encode()))
    return out


class _Bar:
    """A progress bar on stderr for file input, only when stderr is a terminal."""

    def __init__(self, total: int) -> None:
        from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn

        self.progress = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            transient=True,
            console=__import__("rich.console").console.Console(file=sys.stderr),
        )
        self.task = self.progress.add_task("producing", total=total)
        self.progress.start()

    def __call__(self, n: int) -> None:
        self.progress.advance(self.task, n)

    def stop(self) -> None:
        self.progress.stop()


def produce(
    ctx: typer.Context,
    topic: str | None = typer.Argument(
        None, help="Topic to write to (or --topic).", autocompletion=topic_names
    ),
    topic_option: str | None = typer.Option(
        None,
        "--topic",
        help="The topic, as kafka-console-producer.sh takes it.",
        autocompletion=topic_names,
    ),
    file: list[str] = typer.Option(
        [], "--file", "-f", help="Read records from FILE (repeatable; default: stdin)."
    ),
    input_format: str = typer.Option(
        "lines",
        "--format",
        help="lines: one record per line; jsonl: {key, value, headers, partition, timestamp}.",
    ),
    key_separator: str | None = typer.Option(
        None, "--key-separator", "-K", help="Split each line into KEY<sep>VALUE (\\t accepted)."
    ),
    null_marker: str | None = typer.Option(
        None, "--null-marker", help="A key or value equal to this is sent as null."
    ),
    key: str | None = typer.Option(None, "--key", "-k", help="Key of a single record."),
    value: str | None = typer.Option(None, "--value", "-v", help="Value of a single record."),
    partition: int | None = typer.Option(None, "--partition", help="Write to this partition."),
    partitioner: str = typer.Option(
        "murmur2_random",
        "--partitioner",
        help="murmur2_random (as the Java client), consistent_random or random.",
    ),
    header: list[str] = typer.Option([], "--header", "-H", help="Header key=value (repeatable)."),
    compression: str = typer.Option(
        "none", "--compression", "-z", "--compression-codec", help="|".join(CODECS)
    ),
    acks: str = typer.Option(
        "all", "--acks", "--request-required-acks", help="0, 1 or all (-1 = all)."
    ),
    idempotence: bool | None = typer.Option(
        None,
        "--idempotence/--no-idempotence",
        help="Idempotent producer (default: on, unless --acks is 0 or 1).",
    ),
    linger_ms: int | None = typer.Option(
        None, "--linger-ms", help="Batching delay (ms; default 50, flushed at end of input)."
    ),
    batch_size: int | None = typer.Option(None, "--batch-size", help="Max batch size (bytes)."),
    rate: float | None = typer.Option(
        None,
        "--rate",
        help="At most N records per second (0.01..10^9).",
        callback=bounded("--rate", 0.01, 1e9),
    ),
    transactional_id: str | None = typer.Option(
        None, "--transactional-id", help="Send all input in one transaction (aborted on error)."
    ),
    offsets: bool = typer.Option(
        True,
        "--offsets/--no-offsets",
        help="Report each acknowledged record's partition and offset (the summary's delivered "
        "count and first/last offset per partition). --no-offsets: the client reports only "
        "failures, about a quarter faster on small records; totals stay exact.",
    ),
) -> None:
    """Produce records from stdin, files or --key/--value.

    One record per input line, JSON lines, or one from --key/--value.
    Everything handed to the client is flushed, even on Ctrl-C (a second Ctrl-C, or one during
    the final flush, gives up at once); a summary goes to stderr (and stdout with -o json):
    delivered, failed (not on the broker) and unknown (may be on the broker). Exit 1 if any
    record failed or is unknown, or delivery stalled for --timeout seconds; 130 if
    interrupted."""
    from kctl.broker.produce import ProduceOptions
    from kctl.broker.produce import produce as run
    from kctl.errors import UsageError

    topic = one_name(topic, topic_option, "topic")
    if input_format not in ("lines", "jsonl"):
        raise UsageError(f"unknown --format {input_format!r}", "expected lines or jsonl")
    if partitioner not in PARTITIONERS:
        raise UsageError(f"unknown --partitioner {partitioner!r}", "|".join(PARTITIONERS[:3]))
    if compression not in CODECS:
        raise UsageError(f"unknown --compression {compression!r}", "|".join(CODECS))
    if acks not in ACKS:
        raise UsageError(f"unknown --acks {acks!r}", "expected 0, 1 or all")
    acks = "all" if acks == "-1" else acks
    single = key is not None or value is not None
    if single and file:
        raise UsageError("--key/--value send one record and cannot be combined with --file")
    if single and input_format == "jsonl":
        raise UsageError("--key/--value cannot be combined with --format jsonl")
    if input_format == "jsonl" and (key_separator is not None or null_marker is not None):
        raise UsageError("--key-separator and --null-marker apply to --format lines only")
    if idempotence and acks != "all":
        raise UsageError("--idempotence needs --acks all", f"--acks {acks} was given")
    if transactional_id and acks != "all":
        raise UsageError("--transactional-id needs --acks all", f"--acks {acks} was given")
    if rate is not None and rate <= 0:
        raise UsageError("--rate must be above 0")
    if partition is not None and partition < 0:
        raise UsageError("--partition must be >= 0")
    if key_separator == "":
        raise UsageError("--key-separator must not be empty")
    opts = ProduceOptions(
        topic=topic,
        partition=partition,
        partitioner=partitioner,
        headers=_headers(header),
        compression=compression,
        acks=acks,
        idempotence=(acks == "all") if idempotence is None else idempotence,
        linger_ms=linger_ms,
        batch_size=batch_size,
        rate=rate,
        transactional_id=transactional_id,
        key_separator=_escape(key_separator, "--key-separator"),
        null_marker=_escape(null_marker, "--null-marker"),
        jsonl=input_format == "jsonl",
        offsets=offsets,
    )
    from kctl.runtime.heap import keep_heap

    keep_heap()
    conn = connection(ctx)
    streams: list[tuple[str, IO[bytes]]] = []
    bar: Any = None
    try:
        if not single:
            for name in file:
                try:
                    streams.append((name, open(name, "rb")))  # noqa: SIM115 - closed below
                except OSError as exc:
                    from kctl.errors import KctlError

                    raise KctlError(f"cannot read {name}", exc.strerror or str(exc)) from None
            if not file:
                streams.append(("-", sys.stdin.buffer))
            elif sys.stderr.isatty():
                import os

                bar = _Bar(sum(os.fstat(s.fileno()).st_size for _, s in streams))
        record = (_escape(value, "--value"), _escape(key, "--key"), None, None, None)

        def waiting(count: int) -> None:
            if bar is not None:
                bar.stop()
            note(
                f"waiting for {count} record(s) to be acknowledged (giving up after "
                f"{conn.timeout:g}s without progress; Ctrl-C gives up now)"
            )

        summary = run(
            conn,
            opts,
            streams,
            single=record if single else None,
            progress=bar,
            waiting=waiting,
        )
    finally:
        if bar is not None:
            bar.stop()
        for name, stream in streams:
            if name != "-":
                stream.close()
    mb = summary.bytes / 1e6
    line = (
        f"delivered {summary.delivered}, failed {summary.failed}, unknown {summary.unknown}, "
        f"{mb:.2f} MB, {summary.rate:,.0f} records/s"
    )
    rows = summary.partition_rows()
    if len(rows) == 1 and rows[0]["first_offset"] is not None and not summary.aborted:
        row = rows[0]
        first, last = row["first_offset"], row["last_offset"]
        span = f"offset {first}" if first == last else f"offsets {first}..{last}"
        line += f", partition {row['partition']} {span}"
    if summary.throttled_responses:
        line += (
            f", throttled by the broker {summary.throttle_seconds:.1f} s "
            f"({summary.throttled_responses} answers: a quota)"
        )
    if summary.aborted:
        line += ", transaction aborted"
    elif transactional_id:
        line += ", transaction committed"
    if summary.abandoned:
        line += " (interrupted: gave up waiting for the broker)"
    elif summary.interrupted:
        line += " (interrupted: input not read to the end)"
    elif summary.stalled:
        line += f" (gave up: nothing delivered for {conn.timeout:g}s)"
    output = environment(ctx).output
    if output in ("json", "jsonl"):
        from kctl.formatters import to_json

        doc = summary.doc(topic, bool(transactional_id))
        sys.stdout.write(to_json(doc, indent=output == "json") + "\n")
        sys.stdout.flush()
    note(line)
    if summary.error is not None:  # bad input stopped reading; what came before was flushed
        raise summary.error
    if summary.interrupted:
        raise typer.Exit(EXIT_INTERRUPTED)
    if summary.failed or summary.unknown or summary.aborted or summary.stalled:
        from kctl.errors import KctlError

        if summary.aborted or summary.failed:
            what = f"{summary.failed} record(s) not delivered to {topic!r}"
            if summary.unknown:
                what += f", {summary.unknown} unconfirmed"
        elif summary.unknown:
            what = (
                f"{summary.unknown} record(s) unconfirmed by {topic!r} "
                "(they may or may not be on the broker)"
            )
        else:
            what = f"delivery to {topic!r} stalled: input not read to the end"
        raise KctlError(what, summary.first_error)
