"""A profile's schema_registry block: parsing, masking, `profile add`, and which registry an
invocation uses (--schema-registry > KCTL_SCHEMA_REGISTRY_URL > the profile's block)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kctl import config
from kctl.commands._common import NO_SCHEMA_REGISTRY, registry_settings
from kctl.environment import Environment
from kctl.errors import ConfigError, UsageError

URL = "http://127.0.0.1:8081/apis/ccompat/v7"


def _profile(block, name: str = "p") -> config.Profile:
    return config.profile_from_dict(
        name, {"bootstrap_servers": "h:1", "schema_registry": block}, "t"
    )


def test_block_is_parsed_with_every_key():
    p = _profile(
        {
            "url": URL,
            "basic_auth_user_info": "env:SR_AUTH",
            "ca_file": "/ca.pem",
            "cert_file": "/c.pem",
            "key_file": "/k.pem",
        }
    )
    assert p.schema_registry == config.SchemaRegistry(
        URL, "env:SR_AUTH", "/ca.pem", "/c.pem", "/k.pem"
    )
    assert _profile({"url": URL}).to_dict()["schema_registry"] == {"url": URL}


@pytest.mark.parametrize(
    ("block", "words"),
    [
        ({"url": URL, "password": "x"}, "unknown key 'password' in profile 'p' schema_registry"),
        ({"basic_auth_user_info": "a:b"}, "schema_registry has no url"),
        ({"url": "registry:8081"}, "is not an http:// or https:// URL"),
        ("http://x", "schema_registry is not a mapping"),
    ],
)
def test_bad_blocks_are_refused(block, words):
    with pytest.raises(ConfigError) as exc:
        _profile(block)
    assert words in exc.value.line()


def test_user_info_and_url_password_are_masked():
    literal = _profile({"url": "https://u:pw@reg:8081", "basic_auth_user_info": "alice:hunter2"})
    shown = config.masked(literal)["schema_registry"]
    assert shown == {"url": "https://u:********@reg:8081", "basic_auth_user_info": "********"}
    ref = _profile({"url": URL, "basic_auth_user_info": "env:SR_AUTH"})
    assert config.masked(ref)["schema_registry"]["basic_auth_user_info"] == "env:SR_AUTH"


def _env(url: str | None = None, variables: dict | None = None) -> Environment:
    return Environment(schema_registry=url, timeout=7.0, variables=variables or {})


def test_option_over_profile_and_none_is_a_usage_error():
    p = _profile({"url": "http://profile-reg:8081", "basic_auth_user_info": "a:b"})
    s = registry_settings(_env(URL), p)
    # another server than the profile's: the profile's credentials are not sent to it
    assert (s.url, s.user_info, s.source, s.timeout) == (URL, None, "--schema-registry", 7.0)
    s = registry_settings(_env(URL, {"KCTL_SCHEMA_REGISTRY_URL": URL}), p)
    assert s.source == "KCTL_SCHEMA_REGISTRY_URL"
    s = registry_settings(_env(), p)
    assert (s.url, s.user_info, s.source) == ("http://profile-reg:8081", "a:b", "profile 'p'")
    # the profile's own URL given explicitly keeps its credentials
    assert registry_settings(_env("http://profile-reg:8081/"), p).user_info == "a:b"
    with pytest.raises(UsageError) as exc:
        registry_settings(_env(), None)
    assert exc.value.line() == NO_SCHEMA_REGISTRY
    with pytest.raises(UsageError):
        registry_settings(_env(), config.profile_from_dict("q", {"bootstrap_servers": "h"}, "t"))
    with pytest.raises(UsageError, match="not an http"):
        registry_settings(_env("reg:8081"), None)


def test_user_info_from_url_and_secret_references(monkeypatch, tmp_path: Path):
    s = registry_settings(_env("https://bob:s%40cret@reg:8081/api"), None)
    assert (s.url, s.user_info) == ("https://reg:8081/api", "bob:s@cret")
    monkeypatch.setenv("SR_AUTH", "alice:from-env")
    assert registry_settings(_env(), _profile({"url": URL, "basic_auth_user_info": "env:SR_AUTH"})
                             ).user_info == "alice:from-env"  # fmt: skip
    secret = tmp_path / "auth"
    secret.write_text("alice:from-file\n")
    secret.chmod(0o600)
    p = _profile({"url": URL, "basic_auth_user_info": f"file:{secret}"})
    assert registry_settings(_env(), p).user_info == "alice:from-file"
    monkeypatch.delenv("SR_AUTH")
    with pytest.raises(ConfigError, match="SR_AUTH is not set"):
        registry_settings(_env(), _profile({"url": URL, "basic_auth_user_info": "env:SR_AUTH"}))


def test_profile_add_and_show(offline_kctl, tmp_path: Path):
    r = offline_kctl(
        "profile",
        "add",
        "reg",
        "-b",
        "h:1",
        "--schema-registry",
        URL,
        "--registry-user-info",
        "env:SR_AUTH",
        "--registry-ca-file",
        "/ca.pem",
    )
    assert r.code == 0, r
    saved = yaml.safe_load((tmp_path / "kctl-config.yaml").read_text())
    assert saved["profiles"]["reg"]["schema_registry"] == {
        "url": URL,
        "basic_auth_user_info": "env:SR_AUTH",
        "ca_file": "/ca.pem",
    }
    shown = json.loads(offline_kctl("profile", "show", "reg", "-o", "json").stdout)
    assert shown["schema_registry"]["url"] == URL
    r = offline_kctl(
        "profile", "add", "lit", "--schema-registry", URL, "--registry-user-info", "a:hunter2"
    )
    assert r.code == 0 and "literal secret" in r.stderr, r
    r = offline_kctl("profile", "show", "lit")
    assert "hunter2" not in r.stdout and "********" in r.stdout, r
    r = offline_kctl("profile", "add", "bad", "--registry-user-info", "env:X")
    assert r.code != 0 and "--schema-registry URL" in r.stderr, r


def test_hoisting_takes_only_a_url():
    from kctl.cli import hoist_global_options, invoked

    assert hoist_global_options(["schemas", "list", "--schema-registry", URL]) == [
        "--schema-registry",
        URL,
        "schemas",
        "list",
    ]
    assert hoist_global_options(["local", "up", "--schema-registry", "--registry-port", "1"]) == [
        "local",
        "up",
        "--schema-registry",
        "--registry-port",
        "1",
    ]
    assert invoked(["--schema-registry", URL, "topics", "list"]) == "topics"
