"""kctl metadata: the KRaft metadata log read offline (``__cluster_metadata-0`` on disk)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from kctl.commands._common import example, note, output_view
from kctl.formatters import Output, cols, emit

app = typer.Typer(
    help="Read a KRaft metadata log offline: the cluster's state.",
    no_args_is_help=True,
)

IMAGE_EPILOG = example(
    "kctl metadata image /var/lib/kafka/data/__cluster_metadata-0",
    "kctl metadata image DIR -o json --at-offset 100",
    "kctl metadata image DIR --diff 20..30",
    "kctl metadata image DIR --snapshot-json snap.json && "
    "kctl replicas validate --snapshot snap.json",
)


def _partition_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for t in doc["topics"]:
        for p in t["partitions"]:
            rows.append(
                {
                    "topic": t["name"],
                    "topic_id": t["topic_id"],
                    "partition": p["partition"],
                    "leader": p["leader"],
                    "leader_epoch": p["leader_epoch"],
                    "replicas": p["replicas"],
                    "isr": p["isr"],
                    "elr": p["eligible_leader_replicas"],
                    "directories": p["directories"],
                }
            )
    return rows


@app.command("image", epilog=IMAGE_EPILOG)
def image(
    ctx: typer.Context,
    directory: Path = typer.Argument(..., help="A __cluster_metadata-0 directory."),
    at_offset: int | None = typer.Option(
        None, "--at-offset", min=0, help="The state after this offset (default: the last)."
    ),
    diff: str | None = typer.Option(
        None, "--diff", metavar="A..B", help="What changed from the state at A to the state at B."
    ),
    snapshot_json: Path | None = typer.Option(
        None,
        "--snapshot-json",
        metavar="FILE",
        help="Also write the cluster snapshot `kctl replicas validate --snapshot` reads.",
    ),
) -> None:
    """Replay a KRaft metadata log into the cluster's state: brokers, topics, partitions,
    configs, ACLs, SCRAM users, quotas, features, producer ids.

    The newest snapshot (*.checkpoint) at or before the offset is read, then the log segments
    after it. -o json|yaml print the whole image (docs/metadata.md); table/plain one row per
    partition."""
    from kctl.dump import metadata_dir
    from kctl.errors import KctlError, UsageError
    from kctl.logfmt import image as I
    from kctl.parsing import offset_range

    if diff is not None:
        if at_offset is not None or snapshot_json is not None:
            raise UsageError("--diff goes alone: not with --at-offset or --snapshot-json")
        lo, hi = offset_range(diff, "--diff", hint="two offsets, e.g. --diff 20..30")
        before = metadata_dir.load(directory, at_offset=lo)
        after = metadata_dir.load(directory, at_offset=hi)
        d = I.diff(before, after)
        rows = [
            {
                "change": c["change"],
                "kind": c["kind"],
                "key": c["key"],
                "fields": ",".join(c.get("fields", {})),
            }
            for c in d["changes"]
        ]
        emit(
            Output(
                rows=rows,
                columns=cols("change", "kind", "key", "fields"),
                doc=d,
                title=f"Changes from offset {before.offset} to {after.offset}",
                name_key="key",
            ),
            output_view(ctx),
        )
        return

    img = metadata_dir.load(directory, at_offset=at_offset)
    if at_offset is not None and img.offset < at_offset:
        note(f"kctl: note: the log ends at offset {img.offset}; showing the state there")
    if img.pending is not None:
        note(
            f"kctl: note: a metadata transaction begun at offset {img.pending_begin} is not "
            f"ended; its {len(img.pending)} records are not applied"
        )
    if snapshot_json is not None:
        from kctl.formatters import to_json
        from kctl.replicas.from_image import cluster_snapshot

        snap = cluster_snapshot(img, cluster_id=metadata_dir.cluster_id(directory))
        try:
            snapshot_json.write_text(to_json(snap) + "\n")
        except OSError as exc:
            raise KctlError(f"cannot write {snapshot_json}", exc.strerror or str(exc)) from exc
    doc = img.to_dict()
    brokers = ", ".join(f"{b['id']}{' (fenced)' if b['fenced'] else ''}" for b in doc["brokers"])
    emit(
        Output(
            rows=_partition_rows(doc),
            columns=cols(
                "topic",
                "topic_id",
                "partition:>",
                "leader:>",
                "leader_epoch:>",
                "replicas",
                "isr",
                "elr",
                "directories",
            ),
            doc=doc,
            title=f"Metadata image at offset {img.offset}; brokers: {brokers or 'none'}; "
            f"metadata.version {doc['features'].get('metadata.version', '?')}",
            name_key="topic",
        ),
        output_view(ctx),
    )
