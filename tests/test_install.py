"""Installing kctl from a checkout, as README's first command (scripts/demo.sh) does: the
editable install prints nothing with pip -q (no setuptools warning block before kctl's own
output), and the demo keeps the install's output in a log it shows only when the install fails.

The install runs on a copy of the sources in a scratch venv: an editable install writes
kctl.egg-info and the C extension into the tree it installs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _sources(into: Path) -> Path:
    """What pip needs to build kctl, copied without build products."""
    into.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, into / name)
    shutil.copytree(
        ROOT / "kctl", into / "kctl", ignore=shutil.ignore_patterns("__pycache__", "*.so")
    )
    return into


def test_editable_install_prints_no_setuptools_warning(tmp_path: Path) -> None:
    src = _sources(tmp_path / "src")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}

    def pip(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(python), "-m", "pip", *args, "-q", "--disable-pip-version-check"],
            capture_output=True, text=True, timeout=600, env=env,
        )  # fmt: skip

    # As the demo does: the newest pip, which shows the build backend's warnings (the pip
    # bundled with Python 3.11 hides them).
    upgraded = pip("install", "--upgrade", "pip")
    assert upgraded.returncode == 0, upgraded.stderr
    proc = pip("install", "--no-deps", "-e", str(src))
    assert proc.returncode == 0, proc.stderr
    assert "Please be careful" not in proc.stderr and "Warning" not in proc.stderr, proc.stderr
    assert proc.stdout == "" and proc.stderr == "", (proc.stdout, proc.stderr)
    # The install works: kctl imports from the copy it was installed from.
    where = subprocess.run(
        [str(python), "-c", "import kctl; print(kctl.__file__)"],
        capture_output=True, text=True, cwd=tmp_path, check=True, env=env,
    ).stdout.strip()  # fmt: skip
    assert Path(where) == src / "kctl" / "__init__.py"


def _demo_install_part(tmp_path: Path) -> Path:
    """scripts/demo.sh up to the end of its install step, in a directory of its own whose
    python3 is a stand-in that fails at `-m venv` after printing to both streams."""
    lines = (ROOT / "scripts" / "demo.sh").read_text().splitlines(keepends=True)
    end = next(i for i, line in enumerate(lines) if line.startswith('rm -f "$install_log"'))
    root = tmp_path / "demo"
    (root / "scripts").mkdir(parents=True)
    script = root / "scripts" / "demo.sh"
    script.write_text("".join(lines[: end + 1]) + 'echo "after install"\n')
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "python3"
    fake.write_text("#!/bin/sh\necho 'pip noise on stdout'\necho 'ERROR: no venv' >&2\nexit 1\n")
    fake.chmod(0o755)
    return script


def test_demo_shows_the_install_log_only_when_the_install_fails(tmp_path: Path) -> None:
    script = _demo_install_part(tmp_path)
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env)
    assert proc.returncode == 1, proc
    assert proc.stdout == "", proc.stdout
    assert "pip noise on stdout" in proc.stderr and "ERROR: no venv" in proc.stderr, proc.stderr
    assert "demo: installing kctl failed" in proc.stderr, proc.stderr
    assert "after install" not in proc.stdout + proc.stderr


def test_demo_install_step_is_silent_when_it_succeeds(tmp_path: Path) -> None:
    """A stand-in python3 that succeeds: only the demo's one line about installing is shown."""
    script = _demo_install_part(tmp_path)
    fake = tmp_path / "bin" / "python3"
    fake.write_text(
        "#!/bin/sh\n"
        'if [ "$1 $2" = "-m venv" ]; then mkdir -p .venv/bin; '
        f"ln -sf {sys.executable} .venv/bin/python; fi\n"
        "echo 'noise'; echo 'more noise' >&2\n"
    )
    # .venv/bin/python is the real interpreter: `-m pip install -q ... -e '.[local,spark,schemas]'` would
    # install for real, so the demo's pip is replaced by a module that only makes noise.
    fake_pip = tmp_path / "fakepip" / "pip"
    fake_pip.mkdir(parents=True)
    (fake_pip / "__init__.py").write_text("")
    (fake_pip / "__main__.py").write_text(
        "import sys\nprint('Collecting ...')\nprint('setuptools warning', file=sys.stderr)\n"
    )
    env = {
        **os.environ,
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(tmp_path / "fakepip"),
    }
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc
    assert proc.stdout == "after install\n", proc.stdout
    assert (
        proc.stderr == "installing kctl and its local, spark and schemas extras into .venv ...\n"
    ), proc.stderr
