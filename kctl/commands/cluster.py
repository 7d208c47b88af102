"""kctl cluster: describe the cluster; API versions per broker (kafka-broker-api-versions.sh)."""

from __future__ import annotations

import typer

from kctl.commands._common import example
from kctl.formatters import Output, cols, emit

app = typer.Typer(
    help="Cluster id, controller, brokers; API versions per broker.", no_args_is_help=True
)


@app.command(
    "describe",
    epilog=example("kctl cluster describe", "kctl cluster describe -o json | jq .brokers"),
)
def describe() -> None:
    """Cluster id, controller and brokers with rack and address."""
    from kctl.kafka import cluster
    from kctl.kafka.client import Admin

    info = cluster.describe(Admin())
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
    doc = {"cluster_id": info.cluster_id, "controller_id": info.controller_id, "brokers": rows}
    emit(
        Output(
            rows,
            cols("broker:>", "host", "port:>", "rack", "controller"),
            doc=doc,
            title=f"cluster {info.cluster_id} (controller {info.controller_id})",
        )
    )


@app.command(
    "api-versions",
    epilog=example(
        "kctl cluster api-versions",
        "kctl cluster api-versions -o json | jq '.[] | select(.api==\"Fetch\")'",
    ),
)
def api_versions() -> None:
    """For every broker, the version range it supports for each API."""
    from kctl.kafka import cluster
    from kctl.kafka.connect import resolve

    rows = cluster.api_versions(resolve())
    emit(
        Output(
            rows, cols("broker:>", "address", "api", "api_key:>", "min_version:>", "max_version:>")
        )
    )
