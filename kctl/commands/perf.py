"""kctl perf: load tests (kafka-producer-perf-test.sh, kafka-consumer-perf-test.sh)."""

from __future__ import annotations

import typer

from kctl.commands._common import connection, example, one_name, output_view
from kctl.commands._complete import topic_names

app = typer.Typer(
    help="Load tests: produce or consume N records and report throughput and latency.",
    no_args_is_help=True,
)

_COLUMNS = (
    "records",
    "records_per_s:>",
    "mb_per_s:>",
    "latency_avg_ms:>",
    "latency_p50_ms:>",
    "latency_p95_ms:>",
    "latency_p99_ms:>",
    "latency_max_ms:>",
    "failed:>",
)


def _props(items: list[str], option: str) -> dict[str, str]:
    from kctl.broker.connect import parse_override

    return dict(parse_override(item, option) for item in items)


def _emit(ctx: typer.Context, result: object) -> None:
    from kctl.formatters import Output, cols, emit

    doc = result.as_dict()  # type: ignore[attr-defined]
    emit(Output([doc], cols(*_COLUMNS), doc=doc), output_view(ctx))


@app.command(
    "produce",
    epilog=example(
        "kctl perf produce load-test --num-records 1000000 --record-size 100",
        "kctl perf produce load-test --num-records 50000 --throughput 5000 "
        "--producer-prop acks=1 -o json",
    ),
)
def produce(
    ctx: typer.Context,
    topic: str | None = typer.Argument(
        None, help="Topic to write to (or --topic).", autocompletion=topic_names
    ),
    topic_option: str | None = typer.Option(
        None, "--topic", help="The topic (kafka-producer-perf-test.sh).", autocompletion=topic_names
    ),
    num_records: int = typer.Option(
        100_000,
        "--num-records",
        help="Records to send (1..10^12).",
        min=1,
        max=10**12,
    ),
    record_size: int = typer.Option(
        100,
        "--record-size",
        help="Bytes per record value (1..104857600).",
        min=1,
        max=100 * 1024 * 1024,
    ),
    throughput: float = typer.Option(
        -1,
        "--throughput",
        help="At most N records/s (-1: unlimited).",
        min=-1,
        max=1e9,
    ),
    producer_prop: list[str] = typer.Option(
        [],
        "--producer-prop",
        "--producer-props",
        help="librdkafka producer property key=value (repeatable).",
    ),
) -> None:
    """Send records as fast as allowed; report records/s, MB/s and the latency from produce()
    to the delivery report (average, p50, p95, p99, max)."""
    from kctl.broker.perf import perf_produce
    from kctl.errors import UsageError

    topic = one_name(topic, topic_option, "topic")
    if num_records < 1 or record_size < 0:
        raise UsageError("--num-records must be at least 1 and --record-size at least 0")
    _emit(
        ctx,
        perf_produce(
            connection(ctx),
            topic,
            num_records=num_records,
            record_size=record_size,
            throughput=throughput,
            props=_props(producer_prop, "--producer-prop"),
        ),
    )


@app.command(
    "consume",
    epilog=example(
        "kctl perf consume load-test --num-records 1000000",
        "kctl perf consume load-test --num-records 1000 --consumer-prop fetch.min.bytes=1 -o json",
    ),
)
def consume(
    ctx: typer.Context,
    topic: str | None = typer.Argument(
        None, help="Topic to read from its start (or --topic).", autocompletion=topic_names
    ),
    topic_option: str | None = typer.Option(
        None, "--topic", help="The topic (kafka-consumer-perf-test.sh).", autocompletion=topic_names
    ),
    num_records: int = typer.Option(
        100_000,
        "--num-records",
        "--messages",
        help="Records to read (1..10^12).",
        min=1,
        max=10**12,
    ),
    idle_timeout: float = typer.Option(
        10.0,
        "--idle-timeout",
        help="Stop after this many seconds without a record.",
        min=0.001,
        max=86400,
    ),
    consumer_prop: list[str] = typer.Option(
        [], "--consumer-prop", help="librdkafka consumer property key=value (repeatable)."
    ),
) -> None:
    """Read records from the start of every partition; report records/s, MB/s and the latency
    of each fetch batch (average, p50, p95, p99, max)."""
    from kctl.broker.perf import perf_consume
    from kctl.errors import UsageError

    topic = one_name(topic, topic_option, "topic")
    if num_records < 1:
        raise UsageError("--num-records must be at least 1")
    _emit(
        ctx,
        perf_consume(
            connection(ctx),
            topic,
            num_records=num_records,
            timeout=idle_timeout,
            props=_props(consumer_prop, "--consumer-prop"),
        ),
    )
