"""The cluster snapshot (:mod:`kctl.replicas.model`) of a KRaft metadata image
(:class:`kctl.logfmt.image.Image`): what ``kctl metadata image --snapshot-json`` writes for
``kctl replicas validate --snapshot``. Pure: an image in, a snapshot document out."""

from __future__ import annotations

from typing import Any

from kctl.logfmt.image import Image
from kctl.replicas.model import BrokerInfo, ClusterSnapshot, PartitionInfo, TopicInfo

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


def cluster_snapshot(image: Image, *, cluster_id: str | None = None) -> dict[str, Any]:
    """The image as the cluster snapshot ``kctl replicas validate --snapshot`` reads. Every
    registered broker is listed (fenced ones too: a dead cluster's brokers are all fenced);
    replicas on fenced or unregistered brokers are ``offline_replicas``. Log dirs are not known
    from metadata, so ``log_dirs_unsupported`` lists every broker."""
    live = {bid for bid, b in image.brokers.items() if not b["fenced"]}
    brokers = []
    for bid in sorted(image.brokers):
        b = image.brokers[bid]
        ep: dict[str, Any] = b["endpoints"][0] if b["endpoints"] else {"host": "", "port": 0}
        brokers.append(BrokerInfo(bid, str(ep["host"]), int(ep["port"]), b["rack"]))
    default_min = _int_config(image.configs.get(("BROKER", ""), {}), "min.insync.replicas")
    default_rf = _int_config(image.configs.get(("BROKER", ""), {}), "default.replication.factor")
    topics = []
    for t in sorted(image.topics.values(), key=lambda t: str(t["name"])):
        name = str(t["name"])
        own = _int_config(image.configs.get(("TOPIC", name), {}), "min.insync.replicas")
        parts = [
            PartitionInfo(
                partition=int(p["partition"]),
                leader=int(p["leader"]),
                replicas=list(p["replicas"]),
                isr=list(p["isr"]),
                offline_replicas=[r for r in p["replicas"] if r not in live],
            )
            for _, p in sorted(t["partitions"].items())
        ]
        topics.append(
            TopicInfo(
                name=name,
                internal=name in INTERNAL_TOPICS,
                partitions=parts,
                min_insync_replicas=own if own is not None else default_min,
                min_insync_replicas_source=(
                    "DYNAMIC_TOPIC_CONFIG"
                    if own is not None
                    else "DYNAMIC_DEFAULT_BROKER_CONFIG"
                    if default_min is not None
                    else None
                ),
            )
        )
    snap = ClusterSnapshot(
        taken_at_ms=int(image.timestamp or 0),
        cluster_id=cluster_id,
        controller_id=image.controller_leader,
        brokers=brokers,
        fenced_brokers=sorted(bid for bid, b in image.brokers.items() if b["fenced"]),
        topics=topics,
        default_min_insync_replicas=default_min,
        default_replication_factor=default_rf,
        log_dirs=[],
        log_dirs_unsupported=sorted(image.brokers),
    )
    return snap.to_dict()


def _int_config(cfg: dict[str, str], key: str) -> int | None:
    value = cfg.get(key)
    try:
        return None if value is None else int(value)
    except ValueError:
        return None
