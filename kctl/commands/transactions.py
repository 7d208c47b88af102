"""kctl transactions: list, describe, producers, find-hanging, abort (kafka-transactions.sh)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import typer

from kctl.commands._common import connection, example, note, output_view
from kctl.formatters import Output, cols, emit
from kctl.parsing import INT16_MAX, INT32_MAX

if TYPE_CHECKING:
    from kctl.broker.transactions import Producer

app = typer.Typer(
    help="Transactions: list, describe, producers, find hanging, abort.", no_args_is_help=True
)

_PRODUCER_COLS = (
    "topic",
    "partition:>",
    "producer_id:>",
    "producer_epoch:>",
    "last_sequence:>",
    "last_timestamp",
    "coordinator_epoch:>",
    "current_txn_start_offset:>",
)


def _time(ms: int) -> str | None:
    if ms < 0:
        return None
    t = time.gmtime(ms / 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", t) + f".{ms % 1000:03d}Z"


def _tp(text: str, option: str) -> tuple[str, int]:
    from kctl import parsing
    from kctl.errors import UsageError

    topic, sep, part = text.rpartition(":")
    if not sep or not topic:
        raise UsageError(f"malformed {option} {text!r}", "expected TOPIC:PARTITION")
    return topic, parsing.partition(part, option)


def _producer_row(p: Producer) -> dict[str, Any]:
    return {
        "topic": p.topic,
        "partition": p.partition,
        "producer_id": p.producer_id,
        "producer_epoch": p.producer_epoch,
        "last_sequence": p.last_sequence,
        "last_timestamp": _time(p.last_timestamp),
        "coordinator_epoch": p.coordinator_epoch,
        "current_txn_start_offset": (
            p.current_txn_start_offset if p.current_txn_start_offset >= 0 else None
        ),
        "leader": p.leader,
    }


@app.command(
    "list",
    epilog=example(
        "kctl transactions list",
        "kctl transactions list --state Ongoing --duration-filter 60000 -o json",
    ),
)
def list_(
    ctx: typer.Context,
    state: list[str] = typer.Option(
        [], "--state", help="Only transactions in this state, e.g. Ongoing (repeatable)."
    ),
    producer_id: list[int] = typer.Option(
        [], "--producer-id", help="Only this producer id (repeatable)."
    ),
    duration_filter: int | None = typer.Option(
        None,
        "--duration-filter",
        min=0,
        metavar="MS",
        help="Only transactions running longer than MS (ListTransactions v1, Kafka 3.8+).",
    ),
) -> None:
    """Transactional ids with producer id, state and coordinator (every broker is asked)."""
    from kctl.broker import transactions as T
    from kctl.broker.client import Admin
    from kctl.errors import UsageError

    names = {s.lower(): s for s in T.STATES}
    bad = [s for s in state if s.lower() not in names]
    if bad:
        raise UsageError(f"unknown state {', '.join(bad)}", f"expected {', '.join(T.STATES)}")
    with T.TxnClient(Admin(connection(ctx))) as c:
        listed = c.list_transactions(
            [names[s.lower()] for s in state], producer_id, duration_filter
        )
    rows = [
        {
            "transactional_id": t.transactional_id,
            "producer_id": t.producer_id,
            "state": t.state,
            "coordinator": t.coordinator,
        }
        for t in listed
    ]
    emit(
        Output(rows, cols("transactional_id", "producer_id:>", "state", "coordinator:>")),
        output_view(ctx),
    )


@app.command(
    "describe",
    epilog=example(
        "kctl transactions describe payments-tx-1", "kctl transactions describe t1 -o json"
    ),
)
def describe(
    ctx: typer.Context,
    transactional_id: str = typer.Argument(..., help="A transactional id."),
) -> None:
    """State, producer id and epoch, timeout, start time, partitions and coordinator of one
    transactional id (DescribeTransactions)."""
    from kctl.broker import transactions as T
    from kctl.broker.client import Admin
    from kctl.errors import NotFoundError

    with T.TxnClient(Admin(connection(ctx))) as c:
        found = c.describe([transactional_id]).get(transactional_id)
    if found is None:
        raise NotFoundError(f"transactional id {transactional_id!r}", "unknown to its coordinator")
    row = {
        "transactional_id": found.transactional_id,
        "coordinator": found.coordinator,
        "state": found.state,
        "producer_id": found.producer_id,
        "producer_epoch": found.producer_epoch,
        "timeout_ms": found.timeout_ms,
        "start_time": _time(found.start_time_ms),
        "duration_ms": (
            int(time.time() * 1000) - found.start_time_ms if found.start_time_ms >= 0 else None
        ),
        "partitions": ",".join(f"{t}:{p}" for t, p in found.partitions),
    }
    doc = {**row, "partitions": [{"topic": t, "partition": p} for t, p in found.partitions]}
    emit(
        Output(
            [row],
            cols("transactional_id", "coordinator:>", "state", "producer_id:>",
                 "producer_epoch:>", "timeout_ms:>", "start_time", "duration_ms:>", "partitions"),
            doc=doc,
        ),
        output_view(ctx),
    )  # fmt: skip


@app.command(
    "producers",
    epilog=example(
        "kctl transactions producers orders:0", "kctl transactions producers orders:0 -o json"
    ),
)
def producers(
    ctx: typer.Context,
    partitions: list[str] = typer.Argument(..., help="TOPIC:PARTITION (several allowed)."),
) -> None:
    """Active producers of partitions: id, epoch, last sequence and timestamp, coordinator
    epoch, current transaction start offset (DescribeProducers at the leader)."""
    from kctl.broker import transactions as T
    from kctl.broker.client import Admin

    wanted = [_tp(p, "TOPIC:PARTITION") for p in partitions]
    with T.TxnClient(Admin(connection(ctx))) as c:
        leaders: dict[tuple[str, int], int] = {}
        for topic in dict.fromkeys(t for t, _ in wanted):
            leaders.update(c.leaders(topic))
        found = c.producers(list(dict.fromkeys(wanted)), leaders)
    emit(Output([_producer_row(p) for p in found], cols(*_PRODUCER_COLS)), output_view(ctx))


@app.command(
    "find-hanging",
    epilog=example(
        "kctl transactions find-hanging --broker 1",
        "kctl transactions find-hanging --topic orders --max-age-ms 60000 --all -o json",
    ),
)
def find_hanging(
    ctx: typer.Context,
    broker: int | None = typer.Option(
        None, "--broker", min=0, max=INT32_MAX, help="The partitions this broker leads."
    ),
    topic: str | None = typer.Option(None, "--topic", help="Every partition of this topic."),
    max_age_ms: int | None = typer.Option(
        None,
        "--max-age-ms",
        min=0,
        help="Open longer than this counts (default: the broker's transaction.max.timeout.ms).",
    ),
    all_: bool = typer.Option(
        False, "--all", help="Also the old open transactions the coordinator still holds."
    ),
) -> None:
    """Open transactions older than the maximum transaction timeout that the coordinator no
    longer holds: they block the last stable offset (abort them with 'transactions abort').

    As kafka-transactions.sh: DescribeProducers on the partitions in scope, then
    ListTransactions/DescribeTransactions at the coordinator. Exit 3 when any is found."""
    from kctl.broker import transactions as T
    from kctl.broker.client import Admin
    from kctl.errors import FindingsError

    threshold, found = T.find_hanging(
        Admin(connection(ctx)), broker=broker, topic=topic, max_age_ms=max_age_ms
    )
    rows = [
        {
            **_producer_row(h.producer),
            "transactional_id": h.transactional_id,
            "age_ms": h.age_ms,
            "hanging": h.hanging,
            "reason": h.reason,
        }
        for h in found
        if all_ or h.hanging
    ]
    emit(
        Output(
            rows,
            cols("topic", "partition:>", "producer_id:>", "producer_epoch:>",
                 "coordinator_epoch:>", "current_txn_start_offset:>", "age_ms:>",
                 "transactional_id", "hanging", "reason"),
        ),
        output_view(ctx),
    )  # fmt: skip
    hanging = sum(h.hanging for h in found)
    if hanging:
        raise FindingsError(f"{hanging} hanging transaction(s) (open longer than {threshold} ms)")


@app.command(
    "abort",
    epilog=example(
        "kctl transactions abort --topic orders --partition 0 --start-offset 1234",
        "kctl transactions abort --topic orders --partition 0 --start-offset 1234 --execute",
        "kctl transactions abort --topic orders --partition 0 --producer-id 7 "
        "--producer-epoch 0 --coordinator-epoch 3 --execute",
    ),
)
def abort(
    ctx: typer.Context,
    topic: str = typer.Option(..., "--topic", help="The partition's topic."),
    partition: int = typer.Option(..., "--partition", min=0, max=INT32_MAX, help="The partition."),
    start_offset: int | None = typer.Option(
        None, "--start-offset", min=0, help="The open transaction's first offset."
    ),
    producer_id: int | None = typer.Option(None, "--producer-id", help="Its producer id."),
    producer_epoch: int | None = typer.Option(
        None, "--producer-epoch", min=0, max=INT16_MAX, help="Its epoch (an int16)."
    ),
    coordinator_epoch: int | None = typer.Option(
        None, "--coordinator-epoch", min=-1, max=INT32_MAX, help="Its coordinator epoch."
    ),
    execute: bool = typer.Option(
        False, "--execute", help="Write the abort marker (default: show the plan only)."
    ),
) -> None:
    """Abort an open (hanging) transaction on one partition: the plan first, --execute writes
    an abort marker at the partition leader (WriteTxnMarkers), which moves the last stable
    offset past it."""
    from kctl.broker import transactions as T
    from kctl.broker.client import Admin

    admin = Admin(connection(ctx))
    target = T.plan_abort(
        admin,
        topic,
        partition,
        start_offset=start_offset,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        coordinator_epoch=coordinator_epoch,
    )
    row = {**_producer_row(target), "action": "abort" if execute else "plan"}
    emit(Output([row], cols(*_PRODUCER_COLS, "leader:>", "action")), output_view(ctx))
    if not execute:
        note("plan only: nothing changed (add --execute to write the abort marker)")
        return
    T.abort(admin, target)
    note(
        f"aborted the transaction of producer {target.producer_id} on {topic}:{partition}"
        f" (abort marker written at broker {target.leader})"
    )
