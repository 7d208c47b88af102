"""Keys and values of the internal topics ``__consumer_offsets``, ``__transaction_state`` and
``__share_group_state``.

Both prefix key and value with an int16. The key's is the record type (Kafka's "coordinator-key"
apiKey; the key body itself is always version 0): in ``__consumer_offsets`` 0 a legacy offset
commit, 1 an offset commit, 2 classic group metadata, 3 and later the KIP-848 consumer, share and
streams group records; in ``__transaction_state`` 0. The value's is the value's version. A record
type or value version the schemas do not know is a :class:`DecodeError`, never a guess. A ``None``
value is a tombstone (the group or offset was deleted).
"""

from __future__ import annotations

import struct
from typing import Any

from kctl.logfmt.schemas import SCHEMAS
from kctl.logfmt.wire import DecodeError, decode_message

TRANSACTION_STATES = {
    0: "Empty",
    1: "Ongoing",
    2: "PrepareCommit",
    3: "PrepareAbort",
    4: "CompleteCommit",
    5: "CompleteAbort",
    6: "Dead",
    7: "PrepareEpochFence",
}


def _record_types(topic: str, kind: str) -> dict[int, str]:
    """Record type (the key's int16 prefix) → message name, for one internal topic."""
    return {
        s["api_key"]: name
        for name, s in SCHEMAS.items()
        if s.get("topic") == topic and s.get("type") == kind
    }


_GROUP_KEYS = _record_types("__consumer_offsets", "coordinator-key")
_GROUP_VALUES = _record_types("__consumer_offsets", "coordinator-value")
_TXN_KEYS = _record_types("__transaction_state", "coordinator-key")
_TXN_VALUES = _record_types("__transaction_state", "coordinator-value")
_SHARE_KEYS = _record_types("__share_group_state", "coordinator-key")
_SHARE_VALUES = _record_types("__share_group_state", "coordinator-value")


def _version(buf: Any, what: str) -> int:
    if buf is None or len(buf) < 2:
        raise DecodeError(f"{what} is shorter than its 2-byte version")
    return int(struct.unpack_from(">h", buf, 0)[0])


def _embedded(name: str, raw: bytes | None) -> Any:
    """ConsumerProtocolSubscription/Assignment bytes (version-prefixed) decoded, else hex."""
    if not raw:
        return None if raw is None else ""
    try:
        version = _version(raw, name)
        return {"version": version, **decode_message(name, raw[2:], version, exact=False)}
    except (DecodeError, KeyError, struct.error):
        return raw.hex()


def decode_offsets_key(key: Any) -> dict[str, Any]:
    """``{"type": "OffsetCommitKey", "version": 1, "data": {...}}``; ``version`` is the key's
    int16 prefix, i.e. the record type."""
    record_type = _version(key, "__consumer_offsets key")
    name = _GROUP_KEYS.get(record_type)
    if name is None:
        raise DecodeError(f"unknown __consumer_offsets record type {record_type}")
    return {"type": name, "version": record_type, "data": decode_message(name, bytes(key[2:]), 0)}


def decode_offsets_value(key_type: str, value: Any) -> dict[str, Any] | None:
    """The value for a key of ``key_type`` (as :func:`decode_offsets_key` names it); ``None``
    for a tombstone."""
    if value is None:
        return None
    schema = SCHEMAS.get(key_type)
    if schema is None or _GROUP_KEYS.get(schema["api_key"]) != key_type:
        raise DecodeError(f"{key_type} is not a __consumer_offsets key type")
    name = _GROUP_VALUES[schema["api_key"]]
    version = _version(value, "__consumer_offsets value")
    data = decode_message(name, bytes(value[2:]), version)
    if name == "GroupMetadataValue" and data.get("protocol_type") == "consumer":
        for member in data.get("members") or []:
            member["subscription"] = _embedded(
                "ConsumerProtocolSubscription", member.get("subscription")
            )
            member["assignment"] = _embedded("ConsumerProtocolAssignment", member.get("assignment"))
    return {"type": name, "version": version, "data": data}


def decode_offsets_record(key: Any, value: Any) -> dict[str, Any]:
    """One ``__consumer_offsets`` record: ``{"key": ..., "value": ... or None}``."""
    k = decode_offsets_key(key)
    return {"key": k, "value": decode_offsets_value(k["type"], value)}


def decode_transaction_record(key: Any, value: Any) -> dict[str, Any]:
    """One ``__transaction_state`` record; ``value`` None is a tombstone (expired id)."""
    kv = _version(key, "__transaction_state key")
    key_name = _TXN_KEYS.get(kv)
    if key_name is None:
        raise DecodeError(f"unknown __transaction_state record type {kv}")
    out: dict[str, Any] = {
        "key": {
            "type": key_name,
            "version": kv,
            "data": decode_message(key_name, bytes(key[2:]), 0),
        },
        "value": None,
    }
    if value is not None:
        value_name = _TXN_VALUES[kv]
        vv = _version(value, "__transaction_state value")
        data = decode_message(value_name, bytes(value[2:]), vv)
        status = data.get("transaction_status")
        known = TRANSACTION_STATES.get(status) if isinstance(status, int) else None
        data["transaction_state"] = known or f"Unknown({status})"
        out["value"] = {"type": value_name, "version": vv, "data": data}
    return out


def decode_share_state_record(key: Any, value: Any) -> dict[str, Any]:
    """One ``__share_group_state`` record (KIP-932): record type 0 a ShareSnapshot, 1 a
    ShareUpdate; ``value`` None is a tombstone. An unknown record type is a DecodeError."""
    kv = _version(key, "__share_group_state key")
    key_name = _SHARE_KEYS.get(kv)
    if key_name is None:
        raise DecodeError(f"unknown __share_group_state record type {kv}")
    out: dict[str, Any] = {
        "key": {
            "type": key_name,
            "version": kv,
            "data": decode_message(key_name, bytes(key[2:]), 0),
        },
        "value": None,
    }
    if value is not None:
        value_name = _SHARE_VALUES[kv]
        vv = _version(value, "__share_group_state value")
        out["value"] = {
            "type": value_name,
            "version": vv,
            "data": decode_message(value_name, bytes(value[2:]), vv),
        }
    return out
