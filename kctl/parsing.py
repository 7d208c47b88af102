"""Parsers of what operators type, one definition each, shared by every command: topic scopes,
durations, points in time, offsets and ``A..B`` ranges, ``KEY=VALUE`` items, broker ids, byte
sizes and rates. Pure: no client library, no I/O. Malformed input is a
:class:`~kctl.errors.UsageError` (exit 2) naming the option and what was expected.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from kctl.errors import NotFoundError, UsageError

Scope = dict[str, list[int] | None]  # topic -> partitions (None: every partition)


def topic_scope(items: list[str], option: str = "--topic") -> Scope:
    """``T`` (every partition) or ``T:0,2`` per item; repeated topics merge, and ``T`` alone
    wins over any partition list of the same topic."""
    out: Scope = {}
    for item in items:
        topic, colon, parts = item.partition(":")
        if not topic:
            raise UsageError(f"malformed {option} {item!r}", "expected TOPIC or TOPIC:P[,P...]")
        if not colon:
            out[topic] = None
            continue
        try:
            chosen = {int(p) for p in parts.split(",") if p.strip() != ""}
        except ValueError:
            raise UsageError(
                f"malformed {option} {item!r}", "partitions must be integers: TOPIC:0,1"
            ) from None
        if not chosen:
            raise UsageError(f"malformed {option} {item!r}", "no partitions after ':'")
        if any(p < 0 for p in chosen):
            raise UsageError(f"malformed {option} {item!r}", "partitions are 0 or more")
        if topic in out and out[topic] is None:
            continue
        out[topic] = sorted(chosen | set(out.get(topic) or []))
    return out


# Kafka's internal topics (Topic.isInternal): kafka-get-offsets.sh --exclude-internal-topics.
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})

_REGEX_CHARS = frozenset("*+?[](){}|^$\\")


def select_topics(
    names: list[str], items: list[str], *, exclude_internal: bool = False
) -> list[str]:
    """The topics ``items`` name, in the cluster's ``names``: an item is a topic's exact name, else
    a regular expression matched against whole names (kafka-get-offsets.sh's ``--topic``). No
    items: every topic, sorted. Named topics keep their order, a regex adds its matches sorted.
    A plain name that is no topic and a regex matching none are errors."""
    pool = sorted(n for n in names if not (exclude_internal and n in INTERNAL_TOPICS))
    if not items:
        return pool
    known = set(names)
    chosen: dict[str, None] = {}
    for item in items:
        if item in known:
            chosen[item] = None
            continue
        if not _REGEX_CHARS & set(item) and "." not in item:
            raise NotFoundError(f"unknown topic {item!r}", "not in the cluster's metadata")
        try:
            pattern = re.compile(item)
        except re.error as exc:
            raise UsageError(f"malformed topic regex {item!r}", str(exc)) from None
        matched = [n for n in pool if pattern.fullmatch(n)]
        if not matched:
            raise NotFoundError(f"unknown topic {item!r}", "no topic has that name or matches it")
        chosen.update(dict.fromkeys(matched))
    return list(chosen)


_TP_PATTERN = re.compile(r"([^:,]*)(?::(?:([0-9]*)|(?:([0-9]*)-([0-9]*))))?")

TopicPartitionPattern = tuple[str, int, int | None]  # topic regex ("" any), lo, hi exclusive


def topic_partition_patterns(
    text: str, option: str = "--topic-partitions"
) -> list[TopicPartitionPattern]:
    """kafka-get-offsets.sh's ``--topic-partitions``: ``t1:1,t2:0-3,t3,t4:5-,t5:-3`` — a topic
    regex (empty: any topic), then a partition, a range ``LO-HI`` (HI exclusive), ``LO-`` or
    ``-HI``; no partition part: every partition."""
    out: list[TopicPartitionPattern] = []
    for item in text.split(","):
        m = _TP_PATTERN.fullmatch(item)
        if m is None or not item:
            raise UsageError(
                f"malformed {option} {item!r}", "expected TOPIC_REGEX[:P|:LO-HI|:LO-|:-HI]"
            )
        topic, single, lo, hi = m.groups()
        if ":" in item and not (single or lo or hi):
            raise UsageError(f"malformed {option} {item!r}", "no partition after ':'")
        try:
            re.compile(topic)
        except re.error as exc:
            raise UsageError(f"malformed topic regex {topic!r} in {option}", str(exc)) from None
        if single:
            out.append((topic, int(single), int(single) + 1))
        elif lo or hi:
            out.append((topic, int(lo or 0), int(hi) if hi else None))
        else:
            out.append((topic, 0, None))
    return out


def match_topic_partitions(
    partitions: dict[str, list[int]],
    patterns: list[TopicPartitionPattern],
    *,
    exclude_internal: bool = False,
) -> list[tuple[str, int]]:
    """The (topic, partition) pairs of ``partitions`` that any pattern selects, sorted."""
    out: set[tuple[str, int]] = set()
    for regex, lo, hi in patterns:
        pattern = re.compile(regex) if regex else None
        for topic, ids in partitions.items():
            if exclude_internal and topic in INTERNAL_TOPICS:
                continue
            if pattern is not None and not pattern.fullmatch(topic):
                continue
            out.update((topic, p) for p in ids if p >= lo and (hi is None or p < hi))
    return sorted(out)


# --time of kafka-get-offsets.sh: the special values ListOffsets knows, by name and number.
OFFSET_SPECS = {
    "latest": -1,
    "earliest": -2,
    "max-timestamp": -3,
    "earliest-local": -4,
    "latest-tiered": -5,
    "earliest-pending-upload": -6,
}
OFFSET_SPEC_NAMES = {v: k for k, v in OFFSET_SPECS.items()}


def offset_time(text: str, option: str = "--time") -> int:
    """A ``--time`` for ListOffsets: a special value (``latest``/-1, ``earliest``/-2,
    ``max-timestamp``/-3, ``earliest-local``/-4, ``latest-tiered``/-5,
    ``earliest-pending-upload``/-6, answered as that negative number), a timestamp in epoch
    milliseconds (bare or ``@MS``) or an ISO-8601 time (:func:`time_ms`)."""
    raw = text.strip()
    if raw.lower() in OFFSET_SPECS:
        return OFFSET_SPECS[raw.lower()]
    if re.fullmatch(r"-\d+", raw):
        if int(raw) in OFFSET_SPEC_NAMES:
            return int(raw)
        raise UsageError(f"unknown {option} {raw!r}", "the special times are -1 to -6")
    if re.fullmatch(r"\d+", raw) and not looks_like_time(raw):
        return time_ms(f"@{raw}", option)
    if not looks_like_time(raw):
        raise UsageError(
            f"malformed {option} {raw!r}",
            "expected ISO-8601, EPOCH_MS, @EPOCH_MS or one of " + "|".join(OFFSET_SPECS),
        )
    return time_ms(raw, option)


_ISO_DURATION_RE = (
    r"^P(?:(?P<d>\d+(?:\.\d+)?)D)?(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?"
    r"(?:(?P<s>\d+(?:\.\d+)?)S)?)?$"
)
_COMPACT_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
# Durations longer than this are typing mistakes, not operations (and overflow datetime).
MAX_DURATION = timedelta(days=36500)


def duration(text: str, option: str = "duration") -> timedelta:
    """A duration in either spelling: ISO-8601 as kafka-consumer-groups.sh takes it (``PT30M``,
    ``P1DT2H``, sign optional) or compact (``90`` seconds, ``15s``, ``10m``, ``1h30m``,
    ``500ms``, ``2d``)."""
    raw = text.strip()
    body = raw.upper()
    sign = -1 if body.startswith("-") else 1
    body = body.lstrip("+-")
    value: timedelta | None = None
    if body.startswith("P"):
        m = re.match(_ISO_DURATION_RE, body)  # compiled on first use, cached by re
        if m and body not in ("P", "PT") and not body.endswith("T"):
            parts = {k: float(v) for k, v in m.groupdict().items() if v}
            seconds = (
                parts.get("d", 0) * 86400
                + parts.get("h", 0) * 3600
                + parts.get("m", 0) * 60
                + parts.get("s", 0)
            )
            value = timedelta(seconds=seconds) if seconds <= MAX_DURATION.total_seconds() else None
            if value is None:
                raise UsageError(f"{option} {raw!r} is too long", "at most 36500 days")
    else:
        low = body.lower()
        if re.fullmatch(r"\d+(\.\d+)?", low):
            seconds = float(low)
        else:
            found = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)", low)
            if found and "".join(n + u for n, u in found) == low:
                seconds = sum(float(n) * _COMPACT_UNITS[u] for n, u in found)
            else:
                seconds = -1.0
        if seconds > MAX_DURATION.total_seconds():
            raise UsageError(f"{option} {raw!r} is too long", "at most 36500 days")
        value = timedelta(seconds=seconds) if seconds >= 0 else None
    if value is None:
        raise UsageError(
            f"malformed {option} {raw!r}", "say 15s, 10m, 1h30m, 500ms, or ISO-8601 like PT30M"
        )
    return sign * value


def looks_like_time(text: str) -> bool:
    """An ``@EPOCH_MS`` or an ISO-8601 date(-time), as opposed to an offset."""
    return text.startswith("@") or bool(re.match(r"^\d{4}-\d{2}-\d{2}", text))


def time_ms(text: str, option: str = "time") -> int:
    """A point in time as epoch milliseconds: ``@1700000000000``, or ISO-8601
    (``2024-05-01T12:00:00Z``, ``2024-05-01T14:00:00+02:00``, ``2024-05-01``). **A date-time
    without a zone is UTC**, everywhere in kctl (kafka-consumer-groups.sh would take the
    machine's local time; a script's meaning should not depend on the machine)."""
    raw = text.strip()
    if raw.startswith("@"):
        try:
            value = int(raw[1:])
        except ValueError:
            raise UsageError(f"malformed {option} {raw!r}", "expected @EPOCH_MS") from None
        if not 0 <= value < 2**63:
            raise UsageError(f"{option} {raw!r} is out of range", "0 <= EPOCH_MS < 2^63")
        return value
    try:
        when = datetime.fromisoformat(raw.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"malformed {option} {raw!r}",
            "expected ISO-8601 like 2024-05-01T12:00:00Z or @EPOCH_MS",
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    try:
        value = int(when.timestamp() * 1000)
    except (OverflowError, ValueError, OSError):
        raise UsageError(f"{option} {raw!r} is out of range", "a time after 1970") from None
    if value < 0:
        raise UsageError(f"{option} {raw!r} is out of range", "a time after 1970")
    return value


# -- numbers ------------------------------------------------------------------------------------

# The widths Kafka's protocol gives integers (epochs int16; partitions, node ids and most sizes
# int32; offsets, producer ids and times int64).
INT16_MIN, INT16_MAX = -(2**15), 2**15 - 1
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def number_text(value: float) -> str:
    """Integers as integers (2147483647, not 2.14748e+09); other numbers in their shortest exact
    form (0.01, nan)."""
    if isinstance(value, int):
        return str(value)
    if value == value and value not in (float("inf"), float("-inf")) and value.is_integer():
        return str(int(value))
    return repr(value)


def offset(text: str, option: str, *, allow_end: bool = False) -> int:
    """An offset: 0 .. 2^63-1 (and -1, "up to the end", where ``allow_end``)."""
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"malformed {option} {text!r}", "expected an integer offset") from None
    if not (-1 if allow_end else 0) <= value <= INT64_MAX:
        low = "-1 (the end) or 0" if allow_end else "0"
        raise UsageError(f"{option} {text!r} is out of range", f"{low}..2^63-1")
    return value


def offset_range(
    text: str,
    option: str,
    *,
    hint: str,
    form: str = "A..B",
    open_ends: bool = False,
    single: bool = False,
    ordered: bool = True,
) -> tuple[int, int]:
    """``A..B``, both ends included, as ``(A, B)``; malformed is ``OPTION 'TEXT' is not FORM
    (HINT)``.

    ``open_ends``: either end may be left out (``100..`` from 100 on, ``..200`` from 0, ``..``
    everything up to 2^63-1). ``single``: a lone ``N`` means ``N..N``. ``ordered``: ``0 <= A <=
    B`` or a usage error ``OPTION 'TEXT': want 0 <= A <= B`` (A and B as ``form`` names them)."""
    first, sep, last = text.partition("..")
    try:
        if not sep:
            if not single:
                raise ValueError
            first = last = text
        lo = int(first) if first or not open_ends else 0
        hi = int(last) if last or not open_ends else INT64_MAX
    except ValueError:
        raise UsageError(f"{option} {text!r} is not {form}", hint) from None
    if ordered and not 0 <= lo <= hi:
        a, _, b = form.partition("..")
        raise UsageError(f"{option} {text!r}: want 0 <= {a} <= {b}")
    return lo, hi


def partition(text: str | int, option: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"malformed {option} {text!r}", "expected a partition number") from None
    if not 0 <= value <= INT32_MAX:
        raise UsageError(f"{option} {text!r} is out of range", "0..2^31-1")
    return value


def before_offsets(items: list[str], option: str = "--before") -> tuple[int | None, dict[int, int]]:
    """``--before 100`` (every partition) and ``--before 2:500`` (one partition); -1 = the end."""
    everywhere: int | None = None
    per: dict[int, int] = {}
    for item in items:
        part, colon, off = item.rpartition(":")
        try:
            value = offset(off, option, allow_end=True)
            if colon:
                per[partition(part, option)] = value
            else:
                everywhere = value
        except UsageError as exc:  # name the whole item, as typed
            what = (
                f"malformed {option} {item!r}"
                if exc.what.startswith("malformed")
                else f"{option} {item!r} is out of range"
            )
            raise UsageError(what, f"OFFSET or PARTITION:OFFSET; {exc.why}") from None
    return everywhere, per


# -- KEY=VALUE ----------------------------------------------------------------------------------


def key_value(
    item: str,
    option: str,
    *,
    form: str = "key=value",
    example: str | None = None,
    strip_key: bool = False,
    value_pattern: str | None = None,
    secret: bool = False,
) -> tuple[str, str]:
    """One ``KEY=VALUE`` as typed: split at the first ``=``, so the value may hold more of them
    and may be empty; the value is kept as typed. A missing ``=`` or an empty key is a usage
    error naming ``option`` (``""`` for positional arguments: the item alone):
    ``malformed OPTION 'ITEM' (expected FORM)``, or, given an ``example``,
    ``OPTION 'ITEM' is not FORM (e.g. EXAMPLE)``.

    ``strip_key``: blanks around the key go (``" a =1"`` is key ``a``), and a blank key is empty.
    ``value_pattern``: a regular expression the whole value must match, else the same error.
    ``secret``: the item may be a secret (a password typed without its key), so the error never
    shows it: ``malformed OPTION value (expected FORM)``."""
    key, eq, value = item.partition("=")
    if strip_key:
        key = key.strip()
    if eq and key and (value_pattern is None or re.fullmatch(value_pattern, value)):
        return key, value
    if secret:
        raise UsageError(f"malformed {option} value", f"expected {form}")
    shown = f"{option} {item!r}" if option else repr(item)
    if example is None:
        raise UsageError(f"malformed {shown}", f"expected {form}")
    raise UsageError(f"{shown} is not {form}", f"e.g. {example}")


def delete_records_json(text: str, source: str) -> dict[tuple[str, int], int]:
    """kafka-delete-records.sh's file:
    ``{"partitions": [{"topic": "t", "partition": 0, "offset": 10}], "version": 1}``."""
    import orjson

    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"malformed JSON in {source}", str(exc)) from None
    parts = doc.get("partitions") if isinstance(doc, dict) else None
    if not isinstance(parts, list):
        raise UsageError(f"malformed {source}", 'expected {"partitions": [...], "version": 1}')
    out: dict[tuple[str, int], int] = {}
    for i, entry in enumerate(parts):
        fields = entry if isinstance(entry, dict) else {}
        if not {"topic", "partition", "offset"} <= set(fields):
            raise UsageError(
                f"malformed {source}", f"partitions[{i}] needs topic, partition and offset"
            )
        topic, part, off = fields.get("topic"), fields.get("partition"), fields.get("offset")
        if not isinstance(topic, str) or not topic:
            raise UsageError(f"malformed {source}", f"partitions[{i}] needs a topic name")
        for name, v in (("partition", part), ("offset", off)):
            if not isinstance(v, int) or isinstance(v, bool):
                raise UsageError(
                    f"malformed {source}", f"partitions[{i}].{name} must be an integer"
                )
        assert isinstance(part, int) and isinstance(off, int)
        if not 0 <= part <= INT32_MAX:
            raise UsageError(f"malformed {source}", f"partitions[{i}].partition is out of range")
        if not -1 <= off <= INT64_MAX:
            raise UsageError(f"malformed {source}", f"partitions[{i}].offset is out of range")
        out[(topic, part)] = off
    return out


# -- how keys and values are shown ----------------------------------------------------------

# One vocabulary for --key-format/--value-format in every command: "string" and "text" are the
# same (UTF-8 text), as consume and dump-segment each spelled it.
PAYLOAD_FORMAT_ALIASES = {"text": "string", "utf-8": "string", "utf8": "string"}


def payload_format(name: str, option: str, allowed: tuple[str, ...]) -> str:
    """The canonical name of a key/value format (``text`` and ``string`` alike), if the command
    offers it; else a usage error listing what it offers."""
    canonical = PAYLOAD_FORMAT_ALIASES.get(name.lower(), name.lower())
    if canonical not in allowed:
        shown = "|".join(allowed).replace("string", "string (text)")
        raise UsageError(f"unknown {option} {name!r}", f"expected one of {shown}")
    return canonical


def listen_address(text: str, option: str) -> tuple[str, int]:
    """``HOST:PORT`` to listen on, the host always explicit (a name, an IPv4 address or an
    IPv6 one in brackets, ``[::1]:9308``), the port 1-65535."""
    raw = text.strip()
    m = re.fullmatch(r"\[([0-9A-Fa-f:.]+)\]:(\d{1,5})|([^\s:\[\]]+):(\d{1,5})", raw)
    if m is None:
        raise UsageError(
            f"malformed {option} {text!r}", "say HOST:PORT, e.g. 127.0.0.1:9308 or [::1]:9308"
        )
    host = m[1] or m[3]
    port = int(m[2] or m[4])
    if not 1 <= port <= 65535:
        raise UsageError(f"{option} {text!r}: port {port} out of range", "1 to 65535")
    return host, port


def named_partitions(items: list[str]) -> dict[str, list[int]]:
    """``TOPIC:P[,P]`` items, every one naming its partitions (``partitions move-dir``)."""
    scope = topic_scope(list(items))
    whole = [t for t, ps in scope.items() if ps is None]
    if whole:
        raise UsageError(f"name the partitions of {whole[0]!r}", "expected TOPIC:PARTITION")
    return {t: ps for t, ps in scope.items() if ps is not None}


def broker_ids(text: str, option: str = "--brokers", example: str = "1,2,3") -> list[int]:
    """``--brokers 1,2,3`` (or another option of broker ids, ``example`` shown in the errors):
    distinct broker ids, in the order given."""
    try:
        ids = [int(b) for b in text.split(",") if b.strip()]
    except ValueError:
        raise UsageError(f"malformed {option} {text!r}", f"expected ids like {example}") from None
    if not ids or len(set(ids)) != len(ids):
        raise UsageError(f"malformed {option} {text!r}", f"expected distinct ids like {example}")
    return ids


def added_brokers(text: str) -> dict[int, str | None]:
    """``--add-broker 4,5`` or ``4:rack-a,5:rack-b`` (the rack of a broker a snapshot lacks)."""
    out: dict[int, str | None] = {}
    for item in (x.strip() for x in text.split(",")):
        if not item:
            continue
        ident, _, rack = item.partition(":")
        try:
            b = int(ident)
        except ValueError:
            raise UsageError(
                f"malformed --add-broker {text!r}", "expected ids like 4,5 or 4:rack-a,5:rack-b"
            ) from None
        if b in out:
            raise UsageError(f"malformed --add-broker {text!r}", f"broker {b} is named twice")
        out[b] = rack or None
    if not out:
        raise UsageError(f"malformed --add-broker {text!r}", "expected ids like 4,5")
    return out


_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "m": 1000**2,
    "mb": 1000**2,
    "g": 1000**3,
    "gb": 1000**3,
    "t": 1000**4,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}


def byte_size(text: str | int, option: str) -> int:
    """A byte count: ``50000000``, ``50MB`` / ``50M`` (10^6), ``1.5GiB`` (2^30), optionally
    followed by ``/s`` for a rate. At least 1."""
    raw = str(text).strip()
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([a-zA-Z]*)(?:/s)?", raw)
    unit = m.group(2).lower() if m else ""
    if not m or unit not in _SIZE_UNITS:
        raise UsageError(
            f"malformed {option} {raw!r}", "say a number of bytes, or with a unit: 50MB, 1.5GiB"
        )
    value = int(float(m.group(1)) * _SIZE_UNITS[unit])
    if value < 1:
        raise UsageError(f"{option} must be at least 1 byte", f"got {raw!r}")
    return value
