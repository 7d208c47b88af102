"""A secured local Kafka cluster, end to end: ``kctl local up --security sasl_ssl`` (SCRAM over
TLS, StandardAuthorizer, nothing allowed without an ACL) and ``--security ssl`` (client
certificates). Users are created with kctl, log in over SASL_SSL with the cluster's CA, and are
held to the ACLs and quotas kctl sets; a wrong password or a certificate of another CA is
refused in one line. Each mode gets a 1-broker cluster of its own, started through the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Run, kctl_environment, run_kctl, unique, wait_for

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("KCTL_TEST_BOOTSTRAP"))
    or os.environ.get("KCTL_TEST_ENGINE", "kafka") != "kafka",
    reason="needs the local Apache Kafka engine (secured clusters of its own)",
)


class Secured:
    """A secured local cluster and a kctl profile file of its own."""

    def __init__(self, home: Path, mode: str) -> None:
        self.home = home
        self.mode = mode
        self.env = kctl_environment(
            KCTL_STATE_DIR=str(home / "state"), KCTL_CONFIG=str(home / "config" / "config.yaml")
        )
        self.doc: dict[str, Any] = {}

    def kctl(self, *args: str, input: str | None = None, timeout: float = 120) -> Run:
        return run_kctl(self.env, *args, input=input, timeout=timeout)

    def admin(self, *args: str, input: str | None = None) -> Any:
        """``kctl --profile local-admin ARGS -o json``, which must succeed."""
        r = self.kctl("--profile", "local-admin", *args, "-o", "json", input=input)
        assert r.code == 0, r
        return json.loads(r.stdout) if r.stdout.strip() else None

    @property
    def bootstrap(self) -> str:
        return str(self.doc["bootstrap"])

    @property
    def material(self) -> Path:
        return self.home / "state" / "local-cluster" / "security"

    def password_file(self, user: str, password: str) -> Path:
        path = self.home / f"{user}.password"
        path.write_text(password + "\n")
        path.chmod(0o600)
        return path

    def user(self, name: str, password: str, profile: str | None = None) -> str:
        """A SCRAM user made with kctl and a profile that logs in as it; returns the profile."""
        pw = self.password_file(name, password)
        self.admin("users", "set-password", name, "--password-file", str(pw))
        return self.profile(profile or name, name, self.password_file(f"{name}-p", password))

    def profile(self, profile: str, user: str, password_file: Path) -> str:
        r = self.kctl(
            "-b", self.bootstrap, "profile", "add", profile, "--force",
            "--security-protocol", "SASL_SSL", "--sasl-mechanism", "SCRAM-SHA-256",
            "--sasl-username", user, "--sasl-password", f"file:{password_file}",
            "--ca-file", str(self.material / "ca.pem"),
        )  # fmt: skip
        assert r.code == 0, r
        return profile

    def topic(self, name: str) -> str:
        self.admin("topics", "create", name, "--partitions", "1", "--replication-factor", "1")
        return name


def _start(home: Path, mode: str) -> Secured:
    s = Secured(home, mode)
    (home / "config").mkdir(mode=0o700)
    r = s.kctl(
        "local", "up", "--engine", "kafka", "--brokers", "1", "--port", "0",
        "--security", mode, "-o", "json", timeout=300,
    )  # fmt: skip
    if r.code != 0:
        logs = "".join(
            p.read_text()[-3000:] for p in (home / "state").glob("local-cluster/node-*/node.log")
        )
        pytest.fail(f"the {mode} cluster did not start: {r.stderr}\n{logs}", pytrace=False)
    s.doc = json.loads(r.stdout)
    return s


def _stop(s: Secured) -> None:
    r = s.kctl("local", "down", "--purge", timeout=120)
    if r.code != 0:  # never leave JVMs behind
        from kctl.local import kafka_cluster

        recorded = kafka_cluster.read_state(s.home / "state")
        if recorded is not None:
            kafka_cluster.kill_all(recorded)


@pytest.fixture(scope="module")
def sasl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secured]:
    s = _start(tmp_path_factory.mktemp("sasl-ssl"), "sasl_ssl")
    try:
        yield s
    finally:
        _stop(s)


def _error_line(r: Run) -> str:
    """The one ``kctl: error:`` line (produce also prints its summary line before it)."""
    errors = [x for x in r.stderr.splitlines() if x.startswith("kctl: error:")]
    assert len(errors) == 1 and "Traceback" not in r.stderr, r
    return errors[0]


def _one_error_line(r: Run) -> str:
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r
    assert "Traceback" not in r.stderr
    return lines[0]


# --- the cluster and its admin -------------------------------------------------------------


def test_secured_cluster_writes_an_admin_profile_with_secrets_as_file_references(
    sasl: Secured,
) -> None:
    assert sasl.doc["security"] == "sasl_ssl" and sasl.doc["profile"] == "local-admin"
    config = Path(sasl.env["KCTL_CONFIG"])
    assert config.stat().st_mode & 0o777 == 0o600
    text = config.read_text()
    password = (sasl.material / "admin.password").read_text().strip()
    assert password not in text
    assert f"file:{sasl.material / 'admin.password'}" in text
    for secret in ("admin.password", "ca.key", "broker.pem", "admin.key"):
        assert (sasl.material / secret).stat().st_mode & 0o777 == 0o600, secret
    assert sasl.material.stat().st_mode & 0o777 == 0o700
    # the broker's properties hold the admin's password (its inter-broker login): 0600 too
    for props in (sasl.home / "state" / "local-cluster").glob("node-*/server.properties"):
        assert props.stat().st_mode & 0o777 == 0o600
    # the admin is a super user: it sees the cluster and its own SCRAM credentials
    users = sasl.admin("users", "list")
    assert {("admin", "SCRAM-SHA-512")} <= {(u["user"], u["mechanism"]) for u in users}


def test_a_plaintext_client_cannot_reach_the_sasl_ssl_listener(sasl: Secured) -> None:
    env = {**sasl.env, "KCTL_CONFIG": str(sasl.home / "none.yaml")}  # no profile: PLAINTEXT
    r = run_kctl(env, "-b", sasl.bootstrap, "--timeout", "5", "topics", "list")
    assert r.code == 1, r
    _one_error_line(r)


# --- SCRAM logins ---------------------------------------------------------------------------


def test_a_scram_user_made_with_kctl_logs_in_over_sasl_ssl(sasl: Secured) -> None:
    profile = sasl.user("carol", "carol-s3cret-pw")
    r = sasl.kctl("--profile", profile, "topics", "list", "-o", "json")
    assert r.code == 0, r  # logged in: no ACL yet, so no topic is visible
    assert json.loads(r.stdout) == []
    described = sasl.admin("users", "describe", "carol")
    assert [(d["mechanism"], d["iterations"]) for d in described] == [("SCRAM-SHA-256", 8192)]


def test_a_wrong_password_is_refused_in_one_line_within_the_timeout(sasl: Secured) -> None:
    sasl.user("dave", "dave-right-pw")
    wrong = sasl.profile("dave-wrong", "dave", sasl.password_file("dave-wrong", "not-it-at-all"))
    started = time.monotonic()
    r = sasl.kctl("--profile", wrong, "--timeout", "5", "topics", "list")
    took = time.monotonic() - started
    assert r.code == 1, r
    line = _one_error_line(r)
    assert line.startswith("kctl: error: authentication to ") and "failed" in line, line
    assert "not-it-at-all" not in r.stdout + r.stderr
    assert took < 5 + 20, took  # --timeout bounds it (the slack is process start-up)


def test_no_password_shows_in_outputs_debug_logs_errors_or_the_process_list(
    sasl: Secured,
) -> None:
    secret = "erin-Secret-" + unique("pw")
    profile = sasl.user("erin", secret)
    bad = sasl.profile("erin-bad", "erin", sasl.password_file("erin-bad", secret + "-typo"))
    topic = sasl.topic(unique("erin"))
    sasl.admin("acls", "add", "--principal", "User:erin", "--operation", "All", "--topic", topic)
    seen = []
    for args in (
        ("--profile", profile, "--debug", "topics", "list"),
        ("--profile", bad, "--debug", "--timeout", "5", "topics", "list"),
        ("--profile", profile, "profile", "show", profile, "-o", "json"),
        ("--profile", profile, "--debug", "produce", topic, "--value", "x"),
    ):
        r = sasl.kctl(*args)
        seen.append(r.stdout + r.stderr)
        assert secret not in r.stdout + r.stderr, args
    assert any("librdkafka" in s for s in seen)  # the debug log was there to search
    # a running consumer: its command line and environment
    proc = subprocess.Popen(
        [sys.executable, "-m", "kctl", "--profile", profile, "consume", topic, "-f"],
        env=sasl.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: Path(f"/proc/{proc.pid}/cmdline").exists(), "the consumer to start")
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes()
        environ = Path(f"/proc/{proc.pid}/environ").read_bytes()
        assert secret.encode() not in cmdline and secret.encode() not in environ
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# --- ACLs -----------------------------------------------------------------------------------


def test_prefixed_write_lets_alice_produce_to_orders_topics_and_nothing_else(
    sasl: Secured,
) -> None:
    alice = sasl.user("alice", "alice-pw-1")
    orders, payments = sasl.topic("orders-eu"), sasl.topic("payments")
    refused = sasl.kctl("--profile", alice, "produce", orders, "--value", "before")
    assert refused.code == 1 and "'orders-eu'" in _one_error_line(refused)
    added = sasl.admin(
        "acls", "add", "--principal", "User:alice", "--operation", "Write",
        "--topic", "orders-", "--pattern-type", "prefixed",
    )  # fmt: skip
    assert len(added) == 1
    r = sasl.kctl("--profile", alice, "produce", orders, "--value", "o-1")
    assert r.code == 0, r
    r = sasl.kctl("--profile", alice, "produce", payments, "--value", "p-1")
    assert r.code == 1
    line = _one_error_line(r)
    assert "'payments'" in line and "not authorized" in line, line
    listed = sasl.admin("acls", "list", "--principal", "User:alice")
    assert [
        (a["resource_type"], a["resource_name"], a["pattern_type"], a["operation"]) for a in listed
    ] == [("TOPIC", "orders-", "PREFIXED", "WRITE")]


def test_bob_with_read_on_the_topic_and_group_g_consumes(sasl: Secured) -> None:
    bob = sasl.user("bob", "bob-pw-2")
    topic = sasl.topic(unique("bob-in"))
    sasl.admin("produce", topic, "--value", "for-bob")
    sasl.admin("acls", "add", "--principal", "User:bob", "--operation", "Read", "--topic", topic)
    r = sasl.kctl("--profile", bob, "consume", topic, "--group", "g", "-n", "1", "--timeout", "10")
    line = _one_error_line(r)  # the group is not his yet
    assert r.code == 1 and line.startswith("kctl: error: not authorized to use group 'g'"), r
    sasl.admin("acls", "add", "--principal", "User:bob", "--operation", "Read", "--group", "g")
    r = sasl.kctl("--profile", bob, "consume", topic, "--group", "g", "-n", "1", "-o", "plain")
    assert r.code == 0, r
    assert r.stdout.split() == ["for-bob"]


def test_a_deny_overrides_an_allow_and_removing_it_restores_access(sasl: Secured) -> None:
    frank = sasl.user("frank", "frank-pw-3")
    topic = sasl.topic(unique("deny"))
    sasl.admin("acls", "add", "--principal", "User:frank", "--operation", "Write", "--topic", topic)
    assert sasl.kctl("--profile", frank, "produce", topic, "--value", "1").code == 0
    deny = ("--deny-principal", "User:frank", "--operation", "Write", "--topic", topic)
    sasl.admin("acls", "add", *deny)
    r = sasl.kctl("--profile", frank, "produce", topic, "--value", "2")
    # the deny leaves frank no Write anywhere: the broker refuses him a producer id
    assert r.code == 1 and f"'{topic}'" in _error_line(r)
    assert "CLUSTER_AUTHORIZATION_FAILED" in _error_line(r)
    r = sasl.kctl("--profile", frank, "produce", topic, "--value", "2", "--no-idempotence")
    assert r.code == 1 and "TOPIC_AUTHORIZATION_FAILED" in _error_line(r), r
    removed = sasl.admin(
        "acls", "remove", "--principal", "User:frank", "--permission", "deny",
        "--operation", "Write", "--topic", topic, "--yes",
    )  # fmt: skip
    assert [a["permission"] for a in removed] == ["DENY"]
    assert sasl.kctl("--profile", frank, "produce", topic, "--value", "3").code == 0
    # and removing the allow restores the refusal
    sasl.admin("acls", "remove", "--principal", "User:frank", "--topic", topic, "--yes")
    r = sasl.kctl("--profile", frank, "produce", topic, "--value", "4")
    assert r.code == 1 and f"'{topic}'" in _one_error_line(r)


# --- quotas ---------------------------------------------------------------------------------


def test_a_user_producer_quota_is_enforced_and_reported_as_broker_throttling(
    sasl: Secured,
) -> None:
    """Kafka measures a quota over 11 one-second samples, so a burst is throttled once it
    exceeds the quota times about 10 s: 1.5 MB against 100 KB/s is (KIP-219: the broker answers
    with a throttle time, and the client waits it out)."""
    grace = sasl.user("grace", "grace-pw-4")
    topic = sasl.topic(unique("quota"))
    sasl.admin("acls", "add", "--principal", "User:grace", "--operation", "Write", "--topic", topic)
    sasl.admin("quotas", "set", "--user", "grace", "producer_byte_rate=102400")
    described = sasl.admin("quotas", "describe", "--user", "grace")
    assert described == [{"entity": {"user": "grace"}, "quotas": {"producer_byte_rate": 102400.0}}]
    data = sasl.home / "grace.txt"
    data.write_text(("y" * 100 + "\n") * 15000)
    r = sasl.kctl("--profile", grace, "produce", topic, "--file", str(data), "-o", "json")
    assert r.code == 0, r  # throttled is not stalled: kctl waits as the broker says
    summary = json.loads(r.stdout)
    assert summary["delivered"] == 15000
    assert summary["throttled_responses"] >= 1 and summary["throttle_seconds"] > 0, summary
    assert "throttled by the broker" in r.stderr


# --- TLS with client certificates -----------------------------------------------------------


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Secured]:
    s = _start(tmp_path_factory.mktemp("ssl"), "ssl")
    try:
        yield s
    finally:
        _stop(s)


def _cert_profile(s: Secured, name: str, cert: Path, key: Path, *extra: str) -> str:
    r = s.kctl(
        "-b", s.bootstrap, "profile", "add", name, "--force", "--security-protocol", "SSL",
        "--ca-file", str(s.material / "ca.pem"), "--cert-file", str(cert), "--key-file",
        str(key), *extra,
    )  # fmt: skip
    assert r.code == 0, r
    return name


def test_the_admin_certificate_is_a_super_user_on_the_ssl_cluster(tls: Secured) -> None:
    topic = tls.topic(unique("tls"))
    tls.admin("produce", topic, "--value", "over-tls")
    r = tls.kctl("--profile", "local-admin", "consume", topic, "-o", "plain")
    assert r.code == 0 and r.stdout.split() == ["over-tls"], r


def test_a_certificate_of_another_ca_is_refused_in_one_line(tls: Secured, tmp_path: Path) -> None:
    from kctl.local import security

    ca, ca_key = security.make_ca(tmp_path / "rogue", "rogue CA")
    cert, key = security.issue(tmp_path / "rogue", "mallory", "admin", ca, ca_key)
    rogue = _cert_profile(tls, "rogue", cert, key)
    r = tls.kctl("--profile", rogue, "--timeout", "5", "topics", "list")
    assert r.code == 1, r
    _one_error_line(r)


def test_a_certificate_of_the_cluster_ca_is_held_to_acls_by_its_common_name(
    tls: Secured, tmp_path: Path
) -> None:
    from kctl.local import security

    m = tls.material
    cert, key = security.issue(tmp_path, "henry", "henry", m / "ca.pem", m / "ca.key")
    henry = _cert_profile(tls, "henry", cert, key)
    topic = tls.topic(unique("henry"))
    r = tls.kctl("--profile", henry, "produce", topic, "--value", "1")
    assert r.code == 1 and f"'{topic}'" in _one_error_line(r)
    tls.admin("acls", "add", "--principal", "User:henry", "--operation", "Write", "--topic", topic)
    assert tls.kctl("--profile", henry, "produce", topic, "--value", "2").code == 0


def _loopback_alias() -> str | None:
    """A name other than localhost that /etc/hosts maps to 127.0.0.1 (not in the broker's
    certificate), if the machine has one."""
    try:
        lines = Path("/etc/hosts").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split("#", 1)[0].split()
        if fields and fields[0] == "127.0.0.1":
            for name in fields[1:]:
                if name not in ("localhost", "localhost.localdomain"):
                    return name
    return None


def test_hostname_verification_is_on_unless_the_profile_turns_it_off(tls: Secured) -> None:
    admin = tls.kctl("profile", "show", "local-admin", "-o", "json")
    assert json.loads(admin.stdout)["tls"]["verify_hostname"] is True
    alias = _loopback_alias()
    if alias is None:
        pytest.skip("no other name for 127.0.0.1 in /etc/hosts to connect by")
    port = tls.bootstrap.split(":")[1]
    m = tls.material
    for name, extra in (("by-alias", ()), ("by-alias-unverified", ("--no-verify-hostname",))):
        r = tls.kctl(
            "-b", f"{alias}:{port}", "profile", "add", name, "--force", "--security-protocol",
            "SSL", "--ca-file", str(m / "ca.pem"), "--cert-file", str(m / "admin.pem"),
            "--key-file", str(m / "admin.key"), *extra,
        )  # fmt: skip
        assert r.code == 0, r
    refused = tls.kctl("--profile", "by-alias", "--timeout", "5", "topics", "list")
    assert refused.code == 1, refused  # the certificate names localhost and 127.0.0.1 only
    assert "TLS handshake" in _one_error_line(refused), refused
    accepted = tls.kctl("--profile", "by-alias-unverified", "--timeout", "10", "topics", "list")
    assert accepted.code == 0, accepted


# --- delegation tokens ----------------------------------------------------------------------


def test_a_delegation_token_logs_in_with_kafkas_client_until_it_is_expired(
    sasl: Secured, kafka_tool: Any, tmp_path: Path
) -> None:
    """kctl makes, renews and expires the token; Kafka's own client (TopicCommand) logs in with
    it (SCRAM with tokenauth=true: librdkafka, under kctl, has no token login)."""
    topic = sasl.topic(unique("tok"))
    hmac = tmp_path / "token.hmac"
    created = sasl.admin(
        "tokens", "create", "--hmac-file", str(hmac), "--renewer-principal", "User:ops"
    )
    token = created[0]
    assert token["hmac"] == f"file:{hmac}" and token["owner"] == "User:admin"
    assert token["renewers"] == "User:ops"
    assert hmac.stat().st_mode & 0o777 == 0o600
    described = {t["token_id"]: t for t in sasl.admin("tokens", "describe")}
    assert described[token["token_id"]]["hmac"] == "********"
    shown = sasl.admin("tokens", "describe", "--show-hmac")
    assert [t["hmac"] for t in shown if t["token_id"] == token["token_id"]] == [
        hmac.read_text().strip()
    ]
    props = tmp_path / "token.properties"
    props.write_text(
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-256\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{token["token_id"]}" password="{hmac.read_text().strip()}" tokenauth="true";\n'
        f"ssl.truststore.type=PEM\nssl.truststore.location={sasl.material / 'ca.pem'}\n"
        "default.api.timeout.ms=15000\nrequest.timeout.ms=10000\n"
    )

    def topics() -> Any:
        return kafka_tool(
            "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", sasl.bootstrap,
            "--command-config", str(props), "--list", check=False, timeout=90,
        )  # fmt: skip

    listed = topics()
    assert listed.returncode == 0 and topic in listed.stdout.split(), listed.stderr[-2000:]
    before = time.time() * 1000
    renewed = sasl.admin("tokens", "renew", "--hmac-file", str(hmac), "--renew-time-period",
                         "3600000")  # fmt: skip
    assert before + 3_500_000 < renewed[0]["expiry_ms"] <= time.time() * 1000 + 3_600_000
    refused = sasl.kctl("--profile", "local-admin", "tokens", "expire", "--hmac-file", str(hmac))
    assert refused.code != 0 and "without --yes" in _one_error_line(refused)
    sasl.admin("tokens", "expire", "--hmac-file", str(hmac), "--yes")
    assert token["token_id"] not in {t["token_id"] for t in sasl.admin("tokens", "describe")}
    after = topics()
    refusal = after.stdout + after.stderr  # TopicCommand prints its error on stdout
    assert after.returncode != 0 and "Authentication failed" in refusal, refusal[-2000:]


def test_a_malformed_hmac_or_principal_is_one_line(sasl: Secured) -> None:
    r = sasl.kctl("--profile", "local-admin", "tokens", "renew", "--hmac", "env:NO_SUCH_VAR_X")
    assert r.code != 0 and "NO_SUCH_VAR_X" in _one_error_line(r)
    bad = sasl.kctl("--profile", "local-admin", "tokens", "create", "--renewer-principal", "alice")
    assert bad.code == 2 and "TYPE:NAME" in _one_error_line(bad)
