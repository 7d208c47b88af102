"""Shell completion, driven as the shell drives it: ``_KCTL_COMPLETE=complete_bash`` with
``COMP_WORDS``/``COMP_CWORD`` on a real ``python -m kctl`` process (the program name is given
by kctl.cli, so ``python -m kctl`` and the ``kctl`` script use the same variable), and once
through the bash script ``kctl --show-completion bash`` prints."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Run, commit_offsets, unique, wait_for

from kctl.cli import completion_args
from kctl.environment import OUTPUT_FORMATS


def complete(env: dict[str, str], words: str, timeout: float = 30) -> Run:
    """Candidates for the last word of ``words`` (empty when it ends with a space)."""
    parts = words.split()
    cword = len(parts) if words.endswith(" ") else len(parts) - 1
    proc = subprocess.run(
        [sys.executable, "-m", "kctl"],
        env={
            **env,
            "_KCTL_COMPLETE": "complete_bash",
            "COMP_WORDS": words,
            "COMP_CWORD": str(cword),
        },
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


def candidates(env: dict[str, str], words: str) -> list[str]:
    r = complete(env, words)
    assert r.code == 0 and r.stderr == "", r
    return r.stdout.split()


def _commit(bootstrap: str, group: str, topic: str) -> None:
    commit_offsets(bootstrap, group, {(topic, 0): 0})


# -- pure: how the words are arranged before completing ---------------------------------------


def test_completion_args_hoist_global_options():
    assert completion_args(["topics", "describe", "-b", "h:1", "--timeout=2"]) == [
        "--bootstrap-server",
        "h:1",
        "--timeout",
        "2",
        "topics",
        "describe",
    ]


def test_a_global_option_waiting_for_its_value_is_completed_by_the_root():
    assert completion_args(["topics", "list", "-p", "x", "-o"]) == ["--profile", "x", "--output"]


# -- offline: formats and profiles ------------------------------------------------------------


@pytest.fixture
def offline_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KCTL_")}
    env.update(KCTL_CONFIG=str(tmp_path / "kctl-config.yaml"), KCTL_BOOTSTRAP_SERVERS="127.0.0.1:1")
    return env


@pytest.mark.parametrize(
    "words", ["kctl -o ", "kctl topics list -o ", "kctl topics list --output ", "kctl -o"]
)
def test_output_formats_are_offered(offline_env, words):
    got = candidates(offline_env, words)
    if words.endswith("-o"):
        assert got == ["-o"]  # the option itself, then its values after a space
    else:
        assert got == list(OUTPUT_FORMATS)


def test_output_formats_filtered_by_the_typed_prefix(offline_env):
    assert candidates(offline_env, "kctl groups list -o js") == ["json", "jsonl"]
    assert candidates(offline_env, "kctl -o n") == ["name"]


def test_profiles_are_offered(offline_env, offline_kctl, tmp_path):
    env = {**offline_env}
    for name in ("prod", "prod-eu", "staging"):
        subprocess.run(
            [sys.executable, "-m", "kctl", "-b", "h:9092", "profile", "add", name],
            env=env,
            check=True,
            capture_output=True,
        )
    assert candidates(env, "kctl profile use ") == ["prod", "prod-eu", "staging"]
    assert candidates(env, "kctl profile show pro") == ["prod", "prod-eu"]
    assert candidates(env, "kctl profile delete st") == ["staging"]
    assert candidates(env, "kctl -p ") == ["prod", "prod-eu", "staging"]
    assert candidates(env, "kctl topics list --profile s") == ["staging"]


def test_a_broken_profile_file_gives_no_candidates_and_no_noise(offline_env, tmp_path):
    Path(offline_env["KCTL_CONFIG"]).write_text("profiles: [this is: not {a profile\n")
    for words in ("kctl -p ", "kctl profile use ", "kctl topics describe "):
        r = complete(offline_env, words)
        assert (r.code, r.stdout.strip(), r.stderr) == (0, "", ""), (words, r)


# -- the cluster -----------------------------------------------------------------------------


TOPIC_WORDS = [
    "kctl topics describe {p}",
    "kctl topics delete {p}",
    "kctl topics add-partitions {p}",
    "kctl topics describe --topic {p}",
    "kctl configs describe --topic {p}",
    "kctl configs set --entity-type topics --entity-name {p}",
    "kctl produce {p}",
    "kctl produce --topic {p}",
    "kctl consume {p}",
    "kctl consume --topic {p}",
    "kctl offsets get {p}",
    "kctl records delete {p}",
    "kctl perf produce {p}",
    "kctl perf consume {p}",
    "kctl groups lag --topic {p}",
    "kctl groups reset-offsets g --topic {p}",
    "kctl groups delete-offsets g -t {p}",
    "kctl partitions elect-leaders --topic {p}",
    "kctl partitions reassign generate -t {p}",
]


@pytest.fixture(scope="module")
def completion_topics(bootstrap: str) -> tuple[str, list[str]]:
    """Two topics sharing a fresh prefix, created with the real client library (as conftest's
    new_topic, once for the module)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    prefix = unique("cmp")
    names = sorted(unique(prefix) for _ in range(2))
    for future in admin.create_topics([NewTopic(n, 1, 1) for n in names]).values():
        future.result(timeout=30)
    wait_for(
        lambda: set(names) <= set(admin.list_topics(timeout=10).topics), f"topics {names} visible"
    )
    return prefix, names


@pytest.fixture
def env(kctl_env) -> dict[str, str]:
    return kctl_env


@pytest.mark.parametrize("words", TOPIC_WORDS)
def test_topics_are_offered(env, completion_topics, words):
    prefix, names = completion_topics
    assert candidates(env, words.format(p=prefix)) == names


def test_topics_typed_already_are_not_offered_again(env, completion_topics):
    prefix, names = completion_topics
    assert candidates(env, f"kctl topics describe {names[0]} {prefix}") == names[1:]


def test_internal_topics_only_when_asked_for(env, bootstrap, completion_topics):
    _commit(bootstrap, unique("cmp-g"), completion_topics[1][0])  # __consumer_offsets exists
    assert "__consumer_offsets" not in candidates(env, "kctl topics describe ")
    assert "__consumer_offsets" in candidates(env, "kctl topics describe __")


def test_global_options_after_the_command_reach_completion(kctl_env, bootstrap, completion_topics):
    """-b and --timeout after the sub-command (hoisted as for a run), no environment."""
    prefix, names = completion_topics
    env = {k: v for k, v in kctl_env.items() if k != "KCTL_BOOTSTRAP_SERVERS"}
    words = f"kctl topics describe -b {bootstrap} --timeout 10 {prefix}"
    assert candidates(env, words) == names
    # The profile the command line names is the connection.
    subprocess.run(
        [sys.executable, "-m", "kctl", "-b", bootstrap, "profile", "add", "here"],
        env=env,
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [sys.executable, "-m", "kctl", "-b", "127.0.0.1:1", "profile", "add", "nowhere", "--use"],
        env=env,
        check=True,
        capture_output=True,
    )
    assert candidates(env, f"kctl consume {prefix}") == []  # the current profile: nowhere
    assert candidates(env, f"kctl consume -p here {prefix}") == names
    assert candidates(env, f"kctl -p here consume --topic {prefix}") == names


def test_groups_with_committed_offsets_are_offered(env, bootstrap, completion_topics):
    prefix, names = completion_topics
    groups = sorted(unique(f"{prefix}-g") for _ in range(2))
    for g in groups:
        _commit(bootstrap, g, names[0])
    for words in (
        "kctl groups describe {p}",
        "kctl groups describe --group {p}",
        "kctl groups lag {p}",
        "kctl groups delete {p}",
        "kctl groups delete-offsets {p}",
        "kctl groups reset-offsets {p}",
        "kctl groups reset-offsets --group {p}",
        "kctl consume t --group {p}",
    ):
        assert candidates(env, words.format(p=prefix)) == groups, words


@pytest.mark.parametrize("bootstrap_server", ["127.0.0.1:1", "192.0.2.1:9092"])
@pytest.mark.parametrize(
    "words", ["kctl topics describe ", "kctl groups describe ", "kctl consume --topic x"]
)
def test_an_unreachable_cluster_gives_nothing_at_all(offline_env, bootstrap_server, words):
    """Connection refused, and an address that never answers: no candidates, no message, exit
    0, within the completion timeout (3 s; the subprocess is bounded at 30 s)."""
    env = {**offline_env, "KCTL_BOOTSTRAP_SERVERS": bootstrap_server}
    r = complete(env, words)
    assert (r.code, r.stdout.strip(), r.stderr) == (0, "", ""), r


def test_the_bash_script_completes_through_the_kctl_program(env, completion_topics):
    """What an operator's shell runs: the script from --show-completion, calling `kctl`."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.fail("bash is needed for this test")
    prefix, names = completion_topics
    bin_dir = Path(sys.executable).parent
    assert (bin_dir / "kctl").exists(), "the kctl console script (pip install -e .)"
    script = (
        'eval "$(kctl --show-completion bash)"\n'
        f'COMP_WORDS=(kctl topics describe "{prefix}"); COMP_CWORD=3\n'
        "_kctl_completion kctl\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
        'COMP_WORDS=(kctl topics list -o ""); COMP_CWORD=4\n'
        "_kctl_completion kctl\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    proc = subprocess.run(
        [bash, "--norc", "--noprofile", "-c", script],
        env={**env, "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", "SHELL": bash},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [*names, *OUTPUT_FORMATS]
