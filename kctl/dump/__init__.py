"""Offline forensics of Kafka's on-disk files, below ``kctl dump-segment``: one call,
:func:`dump`, reads files and directories and yields result items (:mod:`kctl.dump.model`) in
output order, for :class:`kctl.formatters.dump.DumpWriter` to render.

- :mod:`kctl.dump.files`: opening and chunked reading, file types by name, the offset-gap check
- :mod:`kctl.dump.segment`: ``.log`` segments and KRaft snapshots (the scan loop, the fast
  path, record key/value decoding)
- :mod:`kctl.dump.indexes`: ``.index``/``.timeindex`` entries and their check against the log
- :mod:`kctl.dump.small`: ``.txnindex``, producer snapshots, checkpoints, properties
- :mod:`kctl.dump.summary`: summaries of partition directories

Decoding of bytes is :mod:`kctl.logfmt`'s (pure); nothing here prints or renders.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator
from pathlib import Path
from typing import Any

from kctl.dump.model import DumpOptions, FileStart

__all__ = ["DumpOptions", "dump"]


def dump(paths: Iterable[Path], opts: DumpOptions) -> Iterator[Any]:
    """Every result item of ``paths`` (files, partition directories, log dirs), in order. With
    ``opts.strict`` it stops after the file or directory where the first problem was found."""
    from kctl.dump.segment import payload_decoder

    payload = opts.payload or payload_decoder(opts.decoder)
    for p in paths:
        if p.is_dir():
            from kctl.dump.summary import read_dir

            problems = yield from read_dir(p)
        else:
            problems = yield from _read_file(p, opts, payload)
        if opts.strict and problems:
            break


def _read_file(path: Path, opts: DumpOptions, payload: Any) -> Generator[Any, None, int]:
    from kctl.dump.files import check_input, detect_type

    kind = opts.file_type or detect_type(path)
    check_input(path, kind)
    if kind is None:
        # Kafka's tool prints "Ignoring unknown file" and exits 0; a file named on the command
        # line that is not a Kafka file is a mistake worth an error (exit 1).
        from kctl.errors import KctlError

        raise KctlError(
            f"{path} is not a Kafka file kctl knows by its name",
            "expected *.log, *.index, *.timeindex, *.txnindex, *.snapshot, *.checkpoint, "
            "quorum-state, meta.properties, partition.metadata; or name its kind with --type",
        )
    yield FileStart(path)
    if kind in ("log", "kraft-snapshot"):
        from kctl.dump.segment import read_log

        return (yield from read_log(path, kind, opts, payload))
    if kind in ("index", "timeindex"):
        from kctl.dump.indexes import read_index

        return (yield from read_index(path, kind, opts))
    from kctl.dump.small import read_small

    return (yield from read_small(path, kind))
