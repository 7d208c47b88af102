"""groups lag without a cluster: the report (rows, totals, footers, JSON document), negative-lag
warnings, the --fail-above decision and the pass sequence of kctl.lag.watch, on hand-written
lag rows and fake I/O callables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kctl.errors import EXIT_FINDINGS, EXIT_USAGE, FindingsError, KctlError, UsageError
from kctl.lag import report as R
from kctl.lag.model import LagPass
from kctl.lag.watch import NO_GROUPS, run_passes


def row(group: str, topic: str, partition: int, committed: int, end: int) -> dict[str, Any]:
    """A lag-sample row as kctl.broker.groups.lag_samples makes it (lag null without a commit)."""
    return {
        "group": group,
        "topic": topic,
        "partition": partition,
        "committed_offset": committed,
        "log_start_offset": 0,
        "log_end_offset": end,
        "lag": None if committed < 0 else end - committed,
        "group_state": "Empty",
        "member_id": None,
        "client_id": None,
        "host": None,
        "group_type": "classic",
        "time_lag_ms": None,
    }


ROWS = [
    row("app", "orders", 0, 3, 10),  # lag 7
    row("app", "orders", 1, 5, 10),  # lag 5
    row("app", "payments", 0, 1, 10),  # lag 9
    row("app", "payments", 1, -1, 10),  # no commit: no lag
    row("batch", "orders", 0, 500, 10),  # committed past the log end: -490
    row("batch", "orders", 1, 2, 10),  # lag 8
]


def test_totals_per_group_and_topic_count_negative_and_missing_lag_as_zero():
    rep = R.lag_report(ROWS, 1234)
    assert rep.group_totals == {"app": 21, "batch": 8}
    assert rep.topic_totals == {("app", "orders"): 12, ("app", "payments"): 9,
                                ("batch", "orders"): 8}  # fmt: skip


def test_rows_keep_their_fields_and_gain_a_flag_only_for_negative_lag():
    rep = R.lag_report(ROWS, 1234)
    assert [r["flag"] for r in rep.rows] == [None, None, None, None, "negative_lag", None]
    assert [{k: v for k, v in r.items() if k != "flag"} for r in rep.rows] == ROWS
    assert "flag" not in ROWS[0]  # the input rows are not changed


def test_footer_has_topic_totals_only_for_a_group_reading_several_topics_then_its_total():
    rep = R.lag_report(ROWS, 1234)
    assert rep.footer == [
        {"group": "app", "topic": "orders", "partition": "total", "lag": 12},
        {"group": "app", "topic": "payments", "partition": "total", "lag": 9},
        {"group": "app", "topic": "TOTAL", "lag": 21},
        {"group": "batch", "topic": "TOTAL", "lag": 8},
    ]


def test_footer_and_totals_are_sorted_by_group_and_topic_whatever_the_row_order():
    rep = R.lag_report(list(reversed(ROWS)), 1)
    assert [(f["group"], f["topic"]) for f in rep.footer] == [
        ("app", "orders"), ("app", "payments"), ("app", "TOTAL"), ("batch", "TOTAL"),
    ]  # fmt: skip


def test_json_document_has_sample_time_partitions_and_topic_and_group_totals():
    rep = R.lag_report(ROWS, 1234)
    doc = rep.document()
    assert list(doc) == ["ts_ms", "partitions", "topics", "groups", "unknown"]
    assert doc["ts_ms"] == 1234 and doc["partitions"] == rep.rows
    assert doc["topics"] == [
        {"group": "app", "topic": "orders", "lag": 12},
        {"group": "app", "topic": "payments", "lag": 9},
        {"group": "batch", "topic": "orders", "lag": 8},
    ]
    assert doc["groups"] == [
        {"group": "app", "group_type": "classic", "lag": 21, "time_lag_ms": None},
        {"group": "batch", "group_type": "classic", "lag": 8, "time_lag_ms": None},
    ]


def test_no_rows_make_an_empty_report():
    rep = R.lag_report([], 5)
    assert (rep.rows, rep.footer, rep.group_totals) == ([], [], {})
    assert rep.document() == {"ts_ms": 5, "partitions": [], "topics": [], "groups": [],
                              "unknown": []}  # fmt: skip


def test_columns_are_the_lag_table_in_order_with_numbers_right_justified():
    assert R.LAG_COLUMNS == ("group", "topic", "partition:>", "committed_offset:>",
                             "log_end_offset:>", "lag:>", "flag", "group_type", "member_id",
                             "host")  # fmt: skip
    assert R.lag_columns(True) == (*R.LAG_COLUMNS[:6], "time_lag:>", *R.LAG_COLUMNS[6:])
    assert R.lag_report(ROWS, 1).columns() == R.LAG_COLUMNS


def timed(r: dict[str, Any], ms: int | None) -> dict[str, Any]:
    return {**r, "time_lag_ms": ms}


def test_time_lag_shows_seconds_in_the_table_and_milliseconds_in_the_document():
    rows = [timed(ROWS[0], 125_000), timed(ROWS[1], 0), timed(ROWS[3], None)]
    rep = R.lag_report(rows, 9, timed=True)
    assert rep.columns() == R.lag_columns(True)
    assert [r["time_lag"] for r in rep.rows] == ["2m05s", "0s", None]
    doc = rep.document()
    assert all("time_lag" not in r for r in doc["partitions"])
    assert [r["time_lag_ms"] for r in doc["partitions"]] == [125_000, 0, None]
    # A group's time lag is its largest partition's; the footer shows it.
    assert doc["groups"][0]["time_lag_ms"] == 125_000
    assert rep.footer[-1] == {"group": "app", "topic": "TOTAL", "lag": 12, "time_lag": "2m05s"}


def test_group_time_lag_is_the_largest_known_and_none_when_no_partition_has_one():
    rows = [timed(ROWS[0], None), timed(ROWS[1], 4_000), timed(ROWS[2], 1_000),
            timed(ROWS[4], None)]  # fmt: skip
    assert R.group_time_lags(rows) == {"app": 4_000, "batch": None}


def test_seconds_text_reads_like_a_clock_at_every_scale():
    cases = {0: "0s", 400: "0.4s", 4_200: "4.2s", 59_999: "59.9s", 60_000: "1m00s",
             125_000: "2m05s", 3_600_000: "1h00m", 10_920_000: "3h02m",
             187_200_000: "2d04h"}  # fmt: skip
    for ms, text in cases.items():
        assert R.seconds_text(ms) == text, ms
    assert R.seconds_text(None) is None


def test_fail_above_seconds_finds_groups_whose_time_lag_is_over_the_limit():
    R.check_fail_above_seconds({"app": 300_000, "idle": None}, None)
    R.check_fail_above_seconds({"app": 300_000, "idle": None}, 300)  # at the limit: fine
    with pytest.raises(FindingsError) as info:
        R.check_fail_above_seconds({"app": 300_001, "slow": 7_200_000, "idle": None}, 300)
    assert info.value.exit_code == EXIT_FINDINGS
    assert info.value.line() == "2 group(s) with time lag above 300s ('slow' is 2h00m behind)"


def test_serve_and_the_one_shot_checks_exclude_each_other_and_watch():
    R.check_lag_options(None, None, fail_above_seconds=60)
    R.check_lag_options(None, None, serve="127.0.0.1:9308")
    for kwargs, message in (
        ({"watch": 5, "fail_above": None, "fail_above_seconds": 60},
         "--fail-above-seconds is a one-shot check; it does not combine with --watch"),
        ({"watch": None, "fail_above": 10, "serve": "h:1"},
         "--fail-above is a one-shot check; it does not combine with --serve"),
        ({"watch": 2, "fail_above": None, "serve": "h:1"},
         "--serve collects every --interval; it does not combine with --watch"),
        ({"watch": None, "fail_above": None, "fail_above_seconds": -1},
         "--fail-above-seconds SECONDS must be 0 or more"),
    ):  # fmt: skip
        with pytest.raises(UsageError) as info:
            R.check_lag_options(**kwargs)
        assert info.value.line() == message


def test_exporter_interval_is_a_positive_duration():
    assert R.exporter_interval("30s") == 30
    assert R.exporter_interval("1m30s") == 90
    assert R.exporter_interval("500ms") == 0.5
    with pytest.raises(UsageError):
        R.exporter_interval("0s")
    with pytest.raises(UsageError):
        R.exporter_interval("soon")


def test_one_warning_per_negative_lag_naming_group_topic_partition():
    lines = R.negative_lag_warnings(ROWS)
    assert len(lines) == 1
    assert lines[0].startswith(
        "kctl: warning: negative lag -490 in group 'batch', topic 'orders' partition 0: "
        "committed offset 500 is beyond the log end offset 10"
    )
    assert R.negative_lag_warnings([r for r in ROWS if r["group"] == "app"]) == []


def test_fail_above_finds_groups_over_the_limit_and_names_the_worst():
    R.check_fail_above({"app": 21, "batch": 8}, None)  # no limit: no check
    R.check_fail_above({"app": 21, "batch": 8}, 21)  # at the limit is not above it
    with pytest.raises(FindingsError) as info:
        R.check_fail_above({"app": 21, "batch": 8, "idle": 0}, 7)
    assert info.value.exit_code == EXIT_FINDINGS
    assert info.value.line() == "2 group(s) with lag above 7 ('app' has lag 21)"


def test_watch_must_be_positive_and_excludes_fail_above():
    R.check_lag_options(None, 10)
    R.check_lag_options(0.5, None)
    for watch, fail_above, message in (
        (0, None, "--watch SECONDS must be above 0"),
        (-1, None, "--watch SECONDS must be above 0"),
        (5, 10, "--fail-above is a one-shot check; it does not combine with --watch"),
    ):
        with pytest.raises(UsageError) as info:
            R.check_lag_options(watch, fail_above)
        assert info.value.exit_code == EXIT_USAGE and info.value.line() == message


def test_record_file_must_be_jsonl_or_parquet():
    R.check_lag_options(None, None, Path("lag.jsonl"))
    R.check_lag_options(None, None, Path("lag.parquet"))
    with pytest.raises(UsageError) as info:
        R.check_lag_options(None, None, Path("lag.txt"))
    assert info.value.line() == "--record lag.txt: unknown file type (name it .jsonl or .parquet)"


def test_watch_title_shows_the_interval_without_trailing_zeros():
    assert R.watch_title(5.0) == "groups lag, every 5s (Ctrl-C to stop)"
    assert R.watch_title(0.25) == "groups lag, every 0.25s (Ctrl-C to stop)"


class FakeIO:
    """The I/O of run_passes, recorded in order: passes come from ``passes``; the pause after
    the last one interrupts, as Ctrl-C does."""

    def __init__(self, passes: list[LagPass]) -> None:
        self.passes = list(passes)
        self.events: list[tuple[str, Any]] = []

    def sample(self) -> LagPass:
        self.events.append(("sample", None))
        return self.passes.pop(0)

    def show(self, rep: R.LagReport) -> None:
        self.events.append(("show", rep.group_totals))

    def note(self, line: str) -> None:
        self.events.append(("note", line))

    def record(self, rows: list[dict[str, Any]], ts_ms: int) -> int:
        self.events.append(("record", (len(rows), ts_ms)))
        return len(rows)

    def sleep(self, seconds: float) -> None:
        self.events.append(("sleep", seconds))
        if not self.passes:
            raise KeyboardInterrupt


def test_one_pass_records_warns_then_shows_and_returns_its_report():
    io = FakeIO([LagPass(99, ["app", "batch"], ROWS)])
    rep = run_passes(io.sample, io.show, io.note, every=False, record=io.record,
                     record_name="lag.jsonl", sleep=io.sleep)  # fmt: skip
    assert rep.group_totals == {"app": 21, "batch": 8} and rep.ts_ms == 99
    kinds = [kind for kind, _ in io.events]
    assert kinds == ["sample", "record", "note", "show"]  # no "recorded" note, no pause
    assert io.events[1] == ("record", (6, 99))
    assert io.events[2][1].startswith("kctl: warning: negative lag -490")


def test_every_group_asked_and_none_in_the_cluster_is_noted_and_shows_an_empty_report():
    io = FakeIO([LagPass(1, [], [])])
    rep = run_passes(io.sample, io.show, io.note, every=True, sleep=io.sleep)
    assert io.events == [("sample", None), ("note", NO_GROUPS), ("show", {})]
    assert rep.rows == [] and rep.footer == []
    io = FakeIO([LagPass(1, [], [])])
    run_passes(io.sample, io.show, io.note, every=False, sleep=io.sleep)
    assert ("note", NO_GROUPS) not in io.events  # named groups: nothing to say


def test_watching_repeats_passes_notes_each_recording_and_pauses_between_them():
    app = [r for r in ROWS if r["group"] == "app"]
    io = FakeIO([LagPass(1, ["app"], app), LagPass(2, ["app"], app[:1])])
    with pytest.raises(KeyboardInterrupt):
        run_passes(io.sample, io.show, io.note, every=False, watch=2.5, record=io.record,
                   record_name="lag.jsonl", sleep=io.sleep)  # fmt: skip
    assert io.events == [
        ("sample", None), ("record", (4, 1)), ("note", "recorded 4 sample(s) to lag.jsonl"),
        ("show", {"app": 21}), ("sleep", 2.5),
        ("sample", None), ("record", (1, 2)), ("note", "recorded 1 sample(s) to lag.jsonl"),
        ("show", {"app": 7}), ("sleep", 2.5),
    ]  # fmt: skip


# -- partial passes (a broker away, coordinators loading) -------------------------------------


def test_a_partial_pass_warns_what_it_missed_says_no_groups_never_and_its_report_names_them():
    unread = {"batch": "their coordinator, broker 2, did not answer: refused"}
    missed = ["the groups of __consumer_offsets partition(s) 1, 4 are not listed: their "
              "coordinator, broker 2, did not answer (refused)"]  # fmt: skip
    app = [r for r in ROWS if r["group"] == "app"]
    io = FakeIO([LagPass(7, ["app"], app, unread=unread, unlisted=missed)])
    rep = run_passes(io.sample, io.show, io.note, every=True, sleep=io.sleep)
    notes = [line for kind, line in io.events if kind == "note"]
    assert notes[:2] == [
        f"kctl: warning: {missed[0]}",
        "kctl: warning: lag of group(s) 'batch' not read: their coordinator, broker 2, did "
        "not answer: refused",
    ]
    assert rep.document()["unknown"] == [
        {"group": None, "reason": missed[0]},
        {"group": "batch", "reason": unread["batch"]},
    ]
    with pytest.raises(KctlError) as failed:
        R.check_complete(rep)
    assert failed.value.exit_code == 1
    assert failed.value.line() == (
        "lag incomplete (1 group(s) not read; the group list is incomplete: see the warnings above)"
    )
    R.check_complete(R.lag_report(app, 7))  # complete: nothing to say


def test_no_group_listed_while_a_broker_is_away_is_not_no_groups():
    io = FakeIO([LagPass(1, [], [], unlisted=["the groups of ... are not listed: no leader"])])
    run_passes(io.sample, io.show, io.note, every=True, sleep=io.sleep)
    assert ("note", NO_GROUPS) not in io.events


def test_a_one_shot_pass_whose_brokers_are_still_loading_fails_naming_them_before_showing():
    loading = {1: "COORDINATOR_LOAD_IN_PROGRESS", 3: "NOT_COORDINATOR"}
    io = FakeIO([LagPass(1, [], [], loading=loading)])
    with pytest.raises(KctlError) as failed:
        run_passes(io.sample, io.show, io.note, every=True, sleep=io.sleep)
    assert failed.value.line() == (
        "listing groups (still loading groups after --timeout: broker 1 "
        "(COORDINATOR_LOAD_IN_PROGRESS), broker 3 (NOT_COORDINATOR); their groups are not "
        "known yet, try again)"
    )
    assert io.events == [("sample", None)]  # nothing shown, no "no consumer groups"


def test_while_watching_a_loading_pass_is_a_warning_and_the_next_pass_comes():
    io = FakeIO([LagPass(1, [], [], loading={2: "COORDINATOR_LOAD_IN_PROGRESS"}),
                 LagPass(2, ["app"], [])])  # fmt: skip
    with pytest.raises(KeyboardInterrupt):
        run_passes(io.sample, io.show, io.note, every=True, watch=1, sleep=io.sleep)
    assert ("note", "kctl: warning: the groups of broker 2 (COORDINATOR_LOAD_IN_PROGRESS) are "
            "not listed: still loading") in io.events  # fmt: skip
    assert ("note", NO_GROUPS) not in io.events
