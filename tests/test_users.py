"""kctl users on the session cluster beside kafka-configs.sh (ConfigCommand): SCRAM
credentials created, described and deleted, and the password never in any output."""

from __future__ import annotations

import json

import pytest
from conftest import on_tansu, unique

pytestmark = pytest.mark.skipif(on_tansu(), reason="Tansu keeps no SCRAM users")


def _kafka_scram(kafka_tool, bootstrap: str, user: str) -> str:
    return kafka_tool(
        "kafka.admin.ConfigCommand", "--bootstrap-server", bootstrap, "--describe",
        "--entity-type", "users", "--entity-name", user,
    ).stdout  # fmt: skip


def test_a_scram_user_is_created_described_and_deleted(kctl, kafka_tool, bootstrap, tmp_path):
    user, secret = unique("alice"), "pw-" + unique("s")
    path = tmp_path / "pw"
    path.write_text(secret + "\n")
    runs = [kctl("users", "set-password", user, "--password-file", str(path), "-o", "json")]
    assert runs[-1].code == 0, runs[-1]
    assert json.loads(runs[-1].stdout) == [
        {"user": user, "mechanism": "SCRAM-SHA-256", "iterations": 8192}
    ]
    runs.append(kctl("users", "set-password", user, "--password", "env:ALICE_PW",
                     "--mechanism", "scram-sha-512", "--iterations", "4096",
                     env={"ALICE_PW": secret}))  # fmt: skip
    assert runs[-1].code == 0 and "warning" not in runs[-1].stderr, runs[-1]
    theirs = _kafka_scram(kafka_tool, bootstrap, user)
    assert "SCRAM-SHA-256=iterations=8192" in theirs and "SCRAM-SHA-512=iterations=4096" in theirs
    runs.append(kctl("users", "describe", user, "-o", "json"))
    assert json.loads(runs[-1].stdout) == [
        {"user": user, "mechanism": "SCRAM-SHA-256", "iterations": 8192},
        {"user": user, "mechanism": "SCRAM-SHA-512", "iterations": 4096},
    ]
    runs.append(kctl("users", "list", "-o", "name"))
    assert user in runs[-1].stdout.split()
    runs.append(kctl("users", "delete", user, "--mechanism", "SCRAM-SHA-512"))
    assert runs[-1].code == 1 and "without --yes" in runs[-1].stderr
    runs.append(kctl("users", "delete", user, "--mechanism", "SCRAM-SHA-512", "--yes"))
    assert runs[-1].code == 0, runs[-1]
    assert "SCRAM-SHA-512" not in _kafka_scram(kafka_tool, bootstrap, user)
    runs.append(kctl("users", "delete", user, "--yes", "--debug"))
    assert runs[-1].code == 0, runs[-1]
    runs.append(kctl("users", "describe", user))
    assert runs[-1].code == 1 and f"user {user!r} has no SCRAM credentials" in runs[-1].stderr
    for r in runs:
        assert secret not in r.stdout and secret not in r.stderr


def test_a_password_on_the_command_line_is_warned_about(kctl):
    user = unique("carol")
    r = kctl("users", "set-password", user, "--password", "visible-in-ps")
    assert r.code == 0 and "shows in the process list" in r.stderr, r
    assert "visible-in-ps" not in r.stdout + r.stderr
    assert kctl("users", "delete", user, "--yes").code == 0


@pytest.mark.parametrize(
    ("args", "message", "code"),
    [
        (("set-password", "u", "--password", "x", "--mechanism", "MD5"), "unknown SCRAM mechanism", 2),
        (("set-password", "u", "--password", "x", "--iterations", "100"), "out of range", 2),
        (("set-password", "u"), "stdin is not a terminal", 1),
        (("set-password", "u", "--password", "env:KCTL_NO_SUCH_VAR"), "is not set", 1),
        (("set-password", "u", "--password-file", "/nonexistent/pw"), "cannot read", 1),
        (("set-password", " "), "empty user name", 2),
    ],
)  # fmt: skip
def test_bad_user_input_is_one_line(kctl, args, message, code):
    r = kctl("users", *args)
    lines = r.stderr.strip().splitlines()
    assert r.code == code and len(lines) == 1 and message in lines[0], r
