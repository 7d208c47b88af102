"""kctl replicas: validate replica health over a cluster snapshot; compare replicas byte by byte,
online (verify) and offline (compare)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from kctl.commands._common import connection, example, note, output_view
from kctl.errors import EXIT_FINDINGS
from kctl.formatters import Output, cols, emit
from kctl.parsing import INT16_MAX, INT32_MAX

app = typer.Typer(
    help="Replica health in one report; replicas compared batch by batch, online and offline.",
    no_args_is_help=True,
)


def load_snapshot(path: Path) -> Any:
    """A snapshot file as ``kctl cluster snapshot -o json`` wrote it."""
    import orjson

    from kctl.errors import UsageError
    from kctl.inputs import SNAPSHOT, decode, read_bytes
    from kctl.replicas.model import ClusterSnapshot, SnapshotFormatError

    raw = read_bytes(path, "--snapshot", SNAPSHOT, stdin_dash=True)
    try:
        return ClusterSnapshot.from_dict(orjson.loads(raw))
    except orjson.JSONDecodeError as exc:
        decode(raw, path, "--snapshot")  # not UTF-8: the byte offset where decoding failed
        raise UsageError(f"snapshot {path} is not JSON", str(exc)) from exc
    except SnapshotFormatError as exc:
        raise UsageError(f"cannot use snapshot {path}", str(exc)) from exc


@app.command(
    "validate",
    epilog=example(
        "kctl replicas validate",
        "kctl replicas validate --topic orders --min-rf 3 --fail-on error -o json",
        "kctl cluster snapshot -o json > snap.json && kctl replicas validate --snapshot snap.json",
    ),
)
def validate(
    ctx: typer.Context,
    topics: list[str] = typer.Option(
        [], "--topic", "-t", help="Only this topic (repeatable; default: every topic)."
    ),
    snapshot: Path | None = typer.Option(
        None,
        "--snapshot",
        help="Validate a snapshot file (kctl cluster snapshot -o json) instead of the cluster.",
        metavar="FILE",
    ),
    min_rf: int | None = typer.Option(
        None,
        "--min-rf",
        min=1,
        max=INT16_MAX,
        help="Minimum replication factor (default: the cluster's default.replication.factor).",
    ),
    fail_on: str = typer.Option(
        "warn", "--fail-on", help="Exit 3 when a finding is at or above: warn|error."
    ),
    log_dirs: bool = typer.Option(
        True, "--log-dirs/--no-log-dirs", help="Ask the brokers for their log dirs."
    ),
) -> None:
    """Every replica problem in one report: offline partitions, ISR below or at
    min.insync.replicas, under-replication, brokers down or unregistered, low replication
    factor, rack spread, preferred-leader imbalance, log-dir problems. The table shows what a
    broker down explains as one row (-o json lists every finding). Exit 3 on findings (see
    --fail-on)."""
    from kctl.errors import NotFoundError
    from kctl.replicas import rules

    if fail_on not in ("warn", "error"):
        raise typer.BadParameter(f"{fail_on!r} is not warn or error", param_hint="--fail-on")
    if snapshot is not None:
        snap = load_snapshot(snapshot)
        for name in topics:
            if snap.topic(name) is None:
                raise NotFoundError(f"unknown topic {name!r}", f"not in snapshot {snapshot}")
    else:
        from kctl.broker.client import Admin
        from kctl.broker.cluster_snapshot import collect

        snap = collect(Admin(connection(ctx)), list(topics), log_dirs=log_dirs)
    if snap.log_dirs_unsupported:
        brokers = ", ".join(map(str, snap.log_dirs_unsupported))
        note(
            f"kctl: warning: log-dir checks skipped for broker {brokers} "
            "(no DescribeLogDirs support)"
        )
    findings = rules.validate(snap, rules.Options(min_rf=min_rf, topics=list(topics)))
    causes = rules.causes(snap, findings)
    checked = rules.selected_topics(snap, list(topics))
    counts = rules.counts(findings)
    doc = {
        "cluster_id": snap.cluster_id,
        "source": str(snapshot) if snapshot is not None else "cluster",
        "taken_at_ms": snap.taken_at_ms,
        "topics_checked": len(checked),
        "partitions_checked": sum(len(t.partitions) for t in checked),
        "counts": counts,
        "findings": rules.finding_documents(causes, findings),
        "causes": [c.to_dict() for c in causes],
    }
    emit(
        Output(
            rules.table_rows(causes, findings),
            cols("severity", "check", "topic", "partition:>", "brokers", "reason"),
            doc=doc,
        ),
        output_view(ctx),
    )
    summary = ", ".join(f"{n} {s}" for s, n in counts.items())
    note(
        f"{doc['partitions_checked']} partition(s) of {len(checked)} topic(s) checked: "
        + (summary if findings else "healthy")
    )
    for cause in causes:
        note(
            f"{cause.title}: behind {len(cause.findings)} of the findings "
            "(one row in the table; -o json lists each)"
        )
    if rules.at_or_above(findings, fail_on):
        raise typer.Exit(EXIT_FINDINGS)


def _emit_comparison(ctx: typer.Context, results: list[Any], doc: dict[str, Any]) -> None:
    emit(
        Output(
            [r.row() for r in results],
            cols(
                "replica",
                "status",
                "first_divergent_offset:>",
                "segments:>",
                "batches:>",
                "log_start_offset:>",
                "log_end_offset:>",
                "reason",
            ),
            doc=doc,
        ),
        output_view(ctx),
    )


@app.command(
    "compare",
    epilog=example(
        "kctl replicas compare broker1/orders-3 broker2/orders-3 broker3/orders-3",
        "kctl replicas compare a/orders-3 b/orders-3 -o json | jq '.replicas[].status'",
    ),
)
def compare(
    ctx: typer.Context,
    dirs: list[Path] = typer.Argument(
        ..., help="The same partition's directory copied from two or more brokers."
    ),
) -> None:
    """Compare one partition's directories from several brokers, segment by segment and batch by
    batch (base offsets, CRCs, sizes, leader epochs) against the first DIR: divergence points,
    truncated tails, missing segments, corrupt batches. Exit 3 when they differ."""
    from kctl.errors import UsageError
    from kctl.replicas import compare as C

    if len(dirs) < 2:
        raise UsageError("replicas compare needs at least two directories")
    logs = [C.read_partition_dir(d) for d in dirs]
    if len({d.name for d in dirs}) > 1:
        note("kctl: warning: the directories have different names; comparing them anyway")
    results = C.compare(logs)
    doc = {
        "reference": str(dirs[0]),
        "replicas": [r.document() for r in results],
    }
    _emit_comparison(ctx, results, doc)
    differing = [r for r in results if r.status not in ("reference", "identical")]
    if differing:
        note(f"{len(differing)} of {len(results)} replica(s) differ")
        raise typer.Exit(EXIT_FINDINGS)
    note(f"{len(results)} replicas hold the same batches")


@app.command(
    "verify",
    epilog=example(
        "kctl replicas verify --topic orders",
        "kctl replicas verify --topic orders --offset 1000 --max-bytes 10485760 -o json",
    ),
)
def verify(
    ctx: typer.Context,
    topics: list[str] = typer.Option(
        [], "--topic", "-t", help="Only this topic (repeatable; default: every non-internal topic)."
    ),
    offset: int | None = typer.Option(
        None, "--offset", min=0, help="Start here (default: each partition's earliest offset)."
    ),
    max_bytes: int = typer.Option(
        1024 * 1024,
        "--max-bytes",
        min=1024,
        max=INT32_MAX,
        help="Bytes to fetch per replica and partition.",
    ),
) -> None:
    """Fetch the same offsets from every replica of each partition (leader and followers, where
    the cluster lets followers serve fetches) and compare them batch by batch: offsets, CRCs,
    sizes, leader epochs. Reports the first divergent offset per replica; exit 3 on divergence."""
    from kctl.broker.client import Admin
    from kctl.broker.replica_verify import verify as run

    rows = run(Admin(connection(ctx)), list(topics), offset=offset, budget=max_bytes)
    emit(
        Output(
            rows,
            cols(
                "topic",
                "partition:>",
                "broker:>",
                "role",
                "status",
                "first_divergent_offset:>",
                "offsets",
                "batches:>",
                "reason",
            ),
        ),
        output_view(ctx),
    )
    offline = [r for r in rows if r["status"] == "offline"]
    bad = [
        r for r in rows if r["status"] not in ("reference", "identical", "unfetchable", "offline")
    ]
    skipped = [r for r in rows if r["status"] == "unfetchable"]
    if skipped:
        note(f"kctl: {len(skipped)} replica(s) could not be fetched (see reason)")
    if offline:
        note(f"{len(offline)} replica(s) offline (no leader, or their broker is not alive)")
    if bad:
        note(f"{len(bad)} replica(s) differ from their leader")
    if bad or offline:
        raise typer.Exit(EXIT_FINDINGS)
    partitions = len({(r["topic"], r["partition"]) for r in rows})
    note(f"{partitions} partition(s): every fetched replica matches its leader")
