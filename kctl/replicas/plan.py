"""What an operator hands to ``kctl partitions reassign``, read and checked without a broker:
kafka-reassign-partitions.sh plan JSON (both directions); the checks of a plan against the
cluster's current assignment and brokers; the rows a plan shows. (Election files and options:
:mod:`kctl.elect.election`; broker ids: :mod:`kctl.parsing`.)

Pure apart from reading the named file (:func:`kctl.inputs.read_json`). Malformed input is a
:class:`~kctl.errors.UsageError` (exit 2); a plan naming what the cluster lacks is a
:class:`~kctl.errors.NotFoundError` (exit 1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kctl.errors import KctlError, NotFoundError, UsageError
from kctl.inputs import read_json
from kctl.replicas.assign import Assignment, PlanError, propose

# ---------------------------------------------------------------------------------------------
# kafka-reassign-partitions.sh plan JSON


def plan_document(assignment: Assignment) -> dict[str, Any]:
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


def parse_plan(doc: Any) -> Assignment:
    """A kafka-reassign-partitions.sh reassignment JSON (version 1)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("partitions"), list):
        raise PlanError('expected {"version": 1, "partitions": [...]}')
    if doc.get("version", 1) != 1:
        raise PlanError(f"unsupported plan version {doc.get('version')!r}")
    out: Assignment = {}
    for i, entry in enumerate(doc["partitions"]):
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


# ---------------------------------------------------------------------------------------------
# Files


def read_plan(path: Path) -> Assignment:
    """The reassignment plan in ``path`` (:func:`parse_plan`); malformed: a UsageError."""
    return read_plan_with_dirs(path)[0]


# (topic, partition, broker) -> the log dir the plan puts that replica in
LogDirs = dict[tuple[str, int, int], str]


def plan_log_dirs(doc: Any) -> LogDirs:
    """The ``log_dirs`` entries of a plan (already checked by :func:`parse_plan`) other than
    ``"any"``: where each such replica is to live on its broker."""
    out: LogDirs = {}
    for entry in doc["partitions"]:
        for broker, d in zip(entry["replicas"], entry.get("log_dirs") or [], strict=False):
            if d != "any":
                out[(entry["topic"], entry["partition"], broker)] = d
    return out


def read_plan_with_dirs(path: Path) -> tuple[Assignment, LogDirs]:
    """The plan in ``path`` and its log dir entries (:func:`plan_log_dirs`)."""
    doc = read_json(path, "plan")
    try:
        return parse_plan(doc), plan_log_dirs(doc)
    except PlanError as exc:
        raise UsageError(f"malformed plan {path}", str(exc)) from exc


# ---------------------------------------------------------------------------------------------
# A plan against the cluster


def _brokers(racks: dict[int, Any]) -> str:
    return ", ".join(map(str, sorted(racks)))


def proposal(current: Assignment, targets: list[int], racks: dict[int, Any]) -> Assignment:
    """``reassign generate``: :func:`~kctl.replicas.assign.propose` onto ``targets``, each of
    which must be one of the cluster's brokers (the keys of ``racks``)."""
    unknown = [b for b in targets if b not in racks]
    if unknown:
        raise NotFoundError(f"unknown broker {unknown[0]}", f"brokers: {_brokers(racks)}")
    try:
        return propose(current, targets, racks)
    except PlanError as exc:
        raise KctlError("cannot generate a reassignment", str(exc)) from exc


def check_plan(plan: Assignment, current: Assignment, racks: dict[int, Any]) -> None:
    """Every partition of ``plan`` exists (is in ``current``) and every replica is on one of the
    cluster's brokers (the keys of ``racks``)."""
    for (topic, partition), replicas in plan.items():
        if (topic, partition) not in current:
            raise NotFoundError(f"unknown partition {topic}-{partition}", "not in the cluster")
        unknown = [b for b in replicas if b not in racks]
        if unknown:
            raise NotFoundError(
                f"{topic}-{partition}: unknown broker {unknown[0]}", f"brokers: {_brokers(racks)}"
            )


def in_plan(running: list[dict[str, Any]], plan: Assignment | None) -> list[dict[str, Any]]:
    """The ongoing reassignments (rows with topic and partition) of ``plan``'s partitions; all
    of them when there is no plan (``cancel --all``)."""
    if plan is None:
        return running
    return [r for r in running if (r["topic"], r["partition"]) in plan]


def plan_rows(current: Assignment, target: Assignment) -> list[dict[str, Any]]:
    """One row per partition of ``target``: current and proposed replicas, and the brokers that
    would receive a new replica (``moving``)."""
    return [
        {
            "topic": topic,
            "partition": partition,
            "current": current.get((topic, partition), []),
            "proposed": replicas,
            "moving": sorted(set(replicas) - set(current.get((topic, partition), []))),
        }
        for (topic, partition), replicas in sorted(target.items())
    ]


def failed(results: list[dict[str, Any]]) -> bool:
    """Whether any per-partition answer (``status``) of the broker is ``failed``."""
    return any(r["status"] == "failed" for r in results)
