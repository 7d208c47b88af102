"""The local Schema Registry (kctl.local.registry: Apicurio Registry 2.6.13.Final, or 3.3.3, on
loopback): started, restarted and stopped through the module as the test session's fixture
does, and through `kctl local up --schema-registry [--registry-version V]` / `local status` /
`local down` as an operator does, each on both versions; the errors an operator meets (no Java
or none new enough, no Maven, a taken port) are one line."""

from __future__ import annotations

import json
import socket
import time
import urllib.request
import uuid
from pathlib import Path

import pytest
import yaml
from conftest import kctl_environment, run_kctl

from kctl.errors import KctlError
from kctl.local import registry

AVRO = json.dumps({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]})


def _get(url: str) -> object:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def _register(url: str, subject: str) -> int:
    req = urllib.request.Request(
        f"{url}/subjects/{subject}/versions",
        data=json.dumps({"schema": AVRO}).encode(),
        headers={"Content-Type": "application/vnd.schemaregistry.v1+json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        return int(json.loads(r.read())["id"])


@pytest.fixture
def kctl_env(tmp_path: Path) -> dict[str, str]:
    """No broker needed: a state dir and a profile file of the test's own."""
    return kctl_environment(
        KCTL_CONFIG=str(tmp_path / "kctl-config.yaml"), KCTL_STATE_DIR=str(tmp_path / "state")
    )


@pytest.fixture
def kctl(kctl_env):
    def run(*args: str, env: dict[str, str] | None = None, timeout: float = 120):
        return run_kctl({**kctl_env, **(env or {})}, *args, timeout=timeout)

    return run


VERSIONS = registry.VERSIONS  # ("2.6.13.Final", "3.3.3")


@pytest.fixture(scope="module", params=VERSIONS, ids=lambda v: f"apicurio-{v}")
def own_registry(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """A registry of this module's own (the tests restart it), on a free port, of each
    version."""
    state = tmp_path_factory.mktemp("own-registry")
    info = registry.start(state, port=registry.free_port(), version=request.param)
    try:
        yield state, info
    finally:
        registry.stop(state)


def test_start_status_restart_stop(own_registry):
    state, info = own_registry
    assert info.started and info.url == f"http://127.0.0.1:{info.port}/apis/ccompat/v7"
    if info.version.startswith("3."):  # /health/ready on Quarkus' management port, loopback
        assert info.management_port and info.management_port != info.port
        assert "Management interface listening on http://127.0.0.1:" in Path(info.log).read_text()
        assert registry.ready(info.management_port) and not registry.ready(info.port)
    else:
        assert info.management_port is None and registry.ready(info.port)
    assert _get(f"{info.url}/subjects") == []
    subject = f"t-{uuid.uuid4().hex[:8]}-value"
    _register(info.url, subject)
    assert subject in _get(f"{info.url}/subjects")  # type: ignore[operator]
    again = registry.start(state, port=registry.free_port())  # recorded and running: kept
    assert (again.started, again.pid, again.port) == (False, info.pid, info.port)
    s = registry.status(state)
    assert s["running"] and s["answering"] and s["url"] == info.url and s["pid"] == info.pid
    # listens on loopback only
    assert Path(info.log).is_file() and "127.0.0.1" in Path(info.log).read_text()

    restarted = registry.restart(state)  # stop, then start on the same port
    assert restarted.port == info.port and restarted.pid != info.pid
    assert restarted.version == info.version
    assert not registry.alive(info.pid)
    assert _get(f"{restarted.url}/subjects") == []  # in memory: a restart forgets
    _register(restarted.url, subject)


def test_kill_then_start_on_the_same_port_and_stop(own_registry):
    state, _ = own_registry
    info = registry.read_info(state)
    assert info is not None
    assert registry.kill(state) is not None and not registry.alive(info.pid)
    assert registry.status(state)["running"] is False
    back = registry.start(state, port=info.port, version=info.version)
    assert back.started and back.port == info.port and back.version == info.version
    assert registry.stop(state) is not None
    assert registry.status(state) == {"running": False} and registry.stop(state) is None


@pytest.mark.parametrize("version", VERSIONS)
def test_local_up_status_down_with_the_registry(kctl, kctl_env, version):
    chosen = [] if version == registry.DEFAULT_VERSION else ["--registry-version", version]
    r = kctl(
        "local", "up", "--engine", "tansu", "--port", "0",
        "--schema-registry", "--registry-port", "0", *chosen, "-o", "json",
    )  # fmt: skip
    try:
        assert r.code == 0, r
        doc = json.loads(r.stdout)
        url = doc["schema_registry"]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/apis/ccompat/v7")
        assert f"Schema Registry (Apicurio Registry {version}) started" in r.stderr
        assert _get(f"{url}/subjects") == []
        # the profile it wrote carries the registry, and kctl resolves it from there
        saved = yaml.safe_load(Path(kctl_env["KCTL_CONFIG"]).read_text())
        assert saved["profiles"]["local"] == {
            "bootstrap_servers": doc["bootstrap"],
            "security_protocol": "PLAINTEXT",
            "schema_registry": {"url": url},
        }
        status = kctl("local", "status", "-o", "json")
        assert status.code == 0, status
        reg = json.loads(status.stdout)["schema_registry"]
        assert reg["running"] and reg["answering"] and reg["url"] == url
        assert reg["version"] == version
        table = kctl("local", "status", "-o", "plain").stdout
        assert f"schema_registry\t{url}" in table and "schema_registry_running\ttrue" in table
        again = kctl("local", "up", "--engine", "tansu", "--schema-registry", "-o", "json")
        assert again.code == 0 and json.loads(again.stdout)["schema_registry"] == url, again
        assert f"Schema Registry (Apicurio Registry {version}) already running" in again.stderr
        other = next(v for v in VERSIONS if v != version)
        refused = kctl("local", "up", "--engine", "tansu", "--schema-registry",
                       "--registry-version", other)  # fmt: skip
        assert refused.code == 1 and refused.stderr == (
            "kctl: error: a Schema Registry of another version runs: Apicurio Registry "
            f"{version}, not {other} (kctl local down stops it (its schemas are in memory: they "
            "go with it))\n"
        ), refused
    finally:
        down = kctl("local", "down")
    assert down.code == 0 and "Schema Registry stopped" in down.stderr, down
    with pytest.raises(OSError):
        _get(f"{url}/subjects")
    assert "schema_registry" not in json.loads(kctl("local", "status", "-o", "json").stdout)


def test_registry_version_is_checked_before_anything_starts(kctl):
    r = kctl("local", "up", "--engine", "tansu", "--port", "0", "--schema-registry",
             "--registry-version", "3.0.0")  # fmt: skip
    assert r.code == 2 and r.stderr == (
        "kctl: error: Apicurio Registry 3.0.0 is not one kctl runs (--registry-version "
        "2.6.13.Final or 3.3.3)\n"
    ), r
    r = kctl("local", "up", "--engine", "tansu", "--port", "0", "--registry-version", "3.3.3")
    assert r.code == 2 and "--registry-version needs --schema-registry" in r.stderr, r
    r = kctl("local", "fetch", "--registry-version", "3.3.3")
    assert r.code == 2 and "--registry-version needs --schema-registry" in r.stderr, r
    assert kctl("local", "status").code == 1  # nothing was started


def test_a_taken_registry_port_is_one_line_and_starts_nothing(kctl):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        r = kctl(
            "local", "up", "--engine", "tansu", "--port", "0",
            "--schema-registry", "--registry-port", str(port),
        )  # fmt: skip
    assert r.code == 1 and len(r.stderr.splitlines()) == 1, r
    assert r.stderr == (
        f"kctl: error: cannot start the Schema Registry on 127.0.0.1:{port}: the port is in use "
        "(give another with --registry-port N (0: a free one))\n"
    )
    assert kctl("local", "status").code == 1  # the broker was not started either


def test_without_java_the_error_names_the_fix(kctl, tmp_path):
    r = kctl(
        "local", "up", "--engine", "tansu", "--port", "0", "--schema-registry",
        env={"PATH": str(tmp_path), "JAVA_HOME": "", "KCTL_JVM_DIRS": str(tmp_path)},
    )  # fmt: skip
    assert r.code == 1 and len(r.stderr.splitlines()) == 1, r
    assert r.stderr.startswith("kctl: error: Java is not installed (the Schema Registry")
    assert "openjdk-17" in r.stderr
    assert kctl("local", "status").code == 1  # nothing was started


def _java_17() -> Path:
    """A JDK 17 of this machine (the one the suite runs Kafka with)."""
    from kctl.local.kafka_jars import java_major

    for home in sorted(Path("/usr/lib/jvm").iterdir()):
        if java_major(str(home / "bin" / "java")) == 17:
            return home.resolve()
    pytest.fail("no JDK 17 under /usr/lib/jvm (the suite's machines have one)")


def test_apicurio_3_needs_java_21_and_says_which_java_it_found(kctl, tmp_path):
    """Only a Java 17 to be found: one line naming the Java 21+ missing and the one found;
    nothing started."""
    jdk17 = _java_17()
    r = kctl(
        "local", "up", "--engine", "tansu", "--port", "0", "--schema-registry",
        "--registry-version", "3.3.3",
        env={"PATH": str(tmp_path), "JAVA_HOME": str(jdk17), "KCTL_JVM_DIRS": str(tmp_path)},
    )  # fmt: skip
    assert r.code == 1 and r.stderr == (
        "kctl: error: no Java 21 or newer found (the Schema Registry (Apicurio Registry 3.3.3) "
        f"needs Java 21+; {jdk17}/bin/java is Java 17: set JAVA_HOME to a JDK 21 or newer)\n"
    ), r
    assert kctl("local", "status").code == 1


def test_a_java_new_enough_is_found_under_usr_lib_jvm(monkeypatch, tmp_path):
    """JAVA_HOME a Java 17 and no java on PATH: 2.6 takes JAVA_HOME's, 3.3 the first JDK 21+
    under /usr/lib/jvm (the suite's machines have Temurin 25 there)."""
    from kctl.local.kafka_jars import java_major

    jdk17 = _java_17()
    monkeypatch.setenv("JAVA_HOME", str(jdk17))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("KCTL_JVM_DIRS", raising=False)
    assert registry.require_java("2.6.13.Final") == f"{jdk17}/bin/java"
    found = registry.require_java("3.3.3")
    assert found.startswith("/usr/lib/jvm/") and (java_major(found) or 0) >= 21


def test_without_maven_or_cache_the_error_names_the_fix(monkeypatch, tmp_path):
    monkeypatch.setenv("KCTL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("KCTL_APICURIO_HOME", raising=False)
    with pytest.raises(KctlError) as exc:
        registry.locate()
    assert exc.value.line().startswith(
        "cannot fetch Apicurio Registry 2.6.13.Final: Maven is not installed (apt-get install maven"
    )


def test_a_home_without_the_app_is_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("KCTL_APICURIO_HOME", str(tmp_path))
    with pytest.raises(KctlError) as exc:
        registry.locate()
    assert exc.value.line().startswith(f"no Apicurio Registry 2.6.13.Final in {tmp_path}")


@pytest.mark.parametrize(
    ("version", "files"),
    [
        ("2.6.13.Final", ["apicurio-registry-app-2.6.13.Final-runner.jar"]),
        ("3.3.3", ["quarkus-run.jar", "app/apicurio-registry-app-3.3.3.jar"]),
    ],
)
def test_the_cache_is_used_only_when_complete(monkeypatch, tmp_path, version, files):
    monkeypatch.setenv("KCTL_CACHE_DIR", str(tmp_path))
    home = tmp_path / "apicurio" / version
    for name in files:
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_bytes(b"")
    assert registry.cached(version) is None  # half unpacked: no stamp
    artifact = f"io.apicurio:apicurio-registry-app:{version}:tar.gz:all"
    (home / ".complete").write_text(f"{artifact}\n")
    app = registry.cached(version)
    assert app is not None and app.source == "cache" and app.runner == home / files[0]
    assert registry.cached(next(v for v in VERSIONS if v != version)) is None


def test_the_jvm_binds_loopback_only():
    app = registry.RegistryApp(registry.VERSION, Path("/x"), "cache")
    args = registry.java_args("java", app, 18081)
    assert "-Dquarkus.http.host=127.0.0.1" in args and "-Dquarkus.http.port=18081" in args
    assert not any("management" in a for a in args)
    assert args[-2:] == ["-jar", f"/x/apicurio-registry-app-{registry.VERSION}-runner.jar"]
    app = registry.RegistryApp("3.3.3", Path("/y"), "cache")
    args = registry.java_args("java", app, 18081, management_port=19000)
    assert "-Dquarkus.management.host=127.0.0.1" in args
    assert "-Dquarkus.management.port=19000" in args and "-Dkctl.local=apicurio-registry" in args
    assert args[-2:] == ["-jar", "/y/quarkus-run.jar"]


@pytest.fixture(scope="module")
def keycloak(tmp_path_factory: pytest.TempPathFactory):
    """A real Keycloak 25.0.6 (tests/keycloak_server.py; alice is a confidential client with
    the secret s3cret), for the registries of both versions."""
    from keycloak_server import Keycloak

    server = Keycloak({"alice": "s3cret"}, tmp_path_factory.mktemp("keycloak")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module", params=VERSIONS, ids=lambda v: f"apicurio-{v}")
def auth_registry(request: pytest.FixtureRequest, keycloak, tmp_path_factory):
    """A registry that requires HTTP basic auth, Apicurio's own way: user:password exchanged
    for a token at Keycloak with the client-credentials grant (2.6's and 3.x's properties)."""
    state = tmp_path_factory.mktemp("auth-registry")
    try:
        try:
            info = registry.start(
                state, port=registry.free_port(), version=request.param,
                extra_properties=registry.basic_auth_properties(
                    keycloak.issuer, version=request.param
                ),
            )  # fmt: skip
        except KctlError as exc:
            pytest.fail(f"{exc}\nKeycloak's log ({keycloak.log}):\n{keycloak.log_tail()}")
        yield info.url, keycloak
    finally:
        registry.stop(state)


def test_basic_auth_with_the_right_user_info_works(auth_registry, kctl, kctl_env, monkeypatch):
    from kctl.registry.client import RegistryClient

    url, keycloak = auth_registry
    with RegistryClient(url, user_info="alice:s3cret") as client:
        subject = f"auth-{uuid.uuid4().hex[:8]}-value"
        from kctl.schemas.model import AVRO as AVRO_TYPE
        from kctl.schemas.model import Schema

        client.register(subject, Schema(AVRO_TYPE, AVRO))
        assert subject in client.subjects()
    # the registry asked Keycloak, which granted alice a token
    assert keycloak.events("CLIENT_LOGIN", "alice") >= 1, keycloak.log_tail()
    # through kctl: a profile whose basic_auth_user_info is an env: reference
    config = Path(kctl_env["KCTL_CONFIG"])
    config.write_text(
        yaml.safe_dump(
            {
                "current_profile": "reg",
                "profiles": {
                    "reg": {"schema_registry": {"url": url, "basic_auth_user_info": "env:SR_AUTH"}}
                },
            }
        )
    )
    config.chmod(0o600)
    r = kctl("schemas", "list", "-o", "json", env={"SR_AUTH": "alice:s3cret"})
    assert r.code == 0 and subject in json.loads(r.stdout)[0].values(), r
    # the user info in the URL given with --schema-registry
    host = url.removeprefix("http://")
    r = kctl("--schema-registry", f"http://alice:s3cret@{host}", "schemas", "list", "-o", "name")
    assert r.code == 0 and subject in r.stdout.split(), r


def test_basic_auth_without_or_with_a_wrong_password_is_one_line(auth_registry, kctl):
    url, keycloak = auth_registry
    refused = keycloak.events("CLIENT_LOGIN_ERROR", "alice")
    host = url.removeprefix("http://")
    r = kctl("--schema-registry", f"http://alice:wrong@{host}", "schemas", "list")
    assert r.code == 1 and len(r.stderr.splitlines()) == 1, r
    assert r.stderr.startswith(f"kctl: error: the schema registry at {url} denied GET"), r
    assert "HTTP 401" in r.stderr, r
    assert "wrong" not in r.stderr  # the password is never shown
    # the registry asked Keycloak, which said no (its event is logged as the request ends)
    deadline = time.monotonic() + 10
    while keycloak.events("CLIENT_LOGIN_ERROR", "alice") <= refused:
        assert time.monotonic() < deadline, keycloak.log_tail()
        time.sleep(0.2)
    r = kctl("--schema-registry", url, "schemas", "list")  # no credentials
    assert r.code == 1 and len(r.stderr.splitlines()) == 1 and "HTTP 401" in r.stderr, r


@pytest.mark.parametrize("version", VERSIONS)
def test_maven_resolves_and_unpacks_into_the_cache_once(monkeypatch, tmp_path, version):
    """From ~/.m2 (the install step's `local fetch --schema-registry [--registry-version V]`
    put the tar.gz there)."""
    monkeypatch.setenv("KCTL_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("KCTL_APICURIO_HOME", raising=False)
    artifact = f"io.apicurio:apicurio-registry-app:{version}:tar.gz:all"
    said: list[str] = []
    app = registry.locate(said.append, version)
    assert app.source == "maven" and app.runner.is_file() and (app.home / "lib").is_dir()
    assert app.version == version
    assert said == [f"resolving Apicurio Registry {version} ({artifact}) with mvn"]
    assert (app.home / ".complete").read_text() == f"{artifact}\n"
    assert [p.name for p in (tmp_path / "apicurio").iterdir()] == [version]  # no leftovers
    again = registry.locate(said.append, version)
    assert again.source == "cache" and again.home == app.home and len(said) == 1


@pytest.mark.parametrize("version", VERSIONS)
def test_local_fetch_with_the_registry(kctl, version):
    chosen = [] if version == registry.DEFAULT_VERSION else ["--registry-version", version]
    r = kctl("local", "fetch", "--schema-registry", *chosen, "-o", "json", timeout=600)
    assert r.code == 0, r
    doc = json.loads(r.stdout)["schema_registry"]
    assert doc["version"] == version and Path(doc["runner"]).is_file()
    assert doc["source"] in ("cache", "maven", "apicurio-home")
    assert f"Apicurio Registry {version}: " in r.stderr


def test_the_profile_up_writes(monkeypatch, tmp_path):
    """A secured cluster's admin profile keeps its settings and gains the registry; a plaintext
    cluster's 'local' is written anew; the current profile is set only when there is none."""
    from kctl import config
    from kctl.commands.local import _registry_profile

    path = tmp_path / "cfg" / "config.yaml"
    monkeypatch.setenv("KCTL_CONFIG", str(path))
    admin = {"bootstrap_servers": "127.0.0.1:9092", "security_protocol": "SASL_SSL",
             "sasl": {"mechanism": "SCRAM-SHA-512", "username": "admin", "password": "file:/pw"}}  # fmt: skip
    with config.edit() as pfile:
        pfile.profiles["local-admin"] = config.profile_from_dict("local-admin", admin, "t")
        pfile.profiles["local"] = config.profile_from_dict(
            "local", {"bootstrap_servers": "x:1"}, "t"
        )
        pfile.current = "local-admin"
    url = "http://127.0.0.1:8081/apis/ccompat/v7"
    assert _registry_profile("local-admin", "127.0.0.1:9092", url) == "local-admin"
    _registry_profile("local", "127.0.0.1:19092", url)
    saved = config.load()
    assert saved.current == "local-admin"
    assert saved.profiles["local-admin"].to_dict() == {**admin, "schema_registry": {"url": url}}
    assert saved.profiles["local"].to_dict() == {
        "bootstrap_servers": "127.0.0.1:19092",
        "security_protocol": "PLAINTEXT",
        "schema_registry": {"url": url},
    }
