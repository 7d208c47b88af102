"""Lag passes over a cluster only partly there, without a cluster (kctl.lag.partial and what
uses it): what a round of ListGroups missed and why, the groups not read because a partition's
leader did not answer, what the exporter keeps serving (stale) for the groups it could not
read, its per-group stale series and partial counter, the Burrow windows of those groups kept,
and the warnings and exit of groups list/describe over an incomplete listing. The same paths
on a real cluster with brokers stopped and killed: tests/test_lag_faults.py."""

from __future__ import annotations

from typing import Any

import pytest

from kctl.errors import KctlError
from kctl.lag import metrics as M
from kctl.lag import partial as P
from kctl.lag import rules as R
from kctl.lag.burrow import StatusWindows
from kctl.lag.model import Described, Group, LagPass, Listed


def row(group: str, partition: int, committed: int, end: int) -> dict[str, Any]:
    return {"group": group, "topic": "t", "partition": partition, "committed_offset": committed,
            "log_start_offset": 0, "log_end_offset": end, "lag": end - committed,
            "member_id": None, "client_id": None, "host": None, "group_type": "classic",
            "time_lag_ms": None}  # fmt: skip


# -- what a listing missed ----------------------------------------------------------------------


def test_partitions_claimed_by_a_broker_that_answered_miss_nothing():
    assert P.unlisted({0: 1, 1: 2, 2: 1}, {0, 1, 2}, {}, {}) == ([], [])


def test_no_offsets_topic_no_partitions_nothing_missed():
    assert P.unlisted({}, set(), {}, {}) == ([], [])


def test_a_broker_that_did_not_answer_misses_its_partitions_a_leaderless_one_misses_too():
    leaders = {0: 1, 1: 2, 2: 2, 3: -1, 4: 3}
    missed, moving = P.unlisted(leaders, {0, 4}, {}, {2: "KafkaConnectionError: refused"})
    assert missed == [
        "the groups of __consumer_offsets partition(s) 1, 2 are not listed: their coordinator, "
        "broker 2, did not answer (KafkaConnectionError: refused)",
        "the groups of __consumer_offsets partition(s) 3 are not listed: the partition has no "
        "leader",
    ]
    assert moving == []


def test_a_partition_its_leader_does_not_claim_yet_is_moving_one_of_a_loading_broker_is_not_told():
    # Broker 1 answered but does not list partition 5 yet (leadership moving to it); broker 3
    # is loading (told by the loading brokers, not here).
    missed, moving = P.unlisted({5: 1, 6: 3}, set(), {3: "COORDINATOR_LOAD_IN_PROGRESS"}, {})
    assert missed == []
    assert moving == [
        "the groups of __consumer_offsets partition(s) 5 are not listed: broker 1, their "
        "leader, does not lead them yet"
    ]


def test_a_broker_away_that_leads_nothing_misses_nothing():
    assert P.unlisted({0: 1}, {0}, {}, {2: "refused"}) == ([], [])


def test_a_listing_still_loading_fails_naming_the_brokers_and_what_they_answered():
    P.check_listed({})
    with pytest.raises(KctlError) as failed:
        P.check_listed({2: "COORDINATOR_LOAD_IN_PROGRESS"})
    assert failed.value.exit_code == 1
    assert "broker 2 (COORDINATOR_LOAD_IN_PROGRESS)" in failed.value.line()
    assert "not known yet" in failed.value.line()


def test_groups_reading_a_partition_without_log_offsets_are_not_read_naming_the_first():
    wanted = {"a": {("t", 0), ("t", 1), ("u", 0)}, "b": {("t", 2)}, "c": set()}
    lost = {("t", 1): "its leader, broker 2, did not answer (refused)",
            ("u", 0): "the partition has no leader"}  # fmt: skip
    assert P.unread_by_partitions(wanted, lost) == {
        "a": "no log offsets for t[1] (and 1 more partition(s)): its leader, broker 2, did not "
        "answer (refused)"
    }


def test_warnings_and_json_entries_of_a_partial_pass():
    done = LagPass(1, ["a"], [], unread={"b": "why b", "c": "why b", "d": "why d"},
                   unlisted=["missed x"], loading={3: "NOT_COORDINATOR"})  # fmt: skip
    assert P.pass_warnings(done) == [
        "kctl: warning: missed x",
        "kctl: warning: the groups of broker 3 (NOT_COORDINATOR) are not listed: still loading",
        "kctl: warning: lag of group(s) 'b', 'c' not read: why b",
        "kctl: warning: lag of group(s) 'd' not read: why d",
    ]
    assert P.unknown_entries(done) == [
        {"group": None, "reason": "missed x"},
        {"group": None, "reason": "still loading: broker 3 (NOT_COORDINATOR)"},
        {"group": "b", "reason": "why b"},
        {"group": "c", "reason": "why b"},
        {"group": "d", "reason": "why d"},
    ]
    assert not done.complete and LagPass(1, ["a"], []).complete
    assert P.incomplete_error([]) is None
    only_groups = P.incomplete_error([{"group": "b", "reason": "x"}])
    assert only_groups is not None
    assert only_groups.line() == "lag incomplete (1 group(s) not read: see the warnings above)"


# -- what the exporter serves -------------------------------------------------------------------


LAST = {"a": [row("a", 0, 1, 5)], "b": [row("b", 0, 2, 5), row("b", 1, 0, 5)]}


def test_a_complete_collection_serves_what_it_read_and_forgets_groups_gone():
    kept = P.carry_over(LAST, [row("a", 0, 3, 9)], ["a", "b"], False)
    assert kept.rows == [row("a", 0, 3, 9)]  # b read with no rows left: gone from the snapshot
    assert kept.stale == set() and kept.last == {"a": [row("a", 0, 3, 9)]}
    kept = P.carry_over(LAST, [row("a", 0, 3, 9)], ["a"], False)  # b not even asked: gone
    assert kept.rows == [row("a", 0, 3, 9)] and kept.stale == set()


def test_a_group_not_read_keeps_its_last_rows_stale_the_others_are_fresh():
    kept = P.carry_over(LAST, [row("a", 0, 3, 9), row("new", 0, 0, 1)], ["a", "new"], False,
                        unread=["b", "never-seen"])  # fmt: skip
    assert kept.rows == [row("a", 0, 3, 9), *LAST["b"], row("new", 0, 0, 1)]
    assert kept.stale == {"b"}  # a group never read has nothing to keep
    assert kept.last == {"a": [row("a", 0, 3, 9)], "b": LAST["b"], "new": [row("new", 0, 0, 1)]}


def test_a_failed_collection_keeps_every_group_stale():
    kept = P.carry_over(LAST, [], [], True)
    assert kept.rows == [*LAST["a"], *LAST["b"]]
    assert kept.stale == {"a", "b"} and kept.last == LAST


def test_burrow_windows_of_groups_not_read_are_kept_as_they_were():
    windows = StatusWindows(4)
    for i in range(3):  # b: offset stuck, lag growing: STALL
        windows.observe([row("a", 0, i, 10), row("b", 0, 2, 5 + i)], i)
    assert len(windows) == 2
    got = windows.observe([row("a", 0, 5, 10)], 3, keep={"b"})
    assert set(got) == {("a", "t", 0)} and len(windows) == 2
    # b comes back: its window went on (its offset has not moved for the whole window: STOP),
    # not started over (a window of one entry is STALL, as a forgotten one would be)
    got = windows.observe([row("a", 0, 6, 10), row("b", 0, 2, 9)], 4)
    assert got[("b", "t", 0)] == "STOP"
    forgetful = StatusWindows(4)
    for i in range(3):
        forgetful.observe([row("a", 0, i, 10), row("b", 0, 2, 5 + i)], i)
    forgetful.observe([row("a", 0, 5, 10)], 3)
    assert forgetful.observe([row("b", 0, 2, 9)], 4)[("b", "t", 0)] == "STALL"


def test_per_group_stale_series_and_the_partial_counter():
    rows = [row("a", 0, 1, 5), row("b", 0, 2, 5)]
    health = M.Health(collections=3, partial=2, stale=True, stale_groups=frozenset({"b"}))
    fams = {f.name: f for f in M.families(rows, {}, health, "prod")}
    stale = {tuple(s.labels.values()): s.value for s in fams["kctl_consumergroup_stale"].samples}
    assert stale == {("prod", "a", "classic"): 0.0, ("prod", "b", "classic"): 1.0}
    assert fams["kctl_lag_exporter_partial_collections"].type == "counter"
    assert [s.value for s in fams["kctl_lag_exporter_partial_collections"].samples
            if s.name.endswith("_total")] == [2.0]  # fmt: skip
    assert [s.value for s in fams["kctl_lag_exporter_stale"].samples] == [1.0]


# -- groups list / describe over an incomplete listing ------------------------------------------


def test_list_and_describe_warn_what_the_listing_missed_and_exit_1_after_the_rows():
    listed = [Listed("a", "Empty", "classic", True)]
    described = {"a": Group("a", "Empty", None, None, 1)}
    table = R.list_table(listed, described, [], ["broker 2 did not answer"])
    assert [r["group"] for r in table.rows] == ["a"]
    assert table.notes == ["kctl: warning: broker 2 did not answer"]
    assert table.failure is not None and table.failure.exit_code == 1
    assert R.list_table(listed, described, []).failure is None
    d = Described("state", ["a"], described, addresses={1: "h:1"}, unlisted=["p 3: no leader"])
    table = R.describe_table(d)
    assert table.notes[0] == "kctl: warning: p 3: no leader" and table.failure is not None
