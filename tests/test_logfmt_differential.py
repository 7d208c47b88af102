"""Differential tests of the internal-topic decoders: records written by an encoder of our own
that reads Apache Kafka's message JSON (tools/kafka-messages/4.3.1/, not kctl's generated
schemas.py) decode field by field to what was written, at every valid version of every
``__consumer_offsets`` key/value type, ``__transaction_state`` and the ``__cluster_metadata``
records; and a record with a byte too many or too few is a problem, never a success."""

from __future__ import annotations

import base64
import json
import random
import re
import struct
from pathlib import Path
from typing import Any

import pytest

from kctl.logfmt import internal, metadata
from kctl.logfmt.wire import DecodeError

SPECS = Path(__file__).resolve().parent.parent / "tools" / "kafka-messages" / "4.3.1"
MAX = 32767


def _load(path: Path) -> dict[str, Any]:
    text = "\n".join(
        line for line in path.read_text().splitlines() if not line.strip().startswith("//")
    )
    return json.loads(text)


def _specs() -> dict[str, dict[str, Any]]:
    out = {}
    for p in SPECS.rglob("*.json"):
        spec = _load(p)
        # the internal topic of a coordinator record, by the module Kafka keeps it in
        spec["_topic"] = next((t for d, t in _COORDINATORS.items() if d in p.parts), None)
        out[spec["name"]] = spec
    return out


_COORDINATORS = {
    "group-coordinator": "__consumer_offsets",
    "transaction-coordinator": "__transaction_state",
    "share-coordinator": "__share_group_state",
}
ALL = _specs()


def _versions(text: str | None) -> tuple[int, int] | None:
    if text is None or text == "none":
        return None
    if text.endswith("+"):
        return int(text[:-1]), MAX
    lo, _, hi = text.partition("-")
    return int(lo), int(hi or lo)


def _in(text: str | None, v: int) -> bool:
    r = _versions(text)
    return r is not None and r[0] <= v <= r[1]


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


_FIXED = {
    "int8": ">b",
    "int16": ">h",
    "uint16": ">H",
    "int32": ">i",
    "uint32": ">I",
    "int64": ">q",
    "float64": ">d",
}


class Encoder:
    """Writes one message of one version from its Kafka JSON, with random values, and returns
    (bytes, the values as kctl should decode them)."""

    def __init__(self, spec: dict[str, Any], version: int, rnd: random.Random) -> None:
        self.spec = spec
        self.version = version
        self.flexible = _in(spec.get("flexibleVersions", "none"), version)
        self.common = {s["name"]: s["fields"] for s in spec.get("commonStructs", [])}
        self.rnd = rnd

    def message(self) -> tuple[bytes, dict[str, Any]]:
        return self.struct(self.spec["fields"])

    def struct(self, fields: list[dict[str, Any]]) -> tuple[bytes, dict[str, Any]]:
        v = self.version
        out = bytearray()
        expect: dict[str, Any] = {}
        tagged: list[tuple[int, bytes]] = []
        for f in fields:
            if not _in(f.get("versions") or f.get("taggedVersions"), v):
                continue
            nullable = _in(f.get("nullableVersions"), v)
            is_tagged = self.flexible and _in(f.get("taggedVersions"), v)
            ftype = f["type"]
            if is_tagged:
                base = ftype[2:] if ftype.startswith("[]") else ftype
                if (base not in _FIXED and base not in ("string", "bytes", "uuid", "bool")) or (
                    self.rnd.random() < 0.3
                ):
                    continue  # tagged structs (and some tagged fields) left out: absent
                raw, value = self.value(f, ftype, nullable=nullable)
                tagged.append((f["tag"], raw))
                expect[_snake(f["name"])] = value
                continue
            raw, value = self.value(f, ftype, nullable=nullable)
            out += raw
            expect[_snake(f["name"])] = value
        if self.flexible:
            tagged.sort()
            out += _uvarint(len(tagged))
            for tag, raw in tagged:
                out += _uvarint(tag) + _uvarint(len(raw)) + raw
        return bytes(out), expect

    def _len(self, n: int, wide: str) -> bytes:
        if self.flexible:
            return _uvarint(n + 1)
        return struct.pack(wide, n)

    def value(self, f: dict[str, Any], ftype: str, nullable: bool) -> tuple[bytes, Any]:
        rnd = self.rnd
        if ftype.startswith("[]"):
            if nullable and rnd.random() < 0.25:
                return self._len(-1, ">i"), None
            n = rnd.randrange(4)
            raws, values = [], []
            for _ in range(n):
                r, val = self.value(f, ftype[2:], nullable=False)
                raws.append(r)
                values.append(val)
            return self._len(n, ">i") + b"".join(raws), values
        if ftype in _FIXED:
            fmt = _FIXED[ftype]
            if ftype == "float64":
                val: Any = rnd.choice((0.0, 1.5, -2.25, 1e300))
            else:
                bits = struct.calcsize(fmt) * 8
                lo, hi = (
                    (0, (1 << bits) - 1)
                    if ftype.startswith("u")
                    else (
                        -(1 << (bits - 1)),
                        (1 << (bits - 1)) - 1,
                    )
                )
                val = rnd.choice((lo, hi, 0, -1 if lo < 0 else 1, rnd.randint(lo, hi)))
            return struct.pack(fmt, val), val
        if ftype == "bool":
            val = rnd.random() < 0.5
            return bytes([val]), val
        if ftype == "uuid":
            raw = rnd.randbytes(16)
            return raw, base64.urlsafe_b64encode(raw).decode().rstrip("=")
        if ftype == "string":
            if nullable and rnd.random() < 0.25:
                return self._len(-1, ">h"), None
            text = "".join(rnd.choice("abcé-_.xyz") for _ in range(rnd.randrange(12)))
            raw = text.encode()
            return self._len(len(raw), ">h") + raw, text
        if ftype in ("bytes", "records"):
            if nullable and rnd.random() < 0.25:
                return self._len(-1, ">i"), None
            raw = rnd.randbytes(rnd.randrange(10))
            return self._len(len(raw), ">i") + raw, raw
        # a struct: inline fields, or a common struct
        fields = f.get("fields") or self.common[ftype]
        if nullable:
            if rnd.random() < 0.25:
                return struct.pack(">b", -1), None
            body, val = self.struct(fields)
            return struct.pack(">b", 1) + body, val
        return self.struct(fields)


def _types(topic: str) -> list[tuple[str, str, int]]:
    """(key name, value name, api key) of an internal topic, from Kafka's JSON."""
    mine = {n: s for n, s in ALL.items() if s["_topic"] == topic}
    keys = {s["apiKey"]: n for n, s in mine.items() if s.get("type") == "coordinator-key"}
    values = {s["apiKey"]: n for n, s in mine.items() if s.get("type") == "coordinator-value"}
    return [(key, values[api], api) for api, key in sorted(keys.items())]


def _cases(topic: str) -> list[tuple[str, str, int, int]]:
    cases = []
    for key, value, api in _types(topic):
        rng = _versions(ALL[value]["validVersions"])
        assert rng is not None
        for v in range(rng[0], rng[1] + 1):
            cases.append((key, value, api, v))
    return cases


def _record(key: str, value: str, api: int, v: int, seed: int) -> tuple[bytes, bytes, Any, Any]:
    rnd = random.Random(f"{key}/{v}/{seed}")
    kraw, kexp = Encoder(ALL[key], 0, rnd).message()
    vraw, vexp = Encoder(ALL[value], v, rnd).message()
    return struct.pack(">h", api) + kraw, struct.pack(">h", v) + vraw, kexp, vexp


def _strip_derived(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "transaction_state"}


@pytest.mark.parametrize("case", _cases("__consumer_offsets"), ids=lambda c: f"{c[1]}-v{c[3]}")
def test_consumer_offsets_records_decode_to_what_was_written(case) -> None:
    key, value, api, v = case
    assert len(_types("__consumer_offsets")) >= 20
    for seed in range(8):
        k, val, kexp, vexp = _record(key, value, api, v, seed)
        if value == "GroupMetadataValue" and vexp.get("protocol_type") == "consumer":
            continue  # embedded subscriptions are decoded further
        got = internal.decode_offsets_record(k, val)
        assert got["key"] == {"type": key, "version": api, "data": kexp}
        assert got["value"] == {"type": value, "version": v, "data": vexp}
        assert internal.decode_offsets_record(k, None)["value"] is None  # a tombstone
        with pytest.raises(DecodeError):
            internal.decode_offsets_record(k, val + b"\x00")  # a byte the record does not use
        with pytest.raises(DecodeError):
            internal.decode_offsets_record(k + b"\x00", val)
        with pytest.raises(DecodeError):
            internal.decode_offsets_record(k, val[:-1])  # a byte short


@pytest.mark.parametrize("case", _cases("__transaction_state"), ids=lambda c: f"{c[1]}-v{c[3]}")
def test_transaction_state_records_decode_to_what_was_written(case) -> None:
    key, value, api, v = case
    for seed in range(16):
        k, val, kexp, vexp = _record(key, value, api, v, seed)
        got = internal.decode_transaction_record(k, val)
        assert got["key"] == {"type": key, "version": api, "data": kexp}
        assert got["value"]["type"] == value and got["value"]["version"] == v
        assert _strip_derived(got["value"]["data"]) == vexp
        status = vexp["transaction_status"]
        assert got["value"]["data"]["transaction_state"] == internal.TRANSACTION_STATES.get(
            status, f"Unknown({status})"
        )
        with pytest.raises(DecodeError):
            internal.decode_transaction_record(k, val + b"\x00")
        with pytest.raises(DecodeError):
            internal.decode_transaction_record(k, val[:-1])


def _metadata_cases() -> list[tuple[str, int]]:
    out = []
    for name, spec in sorted(ALL.items()):
        if spec.get("type") != "metadata":
            continue
        rng = _versions(spec["validVersions"])
        assert rng is not None
        for v in range(rng[0], rng[1] + 1):
            out.append((name, v))
    return out


@pytest.mark.parametrize("case", _metadata_cases(), ids=lambda c: f"{c[0]}-v{c[1]}")
def test_cluster_metadata_records_decode_to_what_was_written(case) -> None:
    name, v = case
    spec = ALL[name]
    for seed in range(4):
        body, expect = Encoder(spec, v, random.Random(f"{name}/{v}/{seed}")).message()
        frame = _uvarint(1) + _uvarint(spec["apiKey"]) + _uvarint(v)
        got = metadata.decode_metadata_record(frame + body)
        assert got == {"type": name, "version": v, "data": expect}
        with pytest.raises(DecodeError):
            metadata.decode_metadata_record(frame + body + b"\x00")
        if body:
            with pytest.raises(DecodeError):
                metadata.decode_metadata_record(frame + body[:-1])


def test_the_encoder_agrees_with_a_real_record() -> None:
    """The encoder itself against bytes Kafka wrote: the fixture OffsetCommit key re-encoded."""
    data = Path(__file__).resolve().parent / "data" / "consumer-offsets-records"
    key = (data / "offset_commit-01.key").read_bytes()
    decoded = internal.decode_offsets_key(key)["data"]
    g, t = decoded["group"].encode(), decoded["topic"].encode()
    rebuilt = (
        struct.pack(">hh", 1, len(g))
        + g
        + struct.pack(">h", len(t))
        + t
        + struct.pack(">i", decoded["partition"])
    )
    assert rebuilt == key


@pytest.mark.parametrize("case", _cases("__share_group_state"), ids=lambda c: f"{c[1]}-v{c[3]}")
def test_share_group_state_records_decode_to_what_was_written(case) -> None:
    key, value, api, v = case
    assert len(_types("__share_group_state")) == 2
    for seed in range(16):
        k, val, kexp, vexp = _record(key, value, api, v, seed)
        got = internal.decode_share_state_record(k, val)
        assert got["key"] == {"type": key, "version": api, "data": kexp}
        assert got["value"] == {"type": value, "version": v, "data": vexp}
        assert internal.decode_share_state_record(k, None)["value"] is None  # a tombstone
        with pytest.raises(DecodeError):
            internal.decode_share_state_record(k, val + b"\x00")
        with pytest.raises(DecodeError):
            internal.decode_share_state_record(k, val[:-1])
