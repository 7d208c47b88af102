"""``kctl partitions reassign status``, pure: one row per move in flight in the cluster, whoever
started it (a reassignment, kind ``replicas``, or a copy between a broker's log dirs, kind
``log-dir``), from what the brokers answered (the ongoing reassignments, the replicas' sizes on
disk, the throttle configs), with its age, and the lines for stderr.

The broker does not say when a move started, so kctl notes when it submitted one (``execute``,
``move-dir``) or first saw one (``status``), keyed by cluster id, partition and target replicas
(:func:`seen_key`); the state file holding those times is read and written by
:mod:`kctl.broker.reassign.seen`. Here: the keys and the ages (:func:`with_ages`)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TypedDict

from kctl.reassign.progress import Sizes, copied
from kctl.reassign.report import human_seconds
from kctl.reassign.rows import DirMove, Ongoing
from kctl.reassign.throttles import DIR_RATE_CONFIG, ThrottleValue

STATUS_COLUMNS = (
    "topic", "partition:>", "kind", "replicas", "adding_replicas", "removing_replicas",
    "log_dir", "bytes_copied:>", "bytes_total:>", "age", "throttled",
)  # fmt: skip


class Move(TypedDict):
    """A move in flight, before its age is known."""

    topic: str
    partition: int
    replicas: list[int]
    adding_replicas: list[int]
    removing_replicas: list[int]
    kind: str  # replicas | log-dir
    broker: int | None  # the broker of a log-dir move
    from_dir: str | None
    log_dir: str | None
    bytes_copied: int | None  # None: an adding replica's broker did not answer
    bytes_total: int
    throttled: bool


class StatusRow(Move):
    first_seen: str | None  # when kctl first saw it (UTC, ISO 8601); None: now
    age: str  # for people; "unknown" the first time
    age_seconds: float | None


def moves(
    ongoing: list[Ongoing],
    dir_moves: list[DirMove],
    sizes: Sizes,
    answered: set[int],
    throttles: list[ThrottleValue],
) -> list[Move]:
    """The reassignments (``ongoing``) with the bytes their adding replicas copied (``sizes``
    of the brokers that ``answered`` DescribeLogDirs; an adding replica elsewhere makes it
    unknown) of the partition's size (its largest replica not being added), then the copies
    between log dirs; each throttled or not (its topic's throttled replicas; a log-dir move,
    its broker's log-dir rate)."""
    held: dict[tuple[str, int], list[tuple[int, int]]] = {}  # partition -> (broker, bytes)
    for (t, p, b), v in sizes.items():
        held.setdefault((t, p), []).append((b, v))
    throttled_topics = {n for k, n, _ in throttles if k == "topic"}
    dir_rated = {int(n) for k, n, v in throttles if k == "broker" and DIR_RATE_CONFIG in v}
    out: list[Move] = []
    for r in ongoing:
        tp = (r["topic"], r["partition"])
        adding = r["adding_replicas"]
        size = max((v for b, v in held.get(tp, []) if b not in adding), default=0)
        done, total = copied(tp, list(adding), sizes, size)
        # an adding replica on a broker that did not answer (or is fenced, so was not asked):
        # its bytes are not known
        unknown = any(b not in answered for b in adding)
        out.append(
            {
                "topic": r["topic"],
                "partition": r["partition"],
                "replicas": r["replicas"],
                "adding_replicas": adding,
                "removing_replicas": r["removing_replicas"],
                "kind": "replicas",
                "broker": None,
                "from_dir": None,
                "log_dir": None,
                "bytes_copied": None if unknown else done,
                "bytes_total": total,
                "throttled": r["topic"] in throttled_topics,
            }
        )
    for d in dir_moves:
        out.append(
            {
                "topic": d["topic"],
                "partition": d["partition"],
                "kind": d["kind"],
                "broker": d["broker"],
                "replicas": d["replicas"],
                "adding_replicas": d["adding_replicas"],
                "removing_replicas": d["removing_replicas"],
                "from_dir": d["from_dir"],
                "log_dir": d["log_dir"],
                "bytes_copied": d["bytes_copied"],
                "bytes_total": d["bytes_total"],
                "throttled": d["broker"] in dir_rated,
            }
        )
    return out


def seen_key(cluster: str, topic: str, partition: int, target: list[int]) -> str:
    """The key of a reassignment of ``topic``-``partition`` to ``target`` in the state file."""
    return f"{cluster}|{topic}|{partition}|{','.join(map(str, sorted(target)))}"


def dir_seen_key(cluster: str, topic: str, partition: int, broker: int, log_dir: str) -> str:
    """The key of a copy of a replica into ``log_dir`` on ``broker`` in the state file."""
    return f"{seen_key(cluster, topic, partition, [broker])}|{log_dir}"


def move_key(cluster: str, move: Move) -> str:
    if move["kind"] == "log-dir":
        broker = move["broker"]
        assert broker is not None  # a log-dir move has its broker
        return dir_seen_key(cluster, move["topic"], move["partition"], broker, str(move["log_dir"]))
    target = [b for b in move["replicas"] if b not in move["removing_replicas"]]
    return seen_key(cluster, move["topic"], move["partition"], target)


def with_ages(
    moves: list[Move], seen: Mapping[str, float], cluster: str, now: float
) -> tuple[list[StatusRow], dict[str, float]]:
    """Each move with ``first_seen`` (kctl's first sight of it: its submission by kctl or an
    earlier ``status``, from ``seen``, epoch s) and its ``age`` at ``now``; a move seen for the
    first time has age "unknown". And the times to keep: ``seen``'s for other clusters, and
    this cluster's for the moves still in flight (the others are dropped), a new one at ``now``."""
    keep: dict[str, float] = {k: v for k, v in seen.items() if not k.startswith(cluster + "|")}
    out: list[StatusRow] = []
    for m in moves:
        key = move_key(cluster, m)
        first = seen.get(key)
        keep[key] = first if first is not None else now
        out.append(
            {
                **m,
                "first_seen": None
                if first is None
                else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(first)),
                "age": "unknown" if first is None else human_seconds(now - first),
                "age_seconds": None if first is None else round(now - first, 1),
            }
        )
    return out, keep


def status_notes(
    rows: list[StatusRow],
    throttles: list[ThrottleValue],
    answered: set[int],
    silent: list[int],
) -> list[str]:
    """What ``status`` says on stderr: the counts and the throttle rates set on brokers; the
    brokers that did not answer (``silent``, or not among those that ``answered`` though a
    move's replica is on them), whose copied bytes and rates are unknown."""
    dirs = sum(1 for r in rows if r["kind"] == "log-dir")
    rates = [f"broker {n}: {', '.join(f'{k}={v}' for k, v in sorted(v.items()))}"
             for k, n, v in throttles if k == "broker"]  # fmt: skip
    out = [
        f"{len(rows) - dirs} ongoing reassignment(s), {dirs} log-dir move(s)"
        + (f"; throttles: {'; '.join(rates)}" if rates else "; no broker throttle set")
    ]
    moving = {b for r in rows if r["kind"] == "replicas" for b in r["replicas"]}
    down = sorted({*silent, *(moving - answered)})
    if down:
        out.append(
            f"kctl: warning: broker(s) {', '.join(map(str, down))} did not answer (down or "
            "fenced): the bytes copied to them and their throttle rates are unknown"
        )
    return out
