"""The sequence of ``groups lag``: lag passes, once or every ``--watch`` seconds, each recorded,
warned about, reported and shown. The I/O comes in as callables (one lag pass, recording
samples, showing a report, a note for people, the pause), so the sequence itself is pure and
tested without a cluster; :func:`kctl.broker.groups.watch_lag` supplies the real ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kctl.lag.model import LagPass
from kctl.lag.partial import check_listed, pass_warnings, unknown_entries
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

    Each pass: ``sample()``; a one-shot pass whose group list was still loading when the
    timeout ran out fails (:func:`kctl.lag.partial.check_listed`); a note when every group was
    asked for and the cluster has none (only when the list is complete: groups not known yet
    are not "no groups"); ``record(rows, ts_ms)`` (samples written; noted while watching, as
    ``record_name``); one warning per part of a partial pass (groups not listed, groups not
    read) and per negative lag; ``show`` the report (``timed``: with time lag; its ``unknown``
    says what was not read); then ``sleep(watch)`` while watching."""
    while True:
        done = sample()
        if not watch:
            check_listed(done.loading)
        if every and not done.groups and done.complete:
            note(NO_GROUPS)
        if record is not None:
            n = record(done.rows, done.ts_ms)
            if watch:
                note(f"recorded {n} sample(s) to {record_name}")
        for line in [*pass_warnings(done), *done.notes, *negative_lag_warnings(done.rows)]:
            note(line)
        report = lag_report(done.rows, done.ts_ms, timed=timed, unknown=unknown_entries(done))
        show(report)
        if not watch:
            return report
        # The redraw schedule itself, not a wait for a condition.
        sleep(watch)
