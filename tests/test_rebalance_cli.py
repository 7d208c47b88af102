"""reassign generate on the session cluster: a plan from `kctl cluster snapshot -o json` equals
the plan made live, replicas and sizes come from the cluster (DescribeLogDirs), and the plans
respect the goals."""

from __future__ import annotations

import json
from collections import Counter

from kctl.reassign import plan_file as P


def _brokers(admin) -> list[int]:
    return sorted(admin.list_topics(timeout=10).brokers)


def test_generate_from_a_snapshot_of_the_cluster_equals_the_live_plan(
    kctl, admin, new_topic, tmp_path
):
    brokers = _brokers(admin)
    assert len(brokers) >= 2, "the session cluster has three brokers (local up)"
    first = brokers[0]
    name = new_topic(assignment=[[first]] * 6)
    lines = "".join(f"k{i}\t{'v' * 200}\n" for i in range(600))
    r = kctl("produce", name, "--key-separator", "\t", input=lines)
    assert r.code == 0, r
    snap = tmp_path / "snap.json"
    r = kctl("cluster", "snapshot", "-t", name, "-o", "json")
    assert r.code == 0, r
    snap.write_text(r.stdout)

    args = ("partitions", "reassign", "generate", "--topic", name, "--balance", "replicas")
    offline = kctl(*args, "--from-snapshot", str(snap), "-o", "json",
                   "--report", str(tmp_path / "report.json"))  # fmt: skip
    assert offline.code == 0, offline
    live = kctl(*args, "-o", "json")
    assert live.code == 0, live
    assert json.loads(offline.stdout) == json.loads(live.stdout)  # same input, same plan

    doc = json.loads(offline.stdout)
    plan = P.parse_plan(doc)
    counts = Counter(reps[0] for reps in plan.values())
    final = Counter({first: 6 - sum(counts.values())}) + counts
    assert max(final.values()) - min(final[b] for b in brokers) <= 1, final
    report = json.loads((tmp_path / "report.json").read_text())
    row = next(r for r in report["brokers"] if r["broker"] == first)
    assert row["replicas_before"] == 6 and row["bytes_before"] > 600 * 200
    assert report["moved_bytes"] > 0 and "replica(s) move" in offline.stderr

    r = kctl("partitions", "reassign", "generate", "--topic", name, "--remove-broker",
             str(first), "--from-snapshot", str(snap), "-o", "json")  # fmt: skip
    assert r.code == 0, r
    moved = P.parse_plan(json.loads(r.stdout))
    assert len(moved) == 6 and all(first not in reps for reps in moved.values())
    assert "lower bound for this goal: 6 replica(s)" in r.stderr


def test_balance_disks_plan_runs_and_leaves_nothing_to_do(
    kctl, admin, new_topic, tmp_path, requires_api
):
    """A topic whose data sits in one of its broker's log dirs: the --balance-disks plan names
    the other dir for some replicas, 'reassign execute --wait' moves them, and a new plan is
    empty."""
    requires_api("DescribeLogDirs")
    requires_api("AlterReplicaLogDirs")
    first = _brokers(admin)[0]
    r = kctl("cluster", "log-dirs", "--broker", str(first), "-o", "json")
    assert r.code == 0, r
    dirs = [d["log_dir"] for d in json.loads(r.stdout) if d["error"] is None]
    assert len(dirs) >= 2, "the session cluster's brokers have two log dirs each (local up)"
    name = new_topic(assignment=[[first]] * 8)
    r = kctl("cluster", "log-dirs", "--broker", str(first), "--topic", name, "-o", "json")
    where = {p["partition"]: d["log_dir"] for d in json.loads(r.stdout) for p in d["replicas"]}
    full = sorted(where.values())[0]
    for p in sorted(p for p, d in where.items() if d == full):
        lines = "".join(f"{'v' * 500}\n" for _ in range(200 * (p + 1)))
        r = kctl("produce", name, "--partition", str(p), input=lines)
        assert r.code == 0, r

    generate = ("partitions", "reassign", "generate", "--topic", name, "--balance-disks")
    r = kctl(*generate, "-o", "json")
    assert r.code == 0, r
    doc = json.loads(r.stdout)
    assert doc["partitions"], r
    for e in doc["partitions"]:
        assert e["replicas"] == [first] and e["log_dirs"][0] in dirs and e["log_dirs"][0] != full
    plan = tmp_path / "dirs.json"
    plan.write_text(r.stdout)
    r = kctl("partitions", "reassign", "execute", "--file", str(plan), "--execute", "--wait",
             timeout=120)  # fmt: skip
    assert r.code == 0, r
    r = kctl("cluster", "log-dirs", "--broker", str(first), "--topic", name, "-o", "json")
    now = {p["partition"]: d["log_dir"] for d in json.loads(r.stdout) for p in d["replicas"]
           if not p["future"]}  # fmt: skip
    for e in doc["partitions"]:
        assert now[e["partition"]] == e["log_dirs"][0]
    r = kctl(*generate, "-o", "json")
    assert r.code == 0 and json.loads(r.stdout)["partitions"] == [], r
