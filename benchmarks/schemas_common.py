"""What benchmarks/schemas_consume.py and benchmarks/schemas_produce.py share: the Avro schema
and its records, the command line, kctl's environment, timing a process (wall and CPU) and the
table of results."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

SCHEMA = {
    "type": "record",
    "name": "Order",
    "namespace": "bench.kctl",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "customer_id", "type": "int"},
        {"name": "quantity", "type": "int"},
        {"name": "price_cents", "type": "long"},
        {"name": "sku", "type": "string"},
        {"name": "customer", "type": "string"},
        {"name": "country", "type": "string"},
        {"name": "status", "type": "string"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "created", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    ],
}

_COUNTRIES = ["DE", "FR", "US", "JP", "BR"]
_STATUSES = ["NEW", "PAID", "SHIPPED", "DONE"]
_BASE_MS = 1_764_000_000_000


def order(i: int) -> dict[str, Any]:
    """Record ``i`` of SCHEMA, its timestamp-millis ``created`` as milliseconds."""
    return {
        "id": 10_000_000_000 + i,
        "customer_id": i % 50_000,
        "quantity": i % 7 + 1,
        "price_cents": 199 + i % 10_000,
        "sku": f"SKU-{i % 9973:05d}",
        "customer": f"customer-{i % 50_000}@example.com",
        "country": _COUNTRIES[i % 5],
        "status": _STATUSES[i % 4],
        "note": None if i % 3 else f"gift wrap {i}",
        "created": _BASE_MS + i * 17,
    }


def arguments(doc: str | None, runs: int, extra: bool = False) -> argparse.Namespace:
    """--records, --runs (``runs`` by default), --bootstrap, --registry (and --topic when
    ``extra``)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=runs)
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--registry", required=True, help="the Confluent API's base URL")
    if extra:
        parser.add_argument("--topic", help="an already filled topic (skips the fill)")
    return parser.parse_args()


def kctl_env(args: argparse.Namespace, tmp: Path) -> dict[str, str]:
    """The environment of kctl's runs: the cluster and registry of ``args``, a config of its own."""
    return {
        **os.environ,
        "KCTL_BOOTSTRAP_SERVERS": args.bootstrap,
        "KCTL_SCHEMA_REGISTRY_URL": args.registry,
        "KCTL_CONFIG": str(tmp / "c.yaml"),
    }


def timed(cmd: list[str], env: dict[str, str], stdin: Path | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system, from wait4) of one run of ``cmd`` writing to
    /dev/null (reading ``stdin``). CPU time is the steadier figure on a shared machine: other
    processes stretch the wall time, not it. A failed run ends the benchmark with its stderr."""
    with (
        tempfile.TemporaryFile() as err,
        stdin.open("rb") if stdin is not None else open(os.devnull, "rb") as source,
    ):
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=source, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        took = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            tail = err.read().decode(errors="replace")[-2000:]
            raise SystemExit(f"{cmd[:4]} exited {proc.returncode}: {tail}")
    return took, usage.ru_utime + usage.ru_stime


def table(
    n: int, times: dict[str, list[float]], cpus: dict[str, list[float]]
) -> tuple[dict[str, float], dict[str, float]]:
    """The results as a Markdown table (median wall, records/s, µs/record, median CPU) of the
    runs' wall and CPU seconds by name; the medians of both."""
    wall = {k: statistics.median(v) for k, v in times.items()}
    cpu = {k: statistics.median(v) for k, v in cpus.items()}
    print("| work | median wall | records/s | µs/record | median CPU (user+sys) |")
    print("|---|---|---|---|---|")
    for name in times:
        print(
            f"| `{name}` | {wall[name]:.2f} s | {n / wall[name]:,.0f} | "
            f"{wall[name] / n * 1e6:.2f} | {cpu[name]:.2f} s |"
        )
    return wall, cpu


def all_runs(times: dict[str, list[float]], cpus: dict[str, list[float]]) -> None:
    print("\nall runs (wall):", {k: [round(x, 2) for x in v] for k, v in times.items()})
    print("all runs (CPU):", {k: [round(x, 2) for x in v] for k, v in cpus.items()})
