"""Burrow's evaluation rules in kctl.lag.burrow, pure: no cluster, no Spark. The values are
worked out by hand in each test; the property tests hold the incremental windows of the
exporter (``StatusWindows``) to ``statuses()`` over the whole sequence, and ``statuses()`` to a
reference written here straight from the window definitions (each sample's frame of the last N
samples, recomputed from scratch)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kctl.lag import burrow
from kctl.lag.burrow import Entry, StatusWindows, group_status, worst_status

BASE_TS = 1_700_000_000_000


def entries(
    committed: list[int], leo: list[int], members: list[str | None] | None = None
) -> list[Entry]:
    members = members or ["m-1"] * len(committed)
    return [
        Entry(BASE_TS + i * 1000, c, None if c < 0 else e - c, m)
        for i, (c, e, m) in enumerate(zip(committed, leo, members, strict=True))
    ]


def statuses(
    committed: list[int], leo: list[int], members: list[str | None] | None = None, window: int = 4
) -> list[str | None]:
    return [s for s, _ in burrow.statuses(entries(committed, leo, members), window)]


# --- each rule ------------------------------------------------------------------------------


def test_lag_zero_anywhere_in_the_window_is_ok() -> None:
    # lags 0, 5, 10, 10: the zero is still inside a window of 4 at the last sample
    assert statuses([0, 5, 10, 20], [0, 10, 20, 30])[-1] == "OK"


def test_lag_zero_leaving_the_window_lets_the_rules_speak() -> None:
    # lags 0, 10, 20, 30, 40 with offsets advancing: window 4 at the last sample holds no zero
    assert statuses([0, 10, 20, 30, 40], [0, 20, 40, 60, 80]) == ["OK", "OK", "OK", "OK", "WARN"]


def test_current_lag_zero_is_ok_whatever_came_before() -> None:
    assert statuses([10, 10, 10, 50], [50, 50, 50, 50])[-1] == "OK"


def test_committed_offset_going_backwards_is_rewind_before_anything_else() -> None:
    # lags 20, 20, 35, 35; no member either (STOP would hold too): REWIND is checked first
    assert statuses([10, 20, 15, 25], [30, 40, 50, 60], [None] * 4)[-1] == "REWIND"


def test_a_rewind_that_left_the_window_no_longer_counts() -> None:
    # offsets 20, 10, 20, 30, 40, 50 (lags 10..): at the last sample the window of 4 holds the
    # pairs 20->30->40->50 only
    got = statuses([20, 10, 20, 30, 40, 50], [30, 30, 40, 50, 60, 70])
    assert got[1] == "REWIND" and got[-1] == "WARN"


def test_no_commit_for_longer_than_the_window_spans_is_stop() -> None:
    # The member leaves after sample 3 (t=3s). Commit times: 0,1,2,3,3,3 s.
    # t=4: now-last = 1 s, last-first = 2 s (window 1..4)  -> not stopped; lag non-decreasing
    # t=5: window 2..5: now-last = 2 s > last-first = 1 s  -> STOP
    members: list[str | None] = ["m", "m", "m", "m", None, None]
    got = statuses([10, 20, 30, 40, 40, 40], [20, 30, 40, 50, 60, 70], members)
    assert got[1:] == ["WARN", "WARN", "WARN", "WARN", "STOP"]


def test_commit_time_without_a_member_is_where_the_offset_last_changed_even_before_the_window() -> (
    None
):
    # No member at all: commit times 0, 1, 1, 1, 1, 1 s (the offset changes at t=1 only).
    # t=5, window 2..5: first commit 1 s, last 1 s, now-last 4 s > 0 -> STOP although the
    # change itself left the window.
    got = statuses([10, 20, 20, 20, 20, 20], [30, 40, 50, 60, 70, 80], [None] * 6)
    assert got[-1] == "STOP"


def test_committed_offset_not_moving_with_a_live_member_is_stall() -> None:
    assert statuses([10, 10, 10, 10], [20, 30, 40, 50])[-1] == "STALL"


def test_offsets_advancing_while_lag_never_decreases_is_warn() -> None:
    assert statuses([10, 20, 30, 40], [20, 40, 60, 80])[-1] == "WARN"  # lags 10 20 30 40
    assert (
        statuses([10, 20, 30, 40], [20, 30, 40, 50])[-1] == "WARN"
    )  # fixed: "fixed or increasing"


def test_lag_that_decreases_once_in_the_window_is_ok() -> None:
    # lags 10, 20, 15, 30
    assert statuses([10, 20, 35, 40], [20, 40, 50, 70])[-1] == "OK"


def test_negative_lag_is_never_ok() -> None:
    # A sample reads the commit before the log end, so a negative lag is real: the log ends
    # before the commit (truncated or recreated under it). Burrow would store 0 and say OK.
    assert statuses([10, 20, 60], [30, 40, 50]) == ["STALL", "WARN", "NEGATIVE"]
    # caught up (lag 0) and then the log is cut under the commit: NEGATIVE, not OK
    assert statuses([50, 50, 50], [50, 50, 20])[-1] == "NEGATIVE"


def test_a_negative_lag_in_the_window_is_not_the_lag_zero_of_rule_1() -> None:
    # lags -10, 10, 20, 30 with offsets advancing: no lag zero in the window, lag growing: WARN
    assert statuses([60, 60, 70, 80], [50, 70, 90, 110]) == ["NEGATIVE", "STALL", "WARN", "WARN"]


def test_sample_without_a_committed_offset_has_no_status() -> None:
    assert statuses([-1, -1], [10, 20]) == [None, None]


def test_samples_without_a_commit_take_a_place_in_the_window() -> None:
    # lag 0 at t=0, then two samples without a commit, then lag 10, 10: with a window of 4
    # the zero is still in at t=3, gone at t=4 (offset fixed, member live: STALL)
    got = statuses([5, -1, -1, 10, 10], [5, 8, 9, 20, 20])
    assert got == ["OK", None, None, "OK", "STALL"]


def test_window_complete_is_the_share_of_the_window_with_a_commit() -> None:
    got = burrow.statuses(entries([1, 2, 3, -1, 5, 6], [5, 6, 7, 8, 9, 10]), 4)
    assert [c for _, c in got] == [0.25, 0.5, 0.75, 0.75, 0.75, 0.75]


def test_a_window_of_one_sample_judges_that_sample_alone() -> None:
    # no pairs: not a rewind, stalled (Burrow's loops are vacuously true); lag 0 is OK
    assert statuses([10, 5, 5], [20, 5, 10], window=1) == ["STALL", "OK", "STALL"]


def test_a_window_below_one_sample_is_refused() -> None:
    import pytest

    with pytest.raises(ValueError):
        burrow.statuses([], 0)
    with pytest.raises(ValueError):
        StatusWindows(0)


# --- group and worst ------------------------------------------------------------------------


def test_group_status_is_the_worst_partition_with_stop_stall_rewind_negative_as_err() -> None:
    assert group_status(["OK", "OK"]) == "OK"
    assert group_status(["OK", "WARN"]) == "WARN"
    assert group_status(["WARN", "STOP"]) == "ERR"
    assert group_status(["OK", "STALL"]) == "ERR"
    assert group_status(["REWIND", "OK"]) == "ERR"
    assert group_status(["NEGATIVE", "OK"]) == "ERR"
    assert group_status([None, "OK"]) == "OK"
    assert group_status([None]) == "OK"
    assert group_status([]) == "OK"


def test_worst_status_keeps_the_status_itself_and_none_without_one() -> None:
    assert worst_status(["OK", "STALL", "WARN"]) == "STALL"
    assert worst_status(["NEGATIVE", "REWIND"]) == "NEGATIVE"
    assert worst_status([None, None]) is None
    assert worst_status([]) is None


# --- the exporter's windows -----------------------------------------------------------------


def _row(
    group: str, partition: int, committed: int, leo: int, member: str | None
) -> dict[str, Any]:
    lag = None if committed < 0 else leo - committed
    return {
        "group": group,
        "topic": "t",
        "partition": partition,
        "committed_offset": committed,
        "lag": lag,
        "member_id": member,
    }


def test_observe_reports_every_partition_of_the_pass() -> None:
    windows = StatusWindows(4)
    for i, (c, e) in enumerate(zip([10, 10, 10, 10], [20, 30, 40, 50], strict=True)):
        got = windows.observe([_row("g", 0, c, e, "m"), _row("h", 0, 0, 0, "m")], BASE_TS + i)
    assert got == {("g", "t", 0): "STALL", ("h", "t", 0): "OK"}


def test_observe_forgets_a_partition_absent_from_a_pass_and_starts_it_over() -> None:
    windows = StatusWindows(4)
    for i in range(4):  # offset fixed, lag growing: STALL once there are pairs
        got = windows.observe([_row("g", 0, 10, 20 + i, "m"), _row("h", 0, 0, 0, "m")], i)
    assert got[("g", "t", 0)] == "STALL" and len(windows) == 2
    windows.observe([_row("h", 0, 0, 0, "m")], 4)
    assert len(windows) == 1
    # back: a new window with one entry (no pairs: STALL), not the old one continued
    got = windows.observe([_row("g", 0, 5, 30, "m")], 5)
    assert got == {("g", "t", 0): "STALL"} and len(windows) == 1
    got = windows.observe([_row("g", 0, 6, 30, "m")], 6)  # offset up from 5: not a rewind
    assert got[("g", "t", 0)] == "OK"  # lag 25 -> 24 decreased


def test_observe_memory_stays_bounded_by_the_window() -> None:
    windows = StatusWindows(3)
    for i in range(1000):
        windows.observe([_row("g", p, i, i + p, "m") for p in range(5)], i)
    sizes = [len(w) for w in windows._partitions.values()]
    assert sizes == [3] * 5


# --- properties -----------------------------------------------------------------------------


def _reference(sequence: list[Entry], window: int) -> list[tuple[str | None, float]]:
    """Each sample judged from scratch over its frame, as the Spark window definitions say."""
    offs = [e.committed_offset if e.committed_offset >= 0 else None for e in sequence]
    lags = [None if o is None else max(e.lag or 0, 0) for e, o in zip(sequence, offs, strict=True)]
    negs = [o is not None and (e.lag or 0) < 0 for e, o in zip(sequence, offs, strict=True)]
    commit_ts: list[int | None] = []
    last_change: int | None = None
    for i, e in enumerate(sequence):
        if offs[i] is not None and (i == 0 or offs[i - 1] is None or offs[i] != offs[i - 1]):
            last_change = e.ts_ms
        if offs[i] is None:
            commit_ts.append(None)
        else:
            commit_ts.append(e.ts_ms if e.member_id is not None else last_change)
    out: list[tuple[str | None, float]] = []
    for k, e in enumerate(sequence):
        frame = range(max(0, k - window + 1), k + 1)
        pairs = [(i - 1, i) for i in frame if i - 1 in frame]
        complete = min(sum(offs[i] is not None for i in frame) / window, 1.0)
        d_off = [offs[i] - offs[j] for j, i in pairs if offs[i] is not None and offs[j] is not None]  # type: ignore[operator]
        d_lag = [lags[i] - lags[j] for j, i in pairs if lags[i] is not None and lags[j] is not None]  # type: ignore[operator]
        status: str | None
        if offs[k] is None:
            status = None
        elif negs[k]:
            status = "NEGATIVE"
        elif lags[k] == 0 or any(lags[i] == 0 and not negs[i] for i in frame):
            status = "OK"
        elif any(d < 0 for d in d_off):
            status = "REWIND"
        else:
            last = commit_ts[k]
            first = next(commit_ts[i] for i in frame if commit_ts[i] is not None)
            assert last is not None and first is not None
            if e.ts_ms - last > last - first:
                status = "STOP"
            elif all(d == 0 for d in d_off):
                status = "STALL"
            elif all(d >= 0 for d in d_lag):
                status = "WARN"
            else:
                status = "OK"
        out.append((status, complete))
    return out


# Small offsets and lags so that equal values, zeros, rewinds and negatives all come up.
_step = st.tuples(
    st.integers(min_value=-1, max_value=6),  # committed offset (-1: none)
    st.integers(min_value=-2, max_value=4),  # lag (negative: log cut under the commit)
    st.sampled_from(["m", None]),  # member
    st.integers(min_value=1, max_value=3),  # seconds since the sample before
)


def _sequence(steps: list[tuple[int, int, str | None, int]]) -> list[Entry]:
    ts = BASE_TS
    out = []
    for committed, lag, member, gap in steps:
        ts += gap * 1000
        out.append(Entry(ts, committed, None if committed < 0 else lag, member))
    return out


@settings(max_examples=400, deadline=None)
@given(st.lists(_step, max_size=30), st.integers(min_value=1, max_value=6))
def test_statuses_equal_the_window_definitions_recomputed_per_sample(
    steps: list[tuple[int, int, str | None, int]], window: int
) -> None:
    sequence = _sequence(steps)
    assert burrow.statuses(sequence, window) == _reference(sequence, window)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(_step, min_size=1, max_size=25), min_size=1, max_size=4),
    st.integers(min_value=1, max_value=6),
)
def test_observe_pass_by_pass_gives_the_statuses_of_the_whole_sequence(
    per_partition: list[list[tuple[int, int, str | None, int]]], window: int
) -> None:
    # Every partition is in every pass (the passes are as many as the longest sequence; a
    # shorter one repeats its last sample, as a partition nobody touches would).
    passes = max(len(steps) for steps in per_partition)
    padded = [steps + [steps[-1]] * (passes - len(steps)) for steps in per_partition]
    times = [BASE_TS + 1000 * sum(step[3] for step in padded[0][: i + 1]) for i in range(passes)]
    sequences = {
        p: [
            Entry(t, c, None if c < 0 else lag, m)
            for t, (c, lag, m, _) in zip(times, steps, strict=True)
        ]
        for p, steps in enumerate(padded)
    }
    expected = {p: [s for s, _ in burrow.statuses(seq, window)] for p, seq in sequences.items()}
    windows = StatusWindows(window)
    got: dict[int, list[str | None]] = {p: [] for p in sequences}
    for i, t in enumerate(times):
        rows = [
            {
                "group": "g",
                "topic": "t",
                "partition": p,
                "committed_offset": seq[i].committed_offset,
                "lag": seq[i].lag,
                "member_id": seq[i].member_id,
                "client_id": None,
            }
            for p, seq in sequences.items()
        ]
        result = windows.observe(rows, t)
        assert set(result) == {("g", "t", p) for p in sequences}
        for p in sequences:
            got[p].append(result[("g", "t", p)])
    assert got == expected
