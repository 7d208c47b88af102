"""Pure placement logic (reassignment proposals with hypothesis, plan JSON, throttles, election
plans) and the protocol requests/responses of APIs the local broker lacks, built and parsed with
kafka-python's protocol classes."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest
from conftest import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from kctl import parsing
from kctl.elect import election as E
from kctl.errors import EXIT_FAILED, EXIT_USAGE, KctlError, NotFoundError, UsageError
from kctl.reassign import assign as A
from kctl.reassign import plan_file as P
from kctl.reassign import rows as R
from kctl.reassign import throttles as T

# ---------------------------------------------------------------------------------------------
# Reassignment proposals


@st.composite
def clusters(draw):
    all_brokers = list(range(1, draw(st.integers(2, 9)) + 1))
    targets = draw(st.lists(st.sampled_from(all_brokers), min_size=1, unique=True))
    rf = draw(st.integers(1, len(targets)))
    n_racks = draw(st.integers(0, 4))
    racks = {b: (f"r{draw(st.integers(0, n_racks - 1))}" if n_racks else None) for b in all_brokers}
    current = {}
    for p in range(draw(st.integers(1, 12))):
        replicas = draw(st.permutations(all_brokers))[:rf]
        current[("t", p)] = list(replicas)
    return current, sorted(targets), racks


@settings(max_examples=300, deadline=None)
@given(clusters())
def test_proposal_keeps_rf_distinct_targets_and_minimal_movement(case):
    current, targets, racks = case
    proposed = A.propose(current, targets, racks)
    assert set(proposed) == set(current)
    for tp, replicas in proposed.items():
        assert len(replicas) == len(current[tp])
        assert len(set(replicas)) == len(replicas)
        assert set(replicas) <= set(targets)
        kept = {b for b in current[tp] if b in targets}
        assert kept <= set(replicas)  # replicas already on target brokers stay
    off_target = sum(1 for reps in current.values() for b in reps if b not in targets)
    assert A.moves(current, proposed) == off_target


@settings(max_examples=300, deadline=None)
@given(clusters())
def test_proposal_spreads_moved_replicas_over_unused_racks(case):
    current, targets, racks = case
    if any(racks[b] is None for b in targets):
        return
    proposed = A.propose(current, targets, racks)
    all_racks = {racks[b] for b in targets}
    for tp, replicas in proposed.items():
        kept_racks = {racks[b] for b in current[tp] if b in targets}
        need = len(replicas) - sum(1 for b in current[tp] if b in targets)
        expected = len(kept_racks) + min(need, len(all_racks - kept_racks))
        assert len({racks[b] for b in replicas}) == expected


@settings(max_examples=300, deadline=None)
@given(clusters())
def test_proposal_balances_leaders_no_single_swap_helps(case):
    current, targets, racks = case
    proposed = A.propose(current, targets, racks)
    leaders = Counter(r[0] for r in proposed.values())
    for replicas in proposed.values():
        assert all(leaders[b] >= leaders[replicas[0]] - 1 for b in replicas)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 6), st.integers(1, 30), st.data())
def test_full_move_without_racks_balances_replica_counts(n_targets, n_parts, data):
    rf = data.draw(st.integers(1, n_targets))
    targets = list(range(100, 100 + n_targets))
    current = {("t", p): list(range(1, rf + 1)) for p in range(n_parts)}
    proposed = A.propose(current, targets)
    load = Counter(b for reps in proposed.values() for b in reps)
    counts = [load[b] for b in targets]
    assert max(counts) - min(counts) <= 1


def test_proposal_rejects_rf_above_target_count():
    with pytest.raises(A.PlanError, match="more than"):
        A.propose({("t", 0): [1, 2, 3]}, [1, 2])


def test_plan_document_matches_kafka_reassign_partitions_format():
    doc = P.plan_document({("b", 0): [2, 1], ("a", 1): [3]})
    assert doc == {
        "version": 1,
        "partitions": [
            {"topic": "a", "partition": 1, "replicas": [3], "log_dirs": ["any"]},
            {"topic": "b", "partition": 0, "replicas": [2, 1], "log_dirs": ["any", "any"]},
        ],
    }
    assert P.parse_plan(doc) == {("a", 1): [3], ("b", 0): [2, 1]}
    # kafka-reassign-partitions.sh also writes plans without log_dirs.
    assert P.parse_plan(
        {"version": 1, "partitions": [{"topic": "a", "partition": 0, "replicas": [1]}]}
    )


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"partitions": []}, "no partitions"),
        ({"version": 2, "partitions": []}, "version"),
        ({"partitions": [{"topic": "a", "partition": 0, "replicas": [1, 1]}]}, "twice"),
        ({"partitions": [{"topic": "a", "partition": -1, "replicas": [1]}]}, "partition"),
        ({"partitions": [{"topic": "a", "partition": 0, "replicas": []}]}, "broker ids"),
        (
            {"partitions": [{"topic": "a", "partition": 0, "replicas": [1], "log_dirs": ["d"]}]},
            "log dirs",
        ),
        ([1], "expected"),
    ],
)
def test_malformed_plans_are_rejected_naming_the_problem(doc, message):
    with pytest.raises(A.PlanError, match=message):
        P.parse_plan(doc)


# ---------------------------------------------------------------------------------------------
# Plan and election files, options, a plan against the cluster (kctl.reassign, kctl.elect)


def _usage(text: str):
    """A UsageError whose line contains ``text`` (literally)."""
    return pytest.raises(UsageError, match=re.escape(text))


def test_plan_file_round_trips_and_its_errors_name_the_file(tmp_path):
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(P.plan_document({("a", 0): [1, 2]})))
    assert P.read_plan(path) == {("a", 0): [1, 2]}
    path.write_text('{"version": 2, "partitions": []}')
    with _usage(f"malformed plan {path} (unsupported plan version 2)") as info:
        P.read_plan(path)
    assert info.value.exit_code == EXIT_USAGE
    path.write_text("not json")
    with _usage(f"plan {path} is not JSON"):
        P.read_plan(path)


def test_an_unreadable_file_is_a_failure_not_a_usage_error(tmp_path):
    with pytest.raises(KctlError, match=r"cannot read plan .*missing\.json \(No such file") as info:
        P.read_plan(tmp_path / "missing.json")
    assert not isinstance(info.value, UsageError) and info.value.exit_code == EXIT_FAILED


def test_election_file_is_read_as_topic_partitions_in_file_order(tmp_path):
    entries = [("b", 2), ("a", 0), ("b", 1)]
    doc = {"partitions": [{"topic": t, "partition": p} for t, p in entries]}
    assert E.election_partitions(doc, "f.json") == {"b": [2, 1], "a": [0]}
    path = tmp_path / "elect.json"
    path.write_text(json.dumps(doc))
    assert E.election_scope(False, [], path) == {"b": [2, 1], "a": [0]}


@pytest.mark.parametrize(
    ("doc", "why"),
    [
        ({"partitions": []}, 'expected {"partitions": [...]}'),
        ([{"topic": "a", "partition": 0}], "expected"),
        ({"partitions": [{"topic": "a"}]}, "partitions[0] needs topic and partition"),
        ({"partitions": [{"topic": "a", "partition": 0}, 7]}, "partitions[1] needs"),
        ({"partitions": [{"topic": 1, "partition": 0}]}, "partitions[0] needs topic"),
    ],
)
def test_malformed_election_files_are_usage_errors(doc, why):
    with _usage(f"malformed election file f.json ({why}"):
        E.election_partitions(doc, "f.json")


@pytest.mark.parametrize(
    ("preferred", "unclean", "election_type", "kind"),
    [
        (True, False, None, "preferred"),
        (False, True, None, "unclean"),
        (False, False, "preferred", "preferred"),
        (False, False, "UNCLEAN", "unclean"),
    ],
)
def test_election_kind_from_flags_or_election_type(preferred, unclean, election_type, kind):
    assert E.election_kind(preferred, unclean, election_type) == kind


@pytest.mark.parametrize(
    ("preferred", "unclean", "election_type", "message"),
    [
        (False, False, None, "choose one of --preferred and --unclean"),
        (True, True, None, "choose one of --preferred and --unclean"),
        (False, False, "fast", "unknown --election-type 'fast' (preferred or unclean)"),
        (True, False, "preferred", "--election-type replaces --preferred and --unclean"),
        (False, True, "preferred", "--election-type replaces"),
    ],
)
def test_election_kind_refuses_none_both_or_unknown(preferred, unclean, election_type, message):
    with _usage(message):
        E.election_kind(preferred, unclean, election_type)


def test_election_scope_is_exactly_one_of_all_topics_topics_file(tmp_path):
    assert E.election_scope(True, [], None) is None
    assert E.election_scope(False, ["a:1,0", "b"], None) == {"a": [0, 1], "b": None}
    for args in [(False, [], None), (True, ["a"], None), (False, ["a"], tmp_path / "f.json")]:
        with _usage("choose exactly one of --all-topics, --topic, --from-file"):
            E.election_scope(*args)


def test_named_partitions_refuse_a_whole_topic():
    assert parsing.named_partitions(["a:0,2", "b:1", "a:1"]) == {"a": [0, 1, 2], "b": [1]}
    with _usage("name the partitions of 'b' (expected TOPIC:PARTITION)"):
        parsing.named_partitions(["a:0", "b"])
    with _usage("malformed --topic 'a:x'"):
        parsing.named_partitions(["a:x"])


def test_brokers_are_distinct_ids_in_the_order_given():
    assert parsing.broker_ids("3,1, 2,") == [3, 1, 2]
    with _usage("malformed --brokers '1,x' (expected ids like 1,2,3)"):
        parsing.broker_ids("1,x")
    for text in ("1,1", ",", ""):
        with _usage("expected distinct ids"):
            parsing.broker_ids(text)


def test_proposal_names_an_unknown_target_broker_and_the_known_ones():
    current = {("t", 0): [1, 2]}
    racks: dict[int, str | None] = {1: None, 2: None, 3: None}
    assert A.proposal(current, [2, 3], racks) == A.propose(current, [2, 3], racks)
    with pytest.raises(NotFoundError, match=r"unknown broker 9 \(brokers: 1, 2, 3\)"):
        A.proposal(current, [1, 9], racks)
    with pytest.raises(
        KctlError, match=r"cannot generate a reassignment \(t-0 has 2 replicas, more than the 1 "
    ):
        A.proposal(current, [1], racks)


def test_check_plan_names_the_missing_partition_or_broker():
    current = {("t", 0): [1, 2], ("t", 1): [2, 3]}
    racks = {1: None, 2: None, 3: None}
    P.check_plan({("t", 1): [3, 1]}, current, racks)
    with pytest.raises(NotFoundError, match=r"unknown partition t-5 \(not in the cluster\)"):
        P.check_plan({("t", 0): [1, 2], ("t", 5): [1]}, current, racks)
    with pytest.raises(NotFoundError, match=r"t-1: unknown broker 7 \(brokers: 1, 2, 3\)"):
        P.check_plan({("t", 1): [7, 1]}, current, racks)


def test_plan_rows_show_current_proposed_and_the_brokers_receiving_a_replica():
    rows = R.plan_rows({("t", 0): [1, 2], ("t", 1): [2, 3]}, {("t", 1): [3, 4], ("s", 0): [5]})
    assert rows == [
        {"topic": "s", "partition": 0, "current": [], "proposed": [5], "moving": [5]},
        {"topic": "t", "partition": 1, "current": [2, 3], "proposed": [3, 4], "moving": [4]},
    ]


def test_cancel_chooses_the_plans_ongoing_reassignments_or_all():
    running = [{"topic": "t", "partition": 0}, {"topic": "t", "partition": 1}]
    assert R.in_plan(running, None) == running
    assert R.in_plan(running, {("t", 1): [1], ("u", 0): [2]}) == [running[1]]


def test_failed_is_any_partition_answer_failed():
    assert not R.failed([])
    assert not R.failed([{"status": "accepted"}, {"status": "elected"}])
    assert R.failed([{"status": "accepted"}, {"status": "failed"}])


def test_throttled_replicas_name_current_leaders_and_added_followers():
    current = {("t", 0): [1, 2], ("t", 1): [2, 3], ("u", 0): [1]}
    proposed = {("t", 0): [1, 4], ("t", 1): [3, 2], ("u", 0): [1]}
    assert T.throttled_replicas(current, proposed) == {
        "t": {
            "leader.replication.throttled.replicas": "0:1,0:2",
            "follower.replication.throttled.replicas": "0:4",
        }
    }


def test_throttle_changes_cover_brokers_of_moving_partitions():
    from kctl.reassign.throttles import throttle_changes

    changes = throttle_changes(
        {("t", 0): [1, 2], ("t", 1): [5]}, {("t", 0): [1, 4], ("t", 1): [5]}, 1000
    )
    assert [(k, n) for k, n, _ in changes] == [
        ("broker", "1"),
        ("broker", "2"),
        ("broker", "4"),
        ("topic", "t"),
    ]
    assert changes[0][2] == {
        "leader.replication.throttled.rate": "1000",
        "follower.replication.throttled.rate": "1000",
    }


# ---------------------------------------------------------------------------------------------
# Election plans


def test_preferred_election_plan():
    live = {1, 2, 3}
    step = E.election_step("t", 0, 2, [1, 2, 3], [1, 2, 3], live, "preferred")
    assert (step.action, step.new_leader) == ("elect", 1)
    assert E.election_step("t", 0, 1, [1, 2], [1, 2], live, "preferred").action == "skip"
    out_of_isr = E.election_step("t", 0, 2, [1, 2], [2], live, "preferred")
    assert out_of_isr.action == "skip" and "not in the ISR" in out_of_isr.reason
    dead = E.election_step("t", 0, 2, [4, 2], [2, 4], live, "preferred")
    assert dead.action == "skip" and "not alive" in dead.reason


def test_unclean_election_plan():
    live = {2, 3}
    assert E.election_step("t", 0, 2, [1, 2], [2], live, "unclean").action == "skip"
    clean = E.election_step("t", 0, -1, [1, 2, 3], [1, 3], live, "unclean")
    assert clean.new_leader == 3 and "clean election" in clean.reason
    lossy = E.election_step("t", 0, -1, [1, 2], [1], live, "unclean")
    assert lossy.new_leader == 2 and "may be lost" in lossy.reason
    assert E.election_step("t", 0, -1, [1], [1], live, "unclean").action == "skip"


# ---------------------------------------------------------------------------------------------
# Protocol requests and responses (kafka-python's classes)


def test_elect_leaders_request_and_response():
    from kafka.protocol.admin import ElectLeadersRequest, ElectLeadersResponse

    from kctl.broker import elect
    from kctl.errors import UnsupportedByBroker

    req = elect.build_request("unclean", {"b": [2, 0], "a": [1]}, 5000, 1)
    decoded = ElectLeadersRequest.decode(req.encode(), version=1)
    assert decoded.election_type == 1 and decoded.timeout_ms == 5000
    assert [(t.topic, t.partitions) for t in decoded.topic_partitions] == [
        ("a", [1]),
        ("b", [0, 2]),
    ]
    assert elect.build_request("preferred", {"a": [0]}, 1, 2).election_type == 0
    with pytest.raises(UnsupportedByBroker):
        elect.build_request("unclean", {"a": [0]}, 1, 0)

    R = ElectLeadersResponse
    P = R.ReplicaElectionResult.PartitionResult
    resp = R(
        version=1,
        throttle_time_ms=0,
        error_code=0,
        replica_election_results=[
            R.ReplicaElectionResult(
                topic="a",
                partition_result=[
                    P(partition_id=0, error_code=0, error_message=None),
                    P(partition_id=1, error_code=84, error_message="Leader is already preferred"),
                    P(partition_id=2, error_code=80, error_message="not available"),
                ],
            )
        ],
    )
    rows = elect.parse_response(R.decode(resp.encode(), version=1))
    assert [(r["partition"], r["status"], r["error"]) for r in rows] == [
        (0, "elected", None),
        (1, "not-needed", "ELECTION_NOT_NEEDED"),
        (2, "failed", "PREFERRED_LEADER_NOT_AVAILABLE"),
    ]


def test_alter_partition_reassignments_request_and_response():
    from kafka.protocol.admin import (
        AlterPartitionReassignmentsRequest as Q,
    )
    from kafka.protocol.admin import (
        AlterPartitionReassignmentsResponse as R,
    )

    from kctl.broker.reassign import wire as reassign
    from kctl.errors import KctlError

    req = reassign.build_alter_request({("t", 1): [3, 1], ("t", 0): None}, 7000)
    back = Q.decode(req.encode(), version=0)
    assert back.timeout_ms == 7000
    assert [(p.partition_index, p.replicas) for p in back.topics[0].partitions] == [
        (0, None),
        (1, [3, 1]),
    ]
    P = R.ReassignableTopicResponse.ReassignablePartitionResponse
    resp = R(
        version=0,
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        responses=[
            R.ReassignableTopicResponse(
                name="t",
                partitions=[
                    P(partition_index=0, error_code=0, error_message=None),
                    P(partition_index=1, error_code=85, error_message="none in progress"),
                ],
            )
        ],
    )
    rows = reassign.parse_alter_response(R.decode(resp.encode(), version=0))
    assert [(r["partition"], r["status"], r["error"]) for r in rows] == [
        (0, "accepted", None),
        (1, "failed", "NO_REASSIGNMENT_IN_PROGRESS"),
    ]
    bad = R(
        version=0, throttle_time_ms=0, error_code=41, error_message="not controller", responses=[]
    )
    with pytest.raises(KctlError, match="NOT_CONTROLLER"):
        reassign.parse_alter_response(R.decode(bad.encode(), version=0))


def test_list_partition_reassignments_request_and_response():
    from kafka.protocol.admin import (
        ListPartitionReassignmentsRequest as Q,
    )
    from kafka.protocol.admin import (
        ListPartitionReassignmentsResponse as R,
    )

    from kctl.broker.reassign import wire as reassign

    assert Q.decode(reassign.build_list_request(None, 100).encode(), version=0).topics is None
    back = Q.decode(reassign.build_list_request({"t": [2, 0]}, 100).encode(), version=0)
    assert [(t.name, t.partition_indexes) for t in back.topics] == [("t", [0, 2])]
    Ongoing = R.OngoingTopicReassignment
    P = Ongoing.OngoingPartitionReassignment
    resp = R(
        version=0,
        throttle_time_ms=0,
        error_code=0,
        error_message=None,
        topics=[
            Ongoing(
                name="t",
                partitions=[
                    P(
                        partition_index=0,
                        replicas=[1, 2, 4],
                        adding_replicas=[4],
                        removing_replicas=[2],
                    ),
                    P(partition_index=1, replicas=[1], adding_replicas=[], removing_replicas=[]),
                ],
            )
        ],
    )
    rows = reassign.parse_list_response(R.decode(resp.encode(), version=0))
    assert rows == [
        {
            "topic": "t",
            "partition": 0,
            "replicas": [1, 2, 4],
            "adding_replicas": [4],
            "removing_replicas": [2],
        }
    ]


def test_describe_log_dirs_request_and_response():
    from kafka.protocol.admin import DescribeLogDirsRequest as Q
    from kafka.protocol.admin import DescribeLogDirsResponse as R

    from kctl.broker import logdirs

    assert Q.decode(logdirs.build_request(None, 1).encode(), version=1).topics is None
    back = Q.decode(logdirs.build_request({"t": [1, 0]}, 4).encode(), version=4)
    assert [(t.topic, t.partitions) for t in back.topics] == [("t", [0, 1])]
    D = R.DescribeLogDirsResult
    T = D.DescribeLogDirsTopic
    P = T.DescribeLogDirsPartition
    resp = R(
        version=4,
        throttle_time_ms=0,
        error_code=0,
        results=[
            D(
                error_code=0,
                log_dir="/var/kafka/a",
                total_bytes=1000,
                usable_bytes=400,
                topics=[
                    T(
                        name="t",
                        partitions=[
                            P(
                                partition_index=0,
                                partition_size=123,
                                offset_lag=0,
                                is_future_key=False,
                            ),
                            P(
                                partition_index=0,
                                partition_size=12,
                                offset_lag=7,
                                is_future_key=True,
                            ),
                        ],
                    )
                ],
            ),
            D(error_code=56, log_dir="/var/kafka/b", total_bytes=-1, usable_bytes=-1, topics=[]),
        ],
    )
    dirs = logdirs.parse_response(3, R.decode(resp.encode(), version=4))
    assert [(d.broker, d.path, d.error, d.total_bytes) for d in dirs] == [
        (3, "/var/kafka/a", None, 1000),
        (3, "/var/kafka/b", "KAFKA_STORAGE_ERROR", None),
    ]
    assert [(r.size, r.offset_lag, r.is_future) for r in dirs[0].replicas] == [
        (123, 0, False),
        (12, 7, True),
    ]


def test_fetch_request_and_response_carry_real_batches():
    from kafka.protocol.consumer import FetchRequest as Q
    from kafka.protocol.consumer import FetchResponse as R

    from kctl.broker import replica_verify as verify
    from kctl.replicas.compare import batch_keys

    back = Q.decode(verify.build_request("foo", 0, 2, 4096, 12).encode(), version=12)
    assert back.replica_id == -1 and back.isolation_level == 0
    part = back.topics[0].partitions[0]
    assert (back.topics[0].topic, part.partition, part.fetch_offset) == ("foo", 0, 2)
    # A real segment, cut inside its last batch as a size-limited fetch answer can be.
    data = (FIXTURES / "kafka-3.8-kraft-logs/foo-0/00000000000000000000.log").read_bytes()
    PD = R.FetchableTopicResponse.PartitionData
    resp = R(
        version=12,
        throttle_time_ms=0,
        error_code=0,
        session_id=0,
        responses=[
            R.FetchableTopicResponse(
                topic="foo",
                partitions=[
                    PD(
                        partition_index=0,
                        error_code=0,
                        high_watermark=3,
                        last_stable_offset=3,
                        log_start_offset=0,
                        aborted_transactions=None,
                        preferred_read_replica=-1,
                        records=data[:120],
                    )
                ],
            )
        ],
    )
    got = verify.parse_response(R.decode(resp.encode(), version=12), "foo", 0)
    assert (got.error, got.high_watermark, got.log_start_offset) == (None, 3, 0)
    keys, problems = batch_keys(got.records, partial_tail_ok=True)
    assert [(k.base_offset, k.last_offset, k.crc_valid) for k in keys] == [(0, 1, True)]
    assert problems == []
