"""A bounded, fixed-seed sample of the generated command-line fuzzer (fuzz/cli.py): every sampled
invocation of every command keeps kctl's promise (one error line, exit 0/1/2/3/130, nothing on
stdout on error, no traceback, no ``unexpected``, no native crash, no hang), against the
session's cluster and against an unreachable broker. Also: the generated set covers every
command with more than 20,000 cases, and the fork server classifies like fresh processes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = 600  # runs; about 20 s on 2 cores with 8 at once
SEED = 1


def fuzz_cli() -> ModuleType:
    """fuzz/cli.py as a module (fuzz/ is no package)."""
    name = "kctl_fuzz_cli"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "fuzz" / "cli.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules[name]


def test_generated_cases_cover_every_command_with_over_20000(tmp_path: Path) -> None:
    fuzz = fuzz_cli()
    commands, runs = fuzz.plan(tmp_path, [fuzz.UNREACHABLE])
    labels = {label for label, _ in runs}
    assert len(runs) > 20_000
    assert len(commands) > 70
    for cmd in commands:
        name = " ".join(cmd.path)
        assert f"{name} (baseline)" in labels
        assert any(label.startswith(f"-X {name}") for label in labels), name
    for family in (" twice", " optionish", " with --", "--output after ", "--timeout "):
        assert any(family in label for label in labels), family


def test_forked_cases_end_as_fresh_processes_do(tmp_path: Path) -> None:
    """The same exit code and first stderr line forked by the warm server as in a fresh
    ``python -m kctl`` per case: run one at a time in the same order, each way with its own
    profile directory (cases add profiles)."""
    fuzz = fuzz_cli()
    _, runs = fuzz.plan(tmp_path, [fuzz.UNREACHABLE], kctl_timeout="2", n=30, seed=SEED)
    runs += [("help", [b"topics", b"--help"]), ("version", [b"--version"])]
    seen = {}
    for name, spawn in (("fork", False), ("spawn", True)):
        state = tmp_path / name
        state.mkdir()
        outcomes = fuzz.execute(runs, tmp_path, workers=1, timeout=30, spawn=spawn, state=state)
        seen[name] = [fuzz.signature(o, state) for o in outcomes]
    differ = [
        f"kctl {fuzz._shown(argv)}: forked {a}, spawned {b}"
        for (_, argv), a, b in zip(runs, seen["fork"], seen["spawn"], strict=True)
        if a != b
    ]
    assert not differ, "\n".join(differ)
    assert seen["fork"][-2] == (0, b"")  # topics --help


def fixtures() -> dict[str, bytes]:
    """Every file under tests/data, by path: the fuzzer reads them and must never write one."""
    data = ROOT / "tests" / "data"
    return {str(f): f.read_bytes() for f in sorted(data.rglob("*")) if f.is_file()}


def test_sampled_invocations_keep_the_promise(bootstrap: str, tmp_path: Path) -> None:
    fuzz = fuzz_cli()
    before = fixtures()
    _, runs = fuzz.plan(
        tmp_path, [bootstrap, fuzz.UNREACHABLE], kctl_timeout="2", n=SAMPLE, seed=SEED
    )
    assert len(runs) == SAMPLE
    outcomes = fuzz.execute(runs, tmp_path, workers=8, timeout=30)
    found = fuzz.findings(runs, outcomes)
    lines = [
        f"{f.kind}: {f.replay()}\n    "
        + (f.outcome.stderr.decode("utf-8", "replace").strip().splitlines() or [""])[-1][:200]
        for f in found
    ]
    assert not found, f"{len(found)} of {SAMPLE} runs broke the promise:\n" + "\n".join(lines)
    after = fixtures()
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"the sampled runs wrote into tests/data: {changed}"
