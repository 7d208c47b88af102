"""A generated fuzzer over kctl's whole command tree, run as real kctl processes.

It walks the Typer app (every command, argument and option, global options included) and
generates hostile invocations in families:

- **values**: each parameter gets every family of hostile value: text (not UTF-8, empty, blank,
  300 bytes, ``=``, control characters), numbers (0, -1, 2^15, 2^31, 2^63, 2^64 and their
  negatives, NaN, inf, 1e400, hex, fractions) and paths (a directory, ``/dev/zero``, a FIFO
  without a writer, a missing path, a sparse 4 GiB file, a file that is not UTF-8, binary junk,
  an empty file, a name that is not UTF-8);
- **option-looking**: values that look like options (``--``, ``--help``, ``-b``, ...), and
  arguments after ``--``;
- **twice**: each option given twice (two plausible values; a flag twice);
- **pairs**: each pair of options of a command given together with plausible values (two
  mutually exclusive options, found generically);
- **globals**: ``-o``, ``-p``, ``--command-config`` and ``-X`` with every hostile value on every
  command, ``--timeout`` on a few.

One invocation changes one thing in a baseline that fills the required parameters, and runs
against a real broker and against an unreachable one (``127.0.0.1:1``), with stdin empty, the
working directory and the profile, state and cache directories in a scratch folder (so
``local`` and ``profile`` commands never see the developer's own).

Two ways to run a case:

- **fork** (default): one warmed-up Python (``--serve``: kctl.cli, kctl.entry, typer, rich,
  yaml, orjson and every command module imported; never confluent_kafka, kafka-python or
  pyspark, whose threads do not survive a fork, and no thread running) forks a child per case.
  The child gets its own session, stdin from /dev/null, stdout and stderr on pipes, the scratch
  directory, the environment and signal handlers of a fresh process, ``sys.argv`` decoded like
  CPython decodes it (``os.fsdecode``), then runs ``kctl.entry.main()`` exactly as the ``kctl``
  executable does, and exits the way CPython does (SystemExit's code, a traceback and 1 for an
  uncaught exception, non-daemon threads joined, atexit handlers run, stdio flushed). The server
  never runs a command itself, so what kctl caches per process (the registered sub-command, the
  native module, preload threads) starts clean in every child. About 10x the cases per second.
- **spawn** (``--spawn``): a fresh ``python -m kctl`` process per case, for comparison.
  ``--compare`` runs the sample both ways and lists the cases classified differently.

An invocation fails on any of: death by a signal (a native crash), no exit within the process
timeout (a hang), ``Traceback`` on stderr, an ``unexpected`` line (kctl's last-resort handler),
anything on stdout with a non-zero exit (but a check's report before exit 3, and ``local
status``'s exit 1), an exit code other than 0, 1, 2, 3 or 130.

    .venv/bin/python fuzz/cli.py --bootstrap 127.0.0.1:9092 --out /tmp/cli-fuzz.json \
        [--sample N --seed S] [--workers 8] [--only 'topics describe'] [--spawn | --compare]

The invocation list is a pure function of the command tree (and ``--seed`` for ``--sample``), so
a finding is replayed by the command line printed for it. ``--yes``, ``--execute`` and ``--force``
are never given (a fuzzer must not change a shared cluster), ``--follow``, ``--live`` and a valid
``--watch`` or ``--serve`` (which run until interrupted) neither, and ``local up``/``local
fetch`` (which start a cluster or download jars) are skipped. The commands that change a
cluster without ``--yes`` (MUTATING) run against the unreachable broker only, unless
``--mutate`` (a scratch cluster). An option kctl writes to (OUTPUTS) is plausibly given a path
in a scratch directory, never a fixture: the hostile paths are made in the scratch directory.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import selectors
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NoReturn

ROOT = Path(__file__).resolve().parent.parent
SEGMENT = ROOT / "tests/data/kafka-3.8-kraft-logs/__cluster_metadata-0/00000000000000000000.log"
UNREACHABLE = "127.0.0.1:1"
SKIP_COMMANDS = {("local", "up"), ("local", "fetch")}
NEVER_GIVEN = {"--yes", "--execute", "--force", "-y"}
# Options that make a command run until interrupted: given only with values that are not a
# valid duration (a hang would be the option's meaning, not a finding).
LONG_RUNNING = {"--watch", "--follow", "--live", "--serve"}
# Options kctl writes to: their plausible value is a scratch path, never a fixture (a sampled
# 'reassign generate --current-file' once reached the write and replaced the segment above with
# the cluster's assignment).
OUTPUTS = {"--current-file", "--report", "--out", "--plot", "--record", "--hmac-file",
           "--snapshot-json"}  # fmt: skip
OUTPUT_DIR = Path(tempfile.gettempdir()) / "kctl-fuzz-outputs"
OK_CODES = {0, 1, 2, 3, 130}
# Modules a fork server must not import (their threads do not survive fork).
NOT_IN_SERVER = ("confluent_kafka", "kafka", "pyspark", "pyarrow")
CLIP = 8192  # bytes of stdout and stderr kept at each end

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
# Values that look like options (an option's value or an argument).
OPTIONISH: list[bytes] = [b"--", b"--help", b"-h", b"-b", b"--version", b"--no-such-option"]
# Global options given with every hostile value on every command.
GLOBALS_EVERYWHERE = ("--output", "--profile", "--command-config", "-X")


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


Case = tuple[str, list[bytes]]  # (a label: command and family, the argv after ``kctl``)


def command_tree() -> tuple[list[Command], list[Param]]:
    """Every runnable command with its parameters, and the root's global options, read from the
    Typer app in a fresh interpreter (``--tree``): registering every command in this process
    would change what an in-process ``kctl.cli.main`` does afterwards."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KCTL_")}
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--tree"],
        capture_output=True,
        env=env,
        timeout=120,
    )
    if done.returncode:
        raise RuntimeError(f"reading the command tree failed: {done.stderr.decode()[-2000:]}")
    out = done.stdout
    tree = json.loads(out)
    commands = [
        Command(tuple(c["path"]), tuple(Param(**p) for p in c["params"])) for c in tree["commands"]
    ]
    return commands, [Param(**p) for p in tree["globals"]]


def _tree_here() -> dict[str, Any]:
    import typer.main

    from kctl import cli

    root = typer.main.get_command(cli.register(None))

    def params_of(cmd: Any) -> tuple[Param, ...]:
        out = []
        for p in cmd.params:
            if p.name in ("help", "version"):
                continue
            tname = getattr(p.type, "name", "")
            kind = {
                "integer": "int",
                "int": "int",
                "int range": "int",
                "float": "float",
                "boolean": "bool",
            }.get(tname, "path" if tname == "path" else "str")
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

    commands: list[dict[str, Any]] = []

    def walk(cmd: Any, path: tuple[str, ...]) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in sorted(subs.items()):
                walk(sub, (*path, name))
        elif path not in SKIP_COMMANDS:
            commands.append({"path": path, "params": [asdict(p) for p in params_of(cmd)]})

    walk(root, ())
    return {"commands": commands, "globals": [asdict(p) for p in params_of(root)]}


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


def _pathish(p: Param) -> bool:
    return p.kind == "path" or any(w in p.name for w in PATHISH)


def values_for(p: Param, files: Files) -> list[bytes]:
    """The hostile values of one parameter: every family for text (its meaning is not typed)."""
    if p.is_flag or p.kind == "bool":
        return []
    if p.kind == "int" or p.kind == "float":
        values = NUMBERS + TEXT[:3]
    elif _pathish(p):
        values = files.paths + TEXT[:4]
    else:
        values = TEXT + NUMBERS + files.paths
    if p.opt in LONG_RUNNING:
        values = [v for v in values if not _runs_until_interrupted(v, p.opt)]
    return values


def _runs_until_interrupted(value: bytes, opt: str = "--watch") -> bool:
    """Whether ``value`` makes the option run until interrupted: a number of seconds above 0,
    or for ``--serve`` an address an exporter would listen on."""
    if opt == "--serve":
        from kctl.errors import UsageError
        from kctl.parsing import listen_address

        try:
            listen_address(value.decode("utf-8", "replace"), opt)
        except UsageError:
            return False
        return True
    try:
        number = float(value)
    except ValueError:
        return False
    return 0 < number < float("inf")


def plausible(p: Param, second: bool = False) -> bytes:
    """A value the parameter may well accept (``second``: another one)."""
    if p.kind in ("int", "float"):
        return b"2" if second else b"1"
    if _pathish(p):
        if p.opt in OUTPUTS:
            return str(OUTPUT_DIR / p.opt.lstrip("-")).encode()
        return str(SEGMENT).encode()
    return b"fuzz-u" if second else b"fuzz-t"


def _given(p: Param, value: bytes | None = None) -> list[bytes]:
    """The words that give ``p`` (its plausible value unless ``value``)."""
    v = plausible(p) if value is None else value
    if p.opt is None:
        return [v]
    return [p.opt.encode()] if p.is_flag else [p.opt.encode(), v]


def baseline(cmd: Command) -> list[bytes]:
    """Values for the required parameters, plausible enough to reach the command's work."""
    out: list[bytes] = []
    for p in cmd.params:
        if p.required:
            out += _given(p)
    return out


def _usable(p: Param) -> bool:
    return p.opt not in NEVER_GIVEN and p.opt not in LONG_RUNNING


def invocations(commands: list[Command], globals_: list[Param], files: Files) -> Iterator[Case]:
    """(a label, the argv after ``kctl`` minus the target) for every generated case."""
    for cmd in commands:
        name = " ".join(cmd.path)
        words = [w.encode() for w in cmd.path]
        base = baseline(cmd)
        yield (f"{name} (baseline)", [*words, *base])
        for p in cmd.params:
            if p.opt in NEVER_GIVEN:
                continue
            for value in values_for(p, files):
                yield (f"{name} {p.opt or p.name}", [*words, *_with(cmd, p, value)])
        yield from _option_looking(cmd, name, words)
        options = [p for p in cmd.params if p.opt is not None and _usable(p)]
        for p in options:  # each option given twice
            twice = [*_given(p), *_given(p, None if p.is_flag else plausible(p, second=True))]
            yield (f"{name} {p.opt} twice", [*words, *_with(cmd, p, None), *twice])
        for i, a in enumerate(options):  # each pair of options together
            for b in options[i + 1 :]:
                rest = _with(cmd, a, None, also=b)
                yield (f"{name} {a.opt} with {b.opt}", [*words, *rest, *_given(a), *_given(b)])
    by_opt = {g.opt: g for g in globals_}
    any_text = Param("value", "--value", "str", False, False)
    for opt in GLOBALS_EVERYWHERE:
        # Their names are not typed: every family (--command-config's are paths).
        values = (
            files.paths + TEXT[:4] if opt == "--command-config" else values_for(any_text, files)
        )
        for value in [*values, b"bad\xff\xfe=1", b"client.id=\xff"]:
            for cmd in commands:
                words = [w.encode() for w in cmd.path]
                yield (f"{opt} {' '.join(cmd.path)}", [opt.encode(), value, *words, *baseline(cmd)])
    # The same after the command's words, in the forms hoist_global_options takes apart.
    forms = ((b"--output=", b"-o"), (b"--profile=", b"-p"), (b"--command-config=",), (b"-X",))
    for prefixes in forms:
        for value in TEXT:
            for cmd in commands:
                words = [w.encode() for w in cmd.path]
                for prefix in prefixes:
                    label = f"{prefix.decode().rstrip('=')} after {' '.join(cmd.path)}"
                    yield (label, [*words, *baseline(cmd), prefix + value])
    cheap = [[b"topics", b"list"], [b"consume", b"fuzz-t", b"-n", b"1"], [b"groups", b"list"],
             [b"topics", b"describe", b"fuzz-t"]]  # fmt: skip
    # The runner's own --timeout comes first; a second one (hostile) overrides it.
    timeout = by_opt["--timeout"]
    for value in [*values_for(timeout, files), b"0.001", b"1e-300"]:
        for words in cheap:
            yield (f"--timeout {words[0].decode()}", [b"--timeout", value, *words])


def _option_looking(cmd: Command, name: str, words: list[bytes]) -> Iterator[Case]:
    """Option-looking values for each option and argument, and each argument after ``--``."""
    for p in cmd.params:
        if p.is_flag or not _usable(p):
            continue
        for value in OPTIONISH:
            yield (f"{name} {p.opt or p.name} optionish", [*words, *_with(cmd, p, value)])
            if p.opt is None:
                options = [w for q in cmd.params if q.opt is not None and q.required
                           for w in _given(q)]  # fmt: skip
                yield (f"{name} -- {p.name}", [*words, *options, b"--", *_arguments(cmd, p, value)])


def _arguments(cmd: Command, target: Param, value: bytes) -> list[bytes]:
    """The positional words of a baseline with ``target`` given ``value``."""
    out: list[bytes] = []
    for p in cmd.params:
        if p.opt is not None:
            continue
        if p is target:
            out.append(value)
        elif p.required:
            out.append(plausible(p))
    return out


def _with(
    cmd: Command, target: Param, value: bytes | None, also: Param | None = None
) -> list[bytes]:
    """The baseline's words with ``target`` given ``value`` (None: ``target`` and ``also`` left
    out, for the caller to give)."""
    out: list[bytes] = []
    for p in cmd.params:
        if p is target:
            if value is not None:
                out += _given(p, value)
        elif p is also:
            continue
        elif p.required:
            out += _given(p)
    return out


# Commands that change a cluster without --yes/--execute: against a real broker only with
# --mutate (a scratch cluster), else against the unreachable one only.
MUTATING = {("topics", "create"), ("topics", "add-partitions"), ("configs", "set"),
            ("configs", "append"), ("configs", "delete"), ("configs", "subtract"), ("produce",),
            ("users", "set-password"), ("acls", "add"), ("quotas", "set"), ("tokens", "create"),
            ("tokens", "renew"), ("perf", "produce"), ("perf", "consume")}  # fmt: skip


def mutating(argv: list[bytes]) -> bool:
    """Whether a case (the argv after ``kctl``) runs a command of MUTATING, or ``consume``
    with a group (it commits the group's offsets)."""
    start = 2 if argv and argv[0].startswith(b"-") else 0  # a global option and its value
    words = tuple(w.decode("utf-8", "replace") for w in argv[start : start + 2])
    if words[:1] == ("consume",):
        return any(w in (b"--group", b"-g") or w.startswith(b"--group=") for w in argv)
    return words in MUTATING or words[:1] in MUTATING


def runs_for(
    cases: Iterable[Case], targets: list[str], kctl_timeout: str, mutate: bool = False
) -> list[Case]:
    """Each case against each target, with kctl's own --timeout; a case of a MUTATING command
    against the unreachable target only, unless ``mutate``."""
    return [(label, [b"-b", t.encode(), b"--timeout", kctl_timeout.encode(), *argv])
            for label, argv in cases for t in targets
            if mutate or t == UNREACHABLE or not mutating(argv)]  # fmt: skip


def sample(runs: list[Case], n: int, seed: int) -> list[Case]:
    if n and n < len(runs):
        return random.Random(seed).sample(runs, n)
    return runs


def fuzz_env(scratch: Path) -> dict[str, str]:
    """The environment of every case: no profile, state or cache of the developer's."""
    # No KCTL_ variable of the caller's (KCTL_STATE_DIR would point `local` at a test
    # session's cluster) but the choice of the native module.
    env = {k: v for k, v in os.environ.items() if not k.startswith("KCTL_") or k == "KCTL_NATIVE"}
    env.update(KCTL_HELP_CACHE="0", NO_COLOR="1")
    for var in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[var] = str(scratch / var.lower())
    return env


# Documented output on a non-zero exit: a check's report before its exit 3 (dump-segment
# --strict, groups lag --fail-above, replicas validate, transactions find-hanging), and
# `local status`, which prints the state and exits 1 when no node runs (docs/local.md).
STDOUT_ON_EXIT = {3: None, 1: (b"local", b"status")}


def classify(
    code: int | None, stdout: bytes, stderr: bytes, argv: list[bytes] | None = None
) -> str | None:
    """The class of failure, or None for a run that kept kctl's promise (``argv``: the run's
    words, for the output documented on a non-zero exit)."""
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
    if code != 0 and stdout.strip() and not _documented_output(code, argv or []):
        return "stdout on error"
    return None


def _documented_output(code: int, argv: list[bytes]) -> bool:
    if code not in STDOUT_ON_EXIT:
        return False
    words = STDOUT_ON_EXIT[code]
    if words is None:
        return True
    return any(tuple(argv[i : i + len(words)]) == words for i in range(len(argv)))


def first_line(stderr: bytes) -> bytes:
    return stderr.split(b"\n", 1)[0]


@dataclass
class Outcome:
    code: int | None  # None: killed at the deadline; negative: the signal that ended it
    stdout: bytes
    stderr: bytes
    seconds: float


def _clip(data: bytes) -> bytes:
    if len(data) <= 2 * CLIP:
        return data
    return data[:CLIP] + b"\n[...]\n" + data[-CLIP:]


# ---------------------------------------------------------------- spawn: a process per case


def run_spawned(
    runs: list[Case], env: dict[str, str], scratch: Path, workers: int, timeout: float
) -> Iterator[tuple[int, Outcome]]:
    """(index in ``runs``, outcome) of each run as a fresh ``python -m kctl``, as they end."""

    def one(i: int) -> tuple[int, Outcome]:
        start = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "kctl", *runs[i][1]],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=scratch,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=deadline(runs[i][1], timeout))
            code: int | None = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            code = None
        return i, Outcome(code, _clip(out), _clip(err), time.monotonic() - start)

    with ThreadPoolExecutor(workers) as pool:
        yield from pool.map(one, range(len(runs)))


# ---------------------------------------------------------------- fork: a warm server


def run_forked(
    runs: list[Case], env: dict[str, str], scratch: Path, workers: int, timeout: float
) -> Iterator[tuple[int, Outcome]]:
    """(index in ``runs``, outcome) of each run, forked by a warm server (``--serve``), in the
    order they end. The server is a separate process: the caller (a test session, which may
    hold librdkafka threads) is never forked."""
    job = scratch / f"job-{os.getpid()}-{time.monotonic_ns()}.json"
    job.write_text(
        json.dumps(
            {
                "env": env,
                "scratch": str(scratch),
                "timeout": timeout,
                "workers": workers,
                "runs": [[a.decode("latin-1") for a in argv] for _, argv in runs],
            }
        )
    )
    r, w = os.pipe()
    server = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--serve", str(job), str(w)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        env=env,
        cwd=scratch,
        pass_fds=(w,),
    )
    os.close(w)
    seen = 0
    try:
        with os.fdopen(r, "rb") as results:
            for line in results:
                d = json.loads(line)
                seen += 1
                yield (
                    d["i"],
                    Outcome(
                        d["code"], d["out"].encode("latin-1"), d["err"].encode("latin-1"), d["s"]
                    ),
                )
    finally:
        if server.poll() is None:
            server.kill()
        server.wait()
        job.unlink(missing_ok=True)
    if seen != len(runs):
        raise RuntimeError(f"the fork server ended after {seen} of {len(runs)} runs")


def _warm_up() -> None:
    """Import what every kctl run imports (and every command module), nothing that starts a
    thread; fail if a forbidden module or a thread came in."""
    import importlib
    import threading

    import orjson  # noqa: F401
    import rich.console
    import rich.markdown
    import rich.table  # noqa: F401
    import typer  # noqa: F401
    import yaml  # noqa: F401

    import kctl.entry  # noqa: F401
    from kctl import cli

    for module, _kind, _summary in cli.SUBCOMMANDS.values():
        importlib.import_module(f"kctl.commands.{module}")
    importlib.import_module("kctl.commands.offsets_get")
    bad = sorted(m for m in sys.modules if m.split(".")[0] in NOT_IN_SERVER)
    if bad or threading.active_count() != 1 or cli._registered:
        raise SystemExit(f"fork server not clean: modules {bad[:5]}, {threading.active_count()}"
                         f" threads, registered {sorted(cli._registered)}")  # fmt: skip


class _Child:
    """A running case: its process (and pidfd), its two pipes, what they gave so far."""

    def __init__(self, index: int, pid: int, out: int, err: int, deadline: float) -> None:
        self.index, self.pid, self.out, self.err, self.deadline = index, pid, out, err, deadline
        self.start = time.monotonic()
        self.pidfd = os.pidfd_open(pid)
        self.head = {out: bytearray(), err: bytearray()}
        self.tail = {out: bytearray(), err: bytearray()}
        self.total = {out: 0, err: 0}
        self.watching = {self.pidfd, out, err}  # registered in the selector
        self.status: int | None = None  # os.waitpid's, once reaped

    def fds(self) -> tuple[int, int, int]:
        return self.pidfd, self.out, self.err

    def read(self, fd: int) -> bool:
        """Read one chunk of a pipe, keeping its first and last CLIP bytes; True at EOF."""
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return False
        if not chunk:
            return True
        self.total[fd] += len(chunk)
        head, tail = self.head[fd], self.tail[fd]
        if len(head) < CLIP:
            head += chunk[: CLIP - len(head)]
        tail += chunk
        if len(tail) > CLIP:
            del tail[: len(tail) - CLIP]
        return False

    def kept(self, fd: int) -> bytes:
        """What :func:`_clip` keeps of all that the pipe gave."""
        head, tail, total = bytes(self.head[fd]), bytes(self.tail[fd]), self.total[fd]
        if total <= CLIP:
            return head
        if total <= 2 * CLIP:
            return head + tail[len(tail) - (total - CLIP) :]
        return head + b"\n[...]\n" + tail


# Commands that start a JVM of their own (Spark's driver) get this many seconds at least: a
# local Spark takes 10-40 s to start on a busy 2-core machine, which is work, not a hang.
SPARK_DEADLINE = 180.0


def deadline(argv: list[bytes], timeout: float) -> float:
    """The seconds one run may take: ``timeout``, or :data:`SPARK_DEADLINE` for analytics."""
    return max(timeout, SPARK_DEADLINE) if b"analytics" in argv else timeout


def serve(job_path: Path, result_fd: int) -> None:
    """The fork server: warm up once, then fork a child per run, ``workers`` at a time; write
    one JSON line per run to ``result_fd`` as each ends."""
    job = json.loads(job_path.read_text())
    env: dict[str, str] = job["env"]
    scratch: str = job["scratch"]
    timeout: float = job["timeout"]
    runs: list[list[bytes]] = [[a.encode("latin-1") for a in argv] for argv in job["runs"]]
    fresh = {s: signal.getsignal(s) for s in signal.valid_signals()}
    _warm_up()
    import gc

    gc.collect()
    gc.freeze()  # the children's reference counting does not copy the server's pages
    sel = selectors.DefaultSelector()
    running: dict[int, _Child] = {}  # by pid
    todo = list(reversed(range(len(runs))))

    def start(i: int) -> None:
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            inherited = [result_fd, out_r, err_r, *(fd for c in running.values() for fd in c.fds())]
            _child(runs[i], env, scratch, fresh, out_w, err_w, inherited, sel)
        os.close(out_w)
        os.close(err_w)
        os.set_blocking(out_r, False)
        os.set_blocking(err_r, False)
        child = _Child(i, pid, out_r, err_r, time.monotonic() + deadline(runs[i], timeout))
        running[pid] = child
        for fd in child.fds():
            sel.register(fd, selectors.EVENT_READ, child)

    def unwatch(child: _Child, fd: int) -> None:
        sel.unregister(fd)
        child.watching.discard(fd)

    def finish(child: _Child, code: int | None) -> None:
        for fd in list(child.watching):
            unwatch(child, fd)
        for fd in child.fds():
            os.close(fd)
        del running[child.pid]
        line = json.dumps(
            {
                "i": child.index,
                "code": code,
                "out": child.kept(child.out).decode("latin-1"),
                "err": child.kept(child.err).decode("latin-1"),
                "s": round(time.monotonic() - child.start, 3),
            }
        ).encode()
        view = memoryview(line + b"\n")
        while view:
            view = view[os.write(result_fd, view) :]

    while todo or running:
        while todo and len(running) < job["workers"]:
            start(todo.pop())
        wait = max(0.0, min(c.deadline for c in running.values()) - time.monotonic())
        for key, _ in sel.select(wait):
            child, fd = key.data, key.fd
            if fd == child.pidfd:
                child.status = os.waitpid(child.pid, 0)[1]
                unwatch(child, fd)
            elif child.read(fd):
                unwatch(child, fd)
        now = time.monotonic()
        for child in list(running.values()):
            if child.status is not None and not {child.out, child.err} & child.watching:
                finish(child, os.waitstatus_to_exitcode(child.status))
            elif now >= child.deadline:  # a hang: the child and what it started are killed
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.pid, signal.SIGKILL)
                if child.status is None:
                    child.status = os.waitpid(child.pid, 0)[1]
                for fd in (child.out, child.err):
                    for _ in range(64):  # what is left in the pipe (at most its buffer)
                        if fd not in child.watching or child.read(fd):
                            break
                finish(child, None)


def _child(
    argv: list[bytes],
    env: dict[str, str],
    scratch: str,
    fresh: dict[signal.Signals, Any],
    out_w: int,
    err_w: int,
    inherited: list[int],
    sel: selectors.BaseSelector,
) -> NoReturn:
    """One case in a forked child: set up what a fresh ``kctl`` process has, run the entry
    point, exit as CPython exits. Never returns into the server."""
    code = 70
    try:
        os.setsid()  # its own process group: a hang is killed with all it started
        sel.close()
        for fd in inherited:
            os.close(fd)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.close(out_w)
        os.close(err_w)
        os.chdir(scratch)
        os.environ.clear()
        os.environ.update(env)
        for sig, handler in fresh.items():
            if handler is not None and signal.getsignal(sig) != handler:
                with contextlib.suppress(OSError, ValueError):
                    signal.signal(sig, handler)
        random.seed()  # a fresh process seeds from the OS
        code = _run_case(argv, scratch)
    except BaseException:
        import traceback

        try:
            traceback.print_exc()
            sys.stderr.flush()
        except BaseException:
            pass
    finally:
        os._exit(code)


def _run_case(argv: list[bytes], scratch: str) -> int:
    """Run ``kctl ARGV`` in this (forked) process as the ``kctl`` executable would and return
    the exit status CPython would give."""
    import atexit
    import threading
    import traceback

    from kctl import entry

    sys.argv = [str(Path(entry.__file__).with_name("__main__.py")), *map(os.fsdecode, argv)]
    sys.path[0] = scratch  # ``python -m`` puts the working directory first
    code: int
    try:
        entry.main()
        code = 0
    except SystemExit as exc:
        code = _system_exit_code(exc.code)
    except KeyboardInterrupt:
        traceback.print_exc()
        _flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 130
    except BaseException:
        sys.excepthook(*sys.exc_info())  # type: ignore[arg-type]
        code = 1
    # Py_FinalizeEx: wait for non-daemon threads, run atexit handlers, flush stdio.
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    if not _flush():
        code = 120
    return code


def _system_exit_code(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    with contextlib.suppress(Exception):
        sys.stderr.write(f"{value}\n")
    return 1


def _flush() -> bool:
    ok = True
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            ok = False
    return ok


def _shown(argv: list[bytes]) -> str:
    return shlex.join(a.decode("utf-8", "backslashreplace") for a in argv)


# ---------------------------------------------------------------- the run and its summary


@dataclass
class Finding:
    kind: str
    label: str
    argv: list[bytes]
    outcome: Outcome

    def replay(self) -> str:
        """The command line that replays the finding (non-UTF-8 bytes shown as \\xNN)."""
        return "kctl " + _shown(self.argv)


def plan(
    scratch: Path,
    targets: list[str],
    kctl_timeout: str = "5",
    only: str = "",
    n: int = 0,
    seed: int = 1,
    mutate: bool = False,
) -> tuple[list[Command], list[Case]]:
    """The commands and the runs (each case against each target, see :func:`runs_for`), ``n``
    of them drawn with ``seed`` when ``n`` is given."""
    files = Files(scratch)
    commands, globals_ = command_tree()
    if only:
        commands = [c for c in commands if " ".join(c.path).startswith(only)]
    runs = runs_for(invocations(commands, globals_, files), targets, kctl_timeout, mutate)
    return commands, sample(runs, n, seed)


def execute(
    runs: list[Case],
    scratch: Path,
    workers: int,
    timeout: float,
    spawn: bool = False,
    state: Path | None = None,
) -> list[Outcome]:
    """The outcome of each run, in order; the profile, state and cache directories under
    ``state`` (default: ``scratch``)."""
    go = run_spawned if spawn else run_forked
    outcomes: list[Outcome | None] = [None] * len(runs)
    for i, outcome in go(runs, fuzz_env(state or scratch), scratch, workers, timeout):
        outcomes[i] = outcome
    assert all(o is not None for o in outcomes)
    return outcomes  # type: ignore[return-value]


def findings(runs: list[Case], outcomes: list[Outcome]) -> list[Finding]:
    out = []
    for (label, argv), o in zip(runs, outcomes, strict=True):
        kind = classify(o.code, o.stdout, o.stderr, argv)
        if kind is not None:
            out.append(Finding(kind, label, argv, o))
    return out


def summarize(
    commands: list[Command], runs: list[Case], outcomes: list[Outcome], seconds: float
) -> dict[str, Any]:
    found = findings(runs, outcomes)
    by_key: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for f in found:
        if len(by_key[f"{f.kind}: {f.label}"]) < 3:
            by_key[f"{f.kind}: {f.label}"].append(
                {
                    "argv": f.replay(),
                    "exit": f.outcome.code,
                    "stderr": f.outcome.stderr.decode("utf-8", "replace")[-600:],
                    "stdout": f.outcome.stdout.decode("utf-8", "replace")[:300],
                }
            )
    return {
        "invocations": len(runs),
        "commands": len(commands),
        "seconds": round(seconds, 1),
        "per_second": round(len(runs) / seconds, 1) if seconds else None,
        "slowest_s": round(max((o.seconds for o in outcomes), default=0.0), 1),
        "failures": len(found),
        "classes": dict(Counter(f.kind for f in found)),
        "findings": dict(sorted(by_key.items())),
    }


def signature(o: Outcome, state: Path) -> tuple[int | None, bytes]:
    """What fork and spawn must agree on: the exit code and the first stderr line (with the
    profile/state directory ``state`` named STATE, and librdkafka's milliseconds ``Nms``)."""
    line = first_line(o.stderr).replace(str(state).encode(), b"STATE")
    return o.code, re.sub(rb"\b\d+ms\b", b"Nms", line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bootstrap", default="127.0.0.1:9092", help="a real broker")
    ap.add_argument("--targets", default="both", choices=("both", "real", "unreachable"))
    ap.add_argument("--sample", type=int, default=0, help="run N cases drawn with --seed")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", default="", help="only commands whose path starts with this")
    ap.add_argument("--workers", type=int, default=0, help="at once (default: fork 8, spawn 2)")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per process")
    ap.add_argument("--kctl-timeout", default="5", help="kctl's own --timeout")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--mutate", action="store_true",
                    help="run the commands that change a cluster against --bootstrap too (a "
                    "scratch cluster only)")  # fmt: skip
    ap.add_argument("--list", action="store_true", help="print the cases, run nothing")
    ap.add_argument("--count", action="store_true", help="print the number of runs")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--spawn", action="store_true", help="a fresh python per case")
    mode.add_argument("--compare", action="store_true", help="fork and spawn; list differences")
    ap.add_argument("--tree", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--serve", nargs=2, metavar=("JOB", "FD"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.tree:
        print(json.dumps(_tree_here()))
        return
    if args.serve:
        serve(Path(args.serve[0]), int(args.serve[1]))
        return

    scratch = Path(tempfile.mkdtemp(prefix="kctl-cli-fuzz-"))
    targets = {"both": [args.bootstrap, UNREACHABLE], "real": [args.bootstrap],
               "unreachable": [UNREACHABLE]}[args.targets]  # fmt: skip
    commands, runs = plan(
        scratch, targets, args.kctl_timeout, args.only, args.sample, args.seed, args.mutate
    )
    if args.list or args.count:
        if args.list:
            for label, argv in runs:
                print(label, "|", _shown(argv))
        print(f"{len(runs)} runs", file=sys.stderr)
        return
    print(f"{len(runs)} runs over {len(commands)} commands", file=sys.stderr)
    if args.compare:
        _compare(runs, scratch, args)
        return
    workers = args.workers or (2 if args.spawn else 8)
    started = time.monotonic()
    outcomes = execute(runs, scratch, workers, args.timeout, spawn=args.spawn)
    summary = summarize(commands, runs, outcomes, time.monotonic() - started)
    summary["mode"] = "spawn" if args.spawn else "fork"
    summary["workers"] = workers
    text = json.dumps(summary, indent=2, ensure_ascii=False)
    if args.out:
        args.out.write_text(text)
    print(json.dumps({k: v for k, v in summary.items() if k != "findings"}))
    for key in summary["findings"]:
        print(f"{key}\n    {summary['findings'][key][0]['argv']}")
    sys.exit(1 if summary["failures"] else 0)


def _compare(runs: list[Case], scratch: Path, args: argparse.Namespace) -> None:
    """Run ``runs`` forked and spawned, each way with its own profile/state directories; print
    the speed of each and every case whose exit code or first stderr line differs (the state
    directory's name aside). Cases that write state (``profile add``) can differ when run in
    another order: ``--workers 1`` runs both ways in the same order."""
    results: dict[str, list[Outcome]] = {}
    for name, spawn in (("fork", False), ("spawn", True)):
        workers = args.workers or (2 if spawn else 8)
        state = scratch / f"state-{name}"
        state.mkdir()
        started = time.monotonic()
        results[name] = execute(runs, scratch, workers, args.timeout, spawn=spawn, state=state)
        took = time.monotonic() - started
        print(f"{name}: {len(runs)} runs in {took:.1f} s ({len(runs) / took:.1f}/s, "
              f"{workers} at once)")  # fmt: skip
    differ = 0
    for (_label, argv), a, b in zip(runs, results["fork"], results["spawn"], strict=True):
        sa, sb = signature(a, scratch / "state-fork"), signature(b, scratch / "state-spawn")
        if sa != sb:
            differ += 1
            print(f"DIFFERS: kctl {_shown(argv)}\n    fork:  {sa}\n    spawn: {sb}")
    print(f"{differ} of {len(runs)} classified differently")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
