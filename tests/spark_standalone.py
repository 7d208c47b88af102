"""A standalone Spark cluster on loopback — one master and one worker started from the
pyspark installation (``spark-class org.apache.spark.deploy.master.Master`` / ``...Worker``) —
for the tests and benchmarks that show ``--master spark://`` runs the same pipeline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kctl.local.broker import free_port


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as resp:
            return int(json.load(resp).get("aliveworkers", 0))
    except (OSError, ValueError):
        return 0


@contextmanager
def standalone_cluster(
    cores: int = 2, memory: str = "2g", log_dir: Path | None = None, timeout: float = 90
) -> Iterator[str]:
    """Start a master and a worker on 127.0.0.1, wait (polling the master's status page) until
    the worker has registered, yield the ``spark://`` URL, stop both."""
    home = _spark_home()
    spark_class = str(home / "bin" / "spark-class")
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_NO_DAEMONIZE": "1",
    }
    port, ui, worker_ui = free_port(), free_port(), free_port()
    url = f"spark://127.0.0.1:{port}"
    logs = log_dir or Path(os.environ.get("TMPDIR", "/tmp"))
    procs: list[subprocess.Popen[bytes]] = []
    try:
        master_log = open(logs / f"spark-master-{port}.log", "wb")  # noqa: SIM115
        procs.append(
            subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                 "--port", str(port), "--webui-port", str(ui)],
                env=env, stdout=master_log, stderr=subprocess.STDOUT,
            )
        )  # fmt: skip
        worker_log = open(logs / f"spark-worker-{port}.log", "wb")  # noqa: SIM115
        procs.append(
            subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host",
                 "127.0.0.1", "--cores", str(cores), "--memory", memory, "--webui-port",
                 str(worker_ui), "--work-dir", str(logs / f"spark-work-{port}")],
                env=env, stdout=worker_log, stderr=subprocess.STDOUT,
            )
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while _alive_workers(ui) < 1:
            for p in procs:
                if p.poll() is not None:
                    raise RuntimeError(f"a Spark daemon exited ({p.returncode}); see {logs}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"no Spark worker registered within {timeout:.0f} s")
            time.sleep(0.5)  # polling the master's status page
        yield url
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
