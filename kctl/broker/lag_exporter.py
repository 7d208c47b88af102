"""``kctl groups lag --serve HOST:PORT``: a Prometheus exporter of consumer lag and time lag
(docs/lag-exporter.md).

A collector thread runs one lag pass (:func:`kctl.broker.groups.lag_pass`, with time lag)
every interval, feeds it to the Burrow status windows (:class:`kctl.lag.burrow.StatusWindows`)
and turns the result into metric families (:func:`kctl.lag.metrics.families`), kept as the
latest snapshot. prometheus_client's HTTP server, bound to exactly HOST:PORT, serves that
snapshot: a scrape never touches the cluster.

A failed collection (brokers away: bounded by the connection's timeout; or not one group
read) keeps the last
snapshot's lag series, sets ``kctl_lag_exporter_stale`` to 1, counts the error and writes one
stderr line per failure streak (and one when collections succeed again). A partial collection
(some groups not listed or not read: a broker away, coordinators still loading after a
restart) serves the groups it read fresh and keeps the last series of the groups it could not
read, marked ``kctl_consumergroup_stale`` 1, with ``kctl_lag_exporter_stale`` 1 as well: lag
series never vanish, nor read 0, because a coordinator is not there yet
(:func:`kctl.lag.partial.carry_over`). SIGTERM ends it with
exit 0 (a daemon asked to stop), SIGINT (Ctrl-C) with 130 (as ``groups lag --watch``): the
HTTP server is shut down and closed first.
"""

from __future__ import annotations

import errno
import signal
import socket
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from kctl.broker.client import Admin
from kctl.errors import KctlError, UsageError, client_library_error
from kctl.lag.metrics import Health
from kctl.runtime.signals import SignalTrap

# How long a stop waits for a collection under way before leaving it behind (it is bounded by
# the connection's timeout, which may be longer than a supervisor's patience).
STOP_GRACE_S = 5.0


class _Stop(SignalTrap):
    """SIGINT and SIGTERM set ``event`` (the first signal is kept in ``signum``); the handler
    only sets flags."""

    def __init__(self) -> None:
        super().__init__()
        self.event = threading.Event()
        self.signum: int | None = None

    def _handler(self, signum: int, frame: Any) -> None:
        if self.signum is None:
            self.signum = signum
        self.event.set()


class Snapshot:
    """A prometheus_client collector serving the latest metric families as they are: the
    collector thread swaps the list (one reference assignment), scrapes read it."""

    def __init__(self) -> None:
        self.families: list[Any] = []

    def collect(self) -> Any:
        return iter(self.families)

    def describe(self) -> list[Any]:
        return []  # nothing to check at registration, and no collection for it


def _failure_text(exc: BaseException) -> str:
    if isinstance(exc, KctlError):
        return exc.line()
    known = client_library_error(exc)
    return known.line() if known is not None else f"{type(exc).__name__}: {exc}"


class Collector:
    """The collection loop's state: the Burrow windows, the health counters, the failure
    streak, the last good rows. ``collect_once`` is one collection (never raises);
    ``publish`` receives the families after each."""

    def __init__(
        self,
        admin: Admin,
        groups: list[str],
        all_groups: bool,
        topics: list[str] | None,
        *,
        cluster_name: str,
        cluster_id: str | None,
        record: Path | None,
        note: Callable[[str], None],
        interval: float,
        publish: Callable[[list[Any]], None],
    ) -> None:
        from kctl.lag.burrow import StatusWindows

        self.admin, self.groups, self.all_groups, self.topics = admin, groups, all_groups, topics
        self.cluster_name, self.cluster_id = cluster_name, cluster_id
        self.record, self.note, self.interval, self.publish = record, note, interval, publish
        self.windows = StatusWindows()
        self.health = Health()
        self.rows: list[dict[str, Any]] = []
        self.last: dict[str, list[dict[str, Any]]] = {}  # per group, the rows last read
        self.statuses: dict[tuple[str, str, int], str | None] = {}
        self.failures = 0  # failed collections in the current streak
        self.partials = 0  # partial collections in the current streak
        self._reader: Any = None

    def _pass(self) -> Any:
        from kctl.broker.groups import GroupReader, lag_pass

        if self._reader is None:
            self._reader = GroupReader(self.admin)
        return lag_pass(self.admin, self._reader, self.groups, self.all_groups, self.topics,
                        time_lag=True, partial_ok=True, seen=sorted(self.last))  # fmt: skip

    def _save(self, rows: list[dict[str, Any]], ts_ms: int) -> None:
        from kctl.lag.samples import record_samples

        assert self.record is not None
        if self.cluster_id is None:
            self.cluster_id = self.admin.metadata().cluster_id
        record_samples(self.record, rows, self.cluster_id, ts_ms)

    def collect_once(self) -> None:
        from kctl.lag.metrics import families
        from kctl.lag.partial import carry_over, pass_warnings

        began_s, began = time.time(), time.monotonic()
        failure: str | None = None
        gaps: list[str] = []  # what a partial collection could not read
        passed = False
        try:
            done = self._pass()
            gaps = [line.removeprefix("kctl: warning: ") for line in pass_warnings(done)]
            if gaps and not done.groups:  # not one group read: the cluster is away
                more = f"; and {len(gaps) - 1} more" if len(gaps) > 1 else ""
                raise KctlError("no group could be read", gaps[0] + more)
            kept = carry_over(self.last, done.rows, done.groups, False, done.unread)
            statuses = self.windows.observe(done.rows, done.ts_ms, keep=kept.stale)
            statuses.update({k: v for k, v in self.statuses.items() if k[0] in kept.stale})
            self.rows, self.last, self.statuses = kept.rows, kept.last, statuses
            passed = True
            if self.record is not None:
                self._save(done.rows, done.ts_ms)
        except Exception as exc:  # the exporter outlives any failed pass
            failure = _failure_text(exc)
        except:  # noqa: E722 - confluent-kafka's KafkaError objects are no BaseException
            import sys

            failure = _failure_text(sys.exc_info()[1])  # type: ignore[arg-type]
        if not passed:
            gaps = []
            kept = carry_over(self.last, [], [], True)
            self.rows = kept.rows
        took = time.monotonic() - began
        h = self.health
        complete = passed and not gaps
        self.health = Health(
            collections=h.collections + 1,
            errors=h.errors + (failure is not None),
            partial=h.partial + (passed and bool(gaps)),
            last_success_s=began_s if complete else h.last_success_s,
            last_duration_s=took,
            poll_ms=took * 1000 if passed else h.poll_ms,
            stale=not complete,
            stale_groups=frozenset(kept.stale),
        )
        if not passed:
            self._drop_reader()
        self._streak(failure, gaps)
        self.publish(families(self.rows, self.statuses, self.health, self.cluster_name))

    def _streak(self, failure: str | None, gaps: list[str]) -> None:
        """One stderr line when a streak of failed or partial collections begins, one when it
        ends."""
        if failure is None and not gaps:
            if self.failures or self.partials:
                streak = ((self.failures, "failed"), (self.partials, "partial"))
                counts = " and ".join(f"{n} {what}" for n, what in streak if n)
                self.note(f"lag collection succeeded again after {counts} collection(s)")
            self.failures = self.partials = 0
            return
        if not self.failures and not self.partials:
            if failure is not None:
                self.note(
                    f"kctl: warning: lag collection failed ({failure}); serving the last "
                    f"collection marked stale (kctl_lag_exporter_stale 1), retrying every "
                    f"{self.interval:g}s"
                )
            else:
                more = f"; and {len(gaps) - 1} more" if len(gaps) > 1 else ""
                self.note(
                    f"kctl: warning: lag collection partial ({gaps[0]}{more}); serving the "
                    "last values of the groups not read marked stale (kctl_consumergroup_stale "
                    f"1, kctl_lag_exporter_stale 1), retrying every {self.interval:g}s"
                )
        if failure is not None:
            self.failures += 1
        else:
            self.partials += 1

    def _drop_reader(self) -> None:
        """After a failure, the next collection starts on a new connection pool (coordinators
        and connections of the old one may be gone)."""
        reader, self._reader = self._reader, None
        if reader is not None:
            with suppress(Exception):  # closing a broken pool may fail: it is dropped anyway
                reader.close()

    def close(self) -> None:
        self._drop_reader()

    def run(self, stop: threading.Event) -> None:
        """A collection every ``interval`` seconds (from the start of one to the start of the
        next; at once when one took longer) until ``stop`` is set."""
        next_at = time.monotonic()
        while not stop.is_set():
            self.collect_once()
            next_at = max(next_at + self.interval, time.monotonic())
            # The collection schedule itself: the wait ends early when ``stop`` is set.
            stop.wait(max(0.0, next_at - time.monotonic()))


def _shown(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def listen(host: str, port: int, registry: Any) -> tuple[Any, threading.Thread]:
    """prometheus_client's HTTP server for ``registry`` bound to exactly ``host:port``, serving
    in a daemon thread; a bind failure is one kctl error (exit 2 for an address that does not
    resolve or is not this machine's, exit 1 otherwise: the port taken, no permission)."""
    from prometheus_client import start_http_server

    where = _shown(host, port)
    try:
        return start_http_server(port, addr=host, registry=registry)
    except socket.gaierror as exc:
        raise UsageError(f"--serve {where}: cannot resolve {host!r}", exc.strerror) from None
    except OSError as exc:
        why = exc.strerror or str(exc)
        if exc.errno == errno.EADDRNOTAVAIL:
            raise UsageError(f"--serve {where}: not an address of this machine", why) from None
        if exc.errno == errno.EADDRINUSE:
            raise KctlError(f"cannot listen on {where}", f"{why}: another process has it") from None
        raise KctlError(f"cannot listen on {where}", why) from None


def serve(
    admin: Admin,
    groups: list[str],
    all_groups: bool,
    topics: list[str] | None,
    *,
    host: str,
    port: int,
    interval: float,
    cluster_name: str | None,
    record: Path | None,
    note: Callable[[str], None],
) -> None:
    """Serve lag metrics on ``host:port`` until SIGTERM (returns: exit 0) or SIGINT (raises
    KeyboardInterrupt after the same clean stop: exit 130).

    ``groups``: the groups named (none, without ``all_groups``: every group, as ``groups lag``);
    ``cluster_name``: the ``cluster_name`` label, by default the cluster id (asked once at
    start: without a name given, the cluster must answer then); ``record``: samples appended
    each collection, as ``groups lag --record`` writes them."""
    from prometheus_client import CollectorRegistry

    snapshot = Snapshot()
    registry = CollectorRegistry(auto_describe=False)
    registry.register(snapshot)
    httpd, http_thread = listen(host, port, registry)
    collector: Collector | None = None
    worker: threading.Thread | None = None
    try:
        cluster_id = None
        if cluster_name is None:
            cluster_id = admin.metadata().cluster_id
            cluster_name = cluster_id or ""

        def publish(families: list[Any]) -> None:
            snapshot.families = families

        collector = Collector(admin, groups, all_groups, topics, cluster_name=cluster_name,
                              cluster_id=cluster_id, record=record, note=note,
                              interval=interval, publish=publish)  # fmt: skip
        with _Stop() as stop:
            worker = threading.Thread(target=collector.run, args=(stop.event,),
                                      name="kctl-lag-collector", daemon=True)  # fmt: skip
            worker.start()
            address = _shown(host, httpd.server_port)
            note(f"serving lag metrics of cluster {cluster_name!r} on http://{address}/metrics, "
                 f"collecting every {interval:g}s; SIGTERM or Ctrl-C stops")  # fmt: skip
            while not stop.event.wait(1.0):
                pass
            signum = stop.signum
    finally:
        httpd.shutdown()
        httpd.server_close()
        http_thread.join()
        if worker is not None:
            worker.join(STOP_GRACE_S)
        if collector is not None and (worker is None or not worker.is_alive()):
            collector.close()
    name = signal.Signals(signum).name if signum is not None else "a signal"
    note(f"lag exporter stopped ({name})")
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
