"""The profile file is safe: concurrent writers lose nothing, unsafe files are refused, secrets
are never shown, passwords stay out of argv. No broker needed: every test here is offline."""

from __future__ import annotations

import json
import multiprocessing
import os
import pty
import select
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from kctl import config

NOBODY = 65534
OTHER_USER = pytest.mark.skipif(os.getuid() != 0, reason="chown to another user needs root")


def _env(path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KCTL_")}
    env.update(KCTL_CONFIG=str(path), NO_COLOR="1", COLUMNS="200")
    return env


def run(path: Path, *args: str, input: str | None = None):
    proc = subprocess.run(
        [sys.executable, "-m", "kctl", *args],
        input=input,
        capture_output=True,
        text=True,
        env=_env(path),
        timeout=60,
        stdin=None if input is not None else subprocess.DEVNULL,
    )
    return proc


def one_error(proc) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc
    assert lines[0].startswith("kctl: error: "), proc
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""
    return lines[0]


@pytest.fixture
def cfg(tmp_path: Path) -> Path:
    directory = tmp_path / "kctl"
    directory.mkdir(mode=0o700)
    return directory / "config.yaml"


# --- A: concurrent writes ---------------------------------------------------------------------


def _writer(path: str, worker: int, count: int, errors) -> None:  # runs in a child process
    try:
        for i in range(count):
            name = f"w{worker}-{i}"
            with config.edit(Path(path)) as pfile:
                pfile.profiles[name] = config.Profile(name=name, bootstrap_servers=f"h{i}:9092")
            # after every write the file parses and holds every profile this worker wrote
            seen = config.load(Path(path)).profiles
            missing = [f"w{worker}-{j}" for j in range(i + 1) if f"w{worker}-{j}" not in seen]
            if missing:
                errors.put(f"worker {worker}: {missing} lost after write {i}")
                return
    except Exception as exc:
        errors.put(f"worker {worker}: {type(exc).__name__}: {exc}")


def test_four_processes_fifty_writes_each_lose_nothing(cfg: Path):
    ctx = multiprocessing.get_context("fork")
    errors = ctx.Queue()
    workers = [ctx.Process(target=_writer, args=(str(cfg), w, 50, errors)) for w in range(4)]
    for p in workers:
        p.start()
    parses = 0
    while any(p.is_alive() for p in workers):  # a reader alongside: never a partial file
        if cfg.exists():
            data = yaml.safe_load(cfg.read_text())
            assert data is None or isinstance(data["profiles"], dict)
            parses += 1
    for p in workers:
        p.join(60)
        assert p.exitcode == 0
    problems = []
    while not errors.empty():
        problems.append(errors.get())
    assert problems == []
    names = set(config.load(cfg).profiles)
    assert names == {f"w{w}-{i}" for w in range(4) for i in range(50)}
    assert stat.S_IMODE(os.stat(cfg).st_mode) == 0o600
    assert parses > 0
    assert [p.name for p in cfg.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_two_shells_adding_profiles_at_once_keep_all(cfg: Path):
    def shell(prefix: str) -> subprocess.Popen:
        script = "; ".join(
            f"{sys.executable} -m kctl profile add {prefix}{i} -b h:{i} || echo FAIL {prefix}{i}"
            for i in range(8)
        )
        return subprocess.Popen(
            ["sh", "-c", script],
            env=_env(cfg),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    shells = [shell("a"), shell("b")]
    outputs = [s.communicate(timeout=120) for s in shells]
    for out, err in outputs:
        assert "FAIL" not in out and "error" not in err, err
    assert set(config.load(cfg).profiles) == {f"{p}{i}" for p in "ab" for i in range(8)}


def test_save_fsyncs_and_keeps_mode_0600(cfg: Path, monkeypatch):
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    with config.edit(cfg) as pfile:
        pfile.profiles["x"] = config.Profile(name="x")
    assert len(synced) >= 2  # the file and its directory
    assert stat.S_IMODE(os.stat(cfg).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(str(cfg) + ".lock").st_mode) == 0o600


def test_a_failed_edit_changes_nothing(cfg: Path):
    with config.edit(cfg) as pfile:
        pfile.profiles["keep"] = config.Profile(name="keep")
    before = cfg.read_text()
    with pytest.raises(RuntimeError), config.edit(cfg) as pfile:
        pfile.profiles.clear()
        raise RuntimeError("boom")
    assert cfg.read_text() == before


# --- B: unsafe files --------------------------------------------------------------------------


def _add(cfg: Path, name: str = "p"):
    return run(cfg, "profile", "add", name, "-b", "h:1")


def test_group_writable_file_is_refused_for_reading_and_writing(cfg: Path):
    assert _add(cfg).returncode == 0
    os.chmod(cfg, 0o620)
    before = cfg.read_text()
    for args in (("profile", "list"), ("profile", "add", "q", "-b", "h:2")):
        r = run(cfg, *args)
        assert r.returncode == 1
        line = one_error(r)
        assert line == (
            f"kctl: error: unsafe profile file {cfg}: mode 0620 lets its group write it "
            f"(fix: chmod go-w {cfg})"
        )
    assert cfg.read_text() == before


def test_world_writable_file_is_refused(cfg: Path):
    assert _add(cfg).returncode == 0
    os.chmod(cfg, 0o606)
    r = run(cfg, "profile", "show", "p")
    assert r.returncode == 1 and "lets all users write it" in one_error(r)
    assert "chmod go-w" in r.stderr


def test_world_writable_directory_is_refused(cfg: Path):
    assert _add(cfg).returncode == 0
    os.chmod(cfg.parent, 0o777)
    try:
        for args in (("profile", "list"), ("profile", "add", "q", "-b", "h:2")):
            r = run(cfg, *args)
            assert r.returncode == 1
            line = one_error(r)
            assert f"unsafe profile directory {cfg.parent}: mode 0777" in line
            assert f"chmod go-w {cfg.parent}" in line
    finally:
        os.chmod(cfg.parent, 0o700)
    assert set(config.load(cfg).profiles) == {"p"}


@OTHER_USER
def test_file_owned_by_another_user_is_refused(cfg: Path):
    assert _add(cfg).returncode == 0
    os.chown(cfg, NOBODY, -1)
    r = run(cfg, "profile", "list")
    assert r.returncode == 1
    line = one_error(r)
    assert f"unsafe profile file {cfg}: it is owned by uid {NOBODY}" in line
    assert "not by you" in line and "fix: chown" in line
    r = run(cfg, "profile", "add", "q", "-b", "h:2")
    assert r.returncode == 1 and "owned by uid" in one_error(r)
    assert os.stat(cfg).st_uid == NOBODY and "q:" not in cfg.read_text()


@OTHER_USER
def test_directory_owned_by_another_user_is_refused(cfg: Path):
    assert _add(cfg).returncode == 0
    os.chown(cfg.parent, NOBODY, -1)
    r = run(cfg, "profile", "add", "q", "-b", "h:2")
    assert r.returncode == 1
    assert f"unsafe profile directory {cfg.parent}: it is owned by uid {NOBODY}" in one_error(r)


@OTHER_USER
def test_symlink_owned_by_another_user_is_refused(cfg: Path, tmp_path: Path):
    target = tmp_path / "real.yaml"
    target.write_text("profiles:\n  t:\n    bootstrap_servers: h:1\n")
    cfg.symlink_to(target)
    os.lchown(cfg, NOBODY, -1)
    r = run(cfg, "profile", "list")
    assert r.returncode == 1
    line = one_error(r)
    assert f"unsafe profile file {cfg}: it is a symlink owned by uid {NOBODY}" in line
    assert f"rm {cfg}" in line
    r = run(cfg, "profile", "add", "q", "-b", "h:2")
    assert r.returncode == 1 and "symlink owned by" in r.stderr
    assert "q:" not in target.read_text() and cfg.is_symlink()


def test_writes_go_through_a_symlink_of_ours(cfg: Path, tmp_path: Path):
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir(mode=0o700)
    target = dotfiles / "kctl.yaml"
    target.write_text("profiles:\n  t:\n    bootstrap_servers: h:1\n")
    cfg.symlink_to(target)
    assert _add(cfg, "new").returncode == 0
    assert cfg.is_symlink() and os.readlink(cfg) == str(target)  # the link stays a link
    assert set(yaml.safe_load(target.read_text())["profiles"]) == {"t", "new"}
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    assert run(cfg, "profile", "use", "new").returncode == 0
    assert cfg.is_symlink() and yaml.safe_load(target.read_text())["current_profile"] == "new"


def test_a_planted_tmp_symlink_is_never_followed(cfg: Path, tmp_path: Path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    os.chmod(victim, 0o644)
    planted = cfg.with_name("config.yaml.tmp")
    planted.symlink_to(victim)
    for name in ("a", "b"):
        assert _add(cfg, name).returncode == 0
    assert victim.read_text() == "precious\n"
    assert stat.S_IMODE(os.stat(victim).st_mode) == 0o644
    assert planted.is_symlink() and os.readlink(planted) == str(victim)
    assert set(config.load(cfg).profiles) == {"a", "b"} and not cfg.is_symlink()


def test_a_new_directory_is_private(tmp_path: Path):
    cfg = tmp_path / "new-dir" / "config.yaml"
    assert _add(cfg).returncode == 0
    assert stat.S_IMODE(os.stat(cfg.parent).st_mode) == 0o700


# --- C: secrets never shown -------------------------------------------------------------------

PEM = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----"
SECRETS = {
    "ssl.key.pem": PEM,
    "sasl.oauthbearer.config": "principal=admin-oauth-cfg",
    "sasl.oauthbearer.client.secret": "oauth-client-secret-1",
    "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required "
    'username="u" password="jaas-pw-1";',
    "ssl.keystore.password": "keystore-pw-1",
    "ssl.truststore.password": "truststore-pw-1",
    "ssl.key.password": "key-pw-1",
    "sasl.password": "sasl-pw-X",
    "sasl.oauthbearer.assertion.private.key.passphrase": "passphrase-1",
    "some.custom.blob": "-----BEGIN ENCRYPTED PRIVATE KEY-----\nabc\n-----END",
}
NEEDLES = [
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
    "admin-oauth-cfg",
    "oauth-client-secret-1",
    "jaas-pw-1",
    "keystore-pw-1",
    "truststore-pw-1",
    "key-pw-1",
    "sasl-pw-X",
    "passphrase-1",
    "BEGIN ENCRYPTED",
    "hunter2-literal",
    "tls-key-pw-2",
]


@pytest.mark.parametrize("fmt", ["table", "plain", "json", "jsonl", "yaml", "csv"])
def test_profile_show_masks_every_secret_in_every_format(cfg: Path, fmt: str):
    xs = [arg for key, value in SECRETS.items() for arg in ("-X", f"{key}={value}")]
    r = run(
        cfg,
        "profile", "add", "s", "-b", "h:1", "--security-protocol", "SASL_SSL",
        "--sasl-username", "ops", "--sasl-password", "hunter2-literal",
        "--key-password", "tls-key-pw-2",
        "-X", "client.id=visible-id",
        "-X", "sasl.oauthbearer.token.endpoint.url=https://idp.example/token",
        *xs,
    )  # fmt: skip
    assert r.returncode == 0, r
    out = run(cfg, "profile", "show", "s", "-o", fmt)
    assert out.returncode == 0, out
    for needle in NEEDLES:
        assert needle not in out.stdout and needle not in out.stderr, (needle, out.stdout)
    assert out.stdout.count("********") >= len(SECRETS) + 2
    for shown in ("visible-id", "ops", "https://idp.example/token"):
        assert shown in out.stdout
    if fmt in ("json", "jsonl"):
        doc = json.loads(out.stdout)
        assert doc["client"]["ssl.key.pem"] == "********"
        assert doc["client"]["sasl.oauthbearer.config"] == "********"
        assert doc["sasl"]["password"] == "********"
        assert doc["tls"]["key_password"] == "********"


def test_references_are_shown_not_masked(cfg: Path):
    r = run(cfg, "profile", "add", "r", "-X", "ssl.key.pem=file:/etc/kafka/key.pem")
    assert r.returncode == 0
    doc = json.loads(run(cfg, "profile", "show", "r", "-o", "json").stdout)
    assert doc["client"]["ssl.key.pem"] == "file:/etc/kafka/key.pem"


def test_one_list_decides_what_is_secret():
    for key in SECRETS:
        assert config.is_secret(key, SECRETS[key]), key
    for key in ("ssl.key.pem", "sasl.oauthbearer.config", "ssl.keystore.key", "sasl.jaas.config"):
        assert config.is_secret_key(key), key
    for key in ("client.id", "ssl.key.location", "sasl.oauthbearer.token.endpoint.url"):
        assert not config.is_secret(key, "x"), key


def test_connection_repr_masks_secrets():
    from kctl.broker.connect import Connection

    conn = Connection(
        "h:1",
        sasl_password="pw-in-repr",
        key_password="kp-in-repr",
        extra={"ssl.key.pem": PEM, "client.id": "cid"},
    )
    text = repr(conn)
    assert "pw-in-repr" not in text and "kp-in-repr" not in text and "MIIE" not in text
    assert "cid" in text and "h:1" in text


# --- D: passwords not in argv, names ----------------------------------------------------------


def _stored_password(cfg: Path, name: str) -> str:
    return yaml.safe_load(cfg.read_text())["profiles"][name]["sasl"]["password"]


def _run_on_pty(cfg: Path, args: list[str], typed: bytes) -> tuple[int, str]:
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kctl", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=_env(cfg),
        close_fds=True,
    )
    out = b""
    try:  # the slave stays open here while reading, so the master never reads EOF/EIO early
        deadline = time.monotonic() + 30
        while b"password for profile" not in out and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                out += os.read(master, 4096)
            if proc.poll() is not None and not ready:
                break
        assert b"password for profile" in out, out
        os.write(master, typed)
        code = proc.wait(timeout=30)
        while select.select([master], [], [], 0.2)[0]:
            chunk = os.read(master, 4096)
            if not chunk:
                break
            out += chunk
    finally:
        os.close(slave)
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    return code, out.decode(errors="replace")


@pytest.mark.parametrize("form", [["--sasl-password", "-"], ["--sasl-password"]])
def test_password_prompt_on_a_terminal_is_hidden(cfg: Path, form: list[str]):
    args = ["profile", "add", "t", "-b", "h:1", "--sasl-username", "ops", *form, "--use"]
    code, out = _run_on_pty(cfg, args, b"typed-secret-9\n")
    assert code == 0, out
    assert "typed-secret-9" not in out  # not echoed
    assert _stored_password(cfg, "t") == "typed-secret-9"
    assert "process list" not in out  # nothing was on the command line
    assert yaml.safe_load(cfg.read_text())["current_profile"] == "t"


def test_password_with_no_value_as_last_argument_prompts(cfg: Path):
    code, out = _run_on_pty(cfg, ["profile", "add", "u", "--sasl-password"], b"pw-last\n")
    assert code == 0, out
    assert _stored_password(cfg, "u") == "pw-last"


@pytest.mark.parametrize("form", [["--sasl-password", "-"], ["--sasl-password"]])
def test_password_prompt_without_a_terminal_is_refused(cfg: Path, form: list[str]):
    r = run(cfg, "profile", "add", "t", "-b", "h:1", *form)
    assert r.returncode == 1
    line = one_error(r)
    assert "stdin is not a terminal" in line and "--sasl-password-file" in line
    assert not cfg.exists()


def test_password_from_a_file(cfg: Path, tmp_path: Path):
    pw = tmp_path / "pw"
    pw.write_text("from-file-pw\n")
    r = run(cfg, "profile", "add", "f", "--sasl-username", "u", "--sasl-password-file", str(pw))
    assert r.returncode == 0, r
    assert _stored_password(cfg, "f") == "from-file-pw"
    assert "process list" not in r.stderr and "from-file-pw" not in r.stderr
    r = run(cfg, "profile", "add", "g", "--sasl-password-file", str(tmp_path / "missing"))
    assert r.returncode == 1 and "cannot read --sasl-password-file" in one_error(r)
    r = run(cfg, "profile", "add", "h", "--sasl-password", "x", "--sasl-password-file", str(pw))
    assert r.returncode == 2 and "give the SASL password once" in one_error(r)


def test_password_in_argv_keeps_the_warning_and_names_the_process_list(cfg: Path):
    r = run(cfg, "profile", "add", "w", "--sasl-password", "argv-pw")
    assert r.returncode == 0
    warning = r.stderr.splitlines()[0]
    assert warning.startswith("kctl: warning: a literal secret is stored in the profile file")
    assert "process list" in warning and "--sasl-password-file" in warning
    assert "argv-pw" not in r.stderr


def _stored_key_password(cfg: Path, name: str) -> str:
    return yaml.safe_load(cfg.read_text())["profiles"][name]["tls"]["key_password"]


@pytest.mark.parametrize("form", [["--key-password", "-"], ["--key-password"]])
def test_key_password_prompt_on_a_terminal_is_hidden(cfg: Path, form: list[str]):
    args = ["profile", "add", "k", "-b", "h:1", "--key-file", "/tmp/k.pem", *form]
    code, out = _run_on_pty(cfg, args, b"typed-key-pw-3\n")
    assert code == 0, out
    assert "typed-key-pw-3" not in out  # not echoed
    assert _stored_key_password(cfg, "k") == "typed-key-pw-3"
    assert "process list" not in out


def test_key_password_from_a_file_or_refused_without_a_terminal(cfg: Path, tmp_path: Path):
    pw = tmp_path / "kpw"
    pw.write_text("key-file-pw\n")
    r = run(cfg, "profile", "add", "f", "--key-file", "/tmp/k.pem", "--key-password-file", str(pw))
    assert r.returncode == 0, r
    assert _stored_key_password(cfg, "f") == "key-file-pw"
    assert "process list" not in r.stderr and "key-file-pw" not in r.stderr
    r = run(cfg, "profile", "add", "g", "--key-password")
    assert r.returncode == 1
    line = one_error(r)
    assert "cannot ask for the key password" in line and "--key-password-file" in line
    r = run(cfg, "profile", "add", "h", "--key-password", "x", "--key-password-file", str(pw))
    assert r.returncode == 2 and "give the key password once" in one_error(r)
    r = run(cfg, "profile", "add", "i", "--key-password", "argv-key-pw")
    assert r.returncode == 0
    assert "process list" in r.stderr and "--key-password-file" in r.stderr
    assert "argv-key-pw" not in r.stderr


@pytest.mark.parametrize("name", ["", " ", "\t"])
def test_empty_profile_names_are_refused(cfg: Path, name: str):
    r = run(cfg, "profile", "add", name, "-b", "h:1")
    assert r.returncode == 2
    assert one_error(r).startswith("kctl: error: empty profile name")
    assert not cfg.exists()


def test_a_shared_sticky_directory_is_refused_with_the_right_fix(tmp_path: Path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    r = run(shared / "config.yaml", "profile", "add", "p", "-b", "h:1")
    assert r.returncode == 1
    line = one_error(r)
    assert f"unsafe profile directory {shared}: mode 1777" in line
    assert "set KCTL_CONFIG to a file in a private directory" in line
    assert not (shared / "config.yaml").exists()
