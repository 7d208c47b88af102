"""Start-up cost of kctl, as ratios to `python -c pass` measured in the same run.

    .venv/bin/python benchmarks/startup.py [--runs 15]

Times whole processes (wall clock, median of interleaved runs): `python -c pass`, `kctl --help`,
and `kctl topics list` against a local broker this script starts on a free loopback port (and
stops). Also reports which heavy modules `kctl --help` imports (must be none).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAVY = ("confluent_kafka", "kafka", "pyspark", "pyarrow")


def wall(cmd: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import os

    from kctl.local import broker

    state = Path(tempfile.mkdtemp(prefix="kctl-bench-"))
    info, _ = broker.start(port=broker.free_port(), directory=state)
    env = {
        **os.environ,
        "KCTL_BOOTSTRAP_SERVERS": info.bootstrap,
        "KCTL_CONFIG": str(state / "c.yaml"),
    }
    py = sys.executable
    commands = {
        "python -c pass": [py, "-c", "pass"],
        "kctl --help": [py, "-m", "kctl", "--help"],
        "kctl topics list": [py, "-m", "kctl", "topics", "list"],
    }
    try:
        for cmd in commands.values():  # warm-up: page cache, .pyc files
            wall(cmd, env)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, cmd in commands.items():
                times[name].append(wall(cmd, env))
    finally:
        broker.stop(state)

    probe = (
        "import sys\nfrom kctl.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules) or 'none')"
    )
    heavy = (
        subprocess.run([py, "-c", probe], capture_output=True, text=True)
        .stdout.strip()
        .splitlines()[-1]
    )
    base = statistics.median(times["python -c pass"])
    print(f"runs: {args.runs} (median wall seconds, interleaved)")
    print(f"{'command':<20} {'median s':>9} {'ratio to python -c pass':>24}")
    for name, values in times.items():
        med = statistics.median(values)
        print(f"{name:<20} {med:>9.3f} {med / base:>24.2f}x")
    print(f"heavy modules imported by kctl --help: {heavy}")


if __name__ == "__main__":
    main()
