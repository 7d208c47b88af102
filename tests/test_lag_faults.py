"""``groups lag`` and its Prometheus exporter (``--serve``) while brokers go away and come back,
on a 3-broker Apache Kafka cluster of this module's own (the session's cluster is never
stopped), one cluster for every test here:

- one broker killed: a one-shot ``groups lag`` answers at once with the groups whose
  coordinator lives, names the broker and the groups it cannot read (exit 1); the exporter
  serves the live groups fresh and keeps the others' last series, marked stale;
- every broker stopped and started again, with a real Prometheus scraping the exporter all the
  while: at every scrape each group's series is there with its true lag, and
  ``kctl_lag_exporter_stale`` is 1 whenever a series is not fresh; one-shot passes meanwhile
  never say "no consumer groups".

The tests run in this order (the kill before the full restart, which leaves every coordinator
on one broker) and each restores the brokers it stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    ENGINE,
    Run,
    commit_offsets,
    kctl_environment,
    run_kctl,
    start_kafka_cluster,
    unique,
    wait_for,
)
from prometheus_server import free_port, missing, prometheus_server
from test_lag_exporter import Samples, scrape, values

pytestmark = pytest.mark.skipif(
    ENGINE != "kafka" or bool(os.environ.get("KCTL_TEST_BOOTSTRAP")),
    reason="needs kctl's local Apache Kafka cluster to stop brokers (KCTL_TEST_ENGINE=kafka, "
    "no KCTL_TEST_BOOTSTRAP)",
)

BROKERS = (1, 2, 3)
PARTITIONS = 3
RECORDS = 6  # per partition
MORE = 2  # records per partition written while a broker is away
GROUPS = 9
CLUSTER_NAME = "lag-faults"


class Cluster:
    """The module's cluster: state directory, bootstrap and kctl's environment."""

    def __init__(self, state: Path, bootstrap: str, env: dict[str, str]) -> None:
        self.state, self.bootstrap, self.env = state, bootstrap, env

    def kctl(self, *args: str, timeout: float = 60) -> Run:
        return run_kctl(self.env, *args, timeout=timeout)

    def admin(self) -> Any:
        from confluent_kafka.admin import AdminClient

        return AdminClient({"bootstrap.servers": self.bootstrap})

    def live_brokers(self) -> set[int]:
        try:
            return set(self.admin().list_topics(timeout=5).brokers)
        except Exception:  # every broker away
            return set()

    def kill(self, broker: int) -> None:
        from kctl.local import kafka_cluster

        assert kafka_cluster.kill_broker(self.state, broker)

    def stop(self, broker: int) -> None:
        from kctl.local import kafka_cluster

        assert kafka_cluster.stop_broker(self.state, broker)

    def start(self, broker: int) -> None:
        from kctl.local import kafka_cluster

        kafka_cluster.start_broker(self.state, broker)

    def restore(self) -> None:
        """Start every broker that is down; wait until all are registered."""
        from kctl.local import kafka_cluster

        cluster = kafka_cluster.read_state(self.state)
        assert cluster is not None
        for node in cluster.brokers:
            if not kafka_cluster.node_alive(node):
                kafka_cluster.start_broker(self.state, node.id)
        wait_for(lambda: self.live_brokers() == set(BROKERS), "every broker registered", 90, 0.5)

    def address(self, broker: int) -> str:
        from kctl.local import kafka_cluster

        cluster = kafka_cluster.read_state(self.state)
        assert cluster is not None
        return cluster.broker(broker).address

    def coordinators(self, groups: list[str]) -> dict[str, int]:
        """Each group's coordinator now (FindCoordinator, through kctl's reader)."""
        from kctl.broker.client import Admin
        from kctl.broker.connect import Connection
        from kctl.broker.groups import GroupReader

        with GroupReader(Admin(Connection(bootstrap_servers=self.bootstrap))) as reader:
            return reader.coordinators(groups)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    from kctl.local import kafka_cluster

    state = tmp_path_factory.mktemp("lag-faults-cluster")
    started: Any = start_kafka_cluster(state, brokers=len(BROKERS))
    home = tmp_path_factory.mktemp("lag-faults-kctl")
    env = kctl_environment(
        KCTL_BOOTSTRAP_SERVERS=started.bootstrap,
        KCTL_CONFIG=str(home / "kctl-config.yaml"),
        KCTL_STATE_DIR=str(home / "kctl-state"),
    )
    try:
        yield Cluster(state, started.bootstrap, env)
    finally:
        current = kafka_cluster.read_state(state)
        kafka_cluster.kill_all(current if current is not None else started)


class Groups:
    """The module's groups: their total lag, their coordinators when made, the broker the kill
    test takes away (coordinator of some of them, not of all) and the topic they read, whose
    replicas avoid that broker (its partitions stay readable while it is away)."""

    def __init__(
        self, lags: dict[str, int], coordinators: dict[str, int], victim: int, topic: str
    ) -> None:
        self.lags, self.coordinators, self.victim, self.topic = lags, coordinators, victim, topic

    def on_victim(self) -> set[str]:
        return {g for g, b in self.coordinators.items() if b == self.victim}


@pytest.fixture(scope="module")
def groups(cluster: Cluster) -> Groups:
    from confluent_kafka import Producer
    from confluent_kafka.admin import NewTopic

    from kctl.errors import KctlError

    names = [unique(f"lagf{i}") for i in range(GROUPS)]
    where: dict[str, int] = {}

    def found() -> bool:  # the first FindCoordinator creates __consumer_offsets
        try:
            where.update(cluster.coordinators(names))
        except KctlError:  # COORDINATOR_NOT_AVAILABLE until it is there
            return False
        return len(where) == GROUPS

    wait_for(found, "the coordinators of the groups", 120, 0.5)
    counts = {b: sum(1 for g in names if where[g] == b) for b in BROKERS}
    victim = max(BROKERS, key=lambda b: counts[b])
    assert 0 < counts[victim] < GROUPS, counts  # nine groups over twelve partitions
    others = [b for b in BROKERS if b != victim]
    topic = unique("lagf-t")
    admin = cluster.admin()
    replicas = [others if p % 2 == 0 else others[::-1] for p in range(PARTITIONS)]
    new = NewTopic(topic, PARTITIONS, replica_assignment=replicas)
    admin.create_topics([new])[topic].result(30)
    wait_for(lambda: topic in admin.list_topics(timeout=10).topics, "the topic", 30)
    p = Producer({"bootstrap.servers": cluster.bootstrap})
    for part in range(PARTITIONS):
        for i in range(RECORDS):
            p.produce(topic, b"r%d" % i, partition=part)
    assert p.flush(30) == 0
    lags = {}
    for i, g in enumerate(names):
        at = i % RECORDS
        commit_offsets(cluster.bootstrap, g, {(topic, part): at for part in range(PARTITIONS)})
        lags[g] = PARTITIONS * (RECORDS - at)
    return Groups(lags, where, victim, topic)


class Exporter:
    """``kctl --timeout 5 groups lag --serve 127.0.0.1:PORT --interval 1s`` over every group."""

    def __init__(self, cluster: Cluster, stderr_path: Path) -> None:
        self.port = free_port()
        self.stderr_path = stderr_path
        with open(stderr_path, "w") as fh:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "kctl", "--timeout", "5", "groups", "lag", "--serve",
                 f"127.0.0.1:{self.port}", "--interval", "1s", "--cluster-name", CLUSTER_NAME],
                env=cluster.env, stdout=subprocess.DEVNULL, stderr=fh, stdin=subprocess.DEVNULL,
            )  # fmt: skip

    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def scrape(self) -> Samples:
        assert self.proc.poll() is None, self.stderr()
        try:
            return scrape(self.port)
        except OSError:  # not listening yet
            return {}

    def wait(self, condition: Callable[[Samples], bool], what: str, timeout: float) -> Samples:
        """Scrapes until ``condition(scrape)`` (bounded); the scrape. Fails with the last
        scrape's group series and health, and the exporter's stderr."""
        last: list[Samples] = [{}]

        def met() -> bool:
            last[0] = self.scrape()
            return condition(last[0])

        try:
            wait_for(met, what, timeout, 0.2)
        except BaseException:
            s = last[0]
            shown = {n: group_values(s, n) for n in ("kafka_consumergroup_group_sum_lag",
                                                     "kctl_consumergroup_stale")}  # fmt: skip
            health = {n: v for (n, _l), v in s.items() if n.startswith("kctl_lag_exporter")}
            print(f"last scrape: {shown} {health}\nexporter stderr:\n{self.stderr()}")
            raise
        return last[0]

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(30)


@pytest.fixture
def exporter(cluster: Cluster, tmp_path: Path) -> Iterator[Exporter]:
    running = Exporter(cluster, tmp_path / "exporter.stderr")
    try:
        yield running
    finally:
        running.stop()


def group_values(s: Samples, name: str) -> dict[str, float]:
    """Per group, the value of a per-group series (``kafka_consumergroup_group_sum_lag``,
    ``kctl_consumergroup_stale``)."""
    return {dict(labels)["group"]: v for (n, labels), v in s.items() if n == name}


def all_fresh(s: Samples, lags: dict[str, int]) -> bool:
    """A scrape of a complete collection: every group with its lag, none stale."""
    return (
        values(s, "kctl_lag_exporter_stale") == [0.0]
        and group_values(s, "kafka_consumergroup_group_sum_lag") == lags
        and set(group_values(s, "kctl_consumergroup_stale").values()) == {0.0}
    )


def test_one_broker_killed_the_groups_of_live_coordinators_are_read_the_others_unknown(
    cluster: Cluster, groups: Groups, exporter: Exporter
) -> None:
    from confluent_kafka import Producer

    lags, victim = dict(groups.lags), groups.victim
    away = groups.on_victim()
    # Records written after the kill (the topic's replicas are on the live brokers): the live
    # groups' new lag shows that they were read after it, the away groups keep their last lag.
    now = {g: lag + (g not in away) * PARTITIONS * MORE for g, lag in lags.items()}
    exporter.wait(lambda s: all_fresh(s, lags), "a complete first collection", 60)
    producer = Producer({"bootstrap.servers": ",".join(cluster.address(b) for b in BROKERS
                                                       if b != victim)})  # fmt: skip
    try:
        cluster.kill(victim)  # SIGKILL: still registered until its session times out (9 s)
        for part in range(PARTITIONS):
            for i in range(MORE):
                producer.produce(groups.topic, b"more%d" % i, partition=part)
        assert producer.flush(10) == 0
        began = time.monotonic()
        r = cluster.kctl("--timeout", "15", "groups", "lag", "-o", "json")
        took = time.monotonic() - began
        # At once (not after --timeout), the live coordinators' groups with their lag...
        assert r.code == 1, r
        assert took < 9, (took, r)
        doc = json.loads(r.stdout)
        assert {g["group"]: g["lag"] for g in doc["groups"]} == {
            g: lag for g, lag in now.items() if g not in away
        }
        # ... and the rest named as not known: the broker on stderr and in the document.
        assert doc["unknown"], doc
        assert all(f"broker {victim}" in u["reason"] for u in doc["unknown"]), doc["unknown"]
        lines = r.stderr.splitlines()
        assert any(ln.startswith("kctl: warning:") and f"broker {victim}" in ln for ln in lines)
        assert lines[-1].startswith("kctl: error: lag incomplete"), r.stderr
        assert "no consumer groups" not in r.stderr and "Traceback" not in r.stderr

        # The exporter: the live groups fresh (the new records count), the away broker's
        # groups with their last lag marked stale, and the whole snapshot stale.
        def partial(s: Samples) -> bool:
            stale = group_values(s, "kctl_consumergroup_stale")
            return (
                values(s, "kctl_lag_exporter_stale") == [1.0]
                and group_values(s, "kafka_consumergroup_group_sum_lag") == now
                and {g for g, v in stale.items() if v == 1.0} == away
            )

        exporter.wait(partial, "live groups fresh, the away broker's groups kept, stale", 20)
    finally:
        cluster.restore()
    # Back: every group fresh again (the away groups now wherever their coordinator went).
    now = {g: lag + PARTITIONS * MORE for g, lag in lags.items()}
    groups.lags = now  # for the next test
    exporter.wait(lambda s: all_fresh(s, now), "a complete collection again", 60)
    assert exporter.stop() == 0
    text = exporter.stderr()
    assert text.count("kctl: warning: lag collection partial (") == 1, text
    assert f"broker {victim}" in text, text
    assert "lag collection succeeded again after" in text, text
    assert "Traceback" not in text


def test_one_broker_stopped_its_groups_move_and_a_one_shot_reads_every_group(
    cluster: Cluster, groups: Groups
) -> None:
    # A controlled shutdown: the broker hands its partitions over before it goes, and the new
    # coordinators load its groups (the listing waits for them, within --timeout).
    try:
        cluster.stop(groups.victim)
        began = time.monotonic()
        r = cluster.kctl("--timeout", "15", "groups", "lag", "-o", "json")
        took = time.monotonic() - began
    finally:
        cluster.restore()
    assert r.code == 0, r
    doc = json.loads(r.stdout)
    assert {g["group"]: g["lag"] for g in doc["groups"]} == groups.lags
    assert doc["unknown"] == [] and "kctl: warning" not in r.stderr, r
    assert took < 9, (took, r)


def _one_shots(cluster: Cluster, stop: threading.Event, runs: list[tuple[float, Run]]) -> None:
    """``groups lag -o json`` over and over until ``stop``: (when it began, what it did)."""
    while not stop.is_set():
        began = time.time()
        runs.append((began, cluster.kctl("--timeout", "5", "groups", "lag", "-o", "json",
                                         timeout=60)))  # fmt: skip


def _raw(prom: Any, selector: str, seconds: int) -> dict[str, dict[float, float]]:
    """Every sample Prometheus stored in the last ``seconds`` of the series ``selector``
    selects: per group (or "" without one), scrape time -> value."""
    out: dict[str, dict[float, float]] = {}
    for series in prom.query(f"{selector}[{seconds}s]"):
        group = series["metric"].get("group", "")
        out.setdefault(group, {}).update({float(t): float(v) for t, v in series["values"]})
    return out


@pytest.mark.skipif(missing() is not None, reason=str(missing()))
def test_through_a_stop_and_start_of_every_broker_prometheus_sees_true_lag_or_stale_at_every_scrape(
    cluster: Cluster, groups: Groups, exporter: Exporter, tmp_path: Path
) -> None:
    lags = {g: int(v) for g, v in groups.lags.items()}
    exporter.wait(lambda s: all_fresh(s, lags), "a complete first collection", 60)
    with prometheus_server([f"127.0.0.1:{exporter.port}"], tmp_path / "prometheus") as prom:
        prom.wait_for_target_up()
        prom.wait_for(lambda: prom.query("kctl_lag_exporter_stale == 0"), "a fresh scrape")
        began = time.time()
        stop = threading.Event()
        runs: list[tuple[float, Run]] = []
        shots = threading.Thread(target=_one_shots, args=(cluster, stop, runs), daemon=True)
        shots.start()
        try:
            for broker in BROKERS:  # a controlled shutdown each, the last one alone at the end
                cluster.stop(broker)
            assert cluster.live_brokers() == set()
            for broker in BROKERS:
                cluster.start(broker)
        finally:
            cluster.restore()
            stop.set()
        shots.join(120)
        exporter.wait(lambda s: all_fresh(s, lags), "a complete collection again", 120)
        # Two more scrapes of the recovered exporter, then read what Prometheus stored.
        time.sleep(2.5)  # Prometheus scrapes every second: its own schedule, nothing to poll
        window = int(time.time() - began) + 5
        stale = _raw(prom, f'kctl_lag_exporter_stale{{cluster_name="{CLUSTER_NAME}"}}', window)[""]
        up = _raw(prom, 'up{job="kctl"}', window)[""]
        lag = _raw(prom, "kafka_consumergroup_group_sum_lag", window)
        group_stale = _raw(prom, "kctl_consumergroup_stale", window)
    scrapes = sorted(t for t in stale if t >= began)
    assert len(scrapes) >= 20, scrapes  # the whole stop and start, scraped every second
    assert all(up[t] == 1.0 for t in scrapes if t in up), "the exporter missed a scrape"
    wrong = []
    for t in scrapes:
        # Every group's series is at every scrape with its true lag: kept from before while
        # its coordinator is away or loading, never missing, never another value...
        seen = {g: lag[g].get(t) for g in lags}
        if seen != {g: float(v) for g, v in lags.items()}:
            wrong.append((t, stale[t], seen))
        # ... and a scrape that says it is fresh has only fresh groups.
        if stale[t] == 0.0 and any(group_stale.get(g, {}).get(t) != 0.0 for g in lags):
            wrong.append((t, "a stale group in a fresh scrape"))
    assert not wrong, wrong[:5]
    assert sum(1 for t in scrapes if stale[t] == 1.0) >= 5  # the outage was seen, marked
    assert stale[scrapes[-1]] == 0.0
    # One-shot passes meanwhile: exit 0 only with every group and its true lag; otherwise an
    # error, never "no consumer groups".
    assert runs, "no one-shot pass ran"
    for _began, r in runs:
        assert "no consumer groups" not in r.stderr, r
        assert "Traceback" not in r.stderr, r
        if r.code == 0:
            doc = json.loads(r.stdout)
            assert {g["group"]: g["lag"] for g in doc["groups"]} == lags, r
            assert doc["unknown"] == [], r
        else:
            assert r.code == 1 and r.stderr.splitlines()[-1].startswith("kctl: error: "), r
    assert any(r.code == 1 for _b, r in runs), "no one-shot pass met the brokers away"
    assert exporter.stop() == 0
    text = exporter.stderr()
    assert "lag collection succeeded again after" in text, text
    assert "Traceback" not in text, text
