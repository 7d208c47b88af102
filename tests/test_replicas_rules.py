"""Replica health rules over hand-built snapshots: every finding, and its absence."""

from __future__ import annotations

import json

import pytest

from kctl.replicas import rules
from kctl.replicas.model import (
    BrokerInfo,
    ClusterSnapshot,
    LogDirInfo,
    PartitionInfo,
    ReplicaDir,
    SnapshotFormatError,
    TopicInfo,
)


def snap(
    partitions: list[PartitionInfo],
    *,
    brokers: tuple[int, ...] = (1, 2, 3),
    racks: dict[int, str] | None = None,
    min_isr: int | None = None,
    default_min_isr: int | None = None,
    default_rf: int | None = None,
    log_dirs: list[LogDirInfo] | None = None,
    fenced: list[int] | None = None,
) -> ClusterSnapshot:
    return ClusterSnapshot(
        taken_at_ms=1,
        cluster_id="c",
        controller_id=brokers[0] if brokers else None,
        brokers=[BrokerInfo(b, "h", 9092, (racks or {}).get(b)) for b in brokers],
        topics=[TopicInfo("orders", False, partitions, min_insync_replicas=min_isr)],
        default_min_insync_replicas=default_min_isr,
        default_replication_factor=default_rf,
        log_dirs=log_dirs or [],
        fenced_brokers=fenced,
    )


def healthy(partition: int = 0, replicas: list[int] | None = None) -> PartitionInfo:
    replicas = replicas or [1, 2, 3]
    return PartitionInfo(partition, replicas[0], list(replicas), list(replicas))


def checks(s: ClusterSnapshot, **opts) -> list[tuple[str, str, int | None]]:
    return [(f.check, f.severity, f.partition) for f in rules.validate(s, rules.Options(**opts))]


def test_healthy_cluster_has_no_findings():
    assert checks(snap([healthy(0), healthy(1, [2, 3, 1]), healthy(2, [3, 1, 2])])) == []


def test_partition_without_leader_is_offline_error():
    p = PartitionInfo(0, -1, [1, 2, 3], [1, 2, 3])
    found = rules.validate(snap([p]))
    assert [(f.check, f.severity) for f in found] == [("offline", "error")]
    assert found[0].reason == "no leader" and found[0].topic == "orders"


def test_leader_on_a_broker_the_registrations_lack_is_offline_and_unregistered():
    p = PartitionInfo(0, 4, [4, 1, 2], [4, 1, 2])
    found = {f.check: f for f in rules.validate(snap([p], fenced=[]))}
    assert found["offline"].brokers == [4] and "not alive" in found["offline"].reason
    assert found["unregistered-broker"].severity == "error"
    assert found["unregistered-broker"].brokers == [4]
    assert found["unregistered-broker"].reason == (
        "replicas on brokers not registered in the cluster: [4]"
    )
    assert "broker-down" not in found


def test_replicas_on_a_fenced_broker_are_one_broker_down_error_not_unregistered():
    """KRaft keeps a stopped broker's registration (fenced): its replicas are not on an
    unregistered broker."""
    parts = [PartitionInfo(i, 1, [1, 2, 3], [1, 3]) for i in range(3)]
    found = rules.validate(snap(parts, brokers=(1, 3), fenced=[2]))
    assert not [f for f in found if f.check == "unregistered-broker"]
    [down] = [f for f in found if f.check == "broker-down"]
    assert (down.severity, down.brokers, down.topic, down.partition) == ("error", [2], None, None)
    assert down.reason == (
        "broker 2 is registered but fenced (stopped, or not caught up with the metadata); "
        "it holds replicas of 3 partitions"
    )
    assert [f.partition for f in found if f.check == "under-replicated"] == [0, 1, 2]


def test_a_missing_broker_is_down_not_unregistered_when_registrations_are_unknown():
    """Without DescribeCluster v2 (older brokers, older snapshot files) a broker missing from the
    live ones may be stopped or gone: kctl does not claim it is unregistered."""
    p = PartitionInfo(0, 1, [1, 4], [1])
    found = rules.validate(snap([p]))
    assert {f.check for f in found} == {"broker-down", "under-replicated", "at-min-isr"}
    [down] = [f for f in found if f.check == "broker-down"]
    assert down.brokers == [4] and "did not say which" in down.reason
    assert rules.broker_state(snap([p]), 4) == "not-alive"


def test_a_snapshot_listing_fenced_brokers_among_its_brokers_counts_them_down():
    """A metadata image's snapshot lists every registration, fenced ones too."""
    p = PartitionInfo(0, 1, [1, 2], [1])
    s = snap([p], brokers=(1, 2), fenced=[2])
    assert rules.live_brokers(s) == {1}
    assert [f.check for f in rules.validate(s)] == ["broker-down", "at-min-isr", "under-replicated"]


def test_a_broker_holding_no_checked_replica_is_not_reported_down():
    s = snap([healthy(0, [1, 3])], brokers=(1, 3), fenced=[2])
    assert checks(s) == []


def test_isr_below_topic_min_isr_is_error_and_under_replicated_warn():
    p = PartitionInfo(0, 1, [1, 2, 3], [1])
    got = checks(snap([p], min_isr=2))
    assert ("under-min-isr", "error", 0) in got
    assert ("under-replicated", "warn", 0) in got
    assert not any(c == "at-min-isr" for c, _, _ in got)


def test_min_isr_falls_back_to_broker_default_then_one():
    p = PartitionInfo(0, 1, [1, 2, 3], [1, 2])
    assert ("at-min-isr", "warn", 0) in checks(snap([p], default_min_isr=2))
    assert ("under-min-isr", "error", 0) in checks(snap([p], default_min_isr=3))
    got = checks(snap([p]))  # default 1: ISR 2 is neither at nor under it
    assert [c for c, _, _ in got] == ["under-replicated"]
    # The topic's own value wins over the broker default.
    assert not any(
        c == "under-min-isr" for c, _, _ in checks(snap([p], min_isr=1, default_min_isr=3))
    )


def test_at_min_isr_needs_a_larger_replica_set():
    full = healthy(0, [1, 2])
    assert checks(snap([full], min_isr=2)) == []  # RF 2 = min ISR 2: not reported as at-min
    p = PartitionInfo(0, 1, [1, 2, 3], [1, 2])
    f = next(f for f in rules.validate(snap([p], min_isr=2)) if f.check == "at-min-isr")
    assert f.brokers == [3] and "min.insync.replicas 2" in f.reason


def test_replication_factor_below_option_or_cluster_default():
    p = healthy(0, [1, 2])
    assert ("rf-below-minimum", "warn", 0) in checks(snap([p]), min_rf=3)
    assert ("rf-below-minimum", "warn", 0) in checks(snap([p], default_rf=3))
    assert checks(snap([p], default_rf=3), min_rf=2) == []
    assert checks(snap([p])) == []


def test_leader_not_first_replica_is_preferred_leader_info():
    p = PartitionInfo(0, 2, [1, 2, 3], [1, 2, 3])
    found = [f for f in rules.validate(snap([p])) if f.check == "preferred-leader"]
    assert [(f.severity, f.brokers) for f in found] == [("info", [1, 2])]


def test_leader_skew_flags_broker_losing_its_preferred_leaderships():
    parts = [PartitionInfo(i, 2, [1, 2, 3], [1, 2, 3]) for i in range(3)]
    parts += [healthy(3 + i, [2, 3, 1]) for i in range(3)]
    skew = [f for f in rules.validate(snap(parts)) if f.check == "leader-skew"]
    assert [(f.brokers, f.severity, f.partition) for f in skew] == [([1], "info", None)]
    assert "preferred leader of 3" in skew[0].reason
    # 1 in 20 led elsewhere (5%) is under Kafka's 10% threshold.
    parts = [PartitionInfo(0, 2, [1, 2, 3], [1, 2, 3])]
    parts += [healthy(i) for i in range(1, 20)]
    assert not [f for f in rules.validate(snap(parts)) if f.check == "leader-skew"]


def test_two_replicas_on_one_rack_while_enough_racks_exist():
    racks = {1: "a", 2: "a", 3: "b", 4: "c"}
    bad = healthy(0, [1, 2, 3])
    found = [f for f in rules.validate(snap([bad], brokers=(1, 2, 3, 4), racks=racks))]
    assert [(f.check, f.brokers) for f in found] == [("rack-spread", [1, 2])]
    good = healthy(0, [1, 3, 4])
    assert checks(snap([good], brokers=(1, 2, 3, 4), racks=racks)) == []


def test_rack_spread_not_reported_when_racks_are_too_few_or_unknown():
    two_racks = {1: "a", 2: "a", 3: "b"}
    assert checks(snap([healthy(0)], racks=two_racks)) == []  # 3 replicas, 2 racks: best done
    assert checks(snap([healthy(0)], racks={1: "a", 2: "a"})) == []  # broker 3 has no rack


def test_log_dir_findings_offline_dir_future_replica_and_size_behind():
    mib = 1024 * 1024
    dirs = [
        LogDirInfo(1, "/d1", None, [ReplicaDir("orders", 0, 1000 * mib, 0, False)]),
        LogDirInfo(
            2,
            "/d2",
            None,
            [
                ReplicaDir("orders", 0, 100 * mib, 0, False),
                ReplicaDir("orders", 0, 10 * mib, 5000, True),
            ],
        ),
        LogDirInfo(3, "/d3", "KAFKA_STORAGE_ERROR"),
        LogDirInfo(3, "/d4", None, [ReplicaDir("orders", 0, 990 * mib, 0, False)]),
    ]
    found = {f.check: f for f in rules.validate(snap([healthy(0)], log_dirs=dirs))}
    assert set(found) == {"log-dir-offline", "future-replica", "replica-size-behind"}
    assert found["log-dir-offline"].severity == "error" and found["log-dir-offline"].brokers == [3]
    assert "KAFKA_STORAGE_ERROR" in found["log-dir-offline"].reason
    assert (
        found["future-replica"].brokers == [2] and "5000 offsets" in found["future-replica"].reason
    )
    assert found["replica-size-behind"].brokers == [2]  # broker 3 at 990 MiB is close enough


def test_log_dirs_of_close_sizes_are_fine():
    dirs = [
        LogDirInfo(b, f"/d{b}", None, [ReplicaDir("orders", 0, 5000, 0, False)]) for b in (1, 2, 3)
    ]
    assert checks(snap([healthy(0)], log_dirs=dirs)) == []


def test_topic_filter_and_severity_order_and_fail_threshold():
    s = snap([PartitionInfo(0, -1, [1, 2, 3], [1, 2, 3]), PartitionInfo(1, 2, [1, 2, 3], [1, 2])])
    s.topics.append(TopicInfo("other", False, [PartitionInfo(0, 1, [1, 2], [1])]))
    found = rules.validate(s)
    assert [f.severity for f in found] == sorted(
        (f.severity for f in found), key=lambda x: -rules.RANK[x]
    )
    assert {f.topic for f in rules.validate(s, rules.Options(topics=["other"]))} == {"other"}
    assert rules.at_or_above(found, "error") == [f for f in found if f.severity == "error"]
    assert len(rules.at_or_above(found, "warn")) == len([f for f in found if f.severity != "info"])
    assert rules.counts(found)["error"] == 1


def _one_broker_stopped() -> tuple[ClusterSnapshot, list[rules.Finding]]:
    """Broker 2 of 3 stopped (fenced): six partitions at RF 3 and min ISR 2, two of them
    preferred on broker 2 and now led by another broker; plus a topic at RF 1 on broker 1 that
    has nothing to do with broker 2."""
    placements = [[1, 2, 3], [2, 3, 1], [3, 1, 2], [1, 2, 3], [2, 3, 1], [3, 1, 2]]
    parts = [
        PartitionInfo(i, r[1] if r[0] == 2 else r[0], r, [x for x in r if x != 2])
        for i, r in enumerate(placements)
    ]
    s = snap(parts, brokers=(1, 3), fenced=[2], min_isr=2, default_rf=3)
    s.topics.append(TopicInfo("thin", False, [healthy(0, [1])], min_insync_replicas=1))
    return s, rules.validate(s)


def test_one_stopped_broker_is_one_cause_leading_the_table():
    s, found = _one_broker_stopped()
    assert rules.counts(found) == {"error": 1, "warn": 13, "info": 3}
    [cause] = rules.causes(s, found)
    assert (cause.kind, cause.brokers, cause.severity) == ("broker-down", [2], "error")
    assert cause.states == {2: "fenced"}
    assert cause.counts == {
        "broker-down": 1,
        "under-replicated": 6,
        "at-min-isr": 6,
        "preferred-leader": 2,
        "leader-skew": 1,
    }
    assert cause.summary == (
        "broker 2 down (registered, fenced): 6 partitions under-replicated, 6 at min ISR, "
        "2 leaders moved"
    )
    rows = rules.table_rows([cause], found)
    assert rows[0] == {
        "severity": "error",
        "check": "broker-down",
        "topic": None,
        "partition": None,
        "brokers": [2],
        "reason": cause.summary,
    }
    # What broker 2 does not explain stays a row of its own: thin's replication factor 1.
    assert [(r["check"], r["topic"]) for r in rows[1:]] == [("rf-below-minimum", "thin")]


def test_every_finding_stays_in_the_json_naming_its_cause():
    s, found = _one_broker_stopped()
    groups = rules.causes(s, found)
    docs = rules.finding_documents(groups, found)
    assert [{k: v for k, v in d.items() if k != "cause"} for d in docs] == [
        f.to_dict() for f in found
    ]
    assert {d["cause"] for d in docs if d["check"] != "rf-below-minimum"} == {0}
    assert [d["cause"] for d in docs if d["check"] == "rf-below-minimum"] == [None]
    assert groups[0].to_dict() == {
        "cause": "broker-down",
        "brokers": [2],
        "broker_states": [{"broker": 2, "state": "fenced"}],
        "severity": "error",
        "title": "broker 2 down (registered, fenced)",
        "summary": groups[0].summary,
        "counts": groups[0].counts,
        "findings": len(found) - 1,
    }


def test_partitions_missing_two_stopped_brokers_are_their_own_cause():
    parts = [
        PartitionInfo(0, 1, [1, 2, 3], [1]),  # lost 2 and 3: under min ISR
        PartitionInfo(1, 1, [1, 2, 4], [1, 4]),  # lost 2 only
        PartitionInfo(2, 4, [3, 4, 1], [4, 1]),  # lost 3 only: leader moved off 3
    ]
    s = snap(parts, brokers=(1, 4), fenced=[2, 3], min_isr=2)
    groups = rules.causes(s, rules.validate(s))
    assert [(c.brokers, c.severity) for c in groups] == [
        ([2], "error"),
        ([2, 3], "error"),
        ([3], "error"),
    ]
    assert groups[1].summary == (
        "brokers 2, 3 down (registered, fenced): 1 partition under min ISR, 1 under-replicated"
    )
    assert groups[2].summary == (
        "broker 3 down (registered, fenced): 1 partition under-replicated, 1 at min ISR, "
        "1 leader moved"
    )


def test_a_cause_says_when_its_broker_is_not_registered_or_not_known_to_be():
    p = PartitionInfo(0, 1, [1, 4], [1])
    [gone] = rules.causes(snap([p], fenced=[]), rules.validate(snap([p], fenced=[])))
    assert gone.kind == "unregistered-broker" and gone.states == {4: "unregistered"}
    assert gone.summary == (
        "broker 4 not registered: 1 partition under-replicated, 1 at min ISR, 1 with replicas on it"
    )
    [unknown] = rules.causes(snap([p]), rules.validate(snap([p])))
    assert unknown.kind == "broker-down" and unknown.summary.startswith(
        "broker 4 down (not alive; whether registered is not known): "
    )
    both = PartitionInfo(1, 1, [1, 2, 4], [1])
    s = snap([both], brokers=(1, 3), fenced=[2])
    groups = rules.causes(s, rules.validate(s))
    assert [(c.kind, c.brokers) for c in groups] == [
        ("broker-down", [2]),  # the broker-down finding (error)
        ("unregistered-broker", [4]),  # the unregistered-broker finding (error)
        ("broker-down", [2, 4]),  # the partition's ISR lost both (warn)
    ]
    mixed = groups[2]
    assert mixed.summary.startswith("brokers 2, 4 down (2 fenced, 4 not registered): ")


def test_a_healthy_cluster_has_no_causes_and_unrelated_findings_stay_rows():
    s = snap([PartitionInfo(0, 1, [1, 2, 3], [1, 2])], racks={1: "a", 2: "a", 3: "a"})
    found = rules.validate(s)
    assert rules.causes(s, found) == []
    assert rules.table_rows([], found) == [f.to_dict() for f in found]
    assert rules.causes(snap([healthy(0)]), []) == []


def test_snapshot_round_trips_exactly_through_json():
    s = snap(
        [PartitionInfo(0, 1, [1, 2], [1], offline_replicas=[2], error=None)],
        racks={1: "a", 2: "b", 3: "c"},
        min_isr=2,
        default_rf=3,
        log_dirs=[LogDirInfo(1, "/d", None, [ReplicaDir("orders", 0, 10, 0, True)], 100, 50)],
    )
    s.log_dirs_unsupported = [3]
    s.fenced_brokers = [4]
    doc = json.loads(json.dumps(s.to_dict()))
    assert doc["format"] == "kctl-cluster-snapshot" and doc["version"] == 1
    assert ClusterSnapshot.from_dict(doc) == s
    # A snapshot written before kctl read the fenced brokers: not known (not "none fenced").
    del doc["fenced_brokers"]
    assert ClusterSnapshot.from_dict(doc).fenced_brokers is None


def test_snapshot_reader_ignores_added_fields_and_rejects_other_documents():
    s = snap([healthy(0)])
    doc = s.to_dict()
    doc["new_field"] = 1
    doc["topics"][0]["partitions"][0]["new_field"] = 2
    assert ClusterSnapshot.from_dict(doc) == s
    with pytest.raises(SnapshotFormatError):
        ClusterSnapshot.from_dict({"version": 1})
    with pytest.raises(SnapshotFormatError):
        ClusterSnapshot.from_dict({**doc, "version": 99})
    with pytest.raises(SnapshotFormatError):
        ClusterSnapshot.from_dict({**doc, "brokers": [{"host": "h"}]})
