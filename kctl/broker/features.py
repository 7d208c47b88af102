"""Feature levels (kafka-features.sh): what each broker supports and what the cluster has
finalized (ApiVersions), and changes to them (UpdateFeatures, forwarded to the controller;
``validate_only`` for the plan). The level tables and the planning are pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kctl.broker import kafka_python
from kctl.broker.client import Admin
from kctl.errors import KctlError, UsageError

# metadata.version's feature levels and the release each names (Kafka's MetadataVersion).
METADATA_VERSIONS: dict[int, str] = {
    1: "3.0-IV1",
    2: "3.1-IV0",
    3: "3.2-IV0",
    4: "3.3-IV0",
    5: "3.3-IV1",
    6: "3.3-IV2",
    7: "3.3-IV3",
    8: "3.4-IV0",
    9: "3.5-IV0",
    10: "3.5-IV1",
    11: "3.5-IV2",
    12: "3.6-IV0",
    13: "3.6-IV1",
    14: "3.6-IV2",
    15: "3.7-IV0",
    16: "3.7-IV1",
    17: "3.7-IV2",
    18: "3.7-IV3",
    19: "3.7-IV4",
    20: "3.8-IV0",
    21: "3.9-IV0",
    22: "4.0-IV0",
    23: "4.0-IV1",
    24: "4.0-IV2",
    25: "4.0-IV3",
    26: "4.1-IV0",
    27: "4.1-IV1",
    28: "4.2-IV0",
    29: "4.2-IV1",
    30: "4.3-IV0",
    31: "4.4-IV0",
}
METADATA = "metadata.version"


def level_name(feature: str, level: int) -> str:
    """A level as kafka-features.sh prints it: metadata.version by release name."""
    if feature == METADATA and level in METADATA_VERSIONS:
        return METADATA_VERSIONS[level]
    return str(level)


def metadata_level(text: str) -> int:
    """metadata.version's level for ``4.3``, ``4.3-IV0`` or a bare level number. A release
    without ``-IVn`` means its last internal version, as kafka-features.sh takes it."""
    if text.isdigit():
        return int(text)
    matches = [lvl for lvl, name in METADATA_VERSIONS.items() if name == text]
    if not matches:
        matches = [lvl for lvl, name in METADATA_VERSIONS.items() if name.split("-")[0] == text]
    if not matches:
        known = f"{METADATA_VERSIONS[1]}..{METADATA_VERSIONS[max(METADATA_VERSIONS)]}"
        raise UsageError(f"unknown metadata version {text!r}", f"known: {known}")
    return max(matches)


@dataclass
class Feature:
    name: str
    supported_min: int
    supported_max: int
    finalized_level: int  # 0: not finalized (off)
    epoch: int | None


def features_from(answer: dict[str, Any]) -> list[Feature]:
    """Rows from kafka-python's ``describe_features`` answer (ApiVersions), sorted by name; a
    feature the cluster has not finalized is at level 0, as kafka-features.sh shows it."""
    epochs = {v.get("finalized_epoch") for v in answer.values()} - {None}
    epoch = max(epochs) if epochs else None
    rows = []
    for name, info in sorted(answer.items()):
        lo, hi = info.get("supported", (0, 0))
        finalized = info.get("finalized")
        rows.append(Feature(name, lo, hi, finalized[1] if finalized else 0, epoch))
    return rows


def describe(admin: Admin) -> list[Feature]:
    from kafka.errors import KafkaError

    admin.metadata()  # fail fast, with the connection error, when unreachable
    with kafka_python.LazyClient(admin) as lazy:
        try:
            return features_from(lazy.client.describe_features())
        except KafkaError as exc:
            raise KctlError("describing features", str(exc) or type(exc).__name__) from exc


@dataclass
class Change:
    feature: str
    current: int
    target: int
    kind: str  # upgrade | safe-downgrade | unsafe-downgrade | unchanged


def plan(features: list[Feature], wanted: dict[str, int], downgrade: str | None) -> list[Change]:
    """The changes ``wanted`` (feature -> level) asks for, checked against what the cluster
    supports. ``downgrade``: None for an upgrade (a lower level is refused), "safe" or
    "unsafe" for a downgrade (a higher level is refused)."""
    by_name = {f.name: f for f in features}
    changes = []
    for name, level in wanted.items():
        f = by_name.get(name)
        if f is None:
            known = ", ".join(sorted(by_name))
            raise UsageError(f"unknown feature {name!r}", f"the cluster knows {known}")
        if level < 0 or level > f.supported_max:
            raise UsageError(
                f"{name}={level} is out of range",
                f"the brokers support {f.supported_min}..{f.supported_max}",
            )
        if level == f.finalized_level:
            kind = "unchanged"
        elif downgrade is None:
            if level < f.finalized_level:
                raise UsageError(
                    f"{name}={level} is lower than its level {level_name(name, f.finalized_level)}",
                    "use kctl features downgrade",
                )
            kind = "upgrade"
        else:
            if level > f.finalized_level:
                raise UsageError(
                    f"{name}={level} is higher than its level "
                    f"{level_name(name, f.finalized_level)}",
                    "use kctl features upgrade",
                )
            kind = f"{downgrade}-downgrade"
        changes.append(Change(name, f.finalized_level, level, kind))
    return changes


def apply(admin: Admin, changes: list[Change], *, validate_only: bool) -> dict[str, str]:
    """UpdateFeatures for the changes that change something; {feature: "OK" or the error}."""
    from kafka.admin import UpdateFeatureType
    from kafka.errors import KafkaError

    kinds = {
        "upgrade": UpdateFeatureType.UPGRADE,
        "safe-downgrade": UpdateFeatureType.SAFE_DOWNGRADE,
        "unsafe-downgrade": UpdateFeatureType.UNSAFE_DOWNGRADE,
    }
    updates = {c.feature: (kinds[c.kind], c.target) for c in changes if c.kind != "unchanged"}
    if not updates:
        return {}
    with kafka_python.LazyClient(admin) as lazy:
        try:
            return dict(
                lazy.client.update_features(
                    updates, validate_only=validate_only, timeout_ms=int(admin.timeout * 1000)
                )
            )
        except KafkaError as exc:
            why = str(exc) or type(exc).__name__
            return {name: why for name in updates}
