"""kctl at scale beside Kafka's own tools (issue 31): `groups list`, `groups lag --all-groups`,
`offsets get`, `cluster snapshot` and `replicas validate` on a cluster of 20,000 partitions and
2,000 groups, whole processes, interleaved, medians, ratios, peak memory.

    .venv/bin/python benchmarks/scale_groups.py [--bootstrap 127.0.0.1:19092] [--runs 3]
        [--only lag,offsets,...] [--small] [--kctl-root DIR] [--requests]

The cluster must hold what the issue-31 scale cluster holds (it is not created here): topics
``scale-00..scale-19`` of 1,000 partitions each (3 records a partition) and groups
``scale-grp-0000..1999``, group i with committed offset 1 on 10 partitions of topic
``scale-(i % 20)`` (partitions (i // 20) * 10 .. + 9): 20,000 committed partitions.

Pairs (kctl beside the Kafka tool doing the same job, run from the jars kctl caches):

- ``list``: ``groups list -o json`` / ConsumerGroupCommand ``--list --state`` (kctl shows
  states; ``--list`` alone is timed too);
- ``lag``: ``groups lag --all-groups -o json`` / ConsumerGroupCommand ``--describe
  --all-groups``;
- ``offsets``: ``offsets get --topic-partitions 'scale-.*' -o json`` / GetOffsetShell
  ``--topic-partitions 'scale-.*'``;
- ``snapshot``, ``validate``: ``cluster snapshot -o json``, ``replicas validate -o json`` /
  TopicCommand ``--describe`` (the closest Kafka tool: placement and ISR of every partition;
  Kafka has no snapshot or validation).

Each pair runs A B A B ... after one uncounted warm-up round; every run's output is checked
(both tools found the same groups, the same (group, topic, partition) rows and total lag, the
same latest offsets, the same leaders/replicas/ISR), so a fast wrong answer cannot pass.
``--small`` runs the same commands on a tenth of the cluster (topics scale-00 and scale-01 =
2,000 partitions; groups scale-grp-0000..0199 = 2,000 committed partitions) and prints the
slope between the two sizes (the time and memory per partition above a fixed cost).
``--requests`` counts each kctl command's requests instead (kafka-python's at its connection
manager, librdkafka's from its ``debug=protocol`` log). ``--kctl-root DIR`` times another copy
of kctl (e.g. ``git archive HEAD~3 kctl | tar -x -C DIR``): the figures before a change. Peak
memory is each process's own maximum resident set (``wait4``'s rusage). The machine is shared:
quote medians and ratios, and its load average, printed first.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bytecode import compile_kctl

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TOPICS = [f"scale-{i:02d}" for i in range(20)]
GROUPS = [f"scale-grp-{i:04d}" for i in range(2000)]


# Run kctl with every request counted at the two clients: kafka-python's at its connection
# manager, librdkafka's from its own protocol log (-X debug=protocol, served at exit).
COUNTING = """
import atexit, collections, logging, re, sys
from kafka.net.manager import KafkaConnectionManager
import kctl.broker.client as C
sent = collections.Counter()
plain = KafkaConnectionManager.send
def send(self, request, node_id=None, **kw):
    sent[("kafka-python", type(request).__name__.removesuffix("Request"))] += 1
    return plain(self, request, node_id=node_id, **kw)
KafkaConnectionManager.send = send
admins = []
plain_init = C.Admin.__init__
def init(self, *a, **kw):
    plain_init(self, *a, **kw)
    admins.append(self)
C.Admin.__init__ = init
class Sent(logging.Handler):
    def emit(self, record):
        m = re.search(r"Sent (\\w+)Request ", record.getMessage())
        if m:
            sent[("librdkafka", m.group(1))] += 1
def report():
    log = logging.getLogger("kctl.librdkafka")
    log.addHandler(Sent())
    log.setLevel(logging.DEBUG)
    for a in admins:
        for _ in range(30):
            if not a.client.poll(0.05):
                break
    print("REQUESTS " + " ".join(f"{lib}:{api}={n}" for (lib, api), n in sorted(sent.items())),
          file=sys.stderr)
atexit.register(report)
from kctl.entry import main
sys.argv = ["kctl", *sys.argv[1:]]
main()
"""


def requests(kctl_args: list[str], bootstrap: str, root: Path, env: dict[str, str]) -> str:
    """The requests one kctl command sent, per client and API (ApiVersions left out)."""
    cmd = [sys.executable, "-c", COUNTING, "-b", bootstrap, "-X", "debug=protocol", *kctl_args]
    out = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    line = next((x for x in out.stderr.splitlines() if x.startswith("REQUESTS ")), "REQUESTS ?")
    return " ".join(w for w in line.split()[1:] if "ApiVersion" not in w)


def run(cmd: list[str], cwd: Path | None, env: dict[str, str]) -> tuple[float, float, float, str]:
    """(wall seconds, CPU seconds (user + system), peak MiB, stdout) of one whole process."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL, cwd=cwd, env=env)
        _pid, _status, usage = os.wait4(proc.pid, 0)
        took = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(_status)
        out.seek(0)
        cpu = usage.ru_utime + usage.ru_stime
        return took, cpu, usage.ru_maxrss / 1024, out.read().decode()


# -- what each tool found, in one comparable shape -------------------------------------------


def kctl_groups(out: str) -> set[tuple[str, str]]:
    return {(g["group"], g["state"]) for g in json.loads(out)}


def kafka_groups(out: str) -> set[tuple[str, str]]:
    rows = [line.split() for line in out.splitlines()[1:] if line.strip()]
    return {(r[0], r[1]) for r in rows}


def kafka_group_names(out: str) -> set[tuple[str, str]]:
    return {(line.strip(), "") for line in out.splitlines() if line.strip()}


def kctl_lag(out: str) -> tuple[set[tuple[str, str, int]], int]:
    rows = json.loads(out)["partitions"]
    mine = [r for r in rows if r["group"].startswith("scale-grp-")]
    return {(r["group"], r["topic"], r["partition"]) for r in mine}, sum(
        r["lag"] or 0 for r in mine
    )


def kafka_lag(out: str) -> tuple[set[tuple[str, str, int]], int]:
    found, lag = set(), 0
    for line in out.splitlines():
        c = line.split()
        if len(c) >= 6 and c[0].startswith("scale-grp-") and c[2].isdigit():
            found.add((c[0], c[1], int(c[2])))
            lag += int(c[5]) if c[5].lstrip("-").isdigit() else 0
    return found, lag


def kctl_offsets(out: str) -> set[tuple[str, int, int]]:
    return {(r["topic"], r["partition"], r["latest"]) for r in json.loads(out)["partitions"]}


def kafka_offsets(out: str) -> set[tuple[str, int, int]]:
    rows = [line.rsplit(":", 2) for line in out.splitlines() if line.count(":") >= 2]
    return {(t, int(p), int(o)) for t, p, o in rows}


def kctl_snapshot(out: str) -> set[tuple[str, int, int, tuple[int, ...], tuple[int, ...]]]:
    return {
        (t["name"], p["partition"], p["leader"], tuple(p["replicas"]), tuple(sorted(p["isr"])))
        for t in json.loads(out)["topics"]
        for p in t["partitions"]
    }


def kafka_describe(out: str) -> set[tuple[str, int, int, tuple[int, ...], tuple[int, ...]]]:
    found = set()
    pat = re.compile(
        r"Topic: (\S+)\s+Partition: (\d+)\s+Leader: (-?\d+|none)\s+"
        r"Replicas: ([\d,]*)\s+Isr: ([\d,]*)"
    )
    for m in pat.finditer(out):
        leader = -1 if m[3] == "none" else int(m[3])
        ids = lambda s: tuple(int(x) for x in s.split(",") if x)  # noqa: E731
        found.add((m[1], int(m[2]), leader, ids(m[4]), tuple(sorted(ids(m[5])))))
    return found


def kctl_validated(out: str) -> int:
    return int(json.loads(out)["partitions_checked"])


def kafka_partitions(out: str) -> int:
    return len(kafka_describe(out))


def only_scale(found: Any) -> Any:
    """Rows of the scale topics only (the cluster has __consumer_offsets too)."""
    if isinstance(found, set):
        return {r for r in found if str(r[0]).startswith("scale-")}
    return found


# -- the pairs ------------------------------------------------------------------------------


def pairs(
    bootstrap: str, java: list[str], small: bool
) -> dict[str, tuple[list[str], list[list[str]], Callable[[str], Any], list[Callable[[str], Any]]]]:
    """name -> (kctl args, Kafka commands, kctl's answer, each Kafka command's answer)."""
    cgc = [*java, "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
           "--bootstrap-server", bootstrap]  # fmt: skip
    topic_cmd = [*java, "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bootstrap]
    gos = [*java, "org.apache.kafka.tools.GetOffsetShell", "--bootstrap-server", bootstrap]
    groups = GROUPS[:200] if small else None
    topics = TOPICS[:2] if small else None
    regex = "scale-0[01]" if small else "scale-.*"
    lag_kctl = ["groups", "lag", *(groups or ["--all-groups"]), "-o", "json"]
    named = [a for g in groups for a in ("--group", g)] if groups else ["--all-groups"]
    lag_kafka = [*cgc, "--describe", *named]
    topic_opts = [a for t in topics for a in ("--topic", t)] if topics else []
    described = [*topic_cmd, "--describe", *(["--topic", regex] if topics else [])]
    out = {
        "lag": (lag_kctl, [lag_kafka], kctl_lag, [kafka_lag]),
        "offsets": (
            ["offsets", "get", "--topic-partitions", regex, "-o", "json"],
            [[*gos, "--topic-partitions", regex]],
            kctl_offsets,
            [kafka_offsets],
        ),
        "snapshot": (
            ["cluster", "snapshot", *topic_opts, "-o", "json"],
            [described],
            lambda o: only_scale(kctl_snapshot(o)),
            [lambda o: only_scale(kafka_describe(o))],
        ),
        "validate": (
            ["replicas", "validate", *topic_opts, "-o", "json"],
            [described],
            kctl_validated,
            [kafka_partitions],
        ),
    }
    if not small:  # ListGroups has no filter: the whole cluster's groups either way
        out["list"] = (
            ["groups", "list", "-o", "json"],
            [[*cgc, "--list", "--state"], [*cgc, "--list"]],
            kctl_groups,
            [kafka_groups, kafka_group_names],
        )
    return out


def agree(name: str, kctl: Any, kafka: Any) -> None:
    """Both tools found the same answer."""
    if name == "list" and kafka and next(iter(kafka))[1] == "":  # --list: names only
        kctl = {(g, "") for g, _ in kctl}
    size = len(kctl) if isinstance(kctl, set | tuple) else kctl
    assert kctl == kafka, (name, size)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bootstrap", default="127.0.0.1:19092")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--only", default="", help="comma-separated: list,lag,offsets,snapshot,validate"
    )
    ap.add_argument("--small", action="store_true", help="also a tenth of the cluster: the slope")
    ap.add_argument("--kctl-root", type=Path, help="time the kctl package under this directory")
    ap.add_argument("--requests", action="store_true",
                    help="only count each kctl command's requests (no timing)")  # fmt: skip
    args = ap.parse_args()
    compile_kctl()
    root = args.kctl_root.resolve() if args.kctl_root else ROOT
    if args.kctl_root:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "kctl")],
                       check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    from kctl.local.kafka_jars import locate

    java = [shutil.which("java") or "java", "-cp", f"{locate(None).libs}/*"]
    state = Path(tempfile.mkdtemp(prefix="kctl-scale-bench-"))
    env = {**os.environ, "KCTL_CONFIG": str(state / "c.yaml")}
    kctl = [sys.executable, "-m", "kctl", "-b", args.bootstrap]
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} on {os.cpu_count()} cpus; "
          f"kctl from {root}; median of {args.runs} interleaved runs")  # fmt: skip
    sizes = [False, True] if args.small else [False]
    chosen = set(filter(None, args.only.split(",")))
    if args.requests:
        for small in sizes:
            for name, (mine, *_rest) in pairs(args.bootstrap, java, small).items():
                if not chosen or name in chosen:
                    size = "2,000" if small else "20,000"
                    print(f"{name:<9} {size:>6} partitions: "
                          f"{requests(mine, args.bootstrap, root, env)}", flush=True)  # fmt: skip
        return
    Result = tuple[float, float, float, list[tuple[float, float, float]]]
    results: dict[tuple[str, bool], Result] = {}
    try:
        for small in sizes:
            for name, (mine, theirs, parse_mine, parse_theirs) in pairs(
                args.bootstrap, java, small
            ).items():
                if chosen and name not in chosen:
                    continue
                cmds = [[*kctl, *mine], *theirs]
                parsers = [parse_mine, *parse_theirs]
                times: list[list[float]] = [[] for _ in cmds]
                mem: list[list[float]] = [[] for _ in cmds]
                cpus: list[list[float]] = [[] for _ in cmds]
                for r in range(args.runs + 1):  # round 0 warms up, uncounted
                    answers = []
                    for i, cmd in enumerate(cmds):
                        took, cpu, mib, out = run(cmd, root if i == 0 else None, env)
                        answers.append(parsers[i](out))
                        if r:
                            times[i].append(took)
                            cpus[i].append(cpu)
                            mem[i].append(mib)
                    for i in range(1, len(cmds)):
                        agree(name, answers[0], answers[i])
                med = [statistics.median(t) for t in times]
                mm = [statistics.median(m) for m in mem]
                mc = [statistics.median(c) for c in cpus]
                results[(name, small)] = (
                    med[0], mm[0], mc[0], list(zip(med[1:], mc[1:], mm[1:], strict=True))
                )  # fmt: skip
                size = "2,000 partitions" if small else "20,000 partitions"
                row = (f"{name:<9} {size:<18} kctl {med[0]:5.2f} s (cpu {mc[0]:4.2f} s) "
                       f"{mm[0]:4.0f} MiB")  # fmt: skip
                for (k, kc, km), cmd in zip(results[(name, small)][3], theirs, strict=True):
                    flags = [a for a in cmd[4:] if a.startswith("--")
                             and a not in ("--bootstrap-server", "--group", "--topic")]  # fmt: skip
                    tool = " ".join([cmd[3].rsplit(".", 1)[-1], *dict.fromkeys(flags)])
                    row += (f" | {tool} {k:5.2f} s (cpu {kc:4.2f} s) {km:4.0f} MiB: "
                            f"{k / med[0]:4.1f}x wall, {kc / mc[0]:4.1f}x cpu")  # fmt: skip
                print(row, flush=True)
    finally:
        shutil.rmtree(state, ignore_errors=True)
    if args.small:
        print("slope, 2,000 -> 20,000 partitions (kctl): time and peak memory per 1,000 partitions")
        for name in ("lag", "offsets", "snapshot", "validate"):
            if (name, True) in results and (name, False) in results:
                t2, m2, c2, _ = results[(name, True)]
                t20, m20, c20, _ = results[(name, False)]
                st, sc, sm = (t20 - t2) / 18, (c20 - c2) / 18, (m20 - m2) / 18
                print(f"{name:<9} wall {t2:4.2f} -> {t20:4.2f} s ({st * 1000:3.0f} ms / 1,000), "
                      f"cpu {c2:4.2f} -> {c20:4.2f} s ({sc * 1000:3.0f} ms / 1,000; "
                      f"fixed {c2 - 2 * sc:4.2f} s), "
                      f"{m2:3.0f} -> {m20:3.0f} MiB ({sm:3.1f} MiB / 1,000)")  # fmt: skip


if __name__ == "__main__":
    main()
