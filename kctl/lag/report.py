"""What ``groups lag`` shows, pure: the rows with their flags, totals per group and per topic,
the footer rows that carry them, the negative-lag warnings and the ``--fail-above`` decision.
Lag rows in (the lag-sample rows :func:`kctl.broker.groups.lag_samples` returns), plain data
out: the command hands it to the output."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kctl.errors import FindingsError, UsageError
from kctl.lag.arithmetic import lag_flag, lag_totals, negative_lag_warning
from kctl.lag.partial import incomplete_error
from kctl.lag.samples import check_record_path

# The column spec (kctl.formatters.cols): ":>" right-justifies.
LAG_COLUMNS = (
    "group", "topic", "partition:>", "committed_offset:>", "log_end_offset:>", "lag:>",
    "flag", "group_type", "member_id", "host",
)  # fmt: skip
# With --time-lag: TIME-LAG (the seconds, for people) after LAG.
TIME_LAG_COLUMNS = (*LAG_COLUMNS[:6], "time_lag:>", *LAG_COLUMNS[6:])
# Row keys only the table shows (the document has the numbers they are made of).
_DISPLAY_ONLY = ("time_lag",)


def lag_columns(time_lag: bool) -> tuple[str, ...]:
    return TIME_LAG_COLUMNS if time_lag else LAG_COLUMNS


def seconds_text(ms: int | None) -> str | None:
    """A time lag for people: ``0s``, ``4.2s``, ``2m05s``, ``3h02m``, ``2d04h``."""
    if ms is None:
        return None
    if ms < 60_000:
        return f"{ms // 100 / 10:.1f}s".replace(".0s", "s")  # tenths, never rounded up
    s = ms // 1000
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 86400}d{s % 86400 // 3600:02d}h"


def group_time_lags(rows: list[dict[str, Any]]) -> dict[str, int | None]:
    """Per group, its time lag: the largest of its partitions' (None when none has one)."""
    out: dict[str, int | None] = {}
    for r in rows:
        t = r.get("time_lag_ms")
        g = r["group"]
        if g not in out:
            out[g] = t
        elif t is not None:
            held = out[g]
            out[g] = t if held is None or t > held else held
    return out


@dataclass(frozen=True)
class LagReport:
    """One lag pass as shown: the partitions (each with its ``flag``), the footer rows (per
    group: a total per topic when the group reads several, then the group's TOTAL) and the
    totals, negative lags counting 0."""

    ts_ms: int
    rows: list[dict[str, Any]]
    footer: list[dict[str, Any]]
    group_totals: dict[str, int]
    topic_totals: dict[tuple[str, str], int]
    # Per group the largest time lag of its partitions (None: not asked, or no commit).
    time_lags: dict[str, int | None]
    timed: bool = False  # the pass read time lag (--time-lag)
    # What the pass could not read: {"group": name, or None for groups not listed, "reason"}.
    unknown: list[dict[str, Any]] = field(default_factory=list)

    def columns(self) -> tuple[str, ...]:
        return lag_columns(self.timed)

    def document(self) -> dict[str, Any]:
        """The ``-o json``/``yaml`` document: ts_ms, partitions, topics and groups totals (a
        group's ``time_lag_ms`` is its largest, null without --time-lag), and what could not
        be read (``unknown``: empty when the pass read every group)."""
        types = {r["group"]: r.get("group_type") for r in self.rows}
        return {
            "ts_ms": self.ts_ms,
            "partitions": [
                {k: v for k, v in r.items() if k not in _DISPLAY_ONLY} for r in self.rows
            ],
            "topics": [
                {"group": g, "topic": t, "lag": v}
                for (g, t), v in sorted(self.topic_totals.items())
            ],
            "groups": [
                {
                    "group": g,
                    "group_type": types.get(g),
                    "lag": v,
                    "time_lag_ms": self.time_lags.get(g),
                }
                for g, v in sorted(self.group_totals.items())
            ],
            "unknown": self.unknown,
        }


def lag_report(
    rows: list[dict[str, Any]],
    ts_ms: int,
    *,
    timed: bool = False,
    unknown: list[dict[str, Any]] | None = None,
) -> LagReport:
    """The report of lag rows sampled at ``ts_ms`` (``timed``: they carry time lag;
    ``unknown``: what the pass could not read, :func:`kctl.lag.partial.unknown_entries`)."""
    group_totals, topic_totals = lag_totals(rows)
    time_lags = group_time_lags(rows)
    by_group: dict[str, list[tuple[str, int]]] = {}
    for (g, t), v in sorted(topic_totals.items()):
        by_group.setdefault(g, []).append((t, v))
    footer: list[dict[str, Any]] = []
    for g, total in sorted(group_totals.items()):
        per_topic = by_group.get(g, [])
        if len(per_topic) > 1:
            footer += [
                {"group": g, "topic": t, "partition": "total", "lag": v} for t, v in per_topic
            ]
        total_row: dict[str, Any] = {"group": g, "topic": "TOTAL", "lag": total}
        if timed:
            total_row["time_lag"] = seconds_text(time_lags.get(g))
        footer.append(total_row)
    shown = [{**r, "flag": lag_flag(r["lag"])} for r in rows]
    if timed:
        shown = [{**r, "time_lag": seconds_text(r.get("time_lag_ms"))} for r in shown]
    return LagReport(
        ts_ms=ts_ms,
        rows=shown,
        footer=footer,
        group_totals=group_totals,
        topic_totals=topic_totals,
        time_lags=time_lags,
        timed=timed,
        unknown=list(unknown or []),
    )


def negative_lag_warnings(rows: list[dict[str, Any]]) -> list[str]:
    """One stderr line per partition whose committed offset is beyond its log end."""
    return [f"kctl: warning: {negative_lag_warning(r)}" for r in rows if lag_flag(r["lag"])]


def check_lag_options(
    watch: float | None,
    fail_above: int | None,
    record: Path | None = None,
    *,
    fail_above_seconds: float | None = None,
    serve: str | None = None,
) -> None:
    """Usage errors of ``--watch``, ``--fail-above[-seconds]``, ``--record`` and ``--serve``."""
    if watch is not None and watch <= 0:
        raise UsageError("--watch SECONDS must be above 0")
    for name, value in (("--fail-above", fail_above), ("--fail-above-seconds", fail_above_seconds)):
        if value is None:
            continue
        if watch is not None:
            raise UsageError(f"{name} is a one-shot check; it does not combine with --watch")
        if serve is not None:
            raise UsageError(f"{name} is a one-shot check; it does not combine with --serve")
    if fail_above_seconds is not None and fail_above_seconds < 0:
        raise UsageError("--fail-above-seconds SECONDS must be 0 or more")
    if serve is not None and watch is not None:
        raise UsageError("--serve collects every --interval; it does not combine with --watch")
    if record is not None:
        check_record_path(record)


def exporter_interval(text: str) -> float:
    """``--interval`` of ``--serve`` in seconds: a duration above 0."""
    from kctl.parsing import duration

    seconds = duration(text, "--interval").total_seconds()
    if seconds <= 0:
        raise UsageError(f"--interval {text!r} must be above 0")
    return seconds


def watch_title(watch: float) -> str:
    """The title over each redraw of ``--watch`` on a terminal."""
    return f"groups lag, every {watch:g}s (Ctrl-C to stop)"


def check_fail_above_seconds(time_lags: dict[str, int | None], limit: float | None) -> None:
    """``--fail-above-seconds N``: a finding (exit 3) when a group's time lag exceeds N
    seconds, naming how many do and the worst; nothing without a limit."""
    if limit is None:
        return
    over = {g: v for g, v in time_lags.items() if v is not None and v > limit * 1000}
    if over:
        worst = max(over, key=lambda g: over[g])
        raise FindingsError(
            f"{len(over)} group(s) with time lag above {limit:g}s",
            f"{worst!r} is {seconds_text(over[worst])} behind",
        )


def check_complete(report: LagReport) -> None:
    """A one-shot ``groups lag`` that could not read every group ends with exit 1 after
    showing what it read (the warnings named what was not): its totals, and a check that
    passed, say nothing of the groups it could not read."""
    error = incomplete_error(report.unknown)
    if error is not None:
        raise error


def check_fail_above(group_totals: dict[str, int], limit: int | None) -> None:
    """``--fail-above N``: a finding (exit 3) when a group's total lag exceeds N, naming how
    many do and the worst; nothing without a limit."""
    if limit is None:
        return
    over = {g: v for g, v in group_totals.items() if v > limit}
    if over:
        worst = max(over, key=lambda g: over[g])
        raise FindingsError(
            f"{len(over)} group(s) with lag above {limit}", f"{worst!r} has lag {over[worst]}"
        )
