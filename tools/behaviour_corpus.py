"""Capture what kctl prints for a fixed corpus of invocations, to prove a structural change kept
behaviour byte-identical: run it before and after, then ``diff -r`` the two directories.

    python tools/behaviour_corpus.py OUT_DIR [--bootstrap HOST:PORT] [--python PY]

The corpus: every command's ``--help`` page (every command path of the Typer tree), dump-segment
and metadata image over the real files in ``tests/data`` under several option sets, and, with
``--bootstrap``, read-only commands on a topic and a group it creates once with fixed data
(explicit timestamps, so that both runs see the same records). Each invocation's stdout, stderr
and exit code go to one file named after it. ``--python`` runs another checkout's kctl (e.g. a
``git worktree`` of the commit before, with ``PYTHONPATH`` pointing at it).
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
