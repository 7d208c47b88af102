"""``kctl groups lag --serve``, the Prometheus lag exporter, run as an operator runs it (a separate
process) against the cluster: what a scrape shows for a group with committed offsets (lag, time
lag, offsets, status, health), scrapes that never ask the cluster, SIGTERM and SIGINT, samples
recorded each collection, a cluster that does not answer, bad listen addresses; and a real
Prometheus server (Debian's package) scraping it and answering PromQL over its HTTP API."""

from __future__ import annotations

import json
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import Run, commit_offsets, unique, wait_for
from prometheus_client.parser import text_string_to_metric_families
from prometheus_server import free_port, missing, prometheus_server

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
HOUR_MS = 3_600_000


def scrape(port: int) -> Samples:
    """One scrape of the exporter: (sample name, labels) -> value."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def values(samples: Samples, name: str, **labels: str) -> list[float]:
    """The values of the series named ``name`` whose labels include ``labels``."""
    want = set(labels.items())
    return [v for (n, ls), v in samples.items() if n == name and want <= ls]


def one(samples: Samples, name: str, **labels: str) -> float:
    found = values(samples, name, **labels)
    assert len(found) == 1, (name, labels, found)
    return found[0]


@dataclass
class Exporter:
    """A running ``kctl groups lag --serve`` process."""

    proc: subprocess.Popen[str]
    port: int
    stderr_path: Path
    stopped: list[int] = field(default_factory=list)

    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def scrape(self) -> Samples:
        return scrape(self.port)

    def collections(self) -> float:
        return one(self.scrape(), "kctl_lag_exporter_collections_total")

    def wait_collections(self, n: int, timeout: float = 60) -> Samples:
        """Scrapes until the exporter has made ``n`` collections; the last scrape."""
        last: list[Samples] = []

        def done() -> bool:
            if self.proc.poll() is not None:
                pytest.fail(f"the exporter exited {self.proc.returncode}: {self.stderr()}")
            try:
                last[:] = [self.scrape()]
            except (urllib.error.URLError, OSError):
                return False
            found = values(last[0], "kctl_lag_exporter_collections_total")
            return bool(found) and found[0] >= n

        wait_for(done, f"{n} collection(s) of the exporter on port {self.port}", timeout)
        return last[0]

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> Run:
        self.proc.send_signal(sig)
        out, _ = self.proc.communicate(timeout=timeout)
        return Run(self.proc.returncode, out, self.stderr())


@pytest.fixture
def serve(kctl_env: dict[str, str], tmp_path: Path) -> Iterator[Callable[..., Exporter]]:
    """Start ``kctl [GLOBAL...] groups lag ARGS... --serve 127.0.0.1:PORT`` on a free port."""
    started: list[Exporter] = []

    def start(*args: str, global_args: tuple[str, ...] = (), interval: str = "1s") -> Exporter:
        port = free_port()
        err = tmp_path / f"exporter-{port}.stderr"
        with open(err, "w") as fh:
            proc = subprocess.Popen(
                [sys.executable, "-m", "kctl", *global_args, "groups", "lag", *args,
                 "--serve", f"127.0.0.1:{port}", "--interval", interval],
                env=kctl_env, stdout=subprocess.PIPE, stderr=fh, stdin=subprocess.DEVNULL,
                text=True,
            )  # fmt: skip
        exporter = Exporter(proc, port, err)
        started.append(exporter)
        return exporter

    yield start
    for exporter in started:
        if exporter.proc.poll() is None:
            exporter.proc.kill()
            exporter.proc.wait(30)


def produce(bootstrap: str, topic: str, partition: int, count: int, timestamp_ms: int) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(count):
        p.produce(topic, value=b"v%d" % i, partition=partition, timestamp=timestamp_ms)
    assert p.flush(30) == 0


@pytest.fixture
def lagging_group(bootstrap: str, new_topic: Callable[..., str]) -> tuple[str, str, int]:
    """A group committed at offset 3 of partition 0 (10 records, written an hour ago: lag 7,
    time lag an hour) and with no commit on partition 1 (4 records); (group, topic, the
    records' timestamp in ms)."""
    topic = new_topic(partitions=2, prefix="lagx")
    old_ms = int(time.time() * 1000) - HOUR_MS
    produce(bootstrap, topic, 0, 10, old_ms)
    produce(bootstrap, topic, 1, 4, old_ms)
    group = unique("lagx-g")
    commit_offsets(bootstrap, group, {(topic, 0): 3})
    return group, topic, old_ms


@pytest.fixture
def member(bootstrap: str) -> Iterator[Callable[[str, str], str]]:
    """``join(group, topic)``: a consumer (classic protocol, no commits) that joins ``group``
    subscribed to ``topic`` and holds every partition until the test ends; its member id."""
    from confluent_kafka import Consumer

    consumers: list[Consumer] = []

    def join(group: str, topic: str) -> str:
        c = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                      "client.id": "lagx-client", "enable.auto.commit": False,
                      "auto.offset.reset": "earliest"})  # fmt: skip
        consumers.append(c)
        c.subscribe([topic])
        wait_for(lambda: (c.poll(0.2), len(c.assignment()) == 2)[1], "the member's assignment")
        return str(c.memberid())

    yield join
    for c in consumers:
        c.close()


def test_a_scrape_shows_the_groups_lag_offsets_time_lag_status_and_health(
    serve, lagging_group, member, bootstrap
):
    group, topic, old_ms = lagging_group
    member_id = member(group, topic)  # owns both partitions, commits nothing
    exporter = serve(group)
    began_s = time.time()
    s = exporter.wait_collections(1)
    p0 = {"group": group, "topic": topic, "partition": "0"}
    assert one(s, "kafka_consumergroup_group_lag", **p0) == 7
    assert one(s, "kafka_consumergroup_group_offset", **p0) == 3
    # the owner as the group describes it
    owner = next(dict(ls) for (n, ls), _ in s.items()
                 if n == "kafka_consumergroup_group_lag" and p0.items() <= ls)  # fmt: skip
    assert owner["consumer_id"] == member_id
    assert owner["client_id"] == "lagx-client"
    assert owner["member_host"].endswith("127.0.0.1")
    # assigned but no commit on partition 1: no lag or offset series, its log offsets are there
    p1 = {"group": group, "topic": topic, "partition": "1"}
    assert values(s, "kafka_consumergroup_group_lag", **p1) == []
    assert values(s, "kafka_consumergroup_group_offset", **p1) == []
    assert values(s, "kafka_consumergroup_group_lag_seconds", **p1) == []
    assert one(s, "kafka_partition_latest_offset", topic=topic, partition="1") == 4
    assert one(s, "kafka_partition_latest_offset", topic=topic, partition="0") == 10
    assert one(s, "kafka_partition_earliest_offset", topic=topic, partition="0") == 0
    assert one(s, "kafka_consumergroup_group_sum_lag", group=group, group_type="classic") == 7
    assert one(s, "kafka_consumergroup_group_max_lag", group=group) == 7
    assert one(s, "kafka_consumergroup_group_topic_sum_lag", group=group, topic=topic) == 7
    # the first unconsumed record (offset 3) was written an hour ago: the exact time lag
    lag_s = one(s, "kafka_consumergroup_group_lag_seconds", **p0)
    assert began_s - old_ms / 1000 - 5 <= lag_s <= time.time() - old_ms / 1000 + 1
    assert one(s, "kafka_consumergroup_group_max_lag_seconds", group=group) == lag_s
    # the cluster_name label is the cluster id by default
    from confluent_kafka.admin import AdminClient

    cluster_id = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10).cluster_id
    assert one(s, "kafka_consumergroup_group_lag", **p0, cluster_name=cluster_id) == 7
    # one status series per Burrow group status, exactly one of them 1
    statuses = {dict(ls)["status"]: v for (n, ls), v in s.items()
                if n == "kctl_consumergroup_status" and dict(ls)["group"] == group}  # fmt: skip
    assert set(statuses) == {"OK", "WARN", "ERR"} and sorted(statuses.values()) == [0, 0, 1]
    assert one(s, "kctl_lag_exporter_stale") == 0
    assert one(s, "kctl_lag_exporter_collection_errors_total") == 0
    assert began_s - 5 <= one(s, "kctl_lag_exporter_last_success_timestamp_seconds") <= time.time()
    assert one(s, "kctl_lag_exporter_last_collection_duration_seconds") > 0
    assert exporter.stop().code == 0


def test_scrapes_never_ask_the_cluster_only_the_collections_do(serve, lagging_group):
    group, _topic, _ = lagging_group
    exporter = serve(group, interval="1h")  # one collection at start, the next in an hour
    first = exporter.wait_collections(1)
    success = one(first, "kctl_lag_exporter_last_success_timestamp_seconds")
    for _ in range(20):
        s = exporter.scrape()
        assert one(s, "kctl_lag_exporter_collections_total") == 1
        assert one(s, "kctl_lag_exporter_last_success_timestamp_seconds") == success
    assert exporter.stop().code == 0


def test_collections_repeat_every_interval_and_follow_new_commits(serve, lagging_group, bootstrap):
    group, topic, _ = lagging_group
    exporter = serve(group)
    s = exporter.wait_collections(1)
    assert one(s, "kafka_consumergroup_group_lag", group=group, partition="0") == 7
    commit_offsets(bootstrap, group, {(topic, 0): 10, (topic, 1): 1})
    done = exporter.collections()

    def caught_up() -> bool:
        s = exporter.scrape()
        return values(s, "kafka_consumergroup_group_lag", group=group, partition="1") == [3]

    wait_for(caught_up, "the new commits in the exporter's series", 30)
    s = exporter.scrape()
    assert one(s, "kafka_consumergroup_group_lag", group=group, partition="0") == 0
    assert one(s, "kafka_consumergroup_group_lag_seconds", group=group, partition="0") == 0
    assert one(s, "kctl_lag_exporter_collections_total") > done
    assert exporter.stop().code == 0


def assert_port_free(port: int) -> None:
    """Nothing listens on ``port`` any more: connecting is refused and it can be listened on
    again (SO_REUSEADDR, as every server sets it: the scrapes' closed connections may still
    wait in TIME_WAIT there)."""
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        s.listen()


def test_sigterm_ends_it_with_exit_0_and_frees_the_port(serve, lagging_group):
    group, _topic, _ = lagging_group
    exporter = serve(group)
    exporter.wait_collections(1)
    run = exporter.stop(signal.SIGTERM)
    assert run.code == 0, run
    assert "Traceback" not in run.stderr
    assert run.stderr.splitlines()[-1] == "lag exporter stopped (SIGTERM)"
    assert run.stdout == ""  # stdout is data: the exporter writes none
    assert_port_free(exporter.port)


def test_sigint_ends_it_with_exit_130_after_the_same_clean_stop(serve, lagging_group):
    group, _topic, _ = lagging_group
    exporter = serve(group)
    exporter.wait_collections(1)
    run = exporter.stop(signal.SIGINT)
    assert run.code == 130, run
    assert "Traceback" not in run.stderr
    assert "lag exporter stopped (SIGINT)" in run.stderr
    assert_port_free(exporter.port)


def test_record_appends_the_samples_of_every_collection(serve, lagging_group, tmp_path):
    group, topic, _ = lagging_group
    record = tmp_path / "lag.jsonl"
    exporter = serve(group, "--record", str(record))
    exporter.wait_collections(3)
    assert exporter.stop().code == 0
    samples = [json.loads(line) for line in record.read_text().splitlines()]
    stamps = sorted({s["ts_ms"] for s in samples})
    assert len(stamps) >= 3  # one sample per collection: the group's one committed partition
    assert len(samples) == len(stamps)
    assert {(s["group"], s["topic"], s["partition"], s["lag"]) for s in samples} == {
        (group, topic, 0, 7)
    }
    assert all(s["cluster"] for s in samples)  # the cluster id, as groups lag --record writes
    assert all(s["time_lag_ms"] >= HOUR_MS for s in samples)


def test_a_cluster_that_does_not_answer_marks_the_snapshot_stale_with_one_warning(serve):
    dead = f"127.0.0.1:{free_port()}"  # nothing listens there
    exporter = serve("some-group", "--cluster-name", "prod", interval="0.5s",
                     global_args=("--bootstrap-server", dead, "--timeout", "1"))  # fmt: skip
    s = exporter.wait_collections(3, timeout=90)
    assert one(s, "kctl_lag_exporter_stale", cluster_name="prod") == 1
    assert one(s, "kctl_lag_exporter_collection_errors_total") >= 3
    assert one(s, "kctl_lag_exporter_last_success_timestamp_seconds") == 0
    assert values(s, "kafka_consumergroup_group_lag") == []
    run = exporter.stop()
    assert run.code == 0, run
    warnings = [line for line in run.stderr.splitlines() if "lag collection failed" in line]
    assert len(warnings) == 1, run.stderr  # one line per failure streak, not per collection
    assert warnings[0].startswith("kctl: warning: lag collection failed (")
    assert "Traceback" not in run.stderr


class Forwarder:
    """A TCP forwarder from a loopback port to ``target`` (host:port), started later: until
    then nothing listens on the port, as when the brokers are away."""

    def __init__(self, port: int, target: str) -> None:
        self.port = port
        host, _, target_port = target.rpartition(":")
        self.target = (host, int(target_port))
        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)

    def start(self) -> None:
        self.server.bind(("127.0.0.1", self.port))
        self.server.listen()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target, timeout=10)
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            with suppress(OSError):
                while data := src.recv(65536):
                    dst.sendall(data)
        finally:
            for s in (src, dst):
                with suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.server.close()


def test_collections_recover_when_the_cluster_answers_again(serve, lagging_group, bootstrap):
    group, topic, _ = lagging_group
    forwarder = Forwarder(free_port(), bootstrap.split(",")[0])  # nothing listens there yet
    try:
        exporter = serve(group, "--cluster-name", "prod", interval="0.5s",
                         global_args=("--bootstrap-server", f"127.0.0.1:{forwarder.port}",
                                      "--timeout", "1"))  # fmt: skip
        s = exporter.wait_collections(2, timeout=90)
        assert one(s, "kctl_lag_exporter_stale") == 1
        failed = one(s, "kctl_lag_exporter_collection_errors_total")
        assert failed >= 2
        forwarder.start()  # the cluster answers from now on

        def recovered() -> bool:
            return values(exporter.scrape(), "kctl_lag_exporter_stale") == [0]

        wait_for(recovered, "a successful collection once the cluster answers", 60)
        s = exporter.scrape()
        assert one(s, "kafka_consumergroup_group_lag", group=group, topic=topic) == 7
        assert one(s, "kctl_lag_exporter_last_success_timestamp_seconds") > 0
        run = exporter.stop()
    finally:
        forwarder.close()
    assert run.code == 0, run
    lines = run.stderr.splitlines()
    assert len([line for line in lines if "lag collection failed" in line]) == 1, run.stderr
    again = [line for line in lines if "lag collection succeeded again" in line]
    assert len(again) == 1 and "failed collection(s)" in again[0], run.stderr


def test_without_cluster_name_an_unreachable_cluster_at_start_is_one_error(kctl):
    dead = f"127.0.0.1:{free_port()}"
    r = kctl("--bootstrap-server", dead, "--timeout", "1", "groups", "lag", "--serve",
             f"127.0.0.1:{free_port()}")  # fmt: skip
    assert r.code == 1, r
    assert r.stderr.startswith("kctl: error: ") and len(r.stderr.splitlines()) == 1, r


def test_a_port_in_use_is_one_error_line_exit_1(kctl):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = kctl("groups", "lag", "--serve", f"127.0.0.1:{port}")
    assert r.code == 1, r
    assert r.stderr == (
        f"kctl: error: cannot listen on 127.0.0.1:{port} "
        "(Address already in use: another process has it)\n"
    )


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("no-such-host.invalid:9308", "kctl: error: --serve no-such-host.invalid:9308: cannot "
                                      "resolve 'no-such-host.invalid'"),
        ("192.0.2.1:9308", "kctl: error: --serve 192.0.2.1:9308: not an address of this machine"),
        ("9308", "kctl: error: malformed --serve '9308'"),
    ],
)  # fmt: skip
def test_a_bad_listen_address_is_one_usage_error_line(kctl, address, expected):
    r = kctl("groups", "lag", "--serve", address)
    assert r.code == 2, r
    assert r.stderr.startswith(expected), r
    assert len(r.stderr.splitlines()) == 1, r


@pytest.mark.skipif(missing() is not None, reason=str(missing()))
def test_prometheus_scrapes_the_exporter_and_answers_lag_and_time_lag(
    serve, lagging_group, tmp_path
):
    group, _topic, old_ms = lagging_group
    exporter = serve(group)
    exporter.wait_collections(1)
    target = f"127.0.0.1:{exporter.port}"
    with prometheus_server([target], tmp_path / "prometheus") as prom:
        prom.wait_for_target_up()
        lag = prom.wait_for(
            lambda: prom.query(f'kafka_consumergroup_group_lag{{group="{group}"}}'),
            "the group's lag in Prometheus",
        )
        assert [(r["metric"]["partition"], float(r["value"][1])) for r in lag] == [("0", 7.0)]
        assert lag[0]["metric"]["instance"] == target
        total = prom.query(f'sum by (group) (kafka_consumergroup_group_sum_lag{{group="{group}"}})')
        assert float(total[0]["value"][1]) == 7.0
        time_lag = prom.query(f'kafka_consumergroup_group_max_lag_seconds{{group="{group}"}}')
        seconds = float(time_lag[0]["value"][1])
        assert HOUR_MS / 1000 <= seconds <= time.time() - old_ms / 1000 + 1
        # kctl's own series go through Prometheus as well: the status and the health
        status = prom.query(f'kctl_consumergroup_status{{group="{group}"}} == 1')
        assert len(status) == 1 and status[0]["metric"]["status"] in ("OK", "WARN", "ERR")
        assert prom.query("kctl_lag_exporter_stale")[0]["value"][1] == "0"
    assert exporter.stop().code == 0


@pytest.mark.skipif(shutil.which("promtool") is None, reason="no promtool (Debian's prometheus)")
def test_the_documented_alert_rules_and_scrape_config_are_valid_for_prometheus(tmp_path):
    from conftest import ROOT

    text = (ROOT / "docs" / "lag-exporter.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", text, re.S)
    rules = next(b for b in blocks if b.startswith("groups:"))
    config = next(b for b in blocks if b.startswith("scrape_configs:"))
    (tmp_path / "rules.yml").write_text(rules)
    (tmp_path / "prometheus.yml").write_text(config)
    for what, path in (("rules", "rules.yml"), ("config", "prometheus.yml")):
        r = subprocess.run(["promtool", "check", what, str(tmp_path / path)],
                           capture_output=True, text=True, timeout=60)  # fmt: skip
        assert r.returncode == 0, r.stdout + r.stderr
    # every metric the rules use is one the exporter serves
    from kctl.lag import metrics as M

    served = {f.name for f in M.families([], {}, M.Health(last_duration_s=1, poll_ms=1), "c")}
    served |= {f"{n}_total" for n in served}
    used = set(re.findall(r"\b(kafka_\w+|kctl_\w+)\b", rules))
    assert used and used <= served, used - served
