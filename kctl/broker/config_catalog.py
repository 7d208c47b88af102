"""Catalogue of Apache Kafka topic-level configs and a client-side validator.

kctl checks topic config names and values here before sending them to a broker, so a typo or an
out-of-range value fails fast with a one-line reason instead of being accepted by a lenient test
broker or rejected later with a long broker stack trace.

Facts (names, types, defaults, bounds, parsing rules) were checked against Apache Kafka's source on
the 3.0-3.9 and 4.0-4.4 release branches:

* ``clients/src/main/java/org/apache/kafka/common/config/TopicConfig.java`` (config names)
* ``storage/src/main/java/org/apache/kafka/storage/internals/log/LogConfig.java`` (3.5+; before
  that ``core/src/main/scala/kafka/log/LogConfig.scala``): types, defaults, validators and the
  cross-config checks done by ``LogConfig.validate``
* ``clients/.../config/ConfigDef.java`` (how int/long/double/boolean/list strings are parsed),
  ``storage/.../log/ThrottledReplicaListValidator.java``,
  ``clients/.../record/CompressionType.java`` (compression level ranges),
  ``server-common/.../record/BrokerCompressionType.java`` and
  ``server-common/.../common/MetadataVersion.java`` (``message.format.version`` strings).

Where brokers of different versions disagree, the catalogue records it (``since``, ``removed_in``,
``older_min``).  Without ``broker_version`` the validator is lenient: it accepts a value if some
supported broker (3.0+) would.  With ``broker_version`` it applies that release's rules.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CONFIG_TYPES",
    "TOPIC_CONFIGS",
    "ConfigSpec",
    "validate_topic_config",
    "validate_topic_configs",
]

CONFIG_TYPES = frozenset(
    {"int", "long", "double", "boolean", "string", "list", "class", "password"}
)

_INT_MAX = 2**31 - 1
_LONG_MAX = 2**63 - 1


@dataclass(frozen=True)
class ConfigSpec:
    """One topic-level config as the broker defines it.

    ``min``/``max`` are inclusive bounds for numeric types, ``extra`` lists lone values allowed
    outside them (gzip's ``-1``), ``choices`` the allowed values of an enum string or of each list
    item.  ``since``/``removed_in`` are the first Kafka release that accepts / rejects the name;
    ``older_min`` is ``(release, bound)``: brokers older than ``release`` accept values down to
    ``bound`` instead of ``min``.  ``check`` names a special value check (see ``_SPECIAL``).
    """

    name: str
    type: str
    default: str | None
    valid: str
    min: int | float | None = None
    max: int | float | None = None
    extra: tuple[int, ...] = ()
    choices: tuple[str, ...] = ()
    since: str | None = None
    removed_in: str | None = None
    older_min: tuple[str, int] | None = None
    check: str | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if self.type not in CONFIG_TYPES:
            raise ValueError(f"unknown config type {self.type!r} for {self.name}")


def _range_text(lo: int | float | None, hi: int | float | None, extra: tuple[int, ...]) -> str:
    """Human-readable bounds, e.g. '>= -1', 'in [0, 1]', 'in [1, 9] or -1' ('' if unbounded)."""
    if lo is not None and hi is not None:
        text = f"in [{lo}, {hi}]"
    elif lo is not None:
        text = f">= {lo}"
    elif hi is not None:
        text = f"<= {hi}"
    else:
        text = ""
    return text + "".join(f" or {x}" for x in extra)


def _num(
    name: str,
    type_: str,
    default: str,
    lo: int | float | None = None,
    hi: int | float | None = None,
    *,
    extra: tuple[int, ...] = (),
    older_min: tuple[str, int] | None = None,
    **kw: Any,
) -> ConfigSpec:
    valid = _range_text(lo, hi, extra) or "any value"
    if older_min:
        valid += f" (>= {older_min[1]} before Kafka {older_min[0]})"
    return ConfigSpec(name, type_, default, valid, lo, hi, extra=extra, older_min=older_min, **kw)


def _bool(name: str, default: str, **kw: Any) -> ConfigSpec:
    return ConfigSpec(name, "boolean", default, "true or false", **kw)


def _enum(name: str, default: str, choices: tuple[str, ...], **kw: Any) -> ConfigSpec:
    return ConfigSpec(
        name, "string", default, "one of " + ", ".join(choices), choices=choices, **kw
    )


_WEEK_MS = str(7 * 24 * 3600 * 1000)
_THROTTLED = "'*' or a list of partition:broker pairs"

TOPIC_CONFIGS: dict[str, ConfigSpec] = {
    spec.name: spec
    for spec in (
        ConfigSpec(
            "cleanup.policy",
            "list",
            "delete",
            "a list of delete, compact",
            choices=("delete", "compact"),
            note="an empty list keeps segments forever (documented from Kafka 4.2)",
        ),
        _enum(
            "compression.type",
            "producer",
            ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
        ),
        _num("compression.gzip.level", "int", "-1", 1, 9, extra=(-1,), since="3.8"),
        _num("compression.lz4.level", "int", "9", 1, 17, since="3.8"),
        _num("compression.zstd.level", "int", "3", -131072, 22, since="3.8"),
        _num("delete.retention.ms", "long", str(24 * 3600 * 1000), 0),
        _bool("errors.deadletterqueue.group.enable", "false", since="4.4"),
        _num("file.delete.delay.ms", "long", "60000", 0),
        _num("flush.messages", "long", str(_LONG_MAX), 1, older_min=("3.3", 0)),
        _num("flush.ms", "long", str(_LONG_MAX), 0),
        ConfigSpec(
            "follower.replication.throttled.replicas", "list", "", _THROTTLED, check="throttled"
        ),
        _num("index.interval.bytes", "int", "4096", 0),
        ConfigSpec(
            "leader.replication.throttled.replicas", "list", "", _THROTTLED, check="throttled"
        ),
        _num(
            "local.retention.bytes",
            "long",
            "-2",
            -2,
            note="-2 = use retention.bytes, -1 = unlimited",
        ),
        _num("local.retention.ms", "long", "-2", -2, note="-2 = use retention.ms, -1 = unlimited"),
        _num("max.compaction.lag.ms", "long", str(_LONG_MAX), 1),
        _num("max.message.bytes", "int", str(1024 * 1024 + 12), 0),
        _bool("message.downconversion.enable", "true", removed_in="4.0"),
        ConfigSpec(
            "message.format.version",
            "string",
            "3.0-IV1",
            "a Kafka release such as 2.8, 0.10.2 or 3.0-IV1 (0.8.0 to 3.9)",
            removed_in="4.0",
            check="message_format_version",
            note="ignored once inter.broker.protocol.version >= 3.0",
        ),
        _num(
            "message.timestamp.after.max.ms",
            "long",
            "3600000",
            0,
            since="3.6",
            note=f"default was {_LONG_MAX} before Kafka 4.0",
        ),
        _num("message.timestamp.before.max.ms", "long", str(_LONG_MAX), 0, since="3.6"),
        _num("message.timestamp.difference.max.ms", "long", str(_LONG_MAX), 0, removed_in="4.0"),
        _enum("message.timestamp.type", "CreateTime", ("CreateTime", "LogAppendTime")),
        _num("min.cleanable.dirty.ratio", "double", "0.5", 0, 1),
        _num("min.compaction.lag.ms", "long", "0", 0),
        _num("min.insync.replicas", "int", "1", 1),
        _bool("preallocate", "false"),
        _num("remote.copy.lag.bytes", "long", "-1", -1, since="4.4"),
        _num("remote.copy.lag.ms", "long", "0", -1, since="4.4"),
        _bool("remote.log.copy.disable", "false", since="3.9"),
        _bool("remote.log.delete.on.disable", "false", since="3.9"),
        _bool("remote.storage.enable", "false", note="tiered storage is usable from Kafka 3.6"),
        _num("retention.bytes", "long", "-1", note="-1 = unlimited"),
        _num("retention.ms", "long", _WEEK_MS, -1, note="-1 = unlimited"),
        _num("segment.bytes", "int", str(1024**3), 1024 * 1024, older_min=("4.1", 14)),
        _num("segment.index.bytes", "int", str(10 * 1024 * 1024), 4, older_min=("3.3", 0)),
        _num("segment.jitter.ms", "long", "0", 0),
        _num("segment.ms", "long", _WEEK_MS, 1),
        _bool("unclean.leader.election.enable", "false"),
    )
}

# Broker-level names (ServerTopicConfigSynonyms) that set a topic config's cluster default; users
# often pass these where a topic config is expected.
_BROKER_SYNONYMS: dict[str, str] = {
    **{
        f"log.{n}": n
        for n in (
            "segment.bytes",
            "retention.bytes",
            "retention.ms",
            "index.interval.bytes",
            "cleanup.policy",
            "preallocate",
            "message.timestamp.type",
            "message.format.version",
            "message.timestamp.before.max.ms",
            "message.timestamp.after.max.ms",
            "message.timestamp.difference.max.ms",
            "message.downconversion.enable",
            "local.retention.ms",
            "local.retention.bytes",
        )
    },
    **{
        f"log.cleaner.{n}": n
        for n in (
            "delete.retention.ms",
            "min.compaction.lag.ms",
            "max.compaction.lag.ms",
        )
    },
    "log.roll.ms": "segment.ms",
    "log.roll.hours": "segment.ms",
    "log.roll.jitter.ms": "segment.jitter.ms",
    "log.roll.jitter.hours": "segment.jitter.ms",
    "log.index.size.max.bytes": "segment.index.bytes",
    "log.flush.interval.messages": "flush.messages",
    "log.flush.interval.ms": "flush.ms",
    "log.flush.scheduler.interval.ms": "flush.ms",
    "log.retention.minutes": "retention.ms",
    "log.retention.hours": "retention.ms",
    "message.max.bytes": "max.message.bytes",
    "log.segment.delete.delay.ms": "file.delete.delay.ms",
    "log.cleaner.min.cleanable.ratio": "min.cleanable.dirty.ratio",
}

# --- parsing, following org.apache.kafka.common.config.ConfigDef.parseType -----------------------

_JAVA_TRIM = "".join(chr(c) for c in range(0x21))  # String.trim() drops every char <= U+0020
_INTEGER = re.compile(r"[+-]?[0-9]+")
_DOUBLE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?")
_LIST_SEP = re.compile(r"[ \t\n\x0b\f\r]*,[ \t\n\x0b\f\r]*")
_REPLICA = re.compile(r"(?:[0-9]+:[0-9]+)?")
_IV = re.compile(r"IV[0-9]+")
_MESSAGE_FORMAT_RELEASES = frozenset(
    ["0.8.0", "0.8.1", "0.8.2", "0.9.0", "0.10.0", "0.10.1", "0.10.2", "0.11.0", "1.0", "1.1"]
    + [f"2.{m}" for m in range(9)]
    + [f"3.{m}" for m in range(10)]
)


def _number(spec: ConfigSpec, text: str) -> int | float | None:
    if spec.type == "double":
        return float(text.rstrip("fFdD")) if _DOUBLE.fullmatch(text) else None
    if not _INTEGER.fullmatch(text):
        return None
    n = int(text)
    limit = _INT_MAX if spec.type == "int" else _LONG_MAX
    return n if -limit - 1 <= n <= limit else None


def _split_list(text: str) -> list[str]:
    return _LIST_SEP.split(text) if text else []


def _message_format_version_ok(text: str) -> bool:
    # MetadataVersion.fromVersionString: keep 3 dot-segments for 0.x releases, else 2.
    parts = text.split(".")
    while parts and not parts[-1]:
        parts.pop()  # Java's String.split drops trailing empty strings
    keep = 3 if text.startswith("0.") else 2
    key = text if len(parts) <= keep else ".".join(parts[:keep])
    release, dash, iv = key.partition("-")
    return release in _MESSAGE_FORMAT_RELEASES and (not dash or bool(_IV.fullmatch(iv)))


def _throttled_ok(text: str) -> bool:
    items = [item.strip(_JAVA_TRIM) for item in _split_list(text)]
    return "".join(items) == "*" or all(_REPLICA.fullmatch(item) for item in items)


_SPECIAL: dict[str, Callable[[str], bool]] = {
    "throttled": _throttled_ok,
    "message_format_version": _message_format_version_ok,
}


def _version(text: str) -> tuple[int, int]:
    match = re.match(r"\s*(\d+)\.(\d+)", text)
    if not match:
        raise ValueError(f"unrecognised Kafka version {text!r}")
    return int(match[1]), int(match[2])


def _effective_min(spec: ConfigSpec, broker: tuple[int, int] | None) -> int | float | None:
    if spec.older_min and (broker is None or broker < _version(spec.older_min[0])):
        return spec.older_min[1]
    return spec.min


def _unknown(name: str) -> str:
    if name in _BROKER_SYNONYMS:
        return f"unknown topic config {name!r} (broker config; use {_BROKER_SYNONYMS[name]!r})"
    close = difflib.get_close_matches(name.strip().lower(), TOPIC_CONFIGS, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown topic config {name!r}{hint}"


def validate_topic_config(
    name: str, value: str, *, broker_version: str | None = None
) -> str | None:
    """Return None if ``name=value`` is a valid topic config, else a one-line reason.

    ``broker_version`` (e.g. "3.9" or "4.1.0") applies that release's rules: names it does not
    know or no longer knows, and bounds that changed between releases.  Raises ValueError only
    for an unparseable ``broker_version``.
    """
    spec = TOPIC_CONFIGS.get(name)
    if spec is None:
        return _unknown(name)
    broker = _version(broker_version) if broker_version is not None else None
    if broker is not None:
        if spec.since and broker < _version(spec.since):
            return f"{name} needs Kafka {spec.since} or newer (broker is {broker[0]}.{broker[1]})"
        if spec.removed_in and broker >= _version(spec.removed_in):
            return (
                f"{name} was removed in Kafka {spec.removed_in} (broker is {broker[0]}.{broker[1]})"
            )

    text = str(value).strip(_JAVA_TRIM)
    got = f", got {value!r}"
    if spec.check:
        return None if _SPECIAL[spec.check](text) else f"{name} must be {spec.valid}{got}"
    if spec.type in ("int", "long", "double"):
        lo, hi = _effective_min(spec, broker), spec.max
        n = _number(spec, text)
        if n is not None and (
            n in spec.extra or ((lo is None or n >= lo) and (hi is None or n <= hi))
        ):
            return None
        article = "an" if spec.type == "int" else "a"
        expected = f"{article} {spec.type} {_range_text(lo, hi, spec.extra)}".rstrip()
        return f"{name} must be {expected}{got}"
    if spec.type == "boolean":
        return None if text.lower() in ("true", "false") else f"{name} must be true or false{got}"
    if spec.type == "list" and spec.choices:
        items = _split_list(text)
        if any(item not in spec.choices for item in items):
            return f"{name} must be {spec.valid}{got}{_case_hint(spec, items)}"
        if len(set(items)) != len(items):
            return f"{name} must not repeat a value{got}"
        return None
    if spec.choices and text not in spec.choices:
        return f"{name} must be {spec.valid}{got}{_case_hint(spec, [text])}"
    return None


def _case_hint(spec: ConfigSpec, items: list[str]) -> str:
    lowered = {c.lower() for c in spec.choices}
    bad = [i for i in items if i not in spec.choices]
    return " (values are case-sensitive)" if bad and all(i.lower() in lowered for i in bad) else ""


def _valid_text(configs: Mapping[str, str], name: str) -> str | None:
    """The trimmed value of ``name`` if present and individually valid, else None."""
    if name not in configs or validate_topic_config(name, configs[name]) is not None:
        return None
    return str(configs[name]).strip(_JAVA_TRIM)


def _int_of(configs: Mapping[str, str], name: str) -> int | None:
    text = _valid_text(configs, name)
    return None if text is None else int(text)


def _true(configs: Mapping[str, str], name: str) -> bool:
    return (_valid_text(configs, name) or "").lower() == "true"


def _cross_checks(configs: Mapping[str, str]) -> list[str]:
    """Checks LogConfig.validate makes across configs, applied to the pairs given together."""
    problems = []
    lo, hi = _int_of(configs, "min.compaction.lag.ms"), _int_of(configs, "max.compaction.lag.ms")
    if lo is not None and hi is not None and lo > hi:
        problems.append(
            f"min.compaction.lag.ms ({lo}) must not exceed max.compaction.lag.ms ({hi})"
        )
    if not _true(configs, "remote.storage.enable"):
        return problems
    if "compact" in _split_list(_valid_text(configs, "cleanup.policy") or ""):
        problems.append("remote.storage.enable=true needs cleanup.policy=delete (no compaction)")
    copy_disabled = _true(configs, "remote.log.copy.disable")
    for unit in ("ms", "bytes"):
        total = _int_of(configs, f"retention.{unit}")
        local = _int_of(configs, f"local.retention.{unit}")
        if total is None or local is None or local == -2:  # -2: derived from retention.*
            continue
        if total >= 0 and (local == -1 or local > total):
            problems.append(
                f"local.retention.{unit} ({local}) must be within retention.{unit} ({total})"
            )
        elif copy_disabled and local != total:
            problems.append(
                f"local.retention.{unit} ({local}) must equal retention.{unit} ({total}) "
                "when remote.log.copy.disable=true"
            )
    return problems


def validate_topic_configs(
    configs: Mapping[str, str], *, broker_version: str | None = None
) -> list[str]:
    """Return every problem with ``configs`` (one line each), or an empty list if all are valid.

    Besides checking each entry, flags the cross-config conflicts brokers reject (compaction lag
    bounds, tiered storage with compaction or with local retention above total retention) when
    the configs involved are given together.
    """
    problems = [
        reason
        for name, value in configs.items()
        if (reason := validate_topic_config(name, value, broker_version=broker_version))
    ]
    return problems + _cross_checks(configs)
