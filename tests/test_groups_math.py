"""Pure lag and reset arithmetic (kctl.lag.arithmetic), on values worked out by hand."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kctl.errors import KctlError, UsageError
from kctl.lag import arithmetic as L

T0, T1 = ("t", 0), ("t", 1)
MARKS = {T0: (5, 50), T1: (0, 20)}
COMMITTED = {T0: 10}  # T1 has no commit


def _targets(spec, value=None, times=None):
    return {(r.topic, r.partition): (r.target, r.delta, r.clamped)
            for r in L.plan_reset(spec, value, [T0, T1], COMMITTED, MARKS, times)}  # fmt: skip


def test_lag_is_end_minus_committed_and_none_without_commit():
    assert L.lag_of(10, 50) == 40
    assert L.lag_of(None, 50) is None and L.lag_of(-1, 50) is None


def test_a_commit_beyond_the_log_end_shows_as_negative_lag_not_zero():
    # DESIGN.md: lag = log_end_offset - committed_offset; a log that ends before the commit
    # (recreated topic) must stay visible.
    assert L.lag_of(60, 50) == -10


def _row(partition, committed, end, group="g", topic="t"):
    return {"group": group, "topic": topic, "partition": partition,
            "committed_offset": committed, "log_end_offset": end,
            "lag": L.lag_of(committed, end)}  # fmt: skip


def test_negative_lag_is_flagged_and_counts_zero_in_totals():
    rows = [_row(0, 500, 100), _row(1, 3, 10), _row(2, -1, 10), _row(0, 5, 5, topic="u")]
    assert [L.lag_flag(r["lag"]) for r in rows] == ["negative_lag", None, None, None]
    groups, topics = L.lag_totals(rows)
    # -400 does not hide partition 1's lag of 7; no commit and lag 0 add nothing
    assert groups == {"g": 7} and topics == {("g", "t"): 7, ("g", "u"): 0}
    assert [L.counted_lag(v) for v in (-400, 0, None, 7)] == [0, 0, 0, 7]


def test_negative_lag_warning_names_group_topic_partition_and_offsets():
    text = L.negative_lag_warning(_row(3, 500, 100, group="app", topic="orders"))
    assert text.startswith("negative lag -400 in group 'app', topic 'orders' partition 3: ")
    assert "committed offset 500 is beyond the log end offset 100" in text
    assert "\n" not in text


def test_each_spec_targets_and_deltas():
    assert _targets("earliest") == {T0: (5, -5, None), T1: (0, None, None)}
    assert _targets("latest") == {T0: (50, 40, None), T1: (20, None, None)}
    assert _targets("current") == {T0: (10, 0, None), T1: (20, None, None)}
    assert _targets("offset", 12) == {T0: (12, 2, None), T1: (12, None, None)}
    assert L.plan_reset("shift", -3, [T0], COMMITTED, MARKS)[0].target == 7


def test_shift_by_refuses_a_partition_without_a_committed_offset():
    with pytest.raises(KctlError) as info:
        _targets("shift", -3)
    assert info.value.line().startswith(f"cannot shift the offset of {T1[0]}[{T1[1]}] (")
    assert "no committed offset" in info.value.line()


def test_targets_are_clamped_into_the_log_and_say_so():
    assert _targets("offset", 1) == {T0: (5, -5, "to log start"), T1: (1, None, None)}
    assert _targets("offset", 99) == {T0: (50, 40, "to log end"), T1: (20, None, "to log end")}


def test_time_spec_uses_list_offsets_answer_and_log_end_when_none():
    assert _targets("time", times={T0: 30, T1: -1}) == {T0: (30, 20, None), T1: (20, None, None)}


def test_file_spec_touches_only_listed_partitions():
    assert _targets("file", {T1: 7}) == {T1: (7, None, None)}


def test_reset_csv_is_kafka_export_format_and_names_bad_lines():
    assert L.parse_reset_csv("t,0,5\nt,1,7\n\n", "f.csv") == {T0: 5, T1: 7}
    with pytest.raises(UsageError, match=r"malformed line 2 in f\.csv"):
        L.parse_reset_csv("t,0,5\nt,1\n", "f.csv")
    rows = L.plan_reset("offset", 12, [T0, T1], COMMITTED, MARKS)
    assert L.parse_reset_csv(L.export_csv(rows), "x") == {T0: 12, T1: 12}


_offsets = st.integers(min_value=-5, max_value=200)


@given(
    start=st.integers(min_value=0, max_value=50),
    length=st.integers(min_value=0, max_value=100),
    committed=st.one_of(st.none(), st.integers(min_value=0, max_value=150)),
    spec=st.sampled_from(["earliest", "latest", "current", "offset", "shift"]),
    value=_offsets,
)
def test_every_target_lies_in_the_log_and_a_clamp_is_named(start, length, committed, spec, value):
    end = start + length
    marks = {T0: (start, end)}
    done = {} if committed is None else {T0: committed}
    if spec == "shift" and committed is None:
        with pytest.raises(KctlError):
            L.plan_reset(spec, value, [T0], done, marks)
        return
    (row,) = L.plan_reset(spec, value, [T0], done, marks)
    assert start <= row.target <= end
    base = end if committed is None else committed
    wanted = {"earliest": start, "latest": end, "current": base, "offset": value,
              "shift": base + value}[spec]  # fmt: skip
    assert (row.clamped is None) == (wanted == row.target)
    assert row.delta == (None if committed is None else row.target - committed)
    assert L.parse_reset_csv(L.export_csv([row]), "x") == {T0: row.target}
