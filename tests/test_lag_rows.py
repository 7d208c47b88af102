"""The lag rows of every group type and their time lag, without a cluster: kctl.lag.rows on
groups, commits, share-group start offsets and log offsets written by hand."""

from __future__ import annotations

from kctl.lag import rows as L
from kctl.lag.model import Group, Member


def group(gid: str, kind: str, members: list[Member] | None = None) -> Group:
    state = "Stable" if members else "Empty"
    return Group(gid, state, None, None, 1, members or [], type=kind)


def member(mid: str, *tps: tuple[str, int]) -> Member:
    return Member(mid, None, "client-" + mid, "/127.0.0.1", list(tps))


MARKS = {("t", 0): (0, 100), ("t", 1): (40, 100), ("u", 0): (0, 0)}


def test_every_group_type_gets_the_same_row_with_its_type():
    groups = {
        "c": group("c", "classic"),
        "k": group("k", "consumer", [member("m1", ("t", 0))]),
        "s": group("s", "streams"),
        "h": group("h", "share"),
    }
    committed = {"c": {("t", 0): 90}, "k": {("t", 0): 95}, "s": {("t", 1): 100}}
    shares = {"h": {("t", 0): (70, 25)}}
    rows = L.lag_rows(L.lag_plan(groups, ["c", "k", "s", "h"], committed, shares), MARKS)
    got = [(r["group"], r["group_type"], r["committed_offset"], r["lag"]) for r in rows]
    # A share group's lag is the broker's (acknowledged records inside the window do not lag).
    assert got == [("c", "classic", 90, 10), ("k", "consumer", 95, 5), ("s", "streams", 100, 0),
                   ("h", "share", 70, 25)]  # fmt: skip
    assert rows[1]["member_id"] == "m1" and rows[1]["client_id"] == "client-m1"
    assert all(r["time_lag_ms"] is None for r in rows)  # not asked for


def test_a_share_group_without_the_brokers_lag_lags_from_its_start_offset():
    plan = L.lag_plan({"h": group("h", "share")}, ["h"], {}, {"h": {("t", 0): (70, -1)}})
    rows = L.lag_rows(plan, MARKS)
    assert (rows[0]["committed_offset"], rows[0]["lag"]) == (70, 30)


def test_an_assigned_partition_without_a_commit_has_no_lag_and_no_time_lag():
    g = group("c", "classic", [member("m", ("t", 0))])
    rows = L.lag_rows(L.lag_plan({"c": g}, ["c"], {}, {}), MARKS, record_times={}, now_ms=10_000)
    assert (rows[0]["committed_offset"], rows[0]["lag"], rows[0]["time_lag_ms"]) == (-1, None, None)


def test_time_lag_is_now_minus_the_first_unconsumed_records_timestamp():
    groups = {"a": group("a", "classic"), "b": group("b", "classic")}
    committed = {"a": {("t", 0): 90, ("t", 1): 100}, "b": {("t", 0): 90, ("t", 1): 10}}
    # b's commit on t-1 is below the log start (40): its first record still there is read.
    plan = L.lag_plan(groups, ["a", "b"], committed, {})
    wanted = plan.reads(MARKS)
    assert wanted == {("t", 0): {90}, ("t", 1): {40}}  # a and b share the read of t-0 at 90
    times = {(("t", 0), 90): 70_000, (("t", 1), 40): 100_000}
    rows = L.lag_rows(plan, MARKS, record_times=times, now_ms=130_000)
    assert [(r["group"], r["partition"], r["time_lag_ms"]) for r in rows] == [
        ("a", 0, 60_000), ("a", 1, 0), ("b", 0, 60_000), ("b", 1, 30_000)]  # fmt: skip


def test_time_lag_is_zero_when_only_markers_are_left_and_never_negative():
    assert L.time_lag_ms(5, 10, None, 1_000) == 0  # no data record before the end
    assert L.time_lag_ms(5, 10, 2_000, 1_000) == 0  # a producer's clock ahead of ours
    assert L.time_lag_ms(10, 10, None, 1_000) == 0  # caught up
    assert L.time_lag_ms(None, 10, 5, 1_000) is None  # no commit
    assert L.time_lag_ms(3, -1, 5, 1_000) is None  # the partition is gone


def test_topics_narrow_the_rows_and_the_reads():
    g = group("c", "classic", [member("m", ("u", 0))])
    rows = L.lag_rows(L.lag_plan({"c": g}, ["c"], {"c": {("t", 0): 1}}, {}, topics=["u"]), MARKS)
    assert [(r["topic"], r["partition"]) for r in rows] == [("u", 0)]


def test_a_gone_partition_has_log_offsets_minus_one_and_no_lag():
    plan = L.lag_plan({"c": group("c", "classic")}, ["c"], {"c": {("gone", 3): 7}}, {})
    rows = L.lag_rows(plan, MARKS)
    assert (rows[0]["log_start_offset"], rows[0]["log_end_offset"], rows[0]["lag"]) == (
        -1,
        -1,
        None,
    )


def test_an_unread_first_record_gives_no_time_lag_not_zero():
    groups = {"a": group("a", "classic")}
    plan = L.lag_plan(groups, ["a"], {"a": {("t", 0): 90}}, {})
    rows = L.lag_rows(plan, MARKS, record_times={(("t", 0), 90): L.UNREAD}, now_ms=5)
    assert (rows[0]["lag"], rows[0]["time_lag_ms"]) == (10, None)


def test_unread_time_lags_are_one_warning_naming_the_first_and_how_many_more():
    from kctl.lag.rules import unread_times_note

    one = unread_times_note({(("t", 3), 7): "NOT_LEADER_OR_FOLLOWER"})
    assert one == ("kctl: warning: no time lag for t[3]: its first unconsumed record could not "
                   "be read (NOT_LEADER_OR_FOLLOWER)")  # fmt: skip
    many = unread_times_note({(("t", 3), 7): "x", (("a", 0), 1): "y", (("t", 1), 2): "z"})
    assert many.startswith("kctl: warning: no time lag for a[0] and 2 more:") and "(y)" in many
