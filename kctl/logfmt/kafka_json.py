"""Kafka's own JSON form of decoded messages: what its generated ``*JsonConverter`` classes
write and DumpLogSegments prints in its text output.

kctl's decoders (:mod:`kctl.logfmt.wire`) give snake_case dicts; kctl's ``-o json``/``jsonl``
keep that stable schema. For the text output, which follows DumpLogSegments line for line, the
same dicts are rendered here the way Kafka's converters write them: field names as in the
message schema with the first letter lowercased (camelCase; kctl's snake_case names map back
without loss), in schema order, only the fields valid for the version, tagged fields only when
present, bytes as base64, compact JSON as Jackson prints it (doubles as Java prints them).
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

from kctl.logfmt.wire import _in


def camel(snake: str) -> str:
    """``last_contained_log_timestamp`` → ``lastContainedLogTimestamp``."""
    head, *rest = snake.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def upper_snake(name: str) -> str:
    """A metadata record's name as MetadataRecordType prints it: ``RegisterBrokerRecord`` →
    ``REGISTER_BROKER_RECORD``."""
    import re

    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).upper()


class _Json:
    """A value already rendered as JSON text."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def java_double(x: float) -> str:
    """A double as Java's Double.toString writes it (Jackson does so): ``2097152.0``,
    ``1.0E7``, ``1.0E-4``; the shortest digits that read back, as Python's repr."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1, x) < 0 else "0.0"
    if 1e-3 <= abs(x) < 1e7:
        text = repr(x)
        if "e" in text:  # Python's repr switches to exponents below 1e-4 only
            text = f"{x:.20f}".rstrip("0")
        return text if "." in text else text + ".0"
    from decimal import Decimal

    sign, digits, exp = Decimal(repr(x)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    power = len(digits) + int(exp) - 1
    return f"{'-' if sign else ''}{text[0]}.{text[1:] or '0'}E{power}"


def _value(v: Any, ftype: str, sub: Any, version: int) -> Any:
    if v is None:
        return None
    if ftype.startswith("[]"):
        inner = ftype[2:]
        return [_value(x, inner, sub, version) for x in v]
    if ftype == "struct":
        return _fields(v, sub, version)
    if ftype in ("bytes", "records"):
        if isinstance(v, dict):  # decoded embedded bytes: the caller renders them
            return v
        if isinstance(v, str):  # kctl left undecodable embedded bytes as hex
            v = bytes.fromhex(v)
        return base64.b64encode(bytes(v)).decode()
    if ftype == "float64":
        return _Json(java_double(float(v)))
    if ftype == "bool":
        return bool(v)
    return v


def _fields(data: dict[str, Any], fields: Any, version: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, ftype, versions, _nullable, _tagged_v, _tag, sub in fields:
        if not _in(versions, version):
            continue
        if name not in data:
            # a tagged field left at its default: Kafka's converter does not write it either
            continue
        out[camel(name)] = _value(data[name], ftype, sub, version)
    return out


def message(name: str, data: dict[str, Any], version: int) -> dict[str, Any]:
    """The converter's object for message ``name`` at ``version`` from kctl's decoded dict."""
    from kctl.logfmt.schemas import SCHEMAS

    return _fields(data, SCHEMAS[name]["fields"], version)


def dumps(v: Any) -> str:
    """Compact JSON as Jackson's ``JsonNode.toString`` writes it."""
    if isinstance(v, _Json):
        return v.text
    if isinstance(v, dict):
        return "{" + ",".join(f"{_string(k)}:{dumps(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(dumps(x) for x in v) + "]"
    if isinstance(v, str):
        return _string(v)
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    if isinstance(v, float):
        return java_double(v)
    return str(v)


def _string(s: str) -> str:
    # Jackson escapes control characters with upper-case hex; Python's json with lower-case.
    text = json.dumps(s, ensure_ascii=False)
    if "\\u00" in text:
        import re

        text = re.sub(r"\\u00([0-9a-f]{2})", lambda m: "\\u00" + m.group(1).upper(), text)
    return text


# -- what DumpLogSegments prints ---------------------------------------------------------------


def _coordinator_key(k: dict[str, Any]) -> str:
    return dumps({"type": str(k["version"]), "data": message(k["type"], k["data"], 0)})


def _coordinator_value(v: dict[str, Any] | None) -> str:
    if v is None:
        return "<DELETE>"
    data = message(v["type"], v["data"], v["version"])
    if v["type"] == "GroupMetadataValue":
        _embedded_members(v["data"], data)
    return dumps({"version": str(v["version"]), "data": data})


def _embedded_members(raw: dict[str, Any], out: dict[str, Any]) -> None:
    """The consumer protocol's subscription and assignment of each member, decoded as Kafka's
    OffsetsMessageParser replaces them (without their version), else its bytes as base64."""
    for src, dst in zip(raw.get("members") or [], out.get("members") or [], strict=False):
        for field, name in (
            ("subscription", "ConsumerProtocolSubscription"),
            ("assignment", "ConsumerProtocolAssignment"),
        ):
            got = src.get(field)
            if isinstance(got, dict):
                version = got["version"]
                body = {k: x for k, x in got.items() if k != "version"}
                dst[field] = message(name, body, version)


def record_text(decoded: dict[str, Any]) -> tuple[str | None, str | None]:
    """(key, payload) text of one record decoded by an internal-topic decoder
    (:mod:`kctl.logfmt.internal`, :mod:`kctl.logfmt.metadata`), as DumpLogSegments' parsers
    print them."""
    key, value = decoded.get("key"), decoded.get("value")
    if key is None:  # __cluster_metadata: no key, the record in the value
        if value is None:
            return None, None
        return None, dumps(
            {
                "type": upper_snake(value["type"]),
                "version": value["version"],
                "data": message(value["type"], value["data"], value["version"]),
            }
        )
    return _coordinator_key(key), _coordinator_value(value)


CONTROL_LABELS = {
    "LEADER_CHANGE": " LeaderChange: ",
    "SNAPSHOT_HEADER": " SnapshotHeader ",
    "SNAPSHOT_FOOTER": " SnapshotFooter ",
    "KRAFT_VERSION": " KRaftVersion ",
    "KRAFT_VOTERS": " KRaftVoters ",
}
_CONTROL_MESSAGES = {
    "LEADER_CHANGE": "LeaderChangeMessage",
    "SNAPSHOT_HEADER": "SnapshotHeaderRecord",
    "SNAPSHOT_FOOTER": "SnapshotFooterRecord",
    "KRAFT_VERSION": "KRaftVersionRecord",
    "KRAFT_VOTERS": "VotersRecord",
}


def control_text(c: dict[str, Any]) -> str:
    """The part of a control record's line after its metadata (with its leading space), as
    DumpLogSegments prints it; an unknown type as `` controlType: UNKNOWN(id)``."""
    from kctl.logfmt.batch import CONTROL_TYPES

    kind = c["type"]
    if "coordinator_epoch" in c:
        return f" endTxnMarker: {kind} coordinatorEpoch: {c['coordinator_epoch']}"
    label = CONTROL_LABELS.get(kind)
    if label is None or c.get("data") is None:
        if kind.startswith("UNKNOWN"):
            return f" controlType: {kind}"
        type_id = next(i for i, n in CONTROL_TYPES.items() if n == kind)
        return f" controlType: {kind}({type_id})"
    data = c["data"]
    version = data.get("version", 0)
    return label + dumps(message(_CONTROL_MESSAGES[kind], data, version))


# -- bytes as Java's new String(bytes, UTF_8) reads them ---------------------------------------


def _cont(b: int) -> bool:
    return (b & 0xC0) == 0x80


def _java_malformed(buf: bytes, sp: int) -> int:
    """How many bytes Java's UTF-8 decoder replaces with one U+FFFD at ``sp`` (where Python's
    decoder found an error); ``len(buf) - sp`` when it gives up on a truncated end."""
    n = len(buf)
    b1 = buf[sp]
    if 0xC2 <= b1 <= 0xDF:  # two bytes: the lead alone, or the end
        return 1 if sp + 1 < n else n - sp
    if 0xE0 <= b1 <= 0xEF:
        if sp + 2 < n:
            b2, b3 = buf[sp + 1], buf[sp + 2]
            if (b1 == 0xE0 and (b2 & 0xE0) == 0x80) or not _cont(b2) or not _cont(b3):
                return 1 if (b1 == 0xE0 and (b2 & 0xE0) == 0x80) or not _cont(b2) else 2
            return 3  # well formed but a surrogate: one replacement for the three
        if sp + 1 < n and ((b1 == 0xE0 and (buf[sp + 1] & 0xE0) == 0x80) or not _cont(buf[sp + 1])):
            return 1
        return n - sp
    if 0xF0 <= b1 <= 0xF7:
        if sp + 3 < n:
            b2 = buf[sp + 1]
            if (
                b1 > 0xF4
                or (b1 == 0xF0 and not 0x90 <= b2 <= 0xBF)
                or (b1 == 0xF4 and (b2 & 0xF0) != 0x80)
                or not _cont(b2)
            ):
                return 1
            return 2 if not _cont(buf[sp + 2]) else 3
        if b1 > 0xF4:
            return 1
        if sp + 1 < n:
            b2 = buf[sp + 1]
            if (
                (b1 == 0xF0 and not 0x90 <= b2 <= 0xBF)
                or (b1 == 0xF4 and (b2 & 0xF0) != 0x80)
                or not _cont(b2)
            ):
                return 1
            if sp + 2 < n and not _cont(buf[sp + 2]):
                return 2
        return n - sp
    return 1


def _java_replace(exc: UnicodeError) -> tuple[str, int]:
    assert isinstance(exc, UnicodeDecodeError)
    return "\ufffd", exc.start + _java_malformed(bytes(exc.object), exc.start)


_REGISTERED = False


def java_utf8(data: bytes) -> str:
    """``data`` as Java's ``new String(data, UTF_8)`` gives it: invalid sequences replaced by
    U+FFFD the way Java groups them (Python's "replace" groups them differently)."""
    global _REGISTERED
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if not _REGISTERED:
        import codecs

        codecs.register_error("kctl-java-replace", _java_replace)
        _REGISTERED = True
    return data.decode("utf-8", "kctl-java-replace")
