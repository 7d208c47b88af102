"""A generated fuzzer over kctl's whole command tree, run as real processes.

It walks the Typer app (every command, argument and option, global options included) and, for each
parameter, generates hostile values of every family: text (not UTF-8, empty, blank, 300 bytes,
``=``, control characters), numbers (0, -1, 2^15, 2^31, 2^63, 2^64 and their negatives, NaN,
inf, 1e400, hex, fractions) and paths (a directory, ``/dev/zero``, a FIFO without a writer, a
missing path, a sparse 4 GiB file, a file that is not UTF-8, binary junk, an empty file, a name
that is not UTF-8). One invocation replaces one parameter of a baseline that fills the required
ones, and runs against a real broker and against an unreachable one (``127.0.0.1:1``), with
stdin empty and the profile, state and cache directories in a scratch folder (so ``local`` and
``profile`` commands never see the developer's own).

An invocation fails on any of: death by a signal (a native crash), no exit within the process
timeout (a hang), ``Traceback`` on stderr, an ``unexpected`` line (kctl's last-resort handler),
anything on stdout with a non-zero exit, an exit code other than 0, 1, 2, 3 or 130.

    .venv/bin/python fuzz/cli.py --bootstrap 127.0.0.1:9092 --out /tmp/cli-fuzz.json \
        [--sample N --seed S] [--workers 2] [--only 'topics describe']

The invocation list is a pure function of the command tree (and ``--seed`` for ``--sample``), so
a finding is replayed by the command line printed for it. ``--yes``, ``--execute`` and ``--force``
are never given (a fuzzer must not change a shared cluster), and ``local up``/``local fetch``
(which start a cluster or download jars) are skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SEGMENT = ROOT / "tests/data/kafka-3.8-kraft-logs/__cluster_metadata-0/00000000000000000000.log"
UNREACHABLE = "127.0.0.1:1"
SKIP_COMMANDS = {("local", "up"), ("local", "fetch")}
NEVER_GIVEN = {"--yes", "--execute", "--force", "-y"}
OK_CODES = {0, 1, 2, 3, 130}

TEXT: list[bytes] = [
    b"bad\xff\xfe",
    b"",
    b" ",
    b"\t\n",
    b"x" * 300,
    b"-",
    b"a=b",
    b"=",
    b"..",
    b"\x1b[31m\x07",
    b"\xe2\x80\xae",
    b"%s%n",
]
NUMBERS: list[bytes] = [
    b"0",
    b"-1",
    b"32768",
    b"-32769",
    b"2147483648",
    b"-2147483649",
    b"9223372036854775808",
    b"-9223372036854775809",
    b"18446744073709551616",
    b"nan",
    b"inf",
    b"-inf",
    b"1e400",
    b"0x10",
    b"1.5",
]


@dataclass(frozen=True)
class Param:
    name: str
    opt: str | None  # the option's long name; None for an argument
    kind: str  # int, float, bool, path, str
    required: bool
    is_flag: bool


@dataclass(frozen=True)
class Command:
    path: tuple[str, ...]
    params: tuple[Param, ...]


def command_tree() -> tuple[list[Command], list[Param]]:
    """Every runnable command with its parameters, and the root's global options."""
    import typer.main

    from kctl import cli

    root = typer.main.get_command(cli.register(None))

    def params_of(cmd: Any) -> tuple[Param, ...]:
        out = []
        for p in cmd.params:
            if p.name in ("help", "version"):
                continue
            tname = getattr(p.type, "name", "")
            kind = {"integer": "int", "int range": "int", "float": "float", "boolean": "bool"}.get(
                tname, "path" if tname == "path" else "str"
            )
            longs = [o for o in getattr(p, "opts", []) if o.startswith("--")] or list(
                getattr(p, "opts", [])
            )
            is_arg = type(p).__name__.endswith("Argument")
            out.append(
                Param(
                    p.name,
                    None if is_arg else longs[0],
                    kind,
                    bool(p.required),
                    bool(getattr(p, "is_flag", False)),
                )
            )
        return tuple(out)

    commands: list[Command] = []

    def walk(cmd: Any, path: tuple[str, ...]) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in sorted(subs.items()):
                walk(sub, (*path, name))
        elif path not in SKIP_COMMANDS:
            commands.append(Command(path, params_of(cmd)))

    walk(root, ())
    return commands, list(params_of(root))


class Files:
    """The hostile paths, made once in a scratch directory."""

    def __init__(self, base: Path) -> None:
        self.base = base
        fifo = base / "fifo"
        if not fifo.exists():
            os.mkfifo(fifo)
        huge = base / "huge"
        with open(huge, "wb") as f:
            f.truncate(4 << 30)  # sparse: no disk used
        (base / "latin1").write_bytes(b"caf\xe9=1\nna\xefve\n")
        (base / "junk").write_bytes(bytes(range(256)) * 64)
        (base / "empty").write_bytes(b"")
        self.paths: list[bytes] = [
            str(base).encode(),  # a directory
            b"/dev/zero",
            str(fifo).encode(),
            str(base / "missing").encode(),
            str(huge).encode(),
            str(base / "latin1").encode(),
            str(base / "junk").encode(),
            str(base / "empty").encode(),
            str(base).encode() + b"/bad\xff\xfe",
        ]


PATHISH = ("file", "path", "dir", "snapshot", "config", "json", "out", "record", "inputs", "plot",
           "export", "home", "directory")  # fmt: skip


def values_for(p: Param, files: Files) -> list[bytes]:
    """The hostile values of one parameter: every family for text (its meaning is not typed)."""
    if p.is_flag or p.kind == "bool":
        return []
    if p.kind == "int" or p.kind == "float":
        return NUMBERS + TEXT[:3]
    if p.kind == "path" or any(w in p.name for w in PATHISH):
        return files.paths + TEXT[:4]
    return TEXT + NUMBERS + files.paths


def baseline(cmd: Command) -> list[bytes]:
    """Values for the required parameters, plausible enough to reach the command's work."""
    out: list[bytes] = []
    for p in cmd.params:
        if not p.required:
            continue
        if p.kind in ("int", "float"):
            value = b"1"
        elif p.kind == "path" or any(w in p.name for w in PATHISH):
            value = str(SEGMENT).encode()
        else:
            value = b"fuzz-t"
        out += [value] if p.opt is None else [p.opt.encode(), value]
    return out


def invocations(
    commands: list[Command], globals_: list[Param], files: Files
) -> Iterator[tuple[str, list[bytes]]]:
    """(a label, the argv after ``kctl`` minus the target) for every generated case."""
    for cmd in commands:
        words = [w.encode() for w in cmd.path]
        base = baseline(cmd)
        yield (" ".join(cmd.path) + " (baseline)", [*words, *base])
        for p in cmd.params:
            if p.opt in NEVER_GIVEN:
                continue
            for value in values_for(p, files):
                if p.opt is None:
                    args = _replace_argument(cmd, p, value)
                else:
                    args = [*base, p.opt.encode(), value]
                yield (f"{' '.join(cmd.path)} {p.opt or p.name}", [*words, *args])
    cheap = [[b"topics", b"list"], [b"consume", b"fuzz-t", b"-n", b"1"], [b"groups", b"list"],
             [b"topics", b"describe", b"fuzz-t"]]  # fmt: skip
    for g in globals_:
        if g.opt in ("--bootstrap-server", "--timeout") or g.is_flag:
            continue  # the target and the deadline are the runner's
        for value in [*values_for(g, files), b"bad\xff\xfe=1", b"client.id=\xff"]:
            for words in cheap:
                yield (f"{g.opt} {words[0].decode()}", [g.opt.encode(), value, *words])


def _replace_argument(cmd: Command, target: Param, value: bytes) -> list[bytes]:
    out: list[bytes] = []
    for p in cmd.params:
        if p is target:
            out.append(value)
        elif p.required:
            v = b"1" if p.kind in ("int", "float") else b"fuzz-t"
            if p.kind == "path" or any(w in p.name for w in PATHISH):
                v = str(SEGMENT).encode()
            out += [v] if p.opt is None else [p.opt.encode(), v]
    if target.opt is None and not target.required:
        pass
    return out


def classify(code: int | None, stdout: bytes, stderr: bytes) -> str | None:
    """The class of failure, or None for a run that kept kctl's promise."""
    if code is None:
        return "hang"
    if code < 0:
        return f"signal {-code}"
    if b"Traceback (most recent call last)" in stderr:
        return "traceback"
    if b"kctl: error: unexpected" in stderr:
        return "unexpected"
    if code not in OK_CODES:
        return f"exit {code}"
    if code != 0 and stdout.strip():
        return "stdout on error"
    return None


Outcome = tuple[int | None, bytes, bytes, float]


def run_one(argv: list[bytes], env: dict[str, str], timeout: float) -> Outcome:
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kctl", *argv],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
        code = None
    return code, out[:4096], err[-4096:], time.monotonic() - start


def _shown(argv: list[bytes]) -> str:
    return shlex.join(a.decode("utf-8", "backslashreplace") for a in argv)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bootstrap", default="127.0.0.1:9092", help="a real broker")
    ap.add_argument("--targets", default="both", choices=("both", "real", "unreachable"))
    ap.add_argument("--sample", type=int, default=0, help="run N cases drawn with --seed")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="", help="only commands whose path starts with this")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per process")
    ap.add_argument("--kctl-timeout", default="5", help="kctl's own --timeout")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--list", action="store_true", help="print the cases, run nothing")
    args = ap.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="kctl-cli-fuzz-"))
    files = Files(scratch)
    commands, globals_ = command_tree()
    if args.only:
        commands = [c for c in commands if " ".join(c.path).startswith(args.only)]
    cases = list(invocations(commands, globals_, files))
    targets = {"both": [args.bootstrap, UNREACHABLE], "real": [args.bootstrap],
               "unreachable": [UNREACHABLE]}[args.targets]  # fmt: skip
    runs = [(label, [b"-b", t.encode(), b"--timeout", args.kctl_timeout.encode(), *argv])
            for label, argv in cases for t in targets]  # fmt: skip
    if args.sample and args.sample < len(runs):
        runs = random.Random(args.seed).sample(runs, args.sample)
    if args.list:
        for label, argv in runs:
            print(label, "|", _shown(argv))
        return
    env = dict(os.environ, KCTL_HELP_CACHE="0", NO_COLOR="1")
    for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[var] = str(scratch / var.lower())
    for var in ("KCTL_PROFILE", "KCTL_BOOTSTRAP_SERVERS", "KCTL_DEBUG", "KCTL_CONFIG"):
        env.pop(var, None)

    findings: dict[str, list[dict[str, Any]]] = defaultdict(list)
    classes: Counter[str] = Counter()
    per_command: Counter[str] = Counter()
    slowest = 0.0
    started = time.monotonic()

    def one(case: tuple[str, list[bytes]]) -> None:
        nonlocal slowest
        label, argv = case
        code, out, err, took = run_one(argv, env, args.timeout)
        slowest = max(slowest, took)
        per_command[label.split(" (")[0].rsplit(" ", 1)[0]] += 1
        kind = classify(code, out, err)
        if kind is None:
            return
        classes[kind] += 1
        if len(findings[f"{kind}: {label}"]) < 3:
            findings[f"{kind}: {label}"].append(
                {
                    "argv": "kctl " + _shown(argv),
                    "exit": code,
                    "stderr": err.decode("utf-8", "replace")[-600:],
                    "stdout": out.decode("utf-8", "replace")[:300],
                }
            )

    with ThreadPoolExecutor(args.workers) as pool:
        list(pool.map(one, runs))
    summary = {
        "invocations": len(runs),
        "commands": len(commands),
        "seconds": round(time.monotonic() - started, 1),
        "slowest_s": round(slowest, 1),
        "failures": sum(classes.values()),
        "classes": dict(classes),
        "findings": {k: v for k, v in sorted(findings.items())},
    }
    text = json.dumps(summary, indent=2, ensure_ascii=False)
    if args.out:
        args.out.write_text(text)
    print(json.dumps({k: summary[k] for k in ("invocations", "commands", "seconds", "slowest_s",
                                              "failures", "classes")}))  # fmt: skip
    for key in sorted(findings):
        print(f"{key}\n    {findings[key][0]['argv']}")
    sys.exit(1 if classes else 0)


if __name__ == "__main__":
    main()
