"""Byte-level comparison of one partition's replicas, batch by batch.

The same functions serve both the offline ``replicas compare`` (partition directories copied from
several brokers, read with :mod:`kctl.dump.files` and decoded with :mod:`kctl.logfmt.batch`) and
the online ``replicas verify`` (record batches fetched from each replica). Followers copy the
leader's batches byte for byte, so base offset, last offset, size, stored CRC and partition
leader epoch of each batch must be the same on every replica; where they are not, the replicas
have diverged at that batch's base offset.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kctl.errors import KctlError, NotFoundError
from kctl.logfmt import batch as B

# Status of one replica against the reference, most telling first.
STATUSES = ("diverged", "missing-segment", "corrupt", "truncated", "ahead", "identical")


@dataclass(frozen=True)
class BatchKey:
    """What must be equal across replicas; ``segment`` and ``position`` only say where."""

    base_offset: int
    last_offset: int
    size: int
    crc: int
    crc_valid: bool
    leader_epoch: int | None
    segment: int = 0
    position: int = 0

    def same(self, other: BatchKey) -> bool:
        return (
            self.base_offset,
            self.last_offset,
            self.size,
            self.crc,
            self.crc_valid,
            self.leader_epoch,
        ) == (
            other.base_offset,
            other.last_offset,
            other.size,
            other.crc,
            other.crc_valid,
            other.leader_epoch,
        )


@dataclass
class Difference:
    kind: str  # diverged | missing-segment | corrupt | truncated | ahead | log-start
    offset: int | None
    reason: str


@dataclass
class ReplicaLog:
    """One replica's batches in offset order, with the segments they came from."""

    name: str
    batches: list[BatchKey] = field(default_factory=list)
    segments: list[int] = field(default_factory=list)  # base offsets, from file names
    problems: list[tuple[int, B.Problem]] = field(default_factory=list)  # (segment, problem)
    bytes: int = 0

    @property
    def log_start_offset(self) -> int | None:
        return self.batches[0].base_offset if self.batches else None

    @property
    def log_end_offset(self) -> int | None:
        return self.batches[-1].last_offset + 1 if self.batches else None


@dataclass
class ReplicaComparison:
    replica: str
    status: str  # reference | one of STATUSES
    first_divergent_offset: int | None
    segments: int
    batches: int
    log_start_offset: int | None
    log_end_offset: int | None
    differences: list[Difference] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        first = self.differences[0].reason if self.differences else ""
        return {
            "replica": self.replica,
            "status": self.status,
            "first_divergent_offset": self.first_divergent_offset,
            "segments": self.segments,
            "batches": self.batches,
            "log_start_offset": self.log_start_offset,
            "log_end_offset": self.log_end_offset,
            "reason": first,
        }

    def document(self) -> dict[str, Any]:
        doc = self.row()
        del doc["reason"]
        doc["differences"] = [
            {"kind": d.kind, "offset": d.offset, "reason": d.reason} for d in self.differences
        ]
        return doc


def batch_keys(
    buf: Any, segment: int = 0, *, partial_tail_ok: bool = False
) -> tuple[list[BatchKey], list[B.Problem]]:
    """Batches and problems in a buffer (a segment, or a fetched records blob whose last batch
    may be cut by the fetch size: ``partial_tail_ok``)."""
    keys: list[BatchKey] = []
    problems: list[B.Problem] = []
    for item in B.scan(buf, stop_at_partial=partial_tail_ok):
        if isinstance(item, B.Problem):
            problems.append(item)
            continue
        keys.append(
            BatchKey(
                base_offset=item.base_offset,
                last_offset=item.last_offset,
                size=item.size,
                crc=item.crc,
                crc_valid=item.is_valid,
                leader_epoch=item.partition_leader_epoch,
                segment=segment,
                position=item.position,
            )
        )
    return keys, problems


# A segment as Kafka names it: its base offset in 20 digits (other *.log files are not ours).
_SEGMENT = re.compile(r"^\d{20}\.log$")


def segment_files(path: Path) -> list[Path]:
    """The segments of a partition directory, in base-offset order."""
    from kctl.dump.files import base_offset_of

    found = [p for p in path.iterdir() if _SEGMENT.match(p.name) and p.is_file()]
    return sorted(found, key=base_offset_of)


def read_partition_dir(path: Path, name: str | None = None) -> ReplicaLog:
    """Every segment of a partition directory, in base-offset order. A path that is no
    directory, or a directory without a segment (``/tmp``, whose ``*.log`` files are not
    Kafka's), is an error naming it: comparing it would report garbage as corrupt replicas."""
    from kctl.dump.files import base_offset_of, mapped

    if not path.is_dir():
        raise NotFoundError(f"no directory {path}")
    try:
        segments = segment_files(path)
    except OSError as exc:
        raise KctlError(f"cannot read {path}", exc.strerror or str(exc)) from None
    if not segments:
        raise KctlError(
            f"{path} is not a partition directory",
            "no segment file named like 00000000000000000000.log",
        )
    log = ReplicaLog(name or str(path))
    for seg in segments:
        base = base_offset_of(seg)
        log.segments.append(base)
        log.bytes += seg.stat().st_size
        with mapped(seg) as buf:
            keys, problems = batch_keys(buf, base)
        log.batches += keys
        log.problems += [(base, p) for p in problems]
    log.batches.sort(key=lambda k: (k.base_offset, k.segment, k.position))
    return log


def _describe(k: BatchKey) -> str:
    return (
        f"offsets {k.base_offset}-{k.last_offset}, {k.size} bytes, crc {k.crc}"
        f"{'' if k.crc_valid else ' (invalid)'}, leader epoch {k.leader_epoch}"
    )


def _why(ref: BatchKey, other: BatchKey) -> str:
    if not other.crc_valid and ref.crc_valid:
        return (
            f"batch at offset {ref.base_offset} is corrupt here: its CRC does not match its bytes"
        )
    if not ref.crc_valid and other.crc_valid:
        return f"batch at offset {ref.base_offset} is corrupt on the reference"
    parts = []
    if ref.crc != other.crc:
        parts.append(f"crc {other.crc} vs {ref.crc}")
    if ref.last_offset != other.last_offset:
        parts.append(f"last offset {other.last_offset} vs {ref.last_offset}")
    if ref.size != other.size:
        parts.append(f"size {other.size} vs {ref.size}")
    if ref.leader_epoch != other.leader_epoch:
        parts.append(f"leader epoch {other.leader_epoch} vs {ref.leader_epoch}")
    return f"batch at offset {ref.base_offset} differs: " + ", ".join(parts)


def first_divergence(
    ref: ReplicaLog, other: ReplicaLog, start: int | None = None, end: int | None = None
) -> Difference | None:
    """The first batch, in ``[start, end)`` (default: the range both replicas hold), that is not
    the same on both replicas."""
    if not ref.batches or not other.batches:
        return None
    lo = max(ref.batches[0].base_offset, other.batches[0].base_offset)
    hi = min(ref.batches[-1].last_offset, other.batches[-1].last_offset) + 1
    lo = lo if start is None else max(lo, start)
    hi = hi if end is None else min(hi, end)
    mine = {k.base_offset: k for k in ref.batches}
    theirs = {k.base_offset: k for k in other.batches}
    for offset in sorted(set(mine) | set(theirs)):
        if offset < lo:
            continue
        if offset >= hi:
            break
        a, b = mine.get(offset), theirs.get(offset)
        if a is not None and b is not None:
            if a.same(b):
                continue
            return Difference("diverged", offset, _why(a, b))
        if a is not None:
            return Difference(
                "diverged", offset, f"batch at offset {offset} is missing here ({_describe(a)})"
            )
        assert b is not None
        return Difference(
            "diverged",
            offset,
            f"batch at offset {offset} is not on the reference ({_describe(b)})",
        )
    return None


def _holes(log: ReplicaLog, others: list[ReplicaLog]) -> list[Difference]:
    """Offsets between two of this replica's batches that another replica holds: a segment (or
    part of one) is missing here."""
    out = []
    for prev, nxt in zip(log.batches, log.batches[1:], strict=False):
        gap_lo, gap_hi = prev.last_offset + 1, nxt.base_offset
        if gap_hi <= gap_lo:
            continue
        held = sorted(
            {k.segment for o in others for k in o.batches if gap_lo <= k.base_offset < gap_hi}
        )
        if held:
            kind = "missing-segment" if nxt.segment != prev.segment else "diverged"
            where = (
                f"between segments {prev.segment} and {nxt.segment}"
                if nxt.segment != prev.segment
                else f"inside segment {prev.segment}"
            )
            out.append(
                Difference(
                    kind,
                    gap_lo,
                    f"offsets {gap_lo}-{gap_hi - 1} are missing {where} "
                    f"(held by other replicas in segment(s) {','.join(map(str, held))})",
                )
            )
    return out


def _problems(log: ReplicaLog) -> list[Difference]:
    out = []
    for seg, p in log.problems:
        if p.kind == "crc":
            continue  # reported with the batch, at its offset
        out.append(
            Difference(
                "corrupt" if p.kind != "truncated" else "truncated",
                None,
                f"segment {seg}, byte {p.position}: {p.reason}",
            )
        )
    return out


def compare(logs: list[ReplicaLog], *, common_only: bool = False) -> list[ReplicaComparison]:
    """Every replica against the first (the reference). ``common_only``: only the offsets every
    replica holds count (online verify, where followers may simply be behind)."""
    if not logs:
        return []
    ref = logs[0]
    out = []
    ref_diffs = _holes(ref, logs[1:]) + _problems(ref)
    ref_diffs += [
        Difference("corrupt", k.base_offset, f"batch at offset {k.base_offset}: CRC does not match")
        for k in ref.batches
        if not k.crc_valid
    ]
    out.append(_result(ref, "reference", ref_diffs))
    for log in logs[1:]:
        diffs: list[Difference] = []
        div = first_divergence(ref, log)
        holes = _holes(log, [o for o in logs if o is not log])
        diffs += holes
        if div is not None and not any(h.offset == div.offset for h in holes):
            diffs.append(div)
        if not common_only:
            diffs += _problems(log)
            diffs += _ends(ref, log)
        out.append(_result(log, "identical", diffs))
    return out


def _order(d: Difference) -> tuple[bool, int, int]:
    rank = STATUSES.index(d.kind) if d.kind in STATUSES else len(STATUSES)
    return (d.offset is None, d.offset or 0, rank)


def _ends(ref: ReplicaLog, log: ReplicaLog) -> list[Difference]:
    out = []
    rs, re_ = ref.log_start_offset, ref.log_end_offset
    ls, le = log.log_start_offset, log.log_end_offset
    if re_ is not None and (le is None or le < re_):
        out.append(
            Difference(
                "truncated",
                le if le is not None else rs,
                f"ends at offset {le if le is not None else 'nothing'}, the reference at {re_}: "
                f"offsets {le if le is not None else rs}-{re_ - 1} are missing at the tail",
            )
        )
    elif le is not None and (re_ is None or le > re_):
        out.append(
            Difference(
                "ahead",
                re_ if re_ is not None else ls,
                f"ends at offset {le}, beyond the reference's end {re_}",
            )
        )
    if rs is not None and ls is not None and rs != ls:
        out.append(
            Difference(
                "log-start",
                min(rs, ls),
                f"starts at offset {ls}, the reference at {rs} (retention, or a missing first "
                "segment)",
            )
        )
    return out


def _result(log: ReplicaLog, default: str, diffs: list[Difference]) -> ReplicaComparison:
    diffs = sorted(diffs, key=_order)
    failing = [d for d in diffs if d.kind in STATUSES]
    status = min((d.kind for d in failing), key=STATUSES.index, default=default)
    first = min((d.offset for d in failing if d.offset is not None), default=None)
    return ReplicaComparison(
        replica=log.name,
        status=status,
        first_divergent_offset=first,
        segments=len(log.segments),
        batches=len(log.batches),
        log_start_offset=log.log_start_offset,
        log_end_offset=log.log_end_offset,
        differences=diffs,
    )
