"""A real Schema Registry on loopback for ``kctl local up --schema-registry`` and the tests:
Apicurio Registry 2.6.13.Final, whose Confluent-compatible API is under ``/apis/ccompat/v7``.

Where the app comes from, in this order: ``KCTL_APICURIO_HOME`` (an unpacked
``apicurio-registry-app-VERSION-all.tar.gz``: the ``-runner.jar`` and ``lib/``); kctl's cache
(``$XDG_CACHE_HOME/kctl/apicurio/VERSION``, next to Kafka's jars); else Maven Central through
``mvn dependency:copy`` of ``io.apicurio:apicurio-registry-app:VERSION:tar.gz:all`` (142 MB),
unpacked once into the cache, a stamp file written last so a half-unpacked directory is never
used. No downloader of our own.

It runs on Java 17 (``java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -jar
...-runner.jar``), bound to 127.0.0.1, storage in memory (a restart forgets every schema), ready
when ``/health/ready`` answers 200 (about 9 s, ~220 MB RSS). Its ids are content ids: never
dense. Layout, under a state directory (kctl's, or the test session's)::

    schema-registry/registry.json   pid, port, url, log, when it started
    schema-registry/registry.log    the JVM's stdout and stderr
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from kctl.errors import KctlError, UsageError
from kctl.local.broker import free_port, log_tail, port_free, process_alive, reap
from kctl.local.kafka_jars import cache_dir, java_binary, java_major, maven, run_maven

VERSION = "2.6.13.Final"
ARTIFACT = f"io.apicurio:apicurio-registry-app:{VERSION}:tar.gz:all"
HOST = "127.0.0.1"
DEFAULT_PORT = 8081
API_PATH = "/apis/ccompat/v7"
READY_PATH = "/health/ready"
SUBDIR = "schema-registry"
STATE_FILE = "registry.json"
LOG_FILE = "registry.log"
HEAP = os.environ.get("KCTL_LOCAL_REGISTRY_HEAP", "256m")
_COMPLETE = ".complete"

__all__ = [
    "DEFAULT_PORT",
    "RegistryApp",
    "RegistryInfo",
    "free_port",
    "kill",
    "locate",
    "restart",
    "start",
    "status",
    "stop",
]


@dataclass(frozen=True)
class RegistryApp:
    """An unpacked Apicurio Registry app: its runner jar (``lib/`` beside it)."""

    version: str
    home: Path
    source: str  # "apicurio-home", "cache" or "maven"

    @property
    def runner(self) -> Path:
        return self.home / f"apicurio-registry-app-{self.version}-runner.jar"


@dataclass(frozen=True)
class RegistryInfo:
    """A registry that kctl started: ``url`` is the base of its Confluent API."""

    pid: int
    port: int
    url: str
    log: str
    started_at: float
    version: str = VERSION
    started: bool = True  # False: it was running already (not stored)

    @property
    def base(self) -> str:
        return f"http://{HOST}:{self.port}"


def url_of(port: int) -> str:
    return f"http://{HOST}:{port}{API_PATH}"


# --- the app: KCTL_APICURIO_HOME, the cache, or Maven Central ---------------------------------


def _home_dir() -> Path:
    return cache_dir() / "apicurio" / VERSION


def _stamp() -> str:
    return f"{ARTIFACT}\n"


def _runner_in(home: Path) -> Path:
    return home / f"apicurio-registry-app-{VERSION}-runner.jar"


def cached() -> RegistryApp | None:
    home = _home_dir()
    try:
        if (home / _COMPLETE).read_text() == _stamp() and _runner_in(home).is_file():
            return RegistryApp(VERSION, home, "cache")
    except OSError:
        pass
    return None


def from_home(home: str | Path) -> RegistryApp:
    path = Path(home).expanduser()
    if not _runner_in(path).is_file() or not (path / "lib").is_dir():
        raise KctlError(
            f"no Apicurio Registry {VERSION} in {path}",
            f"expected apicurio-registry-app-{VERSION}-runner.jar and lib/ (an unpacked "
            f"apicurio-registry-app-{VERSION}-all.tar.gz)",
        )
    return RegistryApp(VERSION, path, "apicurio-home")


def resolve_with_maven(on_progress: Callable[[str], None] | None = None) -> RegistryApp:
    """``mvn dependency:copy`` of the app's tar.gz (from ~/.m2 when it is there, else Maven
    Central), unpacked into the cache; the stamp is written last."""
    mvn = maven(
        f"Apicurio Registry {VERSION}",
        "apt-get install maven, or set KCTL_APICURIO_HOME to an unpacked "
        f"apicurio-registry-app-{VERSION}-all.tar.gz",
    )
    target = _home_dir()
    target.parent.mkdir(parents=True, exist_ok=True)
    if on_progress:
        on_progress(f"resolving Apicurio Registry {VERSION} ({ARTIFACT}) with mvn")
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".resolve-") as work:
        out = Path(work) / "download"
        cmd = [
            mvn,
            "-B",
            "-q",
            "-Dstyle.color=never",
            "dependency:copy",
            f"-Dartifact={ARTIFACT}",
            f"-DoutputDirectory={out}",
        ]
        run_maven(cmd, f"Apicurio Registry {VERSION}", timeout=1800, cwd=work)
        archives = sorted(out.glob("*.tar.gz"))
        if not archives:
            raise KctlError(
                f"cannot fetch Apicurio Registry {VERSION}", f"mvn left no tar.gz in {out}"
            )
        unpacked = Path(work) / "app"
        unpacked.mkdir()
        try:
            with tarfile.open(archives[0]) as tar:
                tar.extractall(unpacked, filter="data")
        except (tarfile.TarError, OSError) as exc:
            raise KctlError(f"cannot unpack {archives[0].name}", str(exc)) from exc
        if not _runner_in(unpacked).is_file():
            raise KctlError(
                f"{archives[0].name} holds no apicurio-registry-app-{VERSION}-runner.jar",
            )
        (unpacked / _COMPLETE).write_text(_stamp())
        if target.exists():
            shutil.rmtree(target)
        os.replace(unpacked, target)
    return RegistryApp(VERSION, target, "maven")


def locate(on_progress: Callable[[str], None] | None = None) -> RegistryApp:
    """The app to run: KCTL_APICURIO_HOME, else the cache, else resolved with mvn."""
    home = os.environ.get("KCTL_APICURIO_HOME")
    if home:
        return from_home(home)
    return cached() or resolve_with_maven(on_progress)


def require_java() -> str:
    """The java binary, version 17 or newer, or one line naming the fix."""
    java = java_binary()
    if java is None:
        raise KctlError(
            "Java is not installed",
            f"the Schema Registry (Apicurio Registry {VERSION}) needs Java 17+: "
            "apt-get install openjdk-17-jre-headless",
        )
    major = java_major(java)
    if major is None or major < 17:
        raise KctlError(
            f"{java} is Java {major or 'of an unknown version'}",
            f"the Schema Registry (Apicurio Registry {VERSION}) needs Java 17+: set JAVA_HOME "
            "to a JDK 17",
        )
    return java


def basic_auth_properties(issuer: str, token_endpoint: str | None = None) -> dict[str, str]:
    """``extra_properties`` for :func:`start` that make the registry require HTTP basic auth,
    Apicurio's own way: each ``user:password`` is exchanged for a token at the OpenID Connect
    server ``issuer`` (a Keycloak realm's URL, ``http://HOST:PORT/realms/NAME``) with the
    client-credentials grant (user = client id, password = its secret: in Keycloak, a
    confidential client with a service account); no credentials, or ones the OIDC server
    refuses, get 401. Apicurio 2.6 has no user list of its own (Quarkus's embedded users are
    not in its build). Tested against a real Keycloak 25.0.6 (tests/keycloak_server.py)."""
    return {
        "registry.auth.enabled": "true",
        "registry.auth.basic-auth-client-credentials.enabled": "true",
        "quarkus.oidc.auth-server-url": issuer,
        "registry.auth.token.endpoint": token_endpoint
        or f"{issuer.rstrip('/')}/protocol/openid-connect/token",
    }


# --- the process ------------------------------------------------------------------------------


def registry_dir(state: Path) -> Path:
    return Path(state) / SUBDIR


def read_info(state: Path) -> RegistryInfo | None:
    try:
        data = json.loads((registry_dir(state) / STATE_FILE).read_text())
        data.pop("started", None)
        return RegistryInfo(**data)
    except (OSError, ValueError, TypeError):
        return None


def _write_info(state: Path, info: RegistryInfo) -> None:
    data = asdict(info)
    data.pop("started")
    path = registry_dir(state) / STATE_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live Apicurio Registry (a reaped-and-reused pid is not)."""
    reap(pid)
    return process_alive(pid, b"apicurio-registry")


def ready(port: int, timeout: float = 1.0) -> bool:
    """``/health/ready`` answers 200."""
    try:
        with urllib.request.urlopen(f"http://{HOST}:{port}{READY_PATH}", timeout=timeout) as r:
            return bool(r.status == 200)
    except (OSError, ValueError, urllib.error.URLError):
        return False


def java_args(java: str, app: RegistryApp, port: int, extra: tuple[str, ...] = ()) -> list[str]:
    return [
        java,
        f"-Xmx{HEAP}",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        f"-Dquarkus.http.host={HOST}",
        f"-Dquarkus.http.port={port}",
        "-Dquarkus.log.console.color=false",
        *extra,
        "-jar",
        str(app.runner),
    ]


def start(
    state: Path,
    port: int = DEFAULT_PORT,
    *,
    wait: float = 60.0,
    extra_properties: dict[str, str] | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> RegistryInfo:
    """Start the registry on ``127.0.0.1:port`` (0: a free port) unless the one recorded in
    ``state`` runs already (then it is returned with ``started`` False); wait until
    ``/health/ready`` answers 200. ``extra_properties``: more ``-Dkey=value`` for Quarkus or
    Apicurio. Errors are one line (the log's tail when the JVM exits or does not get ready)."""
    state = Path(state)
    existing = read_info(state)
    if existing is not None and alive(existing.pid):
        return replace(existing, started=False)
    if not 0 <= port < 65536:
        raise UsageError(f"--registry-port {port} is out of range", "0..65535 (0: a free port)")
    java = require_java()
    port = port or free_port()
    if not port_free(HOST, port):
        raise KctlError(
            f"cannot start the Schema Registry on {HOST}:{port}: the port is in use",
            "give another with --registry-port N (0: a free one)",
        )
    app = locate(on_progress)
    directory = registry_dir(state)
    directory.mkdir(parents=True, exist_ok=True)
    log_path = directory / LOG_FILE
    extra = tuple(f"-D{k}={v}" for k, v in sorted((extra_properties or {}).items()))
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            java_args(java, app, port, extra),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            cwd=directory,
        )
    info = RegistryInfo(proc.pid, port, url_of(port), str(log_path), time.time())
    deadline = time.monotonic() + wait
    while not ready(port, timeout=1.0):
        if proc.poll() is not None:
            tail = log_tail(log_path, 1, errors_first=True) or f"exit code {proc.returncode}"
            raise KctlError("the Schema Registry exited while starting", _one_line(tail))
        if time.monotonic() > deadline:
            _kill_group(proc.pid)
            proc.wait()
            tail = log_tail(log_path, 1, errors_first=True) or "no answer"
            raise KctlError(
                f"the Schema Registry did not get ready within {wait:g}s", _one_line(tail)
            )
        time.sleep(0.2)
    _write_info(state, info)
    return info


def _one_line(text: str) -> str:
    return " ".join(text.split())[:400]


def _kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def stop(state: Path, wait: float = 20.0) -> RegistryInfo | None:
    """Stop the recorded registry: SIGTERM, SIGKILL after ``wait`` seconds; forget it. What was
    stopped, or None when none was running."""
    state = Path(state)
    info = read_info(state)
    path = registry_dir(state) / STATE_FILE
    if info is None or not alive(info.pid):
        path.unlink(missing_ok=True)
        return None
    _kill_group(info.pid, signal.SIGTERM)
    deadline = time.monotonic() + wait
    while alive(info.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if alive(info.pid):
        _kill_group(info.pid)
        deadline = time.monotonic() + 5
        while alive(info.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
    path.unlink(missing_ok=True)
    return info


def kill(state: Path) -> RegistryInfo | None:
    """SIGKILL the recorded registry, as a crash would (the record stays: ``start`` on the same
    state starts a new one, ``restart`` does both)."""
    info = read_info(Path(state))
    if info is None or not alive(info.pid):
        return None
    _kill_group(info.pid)
    deadline = time.monotonic() + 5
    while alive(info.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return info


def restart(state: Path, *, wait: float = 60.0, down_for: float = 0.0) -> RegistryInfo:
    """Stop the recorded registry and start a new one on the same port (an empty registry:
    its storage is in memory), ``down_for`` seconds in between."""
    info = read_info(Path(state))
    if info is None:
        raise KctlError("no Schema Registry is recorded", f"in {registry_dir(Path(state))}")
    stop(state)
    deadline = time.monotonic() + 10
    while not port_free(HOST, info.port) and time.monotonic() < deadline:
        time.sleep(0.1)
    if down_for:
        time.sleep(down_for)
    return start(state, info.port, wait=wait)


def status(state: Path) -> dict[str, object]:
    """The recorded registry: running (the process lives), answering (``/health/ready``)."""
    info = read_info(Path(state))
    if info is None:
        return {"running": False}
    running = alive(info.pid)
    return {
        "running": running,
        "answering": running and ready(info.port),
        "url": info.url,
        "pid": info.pid if running else None,
        "port": info.port,
        "version": info.version,
        "uptime_s": round(time.time() - info.started_at, 1) if running else None,
        "log": info.log,
    }
