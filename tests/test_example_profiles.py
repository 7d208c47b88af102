"""The example profiles shipped in profiles/ load and turn into client configurations."""

from __future__ import annotations

from pathlib import Path

import pytest

from kctl import config
from kctl.broker.connect import kafka_python_config, librdkafka_config, resolve
from kctl.environment import Environment

PROFILES = sorted((Path(__file__).resolve().parent.parent / "profiles").glob("*.yaml"))


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.name)
def test_example_profile_loads_and_builds_both_client_configs(path, monkeypatch, tmp_path):
    monkeypatch.setenv("KCTL_CONFIG", str(path))
    monkeypatch.setenv("KAFKA_PASSWORD", "from-env")
    secret = tmp_path / "pw"
    secret.write_text("from-file\n")
    pfile = config.load(must_exist=True)
    for profile in pfile.profiles.values():
        if profile.tls and profile.tls.key_password:
            profile.tls.key_password = f"file:{secret}"
        pfile.profiles[profile.name] = profile
    monkeypatch.setattr(config, "load", lambda *a, **k: pfile)
    conn = resolve(Environment(profile=pfile.current))
    rd = librdkafka_config(conn)
    kp = kafka_python_config(conn)
    assert rd["bootstrap.servers"] == pfile.get(pfile.current).bootstrap_servers
    assert (
        rd["security.protocol"]
        == kp["security_protocol"]
        == pfile.get(pfile.current).security_protocol
    )
    if conn.sasl_password is not None:
        assert rd["sasl.password"] == kp["sasl_plain_password"] == "from-env"
    if conn.key_password is not None:
        assert rd["ssl.key.password"] == kp["ssl_password"] == "from-file"
