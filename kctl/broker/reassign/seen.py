"""The first-seen times of moves (``reassign status``'s age): the broker does not say when a
reassignment started, so kctl notes when it submitted one (``execute``, ``move-dir``) or first
saw one (``status``) in a JSON file in its state dir, which the command names (``state_dir``);
the keys and the ages are :mod:`kctl.reassign.status`'s. An age is a nicety: a file that cannot
be read or written never fails a command."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kctl.broker.client import Admin
from kctl.reassign.assign import TP
from kctl.reassign.status import Move, StatusRow, dir_seen_key, seen_key, with_ages

SEEN_FILE = "reassignments-seen.json"


def _load(state_dir: Path) -> dict[str, float]:
    try:
        data = json.loads((state_dir / SEEN_FILE).read_text())
        return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save(state_dir: Path, data: dict[str, float]) -> None:
    path = state_dir / SEEN_FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, sort_keys=True))
        tmp.replace(path)
    except OSError:
        pass  # an age is a nicety: never fail a command over it


def _cluster_id(admin: Admin) -> str:
    try:
        return str(admin.metadata().cluster_id or "")
    except Exception:
        return ""


def first_seen(admin: Admin, moves: list[Move], state_dir: Path) -> list[StatusRow]:
    """The moves in flight with their ages (:func:`kctl.reassign.status.with_ages`); the times
    of the moves no longer in flight are dropped from the file."""
    cluster = _cluster_id(admin)
    rows, keep = with_ages(moves, _load(state_dir), cluster, time.time())
    _save(state_dir, keep)
    return rows


def note_dirs_submitted(
    admin: Admin,
    rows: Sequence[Mapping[str, Any]],
    state_dir: Path,
    log_dir: str | None = None,
) -> None:
    """Note now as the start of the copies between log dirs that kctl submitted (the accepted
    rows of AlterReplicaLogDirs answers: topic, partition, broker and ``log_dir`` or the one
    given), for status's age."""
    accepted = [r for r in rows if r.get("status") == "accepted"]
    if not accepted:
        return
    cluster = _cluster_id(admin)
    data = _load(state_dir)
    now = time.time()
    for r in accepted:
        d = r.get("log_dir") or log_dir
        key = dir_seen_key(cluster, r["topic"], r["partition"], r["broker"], str(d))
        data.setdefault(key, now)
    _save(state_dir, data)


def note_submitted(admin: Admin, moves: Mapping[TP, list[int]], state_dir: Path) -> None:
    """Note now as the start of ``moves`` (partition -> target replicas) that kctl submitted."""
    cluster = _cluster_id(admin)
    data = _load(state_dir)
    now = time.time()
    for tp, target in moves.items():
        data.setdefault(seen_key(cluster, tp[0], tp[1], list(target)), now)
    _save(state_dir, data)
