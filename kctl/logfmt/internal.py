"""Keys and values of the internal topics ``__consumer_offsets`` and ``__transaction_state``.

Both prefix key and value with an int16 version. In ``__consumer_offsets`` the key version is
the record type: 0 and 1 an offset commit, 2 group metadata, 3 and later the KIP-848 consumer and
share group records. A ``None`` value is a tombstone (the group or offset was deleted).
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


def _group_key_schemas() -> dict[int, str]:
    out = {}
    for name, s in SCHEMAS.items():
        if name.endswith("Key") and name != "TransactionLogKey":
            lo, hi = s["valid"]
            for v in range(lo, hi + 1):
                out[v] = name
    return out


_GROUP_KEYS = _group_key_schemas()


def _version(buf: Any, what: str) -> int:
    if buf is None or len(buf) < 2:
        raise DecodeError(f"{what} is shorter than its 2-byte version")
    return struct.unpack_from(">h", buf, 0)[0]


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
    """``{"type": "OffsetCommitKey", "version": 1, "data": {...}}``."""
    version = _version(key, "__consumer_offsets key")
    name = _GROUP_KEYS.get(version)
    if name is None:
        raise DecodeError(f"unknown __consumer_offsets key version {version}")
    return {"type": name, "version": version, "data": decode_message(name, bytes(key[2:]), version)}


def decode_offsets_value(key_type: str, value: Any) -> dict[str, Any] | None:
    """The value for a key of ``key_type`` (as :func:`decode_offsets_key` names it); ``None``
    for a tombstone."""
    if value is None:
        return None
    name = key_type[: -len("Key")] + "Value"
    version = _version(value, "__consumer_offsets value")
    data = decode_message(name, bytes(value[2:]), version, exact=False)
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
    if kv != 0:
        raise DecodeError(f"unknown __transaction_state key version {kv}")
    out: dict[str, Any] = {
        "key": {
            "type": "TransactionLogKey",
            "version": kv,
            "data": decode_message("TransactionLogKey", bytes(key[2:]), kv),
        },
        "value": None,
    }
    if value is not None:
        vv = _version(value, "__transaction_state value")
        data = decode_message("TransactionLogValue", bytes(value[2:]), vv, exact=False)
        status = data.get("transaction_status")
        data["transaction_state"] = TRANSACTION_STATES.get(status, f"Unknown({status})")
        out["value"] = {"type": "TransactionLogValue", "version": vv, "data": data}
    return out
