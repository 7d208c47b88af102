"""A real Prometheus server for tests: Debian's ``prometheus`` package (scripts/test.sh installs
it where apt-get can), started on a free loopback port with its own configuration and TSDB
directory, scraping the given targets every second; its HTTP API is queried with PromQL.

    with prometheus_server(["127.0.0.1:9308"], tmp_path) as prom:
        prom.wait_for_target_up()
        prom.query('kafka_consumergroup_group_lag{group="g"}')

``missing()`` says what is missing when the binary is not there, for a skip reason."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

READY_TIMEOUT_S = 60.0


def binary() -> str | None:
    """The prometheus executable (PATH, else Debian's /usr/bin/prometheus), or None."""
    found = shutil.which("prometheus")
    if found:
        return found
    return "/usr/bin/prometheus" if Path("/usr/bin/prometheus").is_file() else None


def missing() -> str | None:
    """Why no Prometheus server can run here (a skip reason), or None."""
    if binary() is None:
        return (
            "no prometheus executable (Debian's 'prometheus' package: scripts/test.sh installs "
            "it with apt-get when run as root)"
        )
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def config_text(
    targets: list[str], interval: str = "1s", rule_files: list[Path] | None = None
) -> str:
    """prometheus.yml scraping ``targets`` (host:port, path /metrics) every ``interval``."""
    quoted = ", ".join(f"'{t}'" for t in targets)
    rules = "".join(f"\n  - '{p}'" for p in rule_files or [])
    return (
        "global:\n"
        f"  scrape_interval: {interval}\n"
        f"  scrape_timeout: {interval}\n"
        f"  evaluation_interval: {interval}\n"
        + (f"rule_files:{rules}\n" if rule_files else "")
        + "scrape_configs:\n"
        "  - job_name: kctl\n"
        "    static_configs:\n"
        f"      - targets: [{quoted}]\n"
    )


class PrometheusServer:
    """A running Prometheus: ``url``, ``query(promql)``, ``targets()``, ``log()``."""

    def __init__(self, process: subprocess.Popen[bytes], url: str, log_path: Path) -> None:
        self.process = process
        self.url = url
        self.log_path = log_path

    def log(self, tail: int = 40) -> str:
        lines = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join(lines[-tail:])

    def get(self, path: str, params: dict[str, str] | None = None) -> Any:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        with urllib.request.urlopen(f"{self.url}{path}{query}", timeout=10) as response:
            return json.loads(response.read())

    def query(self, promql: str) -> list[dict[str, Any]]:
        """An instant query through the HTTP API: the result vector (metric labels, value)."""
        answer = self.get("/api/v1/query", {"query": promql})
        assert answer["status"] == "success", answer
        return list(answer["data"]["result"])

    def targets(self) -> list[dict[str, Any]]:
        return list(self.get("/api/v1/targets")["data"]["activeTargets"])

    def ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def wait_for(self, condition: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
        """Poll ``condition`` until it returns something true (bounded); that value. Fails
        naming ``what`` with the server's log tail."""
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise AssertionError(f"prometheus exited {self.process.returncode}:\n{self.log()}")
            value = condition()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
            time.sleep(0.2)

    def wait_for_target_up(self, timeout: float = 30.0) -> None:
        """Every target scraped at least once and healthy (``up`` 1)."""

        def up() -> bool:
            targets = self.targets()
            return bool(targets) and all(t["health"] == "up" for t in targets)

        self.wait_for(up, f"every target up ({self.url}/api/v1/targets)", timeout)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


@contextmanager
def prometheus_server(
    targets: list[str],
    workdir: Path,
    interval: str = "1s",
    rule_files: list[Path] | None = None,
) -> Iterator[PrometheusServer]:
    """A Prometheus server scraping ``targets`` every ``interval``, ready (``/-/ready``) when
    entered, stopped at the end. Its configuration, TSDB and log live under ``workdir``."""
    exe = binary()
    assert exe is not None, missing()
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / "prometheus.yml"
    config.write_text(config_text(targets, interval, rule_files or []))
    port = free_port()
    log_path = workdir / "prometheus.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [
                exe,
                f"--config.file={config}",
                f"--storage.tsdb.path={workdir / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--log.level=warn",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    server = PrometheusServer(process, f"http://127.0.0.1:{port}", log_path)
    try:
        server.wait_for(server.ready, f"prometheus ready on {server.url}", READY_TIMEOUT_S)
        yield server
    finally:
        server.stop()
