"""How `kctl partitions reassign generate` scales offline: synthetic cluster snapshots (RF 3,
partition sizes lognormal, replicas placed rack-distinct at random, 3 to 10 racks), planned
toward decommission (1% of the brokers removed), scale out (5% more brokers, racks
round-robin) and balance disk (tolerance 10%). Each case runs in its own process (the peak RSS
is that process's VmHWM): the snapshot is built in memory in the kctl-cluster-snapshot document
shape, read with ClusterSnapshot.from_dict (what --from-snapshot does after parsing the JSON),
turned into the planner's layout and planned; each phase is timed. The moved bytes are set
against the lower bound of the goal (decommission: the bytes on the removed brokers; scale out:
the bytes of the smallest replicas that many moves could take, and ``even_bytes``, what must
move for the bytes per broker to be within the band too; balance disk: the bytes that must
leave the brokers above the band, or reach those below it).

    .venv/bin/python benchmarks/reassign_plan_scale.py                  # 10k, 100k (100 brokers)
    .venv/bin/python benchmarks/reassign_plan_scale.py --sizes 10k,100k,1m --json out.json
    .venv/bin/python benchmarks/reassign_plan_scale.py --cli 100k   # also the whole CLI on a file

``--cli N`` also writes the snapshot of N partitions as a JSON file and times the whole command
(`kctl partitions reassign generate --from-snapshot FILE --remove-broker ... -o json`), its peak
RSS from wait4.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SCALES = {  # partitions -> (brokers, racks)
    "10k": (10_000, 100, 5),
    "100k": (100_000, 100, 5),
    "1m": (1_000_000, 1000, 10),
}
SMALL = {
    "10k-3racks": (10_000, 100, 3),
    "100k-10racks": (100_000, 100, 10),
    "300k-1000b": (300_000, 1000, 10),
    # the growth series at 1,000 brokers (10 racks), with "1m"
    "10k-1000b": (10_000, 1000, 10),
    "100k-1000b": (100_000, 1000, 10),
}


def synthetic(partitions: int, brokers: int, racks: int, seed: int = 1) -> dict:
    """A kctl-cluster-snapshot document: 1 topic per 1,000 partitions."""
    rnd = random.Random(seed)
    rack_of = {b: f"rack-{b % racks}" for b in range(1, brokers + 1)}
    by_rack: dict[str, list[int]] = {}
    for b, r in rack_of.items():
        by_rack.setdefault(r, []).append(b)
    names = sorted(by_rack)
    topics = []
    per_broker: dict[int, list[dict]] = {b: [] for b in rack_of}
    for t in range((partitions + 999) // 1000):
        name = f"topic-{t:05d}"
        parts = []
        for p in range(min(1000, partitions - t * 1000)):
            reps = [rnd.choice(by_rack[r]) for r in rnd.sample(names, 3)]
            size = int(rnd.lognormvariate(17, 1.6))  # median ~24 MB, a long tail
            parts.append({"partition": p, "leader": reps[0], "replicas": reps, "isr": reps})
            for b in reps:
                per_broker[b].append(
                    {"topic": name, "partition": p, "size": size, "offset_lag": 0,
                     "is_future": False}
                )  # fmt: skip
        topics.append({"name": name, "internal": False, "partitions": parts})
    return {
        "format": "kctl-cluster-snapshot",
        "version": 1,
        "taken_at_ms": 0,
        "cluster_id": "synthetic",
        "controller_id": None,
        "brokers": [{"id": b, "host": "h", "port": 9092, "rack": r} for b, r in rack_of.items()],
        "topics": topics,
        "log_dirs": [
            {"broker": b, "path": "/data", "error": None, "replicas": reps}
            for b, reps in per_broker.items()
        ],
        "fenced_brokers": [],
    }


def goals(brokers: int, racks: int) -> dict[str, dict]:
    removed = max(1, brokers // 100)
    added = max(1, brokers // 20)
    return {
        "decommission": {"remove": list(range(1, removed + 1))},
        "add-broker": {
            "add": {brokers + 1 + k: f"rack-{(brokers + 1 + k) % racks}" for k in range(added)}
        },
        "balance-disk": {"balance": "disk"},
    }


def vm_hwm() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def worker(scale: str, goal_name: str) -> dict:
    from kctl.reassign.layout import Goal, from_snapshot
    from kctl.reassign.passes import plan
    from kctl.reassign.report import document, report
    from kctl.replicas.model import ClusterSnapshot

    partitions, brokers, racks = {**SCALES, **SMALL}[scale]
    t0 = time.perf_counter()
    doc = synthetic(partitions, brokers, racks)
    t1 = time.perf_counter()
    snap = ClusterSnapshot.from_dict(doc)
    del doc
    t2 = time.perf_counter()
    layout = from_snapshot(snap, dirs=False)  # as the CLI reads it without --balance-disks
    del snap
    t3 = time.perf_counter()
    goal = Goal(**goals(brokers, racks)[goal_name])
    result = plan(layout, goal)
    t4 = time.perf_counter()
    plan_doc = document(layout, result)
    rep = report(layout, goal, result)
    t5 = time.perf_counter()
    lb = rep["lower_bound"] or {}
    return {
        "scale": scale,
        "partitions": partitions,
        "brokers": brokers,
        "racks": racks,
        "goal": goal_name,
        "make_snapshot_s": round(t1 - t0, 2),
        "from_dict_s": round(t2 - t1, 2),
        "layout_s": round(t3 - t2, 2),
        "plan_s": round(t4 - t3, 2),
        "document_report_s": round(t5 - t4, 2),
        "peak_rss_mb": round(vm_hwm() / 1e6),
        "moved_replicas": rep["moved_replicas"],
        "moved_bytes": rep["moved_bytes"],
        "lower_bound_replicas": lb.get("replicas"),
        "lower_bound_bytes": lb.get("bytes"),
        "moved_over_bound": round(rep["moved_bytes"] / lb["bytes"], 3) if lb.get("bytes") else None,
        # count goals: the bytes that must move for the bytes per broker to be even as well
        "even_bytes": lb.get("even_bytes"),
        "moved_over_even": round(rep["moved_bytes"] / lb["even_bytes"], 3)
        if lb.get("even_bytes")
        else None,
        "within_tolerance": rep["within_tolerance"],
        "leader_changes": rep["leader_changes"],
        "plan_partitions": len(plan_doc["partitions"]),
        "spread_bytes": rep["spread"]["bytes"],
        "spread_replicas": rep["spread"]["replicas"],
    }


def run_case(scale: str, goal: str) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--worker", scale, goal],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout)


def run_cli(scale: str) -> dict:
    partitions, brokers, racks = {**SCALES, **SMALL}[scale]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "snap.json"
        path.write_text(json.dumps(synthetic(partitions, brokers, racks)))
        size = path.stat().st_size
        removed = ",".join(map(str, goals(brokers, racks)["decommission"]["remove"]))
        cmd = [str(ROOT / ".venv/bin/kctl"), "partitions", "reassign", "generate",
               "--from-snapshot", str(path), "--remove-broker", removed, "-o", "json"]  # fmt: skip
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        err = proc.stderr.read() if proc.stderr else ""
        if status != 0:
            raise SystemExit(f"kctl failed: {err}")
        return {
            "scale": scale,
            "snapshot_file_mb": round(size / 1e6),
            "cli_wall_s": round(wall, 2),
            "cli_cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "cli_peak_rss_mb": round(usage.ru_maxrss * 1024 / 1e6),
            "summary": err.strip().splitlines()[0],
        }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10k,100k", help="comma list of 10k, 100k, 1m")
    ap.add_argument("--goals", default="decommission,add-broker,balance-disk")
    ap.add_argument("--cli", default="", help="also time the whole CLI at these sizes")
    ap.add_argument("--json", type=Path, help="write the rows here too")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return
    load = os.getloadavg()
    print(
        f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} ({os.cpu_count()} cores)"
    )
    rows = []
    for scale in [s for s in args.sizes.split(",") if s]:
        for goal in args.goals.split(","):
            row = run_case(scale, goal)
            rows.append(row)
            print(json.dumps(row), flush=True)
    cli = [run_cli(s) for s in args.cli.split(",") if s]
    for row in cli:
        print(json.dumps(row), flush=True)
    load = os.getloadavg()
    print(f"load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.json:
        args.json.write_text(json.dumps({"cases": rows, "cli": cli}, indent=1) + "\n")


if __name__ == "__main__":
    main()
