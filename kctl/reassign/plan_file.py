"""kafka-reassign-partitions.sh's plan JSON, both directions, read and checked without a broker:
the document of an assignment, a plan file read back (its replicas and its ``log_dirs``
entries), and the check of a plan against the cluster's current assignment and brokers.

Pure apart from reading the named file (:func:`kctl.inputs.read_json`). Malformed input is a
:class:`~kctl.errors.UsageError` (exit 2); a plan naming what the cluster lacks is a
:class:`~kctl.errors.NotFoundError` (exit 1)."""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

from kctl.errors import NotFoundError, UsageError
from kctl.inputs import read_json
from kctl.reassign.assign import Assignment, PlanError, broker_list

DirKey = tuple[str, int, int]  # (topic, partition, broker)
# (topic, partition, broker) -> the log dir the plan puts that replica in
LogDirs = dict[DirKey, str]


class PlanEntry(TypedDict):
    topic: str
    partition: int
    replicas: list[int]
    log_dirs: list[str]  # "any", or the broker's log dir that replica moves into


class PlanDocument(TypedDict):
    version: int
    partitions: list[PlanEntry]


def plan_document(assignment: Assignment) -> PlanDocument:
    return {
        "version": 1,
        "partitions": [
            {
                "topic": topic,
                "partition": partition,
                "replicas": list(replicas),
                "log_dirs": ["any"] * len(replicas),
            }
            for (topic, partition), replicas in sorted(assignment.items())
        ],
    }


def parse_plan(doc: object) -> Assignment:
    """A kafka-reassign-partitions.sh reassignment JSON (version 1)."""
    entries = doc.get("partitions") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or not isinstance(entries, list):
        raise PlanError('expected {"version": 1, "partitions": [...]}')
    if doc.get("version", 1) != 1:
        raise PlanError(f"unsupported plan version {doc.get('version')!r}")
    out: Assignment = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise PlanError(f"partitions[{i}] is not an object")
        topic, partition = entry.get("topic"), entry.get("partition")
        replicas = entry.get("replicas")
        if not isinstance(topic, str) or not topic:
            raise PlanError(f"partitions[{i}]: missing topic")
        if not isinstance(partition, int) or isinstance(partition, bool) or partition < 0:
            raise PlanError(f"partitions[{i}]: partition must be a number >= 0")
        if (
            not isinstance(replicas, list)
            or not replicas
            or not all(isinstance(r, int) and not isinstance(r, bool) for r in replicas)
        ):
            raise PlanError(f"partitions[{i}] ({topic}-{partition}): replicas must be broker ids")
        if len(set(replicas)) != len(replicas):
            raise PlanError(f"partitions[{i}] ({topic}-{partition}) lists a broker twice")
        dirs = entry.get("log_dirs")
        if dirs is not None and (not isinstance(dirs, list) or len(dirs) != len(replicas)):
            raise PlanError(
                f"partitions[{i}] ({topic}-{partition}): log_dirs must have one entry per replica"
            )
        if dirs is not None and any(
            not isinstance(d, str) or (d != "any" and not d.startswith("/")) for d in dirs
        ):
            raise PlanError(
                f'partitions[{i}] ({topic}-{partition}): log dirs must be "any" or a broker\'s '
                "absolute log dir path"
            )
        if (topic, partition) in out:
            raise PlanError(f"{topic}-{partition} appears twice")
        out[(topic, partition)] = list(replicas)
    if not out:
        raise PlanError("the plan lists no partitions")
    return out


def plan_log_dirs(doc: object) -> LogDirs:
    """The ``log_dirs`` entries of a plan (already checked by :func:`parse_plan`) other than
    ``"any"``: where each such replica is to live on its broker."""
    out: LogDirs = {}
    entries = doc.get("partitions") if isinstance(doc, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        replicas, dirs = entry["replicas"], entry.get("log_dirs") or []
        for broker, d in zip(replicas, dirs, strict=False):
            if d != "any":
                out[(entry["topic"], entry["partition"], broker)] = d
    return out


def read_plan(path: Path) -> Assignment:
    """The reassignment plan in ``path`` (:func:`parse_plan`); malformed: a UsageError."""
    return read_plan_with_dirs(path)[0]


def read_plan_with_dirs(path: Path) -> tuple[Assignment, LogDirs]:
    """The plan in ``path`` and its log dir entries (:func:`plan_log_dirs`)."""
    doc = read_json(path, "plan")
    try:
        return parse_plan(doc), plan_log_dirs(doc)
    except PlanError as exc:
        raise UsageError(f"malformed plan {path}", str(exc)) from exc


def check_plan(plan: Assignment, current: Assignment, racks: dict[int, str | None]) -> None:
    """Every partition of ``plan`` exists (is in ``current``) and every replica is on one of the
    cluster's brokers (the keys of ``racks``)."""
    for (topic, partition), replicas in plan.items():
        if (topic, partition) not in current:
            raise NotFoundError(f"unknown partition {topic}-{partition}", "not in the cluster")
        unknown = [b for b in replicas if b not in racks]
        if unknown:
            raise NotFoundError(
                f"{topic}-{partition}: unknown broker {unknown[0]}",
                f"brokers: {broker_list(racks)}",
            )
