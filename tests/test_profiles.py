"""kctl profile: the YAML profile file, masking, permissions and bad files."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import yaml


def _config(kctl_env) -> Path:
    return Path(kctl_env["KCTL_CONFIG"])


def test_add_use_list_show_delete_round_trip(kctl, kctl_env, bootstrap):
    r = kctl("profile", "add", "local", "-b", bootstrap, "--use")
    assert r.code == 0, r
    r = kctl(
        "profile",
        "add",
        "prod",
        "-b",
        "kafka-1:9093",
        "--security-protocol",
        "SASL_SSL",
        "--sasl-mechanism",
        "SCRAM-SHA-512",
        "--sasl-username",
        "ops",
        "--sasl-password",
        "env:KAFKA_PASSWORD",
        "--ca-file",
        "/etc/ca.pem",
        "-X",
        "client.id=ops",
    )
    assert r.code == 0, r
    listed = json.loads(kctl("profile", "list", "-o", "json").stdout)
    assert [(p["name"], p["current"]) for p in listed] == [("local", True), ("prod", False)]
    shown = json.loads(kctl("profile", "show", "prod", "-o", "json").stdout)
    assert shown["sasl"] == {
        "mechanism": "SCRAM-SHA-512",
        "username": "ops",
        "password": "env:KAFKA_PASSWORD",
    }
    assert shown["tls"]["ca_file"] == "/etc/ca.pem"
    assert shown["client"] == {"client.id": "ops"}
    r = kctl("profile", "use", "prod")
    assert (
        r.code == 0 and yaml.safe_load(_config(kctl_env).read_text())["current_profile"] == "prod"
    )
    r = kctl("profile", "delete", "prod", "--yes")
    assert r.code == 0, r
    assert [p["name"] for p in json.loads(kctl("profile", "list", "-o", "json").stdout)] == [
        "local"
    ]


def test_profile_file_is_private(kctl, kctl_env):
    kctl("profile", "add", "p1", "-b", "127.0.0.1:9092")
    mode = stat.S_IMODE(os.stat(_config(kctl_env)).st_mode)
    assert mode == 0o600


def test_literal_secrets_are_masked_everywhere(kctl, kctl_env):
    r = kctl(
        "profile",
        "add",
        "lit",
        "-b",
        "h:1",
        "--security-protocol",
        "SASL_PLAINTEXT",
        "--sasl-username",
        "u",
        "--sasl-password",
        "hunter2-literal",
        "-X",
        "sasl.oauthbearer.client.secret=s3cr3t",
    )
    assert r.code == 0
    assert "literal secret" in r.stderr
    for fmt in ("json", "jsonl", "yaml", "table", "plain", "csv"):
        out = kctl("profile", "show", "lit", "-o", fmt)
        assert out.code == 0, out
        assert "hunter2-literal" not in out.stdout and "s3cr3t" not in out.stdout
        assert "********" in out.stdout


def test_profile_is_used_for_connections(kctl, kctl_env, bootstrap, new_topic):
    name = new_topic()
    kctl("profile", "add", "here", "-b", bootstrap, "--use")
    env = {"KCTL_BOOTSTRAP_SERVERS": ""}
    r = kctl("topics", "list", "-o", "json", env=env)
    assert r.code == 0, r
    assert name in [t["topic"] for t in json.loads(r.stdout)]
    # -p chooses another profile; a bad one fails with the address it tried.
    kctl("profile", "add", "nowhere", "-b", "127.0.0.1:1")
    r = kctl("-p", "nowhere", "--timeout", "3", "topics", "list", env=env)
    assert r.code == 1 and "cannot connect to 127.0.0.1:1" in r.stderr


def test_env_secret_reference_must_be_set(kctl, kctl_env, bootstrap):
    kctl(
        "profile",
        "add",
        "sec",
        "-b",
        bootstrap,
        "--security-protocol",
        "SASL_PLAINTEXT",
        "--sasl-mechanism",
        "PLAIN",
        "--sasl-username",
        "u",
        "--sasl-password",
        "env:KCTL_TEST_UNSET_VAR",
    )
    r = kctl("-p", "sec", "topics", "list")
    assert r.code == 1
    assert r.stderr.strip() == (
        "kctl: error: environment variable KCTL_TEST_UNSET_VAR is not set "
        "(referenced by profile 'sec' sasl.password)"
    )


def test_unknown_profile_lists_known_ones(kctl):
    kctl("profile", "add", "alpha", "-b", "h:1")
    r = kctl("-p", "beta", "topics", "list")
    assert r.code == 1
    assert "unknown profile 'beta'" in r.stderr and "alpha" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_corrupt_profile_file_names_file_and_line(kctl, kctl_env):
    path = _config(kctl_env)
    path.write_text("profiles:\n  a:\n    bootstrap_servers: [unclosed\n")
    r = kctl("profile", "list")
    assert r.code == 1
    assert r.stderr.startswith(f"kctl: error: corrupt profile file {path} (line ")
    assert "Traceback" not in r.stderr
    r = kctl("-p", "a", "topics", "list")  # the profile is needed: an error
    assert r.code == 1 and r.stderr.startswith("kctl: error: corrupt profile file")


def test_a_corrupt_profile_file_does_not_block_an_explicit_bootstrap(kctl, kctl_env, bootstrap):
    path = _config(kctl_env)
    path.write_text("profiles:\n  a:\n    bootstrap_servers: [unclosed\n")
    r = kctl("-b", bootstrap, "topics", "list", "-o", "json")
    assert r.code == 0, r
    assert isinstance(json.loads(r.stdout), list)
    assert r.stderr.startswith(
        f"kctl: warning: ignoring the profile file: corrupt profile file {path}"
    )
    assert len(r.stderr.splitlines()) == 1


def test_profile_with_unknown_key_is_rejected(kctl, kctl_env):
    _config(kctl_env).write_text("profiles:\n  a:\n    bootstrap: h:1\n")
    r = kctl("profile", "list")
    assert r.code == 1 and "unknown key 'bootstrap'" in r.stderr


def test_use_without_profile_file_says_how_to_create_one(kctl):
    r = kctl("profile", "use", "x")
    assert r.code == 1 and "does not exist" in r.stderr and "kctl profile add" in r.stderr


def test_delete_needs_confirmation_without_terminal(kctl):
    kctl("profile", "add", "keepme", "-b", "h:1")
    r = kctl("profile", "delete", "keepme")
    assert r.code == 1 and "refusing" in r.stderr
    assert "keepme" in kctl("profile", "list").stdout


def test_adding_existing_profile_needs_force(kctl):
    kctl("profile", "add", "dup", "-b", "h:1")
    r = kctl("profile", "add", "dup", "-b", "h:2")
    assert r.code == 1 and "already exists" in r.stderr
    assert kctl("profile", "add", "dup", "-b", "h:2", "--force").code == 0
