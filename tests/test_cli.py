"""The command line itself: help, version, examples, start-up imports, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kctl.cli import SUBCOMMANDS, hoist_global_options, invoked, register

app = register()  # every sub-command for real (a run registers only the one it invokes)

HEAVY = ("confluent_kafka", "kafka", "pyspark", "pyarrow")


def _commands(typer_app, prefix=()):  # every leaf command path
    import typer.main

    group = typer.main.get_group(typer_app)

    def walk(cmd, path):
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                yield from walk(sub, (*path, name))
        else:
            yield path

    yield from walk(group, prefix)


def test_help_imports_no_client_library():
    code = (
        "import sys\n"
        "from kctl.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_help_lists_every_command_group(offline_kctl):
    r = offline_kctl("--help")
    assert r.code == 0
    for group in ("topics", "configs", "cluster", "profile", "local"):
        assert group in r.stdout


@pytest.mark.parametrize("path", sorted(_commands(app)), ids=lambda p: " ".join(p))
def test_every_command_help_ends_with_an_example(offline_kctl, path):
    r = offline_kctl(*path, "--help")
    assert r.code == 0, r
    tail = r.stdout.rsplit("Example", 1)
    assert len(tail) == 2, f"no example in kctl {' '.join(path)} --help"
    assert "kctl " in tail[1]


def test_version(offline_kctl):
    from kctl import __version__

    r = offline_kctl("--version")
    assert r.code == 0 and r.stdout.strip() == f"kctl {__version__}"


def test_unknown_command_is_usage_error(offline_kctl):
    r = offline_kctl("topix")
    assert r.code == 2
    assert r.stderr.startswith("kctl: error: ") and len(r.stderr.strip().splitlines()) == 1


def test_global_options_are_hoisted_from_anywhere():
    argv = ["topics", "list", "-o", "json", "--pattern", "x", "-Xa=b", "--debug", "--timeout=3"]
    assert hoist_global_options(argv) == [
        "--output",
        "json",
        "-X",
        "a=b",
        "--debug",
        "--timeout",
        "3",
        "topics",
        "list",
        "--pattern",
        "x",
    ]
    assert hoist_global_options(["produce", "--", "-o"]) == ["produce", "--", "-o"]


def test_closed_pipe_ends_quietly_with_exit_zero(kctl_env, tmp_path):
    # Far more than a pipe buffer of rows through `head -n 1`: the reader leaves early.
    import yaml

    profiles = {f"p{i:05d}": {"bootstrap_servers": f"host-{i}.example:9092"} for i in range(3000)}
    config = tmp_path / "many.yaml"
    config.write_text(yaml.safe_dump({"profiles": profiles}))
    proc = subprocess.run(
        f"{sys.executable} -m kctl profile list -o jsonl | head -n 1; echo rc=${{PIPESTATUS[0]}}",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        env={**kctl_env, "KCTL_CONFIG": str(config)},
    )
    first, status = proc.stdout.splitlines()
    assert json.loads(first)["name"] == "p00000"
    assert status == "rc=0"
    assert proc.stderr == ""


def test_reader_leaving_mid_stream_ends_quietly_with_exit_zero(kctl_env):
    # The error would come while the command writes (inside Typer), not at the final flush.
    from conftest import FIXTURES

    seg = FIXTURES / "kafka-3.8-kraft-logs" / "__cluster_metadata-0" / "00000000000000000000.log"
    proc = subprocess.run(
        f"{sys.executable} -m kctl dump-segment --deep-iteration --cluster-metadata-decoder "
        f"-o jsonl {seg} | head -c 100 >/dev/null; echo rc=${{PIPESTATUS[0]}}",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        env=kctl_env,
    )
    assert proc.stdout.strip() == "rc=0"
    assert proc.stderr == ""


def test_ctrl_c_at_a_prompt_leaves_the_terminal_on_a_fresh_line(tmp_path):
    """^C at a confirmation prompt: exit 130, and the prompt's line is ended for the shell."""
    import os
    import pty
    import select
    import signal
    import time

    env = {k: v for k, v in os.environ.items() if not k.startswith("KCTL_")}
    env.update(KCTL_CONFIG=str(tmp_path / "config.yaml"), NO_COLOR="1")
    subprocess.run(
        [sys.executable, "-m", "kctl", "profile", "add", "doomed", "-b", "h:1"],
        env=env, capture_output=True, check=True,
    )  # fmt: skip
    master, slave = pty.openpty()  # the parent keeps the slave open: no output is lost
    proc = subprocess.Popen(
        [sys.executable, "-m", "kctl", "profile", "delete", "doomed"],
        stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True,
    )  # fmt: skip

    def read(until: bytes | None, timeout: float) -> bytes:
        got = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and (until is None or until not in got):
            if select.select([master], [], [], 0.2)[0]:
                got += os.read(master, 1024)
            elif until is None and proc.poll() is not None:
                break
        return got

    seen = read(b"[y/N] ", 30)
    assert seen.endswith(b"[y/N] "), seen
    proc.send_signal(signal.SIGINT)  # what the terminal sends on ^C
    assert proc.wait(timeout=30) == 130
    after = read(None, 5)
    os.close(slave)
    os.close(master)
    assert after.endswith(b"\n") and b"Traceback" not in after, after


def test_the_offsets_decode_help_example_runs(offline_kctl):
    key = "000100086d792d67726f757000066f726465727300000000"
    value = "0003000000000000002a0000000000000000018bcfe56800"
    help_text = " ".join(offline_kctl("offsets", "decode", "--help").stdout.split())
    assert f"kctl offsets decode --key {key} --value {value}" in help_text
    r = offline_kctl("offsets", "decode", "--key", key, "--value", value, "-o", "json")
    assert r.code == 0, r
    doc = json.loads(r.stdout)
    assert doc["key"]["data"] == {"group": "my-group", "topic": "orders", "partition": 0}
    assert doc["value"]["data"]["offset"] == 42


def test_each_placeholder_summary_is_the_sub_commands_own():
    """`kctl --help` lists placeholders; their summaries must be what the modules say."""
    for group in app.registered_groups:
        assert group.typer_instance is not None
        assert SUBCOMMANDS[group.name][2] == group.typer_instance.info.help, group.name
    for command in app.registered_commands:
        assert SUBCOMMANDS[command.name][2] == command.short_help, command.name
    assert {g.name for g in app.registered_groups} | {c.name for c in app.registered_commands} == (
        set(SUBCOMMANDS)
    )


def test_the_invoked_sub_command_is_found_after_global_options():
    assert invoked(["--bootstrap-server", "h:1", "-o", "json", "topics", "list"]) == "topics"
    assert invoked(["--debug", "dump-segment", "x.log"]) == "dump-segment"
    assert invoked(["--help"]) is None and invoked([]) is None
    assert invoked(["bogus"]) is None


def test_root_help_lists_every_sub_command_with_its_summary(offline_kctl):
    r = offline_kctl("--help")
    assert r.code == 0
    text = " ".join(r.stdout.split())
    for name, (_module, _kind, summary) in SUBCOMMANDS.items():
        assert name in text
        assert " ".join(summary.split())[:40] in text, name


def test_a_help_page_is_printed_from_the_cache_the_first_rendering_filled(tmp_path):
    from conftest import kctl_environment, run_kctl

    env = kctl_environment(XDG_CACHE_HOME=str(tmp_path / "cache"))
    first = run_kctl(env, "topics", "--help")
    assert first.code == 0 and "Usage: kctl topics" in first.stdout
    (page,) = (tmp_path / "cache" / "kctl" / "help").glob("*.txt")
    assert page.read_text() == first.stdout and page.stat().st_mode & 0o777 == 0o600
    assert run_kctl(env, "topics", "--help").stdout == first.stdout
    # The page really comes from the cache: a marked copy is what the next run prints ...
    page.write_text(first.stdout + "from-the-cache\n")
    assert run_kctl(env, "topics", "--help").stdout.endswith("from-the-cache\n")
    # ... unless the cache is off, or the page could have been written by someone else.
    off = run_kctl({**env, "KCTL_HELP_CACHE": "0"}, "topics", "--help")
    assert off.stdout == first.stdout
    page.chmod(0o666)
    assert run_kctl(env, "topics", "--help").stdout == first.stdout
    # Another terminal width is another page; errors and non-help runs are never cached.
    wide = run_kctl({**env, "COLUMNS": "120"}, "topics", "--help")
    assert wide.code == 0 and wide.stdout != first.stdout
    assert run_kctl(env, "no-such-command", "--help").code == 2
    assert len(list((tmp_path / "cache" / "kctl" / "help").glob("*.txt"))) == 2


def test_the_help_cache_key_changes_with_the_words_and_refuses_options():
    from kctl.entry import cache_key

    assert cache_key(["--help"]) is not None
    assert cache_key(["topics", "--help"]) not in (None, cache_key(["--help"]))
    assert cache_key(["topics", "-h"]) != cache_key(["topics", "--help"])
    for argv in ([], ["topics"], ["-o", "json", "--help"], ["topics", "list", "x", "y", "--help"]):
        assert cache_key(argv) is None, argv
