"""Reading the small files of a log dir: ``.txnindex``, producer-state ``.snapshot``, the
checkpoints, ``partition.metadata``, ``meta.properties`` and ``quorum-state``."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

from kctl.dump.files import mapped
from kctl.dump.model import AbortedTxn, Found, ProducerEntry, SmallDocument
from kctl.logfmt import batch as B
from kctl.logfmt import indexes as X
from kctl.logfmt import snapshot as S
from kctl.logfmt.wire import DecodeError


def read_small(path: Path, kind: str) -> Generator[Any, None, int]:
    """The items of one small file of type ``kind``. Returns how many problems it found."""
    file = str(path)
    problems = 0
    try:
        if kind == "txnindex":
            with mapped(path) as buf:
                for t in X.aborted_txns(buf):
                    yield AbortedTxn(file, t)
                if len(buf) % 34:
                    raise DecodeError(f"size {len(buf)} is not a multiple of 34")
            return problems
        if kind == "producer-snapshot":
            with mapped(path) as buf:
                snap = S.producer_snapshot(buf)
            if not snap.crc_valid:
                problems += 1
                yield Found(
                    path,
                    B.Problem(
                        2,
                        "crc",
                        f"Snapshot is corrupt (CRC is no longer valid). Stored crc: "
                        f"{snap.crc}. Computed crc: {snap.computed_crc}",
                    ),
                )
            for e in snap.entries:
                yield ProducerEntry(file, snap, e)
            return problems
        from kctl.inputs import KAFKA_TEXT, read_bytes

        content = read_bytes(path, "", KAFKA_TEXT).decode("utf-8", errors="replace")
        if kind == "leader-epoch-checkpoint":
            doc: dict[str, Any] = S.checkpoint(content, "leader-epoch")
        elif kind == "offset-checkpoint":
            doc = S.checkpoint(content, "offset")
        elif kind in ("partition-metadata", "meta-properties"):
            doc = S.properties(content)
        else:
            doc = S.quorum_state(content)
        yield SmallDocument(file, kind, doc)
    except DecodeError as exc:
        problems += 1
        yield Found(path, B.Problem(0, "file", str(exc)))
    return problems
