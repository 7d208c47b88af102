"""What an operator hands to ``kctl partitions``, read and checked without a broker:
kafka-reassign-partitions.sh plan JSON (both directions), kafka-leader-election.sh's election
file, target broker lists, the election options; the checks of a plan against the cluster's
current assignment and brokers; the rows a plan shows.

Pure apart from reading the named file (:func:`read_json`). Malformed input is a
:class:`~kctl.errors.UsageError` (exit 2); a plan naming what the cluster lacks is a
:class:`~kctl.errors.NotFoundError` (exit 1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kctl.errors import KctlError, NotFoundError, UsageError
from kctl.parsing import Scope, topic_scope
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


def read_json(path: Path, what: str) -> Any:
    """The JSON document in ``path`` (at most 64 MiB, :data:`kctl.inputs.PLAN`); ``what``
    names it in the errors (unreadable or not a regular file: exit 1, too large or not JSON:
    exit 2)."""
    import orjson

    from kctl.inputs import PLAN, decode, read_bytes

    text = decode(read_bytes(path, what, PLAN), path, what)
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"{what} {path} is not JSON", str(exc)) from exc


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


def election_partitions(doc: Any, source: str | Path) -> Scope:
    """kafka-leader-election.sh --path-to-json-file: ``{"partitions": [{"topic", "partition"}]}``
    as topic -> partitions (in the file's order); ``source`` names the file in the errors."""
    entries = doc.get("partitions") if isinstance(doc, dict) else None
    if not isinstance(entries, list) or not entries:
        raise UsageError(f"malformed election file {source}", 'expected {"partitions": [...]}')
    parts: dict[str, list[int]] = {}
    for i, e in enumerate(entries):
        if (
            not isinstance(e, dict)
            or not isinstance(e.get("topic"), str)
            or not isinstance(e.get("partition"), int)
        ):
            raise UsageError(
                f"malformed election file {source}", f"partitions[{i}] needs topic and partition"
            )
        parts.setdefault(e["topic"], []).append(e["partition"])
    scope: Scope = {topic: numbers for topic, numbers in parts.items()}
    return scope


# ---------------------------------------------------------------------------------------------
# Options


def election_kind(preferred: bool, unclean: bool, election_type: str | None) -> str:
    """``preferred`` or ``unclean`` from ``--preferred``/``--unclean`` or ``--election-type``
    (kafka-leader-election.sh's spelling, any case); exactly one way, exactly one kind."""
    if election_type is not None:
        kind_given = election_type.lower()
        if kind_given not in ("preferred", "unclean"):
            raise UsageError(f"unknown --election-type {election_type!r}", "preferred or unclean")
        if preferred or unclean:
            raise UsageError("--election-type replaces --preferred and --unclean")
        preferred, unclean = kind_given == "preferred", kind_given == "unclean"
    if preferred == unclean:
        raise UsageError("choose one of --preferred and --unclean")
    return "preferred" if preferred else "unclean"


def election_scope(all_topics: bool, topics: list[str], from_file: Path | None) -> Scope | None:
    """The partitions to elect: None for ``--all-topics``, else ``--topic T[:P,...]`` or the
    election file; exactly one of the three."""
    if sum([all_topics, bool(topics), from_file is not None]) != 1:
        raise UsageError("choose exactly one of --all-topics, --topic, --from-file")
    if topics:
        return topic_scope(list(topics))
    if from_file is not None:
        return election_partitions(read_json(from_file, "election file"), from_file)
    return None


def named_partitions(items: list[str]) -> dict[str, list[int]]:
    """``TOPIC:P[,P]`` items, every one naming its partitions (``move-dir``)."""
    scope = topic_scope(list(items))
    whole = [t for t, ps in scope.items() if ps is None]
    if whole:
        raise UsageError(f"name the partitions of {whole[0]!r}", "expected TOPIC:PARTITION")
    return {t: ps for t, ps in scope.items() if ps is not None}


def parse_brokers(text: str) -> list[int]:
    """``--brokers 1,2,3``: distinct broker ids, in the order given."""
    try:
        ids = [int(b) for b in text.split(",") if b.strip()]
    except ValueError:
        raise UsageError(f"malformed --brokers {text!r}", "expected ids like 1,2,3") from None
    if not ids or len(set(ids)) != len(ids):
        raise UsageError(f"malformed --brokers {text!r}", "expected distinct ids like 1,2,3")
    return ids


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
