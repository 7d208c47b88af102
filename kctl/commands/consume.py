"""kctl consume: read records to stdout (kafka-console-consumer.sh, kcat -C)."""

from __future__ import annotations

import sys
from typing import Any

import typer

from kctl.commands._common import connection, environment, example, note
from kctl.commands._complete import group_names, topic_names
from kctl.errors import EXIT_INTERRUPTED
from kctl.parsing import INT32_MAX
from kctl.runtime.signals import SignalTrap

EPILOG = example(
    "kctl consume orders -o jsonl | jq .value",
    "kctl consume orders --from -10 --partition 0",
    "kctl consume orders --from 2024-05-01T12:00:00Z -n 100 --value-format json -o jsonl",
    "kctl consume orders --group audit -f --template '{partition}:{offset} {key}={value}'",
    "kctl consume --include 'orders-.*' -o jsonl",
    "kctl consume payments --value-format avro -o jsonl | jq .value.amount",
)


def consume(
    ctx: typer.Context,
    topics: list[str] = typer.Argument(
        None, help="Topics to read (or --topic).", autocompletion=topic_names
    ),
    topic_option: list[str] = typer.Option(
        [],
        "--topic",
        help="A topic, as kafka-console-consumer.sh takes it (repeatable).",
        autocompletion=topic_names,
    ),
    start: str | None = typer.Option(
        None,
        "--from",
        "--offset",
        help="earliest (default), latest, OFFSET, -N (last N per partition), "
        "ISO-8601 time or @EPOCH_MS. With --group: overrides the committed offsets.",
    ),
    from_beginning: bool = typer.Option(
        False, "--from-beginning", help="Same as --from earliest (kafka-console-consumer.sh)."
    ),
    include: str | None = typer.Option(
        None,
        "--include",
        "--whitelist",
        metavar="REGEX",
        help="Read every topic whose whole name matches REGEX (kafka-console-consumer.sh "
        "--include; internal topics only when the regex names them). Topics are chosen "
        "when kctl starts.",
    ),
    partition: list[int] = typer.Option(
        [], "--partition", min=0, max=INT32_MAX, help="Only this partition (repeatable)."
    ),
    group: str | None = typer.Option(
        None,
        "--group",
        "-g",
        help="Join this consumer group and commit its offsets.",
        autocompletion=group_names,
    ),
    no_commit: bool = typer.Option(False, "--no-commit", help="With --group: do not commit."),
    follow: bool = typer.Option(
        False, "--follow", "-f", help="Keep waiting for new records (default: stop at the end)."
    ),
    max_messages: int | None = typer.Option(
        None, "--max-messages", "-n", help="Stop after N records."
    ),
    isolation: str = typer.Option(
        "read_uncommitted",
        "--isolation",
        "--isolation-level",
        help="read_committed or read_uncommitted.",
    ),
    key_format: str = typer.Option(
        "string",
        "--key-format",
        help="string|json|bytes|base64|hex, or a Schema Registry format: "
        "avro|protobuf|json-schema|schema-registry (the type the record's schema id names).",
    ),
    value_format: str = typer.Option(
        "string",
        "--value-format",
        help="string|json|bytes|base64|hex, or a Schema Registry format: "
        "avro|protobuf|json-schema|schema-registry (the type the record's schema id names).",
    ),
    template: str | None = typer.Option(
        None,
        "--template",
        "-t",
        help="Format each record, e.g. '{partition}:{offset} {key}={value}'.",
    ),
    consumer_property: list[str] = typer.Option(
        [], "--consumer-property", help="librdkafka consumer property key=value (repeatable)."
    ),
) -> None:
    """Consume records to stdout (JSON lines, table, plain, template).

    JSON lines (-o jsonl), a table, values only (-o plain) or a --template.
    Stops at the current end of every partition unless --follow.
    With a Schema Registry format, a record that cannot be decoded is printed raw (base64) with
    an error, and the run ends with exit 3 (docs/consume.md)."""
    import time

    from kctl.broker.connect import parse_override
    from kctl.broker.consume import ConsumeOptions, Consumption, check_start
    from kctl.errors import UsageError
    from kctl.formatters.stream import make_writer

    if isolation not in ("read_committed", "read_uncommitted"):
        raise UsageError(f"unknown --isolation {isolation!r}", "read_committed|read_uncommitted")
    topics = [*(topics or []), *topic_option]
    if include is not None:
        if topics:
            raise UsageError("--include and topic names exclude each other")
        topics = _included(ctx, include)
    if not topics:
        raise UsageError("name the topics to read: as arguments, --topic or --include")
    if from_beginning:
        if start is not None and start != "earliest":
            raise UsageError("--from-beginning and --from exclude each other")
        start = "earliest"
    if no_commit and not group:
        raise UsageError("--no-commit needs --group")
    if max_messages is not None and max_messages < 1:
        raise UsageError("--max-messages must be at least 1")
    if any(p < 0 for p in partition):
        raise UsageError("--partition must be >= 0")
    check_start(start)
    s = environment(ctx)
    fmt = s.output_format()
    out = sys.stdout.buffer
    writer = make_writer(
        out,
        fmt,
        template=template,
        key_format=key_format,
        value_format=value_format,
        headers=not s.no_headers,
        many_topics=len(set(topics)) > 1,
        codecs=_codecs(ctx),
    )
    extra = dict(parse_override(item, "--consumer-property") for item in consumer_property)
    opts = ConsumeOptions(
        topics=list(dict.fromkeys(topics)),
        start=start,
        partitions=list(partition),
        group=group,
        commit=not no_commit,
        follow=follow,
        max_messages=max_messages,
        read_committed=isolation == "read_committed",
        extra=extra,
    )
    started = time.monotonic()
    from kctl.runtime.heap import fewer_collections, keep_heap

    keep_heap()
    fewer_collections()
    consumption = Consumption(connection(ctx), opts)
    count = 0
    interrupted = False
    stop = _StopSignals(writer, consumption)
    with stop:  # until the consumer is closed
        try:
            for batch in consumption.batches():
                n = writer.write(batch)
                writer.flush()
                consumption.written(batch if n == len(batch) else batch[:n])
                count += n
                if stop.signum is not None:
                    break
        except KeyboardInterrupt:  # before the handlers were in place
            interrupted = True
        except BrokenPipeError:
            # `kctl consume ... | head`: the reader left. End quietly with 0 (Typer would turn
            # the EPIPE into exit 1 before kctl.cli sees it).
            import os

            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return
        finally:
            consumption.close()  # leaves the group and commits what was stored
    took = time.monotonic() - started
    if stop.signum is not None:
        import signal

        name = signal.Signals(stop.signum).name
        note(f"consumed {count} record(s) in {took:.1f}s (stopped by {name})")
        # 128 + the signal, as kafka-console-consumer.sh (the JVM) and shells report it
        raise typer.Exit(128 + stop.signum)
    if sys.stderr.isatty() or s.debug:
        note(f"consumed {count} record(s) in {took:.1f}s")
    if interrupted:
        raise typer.Exit(EXIT_INTERRUPTED)
    if writer.undecoded:
        from kctl.errors import EXIT_FINDINGS

        note(f"kctl: warning: {writer.undecoded} record(s) could not be decoded")
        raise typer.Exit(EXIT_FINDINGS)


def _codecs(ctx: typer.Context) -> Any:
    """The maker of Schema Registry decoders: the registry this invocation uses (--schema-registry,
    KCTL_SCHEMA_REGISTRY_URL, the profile), looked up only when a registry format is asked for;
    one client (and its schema cache) for keys and values."""
    clients: list[Any] = []

    def make(fmt: str) -> Any:
        from kctl.commands._common import schema_registry
        from kctl.schemas.codec import RecordDecoder

        if not clients:
            clients.append(schema_registry(ctx))
        return RecordDecoder(clients[0], fmt)

    return make


def _included(ctx: typer.Context, pattern: str) -> list[str]:
    """The topics whose whole name matches ``pattern``, sorted; internal topics only when the
    pattern matches them without its wildcards doing it (it starts with ``__``)."""
    import re

    from kctl.broker.client import Admin
    from kctl.errors import NotFoundError, UsageError
    from kctl.parsing import INTERNAL_TOPICS

    try:
        rx = re.compile(pattern)
    except re.error as exc:
        raise UsageError(f"malformed --include regex {pattern!r}", str(exc)) from None
    names = Admin(connection(ctx)).metadata().topics
    internal_ok = pattern.startswith("__")
    chosen = sorted(
        n for n in names if rx.fullmatch(n) and (internal_ok or n not in INTERNAL_TOPICS)
    )
    if not chosen:
        raise NotFoundError(f"no topic matches --include {pattern!r}", "kctl topics list")
    return chosen


class _StopSignals(SignalTrap):
    """SIGINT and SIGTERM end consuming cleanly: the record being written is finished (never
    half a line, even while stdout blocks), nothing more is written, the consumer closes
    (leaving its group, committing what was written) and the exit code is 128 + the signal.
    The handler only sets flags: it never raises in the middle of a write or a store."""

    def __init__(self, writer: Any, consumption: Any) -> None:
        super().__init__()
        self.writer = writer
        self.consumption = consumption
        self.signum: int | None = None

    def _handler(self, signum: int, frame: Any) -> None:
        if self.signum is None:
            self.signum = signum
        self.writer.stopping = True
        self.consumption.stopping = True
