"""kctl produce: write records from stdin, files or the command line (kafka-console-producer.sh,
kcat -P)."""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING, Any

import typer

from kctl.commands._common import connection, environment, example, note, one_name, output_view
from kctl.commands._complete import topic_names
from kctl.errors import EXIT_INTERRUPTED
from kctl.formatters import Column, Output, cols, emit
from kctl.produce.lines import MAX_LINE_BYTES
from kctl.produce.options import CODECS

if TYPE_CHECKING:
    from kctl.produce.typed import Side, TypedInput
    from kctl.schemas.model import Reference

EPILOG = example(
    "echo hello | kctl produce orders",
    "kctl produce orders --key-separator $'\\t' --file records.tsv --compression zstd",
    "kctl produce orders --format jsonl < records.jsonl",
    "kctl produce orders --key id-7 --value '{\"n\": 7}' --header source=cli",
    "kctl produce orders --transactional-id loader-1 --file batch.txt",
    "kctl produce orders --file bulk.txt --no-offsets   # bulk load: totals only, faster",
    "kctl produce orders --value-format avro --value-schema order.avsc < orders.jsonl",
    "kctl produce orders --value-format protobuf --value-schema order.proto --as-descriptor "
    "< orders.jsonl",
    "kctl consume orders -o jsonl --value-format avro -e | "
    "kctl produce copy --format jsonl --value-format avro --value-subject orders-value",
)
REGISTRY_HELP = (
    "avro, protobuf or json-schema: each record's {what} is JSON data, written in Confluent's "
    "wire format with a schema of the registry (--{what}-schema or --{what}-subject; "
    "docs/schema-formats.md)."
)

# -o table/plain/csv: the summary document's scalar fields people look at first (json and
# yaml carry every field and the partitions); short titles keep the table within 80 columns.
SUMMARY_COLUMNS = cols(
    "topic",
    "delivered:>",
    "failed:>",
    "unknown:>",
    "seconds:>",
    Column("records_per_second", "RECORDS/S", "right"),
    Column("transaction", "TXN"),
    Column("first_error", "ERROR"),
)


def _typed(ctx: typer.Context, sides: list[Side], topic: str, strategy: str) -> TypedInput:
    """The typed sides' encoders: each schema file read and registered, or each subject looked
    up, once (the registry's answer on stderr)."""
    from dataclasses import replace

    from kctl.commands._common import schema_registry
    from kctl.inputs import SCHEMA, read_input
    from kctl.produce import typed
    from kctl.schemas.model import Schema

    sides = [
        replace(s, schema_text=read_input(s.schema_file, f"--{s.what}-schema", SCHEMA))
        if s.schema_file is not None
        else s
        for s in sides
    ]
    client = schema_registry(ctx)
    sides = [  # "latest" references as the version numbers the registry stores
        replace(s, references=client.resolve(Schema("", "", s.references)).references)
        if s.references
        else s
        for s in sides
    ]
    encoders, resolved = typed.build(client, sides, topic, strategy)
    for got in resolved:
        note(got.line())
    return encoders


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
        [],
        "--file",
        "-f",
        metavar="FILE",
        help="Read records from FILE (repeatable; default: stdin).",
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
        min=0.01,
        max=1e9,
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
    max_line_bytes: int = typer.Option(
        MAX_LINE_BYTES,
        "--max-line-bytes",
        help="Longest input line read (bytes, 1..2^30; default 1 MiB): a longer line stops "
        "reading with an error naming its number; the lines before it are sent.",
    ),
    value_format: str | None = typer.Option(
        None, "--value-format", help=REGISTRY_HELP.format(what="value")
    ),
    value_schema: str | None = typer.Option(
        None,
        "--value-schema",
        metavar="FILE",
        help="Register FILE (.avsc, .proto, .json) under the value's subject (see "
        "--subject-name-strategy) and write with it; the registry's answer goes to stderr.",
    ),
    value_subject: str | None = typer.Option(
        None,
        "--value-subject",
        metavar="SUBJECT",
        help="SUBJECT[:VERSION]: write with this subject's schema (default its latest version; "
        "registers nothing). "
        "With --value-schema: the subject FILE is registered under.",
    ),
    value_message: str | None = typer.Option(
        None,
        "--value-message",
        metavar="NAME",
        help="Protobuf: the message written (full or simple name; default the schema's first).",
    ),
    key_format: str | None = typer.Option(
        None, "--key-format", help=REGISTRY_HELP.format(what="key")
    ),
    key_schema: str | None = typer.Option(
        None, "--key-schema", metavar="FILE", help="As --value-schema, for keys."
    ),
    key_subject: str | None = typer.Option(
        None, "--key-subject", metavar="SUBJECT", help="As --value-subject, for keys."
    ),
    key_message: str | None = typer.Option(
        None, "--key-message", metavar="NAME", help="As --value-message, for keys."
    ),
    value_reference: list[str] = typer.Option(
        [],
        "--value-reference",
        metavar="NAME=SUBJECT:VERSION",
        help="A schema --value-schema imports, registered under SUBJECT (VERSION a number or "
        "latest; repeatable), as kctl schemas register --reference.",
    ),
    key_reference: list[str] = typer.Option(
        [], "--key-reference", metavar="NAME=SUBJECT:VERSION", help="As --value-reference."
    ),
    as_descriptor: bool = typer.Option(
        False,
        "--as-descriptor",
        help="Protobuf: register a --value-schema/--key-schema .proto file as its compiled "
        "FileDescriptorProto in base64 (what confluent-kafka's ProtobufSerializer registers) "
        "instead of its text: the form confluent-kafka's ProtobufDeserializer reads from a "
        "registry that ignores format=serialized (Apicurio 2.6; docs/schemas.md).",
    ),
    subject_name_strategy: str = typer.Option(
        "topic",
        "--subject-name-strategy",
        help="The subject a --value-schema/--key-schema file is registered under: topic "
        "(TOPIC-value, TOPIC-key), record (the record's full name) or topic-record "
        "(TOPIC-NAME), as Confluent's serializers name them.",
    ),
) -> None:
    """Produce records from stdin, files or --key/--value.

    One record per input line, JSON lines, or one from --key/--value.
    Everything handed to the client is flushed, even on Ctrl-C (a second Ctrl-C, or one during
    the final flush, gives up at once); a summary goes to stderr, and with -o to stdout in that
    format: delivered, failed (not on the broker) and unknown (may be on the broker). Exit 1 if
    any record failed or is unknown, or delivery stalled for --timeout seconds; 130 if
    interrupted.

    With --value-format/--key-format (avro, protobuf, json-schema) each line's value/key is
    JSON data (as kctl consume prints it) encoded with a Schema Registry schema; a line that
    is not JSON or does not fit stops reading (the lines before it are sent), exit 2."""
    from kctl.broker.produce import produce as run
    from kctl.produce import options, summary, typed

    def references(items: list[str], option: str) -> tuple[Reference, ...]:
        if not items:
            return ()
        from kctl.schemas.names import parse_reference

        return tuple(parse_reference(item, option) for item in items)

    sides = [
        side
        for side in (
            typed.check_side(
                "value",
                value_format,
                value_schema,
                value_subject,
                value_message,
                references(value_reference, "--value-reference"),
            ),
            typed.check_side(
                "key",
                key_format,
                key_schema,
                key_subject,
                key_message,
                references(key_reference, "--key-reference"),
            ),
        )
        if side is not None
    ]
    if as_descriptor:
        sides = typed.as_descriptors(sides)
    if subject_name_strategy not in typed.STRATEGIES:
        from kctl.errors import UsageError

        raise UsageError(
            f"unknown --subject-name-strategy {subject_name_strategy!r}",
            "|".join(typed.STRATEGIES),
        )

    opts = options.check(
        one_name(topic, topic_option, "topic"),
        files=file,
        input_format=input_format,
        key_separator=key_separator,
        null_marker=null_marker,
        key=key,
        value=value,
        partition=partition,
        partitioner=partitioner,
        header=header,
        compression=compression,
        acks=acks,
        idempotence=idempotence,
        linger_ms=linger_ms,
        batch_size=batch_size,
        rate=rate,
        transactional_id=transactional_id,
        offsets=offsets,
        max_line_bytes=max_line_bytes,
    )

    def encoders() -> TypedInput:
        return _typed(ctx, sides, opts.topic, subject_name_strategy)

    from kctl.runtime.heap import fewer_collections, keep_heap

    keep_heap()
    fewer_collections()
    conn = connection(ctx)
    streams: list[tuple[str, IO[bytes]]] = []
    bar: Any = None
    try:
        if opts.single is None:
            for name in opts.files:
                try:
                    streams.append((name, open(name, "rb")))  # noqa: SIM115 - closed below
                except OSError as exc:
                    from kctl.errors import KctlError

                    raise KctlError(f"cannot read {name}", exc.strerror or str(exc)) from None
            if not opts.files:
                streams.append(("-", sys.stdin.buffer))
            elif sys.stderr.isatty():
                import os

                bar = _Bar(sum(os.fstat(s.fileno()).st_size for _, s in streams))

        def waiting(count: int) -> None:
            if bar is not None:
                bar.stop()
            note(
                f"waiting for {count} record(s) to be acknowledged (giving up after "
                f"{conn.timeout:g}s without progress; Ctrl-C gives up now)"
            )

        result = run(
            conn,
            opts.sending(),
            streams,
            single=opts.single,
            progress=bar,
            waiting=waiting,
            typed=encoders if sides else None,
        )
    finally:
        if bar is not None:
            bar.stop()
        for name, stream in streams:
            if name != "-":
                stream.close()
    transactional = bool(opts.transactional_id)
    # Without -o, stdout stays empty (a pipeline's next command sees no summary); with -o, the
    # summary goes there in that format. The line for people goes to stderr either way.
    if environment(ctx).output is not None:
        doc = summary.document(result, opts.topic, transactional=transactional)
        emit(Output(summary.rows(doc), SUMMARY_COLUMNS, doc=doc), output_view(ctx))
        sys.stdout.flush()
    note(summary.line(result, transactional=transactional, timeout=conn.timeout))
    if result.error is not None:  # bad input stopped reading; what came before was flushed
        raise result.error
    if result.interrupted:
        raise typer.Exit(EXIT_INTERRUPTED)
    failed = summary.failure(result, opts.topic)
    if failed is not None:
        raise failed
