"""Bytecode for kctl before a timed run, as a pip install leaves it.

With PYTHONDONTWRITEBYTECODE set (as on the project machines) an editable checkout compiles
every module changed since its last ``.pyc`` at each start of kctl: up to ~90 ms of CPU per
command, a cost no installed kctl pays. Each benchmark calls :func:`compile_kctl` first."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def compile_kctl() -> None:
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(ROOT / "kctl")],
        check=True,
        stdout=subprocess.DEVNULL,
    )
