"""Capture what kctl prints for a fixed corpus of invocations, to prove a structural change kept
behaviour byte-identical: run it before and after, then ``diff -r`` the two directories.

    python tools/behaviour_corpus.py OUT_DIR [--bootstrap HOST:PORT] [--python PY]

The corpus: every command's ``--help`` page (every command path of the Typer tree), dump-segment
and metadata image over the real files in ``tests/data`` under several option sets, and, with
``--bootstrap``, read-only commands on a topic and a group it creates once with fixed data
(explicit timestamps, so that both runs see the same records). ``partitions reassign`` is
covered offline by ``generate --from-snapshot`` on a synthetic snapshot (every goal, the report,
the errors) and the plan-file checks, and with ``--bootstrap`` by the dry runs of execute,
cancel, elect-leaders and move-dir, verify, list and status; their input files are written (the
same bytes every run) under ``.scratch/behaviour-corpus`` of the checkout holding this script;
offline invocations stop before a broker would be asked. Each invocation's stdout, stderr and
exit code go to one file named after it. ``--python`` runs another checkout's kctl (e.g. a
``git worktree`` of the commit before, with ``PYTHONPATH`` pointing at it). Run both from a
directory outside every checkout (``python -m kctl`` imports the working directory's kctl
first), with this one copy of the script, so that both runs name the same files.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
FILES = ROOT / ".scratch" / "behaviour-corpus"  # the inputs written here (same bytes each run)
TOPIC = "behaviour-corpus"
GROUP = "behaviour-corpus-group"


def command_paths(python: str, env: dict[str, str]) -> list[list[str]]:
    """Every command path of the Typer tree, as the checkout being measured defines it."""
    code = (
        "import json, typer.main\n"
        "from kctl import cli\n"
        "app = cli.register(None)\n"
        "out = []\n"
        "def walk(cmd, path):\n"
        "    out.append(path)\n"
        "    for name, sub in sorted(getattr(cmd, 'commands', {}).items()):\n"
        "        walk(sub, path + [name])\n"
        "walk(typer.main.get_command(app), [])\n"
        "print(json.dumps(out))\n"
    )
    import json

    done = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True, check=True)
    paths: list[list[str]] = json.loads(done.stdout)
    return paths


def invocations(bootstrap: str | None, paths: list[list[str]]) -> list[list[str]]:
    runs: list[list[str]] = [[*p, "--help"] for p in paths]
    metadata = DATA / "kafka-3.8-kraft-logs" / "__cluster_metadata-0"
    segment = metadata / "00000000000000000000.log"
    for opts in (
        [],
        ["--deep-iteration"],
        ["--print-data-log"],
        ["--cluster-metadata-decoder"],
        ["--deep-iteration", "-o", "jsonl"],
        ["--verify-index-only"],
    ):
        runs.append(["dump-segment", *opts, str(segment)])
    for f in sorted(p for p in metadata.iterdir() if p.suffix != ".log"):
        runs.append(["dump-segment", str(f)])
    for f in sorted((DATA / "consumer-offsets-records").rglob("*.log")):
        runs.append(["dump-segment", "--offsets-decoder", str(f)])
    runs.append(["dump-segment", str(DATA / "kafka-3.8-kraft-logs")])
    for fmt in ("plain", "json", "yaml"):
        runs.append(["metadata", "image", str(metadata), "-o", fmt])
    runs.append(["metadata", "image", str(metadata), "--diff", "0..50"])
    runs += reassign_offline()
    if bootstrap:
        b = ["-b", bootstrap]
        for fmt in ("plain", "json", "yaml", "csv", "table", "name"):
            runs.append([*b, "topics", "describe", TOPIC, "-o", fmt])
            runs.append([*b, "offsets", "get", TOPIC, "-o", fmt])
            runs.append([*b, "groups", "lag", GROUP, "-o", fmt])
        runs.append([*b, "configs", "describe", "--topic", TOPIC, "-o", "json"])
        runs.append([*b, "groups", "describe", GROUP, "-o", "json"])
        for fmt in ("jsonl", "plain", "json"):
            runs.append([*b, "consume", TOPIC, "-n", "30", "-o", fmt, "--partition", "0"])
        runs.append([*b, "topics", "describe", "no-such-topic-xyz"])
        runs.append([*b, "groups", "lag", GROUP, "--fail-above", "1"])
        runs += reassign_online(b)
    return runs


def write_file(name: str, text: str) -> str:
    """``text`` in :data:`FILES` (replaced whole, so a reader never sees half of it); its path."""
    FILES.mkdir(parents=True, exist_ok=True)
    path = FILES / name
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(path)
    return str(path)


def synthetic_snapshot(log_dirs: bool = True) -> dict:
    """A kctl-cluster-snapshot document: 6 brokers on 3 racks (broker 6 fenced), two log dirs
    each, 7 topics (one internal) placed unevenly, partitions of many sizes."""
    import random

    rnd = random.Random(39)
    brokers = [1, 2, 3, 4, 5, 6]
    rack = {b: f"rack-{'abc'[(b - 1) % 3]}" for b in brokers}
    topics, held = [], []
    for t, (name, count, rf) in enumerate(
        [("orders", 12, 3), ("payments", 6, 3), ("clicks", 24, 2), ("audit", 3, 1),
         ("events", 8, 3), ("tiny", 2, 2), ("__consumer_offsets", 4, 3)]
    ):  # fmt: skip
        parts = []
        for p in range(count):
            pool = [1, 2, 3] if t % 2 == 0 else brokers[:5]
            reps = rnd.sample(pool, rf)
            size = 0 if name == "tiny" else int(rnd.lognormvariate(15, 1.5))
            parts.append({"partition": p, "leader": reps[0], "replicas": reps, "isr": reps})
            held += [(b, name, p, size) for b in reps]
        topics.append({"name": name, "internal": name.startswith("__"), "partitions": parts})
    dirs = []
    for b in brokers[:5]:
        for k, path in enumerate(("/data/a", "/data/b")):
            replicas = [
                {"topic": n, "partition": p, "size": size, "offset_lag": 0, "is_future": False}
                for broker, n, p, size in held
                if broker == b and (p % 3 != 0) == (k == 0)
            ]
            dirs.append({"broker": b, "path": path, "error": None, "replicas": replicas})
    return {
        "format": "kctl-cluster-snapshot",
        "version": 1,
        "taken_at_ms": 1_700_000_000_000,
        "cluster_id": "behaviour-corpus",
        "controller_id": 1,
        "brokers": [{"id": b, "host": "h", "port": 9092, "rack": rack[b]} for b in brokers[:5]],
        "topics": topics,
        "log_dirs": dirs if log_dirs else [],
        "fenced_brokers": [6],
    }


def reassign_offline() -> list[list[str]]:
    """``partitions reassign generate --from-snapshot``: each goal, the report and the current
    assignment (to /dev/stdout), the errors; the plan-file checks that run before a broker is
    asked; elect-leaders' option errors."""
    import json

    snap = write_file("snapshot.json", json.dumps(synthetic_snapshot(), indent=1))
    bare = write_file("snapshot-no-log-dirs.json", json.dumps(synthetic_snapshot(False)))
    plan = write_file(
        "plan.json",
        json.dumps({"version": 1, "partitions": [
            {"topic": TOPIC, "partition": 0, "replicas": [2], "log_dirs": ["any"]},
            {"topic": TOPIC, "partition": 1, "replicas": [3, 1]},
        ]}),
    )  # fmt: skip
    not_json = write_file("not-json.json", "{partitions")
    empty = write_file("empty-plan.json", '{"version": 1, "partitions": []}')
    twice = write_file(
        "twice-plan.json",
        '{"partitions": [{"topic": "a", "partition": 0, "replicas": [1, 1]}]}',
    )
    bad_dirs = write_file(
        "bad-dirs-plan.json",
        '{"partitions": [{"topic": "a", "partition": 0, "replicas": [1], "log_dirs": ["x"]}]}',
    )
    gen = ["partitions", "reassign", "generate", "--from-snapshot", snap]
    runs: list[list[str]] = []
    for fmt in ("json", "table", "plain", "yaml", "csv"):
        runs.append([*gen, "-o", fmt])
    for goal in (
        ["--remove-broker", "2"],
        ["--remove-broker", "2,3", "--max-moves", "5"],
        ["--add-broker", "7:rack-a,8:rack-b"],
        ["--add-broker", "7"],
        ["--balance", "replicas", "--tolerance", "5"],
        ["--balance", "leaders", "--tolerance", "0"],
        ["--balance", "leaders", "--keep-leaders"],
        ["--balance", "disk", "--tolerance", "3"],
        ["--balance", "disk", "--max-bytes", "200MB"],
        ["--balance", "replicas", "--balance-disks"],
        ["--balance-disks"],
        ["--replication-factor", "2", "-t", "orders", "-t", "events"],
        ["--replication-factor", "3", "--include", "^(clicks|tiny)$"],
        ["--brokers", "1,2,4"],
        ["--balance", "replicas", "--brokers", "1,2,3,4", "--max-bytes", "1GiB"],
        ["--report", "/dev/stdout", "--remove-broker", "1"],
        ["--current-file", "/dev/stdout", "-t", "audit"],
        ["-t", "tiny", "--balance", "leaders"],
    ):
        for fmt in ("json", "table"):
            runs.append([*gen, *goal, "-o", fmt])
    for bad in (
        ["--balance", "bytes"],
        ["--add-broker", "x"],
        ["--add-broker", "4,4"],
        ["--remove-broker", "99"],
        ["--remove-broker", "1", "--add-broker", "1"],
        ["--remove-broker", ""],
        ["--include", "["],
        ["-t", "no-such-topic"],
        ["--max-bytes", "0"],
        ["--max-bytes", "lots"],
        ["--replication-factor", "9"],
        ["--brokers", "1,x"],
        ["--brokers", "1,99"],
    ):
        runs.append([*gen, *bad])
    for goal in (["--balance", "disk"], ["--balance-disks"]):
        runs.append(["partitions", "reassign", "generate", "--from-snapshot", bare, *goal])
    runs.append(["partitions", "reassign", "generate", "--from-snapshot", str(FILES / "none")])
    for f in (not_json, empty, twice, bad_dirs, str(FILES / "none.json")):
        runs.append(["partitions", "reassign", "execute", "--file", f])
        runs.append(["partitions", "reassign", "verify", "--file", f])
    for opts in (
        ["--throttle", "0"],
        ["--max-bytes-in-flight", "lots"],
        ["--dir-throttle", "1x"],
        ["--stall-timeout", "soon"],
        ["--interval", "often"],
    ):
        runs.append(["partitions", "reassign", "execute", "--file", plan, *opts])
    runs.append(["partitions", "reassign", "cancel"])
    runs.append(["partitions", "reassign", "cancel", "--all", "--file", plan])
    runs.append(["partitions", "elect-leaders", "--all-topics"])
    runs.append(["partitions", "elect-leaders", "--election-type", "bogus", "--all-topics"])
    runs.append(["partitions", "elect-leaders", "--preferred", "--unclean", "--all-topics"])
    runs.append(["partitions", "elect-leaders", "--preferred"])
    runs.append(["partitions", "elect-leaders", "--preferred", "--from-file", not_json])
    runs.append(["partitions", "elect-leaders", "--preferred", "--from-file", empty])
    runs.append(["partitions", "move-dir", "t", "--broker", "1", "--to-dir", "/d"])
    return runs


def reassign_online(b: list[str]) -> list[list[str]]:
    """The reassign commands that read the cluster and change nothing: list, status, verify
    (not applied: exit 3), the dry runs of generate, execute (in waves too) and cancel, and of
    elect-leaders and move-dir, on the corpus topic (3 partitions on broker 1... as created)."""
    plan = str(FILES / "plan.json")
    r = [*b, "partitions", "reassign"]
    runs: list[list[str]] = []
    for fmt in ("json", "table"):
        runs.append([*r, "list", "-o", fmt])
        runs.append([*r, "status", "-o", fmt])
        runs.append([*r, "generate", "-t", TOPIC, "--brokers", "2,3", "-o", fmt])
        runs.append([*r, "generate", "-t", TOPIC, "--balance", "replicas", "-o", fmt])
        runs.append([*r, "execute", "--file", plan, "-o", fmt])
        runs.append([*r, "execute", "--file", plan, "--max-concurrent", "1", "-o", fmt])
        runs.append([*r, "verify", "--file", plan, "-o", fmt])
        runs.append([*r, "cancel", "--all", "-o", fmt])
        runs.append([*r, "cancel", "--file", plan, "-o", fmt])
        runs.append([*b, "partitions", "elect-leaders", "--preferred", "--all-topics", "-o", fmt])
    runs.append([*r, "generate", "-t", TOPIC, "--brokers", "9"])
    runs.append([*r, "generate", "-t", "no-such-topic-xyz", "--brokers", "1"])
    runs.append([*r, "execute", "--file", plan, "--dir-throttle", "5MB"])
    runs.append([*r, "execute", "--file", plan, "--max-bytes-in-flight", "1GB"])
    runs.append([*b, "partitions", "elect-leaders", "--unclean", "--topic", TOPIC])
    runs.append([*b, "partitions", "move-dir", f"{TOPIC}:0", "--broker", "1", "--to-dir", "/x"])
    return runs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--bootstrap")
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    env = dict(os.environ, KCTL_HELP_CACHE="0", COLUMNS="100", NO_COLOR="1", TERM="dumb")
    env.pop("KCTL_PROFILE", None)
    if args.bootstrap:
        seed_group(args.bootstrap)
    args.out.mkdir(parents=True, exist_ok=True)
    for argv in invocations(args.bootstrap, command_paths(args.python, env)):
        done = subprocess.run(
            [args.python, "-m", "kctl", *argv],
            env=env,
            capture_output=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        name = "_".join(a.replace("/", "~") for a in argv if not a.startswith(str(ROOT)))
        key = hashlib.sha1(" ".join(argv).encode()).hexdigest()[:8]
        text = (
            b"$ kctl " + " ".join(argv).replace(str(ROOT), "ROOT").encode() + b"\n"
            b"--- exit " + str(done.returncode).encode() + b"\n--- stdout\n" + done.stdout
            + b"\n--- stderr\n" + done.stderr
        )  # fmt: skip
        (args.out / f"{name[:80]}-{key}.txt").write_bytes(text)


def seed_group(bootstrap: str) -> None:
    """The topic (see :func:`seed`) and a group that has committed part of it."""
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    if TOPIC in admin.list_topics(timeout=10).topics:
        return
    from confluent_kafka import Producer

    admin.create_topics([NewTopic(TOPIC, 3, 1)])[TOPIC].result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for i in range(30):
        producer.produce(
            TOPIC,
            key=f"k{i % 5}".encode(),
            value=f'{{"n": {i}}}'.encode(),
            partition=i % 3,
            timestamp=1_700_000_000_000 + i * 1000,
            headers=[("h", b"v")] if i % 4 == 0 else None,
        )
    producer.flush(30)
    tps = [TopicPartition(TOPIC, p, 3 + p) for p in range(3)]
    admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(GROUP, tps)])[GROUP].result(30)


if __name__ == "__main__":
    main()
