"""kctl quorum: the KRaft controller quorum: describe, add and remove controllers
(kafka-metadata-quorum.sh)."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import typer

from kctl.commands._common import confirm, connection, example, note, output_view
from kctl.formatters import Output, cols, emit
from kctl.parsing import INT32_MAX

if TYPE_CHECKING:
    from kctl.broker.quorum import QuorumState

app = typer.Typer(
    help="The KRaft controller quorum: describe, add and remove controllers.",
    no_args_is_help=True,
)

_REPLICATION_COLS = (
    "node_id:>",
    "directory_id",
    "log_end_offset:>",
    "lag:>",
    "last_fetch_timestamp:>",
    "last_caught_up_timestamp:>",
    "status",
)


def _status_doc(state: QuorumState) -> dict[str, Any]:
    def node(r: Any) -> dict[str, Any]:
        return {"id": r.node_id, "directory_id": r.directory_id, "endpoints": r.endpoints}

    return {
        "cluster_id": state.cluster_id,
        "leader_id": state.leader_id,
        "leader_epoch": state.leader_epoch,
        "high_watermark": state.high_watermark,
        "max_follower_lag": state.max_follower_lag,
        "max_follower_lag_time_ms": state.max_follower_lag_time_ms,
        "voters": [node(r) for r in state.voters],
        "observers": [node(r) for r in state.observers],
    }


@app.command(
    "describe",
    epilog=example(
        "kctl quorum describe",
        "kctl quorum describe --replication",
        "kctl quorum describe -o json | jq .max_follower_lag",
    ),
)
def describe(
    ctx: typer.Context,
    replication: bool = typer.Option(
        False,
        "--replication",
        help="One row per voter and observer: log end offset, lag, last fetch and catch-up.",
    ),
    status: bool = typer.Option(
        False, "--status", help="The quorum's summary (the default; kafka-metadata-quorum.sh)."
    ),
) -> None:
    """The metadata quorum's leader, epoch, high watermark, voters and observers, and how far
    each follows the leader (kafka-metadata-quorum.sh describe --status / --replication)."""
    from kctl.broker import quorum
    from kctl.broker.client import Admin
    from kctl.errors import UsageError

    if replication and status:
        raise UsageError("--replication and --status are exclusive", "choose one view")
    state = quorum.describe(Admin(connection(ctx)))
    if replication:
        rows = [{k: v for k, v in asdict(r).items() if k != "endpoints"} for r in state.replicas]
        emit(Output(rows, cols(*_REPLICATION_COLS), name_key="node_id"), output_view(ctx))
        return
    doc = _status_doc(state)
    row = {
        **{k: v for k, v in doc.items() if k not in ("voters", "observers")},
        "voters": ",".join(str(r.node_id) for r in state.voters),
        "observers": ",".join(str(r.node_id) for r in state.observers),
    }
    emit(
        Output(
            [row],
            cols("cluster_id", "leader_id:>", "leader_epoch:>", "high_watermark:>",
                 "max_follower_lag:>", "max_follower_lag_time_ms:>", "voters", "observers"),
            doc=doc,
        ),
        output_view(ctx),
    )  # fmt: skip


def _listener(text: str) -> tuple[str, str, int]:
    from kctl.errors import UsageError

    name, sep, rest = text.partition("://")
    host, colon, port = rest.rpartition(":")
    if not sep or not colon or not name or not host or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--listener {text!r} is not NAME://HOST:PORT", "e.g. CONTROLLER://h:9093")
    return name, host.strip("[]"), int(port)


@app.command(
    "add-controller",
    epilog=example(
        "kctl quorum add-controller 3001 --directory-id pbvuBlaTTwKRxS5NLJwRFQ "
        "--listener CONTROLLER://127.0.0.1:9098",
        "kctl quorum add-controller 3001 --directory-id pbvuBlaTTwKRxS5NLJwRFQ "
        "--listener CONTROLLER://127.0.0.1:9098 --execute",
        "kctl quorum add-controller 1002 --listener CONTROLLER://127.0.0.1:9194 --execute",
    ),
)
def add_controller(
    ctx: typer.Context,
    node_id: int = typer.Argument(..., min=0, max=INT32_MAX, help="The controller's node.id."),
    directory_id: str | None = typer.Option(
        None,
        "--directory-id",
        help="Its metadata log directory's id (meta.properties; default: the one the quorum "
        "reports for it as an observer).",
    ),
    listener: list[str] = typer.Option(
        ..., "--listener", help="An endpoint NAME://HOST:PORT the voters reach it on (repeatable)."
    ),
    execute: bool = typer.Option(False, "--execute", help="Do it (default: show the plan)."),
) -> None:
    """Make a running controller, which follows the metadata log as an observer, a voter
    (AddRaftVoter; needs a dynamic quorum: kraft.version 1, Kafka 3.9+)."""
    from kctl.broker import quorum
    from kctl.broker.client import Admin
    from kctl.errors import UsageError

    listeners = [_listener(x) for x in listener]
    if directory_id is None:
        replica = quorum.find_replica(quorum.describe(Admin(connection(ctx))), node_id)
        if replica.status != "Observer":
            raise UsageError(f"node {node_id} is already a voter", "nothing to add")
        if not replica.directory_id:
            raise UsageError(
                f"the quorum reports no directory id for node {node_id}", "give --directory-id"
            )
        directory_id = replica.directory_id
    quorum.parse_kafka_uuid(directory_id)
    row = {
        "action": "add-controller" if execute else "plan",
        "node_id": node_id,
        "directory_id": directory_id,
        "listeners": ",".join(listener),
    }
    if execute:
        quorum.add_controller(Admin(connection(ctx)), node_id, directory_id, listeners)
        note(f"controller {node_id} added to the quorum")
    else:
        note("plan only, nothing changed: add --execute to add the controller")
    emit(Output([row], cols("action", "node_id:>", "directory_id", "listeners")), output_view(ctx))


@app.command(
    "remove-controller",
    epilog=example(
        "kctl quorum remove-controller 3001 --directory-id pbvuBlaTTwKRxS5NLJwRFQ",
        "kctl quorum remove-controller 3001 --directory-id pbvuBlaTTwKRxS5NLJwRFQ --execute --yes",
    ),
)
def remove_controller(
    ctx: typer.Context,
    node_id: int = typer.Argument(..., min=0, max=INT32_MAX, help="The voter's node.id."),
    directory_id: str | None = typer.Option(
        None,
        "--directory-id",
        help="Its metadata directory id (default: the one the quorum reports for it).",
    ),
    execute: bool = typer.Option(False, "--execute", help="Do it (default: show the plan)."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Take a voter out of the controller quorum (RemoveRaftVoter; needs a dynamic quorum:
    kraft.version 1, Kafka 3.9+)."""
    from kctl.broker import quorum
    from kctl.broker.client import Admin
    from kctl.errors import UsageError

    admin = Admin(connection(ctx))
    if directory_id is None:
        replica = quorum.find_replica(quorum.describe(admin), node_id)
        if replica.status == "Observer":
            raise UsageError(f"node {node_id} is an observer, not a voter", "nothing to remove")
        if replica.directory_id is None:
            raise UsageError(
                f"the quorum reports no directory id for voter {node_id}",
                "a static quorum (kraft.version 0) cannot remove voters; or give --directory-id",
            )
        directory_id = replica.directory_id
    else:
        quorum.parse_kafka_uuid(directory_id)
    row = {
        "action": "remove-controller" if execute else "plan",
        "node_id": node_id,
        "directory_id": directory_id,
    }
    if execute:
        confirm(f"Remove controller {node_id} from the quorum?", yes=yes, action="remove it")
        quorum.remove_controller(admin, node_id, directory_id)
        note(f"controller {node_id} removed from the quorum")
    else:
        note("plan only, nothing changed: add --execute to remove the controller")
    emit(Output([row], cols("action", "node_id:>", "directory_id")), output_view(ctx))
