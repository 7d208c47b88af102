"""A real Keycloak on loopback, the OpenID Connect server behind the Schema Registry's own basic
auth in tests (tests only: kctl itself never starts Keycloak).

Apicurio Registry 2.6's HTTP basic auth (``registry.auth.basic-auth-client-credentials``) is its
OIDC client-credentials flow: each ``Authorization: Basic user:password`` is exchanged at the
realm's token endpoint for a token (``grant_type=client_credentials``, the user as client id,
the password as its secret), and the request is admitted when the token validates (issuer,
signature against the realm's keys, expiry). So each "user" here is a confidential Keycloak
client with a service account and that secret.

Keycloak 25.0.6 (the last line that runs on Java 17) comes from Maven Central as
``org.keycloak:keycloak-quarkus-dist:25.0.6:zip`` (146 MB) through ``mvn dependency:copy``
(from ~/.m2 when it is there), unpacked once into kctl's cache
(``$KCTL_CACHE_DIR`` or ``$XDG_CACHE_HOME/kctl``, then ``keycloak/25.0.6``), pre-built for the
in-memory dev database, a stamp written last so a half-unpacked directory is never used. The
install step (scripts/test.sh) runs ``python tests/keycloak_server.py fetch``; a fixture that
finds no cache fetches it then. ``KCTL_KEYCLOAK_HOME`` names another unpacked, pre-built one.

Each :class:`Keycloak` runs from its own directory (``bin/``, ``conf/`` and ``lib/quarkus``
copied, the 137 MB of jars linked), ``kc.sh start-dev --db=dev-mem`` on a free loopback port
with the realm imported at start from ``data/import/``; ready when the realm's OpenID
configuration answers; stopped by killing its process group. Its failures carry the log's tail.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from pathlib import Path

VERSION = "25.0.6"
ARTIFACT = f"org.keycloak:keycloak-quarkus-dist:{VERSION}:zip"
HOST = "127.0.0.1"
REALM = "kctl"
_COMPLETE = ".complete"
# Build-time options: the same when the cache is pre-built and when an instance starts, so an
# instance does not rebuild (Quarkus re-augmentation: ~20 s on 2 cores).
BUILD_OPTIONS = ("--db=dev-mem", "--health-enabled=false", "--metrics-enabled=false")
HEAP = "-Xms64m -Xmx512m"


class KeycloakError(RuntimeError):
    pass


def cache_root() -> Path:
    env = os.environ.get("KCTL_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kctl"


def home_dir() -> Path:
    return cache_root() / "keycloak" / VERSION


def cached() -> Path | None:
    """The unpacked, pre-built Keycloak: ``KCTL_KEYCLOAK_HOME``, else the cache's when its stamp
    is there."""
    env = os.environ.get("KCTL_KEYCLOAK_HOME")
    if env:
        return Path(env).expanduser()
    home = home_dir()
    return home if (home / _COMPLETE).is_file() else None


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("JAVA_OPTS", None)
    env["JAVA_OPTS_KC_HEAP"] = HEAP
    # C1 only: a third less start time on a small machine, nothing that matters for tests.
    env["JAVA_OPTS_APPEND"] = "-XX:TieredStopAtLevel=1"
    return env


def fetch(say: Callable[[str], None] = print) -> Path:
    """The cached Keycloak, resolved with mvn, unpacked and pre-built first when missing."""
    home = cached()
    if home is not None:
        return home
    mvn = shutil.which("mvn")
    if mvn is None:
        raise KeycloakError(f"cannot fetch Keycloak {VERSION}: Maven is not installed")
    target = home_dir()
    target.parent.mkdir(parents=True, exist_ok=True)
    say(f"resolving Keycloak {VERSION} ({ARTIFACT}) with mvn")
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".resolve-") as work:
        out = Path(work) / "download"
        cmd = [mvn, "-B", "-q", "-Dstyle.color=never", "dependency:copy",
               f"-Dartifact={ARTIFACT}", f"-DoutputDirectory={out}"]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, cwd=work)
        if proc.returncode != 0:
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
            raise KeycloakError(f"cannot fetch Keycloak {VERSION} with mvn: {' '.join(tail)}")
        archives = sorted(out.glob("*.zip"))
        if not archives:
            raise KeycloakError(f"mvn left no zip in {out}")
        unpacked = Path(work) / "unpacked"
        with zipfile.ZipFile(archives[0]) as zf:
            zf.extractall(unpacked)
        app = unpacked / f"keycloak-{VERSION}"
        if not (app / "bin" / "kc.sh").is_file():
            raise KeycloakError(f"{archives[0].name} holds no keycloak-{VERSION}/bin/kc.sh")
        for script in (app / "bin").glob("*.sh"):  # zipfile keeps no modes
            script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        archives[0].unlink()
        say(f"pre-building Keycloak {VERSION} ({' '.join(BUILD_OPTIONS)})")
        build = subprocess.run(
            [str(app / "bin" / "kc.sh"), "start-dev", *BUILD_OPTIONS,
             "-Dkc.config.build-and-exit=true"],
            capture_output=True, text=True, timeout=600, env=_env(), cwd=app,
        )  # fmt: skip
        if build.returncode != 0:
            tail = (build.stdout + build.stderr).strip().splitlines()[-5:]
            raise KeycloakError(f"cannot pre-build Keycloak {VERSION}: {' '.join(tail)}")
        (app / _COMPLETE).write_text(f"{ARTIFACT}\n")
        if target.exists():
            shutil.rmtree(target)
        os.replace(app, target)
    return target


def _free_ports(count: int) -> list[int]:
    from kctl.local.broker import free_ports

    return [int(p) for p in free_ports(count)]


def realm(clients: dict[str, str]) -> dict[str, object]:
    """The realm imported at start: one confidential client with a service account per
    ``client id: secret`` (what the client-credentials grant asks for), and Keycloak's login
    events on (each token granted or refused is logged, read by :meth:`Keycloak.events`)."""
    return {
        "realm": REALM,
        "enabled": True,
        "eventsEnabled": True,
        "eventsListeners": ["jboss-logging"],
        "clients": [
            {
                "clientId": client,
                "enabled": True,
                "protocol": "openid-connect",
                "publicClient": False,
                "clientAuthenticatorType": "client-secret",
                "secret": secret,
                "serviceAccountsEnabled": True,
                "standardFlowEnabled": False,
                "directAccessGrantsEnabled": False,
            }
            for client, secret in clients.items()
        ],
    }


class Keycloak:
    """``Keycloak({"alice": "s3cret"}, workdir).start()``: ``.issuer`` (the realm's URL,
    Apicurio's ``quarkus.oidc.auth-server-url``), ``.token_endpoint``, ``.events(type)``,
    ``.log_tail()``, ``.stop()``."""

    def __init__(self, clients: dict[str, str], workdir: Path, home: Path | None = None) -> None:
        self.clients = dict(clients)
        self.workdir = Path(workdir)
        self.home = home
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = self.workdir / "keycloak.log"

    @property
    def issuer(self) -> str:
        return f"http://{HOST}:{self.port}/realms/{REALM}"

    @property
    def token_endpoint(self) -> str:
        return f"{self.issuer}/protocol/openid-connect/token"

    def _instance(self, home: Path) -> Path:
        """A directory Keycloak may write to (it rebuilds into lib/quarkus, keeps data/):
        copies of the small parts, a link to the jars."""
        inst = self.workdir / "keycloak"
        inst.mkdir(parents=True)
        for part in ("bin", "conf", "providers", "themes"):
            if (home / part).is_dir():
                shutil.copytree(home / part, inst / part, symlinks=True)
        (inst / "lib").mkdir()
        for entry in (home / "lib").iterdir():
            if entry.name == "lib":
                (inst / "lib" / "lib").symlink_to(entry.resolve())
            elif entry.is_dir():
                shutil.copytree(entry, inst / "lib" / entry.name)
            else:
                shutil.copy2(entry, inst / "lib" / entry.name)
        (inst / "data" / "import").mkdir(parents=True)
        (inst / "data" / "import" / f"{REALM}-realm.json").write_text(
            json.dumps(realm(self.clients))
        )
        return inst

    def start(self, wait: float = 300.0) -> Keycloak:
        home = self.home or fetch(say=lambda line: print(line, file=sys.stderr))
        inst = self._instance(home)
        self.port, management = _free_ports(2)
        cmd = [
            str(inst / "bin" / "kc.sh"),
            "start-dev",
            *BUILD_OPTIONS,
            f"--http-host={HOST}",
            f"--http-port={self.port}",
            # its management interface (on in dev mode) off the default 9000
            f"--http-management-port={management}",
            "--import-realm",
            # successful token grants logged too (refusals are, at WARN, by default)
            "--spi-events-listener-jboss-logging-success-level=info",
        ]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=_env(), cwd=inst,
                start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + wait
        discovery = f"{self.issuer}/.well-known/openid-configuration"
        while True:
            if self.proc.poll() is not None:
                raise KeycloakError(
                    f"Keycloak exited while starting (code {self.proc.returncode}); "
                    f"{self.log}:\n{self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(discovery, timeout=2) as r:
                    if r.status == 200 and json.loads(r.read())["issuer"] == self.issuer:
                        return self
            except (OSError, ValueError, KeyError, urllib.error.URLError):
                pass
            if time.monotonic() > deadline:
                tail = self.log_tail()
                self.stop()
                raise KeycloakError(
                    f"Keycloak did not answer {discovery} within {wait:g}s; {self.log}:\n{tail}"
                )
            time.sleep(0.5)

    def stop(self, wait: float = 20.0) -> None:
        """SIGTERM to its process group, SIGKILL after ``wait`` seconds."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        for sig, grace in ((signal.SIGTERM, wait), (signal.SIGKILL, 10.0)):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, sig)
            try:
                proc.wait(timeout=grace)
                return
            except subprocess.TimeoutExpired:
                continue

    def log_tail(self, lines: int = 20) -> str:
        try:
            text = self.log.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(text[-lines:])

    def events(self, kind: str, client: str | None = None) -> int:
        """How many login events of ``kind`` Keycloak logged (``CLIENT_LOGIN``: a token granted
        for the client-credentials grant; ``CLIENT_LOGIN_ERROR``: refused), for ``client``."""
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return 0
        pattern = rf'type="{re.escape(kind)}",[^\n]*?clientId="{re.escape(client or "")}'
        if client is None:
            pattern = rf'type="{re.escape(kind)}",'
        return len(re.findall(pattern, text))


def main(argv: list[str]) -> int:
    if argv[1:] == ["fetch"]:
        try:
            print(fetch(say=lambda line: print(line, file=sys.stderr)))
        except (KeycloakError, OSError, subprocess.SubprocessError) as exc:
            print(f"keycloak_server.py: {exc}", file=sys.stderr)
            return 1
        return 0
    print("usage: python tests/keycloak_server.py fetch", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main(sys.argv))
