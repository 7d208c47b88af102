"""A real Schema Registry on loopback for ``kctl local up --schema-registry`` and the tests:
Apicurio Registry 2.6.13.Final (the default) or 3.3.3 (``--registry-version 3.3.3``), whose
Confluent-compatible API is under ``/apis/ccompat/v7`` in both.

Where the app comes from, in this order: ``KCTL_APICURIO_HOME`` (an unpacked
``apicurio-registry-app-VERSION-all.tar.gz``: 2.6's ``-runner.jar`` and ``lib/``, 3.x's
``quarkus-run.jar``, ``app/`` and ``lib/``); kctl's cache (``$XDG_CACHE_HOME/kctl/apicurio/
VERSION``, next to Kafka's jars); else Maven Central through ``mvn dependency:copy`` of
``io.apicurio:apicurio-registry-app:VERSION:tar.gz:all`` (142 MB; 3.3.3: 159 MB), unpacked once
into the cache, a stamp file written last so a half-unpacked directory is never used. No
downloader of our own.

2.6 runs on Java 17, 3.3 on Java 21 or newer: the java used is the first new enough of
``JAVA_HOME``, the ``java`` on PATH and the JDKs under ``/usr/lib/jvm`` (``KCTL_JVM_DIRS``: other
directories to look in, separated by ``:``). It runs as ``java -Xmx256m -XX:+UseSerialGC
-XX:TieredStopAtLevel=1 -jar RUNNER``, bound to 127.0.0.1, storage in memory (a restart forgets
every schema), ready when ``/health/ready`` answers 200 (about 9 s, ~250 MB RSS): on the HTTP
port in 2.6, on Quarkus' management port in 3.x (its own free port on 127.0.0.1; Quarkus' default
would be 0.0.0.0:9000). Its ids are content ids: never dense. Layout, under a state directory
(kctl's, or the test session's)::

    schema-registry/registry.json   pid, port, url, version, log, when it started
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
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from kctl.errors import KctlError, UsageError
from kctl.local.broker import free_port, log_tail, port_free, process_alive, reap
from kctl.local.kafka_jars import cache_dir, java_major, maven, run_maven

DEFAULT_VERSION = "2.6.13.Final"
VERSION = DEFAULT_VERSION  # the version `local up --schema-registry` runs unless told
ARTIFACT = f"io.apicurio:apicurio-registry-app:{VERSION}:tar.gz:all"
HOST = "127.0.0.1"
DEFAULT_PORT = 8081
API_PATH = "/apis/ccompat/v7"
READY_PATH = "/health/ready"
SUBDIR = "schema-registry"
STATE_FILE = "registry.json"
LOG_FILE = "registry.log"
HEAP = os.environ.get("KCTL_LOCAL_REGISTRY_HEAP", "256m")
JVM_DIRS = ("/usr/lib/jvm",)
# On every registry's command line (2.6's runner jar says it too): how `alive` knows the pid.
MARKER = "apicurio-registry"
_COMPLETE = ".complete"

__all__ = [
    "DEFAULT_PORT",
    "DEFAULT_VERSION",
    "VERSIONS",
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
class Flavour:
    """What differs between the Apicurio Registry versions kctl runs."""

    version: str
    java: int  # the oldest Java it runs on
    runner: str  # the jar ``java -jar`` runs, in the unpacked tar.gz
    marker: str  # a file only this version's tar.gz holds
    management_port: bool  # /health/ready on Quarkus' management interface (3.x)

    @property
    def artifact(self) -> str:
        return f"io.apicurio:apicurio-registry-app:{self.version}:tar.gz:all"


def _flavour_2(version: str) -> Flavour:
    runner = f"apicurio-registry-app-{version}-runner.jar"
    return Flavour(version, 17, runner, runner, management_port=False)


def _flavour_3(version: str) -> Flavour:
    return Flavour(version, 21, "quarkus-run.jar", f"app/apicurio-registry-app-{version}.jar",
                   management_port=True)  # fmt: skip


FLAVOURS = {f.version: f for f in (_flavour_2("2.6.13.Final"), _flavour_3("3.3.3"))}
VERSIONS = tuple(FLAVOURS)


def flavour(version: str | None = None) -> Flavour:
    """The flavour of ``version`` (None: the default); a usage error names the versions."""
    found = FLAVOURS.get(version or DEFAULT_VERSION)
    if found is None:
        raise UsageError(
            f"Apicurio Registry {version} is not one kctl runs",
            f"--registry-version {' or '.join(VERSIONS)}",
        )
    return found


@dataclass(frozen=True)
class RegistryApp:
    """An unpacked Apicurio Registry app: its runner jar (``lib/`` beside it)."""

    version: str
    home: Path
    source: str  # "apicurio-home", "cache" or "maven"

    @property
    def runner(self) -> Path:
        return self.home / flavour(self.version).runner


@dataclass(frozen=True)
class RegistryInfo:
    """A registry that kctl started: ``url`` is the base of its Confluent API;
    ``management_port``: where 3.x answers /health/ready (None: on ``port``)."""

    pid: int
    port: int
    url: str
    log: str
    started_at: float
    version: str = VERSION
    management_port: int | None = None
    started: bool = True  # False: it was running already (not stored)

    @property
    def base(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def health_port(self) -> int:
        return self.management_port or self.port


def url_of(port: int) -> str:
    return f"http://{HOST}:{port}{API_PATH}"


# --- the app: KCTL_APICURIO_HOME, the cache, or Maven Central ---------------------------------


def _home_dir(version: str) -> Path:
    return cache_dir() / "apicurio" / version


def _stamp(version: str) -> str:
    return f"{flavour(version).artifact}\n"


def _holds(home: Path, version: str) -> bool:
    """``home`` holds the unpacked app of ``version``: its runner jar and what only that
    version's tar.gz has."""
    f = flavour(version)
    return (home / f.runner).is_file() and (home / f.marker).is_file()


def cached(version: str | None = None) -> RegistryApp | None:
    version = flavour(version).version
    home = _home_dir(version)
    try:
        if (home / _COMPLETE).read_text() == _stamp(version) and _holds(home, version):
            return RegistryApp(version, home, "cache")
    except OSError:
        pass
    return None


def from_home(home: str | Path, version: str | None = None) -> RegistryApp:
    f = flavour(version)
    path = Path(home).expanduser()
    if not _holds(path, f.version) or not (path / "lib").is_dir():
        expected = f.runner if f.runner == f.marker else f"{f.runner}, {f.marker}"
        raise KctlError(
            f"no Apicurio Registry {f.version} in {path}",
            f"expected {expected} and lib/ (an unpacked "
            f"apicurio-registry-app-{f.version}-all.tar.gz)",
        )
    return RegistryApp(f.version, path, "apicurio-home")


def resolve_with_maven(
    on_progress: Callable[[str], None] | None = None, version: str | None = None
) -> RegistryApp:
    """``mvn dependency:copy`` of the app's tar.gz (from ~/.m2 when it is there, else Maven
    Central), unpacked into the cache; the stamp is written last."""
    f = flavour(version)
    what = f"Apicurio Registry {f.version}"
    mvn = maven(
        what,
        "apt-get install maven, or set KCTL_APICURIO_HOME to an unpacked "
        f"apicurio-registry-app-{f.version}-all.tar.gz",
    )
    target = _home_dir(f.version)
    target.parent.mkdir(parents=True, exist_ok=True)
    if on_progress:
        on_progress(f"resolving {what} ({f.artifact}) with mvn")
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".resolve-") as work:
        out = Path(work) / "download"
        cmd = [
            mvn,
            "-B",
            "-q",
            "-Dstyle.color=never",
            "dependency:copy",
            f"-Dartifact={f.artifact}",
            f"-DoutputDirectory={out}",
        ]
        run_maven(cmd, what, timeout=1800, cwd=work)
        archives = sorted(out.glob("*.tar.gz"))
        if not archives:
            raise KctlError(f"cannot fetch {what}", f"mvn left no tar.gz in {out}")
        unpacked = Path(work) / "app"
        unpacked.mkdir()
        try:
            with tarfile.open(archives[0]) as tar:
                tar.extractall(unpacked, filter="data")
        except (tarfile.TarError, OSError) as exc:
            raise KctlError(f"cannot unpack {archives[0].name}", str(exc)) from exc
        if not _holds(unpacked, f.version):
            raise KctlError(f"{archives[0].name} holds no {f.runner} of {what}")
        (unpacked / _COMPLETE).write_text(_stamp(f.version))
        if target.exists():
            shutil.rmtree(target)
        os.replace(unpacked, target)
    return RegistryApp(f.version, target, "maven")


def locate(
    on_progress: Callable[[str], None] | None = None, version: str | None = None
) -> RegistryApp:
    """The app to run: KCTL_APICURIO_HOME, else the cache, else resolved with mvn."""
    home = os.environ.get("KCTL_APICURIO_HOME")
    if home:
        return from_home(home, version)
    return cached(version) or resolve_with_maven(on_progress, version)


def _javas() -> Iterator[Path]:
    """Every java binary to consider, in order: JAVA_HOME's, the one on PATH, then each JDK
    under /usr/lib/jvm (or the directories of KCTL_JVM_DIRS), by name."""
    home = os.environ.get("JAVA_HOME")
    if home:
        yield Path(home) / "bin" / "java"
    on_path = shutil.which("java")
    if on_path:
        yield Path(on_path)
    given = os.environ.get("KCTL_JVM_DIRS")
    dirs = given.split(os.pathsep) if given is not None else JVM_DIRS
    for directory in dirs:
        try:
            jdks = sorted(Path(directory).iterdir()) if directory else []
        except OSError:
            continue
        for jdk in jdks:
            yield jdk / "bin" / "java"


def require_java(version: str | None = None) -> str:
    """A java binary new enough for ``version`` (the first of :func:`_javas`), or one line
    saying which Java is missing and what was found."""
    f = flavour(version)
    what = f"the Schema Registry (Apicurio Registry {f.version}) needs Java {f.java}+"
    found: list[str] = []
    seen: set[Path] = set()
    for java in _javas():
        try:
            real = java.resolve()
        except OSError:
            continue
        if real in seen or not java.is_file():
            continue
        seen.add(real)
        major = java_major(str(java))
        if major is not None and major >= f.java:
            return str(java)
        found.append(f"{java} is Java {major or 'of an unknown version'}")
    if not found:
        raise KctlError(
            "Java is not installed",
            f"{what}: apt-get install openjdk-{f.java}-jre-headless, or set JAVA_HOME to a "
            f"JDK {f.java} or newer",
        )
    raise KctlError(
        f"no Java {f.java} or newer found",
        f"{what}; {'; '.join(found)}: set JAVA_HOME to a JDK {f.java} or newer",
    )


def basic_auth_properties(
    issuer: str, token_endpoint: str | None = None, version: str | None = None
) -> dict[str, str]:
    """``extra_properties`` for :func:`start` that make the registry require HTTP basic auth,
    Apicurio's own way: each ``user:password`` is exchanged for a token at the OpenID Connect
    server ``issuer`` (a Keycloak realm's URL, ``http://HOST:PORT/realms/NAME``) with the
    client-credentials grant (user = client id, password = its secret: in Keycloak, a
    confidential client with a service account); no credentials, or ones the OIDC server
    refuses, get 401. Apicurio has no user list of its own here (2.6: Quarkus's embedded users
    are not in its build). The property names differ: 2.6's ``registry.auth.*``, 3.x's
    ``apicurio.authn.*`` and ``quarkus.oidc.tenant-enabled``. Tested against a real Keycloak
    25.0.6 (tests/keycloak_server.py) on both."""
    issuer = issuer.rstrip("/")
    token = token_endpoint or f"{issuer}/protocol/openid-connect/token"
    if flavour(version).management_port:  # 3.x: the token URL is the issuer + a path
        if not token.startswith(issuer + "/"):
            raise ValueError(f"Apicurio 3 asks for tokens below the issuer, not at {token}")
        return {
            "quarkus.oidc.tenant-enabled": "true",
            "apicurio.authn.basic-client-credentials.enabled": "true",
            "quarkus.oidc.auth-server-url": issuer,
            "quarkus.oidc.token-path": token.removeprefix(issuer),
        }
    return {
        "registry.auth.enabled": "true",
        "registry.auth.basic-auth-client-credentials.enabled": "true",
        "quarkus.oidc.auth-server-url": issuer,
        "registry.auth.token.endpoint": token,
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
    return process_alive(pid, MARKER.encode())


def ready(port: int, timeout: float = 1.0) -> bool:
    """``/health/ready`` answers 200."""
    try:
        with urllib.request.urlopen(f"http://{HOST}:{port}{READY_PATH}", timeout=timeout) as r:
            return bool(r.status == 200)
    except (OSError, ValueError, urllib.error.URLError):
        return False


def java_args(
    java: str,
    app: RegistryApp,
    port: int,
    extra: tuple[str, ...] = (),
    management_port: int | None = None,
) -> list[str]:
    """The command line: HTTP (and 3.x's management interface, on ``management_port``) bound
    to loopback; ``-Dkctl.local=apicurio-registry`` marks the process as the registry (3.x's
    runner jar does not name it)."""
    management = (
        [f"-Dquarkus.management.host={HOST}", f"-Dquarkus.management.port={management_port}"]
        if management_port is not None
        else []
    )
    return [
        java,
        f"-Xmx{HEAP}",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        f"-Dkctl.local={MARKER}",
        f"-Dquarkus.http.host={HOST}",
        f"-Dquarkus.http.port={port}",
        *management,
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
    version: str | None = None,
) -> RegistryInfo:
    """Start Apicurio Registry ``version`` (None: the default) on ``127.0.0.1:port`` (0: a free
    port) unless the one recorded in ``state`` runs already (then it is returned with
    ``started`` False, whatever its version); wait until ``/health/ready`` answers 200.
    ``extra_properties``: more ``-Dkey=value`` for Quarkus or Apicurio. Errors are one line
    (the log's tail when the JVM exits or does not get ready)."""
    state = Path(state)
    existing = read_info(state)
    if existing is not None and alive(existing.pid):
        return replace(existing, started=False)
    if not 0 <= port < 65536:
        raise UsageError(f"--registry-port {port} is out of range", "0..65535 (0: a free port)")
    f = flavour(version)
    java = require_java(f.version)
    port = port or free_port()
    if not port_free(HOST, port):
        raise KctlError(
            f"cannot start the Schema Registry on {HOST}:{port}: the port is in use",
            "give another with --registry-port N (0: a free one)",
        )
    app = locate(on_progress, f.version)
    management = free_port() if f.management_port else None
    directory = registry_dir(state)
    directory.mkdir(parents=True, exist_ok=True)
    log_path = directory / LOG_FILE
    extra = tuple(f"-D{k}={v}" for k, v in sorted((extra_properties or {}).items()))
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            java_args(java, app, port, extra, management),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            cwd=directory,
        )
    info = RegistryInfo(
        proc.pid, port, url_of(port), str(log_path), time.time(), f.version, management
    )
    deadline = time.monotonic() + wait
    while not ready(info.health_port, timeout=1.0):
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
    """Stop the recorded registry and start a new one of its version on the same port (an
    empty registry: its storage is in memory), ``down_for`` seconds in between."""
    info = read_info(Path(state))
    if info is None:
        raise KctlError("no Schema Registry is recorded", f"in {registry_dir(Path(state))}")
    stop(state)
    deadline = time.monotonic() + 10
    while not port_free(HOST, info.port) and time.monotonic() < deadline:
        time.sleep(0.1)
    if down_for:
        time.sleep(down_for)
    return start(state, info.port, wait=wait, version=info.version)


def status(state: Path) -> dict[str, object]:
    """The recorded registry: running (the process lives), answering (``/health/ready``)."""
    info = read_info(Path(state))
    if info is None:
        return {"running": False}
    running = alive(info.pid)
    return {
        "running": running,
        "answering": running and ready(info.health_port),
        "url": info.url,
        "pid": info.pid if running else None,
        "port": info.port,
        "version": info.version,
        "uptime_s": round(time.time() - info.started_at, 1) if running else None,
        "log": info.log,
    }
