"""kctl local: a real Kafka-protocol broker (Tansu) on loopback for trying kctl and for tests."""

from __future__ import annotations

import typer

from kctl.commands._common import example, note
from kctl.formatters import Output, cols, emit

app = typer.Typer(help="Start, inspect and stop a local broker on loopback.", no_args_is_help=True)


@app.command(
    "up",
    epilog=example(
        "kctl local up",
        "export KCTL_BOOTSTRAP_SERVERS=$(kctl local up --port 19092 --no-headers)",
    ),
)
def up(
    port: int = typer.Option(9092, "--port", help="Port to listen on (loopback only)."),
    wait: float = typer.Option(30.0, "--wait", help="Seconds to wait for the broker to answer."),
) -> None:
    """Start the local broker in the background and print its bootstrap address."""
    from kctl.local import broker

    info, started = broker.start(port=port, wait=wait)
    if started:
        note(f"local broker started (pid {info.pid}, log {info.log})")
    else:
        note(f"local broker already running (pid {info.pid})")
    emit(
        Output(
            [{"bootstrap": info.bootstrap}],
            cols("bootstrap"),
            doc={"bootstrap": info.bootstrap, "pid": info.pid},
        )
    )


@app.command("status", epilog=example("kctl local status -o json"))
def status() -> None:
    """Whether the local broker runs and answers."""
    from kctl.local import broker

    data = broker.status()
    rows = [{"key": k, "value": v} for k, v in data.items()]
    emit(Output(rows, cols("key", "value"), doc=data))
    if not data["running"]:
        raise typer.Exit(1)


@app.command("down", epilog=example("kctl local down"))
def down() -> None:
    """Stop the local broker (its memory storage goes with it)."""
    from kctl.local import broker

    info = broker.stop()
    note("local broker stopped" if info else "no local broker was running")
