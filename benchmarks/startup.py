"""Start-up cost of kctl, as ratios to references measured in the same run.

    .venv/bin/python benchmarks/startup.py [--runs 15] [--bootstrap HOST:PORT]

Times whole processes (wall clock, median of interleaved runs): `python -c pass`, `kctl --help`
(from its help cache, and rendered afresh with KCTL_HELP_CACHE=0), `kctl topics list` and
kafka-topics.sh --list (Kafka's TopicCommand from the jars kctl caches) against a real Apache
Kafka cluster: the one at --bootstrap, else a 3-broker local one this script starts (and stops).
Also reports which heavy modules `kctl --help` imports (must be none).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bytecode import compile_kctl

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
    parser.add_argument("--bootstrap", help="an existing cluster (default: start a local one)")
    args = parser.parse_args()

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    compile_kctl()
    from kctl.local import kafka_cluster
    from kctl.local.kafka_jars import locate

    state = Path(tempfile.mkdtemp(prefix="kctl-bench-"))
    cluster = None
    if args.bootstrap:
        bootstrap = args.bootstrap
    else:
        cluster, _ = kafka_cluster.start(state, brokers=3, port=0)
        bootstrap = cluster.bootstrap
    libs = locate(None).libs
    env = {**os.environ, "KCTL_BOOTSTRAP_SERVERS": bootstrap, "KCTL_CONFIG": str(state / "c.yaml")}
    py = sys.executable
    java = shutil.which("java") or "java"
    topics_sh = [java, "-cp", f"{libs}/*", "org.apache.kafka.tools.TopicCommand"]
    commands = {
        "python -c pass": ([py, "-c", "pass"], env),
        "kctl --help": ([py, "-m", "kctl", "--help"], env),
        "kctl --help (no cache)": ([py, "-m", "kctl", "--help"], {**env, "KCTL_HELP_CACHE": "0"}),
        "kctl topics list": ([py, "-m", "kctl", "topics", "list"], env),
        "kafka-topics.sh --list": (
            [*topics_sh, "--bootstrap-server", bootstrap, "--list"],
            env,
        ),
    }
    try:
        for cmd, e in commands.values():  # warm-up: page cache, .pyc files, the help cache
            wall(cmd, e)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, (cmd, e) in commands.items():
                times[name].append(wall(cmd, e))
    finally:
        if cluster is not None:
            kafka_cluster.kill_all(cluster)
        shutil.rmtree(state, ignore_errors=True)

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
    ref = statistics.median(times["kafka-topics.sh --list"])
    print(f"runs: {args.runs} (median wall seconds, interleaved)")
    print(f"{'command':<24} {'median s':>9} {'x python -c pass':>17} {'x kafka-topics.sh':>18}")
    for name, values in times.items():
        med = statistics.median(values)
        print(f"{name:<24} {med:>9.3f} {med / base:>16.2f}x {med / ref:>17.2f}x")
    print(f"heavy modules imported by kctl --help: {heavy}")


if __name__ == "__main__":
    main()
