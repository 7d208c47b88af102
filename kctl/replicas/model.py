"""The cluster snapshot: what Metadata, DescribeConfigs and DescribeLogDirs said about replica
placement and health, as plain dataclasses with an exact JSON round trip.

``kctl cluster snapshot -o json`` writes :meth:`ClusterSnapshot.to_dict`;
``kctl replicas validate --snapshot FILE`` reads it back with :meth:`ClusterSnapshot.from_dict`.
The field names are a contract (docs/replicas.md): fields are only ever added.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, TypeVar

T = TypeVar("T")

SNAPSHOT_FORMAT = "kctl-cluster-snapshot"
SNAPSHOT_VERSION = 1


class SnapshotFormatError(ValueError):
    """The document is not a kctl cluster snapshot this version can read."""


def _build(cls: type[T], data: Any, **nested: Any) -> T:
    """``cls`` from a dict, ignoring fields a later kctl added (fields are only ever added)."""
    if not isinstance(data, dict):
        raise TypeError(f"{cls.__name__}: expected an object, got {type(data).__name__}")
    known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    return cls(**{k: v for k, v in data.items() if k in known}, **nested)


@dataclass
class BrokerInfo:
    id: int
    host: str
    port: int
    rack: str | None = None


@dataclass
class PartitionInfo:
    partition: int
    leader: int  # -1: no leader
    replicas: list[int]
    isr: list[int]
    offline_replicas: list[int] = field(default_factory=list)
    error: str | None = None


@dataclass
class TopicInfo:
    name: str
    internal: bool
    partitions: list[PartitionInfo]
    # min.insync.replicas as DescribeConfigs gave it for the topic (its own value or the
    # broker's, whichever applies); None when the broker did not say.
    min_insync_replicas: int | None = None
    min_insync_replicas_source: str | None = None
    error: str | None = None


@dataclass
class ReplicaDir:
    """One replica in one log directory (DescribeLogDirs)."""

    topic: str
    partition: int
    size: int
    offset_lag: int
    is_future: bool


@dataclass
class LogDirInfo:
    broker: int
    path: str
    error: str | None  # None when online; the error name (e.g. KAFKA_STORAGE_ERROR) otherwise
    replicas: list[ReplicaDir] = field(default_factory=list)
    total_bytes: int | None = None
    usable_bytes: int | None = None


@dataclass
class ClusterSnapshot:
    taken_at_ms: int
    cluster_id: str | None
    controller_id: int | None
    brokers: list[BrokerInfo]
    topics: list[TopicInfo]
    # Cluster-wide defaults as a broker reported them (None when it did not say).
    default_min_insync_replicas: int | None = None
    default_replication_factor: int | None = None
    # Log dirs of the brokers that answered DescribeLogDirs; brokers that do not support it
    # are listed in log_dirs_unsupported (their replicas' log-dir checks are skipped).
    log_dirs: list[LogDirInfo] = field(default_factory=list)
    log_dirs_unsupported: list[int] = field(default_factory=list)
    bootstrap: str | None = None
    # Registered brokers that are fenced (stopped, or not caught up with the metadata), as
    # DescribeCluster v2 lists them (KRaft, Kafka 4.0+); None when the cluster did not say, so
    # that a broker missing from ``brokers`` may be stopped or may not be registered at all.
    fenced_brokers: list[int] | None = None

    def topic(self, name: str) -> TopicInfo | None:
        return next((t for t in self.topics if t.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        doc = {"format": SNAPSHOT_FORMAT, "version": SNAPSHOT_VERSION}
        doc.update(asdict(self))
        return doc

    @classmethod
    def from_dict(cls, doc: Any) -> ClusterSnapshot:
        if not isinstance(doc, dict) or doc.get("format") != SNAPSHOT_FORMAT:
            raise SnapshotFormatError(
                f"not a kctl cluster snapshot (no format {SNAPSHOT_FORMAT!r})"
            )
        version = doc.get("version")
        if not isinstance(version, int) or version > SNAPSHOT_VERSION:
            raise SnapshotFormatError(f"snapshot version {version!r} is newer than this kctl reads")
        try:
            return cls(
                taken_at_ms=int(doc["taken_at_ms"]),
                cluster_id=doc.get("cluster_id"),
                controller_id=doc.get("controller_id"),
                brokers=[_build(BrokerInfo, b) for b in doc["brokers"]],
                topics=[
                    _build(
                        TopicInfo,
                        {k: v for k, v in t.items() if k != "partitions"},
                        partitions=[_build(PartitionInfo, p) for p in t["partitions"]],
                    )
                    for t in doc["topics"]
                ],
                default_min_insync_replicas=doc.get("default_min_insync_replicas"),
                default_replication_factor=doc.get("default_replication_factor"),
                log_dirs=[
                    _build(
                        LogDirInfo,
                        {k: v for k, v in d.items() if k != "replicas"},
                        replicas=[_build(ReplicaDir, r) for r in d.get("replicas") or []],
                    )
                    for d in doc.get("log_dirs") or []
                ],
                log_dirs_unsupported=list(doc.get("log_dirs_unsupported") or []),
                bootstrap=doc.get("bootstrap"),
                fenced_brokers=(
                    None
                    if doc.get("fenced_brokers") is None
                    else [int(b) for b in doc["fenced_brokers"]]
                ),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SnapshotFormatError(f"malformed snapshot: {type(exc).__name__}: {exc}") from exc
