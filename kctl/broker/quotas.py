"""Client quotas (kafka-configs.sh --entity-type users|clients|ips): DescribeClientQuotas and
AlterClientQuotas through kafka-python's message classes (librdkafka has neither). Entities,
keys and values are checked by pure functions before anything is sent."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from kctl.broker import kafka_python
from kctl.broker.client import Admin
from kctl.errors import KctlError, UsageError
from kctl.parsing import key_value

# Entity types as the protocol names them, and the quota keys each accepts.
USER, CLIENT, IP = "user", "client-id", "ip"
KEYS = {
    "producer_byte_rate": (USER, CLIENT),
    "consumer_byte_rate": (USER, CLIENT),
    "request_percentage": (USER, CLIENT),
    "controller_mutation_rate": (USER, CLIENT),
    "connection_creation_rate": (IP,),
}
DEFAULT = None  # an entity name of None is the type's default entity


@dataclass(frozen=True)
class Entity:
    """(type, name) pairs, in Kafka's order (user, client-id, ip); a None name is the default."""

    parts: tuple[tuple[str, str | None], ...]

    def label(self) -> str:
        return ",".join(f"{t}={'<default>' if n is None else n}" for t, n in self.parts)

    def doc(self) -> dict[str, str | None]:
        return dict(self.parts)


@dataclass
class Quotas:
    entity: Entity
    values: dict[str, float] = field(default_factory=dict)


def entity(
    user: str | None, user_default: bool, client: str | None, client_default: bool,
    ip: str | None, ip_default: bool,
) -> Entity:  # fmt: skip
    """The entity the options name (user and client-id combine; ip stands alone)."""
    parts: list[tuple[str, str | None]] = []
    for kind, name, default in ((USER, user, user_default), (CLIENT, client, client_default),
                                (IP, ip, ip_default)):  # fmt: skip
        if name is not None and default:
            raise UsageError(f"--{kind} and --{kind}-default are exclusive")
        if name is not None:
            if not name:
                raise UsageError(f"--{kind} is empty", "name one, or --{kind}-default")
            parts.append((kind, name))
        elif default:
            parts.append((kind, DEFAULT))
    kinds = {k for k, _ in parts}
    if IP in kinds and len(kinds) > 1:
        raise UsageError("an ip quota stands alone", "ip entities do not combine with users")
    return Entity(tuple(parts))


def parse_values(items: list[str], ent: Entity) -> dict[str, float]:
    """KEY=VALUE quota settings, checked: a known key for the entity type, a finite number >= 0
    (request_percentage and rates are doubles in Kafka; byte rates are whole numbers)."""
    kinds = {k for k, _ in ent.parts}
    out: dict[str, float] = {}
    for item in items:
        key, text = key_value(
            item, "", form="KEY=VALUE", example="producer_byte_rate=1048576", strip_key=True
        )
        key = key.replace("-", "_").replace(".", "_")
        _check_key(key, kinds)
        try:
            value = float(text)
        except ValueError:
            raise UsageError(f"quota {key}={text!r} is not a number") from None
        if not math.isfinite(value) or value < 0:
            raise UsageError(f"quota {key}={text} is out of range", "a finite number >= 0")
        if key.endswith("_byte_rate") and value != int(value):
            raise UsageError(f"quota {key}={text} is not a whole number of bytes per second")
        out[key] = value
    return out


def _check_key(key: str, kinds: set[str]) -> None:
    if key not in KEYS:
        raise UsageError(f"unknown quota {key!r}", ", ".join(KEYS))
    if not kinds & set(KEYS[key]) or (IP in kinds) != (KEYS[key] == (IP,)):
        raise UsageError(
            f"quota {key} does not apply to {'/'.join(sorted(kinds))} entities",
            f"it applies to {' and '.join(KEYS[key])}",
        )


def check_keys(keys: list[str], ent: Entity) -> list[str]:
    out = []
    kinds = {k for k, _ in ent.parts}
    for key in keys:
        key = key.strip().replace("-", "_").replace(".", "_")
        _check_key(key, kinds)
        out.append(key)
    return out


def refuse_absent(names: list[str], found: list[Quotas], ent: Entity) -> None:
    """Deleting a quota the entity does not have is an error naming them, before anything is
    sent (kafka-configs.sh: "Invalid config(s): producer_byte_rate", exit 1); AlterClientQuotas
    itself accepts it and changes nothing, which kctl reported as "deleted"."""
    has = next((q.values for q in found if q.entity == ent), {})
    absent = [n for n in names if n not in has]
    if not absent:
        return
    held = ", ".join(sorted(has)) if has else "none"
    raise KctlError(
        f"{ent.label()} has no quota {', '.join(absent)}: nothing deleted", f"it has {held}"
    )


def _error(code: int, message: str | None, what: str) -> None:
    import kafka.errors as Errors

    if code:
        name = Errors.for_code(code).__name__
        raise KctlError(what, f"{name}: {message}" if message else name)


def describe(admin: Admin, ent: Entity | None) -> list[Quotas]:
    """Every quota entity (``ent`` None or empty), else exactly that entity."""
    from kafka.protocol.admin import DescribeClientQuotasRequest as R

    if ent is None or not ent.parts:
        components = [R.ComponentData(entity_type=t, match_type=2, match=None)
                      for t in (USER, CLIENT, IP)]  # fmt: skip
        strict = False
    else:
        components = [
            R.ComponentData(entity_type=t, match_type=1 if n is None else 0, match=n)
            for t, n in ent.parts
        ]
        strict = True
    found: list[Quotas] = []
    admin.metadata()
    with kafka_python.LazyClient(admin) as lazy:
        # Without an entity, one request per type (a filter on several types would ask for
        # entities that have all of them).
        requests = (
            [R(components=[c], strict=strict) for c in components]
            if not strict
            else [R(components=components, strict=True)]
        )
        for request in requests:
            answer = kafka_python.send(lazy.client, request, "describing quotas")
            _error(answer.error_code, answer.error_message, "describing quotas")
            for e in answer.entries or []:
                order = {USER: 0, CLIENT: 1, IP: 2}
                parts = tuple(sorted(((x.entity_type, x.entity_name) for x in e.entity),
                                     key=lambda p: order.get(p[0], 3)))  # fmt: skip
                q = Quotas(Entity(parts), {v.key: v.value for v in e.values})
                if q.entity not in {f.entity for f in found}:
                    found.append(q)
    return sorted(found, key=lambda q: q.entity.label())


def alter(
    admin: Admin, ent: Entity, values: dict[str, float], remove: list[str], *, validate_only: bool
) -> None:
    """Set ``values`` and remove ``remove`` on ``ent`` (AlterClientQuotas, forwarded to the
    controller)."""
    from kafka.protocol.admin import AlterClientQuotasRequest as R

    if not ent.parts:
        raise UsageError("no entity", "--user, --client-id, --ip or their --*-default")
    ops = [R.EntryData.OpData(key=k, value=v, remove=False) for k, v in values.items()]
    ops += [R.EntryData.OpData(key=k, value=0.0, remove=True) for k in remove]
    entry = R.EntryData(
        entity=[R.EntryData.EntityData(entity_type=t, entity_name=n) for t, n in ent.parts],
        ops=ops,
    )
    admin.metadata()
    with kafka_python.LazyClient(admin) as lazy:
        answer = kafka_python.send(
            lazy.client, R(entries=[entry], validate_only=validate_only), "altering quotas"
        )
    for e in answer.entries:
        _error(e.error_code, e.error_message, f"altering the quotas of {ent.label()}")


def row(q: Quotas) -> dict[str, Any]:
    """A flat row: the entity (``user=alice,client-id=<default>``) and one column per key."""
    out: dict[str, Any] = {"entity": q.entity.label()}
    for key in KEYS:
        value = q.values.get(key)
        out[key] = int(value) if value is not None and value == int(value) else value
    return out


def document(q: Quotas) -> dict[str, Any]:
    """``{"entity": {"user": "alice"}, "quotas": {...}}``; a null name is the default entity."""
    return {"entity": q.entity.doc(), "quotas": {k: q.values[k] for k in sorted(q.values)}}
