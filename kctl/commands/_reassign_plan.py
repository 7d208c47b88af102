"""``kctl partitions reassign generate`` for the whole cluster: the options read into a
:class:`~kctl.replicas.rebalance.Goal`, the layout from the cluster or from a snapshot file, and
the plan with its before/after figures (:mod:`kctl.replicas.rebalance`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kctl.errors import KctlError, UsageError
from kctl.parsing import added_brokers, broker_ids, byte_size

BROKER_COLUMNS = (
    "broker:>",
    "rack",
    "state",
    "replicas_before:>",
    "replicas_after:>",
    "leaders_before:>",
    "leaders_after:>",
    "bytes_before:>",
    "bytes_after:>",
)


def footer(rep: dict[str, Any]) -> list[dict[str, Any]]:
    """Under the brokers: one row per rack (state ``rack``, its brokers summed), then the
    spread (max - min over the brokers that may hold replicas)."""
    rows: list[dict[str, Any]] = []
    if len(rep["racks"]) > 1:
        for r in rep["racks"]:
            rows.append({**r, "broker": None, "state": f"rack ({r['brokers']})"})
    spread = {"broker": None, "rack": None, "state": "spread"}
    for k, v in rep["spread"].items():
        spread[f"{k}_before"], spread[f"{k}_after"] = v["before"], v["after"]
    return [*rows, spread]


def goal_of(
    *,
    remove: str | None,
    add: str | None,
    balance: str | None,
    tolerance: float,
    replication_factor: int | None,
    max_moves: int | None,
    max_bytes: str | None,
    balance_disks: bool,
    brokers: str | None,
    keep_leaders: bool = False,
) -> Any:
    from kctl.replicas.rebalance import METRICS, Goal

    if balance is not None and balance not in METRICS:
        raise UsageError(f"unknown --balance {balance!r}", "replicas, leaders or disk")
    if tolerance < 0:
        raise UsageError("--tolerance must be >= 0", f"got {tolerance}")
    size = None if max_bytes is None else byte_size(max_bytes, "--max-bytes")
    removed = broker_ids(remove, "--remove-broker", "4,5") if remove else []
    added = added_brokers(add) if add else {}
    both = sorted(set(removed) & set(added))
    if both:
        raise UsageError(f"broker {both[0]} is both added and removed")
    targets = None if brokers is None else broker_ids(brokers)
    return Goal(
        remove=removed,
        add=added,
        balance=balance,
        tolerance=tolerance / 100,
        replication_factor=replication_factor,
        max_moves=max_moves,
        max_bytes=size,
        balance_disks=balance_disks,
        targets=targets,
        keep_leaders=keep_leaders,
    )


def load_layout(snapshot: Any, topics: list[str], include: str | None, dirs: bool = True) -> Any:
    from kctl.replicas.assign import PlanError
    from kctl.replicas.rebalance import from_snapshot

    if include is not None:
        import re

        try:
            re.compile(include)
        except re.error as exc:
            raise UsageError(f"malformed --include {include!r}", str(exc)) from None
    try:
        layout = from_snapshot(snapshot, topics or None, include, dirs)
    except PlanError as exc:
        from kctl.errors import NotFoundError

        raise NotFoundError(str(exc), "not in the cluster") from None
    return layout


def snapshot_of(ctx: Any, from_snapshot: Path | None, topics: list[str]) -> Any:
    """The snapshot to plan from: the file, or one taken now (with log dirs)."""
    if from_snapshot is not None:
        from kctl.commands.replicas import load_snapshot

        return load_snapshot(from_snapshot)
    from kctl.broker.client import Admin
    from kctl.broker.cluster_snapshot import collect
    from kctl.commands._common import connection

    return collect(Admin(connection(ctx)), list(dict.fromkeys(topics)) or None)


def snapshot_warnings(snapshot: Any, goal: Any) -> list[str]:
    """What the snapshot lacks for this goal: log-dir sizes for bytes, racks."""
    out = []
    if goal.balance == "disk" or goal.balance_disks:
        if not snapshot.log_dirs:
            out.append(
                "kctl: warning: the snapshot has no log dirs (taken with --no-log-dirs, or "
                "no broker answered DescribeLogDirs): every partition counts 0 bytes"
            )
        elif snapshot.log_dirs_unsupported:
            ids = ", ".join(map(str, snapshot.log_dirs_unsupported))
            out.append(f"kctl: warning: no log-dir sizes from broker {ids}")
    return out


def make_plan(layout: Any, goal: Any) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """(the plan, its document, the report)."""
    from kctl.replicas.assign import PlanError
    from kctl.replicas.rebalance import document, plan, report

    unknown = [b for b in goal.remove if b not in layout.racks and not _hosts(layout, b)]
    if unknown:
        from kctl.errors import NotFoundError

        known = ", ".join(map(str, sorted(layout.racks)))
        raise NotFoundError(f"unknown broker {unknown[0]}", f"brokers: {known}")
    try:
        result = plan(layout, goal)
    except PlanError as exc:
        raise KctlError("cannot generate a reassignment", str(exc)) from exc
    return result, document(layout, result), report(layout, goal, result)


def _hosts(layout: Any, broker: int) -> bool:
    return any(broker in reps for reps in layout.replicas)


def _bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n}"


def summary(rep: dict[str, Any]) -> list[str]:
    """The lines for stderr: what moves, the bound, the spreads, a budget or tolerance left."""
    lines = [
        f"{rep['moved_replicas']} replica(s) move ({_bytes(rep['moved_bytes'])}) in "
        f"{rep['partitions_changed']} of {rep['partitions']} partition(s); "
        f"{rep['leader_changes']} preferred leader change(s)"
    ]
    if rep["log_dir_moves"]:
        lines.append(
            f"{rep['log_dir_moves']} replica(s) move between log dirs "
            f"({_bytes(rep['log_dir_moved_bytes'])})"
        )
    lb = rep["lower_bound"]
    if lb is not None:
        parts = []
        if "replicas" in lb:
            parts.append(f"{lb['replicas']} replica(s)")
        parts.append(_bytes(lb["bytes"]) + (" (the smallest)" if "even_bytes" in lb else ""))
        line = "lower bound for this goal: " + ", ".join(parts)
        if "even_bytes" in lb:  # a count goal moves replicas of typical size: bytes end even
            line += f"; for even bytes per broker {_bytes(lb['even_bytes'])}"
        lines.append(line)
    sp = rep["spread"]
    lines.append(
        "spread (max - min) before -> after: "
        f"replicas {sp['replicas']['before']} -> {sp['replicas']['after']}, "
        f"leaders {sp['leaders']['before']} -> {sp['leaders']['after']}, "
        f"bytes {_bytes(sp['bytes']['before'])} -> {_bytes(sp['bytes']['after'])}"
    )
    if rep["budget_reached"]:
        lines.append(
            "kctl: warning: the budget (--max-moves/--max-bytes) was reached"
            + (
                f"; {rep['unfinished_moves']} required move(s) left out"
                if rep["unfinished_moves"]
                else ""
            )
        )
    live = [r for r in rep["brokers"] if r["state"] in ("", "new")]
    if any(r["rack"] is None for r in live) and any(r["rack"] is not None for r in live):
        lines.append(
            "kctl: warning: some brokers have a rack and some do not: racks were not enforced"
        )
    goal = rep["goal"]
    if not rep["within_tolerance"]:
        metric = "bytes" if goal["balance"] == "disk" else "replica counts"
        why = (
            "racks, replication factors or partition sizes leave no better move"
            if goal["balance"] in ("replicas", "disk") or goal["add_brokers"]
            else "this goal moves only what it must; --balance replicas evens the rest"
        )
        lines.append(
            f"kctl: warning: some brokers' {metric} stay outside {goal['tolerance_pct']:g}% "
            f"of the mean ({why})"
        )
    return lines


def write_json(path: Path, doc: Any, what: str) -> None:
    from kctl.formatters import to_json

    try:
        path.write_text(to_json(doc) + "\n")
    except OSError as exc:
        raise KctlError(f"cannot write {what} {path}", exc.strerror) from None


def current_document(layout: Any) -> dict[str, Any]:
    from kctl.replicas.plan import plan_document

    return plan_document(
        {tp: list(reps) for tp, reps in zip(layout.partitions, layout.replicas, strict=True)}
    )
