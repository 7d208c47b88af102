"""kctl cluster: describe the cluster; API versions per broker (kafka-broker-api-versions.sh)."""

from __future__ import annotations

import typer

from kctl.commands._common import connection, example, output_view
from kctl.commands._complete import topic_names
from kctl.errors import EXIT_FAILED, KctlError
from kctl.formatters import Output, cols, emit
from kctl.parsing import INT32_MAX

app = typer.Typer(
    help="Cluster id, controller, brokers; API versions per broker.", no_args_is_help=True
)


@app.command(
    "describe",
    epilog=example("kctl cluster describe", "kctl cluster describe -o json | jq .brokers"),
)
def describe(ctx: typer.Context) -> None:
    """Cluster id, the active controller (on KRaft: the controller quorum's leader, with the
    quorum's voters) and the brokers with rack and address."""
    from kctl.broker import cluster
    from kctl.broker.client import Admin
    from kctl.commands._common import note

    info = cluster.describe_active(Admin(connection(ctx)))
    rows = [
        {
            "broker": b.id,
            "host": b.host,
            "port": b.port,
            "rack": b.rack,
            "controller": b.is_controller,
        }
        for b in info.brokers
    ]
    doc = {
        "cluster_id": info.cluster_id,
        "controller_id": info.controller_id,
        "controller_source": info.controller_source,
        "quorum_voters": info.quorum_voters,
        "brokers": rows,
    }
    if info.quorum_error is not None:
        note(f"kctl: warning: the active controller is not known ({info.quorum_error})")
    controller = cluster.controller_line(info)
    view = output_view(ctx)
    emit(
        Output(
            rows,
            cols("broker:>", "host", "port:>", "rack", "controller"),
            doc=doc,
            title=f"cluster {info.cluster_id} (controller {info.controller_id})",
        ),
        view,
    )
    if info.controller_source == "DescribeQuorum" and view.format in ("table", "plain", "csv"):
        note(controller)  # JSON and YAML have it in their fields


@app.command(
    "api-versions",
    epilog=example(
        "kctl cluster api-versions",
        "kctl cluster api-versions -o json | jq '.[] | select(.api==\"Fetch\")'",
    ),
)
def api_versions(ctx: typer.Context) -> None:
    """For every broker, the version range it supports for each API."""
    from kctl.broker import cluster

    rows = cluster.api_versions(connection(ctx))
    emit(
        Output(
            rows, cols("broker:>", "address", "api", "api_key:>", "min_version:>", "max_version:>")
        ),
        output_view(ctx),
    )


@app.command(
    "snapshot",
    epilog=example(
        "kctl cluster snapshot -o json > snap.json",
        "kctl replicas validate --snapshot snap.json",
    ),
)
def snapshot(
    ctx: typer.Context,
    topics: list[str] = typer.Option(
        [],
        "--topic",
        "-t",
        help="Only this topic (repeatable; default: every topic).",
        autocompletion=topic_names,
    ),
    log_dirs: bool = typer.Option(
        True, "--log-dirs/--no-log-dirs", help="Ask the brokers for their log dirs."
    ),
) -> None:
    """Placement, ISR, min.insync.replicas, racks and log dirs in one document: with -o json,
    the input of 'kctl replicas validate --snapshot' (fields in docs/replicas.md)."""
    from kctl.broker.client import Admin
    from kctl.broker.cluster_snapshot import collect
    from kctl.commands._common import note

    snap = collect(Admin(connection(ctx)), list(topics), log_dirs=log_dirs)
    if snap.log_dirs_unsupported:
        brokers = ", ".join(map(str, snap.log_dirs_unsupported))
        note(
            f"kctl: warning: log dirs not collected from broker {brokers} "
            "(no DescribeLogDirs support)"
        )
    rows = [
        {
            "topic": t.name,
            "partition": p.partition,
            "leader": p.leader,
            "replicas": p.replicas,
            "isr": p.isr,
            "min_insync_replicas": t.min_insync_replicas,
        }
        for t in snap.topics
        for p in t.partitions
    ]
    emit(
        Output(
            rows,
            cols("topic", "partition:>", "leader:>", "replicas", "isr", "min_insync_replicas:>"),
            doc=snap.to_dict(),
        ),
        output_view(ctx),
    )
    for name, why in sorted(snap.config_errors.items()):
        note(f"kctl: error: {KctlError(f'describing configs of topic {name!r}', why).line()}")
    if snap.config_errors:
        raise typer.Exit(EXIT_FAILED)


@app.command(
    "log-dirs",
    epilog=example(
        "kctl cluster log-dirs",
        "kctl cluster log-dirs --broker 1 --topic orders -o json",
        "kctl cluster log-dirs --topic orders --kafka-json",
    ),
)
def log_dirs(
    ctx: typer.Context,
    brokers: list[int] = typer.Option(
        [],
        "--broker",
        min=0,
        max=INT32_MAX,
        help="Only this broker (repeatable; default: every broker).",
    ),
    topics: list[str] = typer.Option(
        [],
        "--topic",
        "-t",
        help="Only this topic's replicas (repeatable).",
        autocompletion=topic_names,
    ),
    kafka_json: bool = typer.Option(
        False,
        "--kafka-json",
        help="Print kafka-log-dirs.sh's JSON document instead "
        '({"brokers":[{"broker":N,"logDirs":[...]}],"version":1}), whatever -o says.',
    ),
) -> None:
    """Per broker and log dir: each replica's size, offset lag and whether it is a future
    replica (an intra-broker move), as kafka-log-dirs.sh --describe."""
    from kctl.broker import logdirs
    from kctl.broker.client import Admin
    from kctl.broker.topics import resolve_names

    wanted = None
    if topics:
        view, names = resolve_names(
            Admin(connection(ctx)), list(topics), None, internal=True, missing_ok=False
        )
        wanted = {n: [p.partition for p in view.topics[n].partitions] for n in names}

    dirs = logdirs.describe(connection(ctx), list(brokers) or None, wanted)
    if kafka_json:
        import json
        import sys

        sys.stdout.write(json.dumps(logdirs.kafka_document(dirs), separators=(",", ":")) + "\n")
        return
    rows = []
    for d in dirs:
        if not d.replicas:
            rows.append({"broker": d.broker, "log_dir": d.path, "error": d.error})
        for r in d.replicas:
            rows.append(
                {
                    "broker": d.broker,
                    "log_dir": d.path,
                    "topic": r.topic,
                    "partition": r.partition,
                    "size": r.size,
                    "offset_lag": r.offset_lag,
                    "future": r.is_future,
                    "error": d.error,
                }
            )
    doc = [
        {
            "broker": d.broker,
            "log_dir": d.path,
            "error": d.error,
            "total_bytes": d.total_bytes,
            "usable_bytes": d.usable_bytes,
            "replicas": [
                {
                    "topic": r.topic,
                    "partition": r.partition,
                    "size": r.size,
                    "offset_lag": r.offset_lag,
                    "future": r.is_future,
                }
                for r in d.replicas
            ],
        }
        for d in dirs
    ]
    emit(
        Output(
            rows,
            cols(
                "broker:>",
                "log_dir",
                "topic",
                "partition:>",
                "size:>",
                "offset_lag:>",
                "future",
                "error",
            ),
            doc=doc,
        ),
        output_view(ctx),
    )


@app.command(
    "unregister",
    epilog=example("kctl cluster unregister 4", "kctl cluster unregister 4 --yes"),
)
def unregister(
    ctx: typer.Context,
    broker: int = typer.Argument(
        ..., min=0, max=INT32_MAX, help="The id of the broker to unregister."
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    force: bool = typer.Option(
        False, "--force", help="Unregister even a live broker (it registers again)."
    ),
) -> None:
    """Remove a broker that is gone for good from the cluster's registrations, so it no longer
    counts as a fenced broker (kafka-cluster.sh unregister; KRaft)."""
    from kctl.broker import cluster
    from kctl.broker.client import Admin
    from kctl.commands._common import confirm, note

    confirm(f"Unregister broker {broker}?", yes=yes, action=f"unregister broker {broker}")
    was = cluster.unregister(Admin(connection(ctx)), broker, force=force)
    note(f"broker {broker} unregistered (it was {was})")
    emit(Output([{"broker": broker, "was": was, "unregistered": True}],
                cols("broker:>", "was", "unregistered")), output_view(ctx))  # fmt: skip
