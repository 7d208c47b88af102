"""The ``kctl`` executable's first module: help pages from a cache, everything else to kctl.cli.

Rendering a help page costs about 0.1 s, nearly all of it importing Typer, Click and rich (and
rich's Markdown parser) — 6x the start of a bare Python. A help page depends only on kctl's code,
the terminal and a few environment variables, so the first rendering of each page is kept under
``~/.cache/kctl/help/`` (``$XDG_CACHE_HOME``) and printed from there next time, before anything
heavy is imported. The key holds kctl's version, the modification times of its sources and of
the site-packages directories (an upgraded Typer or rich), the words of the command line, the
terminal's width and whether stdout is one, and the variables that change rich's output; any
change renders afresh. Pages are private files (0600, in a 0700 directory); one another user
could have written is never printed. ``KCTL_HELP_CACHE=0`` turns the cache off. Only the
standard library is imported here.
"""

from __future__ import annotations

import hashlib
import io
import os
import sys
from pathlib import Path
from typing import Any, BinaryIO

_HELP = ("--help", "-h")
# What changes rich's or Typer's rendering besides the terminal (width, colour, completion).
_ENV = ("COLUMNS", "LINES", "TERM", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")
_MAX_WORDS = 4


def cache_key(argv: list[str]) -> str | None:
    """The cache key of ``kctl ARGV`` when it only asks for a help page (command words, then
    ``--help``/``-h``, nothing else); None for anything else."""
    if os.environ.get("KCTL_HELP_CACHE", "1") == "0":
        return None
    if not argv or argv[-1] not in _HELP or len(argv) > _MAX_WORDS:
        return None
    words = argv[:-1]
    if any(not w or w.startswith("-") or not w.replace("-", "").isalnum() for w in words):
        return None
    if any(k.startswith("_KCTL") and k.endswith("_COMPLETE") for k in os.environ):
        return None
    source = Path(__file__).resolve().parent
    parts = [_version(), *words, argv[-1], _terminal()]
    parts += [f"{k}={os.environ.get(k, '')}" for k in _ENV]
    try:
        for path in sorted(source.rglob("*.py")):
            parts.append(f"{path.relative_to(source)}:{path.stat().st_mtime_ns}")
        # A package installed, upgraded or removed (Typer, rich) changes its directory.
        for entry in sys.path:
            if entry.endswith("site-packages"):
                parts.append(f"{entry}:{Path(entry).stat().st_mtime_ns}")
    except OSError:
        return None
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def _version() -> str:
    from kctl import __version__

    return __version__


def _terminal() -> str:
    try:
        tty = os.isatty(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        return "notty"
    if not tty:
        return "notty"
    try:
        return f"tty:{os.get_terminal_size(sys.stdout.fileno()).columns}"
    except OSError:
        return "tty:?"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kctl" / "help"


def _trusted(path: Path) -> bool:
    """Ours and writable by nobody else: a page another user planted is never printed."""
    try:
        st = path.stat()
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def load(key: str) -> bytes | None:
    directory = cache_dir()
    page = directory / f"{key}.txt"
    if not (_trusted(directory) and _trusted(page)):
        return None
    try:
        return page.read_bytes()
    except OSError:
        return None


def store(key: str, page: bytes) -> None:
    """Write the page atomically (a private temporary file, then rename); never fails kctl."""
    directory = cache_dir()
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _trusted(directory):
            return
        tmp = directory / f".{key}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(page)
        os.replace(tmp, directory / f"{key}.txt")
    except OSError:
        pass


class _Tee(io.RawIOBase):
    """The bytes of stdout for one rendering: passed through, and a copy kept. Text and binary
    writes (``sys.stdout.buffer``, which Click uses) both end here."""

    def __init__(self, inner: BinaryIO) -> None:
        self.inner = inner
        self.copy = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self.copy += chunk
        self.inner.write(chunk)
        return len(chunk)

    def flush(self) -> None:
        self.inner.flush()

    def isatty(self) -> bool:
        return self.inner.isatty()

    def fileno(self) -> int:
        return self.inner.fileno()


def main() -> None:
    argv = sys.argv[1:]
    key = cache_key(argv)
    if key is not None:
        page = load(key)
        if page is not None:
            try:
                sys.stdout.buffer.write(page)
                sys.stdout.flush()
            except BrokenPipeError:
                pass
            return
    from kctl import cli

    if key is None:
        cli.main()
        return
    real = sys.stdout
    sys.stdout.flush()
    tee = _Tee(real.buffer)
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(tee),  # type: ignore[arg-type]
        encoding=real.encoding,
        errors=real.errors,
        line_buffering=bool(real.line_buffering),
    )
    code: object = 0
    try:
        cli.main()
    except SystemExit as exc:
        code = exc.code
    finally:
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            code = code or 1
        sys.stdout = real
    if code in (0, None):
        store(key, bytes(tee.copy))
    raise SystemExit(code)
