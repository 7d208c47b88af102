"""Topics at scale (issue 31): `kctl topics list`, `topics describe -o json|plain|table` and
`topics describe --under-replicated` beside Kafka's TopicCommand (`kafka-topics.sh --list`,
`--describe`, `--describe --under-replicated-partitions`, run from the jars kctl caches), whole
processes, interleaved, on a cluster that already holds the topics.

    .venv/bin/python benchmarks/scale_topics.py [--bootstrap 127.0.0.1:19092] [--runs 3]
        [--prefix scale-] [--small 2] [--requests] [--kctl 'PYTHON -m kctl']

The cluster: topics PREFIX00..PREFIX19 of 1,000 partitions each (20,000; RF 1), e.g.
`KCTL_STATE_DIR=/tmp/kctl-scale kctl local up --engine kafka --brokers 3 --port 19092` and
`kctl topics create scale-00 --partitions 1000 --replication-factor 1` for each. Internal
topics are left out on both sides (`--exclude-internal`).

Each round runs every command once, kctl and Kafka's tool in turn (the first round warms up and
is not counted); per command it prints the median wall seconds and peak memory (the process's
maximum resident set, from wait4) of both tools and TopicCommand / kctl. Every run's output is
checked: both tools found the same number of partitions (topics for `list`).

Then kctl alone at two sizes: the first ``--small`` topics (2,000 partitions) and all of them,
for `describe -o json|plain|table`: time and memory at each, the slope per 1,000 partitions
and the ratio of the two sizes' costs (10x the partitions: about 10x the cost above the fixed
start-up when growth is linear), and table / plain.

``--requests``: the requests each kctl command sends, by API, counted from the clients
themselves (librdkafka's protocol log, "Sent XRequest", and kafka-python's connection log,
"Request N: XRequest"), in a process of its own per command.

``--kctl``: the command that runs kctl (default: this Python, ``-m kctl``), e.g. an older
checkout's to time it before a change: ``--kctl 'env PYTHONPATH=/tmp/old .venv/bin/python -m
kctl'``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from bytecode import compile_kctl

ROOT = Path(__file__).resolve().parent.parent
LIBS = Path.home() / ".cache/kctl/kafka/4.3.1/libs"
TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"


CPU: dict[str, list[float]] = {}  # per command line: user + system seconds of each run


def run(cmd: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak resident MB (wait4's maximum RSS of that process) and stdout; the
    run's CPU seconds (user + system, all its threads) go to :data:`CPU`."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    out_path = Path(f"/tmp/scale_topics.{os.getpid()}.out")
    with open(out_path, "w") as out, open(os.devnull, "w") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
    CPU.setdefault(shlex.join(cmd), []).append(usage.ru_utime + usage.ru_stime)
    text = out_path.read_text()
    out_path.unlink()
    if proc.returncode != 0:
        raise SystemExit(f"{shlex.join(cmd)} exited {proc.returncode}")
    return wall, usage.ru_maxrss / 1024, text


# Partitions (or topics, for list) in each tool's output.
def kctl_list(out: str) -> int:
    return len(json.loads(out))


def kafka_list(out: str) -> int:
    return len(out.split())


def kctl_json(out: str) -> int:
    return sum(len(t["partitions"]) for t in json.loads(out))


def kctl_rows(out: str) -> int:
    return max(0, len(out.splitlines()) - 1)  # less the header


def kafka_partitions(out: str) -> int:
    return len(re.findall(r"\tPartition: ", out))


def medians(
    pairs: dict[str, tuple[list[str], Callable[[str], int], list[str], Callable[[str], int]]],
    runs: int,
) -> dict[str, dict[str, float]]:
    """Per command: medians of kctl's and Kafka's wall seconds and peak MB, interleaved."""
    got: dict[str, dict[str, list[float]]] = {
        name: {"kctl_s": [], "kctl_mb": [], "kafka_s": [], "kafka_mb": []} for name in pairs
    }
    found: dict[str, int] = {}
    for round_ in range(runs + 1):
        for name, (kcmd, kcount, jcmd, jcount) in pairs.items():
            for tool, cmd, count in (("kctl", kcmd, kcount), ("kafka", jcmd, jcount)):
                wall, mb, out = run(cmd)
                n = count(out)
                found.setdefault(name, n)
                assert n == found[name], (name, tool, n, found[name])
                if round_:
                    got[name][f"{tool}_s"].append(wall)
                    got[name][f"{tool}_mb"].append(mb)
    return {
        name: {**{k: statistics.median(v) for k, v in figures.items()}, "found": found[name]}
        for name, figures in got.items()
    }


# Runs kctl in this process with both clients' request logs counted: librdkafka's protocol log
# ("Sent MetadataRequest", with -X debug=protocol) through the logger kctl hands it, and
# kafka-python's connection log ("Request 7: DescribeConfigsRequest(...)").
REQUEST_COUNTER = r"""
import logging, re, sys
from collections import Counter
sent = Counter()
class Sent(logging.Handler):
    def emit(self, record):
        m = re.search(r"(?:Sent |Request \d+: )(\w+?)Request\b", record.getMessage())
        if m:
            sent[m.group(1)] += 1
kafka = logging.getLogger("kafka")
kafka.addHandler(Sent())
kafka.setLevel(logging.DEBUG)
from kctl.broker import connect
def counting(debug):
    logger = logging.getLogger("kctl.librdkafka.counted")
    logger.propagate = False
    logger.handlers[:] = [Sent()]
    logger.setLevel(logging.DEBUG)
    return logger
connect._quiet_logger = counting
from kctl.broker import client
admins = []
plain_init = client.Admin.__init__
def init(self, *args, **kw):
    plain_init(self, *args, **kw)
    admins.append(self)
client.Admin.__init__ = init
from kctl.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
for admin in admins:  # librdkafka hands its log over when polled
    for _ in range(50):
        if not admin.client.poll(0.1):
            break
sys.stderr.write(repr(dict(sent)) + "\n")
"""


def requests(bootstrap: str, args: list[str]) -> dict[str, int]:
    """The requests ``kctl ARGS`` sends, by API (librdkafka's and kafka-python's own logs)."""
    proc = subprocess.run(
        [sys.executable, "-c", REQUEST_COUNTER, "-b", bootstrap, "-X", "debug=protocol", *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    counted: dict[str, int] = eval(proc.stderr.strip().splitlines()[-1])  # our own repr
    return dict(sorted(Counter(counted).items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", default="127.0.0.1:19092")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--prefix", default="scale-")
    parser.add_argument("--small", type=int, default=2, help="topics of the small size")
    parser.add_argument("--requests", action="store_true")
    parser.add_argument("--kctl", default=f"{sys.executable} -m kctl")
    args = parser.parse_args()
    compile_kctl()
    b = args.bootstrap
    kctl = [*shlex.split(args.kctl), "-b", b]
    kafka = ["java", "-cp", f"{LIBS}/*", TOPIC_COMMAND, "--bootstrap-server", b]
    listed = json.loads(run([*kctl, "topics", "list", "-o", "json"])[2])
    topics = sorted(t["topic"] for t in listed if t["topic"].startswith(args.prefix))
    total = sum(t["partitions"] for t in listed if t["topic"] in topics)
    assert len(topics) == len(listed), "benchmark a cluster holding only the PREFIX topics"
    print(f"{len(topics)} topics, {total} partitions at {b}; load average {os.getloadavg()}")

    describe = [*kctl, "topics", "describe"]
    jdescribe = [*kafka, "--describe", "--exclude-internal"]
    pairs = {
        "topics list": (
            [*kctl, "topics", "list", "-o", "json"], kctl_list,
            [*kafka, "--list", "--exclude-internal"], kafka_list,
        ),
        "topics describe -o json": ([*describe, "-o", "json"], kctl_json, jdescribe,
                                    kafka_partitions),
        "topics describe -o plain": ([*describe, "-o", "plain"], kctl_rows, jdescribe,
                                     kafka_partitions),
        "topics describe -o table": ([*describe, "-o", "table"], kctl_rows, jdescribe,
                                     kafka_partitions),
        "topics describe --under-replicated": (
            [*describe, "--under-replicated", "-o", "plain"], kctl_rows,
            [*jdescribe, "--under-replicated-partitions"], kafka_partitions,
        ),
    }  # fmt: skip
    result = medians(pairs, args.runs)
    print(f"\nmedian of {args.runs} interleaved runs (wall s, peak MB, CPU s = user + system)")
    print(
        f"{'command':<36} {'kctl':>6} {'MB':>4} {'CPU':>5} {'Kafka':>6} {'MB':>4} {'CPU':>5} "
        f"{'Kafka/kctl':>10} found"
    )
    for name, r in result.items():
        ratio = r["kafka_s"] / r["kctl_s"]
        kcpu, jcpu = (statistics.median(CPU[shlex.join(pairs[name][i])][1:]) for i in (0, 2))
        print(
            f"{name:<36} {r['kctl_s']:6.2f} {r['kctl_mb']:4.0f} {kcpu:5.2f} {r['kafka_s']:6.2f} "
            f"{r['kafka_mb']:4.0f} {jcpu:5.2f} {ratio:9.1f}x {r['found']:.0f}"
        )
    plain, table = result["topics describe -o plain"], result["topics describe -o table"]
    print(f"table / plain: {table['kctl_s'] / plain['kctl_s']:.2f}")

    small = topics[: args.small]
    small_args = [a for t in small for a in ("--topic", t)]
    small_total = sum(t["partitions"] for t in listed if t["topic"] in small)
    sizes: dict[str, dict[int, list[tuple[float, float]]]] = {}
    for round_ in range(args.runs + 1):
        for fmt in ("json", "plain", "table"):
            for n, extra in ((small_total, small_args), (total, [])):
                wall, mb, _ = run([*describe, *extra, "-o", fmt])
                if round_:
                    sizes.setdefault(fmt, {}).setdefault(n, []).append((wall, mb))
    print(f"\nkctl topics describe at {small_total} and {total} partitions (medians)")
    for fmt, by_size in sizes.items():
        (n1, a), (n2, c) = sorted(by_size.items())
        s1, m1 = (statistics.median(x[i] for x in a) for i in (0, 1))
        s2, m2 = (statistics.median(x[i] for x in c) for i in (0, 1))
        per_k = 1000 / (n2 - n1)
        print(
            f"-o {fmt:<6} {s1:6.2f} s {m1:5.0f} MB -> {s2:6.2f} s {m2:5.0f} MB: "
            f"{(s2 - s1) * per_k * 1000:5.0f} ms and {(m2 - m1) * per_k:5.2f} MB per 1,000 "
            f"partitions; time x{s2 / s1:.1f}, memory x{m2 / m1:.1f} for x{n2 / n1:.0f} partitions"
        )

    if args.requests:
        print("\nrequests kctl sent (librdkafka's and kafka-python's logs)")
        for name, argv in (
            ("topics list", ["topics", "list"]),
            ("topics describe", ["topics", "describe", "-o", "json"]),
            ("topics describe --under-replicated", ["topics", "describe", "--under-replicated"]),
            (f"topics describe ({small_total} partitions)", ["topics", "describe", *small_args]),
        ):
            print(f"{name:<40} {requests(b, argv)}")


if __name__ == "__main__":
    main()
