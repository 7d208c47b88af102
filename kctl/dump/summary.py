"""Summaries of partition directories: what ``kctl dump-segment DIR`` shows for a log dir or
one partition directory (segments, offsets, records, codecs, producers, open transactions,
problems)."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kctl.dump.files import base_offset_of, mapped
from kctl.dump.model import Found, Note, Partition
from kctl.logfmt import batch as B


def read_dir(root: Path) -> Generator[Any, None, int]:
    """The items of a log dir or partition directory: each partition's problems, then its
    summary. Returns how many problems it found."""
    dirs = partition_dirs(root)
    if not dirs:
        yield Note(f"kctl: {root}: no partition directories with segments")
    problems = 0
    for d in dirs:
        s = summarise_partition(d)
        for file, p in s.problems:
            problems += 1
            yield Found(Path(file), p)
        yield Partition(s)
    return problems


@dataclass
class PartitionSummary:
    partition: str
    path: str
    segments: int = 0
    bytes: int = 0
    batches: int = 0
    records: int = 0
    first_offset: int | None = None
    last_offset: int | None = None
    first_timestamp: int | None = None
    last_timestamp: int | None = None
    codecs: set[str] = field(default_factory=set)
    producers: set[int] = field(default_factory=set)
    open_transactions: dict[int, int] = field(default_factory=dict)  # producer → first offset
    problems: list[tuple[str, B.Problem]] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        return {
            "partition": self.partition,
            "segments": self.segments,
            "first_offset": self.first_offset,
            "last_offset": self.last_offset,
            "bytes": self.bytes,
            "batches": self.batches,
            "records": self.records,
            "first_timestamp": self.first_timestamp,
            "last_timestamp": self.last_timestamp,
            "codecs": sorted(self.codecs),
            "producers": len(self.producers),
            "open_transactions": len(self.open_transactions),
            "problems": len(self.problems),
        }

    def document(self) -> dict[str, Any]:
        doc = self.row()
        doc["path"] = self.path
        doc["producer_ids"] = sorted(self.producers)
        doc["open_transaction_first_offsets"] = {
            str(k): v for k, v in sorted(self.open_transactions.items())
        }
        doc["problem_list"] = [
            {"file": f, "position": p.position, "kind": p.kind, "reason": p.reason}
            for f, p in self.problems
        ]
        return doc


def partition_dirs(root: Path) -> list[Path]:
    """``root`` itself when it holds segments, else its sub-directories that do (a log dir)."""
    if any(p.suffix == ".log" for p in root.iterdir()):
        return [root]
    return sorted(p for p in root.iterdir() if p.is_dir() and any(p.glob("*.log")))


def summarise_partition(directory: Path) -> PartitionSummary:
    s = PartitionSummary(partition=directory.name, path=str(directory))
    for seg in sorted(directory.glob("*.log"), key=base_offset_of):
        s.segments += 1
        s.bytes += seg.stat().st_size
        with mapped(seg) as buf:
            for item in B.scan(buf):
                if isinstance(item, B.Problem):
                    s.problems.append((str(seg), item))
                    continue
                _account(s, buf, item, seg)
    return s


def _account(s: PartitionSummary, buf: Any, b: B.Batch, seg: Path) -> None:
    s.batches += 1
    if s.first_offset is None:
        s.first_offset = b.base_offset
    s.last_offset = b.last_offset
    if b.magic == 2:
        s.records += b.count or 0
        if b.first_timestamp is not None and b.first_timestamp >= 0 and s.first_timestamp is None:
            s.first_timestamp = b.first_timestamp
    else:
        s.records += 1 if b.codec_id == 0 else _legacy_count(buf, b, s, seg)
        if s.first_timestamp is None and b.max_timestamp >= 0:
            s.first_timestamp = b.max_timestamp
    if b.max_timestamp >= 0:
        s.last_timestamp = max(s.last_timestamp or b.max_timestamp, b.max_timestamp)
    s.codecs.add(b.codec)
    if b.producer_id is not None and b.producer_id >= 0:
        s.producers.add(b.producer_id)
        if b.is_transactional:
            if b.is_control:
                s.open_transactions.pop(b.producer_id, None)
            else:
                s.open_transactions.setdefault(b.producer_id, b.base_offset)


def _legacy_count(buf: Any, b: B.Batch, s: PartitionSummary, seg: Path) -> int:
    try:
        return len(B.decode_records(buf, b)[1])
    except ValueError as exc:
        s.problems.append((str(seg), B.Problem(b.position, "records", str(exc))))
        return 0
