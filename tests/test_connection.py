"""Connection failures and client configuration: one line, non-zero exit, no traceback,
within --timeout."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends


def _one_error_line(r) -> str:
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r
    assert lines[0].startswith("kctl: error: "), r
    assert "Traceback" not in r.stderr
    assert r.stdout == ""
    return lines[0]


def test_closed_port_fails_fast_with_one_line(kctl):
    port = _closed_port()
    started = time.monotonic()
    r = kctl("-b", f"127.0.0.1:{port}", "--timeout", "5", "topics", "list")
    elapsed = time.monotonic() - started
    assert r.code == 1
    line = _one_error_line(r)
    assert f"cannot connect to 127.0.0.1:{port}" in line and "Connection refused" in line
    assert elapsed < 5 + 5  # within --timeout plus process start-up


def test_unresolvable_host_names_the_host(kctl):
    r = kctl("-b", "no-such-host.invalid:9092", "--timeout", "5", "topics", "list")
    assert r.code == 1
    line = _one_error_line(r)
    assert "cannot resolve no-such-host.invalid:9092" in line


@pytest.mark.parametrize(
    "command", [["cluster", "describe"], ["configs", "describe", "--topic", "x"]]
)
def test_every_broker_command_reports_unreachable_the_same_way(kctl, command):
    port = _closed_port()
    r = kctl("-b", f"127.0.0.1:{port}", "--timeout", "3", *command)
    assert r.code == 1
    assert f"cannot connect to 127.0.0.1:{port}" in _one_error_line(r)


def test_malformed_override_is_a_usage_error(kctl):
    r = kctl("-X", "no-equals-sign", "topics", "list")
    assert r.code == 2
    line = _one_error_line(r)
    assert "malformed -X value (expected key=value)" in line and "no-equals-sign" not in line


def test_unknown_client_property_names_it(kctl):
    r = kctl("-X", "no.such.property=1", "topics", "list")
    assert r.code == 1
    line = _one_error_line(r)
    assert "invalid client configuration" in line and "no.such.property" in line


def test_override_reaches_librdkafka(kctl, bootstrap):
    # client.id is a real librdkafka property: the command works with it.
    r = kctl("-X", "client.id=kctl-test", "topics", "list", "-o", "json")
    assert r.code == 0, r


def test_unknown_output_format_is_a_usage_error(kctl):
    r = kctl("-o", "xml", "topics", "list")
    assert r.code == 2
    assert "'xml' is not one of" in _one_error_line(r)


def test_missing_argument_is_a_one_line_usage_error(kctl):
    r = kctl("topics", "create")
    assert r.code == 2
    line = _one_error_line(r)
    assert line == "kctl: error: missing topic name (give it as the argument or with --topic)"


def test_command_config_properties_are_used(kctl, tmp_path: Path, bootstrap):
    props = tmp_path / "client.properties"
    props.write_text(f"# kafka-*.sh style\nbootstrap.servers={bootstrap}\nclient.id = from-props\n")
    r = kctl(
        "--command-config",
        str(props),
        "topics",
        "list",
        "-o",
        "json",
        env={"KCTL_BOOTSTRAP_SERVERS": ""},
    )
    assert r.code == 0, r


def test_unreadable_command_config_is_named(kctl, tmp_path: Path):
    r = kctl("--command-config", str(tmp_path / "missing.properties"), "topics", "list")
    assert r.code == 1
    assert "cannot read --command-config" in _one_error_line(r)


def test_jks_truststore_in_command_config_is_explained(kctl, tmp_path: Path):
    props = tmp_path / "ssl.properties"
    props.write_text(
        "security.protocol=SSL\nssl.truststore.location=/x.jks\nssl.truststore.type=JKS\n"
    )
    r = kctl("--command-config", str(props), "topics", "list")
    assert r.code == 1
    assert "JKS is not readable by librdkafka" in _one_error_line(r)


def test_a_truststore_without_a_type_is_jks_as_in_java_and_the_fix_is_named(kctl, tmp_path: Path):
    props = tmp_path / "client.properties"
    props.write_text("security.protocol=SSL\nssl.truststore.location=/etc/kafka/trust.jks\n")
    r = kctl("--command-config", str(props), "topics", "list")
    assert r.code == 1
    line = _one_error_line(r)
    assert "ssl.truststore.type JKS (no type given: Java's default) is not readable" in line
    assert "keytool -exportcert -rfc -keystore /etc/kafka/trust.jks" in line
    assert "OpenSSL" not in line and "ssl.ca.location" not in r.stdout


def test_a_pem_truststore_without_a_type_is_taken_as_pem(kctl, tmp_path: Path):
    props = tmp_path / "client.properties"
    props.write_text("security.protocol=SSL\nssl.truststore.location=/nonexistent/ca.pem\n")
    r = kctl("--command-config", str(props), "--timeout", "3", "topics", "list")
    assert r.code == 1 and "not readable by librdkafka" not in r.stderr


@pytest.fixture(scope="module")
def auth_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A second local broker that requires SASL. Tansu (memory storage) accepts no credentials
    at all — its user store keeps nothing — so it shows the wrong-credentials path only."""
    from kctl.errors import KctlError
    from kctl.local import broker

    state = tmp_path_factory.mktemp("auth-broker")
    try:
        info, _ = broker.start(
            port=broker.free_port(), directory=state, wait=30, extra_args=("--authentication",)
        )
    except KctlError as exc:
        pytest.fail(f"the SASL test broker did not start: {exc.line()}", pytrace=False)
    try:
        yield info.bootstrap
    finally:
        broker.stop(state)


def test_wrong_sasl_credentials_fail_fast_naming_authentication(kctl, auth_broker):
    started = time.monotonic()
    r = kctl(
        "-b", auth_broker, "--timeout", "10",
        "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanism=SCRAM-SHA-256",
        "-X", "sasl.username=alice", "-X", "sasl.password=wrong-secret-123",
        "topics", "list",
    )  # fmt: skip
    elapsed = time.monotonic() - started
    assert r.code == 1
    line = _one_error_line(r)
    assert f"authentication to {auth_broker} failed" in line
    assert "wrong-secret-123" not in r.stderr
    assert elapsed < 10


def test_debug_shows_traceback_but_never_the_password(kctl, auth_broker, tmp_path: Path):
    r = kctl(
        "--debug", "-b", auth_broker, "--timeout", "5",
        "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanism=SCRAM-SHA-512",
        "-X", "sasl.username=alice", "-X", "sasl.password=wrong-secret-456",
        "topics", "list",
    )  # fmt: skip
    assert r.code == 1
    assert "Traceback" in r.stderr
    assert "wrong-secret-456" not in r.stderr and "wrong-secret-456" not in r.stdout


def test_silent_listener_fails_within_timeout_saying_no_answer(kctl):
    # A socket that accepts connections (kernel backlog) but never speaks Kafka.
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        port = server.getsockname()[1]
        started = time.monotonic()
        r = kctl("-b", f"127.0.0.1:{port}", "--timeout", "3", "topics", "list")
        elapsed = time.monotonic() - started
    assert r.code == 1
    line = _one_error_line(r)
    assert f"127.0.0.1:{port}" in line
    assert elapsed < 3 + 5


def test_jks_keystore_in_command_config_is_explained(kctl, tmp_path: Path):
    props = tmp_path / "mtls.properties"
    props.write_text("security.protocol=SSL\nssl.keystore.location=/k.jks\nssl.keystore.type=JKS\n")
    r = kctl("--command-config", str(props), "topics", "list")
    assert r.code == 1
    assert "ssl.keystore.type JKS is not readable by librdkafka" in _one_error_line(r)


def test_malformed_command_config_line_names_file_and_line_only(offline_kctl, tmp_path: Path):
    # A password alone on a line (a broken continuation, a paste): never echoed.
    props = tmp_path / "client.properties"
    props.write_text("security.protocol=SASL_SSL\n# comment\nS3cr3t-Alone-On-A-Line\n")
    r = offline_kctl("--command-config", str(props), "topics", "list")
    assert r.code == 1
    line = _one_error_line(r)
    assert line == f"kctl: error: malformed line 3 in {props} (expected key=value)"
    assert "S3cr3t" not in r.stderr


def test_malformed_continued_line_is_not_echoed_either(offline_kctl, tmp_path: Path):
    props = tmp_path / "client.properties"
    props.write_text("client.id=x\npw-part-one\\\n  pw-part-two\n")
    r = offline_kctl("--command-config", str(props), "topics", "list")
    assert r.code == 1
    assert _one_error_line(r) == f"kctl: error: malformed line 2 in {props} (expected key=value)"
    assert "pw-part" not in r.stderr
