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


def _levels(feature: str, low: int, high: int) -> str:
    """A supported range: ``0..2``; metadata.version's by release too."""
    if feature == METADATA and low in METADATA_VERSIONS and high in METADATA_VERSIONS:
        return f"levels {low}..{high}: {level_name(feature, low)}..{level_name(feature, high)}"
    return f"{low}..{high}"


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
        # 0 turns a feature off, whatever its lowest supported level; metadata.version is
        # never off, and a level below its lowest is one Kafka no longer knows.
        lowest = f.supported_min if (name == METADATA or level != 0) else 0
        if level < lowest or level > f.supported_max:
            raise UsageError(
                f"{name}={level_name(name, level)} is out of range",
                f"the brokers support {_levels(name, f.supported_min, f.supported_max)}",
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
    """UpdateFeatures for the changes that change something (any broker forwards it to the
    controller); {feature: "OK" or the controller's reason}. The controller's own message is
    read from the response (kafka-python's ``update_features`` folds the request and response
    reprs into its error)."""
    import kafka.errors as Errors
    from kafka.protocol.admin import UpdateFeaturesRequest

    kinds = {"upgrade": 1, "safe-downgrade": 2, "unsafe-downgrade": 3}  # UpgradeType
    key = UpdateFeaturesRequest.FeatureUpdateKey
    updates = [
        key(
            feature=c.feature,
            max_version_level=c.target,
            allow_downgrade=c.kind != "upgrade",
            upgrade_type=kinds[c.kind],
        )
        for c in changes
        if c.kind != "unchanged"
    ]
    if not updates:
        return {}
    request = UpdateFeaturesRequest(
        timeout_ms=int(admin.timeout * 1000),
        feature_updates=updates,
        validate_only=validate_only,
        min_version=1 if validate_only else 0,  # validate_only came with v1
    )
    what = "validating feature levels" if validate_only else "changing feature levels"
    with kafka_python.LazyClient(admin) as lazy:
        response = kafka_python.send(lazy.client, request, what)

    def reason(code: int, message: str | None) -> str:
        name = Errors.for_code(code).__name__
        return f"{name}: {message}" if message else name

    results = {u.feature: "OK" for u in updates}
    if response.error_code:  # v2+: one error for the whole request, nothing was changed
        why = reason(response.error_code, response.error_message)
        return {name: why for name in results}
    for result in response.results or []:  # v0/v1: one per feature
        if result.error_code:
            results[result.feature] = reason(result.error_code, result.error_message)
    return results


def refusal(changes: list[Change], results: dict[str, str], *, execute: bool) -> KctlError | None:
    """The error ending a plan or change the controller refused (the first refused feature,
    with the controller's reason; UpdateFeatures changes all or nothing), else None."""
    failed = [c for c in changes if results.get(c.feature, "OK") != "OK"]
    if not failed:
        return None
    c = failed[0]
    verb = {"upgrade": "upgrade", "safe-downgrade": "downgrade"}.get(c.kind, "unsafely downgrade")
    what = (
        f"the controller {'refused' if execute else 'refuses'} to {verb} {c.feature} "
        f"from {level_name(c.feature, c.current)} to {level_name(c.feature, c.target)}"
    )
    return KctlError(what, results[c.feature])


def rows(changes: list[Change], results: dict[str, str]) -> list[dict[str, Any]]:
    """The plan's (or the change's) rows: feature, from, to, change, result."""
    return [
        {
            "feature": c.feature,
            "from": level_name(c.feature, c.current),
            "to": level_name(c.feature, c.target),
            "change": c.kind,
            "result": results.get(c.feature, "OK") if c.kind != "unchanged" else "nothing to do",
        }
        for c in changes
    ]
