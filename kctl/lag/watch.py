"""The sequence of ``groups lag``: lag passes, once or every ``--watch`` seconds, each recorded,
warned about, reported and shown. The I/O comes in as callables (one lag pass, recording
samples, showing a report, a note for people, the pause), so the sequence itself is pure and
tested without a cluster; :func:`kctl.broker.groups.watch_lag` supplies the real ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kctl.lag.model import LagPass
from kctl.lag.report import LagReport, lag_report, negative_lag_warnings

NO_GROUPS = "no consumer groups in the cluster"


def run_passes(
    sample: Callable[[], LagPass],
    show: Callable[[LagReport], None],
    note: Callable[[str], None],
    *,
    every: bool,
    watch: float | None = None,
    record: Callable[[list[dict[str, Any]], int], int] | None = None,
    record_name: str = "",
    sleep: Callable[[float], None],
    timed: bool = False,
) -> LagReport:
    """One lag pass, or one every ``watch`` seconds until interrupted; the last report.

    Each pass: ``sample()``; a note when every group was asked for and the cluster has none;
    ``record(rows, ts_ms)`` (samples written; noted while watching, as ``record_name``); one
    warning per negative lag; ``show`` the report (``timed``: with time lag); then
    ``sleep(watch)`` while watching."""
    while True:
        done = sample()
        if every and not done.groups:
            note(NO_GROUPS)
        if record is not None:
            n = record(done.rows, done.ts_ms)
            if watch:
                note(f"recorded {n} sample(s) to {record_name}")
        for line in [*done.notes, *negative_lag_warnings(done.rows)]:
            note(line)
        report = lag_report(done.rows, done.ts_ms, timed=timed)
        show(report)
        if not watch:
            return report
        # The redraw schedule itself, not a wait for a condition.
        sleep(watch)
