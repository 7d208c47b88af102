"""What ``groups lag`` shows, pure: the rows with their flags, totals per group and per topic,
the footer rows that carry them, the negative-lag warnings and the ``--fail-above`` decision.
Lag rows in (the lag-sample rows :func:`kctl.broker.groups.lag_samples` returns), plain data
out: the command hands it to the output."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kctl.errors import FindingsError, UsageError
from kctl.lag.arithmetic import lag_flag, lag_totals, negative_lag_warning
from kctl.lag.samples import check_record_path

# The column spec (kctl.formatters.cols): ":>" right-justifies.
LAG_COLUMNS = (
    "group", "topic", "partition:>", "committed_offset:>", "log_end_offset:>", "lag:>",
    "flag", "member_id", "host",
)  # fmt: skip


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

    def document(self) -> dict[str, Any]:
        """The ``-o json``/``yaml`` document: ts_ms, partitions, topics and groups totals."""
        return {
            "ts_ms": self.ts_ms,
            "partitions": self.rows,
            "topics": [
                {"group": g, "topic": t, "lag": v}
                for (g, t), v in sorted(self.topic_totals.items())
            ],
            "groups": [{"group": g, "lag": v} for g, v in sorted(self.group_totals.items())],
        }


def lag_report(rows: list[dict[str, Any]], ts_ms: int) -> LagReport:
    """The report of lag rows sampled at ``ts_ms``."""
    group_totals, topic_totals = lag_totals(rows)
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
        footer.append({"group": g, "topic": "TOTAL", "lag": total})
    return LagReport(
        ts_ms=ts_ms,
        rows=[{**r, "flag": lag_flag(r["lag"])} for r in rows],
        footer=footer,
        group_totals=group_totals,
        topic_totals=topic_totals,
    )


def negative_lag_warnings(rows: list[dict[str, Any]]) -> list[str]:
    """One stderr line per partition whose committed offset is beyond its log end."""
    return [f"kctl: warning: {negative_lag_warning(r)}" for r in rows if lag_flag(r["lag"])]


def check_lag_options(
    watch: float | None, fail_above: int | None, record: Path | None = None
) -> None:
    """Usage errors of ``--watch``, ``--fail-above`` and ``--record``."""
    if watch is not None and watch <= 0:
        raise UsageError("--watch SECONDS must be above 0")
    if watch is not None and fail_above is not None:
        raise UsageError("--fail-above is a one-shot check; it does not combine with --watch")
    if record is not None:
        check_record_path(record)


def watch_title(watch: float) -> str:
    """The title over each redraw of ``--watch`` on a terminal."""
    return f"groups lag, every {watch:g}s (Ctrl-C to stop)"


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
