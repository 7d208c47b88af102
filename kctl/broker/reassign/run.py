"""The I/O of running a plan in waves (``reassign execute``, ``verify --resume``): the
:class:`~kctl.reassign.run.Cluster` of :func:`kctl.reassign.run.run_waves` over an
:class:`~kctl.broker.client.Admin` (librdkafka: metadata, configs) and a kafka-python client
(the reassignment and log-dir requests), and the run itself (:func:`run_plan`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kctl.broker import kafka_python
from kctl.broker.client import Admin
from kctl.broker.cluster_view import cluster_view
from kctl.broker.reassign import log_dirs, seen, throttles, wire
from kctl.reassign.assign import TP, Assignment
from kctl.reassign.plan_file import DirKey, LogDirs
from kctl.reassign.progress import Sizes
from kctl.reassign.rows import Answer, Cleared, DirAnswer, DirMove, Ongoing
from kctl.reassign.run import Outcome, ProgressView, WaveOptions, run_waves
from kctl.reassign.throttles import Changes


class BrokerCluster:
    """The cluster of a wave run: metadata and configs through ``admin``, the rest through
    ``client`` (a kafka-python admin client, replaced by :meth:`fresh`); the first-seen times
    of what it submits noted in ``state_dir``."""

    def __init__(self, admin: Admin, client: Any, state_dir: Path) -> None:
        self.admin = admin
        self.client = client
        self.timeout = admin.conn.timeout
        self.state_dir = state_dir

    def replicas(self, topics: list[str]) -> Assignment:
        view = cluster_view(self.admin)
        return {
            (t, p.partition): list(p.replicas)
            for t in topics
            if t in view.topics
            for p in view.topics[t].partitions
        }

    def ongoing(self, tps: list[TP]) -> list[Ongoing]:
        return wire.ongoing_with(self.client, wire.by_topic_list(tps), self.timeout)

    def replica_sizes(self, tps: list[TP]) -> tuple[Sizes, set[int]]:
        return log_dirs.replica_sizes_with(self.client, wire.by_topic_list(tps))

    def alter(self, target: Mapping[TP, list[int] | None], what: str) -> list[Answer]:
        return wire.alter_with(self.client, target, what, self.timeout)

    def apply_throttles(self, changes: Changes) -> None:
        throttles.apply_throttle_changes(self.admin, changes)

    def clear_throttles(self, topics: list[str], brokers: set[int] | None) -> list[Cleared]:
        return throttles.clear_throttles(self.admin, topics, brokers)

    def dir_states(self, dirs: LogDirs) -> tuple[dict[DirKey, str], dict[DirKey, tuple[int, int]]]:
        return log_dirs.dir_states_with(self.client, dirs)

    def dir_moves(self, dirs: LogDirs) -> list[DirMove]:
        return log_dirs.dir_moves_with(self.client, dirs)

    def stop_dir_moves(self, moves: list[DirMove]) -> list[DirAnswer]:
        return log_dirs.stop_dir_moves_with(self.client, moves)

    def alter_dirs(self, moves: LogDirs) -> list[DirAnswer]:
        return log_dirs.alter_dirs_with(self.client, moves)

    def submitted(self, moves: Mapping[TP, list[int]]) -> None:
        seen.note_submitted(self.admin, moves, self.state_dir)

    def dirs_submitted(self, rows: list[DirAnswer]) -> None:
        seen.note_dirs_submitted(self.admin, rows, self.state_dir)

    @contextmanager
    def fresh(self) -> Iterator[None]:
        with kafka_python.admin_client(self.admin.conn) as client:
            self.client = client
            yield


def run_plan(
    admin: Admin,
    plan: Assignment,
    options: WaveOptions,
    dirs: LogDirs | None,
    *,
    file: Path,
    wait: bool,
    view: ProgressView,
    note: Callable[[str], None],
    decide: Callable[[], str],
    state_dir: Path,
) -> Outcome:
    """:func:`kctl.reassign.run.run_waves` on the cluster of ``admin``."""
    with kafka_python.admin_client(admin.conn) as client:
        return run_waves(
            BrokerCluster(admin, client, state_dir),
            plan,
            options,
            dirs,
            file=file,
            wait=wait,
            view=view,
            note=note,
            decide=decide,
            clock=time.monotonic,
            sleep=time.sleep,
        )
