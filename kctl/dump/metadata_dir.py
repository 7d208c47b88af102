"""Reading a ``__cluster_metadata-0`` directory from disk into a :class:`kctl.logfmt.image.Image`:
the newest KRaft snapshot (``*.checkpoint``) at or before the wanted offset, then the log
segments after it. The replay itself is pure (kctl/logfmt/image.py); this is its file side."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from kctl.errors import KctlError, UsageError
from kctl.logfmt import image as I
from kctl.logfmt.wire import DecodeError

_CHECKPOINT = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
_SEGMENT = re.compile(r"^(\d{20})\.log$")


def _files(directory: Path) -> tuple[list[tuple[int, Path]], list[tuple[int, Path]]]:
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a directory", "give a __cluster_metadata-0 directory")
    checkpoints, segments = [], []
    for p in directory.iterdir():
        if m := _CHECKPOINT.match(p.name):
            checkpoints.append((int(m.group(1)), p))
        elif m := _SEGMENT.match(p.name):
            segments.append((int(m.group(1)), p))
    if not checkpoints and not segments:
        raise UsageError(
            f"{directory} holds no KRaft snapshot (*.checkpoint) and no log segment (*.log)",
            "give a __cluster_metadata-0 directory",
        )
    return sorted(checkpoints), sorted(segments)


def _read(path: Path) -> bytes:
    """A segment or snapshot of the directory, whole: a regular file (a FIFO or device named
    like one is refused), no size cap."""
    from kctl.inputs import LOG, read_bytes

    return read_bytes(path, "", LOG)


def _segment_entries(segments: list[tuple[int, Path]], start: int) -> Iterator[I.Entry]:
    for i, (_base, path) in enumerate(segments):
        nxt = segments[i + 1][0] if i + 1 < len(segments) else None
        if nxt is not None and nxt <= start:
            continue
        try:
            for entry in I.entries(_read(path), where=f"{path.name}: "):
                if entry.offset >= start:
                    yield entry
        except DecodeError as exc:
            raise KctlError(f"cannot replay {path}", str(exc)) from exc


def load(directory: Path, *, at_offset: int | None = None) -> I.Image:
    """The image at ``at_offset`` (inclusive; the last offset when None)."""
    checkpoints, segments = _files(directory)
    usable = [(end, p) for end, p in checkpoints if at_offset is None or end - 1 <= at_offset]
    if usable:
        end, path = usable[-1]
        try:
            img = I.from_snapshot(I.entries(_read(path), where=f"{path.name}: "), end)
        except DecodeError as exc:
            raise KctlError(f"cannot replay {path}", str(exc)) from exc
        start = end
    else:
        if segments and segments[0][0] > 0:
            raise KctlError(
                f"cannot build the image at offset {at_offset}",
                f"the log starts at offset {segments[0][0]} and no snapshot is at or before it",
            )
        img, start = I.Image(), 0
    return I.replay(_segment_entries(segments, start), img, until=at_offset)


def cluster_id(directory: Path) -> str | None:
    """The cluster id from ``meta.properties`` of the log dir holding ``directory``, if any."""
    props = directory.parent / "meta.properties"
    try:
        text = props.read_text(errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "cluster.id":
            return value.strip() or None
    return None
