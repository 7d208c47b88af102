"""The one reader of the files kctl takes as input (docs/limits.md).

Every input file named by an option, a profile or an environment variable is read through
:func:`read_input` (text) or :func:`read_bytes`: a regular file is expected (a directory, a
FIFO, a device such as ``/dev/zero`` or a socket is refused before a byte is read: the path is
stat'ed first, then opened with ``O_NONBLOCK`` and checked again with ``fstat``, so a FIFO can
never block the open); its size is capped by what the file is for (:class:`Kind`), checked
against ``fstat`` and again while reading (a file may grow, or lie about its size); text must be
UTF-8 (the error names the byte offset where decoding failed). Every error is one line naming
the option (or what the file is) and the path; a size error names the limit too.

Paths stay bytes-clean: a ``str`` from the command line carries undecodable bytes as surrogate
escapes, which ``os`` functions turn back into the same bytes.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from kctl.errors import KctlError, UsageError

KiB = 1 << 10
MiB = 1 << 20
GiB = 1 << 30


@dataclass(frozen=True)
class Kind:
    """What an input file is for, and the most kctl reads of it."""

    name: str
    limit: int | None  # bytes; None: no cap (the reader streams or maps the file)


SECRET = Kind("secret", 64 * KiB)  # passwords, HMACs, file: references
PROPERTIES = Kind("properties", 1 * MiB)  # --command-config
PROFILES = Kind("profile", 1 * MiB)  # the profile file (KCTL_CONFIG)
PLAN = Kind("plan", 64 * MiB)  # reassignment plans, election files
ACL = Kind("ACL", 64 * MiB)  # acls add --from-file
OFFSETS = Kind("offsets", 64 * MiB)  # groups reset-offsets --from-file, records delete
SNAPSHOT = Kind("snapshot", 1 * GiB)  # replicas validate --snapshot
SCHEMA = Kind("schema", 16 * MiB)  # schemas register/check FILE, produce --value/key-schema
KAFKA_TEXT = Kind("checkpoint, properties or quorum-state", 64 * MiB)  # dump-segment's text files
LOG = Kind("log", None)  # segments and other Kafka files: mapped or streamed, never capped

KINDS = (SECRET, PROPERTIES, PROFILES, PLAN, ACL, OFFSETS, SNAPSHOT, SCHEMA, KAFKA_TEXT)

_READ = 1 * MiB  # bytes asked for per read() beyond the size fstat gave


def size_text(n: int) -> str:
    """``n`` bytes as the limits are written: 64 KiB, 1 MiB, 1 GiB (else bytes)."""
    for unit, name in ((GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")):
        if n >= unit and n % unit == 0:
            return f"{n // unit} {name}"
    return f"{n} bytes"


def _what(option: str, path: str | os.PathLike[str]) -> str:
    return f"{option} {path}" if option else str(path)


def _file_type(mode: int) -> str | None:
    """What a non-regular file is, as the errors say it; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def require_regular(
    path: str | os.PathLike[str], option: str, error: type[KctlError] = KctlError
) -> os.stat_result:
    """``path``'s stat (symlinks followed) when it is a regular file; else the one-line error:
    missing or unreadable (``error``, exit 1 by default), or not a regular file."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise error(f"cannot read {_what(option, path)}", exc.strerror or str(exc)) from None
    except ValueError as exc:  # an embedded NUL
        raise error(f"cannot read {_what(option, path)}", str(exc)) from None
    kind = _file_type(st.st_mode)
    if kind is not None:
        raise error(f"{_what(option, path)} is {kind}", "a regular file is expected")
    return st


def _open(path: str | os.PathLike[str], option: str, error: type[KctlError]) -> int:
    """A file descriptor of the regular file ``path``: checked by name, opened without
    blocking (a FIFO swapped in after the check cannot hang the open) and checked again."""
    require_regular(path, option, error)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise error(f"cannot read {_what(option, path)}", exc.strerror or str(exc)) from None
    kind = _file_type(os.fstat(fd).st_mode)
    if kind is not None:
        os.close(fd)
        raise error(f"{_what(option, path)} is {kind}", "a regular file is expected")
    return fd


def too_large(
    option: str, path: str | os.PathLike[str], kind: Kind, error: type[KctlError] = KctlError
) -> KctlError:
    """The error of a file over its kind's limit: a usage error (exit 2) unless ``error``
    names another class."""
    assert kind.limit is not None
    return (error if error is not KctlError else UsageError)(
        f"{_what(option, path)} is larger than {size_text(kind.limit)}",
        f"the limit for {kind.name} files; see docs/limits.md",
    )


def _read_fd(fd: int, size_hint: int, limit: int | None) -> bytes | None:
    """All of ``fd``; None once more than ``limit`` bytes came."""
    chunks: list[bytes] = []
    total = 0
    want = size_hint + 1  # one more: a file that grew shows at once
    while True:
        ask = max(want, 64 * KiB)
        if limit is not None:
            ask = min(ask, limit + 1 - total)
        piece = os.read(fd, ask)
        if not piece:
            break
        chunks.append(piece)
        total += len(piece)
        if limit is not None and total > limit:
            return None
        want = _READ
    return b"".join(chunks)


def read_bytes(
    path: str | os.PathLike[str],
    option: str,
    kind: Kind,
    *,
    error: type[KctlError] = KctlError,
    stdin_dash: bool = False,
) -> bytes:
    """The bytes of the input file ``path`` named by ``option`` (or described by it: "profile
    file"), at most ``kind.limit`` of them (see the module's docstring). ``stdin_dash``: ``-``
    is standard input (read under the same limit). ``error``: the class of every error raised
    (default: exit 1 for an unreadable or non-regular file, exit 2 for one over its limit)."""
    if stdin_dash and str(path) == "-":
        try:
            data = _read_fd(sys.stdin.fileno(), 0, kind.limit)
        except OSError as exc:
            raise error(f"cannot read {_what(option, '-')}", exc.strerror or str(exc)) from None
        if data is None:
            raise too_large(option, "-", kind, error)
        return data
    path = os.path.expanduser(path)
    fd = _open(path, option, error)
    try:
        size = os.fstat(fd).st_size
        if kind.limit is not None and size > kind.limit:
            raise too_large(option, path, kind, error)
        data = _read_fd(fd, size, kind.limit)
    except OSError as exc:
        raise error(f"cannot read {_what(option, path)}", exc.strerror or str(exc)) from None
    finally:
        os.close(fd)
    if data is None:
        raise too_large(option, path, kind, error)
    return data


def decode(
    raw: bytes, path: str | os.PathLike[str], option: str, error: type[KctlError] = UsageError
) -> str:
    """``raw`` as UTF-8 text; else a usage error naming the byte where decoding failed."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(
            f"{_what(option, path)} is not UTF-8 text", f"undecodable byte at offset {exc.start}"
        ) from None


def read_input(
    path: str | os.PathLike[str],
    option: str,
    kind: Kind,
    *,
    error: type[KctlError] | None = None,
    stdin_dash: bool = False,
) -> str:
    """The UTF-8 text of the input file ``path`` (:func:`read_bytes`, then :func:`decode`).
    ``error``: one class for every error (e.g. ConfigError for profile files); by default
    exit 1 for an unreadable file, exit 2 for bad content."""
    raw = read_bytes(path, option, kind, error=error or KctlError, stdin_dash=stdin_dash)
    shown = "-" if stdin_dash and str(path) == "-" else os.path.expanduser(path)
    return decode(raw, shown, option, error or UsageError)


def as_path(path: str | os.PathLike[str]) -> Path:
    """``path`` as a Path, ``~`` expanded (the form the errors show)."""
    return Path(os.path.expanduser(path))


def read_json(path: str | os.PathLike[str], what: str, kind: Kind = PLAN) -> object:
    """The JSON document in ``path`` (at most ``kind``'s limit: a plan's 64 MiB unless told);
    ``what`` names it in the errors (unreadable or not a regular file: exit 1, too large or not
    JSON: exit 2). Reassignment plans and election files come through here."""
    import orjson

    text = decode(read_bytes(path, what, kind), path, what)
    try:
        parsed: object = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"{what} {path} is not JSON", str(exc)) from exc
    return parsed
