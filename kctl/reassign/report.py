"""What ``reassign generate`` shows of a whole-cluster plan, pure: the plan document
(kafka-reassign-partitions.sh's JSON of the partitions that change), the before/after figures
per broker and per rack with the spreads (the ``--report`` document), the table's columns and
footer rows, and the summary lines for stderr. Byte counts for people: :func:`human_bytes`."""

from __future__ import annotations

from typing import TypedDict

from kctl.reassign.layout import Goal, Layout, LowerBound, Plan
from kctl.reassign.plan_file import PlanDocument, PlanEntry

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


class GoalFigures(TypedDict):
    remove_brokers: list[int]
    add_brokers: list[int]
    balance: str | None
    tolerance_pct: float
    replication_factor: int | None
    max_moves: int | None
    max_bytes: int | None
    balance_disks: bool
    keep_leaders: bool


class BrokerRow(TypedDict):
    broker: int
    rack: str | None
    state: str  # "" | new | removed | fenced | unknown
    replicas_before: int
    replicas_after: int
    leaders_before: int
    leaders_after: int
    bytes_before: int
    bytes_after: int


class RackRow(TypedDict):
    rack: str  # "-" for the brokers without one
    brokers: int
    replicas_before: int
    replicas_after: int
    leaders_before: int
    leaders_after: int
    bytes_before: int
    bytes_after: int


class BeforeAfter(TypedDict):
    before: int
    after: int


class Spread(TypedDict):
    replicas: BeforeAfter
    leaders: BeforeAfter
    bytes: BeforeAfter


class Report(TypedDict):
    """The ``--report`` document (docs/partitions.md)."""

    goal: GoalFigures
    partitions: int
    partitions_changed: int
    moved_replicas: int
    moved_bytes: int
    leader_changes: int
    log_dir_moves: int
    log_dir_moved_bytes: int
    lower_bound: LowerBound | None
    within_tolerance: bool
    budget_reached: bool
    unfinished_moves: int
    spread: Spread
    brokers: list[BrokerRow]
    racks: list[RackRow]


class FooterRow(TypedDict, total=False):
    """A row under the brokers: a rack (its brokers summed) or the spread."""

    rack: str | None
    brokers: int
    replicas_before: int
    replicas_after: int
    leaders_before: int
    leaders_after: int
    bytes_before: int
    bytes_after: int
    broker: None
    state: str


def changed(layout: Layout, result: Plan) -> list[int]:
    """Indexes of the partitions the plan changes (replicas, their order, or a log dir)."""
    dirs = {i for i, _ in result.dir_moves}
    return [i for i, reps in enumerate(result.replicas) if reps != layout.replicas[i] or i in dirs]


def document(layout: Layout, result: Plan) -> PlanDocument:
    """kafka-reassign-partitions.sh's plan JSON of the changed partitions; ``log_dirs`` names
    the target dir of a replica that moves between its broker's log dirs, else ``"any"``."""
    out: list[PlanEntry] = []
    for i in changed(layout, result):
        topic, partition = layout.partitions[i]
        reps = result.replicas[i]
        out.append(
            {
                "topic": topic,
                "partition": partition,
                "replicas": list(reps),
                "log_dirs": [result.dir_moves.get((i, b), "any") for b in reps],
            }
        )
    out.sort(key=lambda e: (e["topic"], e["partition"]))
    return {"version": 1, "partitions": out}


def _figures(
    layout: Layout, assignment: list[list[int]], brokers: list[int]
) -> dict[int, list[int]]:
    fig = {b: [0, 0, 0] for b in brokers}
    for i, reps in enumerate(assignment):
        for k, b in enumerate(reps):
            f = fig.get(b)
            if f is None:
                f = fig[b] = [0, 0, 0]
            f[0] += 1
            f[2] += layout.sizes[i]
            if k == 0:
                f[1] += 1
    return fig


def _spread(values: list[int]) -> int:
    return max(values) - min(values) if values else 0


def _before_after(rows: list[BrokerRow], figure: str) -> BeforeAfter:
    if figure == "replicas":
        pairs = [(r["replicas_before"], r["replicas_after"]) for r in rows]
    elif figure == "leaders":
        pairs = [(r["leaders_before"], r["leaders_after"]) for r in rows]
    else:
        pairs = [(r["bytes_before"], r["bytes_after"]) for r in rows]
    return {"before": _spread([b for b, _ in pairs]), "after": _spread([a for _, a in pairs])}


def _racks(rows: list[BrokerRow]) -> list[RackRow]:
    """Per rack ("-": no rack), its brokers and their figures summed, by rack name."""
    by_rack: dict[str, RackRow] = {}
    for r in rows:
        key = r["rack"] if r["rack"] is not None else "-"
        agg = by_rack.setdefault(
            key,
            {
                "rack": key,
                "brokers": 0,
                "replicas_before": 0,
                "replicas_after": 0,
                "leaders_before": 0,
                "leaders_after": 0,
                "bytes_before": 0,
                "bytes_after": 0,
            },
        )
        agg["brokers"] += 1
        agg["replicas_before"] += r["replicas_before"]
        agg["replicas_after"] += r["replicas_after"]
        agg["leaders_before"] += r["leaders_before"]
        agg["leaders_after"] += r["leaders_after"]
        agg["bytes_before"] += r["bytes_before"]
        agg["bytes_after"] += r["bytes_after"]
    return [by_rack[k] for k in sorted(by_rack)]


def report(layout: Layout, goal: Goal, result: Plan) -> Report:
    """Before/after per broker and per rack, the spreads, and what moves."""
    racks = dict(layout.racks)
    racks.update({b: r for b, r in goal.add.items() if r is not None or b not in racks})
    brokers = sorted(set(racks) | set(goal.add))
    before = _figures(layout, layout.replicas, brokers)
    after = _figures(layout, result.replicas, brokers)
    rows: list[BrokerRow] = []
    removed, fenced = set(goal.remove), set(layout.fenced)
    for b in sorted(set(before) | set(after)):
        x, y = before.get(b, [0, 0, 0]), after.get(b, [0, 0, 0])
        state = (
            "removed" if b in removed else "fenced" if b in fenced
            else "new" if b in goal.add else "" if b in racks else "unknown"
        )  # fmt: skip
        rows.append(
            {
                "broker": b,
                "rack": racks.get(b),
                "state": state,
                "replicas_before": x[0],
                "replicas_after": y[0],
                "leaders_before": x[1],
                "leaders_after": y[1],
                "bytes_before": x[2],
                "bytes_after": y[2],
            }
        )
    eligible = set(result.eligible)
    live = [r for r in rows if r["broker"] in eligible]
    return {
        "goal": {
            "remove_brokers": sorted(goal.remove),
            "add_brokers": sorted(goal.add),
            "balance": goal.balance,
            "tolerance_pct": round(goal.tolerance * 100, 3),
            "replication_factor": goal.replication_factor,
            "max_moves": goal.max_moves,
            "max_bytes": goal.max_bytes,
            "balance_disks": goal.balance_disks,
            "keep_leaders": goal.keep_leaders,
        },
        "partitions": len(layout.partitions),
        "partitions_changed": len(changed(layout, result)),
        "moved_replicas": result.moved_replicas,
        "moved_bytes": result.moved_bytes,
        "leader_changes": result.leader_changes,
        "log_dir_moves": len(result.dir_moves),
        "log_dir_moved_bytes": result.dir_moved_bytes,
        "lower_bound": result.lower_bound,
        "within_tolerance": result.within_tolerance,
        "budget_reached": result.budget_reached,
        "unfinished_moves": result.unfinished,
        "spread": {
            "replicas": _before_after(live, "replicas"),
            "leaders": _before_after(live, "leaders"),
            "bytes": _before_after(live, "bytes"),
        },
        "brokers": rows,
        "racks": _racks(rows),
    }


def footer(rep: Report) -> list[FooterRow]:
    """Under the brokers: one row per rack (state ``rack``, its brokers summed), then the
    spread (max - min over the brokers that may hold replicas)."""
    rows: list[FooterRow] = []
    if len(rep["racks"]) > 1:
        for r in rep["racks"]:
            rows.append({**r, "broker": None, "state": f"rack ({r['brokers']})"})
    sp = rep["spread"]
    spread: FooterRow = {
        "broker": None,
        "rack": None,
        "state": "spread",
        "replicas_before": sp["replicas"]["before"],
        "replicas_after": sp["replicas"]["after"],
        "leaders_before": sp["leaders"]["before"],
        "leaders_after": sp["leaders"]["after"],
        "bytes_before": sp["bytes"]["before"],
        "bytes_after": sp["bytes"]["after"],
    }
    return [*rows, spread]


def human_bytes(n: float | None, kilo: str = "kB") -> str:
    """A byte count for people, in powers of 1000 (``12 B``, ``3.4 MB``); ``?`` for None.
    ``kilo``: the spelling of 1000 bytes, ``kB`` (the wave run's progress) or ``KB`` (generate's
    summary), as each has always written it."""
    if n is None:
        return "?"
    for unit in ("B", kilo, "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"  # never reached: TB takes every size left


def human_seconds(s: float | None) -> str:
    """A duration for people: ``42s``, ``3m05s``, ``2h07m``; ``?`` for None."""
    if s is None:
        return "?"
    s = round(s)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def _kb(n: float) -> str:
    return human_bytes(n, "KB")


def summary(rep: Report) -> list[str]:
    """The lines for stderr: what moves, the bound, the spreads, a budget or tolerance left."""
    lines = [
        f"{rep['moved_replicas']} replica(s) move ({_kb(rep['moved_bytes'])}) in "
        f"{rep['partitions_changed']} of {rep['partitions']} partition(s); "
        f"{rep['leader_changes']} preferred leader change(s)"
    ]
    if rep["log_dir_moves"]:
        lines.append(
            f"{rep['log_dir_moves']} replica(s) move between log dirs "
            f"({_kb(rep['log_dir_moved_bytes'])})"
        )
    lb = rep["lower_bound"]
    if lb is not None:
        parts = []
        if "replicas" in lb:
            parts.append(f"{lb['replicas']} replica(s)")
        parts.append(_kb(lb["bytes"]) + (" (the smallest)" if "even_bytes" in lb else ""))
        line = "lower bound for this goal: " + ", ".join(parts)
        if "even_bytes" in lb:  # a count goal moves replicas of typical size: bytes end even
            line += f"; for even bytes per broker {_kb(lb['even_bytes'])}"
        lines.append(line)
    sp = rep["spread"]
    lines.append(
        "spread (max - min) before -> after: "
        f"replicas {sp['replicas']['before']} -> {sp['replicas']['after']}, "
        f"leaders {sp['leaders']['before']} -> {sp['leaders']['after']}, "
        f"bytes {_kb(sp['bytes']['before'])} -> {_kb(sp['bytes']['after'])}"
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
