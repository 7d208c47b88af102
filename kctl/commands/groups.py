"""kctl groups: consumer groups (kafka-consumer-groups.sh) and lag samples for analytics."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import typer

from kctl.commands._common import confirm, example, note
from kctl.formatters import Output, cols, emit

app = typer.Typer(
    help="Consumer groups: list, describe, lag, delete, reset offsets.", no_args_is_help=True
)

_ALL = typer.Option(False, "--all-groups", help="Every group in the cluster.")


def _chosen(admin: Any, groups: list[str] | None, all_groups: bool) -> list[str]:
    from kctl.errors import UsageError
    from kctl.kafka import groups as G

    if all_groups and groups:
        raise UsageError("name groups or give --all-groups, not both")
    if all_groups:
        return [gid for gid, _, _ in G.list_group_ids(admin)]
    if not groups:
        raise UsageError("name at least one group, or give --all-groups")
    return list(dict.fromkeys(groups))


@app.command("list", epilog=example("kctl groups list", "kctl groups list --state Stable -o json"))
def list_(
    state: list[str] = typer.Option([], "--state", help="Only groups in this state (repeatable)."),
    type_: str | None = typer.Option(
        None, "--type", help="consumer (classic) or simple (offsets only, no members)."
    ),
) -> None:
    """Groups with state, protocol type, assignor, member count and coordinator."""
    from kctl.kafka import groups as G
    from kctl.kafka.client import Admin

    admin = Admin()
    ids = G.list_group_ids(admin)
    wanted = {s.lower() for s in state}
    ids = [
        (gid, st, simple)
        for gid, st, simple in ids
        if (not wanted or st.lower() in wanted) and (type_ is None or (type_ == "simple") == simple)
    ]
    described = G.describe(admin, [gid for gid, _, _ in ids])
    rows = [
        {
            "group": g.group,
            "state": g.state,
            "protocol_type": g.protocol_type or None,
            "assignor": g.assignor,
            "members": len(g.members),
            "coordinator": g.coordinator,
        }
        for g in (described[gid] for gid, _, _ in ids)
    ]
    emit(
        Output(
            rows, cols("group", "state", "protocol_type", "assignor", "members:>", "coordinator:>")
        )
    )


def lag_rows(admin: Any, group_ids: list[str], topics: list[str] | None = None) -> list[dict]:
    """One row per (group, topic, partition) with committed offset, watermarks, lag and owner —
    the lag-sample schema of DESIGN.md minus ts_ms and cluster."""
    from kctl.kafka import groups as G
    from kctl.kafka.lagmath import lag_of

    described = G.describe(admin, group_ids)
    committed = G.committed_offsets(admin, group_ids)
    G.require_known(admin, described, committed)
    owners: dict[tuple[str, str, int], G.Member] = {}
    wanted: dict[str, set[tuple[str, int]]] = {}
    for gid in group_ids:
        tps = set(committed.get(gid, {}))
        for m in described[gid].members:
            for tp in m.assignment:
                owners[(gid, *tp)] = m
                tps.add(tp)
        if topics:
            tps = {tp for tp in tps if tp[0] in topics}
        wanted[gid] = tps
    marks = G.watermarks(admin, sorted(set().union(*wanted.values())) if wanted else [])
    rows = []
    for gid in group_ids:
        for t, p in sorted(wanted[gid]):
            start, end = marks[(t, p)]
            cur = committed.get(gid, {}).get((t, p))
            m = owners.get((gid, t, p))
            rows.append(
                {
                    "group": gid,
                    "topic": t,
                    "partition": p,
                    "committed_offset": -1 if cur is None else cur,
                    "log_start_offset": start,
                    "log_end_offset": end,
                    "lag": lag_of(cur, end),
                    "group_state": described[gid].state,
                    "member_id": m.member_id if m else None,
                    "client_id": m.client_id if m else None,
                    "host": m.host if m else None,
                }
            )
    return rows


@app.command(
    "describe",
    epilog=example(
        "kctl groups describe orders-app",
        "kctl groups describe --all-groups --members -o json",
        "kctl groups describe orders-app --state",
    ),
)
def describe(
    groups: list[str] = typer.Argument(None, help="Groups."),
    all_groups: bool = _ALL,
    offsets: bool = typer.Option(
        False, "--offsets", help="Offsets and lag per partition (default)."
    ),
    members: bool = typer.Option(False, "--members", help="Members and their assignments."),
    state: bool = typer.Option(
        False, "--state", help="State, assignor, coordinator, member count."
    ),
) -> None:
    """What kafka-consumer-groups.sh --describe shows: --offsets (default), --members, --state."""
    from kctl.errors import UsageError
    from kctl.kafka import groups as G
    from kctl.kafka.client import Admin

    if sum((offsets, members, state)) > 1:
        raise UsageError("choose one of --offsets, --members, --state")
    admin = Admin()
    ids = _chosen(admin, groups, all_groups)
    if members or state:
        described = G.describe(admin, ids)
        G.require_known(admin, described, G.committed_offsets(admin, ids))
        if state:
            rows = [
                {
                    "group": g.group,
                    "coordinator": g.coordinator,
                    "assignor": g.assignor,
                    "state": g.state,
                    "members": len(g.members),
                }
                for g in described.values()
            ]
            emit(Output(rows, cols("group", "coordinator:>", "assignor", "state", "members:>")))
            return
        rows = [
            {
                "group": g.group,
                "member_id": m.member_id,
                "group_instance_id": m.group_instance_id,
                "client_id": m.client_id,
                "host": m.host,
                "partitions": len(m.assignment),
                "assignment": [f"{t}:{p}" for t, p in m.assignment],
            }
            for g in described.values()
            for m in g.members
        ]
        emit(
            Output(
                rows,
                cols(
                    "group",
                    "member_id",
                    "group_instance_id",
                    "client_id",
                    "host",
                    "partitions:>",
                    "assignment",
                ),
            )
        )
        return
    rows = lag_rows(admin, ids)
    shown = [
        {
            "group": r["group"],
            "topic": r["topic"],
            "partition": r["partition"],
            "current_offset": None if r["committed_offset"] < 0 else r["committed_offset"],
            "log_end_offset": r["log_end_offset"],
            "lag": r["lag"],
            "consumer_id": r["member_id"],
            "host": r["host"],
            "client_id": r["client_id"],
        }
        for r in rows
    ]
    for gid in ids:
        if not any(r["group"] == gid for r in rows):
            note(f"group {gid!r} has no active members and no committed offsets")
    emit(
        Output(
            shown,
            cols("group", "topic", "partition:>", "current_offset:>", "log_end_offset:>", "lag:>",
                 "consumer_id", "host", "client_id"),
        )
    )  # fmt: skip


def _record(path: Path, rows: list[dict], cluster: str | None, ts_ms: int) -> None:
    """Append samples in the lag-sample schema (DESIGN.md): JSONL appends lines; Parquet
    writes one more file part next to the path (path.parquet, path.1.parquet, ... read as one
    dataset by Spark and pyarrow when given the directory or a glob)."""
    samples = [
        {
            "ts_ms": ts_ms,
            "cluster": cluster or "",
            "group": r["group"],
            "topic": r["topic"],
            "partition": r["partition"],
            "committed_offset": r["committed_offset"],
            "log_start_offset": r["log_start_offset"],
            "log_end_offset": r["log_end_offset"],
            "lag": r["lag"],
            "group_state": r["group_state"],
            "member_id": r["member_id"],
            "client_id": r["client_id"],
            "host": r["host"],
        }
        for r in rows
    ]
    if path.suffix == ".parquet":
        _record_parquet(path, samples)
        return
    import orjson

    with open(path, "ab") as fh:
        fh.write(b"".join(orjson.dumps(s) + b"\n" for s in samples))


SAMPLE_FIELDS = (
    ("ts_ms", "int64"),
    ("cluster", "string"),
    ("group", "string"),
    ("topic", "string"),
    ("partition", "int32"),
    ("committed_offset", "int64"),
    ("log_start_offset", "int64"),
    ("log_end_offset", "int64"),
    ("lag", "int64"),
    ("group_state", "string"),
    ("member_id", "string"),
    ("client_id", "string"),
    ("host", "string"),
)


def _record_parquet(path: Path, samples: list[dict]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(name, getattr(pa, kind)()) for name, kind in SAMPLE_FIELDS])
    table = pa.Table.from_pylist(samples, schema=schema)
    target = path
    n = 0
    while target.exists():
        n += 1
        target = path.with_name(f"{path.stem}.{n}.parquet")
    pq.write_table(table, target)


@app.command(
    "lag",
    epilog=example(
        "kctl groups lag orders-app",
        "kctl groups lag --all-groups --fail-above 10000   # exit 3 for cron/CI",
        "kctl groups lag --all-groups --record lag.jsonl   # samples for kctl analytics",
        "kctl groups lag orders-app --watch 5",
    ),
)
def lag(
    groups: list[str] = typer.Argument(None, help="Groups."),
    all_groups: bool = _ALL,
    topic: list[str] = typer.Option([], "--topic", "-t", help="Only these topics (repeatable)."),
    fail_above: int | None = typer.Option(
        None, "--fail-above", help="Exit 3 when a group's total lag exceeds N."
    ),
    watch: float | None = typer.Option(None, "--watch", help="Redraw every SECONDS until Ctrl-C."),
    record: Path | None = typer.Option(
        None, "--record", help="Append samples to FILE (.jsonl or .parquet) for kctl analytics."
    ),
) -> None:
    """Lag per partition with totals per group and per topic."""
    from kctl.kafka.client import Admin

    admin = Admin()
    ids = _chosen(admin, groups, all_groups)
    cluster_id = admin.metadata().cluster_id
    while True:
        ts_ms = int(time.time() * 1000)
        rows = lag_rows(admin, ids, topic or None)
        if record is not None:
            _record(record, rows, cluster_id, ts_ms)
        group_totals: dict[str, int] = {}
        topic_totals: dict[tuple[str, str], int] = {}
        for r in rows:
            group_totals[r["group"]] = group_totals.get(r["group"], 0) + (r["lag"] or 0)
            key = (r["group"], r["topic"])
            topic_totals[key] = topic_totals.get(key, 0) + (r["lag"] or 0)
        doc = {
            "ts_ms": ts_ms,
            "partitions": rows,
            "topics": [
                {"group": g, "topic": t, "lag": v} for (g, t), v in sorted(topic_totals.items())
            ],
            "groups": [{"group": g, "lag": v} for g, v in sorted(group_totals.items())],
        }
        footer = [{"group": g, "topic": "TOTAL", "lag": v} for g, v in sorted(group_totals.items())]
        if watch and sys.stdout.isatty():
            sys.stdout.write("\x1b[2J\x1b[H")
        emit(
            Output(
                rows,
                cols(
                    "group",
                    "topic",
                    "partition:>",
                    "committed_offset:>",
                    "log_end_offset:>",
                    "lag:>",
                    "member_id",
                ),
                doc=doc,
                footer=footer,
            )
        )
        if not watch:
            break
        sys.stdout.flush()
        time.sleep(watch)
    if fail_above is not None:
        over = {g: v for g, v in group_totals.items() if v > fail_above}
        if over:
            worst = max(over, key=over.get)  # type: ignore[arg-type]
            note(f"kctl: {len(over)} group(s) above {fail_above}: {worst!r} has lag {over[worst]}")
            raise typer.Exit(3)


@app.command("delete", epilog=example("kctl groups delete old-app --yes"))
def delete(
    groups: list[str] = typer.Argument(..., help="Groups to delete."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete groups and their committed offsets; a group with members is refused."""
    from kctl.errors import KctlError
    from kctl.kafka import groups as G
    from kctl.kafka.client import Admin

    admin = Admin()
    described = G.describe(admin, groups)
    G.require_known(admin, described, G.committed_offsets(admin, groups))
    for g in described.values():
        if g.active:
            raise KctlError(
                f"refusing to delete group {g.group!r}",
                f"it has {len(g.members)} active member(s), state {g.state}: stop them first",
            )
    note(f"will delete {len(groups)} group(s): {', '.join(groups)}")
    confirm(f"Delete {len(groups)} group(s)?", yes=yes, action="delete groups")
    G.delete(admin, groups)
    emit(Output([{"group": g, "status": "deleted"} for g in groups], cols("group", "status")))


@app.command(
    "delete-offsets",
    epilog=example("kctl groups delete-offsets old-app --topic orders --yes"),
)
def delete_offsets(
    group: str = typer.Argument(..., help="Group."),
    topic: list[str] = typer.Option(
        ..., "--topic", "-t", help="TOPIC or TOPIC:P[,P...] (repeatable)."
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete a group's committed offsets for some topics or partitions (OffsetDelete)."""
    from kctl.kafka import groups as G
    from kctl.kafka.client import Admin
    from kctl.kafka.lagmath import parse_scope

    scope = parse_scope(topic)
    admin = Admin()
    counts = G.partitions_of(admin, list(scope))
    tps = [
        (t, p)
        for t, parts in scope.items()
        for p in (parts if parts is not None else range(counts[t]))
    ]
    confirm(
        f"Delete {len(tps)} committed offset(s) of group {group!r}?",
        yes=yes,
        action="delete offsets",
    )
    G.delete_offsets(admin, group, tps)
    emit(Output([{"group": group, "topic": t, "partition": p, "status": "deleted"} for t, p in tps],
                cols("group", "topic", "partition:>", "status")))  # fmt: skip


@app.command(
    "reset-offsets",
    epilog=example(
        "kctl groups reset-offsets orders-app --topic orders --to-earliest",
        "kctl groups reset-offsets orders-app --all-topics --by-duration PT1H --execute",
        "kctl groups reset-offsets orders-app -t orders:0,1 --shift-by -100 --export > plan.csv",
        "kctl groups reset-offsets orders-app --from-file plan.csv --execute",
    ),
)
def reset_offsets(
    group: str = typer.Argument(..., help="Group (must have no active members)."),
    topic: list[str] = typer.Option(
        [], "--topic", "-t", help="TOPIC or TOPIC:P[,P...] (repeatable)."
    ),
    all_topics: bool = typer.Option(
        False, "--all-topics", help="Every topic the group has offsets for."
    ),
    to_earliest: bool = typer.Option(False, "--to-earliest"),
    to_latest: bool = typer.Option(False, "--to-latest"),
    to_current: bool = typer.Option(False, "--to-current"),
    to_offset: int | None = typer.Option(None, "--to-offset"),
    shift_by: int | None = typer.Option(
        None, "--shift-by", help="+N or -N from the committed offset."
    ),
    to_datetime: str | None = typer.Option(None, "--to-datetime", help="ISO-8601 date-time."),
    by_duration: str | None = typer.Option(
        None, "--by-duration", help="ISO-8601 duration back from now."
    ),
    from_file: Path | None = typer.Option(None, "--from-file", help="topic,partition,offset CSV."),
    execute: bool = typer.Option(
        False, "--execute", help="Commit the plan (default: show it only)."
    ),
    export: bool = typer.Option(
        False, "--export", help="Print the plan as topic,partition,offset CSV."
    ),
) -> None:
    """Reset a group's committed offsets: the plan first, --execute to commit it. Targets are
    clamped between the log start and end offsets; a group with active members is refused."""
    from kctl.errors import KctlError, UsageError
    from kctl.kafka import groups as G
    from kctl.kafka import lagmath as L
    from kctl.kafka.client import Admin

    specs = {
        "earliest": to_earliest,
        "latest": to_latest,
        "current": to_current,
        "offset": to_offset is not None,
        "shift": shift_by is not None,
        "datetime": to_datetime is not None,
        "duration": by_duration is not None,
        "file": from_file is not None,
    }
    chosen = [k for k, v in specs.items() if v]
    if len(chosen) != 1:
        raise UsageError(
            "give exactly one of --to-earliest, --to-latest, --to-current, --to-offset, "
            "--shift-by, --to-datetime, --by-duration, --from-file"
        )
    spec = chosen[0]
    file_offsets: dict[L.TP, int] = {}
    if from_file is not None:
        try:
            text = from_file.read_text()
        except OSError as exc:
            raise KctlError(f"cannot read {from_file}", exc.strerror) from exc
        file_offsets = L.parse_reset_csv(text, str(from_file))
    if spec != "file" and not topic and not all_topics:
        raise UsageError("give --topic (repeatable) or --all-topics")
    if topic and all_topics:
        raise UsageError("give --topic or --all-topics, not both")
    ts_ms = None
    if spec == "datetime":
        ts_ms = L.parse_datetime_ms(to_datetime or "")
    elif spec == "duration":
        ts_ms = int((time.time() - L.parse_duration(by_duration or "").total_seconds()) * 1000)

    admin = Admin()
    described = G.describe(admin, [group])[group]
    committed = G.committed_offsets(admin, [group])[group]
    if described.active:
        raise KctlError(
            f"refusing to reset offsets of group {group!r}",
            f"it has {len(described.members)} active member(s), state {described.state}: "
            "stop them first",
        )
    if spec == "file":
        scope_topics = sorted({t for t, _ in file_offsets})
        counts = G.partitions_of(admin, scope_topics)
        for t, p in file_offsets:
            if p >= counts[t]:
                raise KctlError(
                    f"{from_file}: {t}[{p}] does not exist", f"{t} has {counts[t]} partitions"
                )
        tps = sorted(file_offsets)
    elif all_topics:
        tps = sorted(committed)
        if not tps:
            raise KctlError(f"group {group!r} has no committed offsets", "name topics with --topic")
    else:
        scope = L.parse_scope(topic)
        counts = G.partitions_of(admin, list(scope))
        tps = []
        for t, parts in scope.items():
            for p in parts if parts is not None else range(counts[t]):
                if p >= counts[t]:
                    raise KctlError(
                        f"partition {p} of topic {t!r} does not exist",
                        f"{t} has {counts[t]} partitions",
                    )
                tps.append((t, p))
    marks = G.watermarks(admin, tps)
    times = G.offsets_for_time(admin, tps, ts_ms) if ts_ms is not None else None
    kind = {"datetime": "time", "duration": "time"}.get(spec, spec)
    value = {"offset": to_offset, "shift": shift_by, "file": file_offsets}.get(spec)
    plan = L.plan_reset(kind, value, tps, committed, marks, times)
    for r in plan:
        if r.clamped:
            note(f"{r.topic}[{r.partition}]: target clamped {r.clamped} ({r.target})")
    if export:
        sys.stdout.write(L.export_csv(plan))
    else:
        rows = [
            {
                "group": group,
                "topic": r.topic,
                "partition": r.partition,
                "current": r.current,
                "target": r.target,
                "delta": r.delta,
                "clamped": r.clamped,
            }
            for r in plan
        ]
        emit(
            Output(
                rows,
                cols(
                    "group", "topic", "partition:>", "current:>", "target:>", "delta:>", "clamped"
                ),
            )
        )
    if not execute:
        note("plan only: nothing changed (add --execute to commit it)")
        return
    G.commit(admin, group, {(r.topic, r.partition): r.target for r in plan})
    note(f"committed {len(plan)} offset(s) for group {group!r}")
