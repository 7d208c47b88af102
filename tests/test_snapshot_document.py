"""The snapshot document and a finding's document are written out per class (dataclasses'
generic asdict took 1.6 s at 20,000 partitions): they must stay exactly what asdict gives, so a
field added to a class and forgotten in its to_dict fails here."""

from __future__ import annotations

from dataclasses import asdict, fields

from kctl.replicas.model import (
    SNAPSHOT_FORMAT,
    SNAPSHOT_VERSION,
    BrokerInfo,
    ClusterSnapshot,
    LogDirInfo,
    PartitionInfo,
    ReplicaDir,
    TopicInfo,
)
from kctl.replicas.rules import Finding


def full_snapshot() -> ClusterSnapshot:
    """Every field of every class set to a value other than its default."""
    part = PartitionInfo(3, 2, [2, 1], [2], offline_replicas=[1], error="LEADER_NOT_AVAILABLE")
    topic = TopicInfo("orders", False, [part], min_insync_replicas=2,
                      min_insync_replicas_source="TOPIC", error="E")  # fmt: skip
    replica = ReplicaDir("orders", 3, 1024, 7, True)
    log_dir = LogDirInfo(2, "/data/a", "KAFKA_STORAGE_ERROR", [replica], 10, 5)
    return ClusterSnapshot(
        taken_at_ms=1, cluster_id="c", controller_id=1000,
        brokers=[BrokerInfo(2, "h", 9092, "r1")], topics=[topic],
        default_min_insync_replicas=2, default_replication_factor=3, log_dirs=[log_dir],
        log_dirs_unsupported=[4], bootstrap="h:9092", fenced_brokers=[5],
        config_errors={"t": "UNKNOWN_TOPIC_OR_PART"},
    )  # fmt: skip


# Reported on stderr when the snapshot is taken, not written into the document.
NOT_IN_DOCUMENT = {"config_errors"}


def test_every_class_sets_every_field_in_the_full_snapshot():
    snap = full_snapshot()
    for obj in (snap, snap.brokers[0], snap.topics[0], snap.topics[0].partitions[0],
                snap.log_dirs[0], snap.log_dirs[0].replicas[0]):  # fmt: skip
        for f in fields(obj):
            assert getattr(obj, f.name) not in (None, [], f.default), (type(obj), f.name)


def test_snapshot_document_is_asdict_with_format_and_version_first():
    snap = full_snapshot()
    doc = snap.to_dict()
    whole = {k: v for k, v in asdict(snap).items() if k not in NOT_IN_DOCUMENT}
    assert doc == {"format": SNAPSHOT_FORMAT, "version": SNAPSHOT_VERSION, **whole}
    assert list(doc) == ["format", "version", *whole]
    assert ClusterSnapshot.from_dict(doc) == snap
    # The document owns its lists: changing it leaves the snapshot as it was.
    doc["topics"][0]["partitions"][0]["isr"].append(9)
    assert snap.topics[0].partitions[0].isr == [2]


def test_snapshot_without_fenced_brokers_says_null():
    snap = full_snapshot()
    snap.fenced_brokers = None
    assert snap.to_dict()["fenced_brokers"] is None


def test_finding_document_is_asdict():
    finding = Finding("warn", "rf-below-minimum", "orders", 3, [1, 2], "replication factor 1")
    assert finding.to_dict() == asdict(finding)
    assert list(finding.to_dict()) == [f.name for f in fields(finding)]
