"""The KRaft metadata image: ``__cluster_metadata`` records replayed into the cluster's state.

Pure: bytes of snapshots and log segments in, :class:`Image` out, no I/O. Each record type is
applied as Kafka's ``MetadataDelta`` applies it: a ``PartitionChangeRecord`` changes only the
fields it carries, a ``ConfigRecord`` with a null value deletes the key, records between
``BeginTransactionRecord`` and ``EndTransactionRecord`` take effect together at the end (and
never after an ``AbortTransactionRecord``). The document of :meth:`Image.to_dict` is described
in docs/metadata.md; its field names are a contract (fields are only ever added).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kctl.logfmt import batch as B
from kctl.logfmt.metadata import decode_metadata_record
from kctl.logfmt.wire import DecodeError

SECURITY_PROTOCOLS = {0: "PLAINTEXT", 1: "SSL", 2: "SASL_PLAINTEXT", 3: "SASL_SSL"}
CONFIG_RESOURCE_TYPES = {
    2: "TOPIC",
    4: "BROKER",
    8: "BROKER_LOGGER",
    16: "CLIENT_METRICS",
    32: "GROUP",
}
ACL_RESOURCE_TYPES = {
    1: "ANY",
    2: "TOPIC",
    3: "GROUP",
    4: "CLUSTER",
    5: "TRANSACTIONAL_ID",
    6: "DELEGATION_TOKEN",
    7: "USER",
}
ACL_PATTERN_TYPES = {1: "ANY", 2: "MATCH", 3: "LITERAL", 4: "PREFIXED"}
ACL_OPERATIONS = {
    1: "ANY",
    2: "ALL",
    3: "READ",
    4: "WRITE",
    5: "CREATE",
    6: "DELETE",
    7: "ALTER",
    8: "DESCRIBE",
    9: "CLUSTER_ACTION",
    10: "DESCRIBE_CONFIGS",
    11: "ALTER_CONFIGS",
    12: "IDEMPOTENT_WRITE",
    13: "CREATE_TOKENS",
    14: "DESCRIBE_TOKENS",
    15: "TWO_PHASE_COMMIT",
}
ACL_PERMISSIONS = {1: "ANY", 2: "DENY", 3: "ALLOW"}
SCRAM_MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
LEADER_RECOVERY_STATES = {0: "RECOVERED", 1: "RECOVERING"}
ZK_MIGRATION_STATES = {0: "NONE", 1: "MIGRATION", 2: "PRE_MIGRATION", 3: "POST_MIGRATION"}
NO_LEADER = -1
NO_LEADER_CHANGE = -2


@dataclass(frozen=True, slots=True)
class Entry:
    """One metadata record (or KRaft control record, ``type`` prefixed ``control:``) with its
    offset and the timestamp of its batch."""

    offset: int
    timestamp: int
    type: str
    data: dict[str, Any]


def entries(buf: bytes | memoryview, *, where: str = "") -> Iterator[Entry]:
    """Every record of a KRaft log segment or snapshot (``*.checkpoint``) in ``buf``, in order.
    A batch that cannot be read raises :class:`DecodeError` (a replay must not skip records)."""
    for item in B.scan(buf, resync=False):
        if isinstance(item, B.Problem):
            raise DecodeError(f"{where}at byte {item.position}: {item.reason}")
        if not item.is_valid:
            raise DecodeError(f"{where}batch at offset {item.base_offset}: CRC mismatch")
        for rec in B.records(buf, item):
            if item.is_control:
                ctl = B.control_record(rec.key, rec.value)
                yield Entry(
                    rec.offset,
                    rec.timestamp,
                    "control:" + str(ctl["type"]),
                    dict(ctl.get("data") or {}),
                )
                continue
            try:
                decoded = decode_metadata_record(rec.value)
            except DecodeError as exc:
                raise DecodeError(f"{where}record at offset {rec.offset}: {exc}") from exc
            yield Entry(rec.offset, rec.timestamp, str(decoded["type"]), dict(decoded["data"]))


@dataclass
class Image:
    """The cluster's metadata state after the record at ``offset`` (-1: nothing applied)."""

    offset: int = -1
    timestamp: int | None = None
    snapshot_end_offset: int | None = None  # the checkpoint the replay started from, if any
    controller_leader: int | None = None
    features: dict[str, int] = field(default_factory=dict)
    brokers: dict[int, dict[str, Any]] = field(default_factory=dict)
    controllers: dict[int, dict[str, Any]] = field(default_factory=dict)
    topics: dict[str, dict[str, Any]] = field(default_factory=dict)  # by topic id
    configs: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    acls: dict[str, dict[str, Any]] = field(default_factory=dict)
    scram: dict[str, dict[str, int]] = field(default_factory=dict)  # user → mechanism → iters
    quotas: dict[tuple[tuple[str, str | None], ...], dict[str, float]] = field(default_factory=dict)
    delegation_tokens: dict[str, dict[str, Any]] = field(default_factory=dict)
    producer_ids: dict[str, int] | None = None
    zk_migration_state: str | None = None
    pending: list[Entry] | None = None  # records of an open metadata transaction
    pending_begin: int | None = None
    records_applied: int = 0
    unknown_types: dict[str, int] = field(default_factory=dict)

    # -----------------------------------------------------------------------------------------

    def topic_by_name(self, name: str) -> dict[str, Any] | None:
        return next((t for t in self.topics.values() if t["name"] == name), None)

    def to_dict(self) -> dict[str, Any]:
        """The stable document (docs/metadata.md)."""
        topics = sorted(self.topics.values(), key=lambda t: str(t["name"]))
        return {
            "offset": self.offset,
            "timestamp": self.timestamp,
            "snapshot_end_offset": self.snapshot_end_offset,
            "controller_leader": self.controller_leader,
            "features": dict(sorted(self.features.items())),
            "brokers": [self.brokers[k] for k in sorted(self.brokers)],
            "controllers": [self.controllers[k] for k in sorted(self.controllers)],
            "topics": [
                {
                    "name": t["name"],
                    "topic_id": t["topic_id"],
                    "partitions": [t["partitions"][p] for p in sorted(t["partitions"])],
                }
                for t in topics
            ],
            "configs": [
                {"resource_type": rt, "resource_name": rn, "configs": dict(sorted(c.items()))}
                for (rt, rn), c in sorted(self.configs.items())
            ],
            "acls": sorted(self.acls.values(), key=lambda a: str(a["id"])),
            "scram_users": [
                {
                    "name": user,
                    "mechanisms": [
                        {"mechanism": m, "iterations": it} for m, it in sorted(mechs.items())
                    ],
                }
                for user, mechs in sorted(self.scram.items())
            ],
            "client_quotas": [
                {
                    "entity": {t: n for t, n in ent},
                    "quotas": dict(sorted(q.items())),
                }
                for ent, q in sorted(self.quotas.items(), key=lambda kv: repr(kv[0]))
            ],
            "delegation_tokens": [
                self.delegation_tokens[k] for k in sorted(self.delegation_tokens)
            ],
            "producer_ids": self.producer_ids,
            "zk_migration_state": self.zk_migration_state,
            "pending_transaction": None
            if self.pending is None
            else {"begin_offset": self.pending_begin, "records": len(self.pending)},
            "records_applied": self.records_applied,
            "unknown_record_types": dict(sorted(self.unknown_types.items())),
        }


# ---------------------------------------------------------------------------------------------
# Applying records


def _endpoints(items: Any) -> list[dict[str, Any]]:
    return [
        {
            "name": e.get("name"),
            "host": e.get("host"),
            "port": e.get("port"),
            "security_protocol": SECURITY_PROTOCOLS.get(
                int(e.get("security_protocol", -1)), str(e.get("security_protocol"))
            ),
        }
        for e in items or []
    ]


def _features(items: Any) -> dict[str, list[int]]:
    return {
        str(f["name"]): [int(f["min_supported_version"]), int(f["max_supported_version"])]
        for f in items or []
    }


def _present(data: dict[str, Any], key: str) -> bool:
    return key in data and data[key] is not None


def _apply_partition_change(p: dict[str, Any], d: dict[str, Any]) -> None:
    """PartitionChangeRecord: only the fields present change (PartitionRegistration.merge)."""
    leader = d.get("leader", NO_LEADER_CHANGE)
    if leader is None:
        leader = NO_LEADER_CHANGE
    changed_leader = leader != NO_LEADER_CHANGE
    if _present(d, "isr"):
        p["isr"] = list(d["isr"])
    if changed_leader:
        p["leader"] = int(leader)
    if _present(d, "replicas"):
        p["replicas"] = list(d["replicas"])
        if not _present(d, "directories"):
            p["directories"] = [
                _dir_of(p, r) for r in p["replicas"]
            ]  # Kafka keeps each replica's dir
    for key in ("removing_replicas", "adding_replicas", "directories"):
        if _present(d, key):
            p[key] = list(d[key])
    if _present(d, "eligible_leader_replicas"):
        p["eligible_leader_replicas"] = list(d["eligible_leader_replicas"])
    if _present(d, "last_known_elr"):
        p["last_known_elr"] = list(d["last_known_elr"])
    lrs = d.get("leader_recovery_state")
    if lrs is not None and int(lrs) != -1:
        p["leader_recovery_state"] = LEADER_RECOVERY_STATES.get(int(lrs), str(lrs))
    # Kafka bumps the leader epoch when the leader changes (or on a replica reassignment's
    # completion, which also arrives with a leader field); the partition epoch on every change.
    if changed_leader:
        p["leader_epoch"] = int(p["leader_epoch"]) + 1
    p["partition_epoch"] = int(p["partition_epoch"]) + 1


def _dir_of(p: dict[str, Any], replica: int) -> str:
    old = list(p.get("replicas") or [])
    dirs = list(p.get("directories") or [])
    if replica in old and old.index(replica) < len(dirs):
        return str(dirs[old.index(replica)])
    return "AAAAAAAAAAAAAAAAAAAAAA"  # Uuid.UNKNOWN_DIR... Kafka's DirectoryId.UNASSIGNED


def _quota_entity(items: Any) -> tuple[tuple[str, str | None], ...]:
    return tuple(sorted((str(e["entity_type"]), e.get("entity_name")) for e in items or []))


def apply(image: Image, entry: Entry) -> None:
    """Apply one record to ``image`` in place (transactions buffered as Kafka buffers them)."""
    t, d = entry.type, entry.data
    image.offset = entry.offset
    image.timestamp = entry.timestamp
    if t.startswith("control:"):
        if t == "control:LEADER_CHANGE":
            image.controller_leader = d.get("leader_id")
        return
    if t == "BeginTransactionRecord":
        image.pending, image.pending_begin = [], entry.offset
        return
    if t == "EndTransactionRecord":
        buffered, image.pending, image.pending_begin = image.pending or [], None, None
        for e in buffered:
            _apply_record(image, e)
        return
    if t == "AbortTransactionRecord":
        image.pending, image.pending_begin = None, None
        return
    if image.pending is not None:
        image.pending.append(entry)
        return
    _apply_record(image, entry)


def _apply_record(image: Image, entry: Entry) -> None:
    t, d = entry.type, entry.data
    image.records_applied += 1
    if t == "NoOpRecord":
        return
    if t == "FeatureLevelRecord":
        level = int(d["feature_level"])
        if level == 0 and d["name"] != "metadata.version":
            image.features.pop(str(d["name"]), None)
        else:
            image.features[str(d["name"])] = level
    elif t == "RegisterBrokerRecord":
        bid = int(d["broker_id"])
        image.brokers[bid] = {
            "id": bid,
            "incarnation_id": d.get("incarnation_id"),
            "epoch": d.get("broker_epoch"),
            "endpoints": _endpoints(d.get("end_points")),
            "rack": d.get("rack"),
            "fenced": bool(d.get("fenced", True)),
            "in_controlled_shutdown": bool(d.get("in_controlled_shutdown", False)),
            "log_dirs": list(d.get("log_dirs") or []),
            "features": _features(d.get("features")),
            "is_migrating_zk_broker": bool(d.get("is_migrating_zk_broker", False)),
        }
    elif t == "UnregisterBrokerRecord":
        image.brokers.pop(int(d["broker_id"]), None)
    elif t in ("FenceBrokerRecord", "UnfenceBrokerRecord"):
        b = image.brokers.get(int(d["id"]))
        if b is not None:
            b["fenced"] = t == "FenceBrokerRecord"
    elif t == "BrokerRegistrationChangeRecord":
        b = image.brokers.get(int(d["broker_id"]))
        if b is not None:
            fenced = int(d.get("fenced") or 0)  # -1 unfence, 1 fence, 0 no change
            if fenced:
                b["fenced"] = fenced == 1
            if int(d.get("in_controlled_shutdown") or 0) == 1:
                b["in_controlled_shutdown"] = True
            if d.get("log_dirs"):
                b["log_dirs"] = list(d["log_dirs"])
    elif t == "RegisterControllerRecord":
        cid = int(d["controller_id"])
        image.controllers[cid] = {
            "id": cid,
            "incarnation_id": d.get("incarnation_id"),
            "endpoints": _endpoints(d.get("end_points")),
            "features": _features(d.get("features")),
        }
    elif t == "TopicRecord":
        image.topics[str(d["topic_id"])] = {
            "name": d["name"],
            "topic_id": d["topic_id"],
            "partitions": {},
        }
    elif t == "PartitionRecord":
        topic = image.topics.get(str(d["topic_id"]))
        if topic is not None:
            pid = int(d["partition_id"])
            topic["partitions"][pid] = {
                "partition": pid,
                "leader": int(d["leader"]),
                "leader_epoch": int(d["leader_epoch"]),
                "partition_epoch": int(d["partition_epoch"]),
                "replicas": list(d["replicas"]),
                "isr": list(d["isr"]),
                "eligible_leader_replicas": list(d.get("eligible_leader_replicas") or []),
                "last_known_elr": list(d.get("last_known_elr") or []),
                "removing_replicas": list(d.get("removing_replicas") or []),
                "adding_replicas": list(d.get("adding_replicas") or []),
                "directories": list(d.get("directories") or []),
                "leader_recovery_state": LEADER_RECOVERY_STATES.get(
                    int(d.get("leader_recovery_state") or 0), str(d.get("leader_recovery_state"))
                ),
            }
    elif t == "PartitionChangeRecord":
        topic = image.topics.get(str(d["topic_id"]))
        part = None if topic is None else topic["partitions"].get(int(d["partition_id"]))
        if part is not None:
            _apply_partition_change(part, d)
    elif t == "ClearElrRecord":
        for tp in image.topics.values():
            if d.get("topic_name") in (None, "", tp["name"]):
                for part in tp["partitions"].values():
                    part["eligible_leader_replicas"] = []
                    part["last_known_elr"] = []
    elif t == "RemoveTopicRecord":
        removed = image.topics.pop(str(d["topic_id"]), None)
        if removed is not None:
            image.configs.pop(("TOPIC", str(removed["name"])), None)
    elif t == "ConfigRecord":
        rtype = CONFIG_RESOURCE_TYPES.get(int(d["resource_type"]), str(d["resource_type"]))
        key = (rtype, str(d["resource_name"]))
        if d.get("value") is None:
            cfg = image.configs.get(key)
            if cfg is not None:
                cfg.pop(str(d["name"]), None)
                if not cfg:
                    del image.configs[key]
        else:
            image.configs.setdefault(key, {})[str(d["name"])] = str(d["value"])
    elif t == "AccessControlEntryRecord":
        image.acls[str(d["id"])] = {
            "id": d["id"],
            "resource_type": ACL_RESOURCE_TYPES.get(int(d["resource_type"]), "UNKNOWN"),
            "resource_name": d["resource_name"],
            "pattern_type": ACL_PATTERN_TYPES.get(int(d["pattern_type"]), "UNKNOWN"),
            "principal": d["principal"],
            "host": d["host"],
            "operation": ACL_OPERATIONS.get(int(d["operation"]), "UNKNOWN"),
            "permission_type": ACL_PERMISSIONS.get(int(d["permission_type"]), "UNKNOWN"),
        }
    elif t == "RemoveAccessControlEntryRecord":
        image.acls.pop(str(d["id"]), None)
    elif t == "UserScramCredentialRecord":
        mech = SCRAM_MECHANISMS.get(int(d["mechanism"]), str(d["mechanism"]))
        image.scram.setdefault(str(d["name"]), {})[mech] = int(d["iterations"])
    elif t == "RemoveUserScramCredentialRecord":
        mech = SCRAM_MECHANISMS.get(int(d["mechanism"]), str(d["mechanism"]))
        mechs = image.scram.get(str(d["name"]))
        if mechs is not None:
            mechs.pop(mech, None)
            if not mechs:
                del image.scram[str(d["name"])]
    elif t == "ClientQuotaRecord":
        ent = _quota_entity(d.get("entity"))
        if d.get("remove"):
            q = image.quotas.get(ent)
            if q is not None:
                q.pop(str(d["key"]), None)
                if not q:
                    del image.quotas[ent]
        else:
            image.quotas.setdefault(ent, {})[str(d["key"])] = float(d["value"])
    elif t == "ProducerIdsRecord":
        image.producer_ids = {
            "broker_id": int(d["broker_id"]),
            "broker_epoch": int(d["broker_epoch"]),
            "next_producer_id": int(d["next_producer_id"]),
        }
    elif t == "DelegationTokenRecord":
        image.delegation_tokens[str(d["token_id"])] = {
            k: v for k, v in d.items() if k != "hmac"
        }  # no secrets
    elif t == "RemoveDelegationTokenRecord":
        image.delegation_tokens.pop(str(d["token_id"]), None)
    elif t == "ZkMigrationStateRecord":
        state = int(d["zk_migration_state"])
        image.zk_migration_state = ZK_MIGRATION_STATES.get(state, str(state))
    else:
        image.unknown_types[t] = image.unknown_types.get(t, 0) + 1


def replay(
    records: Iterable[Entry], image: Image | None = None, *, until: int | None = None
) -> Image:
    """``image`` (a fresh one by default) after every record of ``records`` up to and including
    offset ``until`` (all when None)."""
    img = Image() if image is None else image
    for entry in records:
        if until is not None and entry.offset > until:
            break
        apply(img, entry)
    return img


def from_snapshot(records: Iterable[Entry], end_offset: int) -> Image:
    """The image a KRaft snapshot (``<end offset>-<epoch>.checkpoint``) holds: all its records;
    its offset is the snapshot's end offset - 1 (the last log offset it contains)."""
    img = Image()
    for entry in records:
        if entry.type.startswith("control:"):
            continue
        _apply_record(img, entry)
    img.offset = end_offset - 1
    img.snapshot_end_offset = end_offset
    return img


# ---------------------------------------------------------------------------------------------
# Differences between two images


def _entities(doc: dict[str, Any]) -> dict[tuple[str, str], Any]:
    out: dict[tuple[str, str], Any] = {}
    for name, level in doc["features"].items():
        out[("feature", name)] = level
    for b in doc["brokers"]:
        out[("broker", str(b["id"]))] = b
    for c in doc["controllers"]:
        out[("controller", str(c["id"]))] = c
    for t in doc["topics"]:
        out[("topic", t["name"])] = {"name": t["name"], "topic_id": t["topic_id"]}
        for p in t["partitions"]:
            out[("partition", f"{t['name']}-{p['partition']}")] = p
    for c in doc["configs"]:
        out[("config", f"{c['resource_type']}:{c['resource_name']}")] = c["configs"]
    for a in doc["acls"]:
        out[("acl", str(a["id"]))] = a
    for u in doc["scram_users"]:
        out[("scram_user", u["name"])] = u["mechanisms"]
    for q in doc["client_quotas"]:
        key = ",".join(f"{k}={v}" for k, v in q["entity"].items())
        out[("client_quota", key)] = q["quotas"]
    for tok in doc["delegation_tokens"]:
        out[("delegation_token", str(tok.get("token_id")))] = tok
    if doc["producer_ids"] is not None:
        out[("producer_ids", "next")] = doc["producer_ids"]
    if doc["zk_migration_state"] is not None:
        out[("zk_migration_state", "state")] = doc["zk_migration_state"]
    return out


def _changed_fields(before: Any, after: Any) -> dict[str, dict[str, Any]]:
    if isinstance(before, dict) and isinstance(after, dict):
        return {
            k: {"before": before.get(k), "after": after.get(k)}
            for k in sorted(set(before) | set(after), key=str)
            if before.get(k) != after.get(k)
        }
    return {"value": {"before": before, "after": after}}


def diff(before: Image, after: Image) -> dict[str, Any]:
    """What changed from ``before`` to ``after``: entities added, removed and changed (with the
    fields that differ). Entities: feature, broker, controller, topic, partition, config, acl,
    scram_user, client_quota, delegation_token, producer_ids, zk_migration_state."""
    a, b = _entities(before.to_dict()), _entities(after.to_dict())
    changes: list[dict[str, Any]] = []
    for key in sorted(set(a) | set(b)):
        kind, name = key
        if key not in a:
            changes.append({"change": "added", "kind": kind, "key": name, "value": b[key]})
        elif key not in b:
            changes.append({"change": "removed", "kind": kind, "key": name, "value": a[key]})
        elif a[key] != b[key]:
            changes.append(
                {
                    "change": "changed",
                    "kind": kind,
                    "key": name,
                    "fields": _changed_fields(a[key], b[key]),
                }
            )
    return {"from_offset": before.offset, "to_offset": after.offset, "changes": changes}
