"""kctl analytics: lag samples analysed on Spark (status, time lag, trends, plots)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import typer

from kctl.commands._common import connection, environment, example, note, output_view
from kctl.formatters import Column, Output, cols, emit

app = typer.Typer(
    help="Lag analytics on Spark: Burrow status, time lag, trends and plots from lag samples.",
    no_args_is_help=True,
)


def parse_duration(text: str, option: str) -> float:
    """Seconds of ``15s``, ``10m``, ``1h30m``, ``500ms`` or ISO-8601 ``PT10M``
    (:func:`kctl.parsing.duration`); must be positive."""
    from kctl.errors import UsageError
    from kctl.parsing import duration

    seconds = duration(text, option).total_seconds()
    if seconds <= 0:
        raise UsageError(f"{option} {text.strip()!r} must be positive", "say 15s, 10m or 1h30m")
    return seconds


def _round(value: Any, digits: int = 3) -> Any:
    return round(value, digits) if isinstance(value, float) else value


def _clean(row: dict[str, Any]) -> dict[str, Any]:
    return {k: _round(v) for k, v in row.items()}


def sample_live(
    ctx: typer.Context, groups: list[str], duration_s: float, interval_s: float, path: Path
) -> tuple[int, int]:
    """Sample the cluster's lag every ``interval_s`` for ``duration_s`` into ``path`` (JSONL in
    the lag-sample schema), the same samples ``groups lag --record`` writes. Groups that
    appear while sampling are picked up when no ``groups`` are named. Returns (rounds, rows)."""
    from kctl.broker import groups as G
    from kctl.broker.client import Admin
    from kctl.errors import NotFoundError
    from kctl.lag.samples import record_samples

    admin = Admin(connection(ctx))
    cluster = admin.metadata().cluster_id or ""
    rounds = int(duration_s // interval_s) + 1
    start = time.monotonic()
    written = 0
    with G.GroupReader(admin) as reader:
        for i in range(rounds):
            lag = G.lag_pass(admin, reader, groups, all_groups=False)
            written += record_samples(path, lag.rows, cluster, lag.ts_ms)
            note(
                f"kctl: sample {i + 1}/{rounds}: {len(lag.rows)} partition(s) of "
                f"{len(lag.groups)} group(s)"
            )
            if i + 1 < rounds:
                # The sampling schedule itself, not a wait for a condition.
                time.sleep(max(0.0, start + (i + 1) * interval_s - time.monotonic()))
    if written == 0:
        raise NotFoundError("no consumer group offsets to sample", "no groups, or none committed")
    return rounds, written


_LEVEL_COLUMNS = {
    "group": ("group",),
    "topic": ("group", "topic"),
    "partition": ("group", "topic", "partition:>"),
}


def _columns(level: str) -> list[Column]:
    return cols(
        *_LEVEL_COLUMNS[level],
        "status",
        "lag:>",
        "max_lag:>",
        "p95_lag:>",
        Column("time_lag_s", "TIME-LAG-S", "right"),
        Column("time_lag_estimated", "ESTIMATED"),
        Column("production_rate", "PRODUCED/S", "right"),
        Column("consumption_rate", "CONSUMED/S", "right"),
        Column("lag_trend", "TREND/S", "right"),
        Column("catch_up_s", "CATCH-UP-S", "right"),
    )


@app.command(
    "lag",
    epilog=example(
        "kctl groups lag --all-groups --record lag.jsonl --watch 15   # collect samples",
        "kctl analytics lag lag.jsonl",
        "kctl analytics lag 'samples/*.parquet' --level partition --top 20 -o json",
        "kctl analytics lag --live --duration 10m --interval 15s --plot lag.png",
        "kctl analytics lag s3a://ops/lag/ --master spark://10.0.0.5:7077 --out s3a://ops/report/",
    ),
)
def lag(
    ctx: typer.Context,
    inputs: list[str] = typer.Argument(
        None, help="Lag-sample files, directories or globs (.jsonl or .parquet)."
    ),
    fmt: str | None = typer.Option(
        None, "--format", help="jsonl or parquet, when the names do not tell."
    ),
    live: bool = typer.Option(False, "--live", help="Sample the cluster first, then analyse."),
    duration: str = typer.Option("10m", "--duration", help="With --live: how long to sample."),
    interval: str = typer.Option("15s", "--interval", help="With --live: time between samples."),
    group: list[str] = typer.Option(
        [], "--group", help="With --live: only these groups (repeatable; default all)."
    ),
    record: Path | None = typer.Option(
        None, "--record", help="With --live: keep the samples in FILE (.jsonl)."
    ),
    window: int = typer.Option(
        10, "--window", min=1, help="Samples in Burrow's sliding evaluation window."
    ),
    level: str = typer.Option("group", "--level", help="Rows to print: group, topic, partition."),
    top: int | None = typer.Option(
        None, "--top", min=1, help="Print only the N rows that look worst (status, then lag)."
    ),
    laggards: int = typer.Option(
        10, "--laggards", min=0, help="Partitions in the JSON document's top-laggards list."
    ),
    out: str | None = typer.Option(
        None, "--out", help="Write every result table as Parquet under DIR (local or a URI)."
    ),
    plot_to: Path | None = typer.Option(
        None, "--plot", help="Draw lag and time lag over time per group to FILE.png or FILE.html."
    ),
    plot_groups: int = typer.Option(10, "--plot-groups", min=1, help="Groups drawn (worst first)."),
    master: str = typer.Option("local[*]", "--master", help="Spark master URL."),
    conf: list[str] = typer.Option(
        [], "--conf", help="Spark property key=value (repeatable).", metavar="KEY=VALUE"
    ),
) -> None:
    """Status after Burrow's rules, time lag, rates, trend and catch-up time per group, topic or
    partition, from lag samples (``groups lag --record``) or a live sampling run.

    Runs on Spark: local[*] by default, any --master (spark://, yarn, k8s://) unchanged."""
    from kctl.analytics import runner
    from kctl.errors import UsageError

    if level not in _LEVEL_COLUMNS:
        raise UsageError(f"--level {level!r} is not one of group, topic, partition")
    conf_map = runner.parse_conf(conf)
    runner.require()
    if plot_to is not None:
        from kctl.analytics import plot

        plot.require_backend(plot_to)
    paths = list(inputs or [])
    if live:
        if paths:
            raise UsageError("give input files or --live, not both")
        duration_s = parse_duration(duration, "--duration")
        interval_s = parse_duration(interval, "--interval")
        if interval_s <= 0 or duration_s < 0:
            raise UsageError("--interval must be above 0 and --duration at least 0")
        target = record or Path(tempfile.mkdtemp(prefix="kctl-lag-")) / "samples.jsonl"
        if target.suffix.lower() not in (".jsonl", ".json", ".ndjson"):
            raise UsageError(f"--record {target}: live samples are written as .jsonl")
        sample_live(ctx, list(dict.fromkeys(group)), duration_s, interval_s, target)
        paths = [str(target)]
    elif not paths:
        raise UsageError("give lag-sample files (groups lag --record), or --live")
    elif group or record:
        raise UsageError("--group and --record go with --live")

    from kctl.analytics import pipeline
    from kctl.analytics.schema import check_jsonl, read_samples, resolve_inputs

    # Fail early, before Spark starts: missing inputs, unknown formats, files that are not
    # lag samples (named with the line).
    groups = resolve_inputs(paths, {"jsonl": "json", "json": "json"}.get(fmt or "", fmt))
    for warning in check_jsonl(groups["json"]):
        note(f"kctl: warning: {warning}")
    debug = environment(ctx).debug

    def say(msg: str) -> None:
        note(f"kctl: {msg}")

    say(f"starting Spark ({master})")
    with runner.session(master, conf_map, debug=debug) as spark:
        samples = read_samples(spark, paths, fmt)
        result = pipeline.analyse(
            samples,
            window=window,
            level=level,
            top=top,
            laggards=laggards,
            out_dir=out,
            plot_path=plot_to,
            plot_groups=plot_groups,
            progress=say,
            auto_partitions="spark.sql.shuffle.partitions" not in conf_map,
        )
    rows = [_clean(r) for r in result.rows]
    doc = {
        "level": level,
        "window": window,
        level + "s": rows,
        "laggards": [_clean(r) for r in result.laggards],
    }
    if result.written:
        doc["written"] = result.written
    emit(Output(rows, _columns(level), doc=doc), output_view(ctx))
