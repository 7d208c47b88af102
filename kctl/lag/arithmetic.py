"""Pure arithmetic of consumer lag and offset resets: no I/O, no client library."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from typing import Any

from kctl.errors import KctlError, UsageError

TP = tuple[str, int]


def lag_of(committed: int | None, log_end: int) -> int | None:
    """Lag of one partition: log end - committed, as DESIGN.md's lag sample defines it (and
    kafka-consumer-groups.sh shows it); None without a commit. Negative only when the log ends
    before the commit (a recreated topic, an unclean election): kept visible, not hidden."""
    if committed is None or committed < 0:
        return None
    return log_end - committed


NEGATIVE_LAG = "negative_lag"  # the flag of a partition whose log ends before its commit


def counted_lag(lag: int | None) -> int:
    """A partition's share of a total: a negative lag counts 0, so a commit beyond the log end
    of one partition never hides the lag of another (and no lag is 0)."""
    return lag if lag is not None and lag > 0 else 0


def lag_flag(lag: int | None) -> str | None:
    """``negative_lag`` when the committed offset is beyond the log end (the log was truncated
    or the topic recreated under the commit: a consumer will be answered OFFSET_OUT_OF_RANGE
    and reset by its auto.offset.reset), else None."""
    return NEGATIVE_LAG if lag is not None and lag < 0 else None


def negative_lag_warning(row: dict[str, Any]) -> str:
    """One line for stderr naming the group, topic and partition of a negative lag."""
    return (
        f"negative lag {row['lag']} in group {row['group']!r}, topic {row['topic']!r} "
        f"partition {row['partition']}: committed offset {row['committed_offset']} is beyond "
        f"the log end offset {row['log_end_offset']} (the log was truncated or the topic "
        "recreated under the commit; a consumer will get OFFSET_OUT_OF_RANGE and reset)"
    )


def lag_totals(rows: list[dict[str, Any]]) -> tuple[dict[str, int], dict[tuple[str, str], int]]:
    """Total lag per group and per (group, topic), negative lags counting 0."""
    groups: dict[str, int] = {}
    topics: dict[tuple[str, str], int] = {}
    for r in rows:
        lag = counted_lag(r["lag"])
        groups[r["group"]] = groups.get(r["group"], 0) + lag
        key = (r["group"], r["topic"])
        topics[key] = topics.get(key, 0) + lag
    return groups, topics


@dataclass(frozen=True)
class ResetRow:
    topic: str
    partition: int
    current: int | None
    target: int
    delta: int | None
    clamped: str | None  # "to log start" / "to log end" / None


def clamp(offset: int, start: int, end: int) -> tuple[int, str | None]:
    if offset < start:
        return start, "to log start"
    if offset > end:
        return end, "to log end"
    return offset, None


def plan_reset(
    spec: str,
    value: Any,
    scope: list[TP],
    committed: dict[TP, int],
    marks: dict[TP, tuple[int, int]],
    times: dict[TP, int] | None = None,
) -> list[ResetRow]:
    """Target offsets for ``scope`` under one reset spec, clamped into [log start, log end].

    spec: earliest | latest | current | offset (value N) | shift (value +/-N) | time (``times``
    holds the ListOffsets answer per partition; -1 = none, which means the log end) |
    file (value: {tp: offset})."""
    rows = []
    for tp in sorted(scope):
        start, end = marks[tp]
        current = committed.get(tp)
        if spec == "earliest":
            wanted = start
        elif spec == "latest":
            wanted = end
        elif spec == "current":
            wanted = end if current is None else current
        elif spec == "offset":
            wanted = int(value)
        elif spec == "shift":
            if current is None:  # as kafka-consumer-groups.sh: nothing to shift from
                raise KctlError(
                    f"cannot shift the offset of {tp[0]}[{tp[1]}]",
                    "it has no committed offset; reset it with --to-earliest, --to-latest or "
                    "--to-offset, or leave it out with --topic TOPIC:PARTITION",
                )
            wanted = current + int(value)
        elif spec == "time":
            found = (times or {}).get(tp, -1)
            wanted = end if found is None or found < 0 else found
        elif spec == "file":
            if tp not in value:
                continue
            wanted = int(value[tp])
        else:
            raise UsageError(f"unknown reset spec {spec!r}")
        target, how = clamp(wanted, start, end)
        rows.append(
            ResetRow(
                topic=tp[0],
                partition=tp[1],
                current=current,
                target=target,
                delta=None if current is None else target - current,
                clamped=how,
            )
        )
    return rows


def parse_reset_csv(text: str, source: str) -> dict[TP, int]:
    """kafka-consumer-groups.sh --export: ``topic,partition,offset`` per line (no header)."""
    out: dict[TP, int] = {}
    for number, row in enumerate(csv.reader(io.StringIO(text)), 1):
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        if len(row) != 3:
            raise UsageError(
                f"malformed line {number} in {source}",
                f"expected topic,partition,offset, got {len(row)} fields",
            )
        topic, part, off = (c.strip() for c in row)
        try:
            key, value = (topic, int(part)), int(off)
        except ValueError:
            raise UsageError(
                f"malformed line {number} in {source}", "partition and offset must be integers"
            ) from None
        if not 0 <= key[1] < 2**31 or not 0 <= value < 2**63:
            raise UsageError(
                f"malformed line {number} in {source}",
                "partition 0..2^31-1 and offset 0..2^63-1",
            )
        out[key] = value
    return out


def export_csv(rows: list[ResetRow]) -> str:
    return "".join(f"{r.topic},{r.partition},{r.target}\n" for r in rows)


_DURATION = re.compile(
    r"^P(?:(?P<d>\d+(?:\.\d+)?)D)?(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?"
    r"(?:(?P<s>\d+(?:\.\d+)?)S)?)?$"
)
