"""The rules and rows of groups list/describe/delete/delete-offsets/reset-offsets without a
cluster (kctl.lag.rules), on hand-written groups: which options go together, what is refused
and why, and the rows, columns and notes each view shows."""

from __future__ import annotations

import re
from typing import Any

import pytest

from kctl.errors import EXIT_USAGE, KctlError, NotFoundError, UsageError
from kctl.lag import rules as R
from kctl.lag.arithmetic import ResetRow
from kctl.lag.model import (
    Described,
    Group,
    Listed,
    Member,
    OffsetsDeleted,
    ResetPlan,
)


def group(name: str, state: str = "Empty", members: list[Member] | None = None,
          kind: str = "classic", **kw: Any) -> Group:  # fmt: skip
    return Group(name, state, kw.pop("protocol_type", None), kw.pop("assignor", None),
                 kw.pop("coordinator", 1), members or [], kind, **kw)  # fmt: skip


def member(mid: str, assignment: list[tuple[str, int]] | None = None, **kw: Any) -> Member:
    return Member(mid, None, f"client-{mid}", "/10.0.0.1", assignment or [], **kw)


LIVE = member("m1", [("orders", 0), ("orders", 1)])


# -- which groups ------------------------------------------------------------------------------


def test_groups_are_named_or_all_never_both_nor_neither_unless_all_is_the_default():
    assert R.lists_every_group([], True) is True
    assert R.lists_every_group(["a"], False) is False
    assert R.lists_every_group([], False, default_all=True) is True
    with pytest.raises(UsageError, match="name groups or give --all-groups, not both"):
        R.lists_every_group(["a"], True, default_all=True)
    with pytest.raises(UsageError, match="name at least one group, or give --all-groups"):
        R.lists_every_group([], False)


def test_group_states_are_kafkas_in_any_case_and_an_unknown_one_is_a_usage_error():
    assert R.group_states(["stable", "EMPTY", "NotReady"]) == ["stable", "EMPTY", "NotReady"]
    assert R.group_states([]) == []
    with pytest.raises(UsageError) as info:
        R.group_states(["Stable", "Bogus"])
    assert info.value.exit_code == EXIT_USAGE
    assert info.value.line() == (
        "unknown group state 'Bogus' (expected Stable, Empty, PreparingRebalance, "
        "CompletingRebalance, Assigning, Reconciling, NotReady, Dead, Unknown)"
    )


def test_groups_list_with_an_unknown_state_exits_2_before_asking_the_cluster():
    from conftest import kctl_environment, run_kctl

    env = kctl_environment(KCTL_BOOTSTRAP_SERVERS="127.0.0.1:1")  # nothing listens there
    r = run_kctl(env, "groups", "list", "--state", "Bogus")
    assert r.code == 2 and r.stdout == "", r
    assert r.stderr.startswith("kctl: error: unknown group state 'Bogus' (expected Stable, "), r


def test_group_types_are_kafkas_in_any_case():
    assert R.group_types(["Share", "classic"]) == {"share", "classic"}
    assert R.group_types([]) == set()
    with pytest.raises(UsageError) as info:
        R.group_types(["share", "bogus", "Other"])
    assert info.value.line() == (
        "unknown group type bogus, other (expected classic, consumer, share, streams)"
    )


def test_a_group_with_nothing_that_listgroups_does_not_know_or_dead_is_unknown():
    groups = {
        "dead": group("dead", "Dead"),
        "empty": group("empty", "Empty"),
        "committed": group("committed", "Empty"),
        "live": group("live", "Stable", [LIVE]),
        "share": group("share", "Empty", kind="share"),
    }
    committed = {"committed": {("orders", 0): 4}}
    assert R.unknown_suspects(groups, committed) == ["dead", "empty"]
    R.check_known(groups, ["empty"], {"empty"})  # Empty and listed: it exists
    with pytest.raises(NotFoundError) as info:
        R.check_known(groups, ["empty"], set())
    assert info.value.line() == (
        "unknown group 'empty' (state Empty: no members and no committed offsets)"
    )
    with pytest.raises(NotFoundError, match="unknown group 'dead' \\(state Dead"):
        R.check_known(groups, ["dead"], {"dead"})  # Dead even when listed


# -- list --------------------------------------------------------------------------------------


def test_list_rows_take_the_described_state_filter_on_it_in_any_case_and_skip_vanished():
    listed = [Listed("a", "Unknown", "classic", False), Listed("b", "Stable", "consumer", False),
              Listed("gone", "Empty", "classic", False)]  # fmt: skip
    described = {
        "a": group("a", "Stable", [LIVE], protocol_type="consumer", assignor="range"),
        "b": group("b", "Empty", kind="consumer", coordinator=3),
    }
    table = R.list_table(listed, described, [])
    assert table.rows == [
        {"group": "a", "state": "Stable", "type": "classic", "protocol_type": "consumer",
         "assignor": "range", "members": 1, "coordinator": 1},
        {"group": "b", "state": "Empty", "type": "consumer", "protocol_type": None,
         "assignor": None, "members": 0, "coordinator": 3},
    ]  # fmt: skip
    assert table.columns[0] == "group" and "members:>" in table.columns
    assert [r["group"] for r in R.list_table(listed, described, ["stable"]).rows] == ["a"]


# -- describe ----------------------------------------------------------------------------------


def test_one_describe_view_at_a_time_offsets_by_default():
    assert R.describe_view(False, False, False) == "offsets"
    assert R.describe_view(True, False, False) == "offsets"
    assert R.describe_view(False, True, False) == "members"
    assert R.describe_view(False, False, True) == "state"
    with pytest.raises(UsageError, match="choose one of --offsets, --members, --state"):
        R.describe_view(True, False, True)


def test_share_groups_offsets_are_described_apart_from_other_groups():
    groups = {"s1": group("s1", kind="share"), "s2": group("s2", kind="share"), "c": group("c")}
    assert R.share_offsets_view(["s1", "s2"], groups, "offsets") is True
    assert R.share_offsets_view(["c"], groups, "offsets") is False
    assert R.share_offsets_view(["s1", "c"], groups, "members") is False  # members mix freely
    with pytest.raises(UsageError) as info:
        R.share_offsets_view(["s1", "c"], groups, "offsets")
    assert info.value.exit_code == EXIT_USAGE
    assert info.value.line() == ("describe share groups apart from other groups "
                                 "(their offsets are start offsets, not committed offsets)")  # fmt: skip


def lag_row(g: str, p: int, committed: int, end: int, owner: str | None = None) -> dict[str, Any]:
    return {"group": g, "topic": "orders", "partition": p, "committed_offset": committed,
            "log_end_offset": end, "lag": None if committed < 0 or end < 0 else end - committed,
            "member_id": owner, "host": "/h" if owner else None,
            "client_id": "c" if owner else None}  # fmt: skip


def test_offsets_view_shows_kafkas_dash_as_null_and_notes_groups_with_nothing():
    rows = [lag_row("a", 0, 3, 10, "m1"), lag_row("a", 1, -1, 10), lag_row("a", 2, 4, -1),
            lag_row("b", 0, 50, 10)]  # fmt: skip
    table = R.describe_table(Described("offsets", ["a", "b", "idle"], {}, lag_rows=rows))
    assert table.rows[0] == {"group": "a", "topic": "orders", "partition": 0, "current_offset": 3,
                             "log_end_offset": 10, "lag": 7, "consumer_id": "m1", "host": "/h",
                             "client_id": "c"}  # fmt: skip
    assert (table.rows[1]["current_offset"], table.rows[1]["lag"]) == (None, None)
    assert (table.rows[2]["log_end_offset"], table.rows[2]["lag"]) == (None, None)
    assert table.notes[0] == "group 'idle' has no active members and no committed offsets"
    assert len(table.notes) == 2 and table.notes[1].startswith("kctl: warning: negative lag -40")
    assert table.columns == ("group", "topic", "partition:>", "current_offset:>",
                             "log_end_offset:>", "lag:>", "consumer_id", "host", "client_id")  # fmt: skip


def test_members_view_has_a_row_per_member_and_a_note_per_group_without_members():
    kip848 = member("m2", [("t", 0)], member_epoch=7, target_assignment=[("t", 0), ("t", 1)],
                    subscribed_topics=["t"])  # fmt: skip
    groups = {"a": group("a", "Stable", [LIVE]), "b": group("b", "Reconciling", [kip848],
              kind="consumer", assignment_epoch=9), "c": group("c")}  # fmt: skip
    table = R.describe_table(Described("members", ["a", "b", "c"], groups))
    classic, new = table.rows
    assert classic["assignment"] == ["orders:0", "orders:1"] and classic["partitions"] == 2
    assert classic["target_epoch"] is None and classic["target_assignment"] is None
    assert new["member_epoch"] == 7 and new["target_epoch"] == 9
    assert new["target_assignment"] == ["t:0", "t:1"] and new["subscribed_topics"] == ["t"]
    assert table.notes == ["group 'c' has no active members (state Empty)"]


def test_state_view_gives_the_coordinators_address_and_null_where_unknown():
    groups = {"a": group("a", "Stable", [LIVE], assignor="range", coordinator=2),
              "b": group("b", coordinator=7), "c": group("c", coordinator=None)}  # fmt: skip
    table = R.describe_table(Described("state", ["a", "b", "c"], groups,
                                       addresses={2: "10.0.0.2:9092"}))  # fmt: skip
    assert [(r["group"], r["coordinator_address"]) for r in table.rows] == [
        ("a", "10.0.0.2:9092"), ("b", None), ("c", None)]  # fmt: skip
    assert table.rows[0]["members"] == 1 and table.rows[0]["assignor"] == "range"
    assert table.columns == ("group", "coordinator:>", "coordinator_address", "assignor",
                             "state", "members:>")  # fmt: skip


def test_share_offsets_view_shows_start_offsets_sorted_and_notes_a_group_without_any():
    offsets = {"s": {("t", 1): (3, 0), ("t", 0): (8, 2), ("u", 0): (-1, -1)}, "new": {}}
    groups = {"s": group("s", kind="share"), "new": group("new", "Stable", kind="share")}
    table = R.describe_table(Described("offsets", ["s", "new"], groups, share_offsets=offsets))
    assert table.rows == [
        {"group": "s", "topic": "t", "partition": 0, "start_offset": 8, "lag": 2},
        {"group": "s", "topic": "t", "partition": 1, "start_offset": 3, "lag": 0},
        {"group": "s", "topic": "u", "partition": 0, "start_offset": None, "lag": None},
    ]
    assert table.notes == ["share group 'new' has no offsets yet (state Stable)"]


# -- delete, delete-offsets --------------------------------------------------------------------


def test_groups_to_delete_are_named_once_each():
    assert R.groups_to_delete(["a", "b", "a"]) == ["a", "b"]
    with pytest.raises(UsageError, match="name the groups to delete"):
        R.groups_to_delete([])


def test_a_group_with_active_members_or_an_active_state_is_not_deleted():
    R.check_deletable({"a": group("a"), "b": group("b", "Dead")})
    with pytest.raises(KctlError) as info:
        R.check_deletable({"a": group("a"), "b": group("b", "Stable", [LIVE])})
    assert info.value.line() == ("refusing to delete group 'b' "
                                 "(it has 1 active member(s), state Stable: stop them first)")  # fmt: skip
    with pytest.raises(KctlError, match="0 active member\\(s\\), state PreparingRebalance"):
        R.check_deletable({"c": group("c", "PreparingRebalance")})
    assert R.delete_plan(["a", "b"]) == "will delete 2 group(s) and their committed offsets: a, b"
    assert R.deleted_table(["a"]).rows == [{"group": "a", "status": "deleted"}]


def test_a_share_groups_offsets_are_deleted_per_whole_topic_and_only_when_empty():
    empty = group("s", kind="share")
    assert R.share_offsets_topics("s", {"u": None, "t": None}, empty) == ["t", "u"]
    with pytest.raises(UsageError) as info:
        R.share_offsets_topics("s", {"t": None, "u": [0]}, empty)
    assert info.value.line() == ("a share group's offsets are deleted per topic "
                                 "(give --topic TOPIC, no partitions)")  # fmt: skip
    with pytest.raises(KctlError, match="refusing to delete offsets of share group 's'"):
        R.share_offsets_topics("s", {"t": None}, group("s", "Stable", [LIVE], kind="share"))


def test_deleted_offsets_show_each_partition_and_fail_naming_the_first_not_deleted():
    ok = OffsetsDeleted("g", [("t", 1), ("t", 0)], {("t", 0): None, ("t", 1): None})
    table = R.offsets_deleted_table(ok)
    assert table.rows == [{"group": "g", "topic": "t", "partition": 1, "status": "deleted"},
                          {"group": "g", "topic": "t", "partition": 0, "status": "deleted"}]  # fmt: skip
    assert table.failure is None
    refused = OffsetsDeleted("g", [("t", 0), ("t", 1)],
                             {("t", 1): "GROUP_SUBSCRIBED_TO_TOPIC", ("t", 0): "X_ERROR"})  # fmt: skip
    table = R.offsets_deleted_table(refused)
    assert [r["status"] for r in table.rows] == ["X_ERROR", "GROUP_SUBSCRIBED_TO_TOPIC"]
    assert table.failure is not None
    assert table.failure.line() == "2 offset(s) of group 'g' not deleted (t[0]: X_ERROR)"
    subscribed = OffsetsDeleted("g", [("t", 1)], {("t", 1): "GROUP_SUBSCRIBED_TO_TOPIC"})
    failure = R.offsets_deleted_table(subscribed).failure
    assert failure is not None and failure.line().endswith(
        "(t[1]: GROUP_SUBSCRIBED_TO_TOPIC (the group is subscribed to it))"
    )


def test_a_share_groups_deleted_offsets_show_each_topic():
    done = OffsetsDeleted("s", share_topics=["t", "u"], topic_errors={"t": None, "u": "BAD"})
    table = R.offsets_deleted_table(done)
    assert table.rows == [{"group": "s", "topic": "t", "status": "deleted"},
                          {"group": "s", "topic": "u", "status": "BAD"}]  # fmt: skip
    assert table.columns == ("group", "topic", "status")
    assert table.failure is not None
    assert table.failure.line() == "1 topic(s) of share group 's' not deleted (u: BAD)"


# -- reset-offsets -----------------------------------------------------------------------------

NOW = 1_700_000_000.0


def request(given: dict[str, Any], topic: list[str] | None = None, all_topics: bool = False,
            dry_run: bool = False, execute: bool = False, files: dict[str, str] | None = None):  # fmt: skip
    return R.reset_request("g", given, topic=topic or [], all_topics=all_topics,
                           dry_run=dry_run, execute=execute, now_s=NOW,
                           read=lambda path: (files or {})[path])  # fmt: skip


def test_reset_spec_is_exactly_one_option_and_an_offset_of_zero_counts():
    assert request({"offset": 0}, ["t"]).value == 0
    assert request({"offset": 0, "earliest": False}, ["t"]).kind == "offset"
    assert request({"shift": -3}, ["t:0,1"]).scope == {"t": [0, 1]}
    for given in ({}, {"earliest": True, "latest": True}, {"offset": 1, "shift": 2}):
        with pytest.raises(UsageError, match="give exactly one of --to-earliest, --to-latest, "):
            request(given, ["t"])


def test_reset_scope_is_topics_or_all_topics_and_a_file_names_its_own():
    assert request({"earliest": True}, all_topics=True).all_topics is True
    cases = [
        ({"earliest": True}, ["t"], True, "give --topic or --all-topics, not both"),
        ({"earliest": True}, [], False, "give --topic (repeatable) or --all-topics"),
        ({"file": "p.csv"}, ["t"], False, "--from-file names its partitions"),
        ({"file": "p.csv"}, [], True, "--from-file names its partitions"),
    ]
    for given, topic, all_topics, message in cases:
        with pytest.raises(UsageError, match=re.escape(message)):
            request(given, topic, all_topics)
    with pytest.raises(UsageError, match="--dry-run and --execute exclude each other"):
        request({"earliest": True}, ["t"], dry_run=True, execute=True)


def test_reset_from_a_file_reads_its_offsets_and_refuses_an_empty_one():
    req = request({"file": "p.csv"}, files={"p.csv": "t,0,5\nu,1,7\n"})
    assert (req.kind, req.value, req.file_name) == ("file", {("t", 0): 5, ("u", 1): 7}, "p.csv")
    with pytest.raises(UsageError, match=r"empty\.csv has no topic,partition,offset lines"):
        request({"file": "empty.csv"}, files={"empty.csv": "\n"})


def test_reset_to_a_time_looks_up_a_timestamp_by_duration_counting_back_from_now():
    req = request({"duration": "PT1H"}, ["t"])
    assert (req.kind, req.ts_ms) == ("time", int((NOW - 3600) * 1000))
    req = request({"datetime": "2024-01-01T00:00:00Z"}, ["t"])
    assert (req.kind, req.ts_ms) == ("time", 1_704_067_200_000)


def test_a_reset_of_a_group_with_active_members_is_refused():
    R.check_resettable("g", group("g"))
    R.check_resettable("s", group("s", kind="share"))
    with pytest.raises(KctlError) as info:
        R.check_resettable("g", group("g", "Stable", [LIVE]))
    assert info.value.line() == ("refusing to reset offsets of group 'g' "
                                 "(it has 1 active member(s), state Stable: stop them first)")  # fmt: skip
    with pytest.raises(KctlError, match="refusing to reset offsets of group 'r'"):
        R.check_resettable("r", group("r", "CompletingRebalance"))


def test_reset_plan_rows_note_each_clamped_target_and_say_what_was_done():
    rows = [ResetRow("t", 0, 3, 0, -3, None), ResetRow("t", 1, None, 10, None, "to log end")]
    plan = ResetPlan("g", rows, {("t", 0): (0, 10), ("t", 1): (2, 10)})
    table = R.reset_table(plan)
    assert table.rows[1] == {"group": "g", "topic": "t", "partition": 1, "current": None,
                             "target": 10, "delta": None, "clamped": "to log end"}  # fmt: skip
    assert table.notes == ["t[1]: target clamped to log end 10 (the log holds offsets 2..10)"]
    assert R.reset_done(plan) == "committed 2 offset(s) for group 'g'"
    plan.share = True
    assert R.reset_done(plan) == "set 2 start offset(s) of share group 'g'"
