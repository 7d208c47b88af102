"""kctl's whole command tree as test cases: every parameter of every command, with the argv
that gives it one value, so a test over the tree covers a new command without being told.

Runs go through a separate process with the arguments as bytes, exactly as a shell passes
them (Python then decodes what is not UTF-8 as surrogate escapes)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

# Nothing listens here: a command that got past its arguments fails to connect, quickly.
NOWHERE = "127.0.0.1:1"


@dataclass(frozen=True)
class Param:
    words: tuple[str, ...]  # the command's words: ("topics", "describe"); () for the root
    param: Any  # the click parameter

    @property
    def is_option(self) -> bool:
        return self.param.param_type_name == "option"

    @property
    def label(self) -> str:
        return f"kctl {' '.join(self.words)} {'/'.join(self.param.opts)}".replace("  ", " ")

    def names(self) -> set[str]:
        """How an error line may name the parameter: any of its options, or an argument's
        metavar or name in capitals."""
        if self.is_option:
            return set(self.param.opts)
        return {str(self.param.metavar or ""), str(self.param.name).upper()} - {""}

    def argv(self, value: bytes) -> list[bytes]:
        """``kctl -b NOWHERE WORDS... <the parameter given value>``; earlier positional
        arguments of the command get a plain ``x``."""
        head = [b"-b", NOWHERE.encode(), b"--timeout", b"2", *(w.encode() for w in self.words)]
        if self.is_option:
            return [*head, self.param.opts[0].encode(), value]
        before = []
        for p in self.command.params:
            if p is self.param:
                break
            if p.param_type_name == "argument":
                before.append(b"x")
        return [*head, *before, b"--", value]

    @property
    def command(self) -> Any:
        return _commands()[self.words]


_TREE: dict[tuple[str, ...], Any] = {}


def _commands() -> dict[tuple[str, ...], Any]:
    if not _TREE:
        import typer

        from kctl import cli

        root = typer.main.get_command(cli.register(None))

        def walk(cmd: Any, words: tuple[str, ...]) -> None:
            _TREE[words] = cmd
            for name, sub in (getattr(cmd, "commands", None) or {}).items():
                walk(sub, (*words, name))

        walk(root, ())
    return _TREE


def params() -> Iterator[Param]:
    """Every parameter a user can give a value (no flags, no --help)."""
    from typer._click import types

    for words, cmd in _commands().items():
        for p in cmd.params:
            if getattr(p, "is_flag", False) or getattr(p, "count", False):
                continue
            if isinstance(p.type, types.BoolParamType) or p.name == "help":
                continue
            yield Param(words, p)


def kind(p: Param) -> str:
    from typer._click import types

    t = p.param.type
    if type(t).__name__ == "TyperPath":
        return "path"
    if isinstance(t, types.IntParamType):
        return "int"
    if isinstance(t, types.FloatParamType):
        return "float"
    if isinstance(t, types.StringParamType):
        return "str"
    return type(t).__name__


@dataclass(frozen=True)
class Result:
    code: int
    stdout: str
    stderr: str


def run(argv: Sequence[bytes], *, timeout: float = 60) -> Result:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KCTL_")}
    env.update(NO_COLOR="1", COLUMNS="200", KCTL_CONFIG="/nonexistent/kctl-test-config.yaml")
    proc = subprocess.run(
        [sys.executable.encode(), b"-m", b"kctl", *argv],
        capture_output=True,
        env=env,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    return Result(
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


def failures(
    cases: Sequence[tuple[str, list[bytes], Callable[[Result], str | None]]], workers: int = 3
) -> list[str]:
    """Run every case (label, argv, check) in a small pool; the check answers None (fine) or
    what is wrong. Returns one line per case that went wrong."""

    def one(case: tuple[str, list[bytes], Callable[[Result], str | None]]) -> str | None:
        label, argv, check = case
        try:
            result = run(argv)
        except subprocess.TimeoutExpired:
            return f"{label}: still running after 60 s"
        problem = check(result)
        return None if problem is None else f"{label}: {problem}"

    with ThreadPoolExecutor(workers) as pool:
        return [p for p in pool.map(one, cases) if p is not None]


def usage_error(names: set[str], *fragments: str) -> Callable[[Result], str | None]:
    """The check of a rejected argument: exit 2, nothing on stdout, one ``kctl: error:`` line
    naming the parameter (one of ``names``) and holding each fragment."""

    def check(r: Result) -> str | None:
        lines = r.stderr.splitlines()
        if r.code != 2 or r.stdout or len(lines) != 1:
            return f"exit {r.code}, stdout {r.stdout[:80]!r}, stderr {r.stderr[-300:]!r}"
        line = lines[0]
        if not line.startswith("kctl: error: "):
            return f"not an error line: {line!r}"
        if not any(n in line for n in names):
            return f"does not name {sorted(names)}: {line!r}"
        missing = [f for f in fragments if f not in line]
        if missing:
            return f"lacks {missing}: {line!r}"
        return None

    return check
