"""Test session setup: one real Apache Kafka cluster per session.

By default the session starts a 3-broker KRaft cluster of Apache Kafka (jars from kctl's cache,
else Maven Central) on free loopback ports through the same code as ``kctl local up --engine
kafka``, and kills it at the end. If it cannot start, the session fails with the nodes' logs: it
never skips silently. ``KCTL_TEST_ENGINE=tansu`` runs the suite on the Tansu broker instead;
``KCTL_TEST_KAFKA_VERSION`` picks another Kafka version.

With ``KCTL_TEST_BOOTSTRAP=host:port`` the same tests run against that cluster instead (a real
Apache Kafka cluster, PLAINTEXT listener). A test that needs an API the broker lacks asks
ApiVersions (``requires_api``) and is skipped with a reason naming the API.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "data"


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str

    def __repr__(self) -> str:  # shown by pytest when an assertion fails
        return (
            f"Run(code={self.code}, stdout={self.stdout[-800:]!r}, stderr={self.stderr[-800:]!r})"
        )


ENGINE = os.environ.get("KCTL_TEST_ENGINE", "kafka")


def on_tansu() -> bool:
    """The session runs on the local Tansu broker (known gaps: see docs/local.md)."""
    return ENGINE == "tansu" and not os.environ.get("KCTL_TEST_BOOTSTRAP")


def start_kafka_cluster(
    state: Path,
    brokers: int = 3,
    broker_config: dict[str, str] | None = None,
    controllers: int = 1,
    quorum: str = "static",
) -> object:
    """A real Apache Kafka KRaft cluster through the same code as ``kctl local up --engine
    kafka`` (free loopback ports); fails the session with the node's log when it cannot."""
    from kctl.errors import KctlError
    from kctl.local import kafka_cluster

    try:
        cluster, _ = kafka_cluster.start(
            state,
            brokers=brokers,
            port=0,
            version=os.environ.get("KCTL_TEST_KAFKA_VERSION") or None,
            wait=240,
            broker_config=broker_config,
            controllers=controllers,
            quorum=quorum,
        )
    except KctlError as exc:
        logs = "\n".join(
            f"--- {p} ---\n{kafka_cluster.log_tail(p, 20, errors_first=True)}"
            for p in sorted((state / kafka_cluster.STATE_SUBDIR).glob("node-*/node.log"))
        )
        pytest.fail(f"the test Kafka cluster did not start: {exc.line()}\n{logs}", pytrace=False)
    return cluster


def commit_offsets(
    bootstrap: str, group: str, offsets: dict[tuple[str, int], int], timeout: float = 60
) -> None:
    """Commit ``offsets`` for ``group`` with the admin API (kafka-consumer-groups.sh's way),
    retrying while the coordinator is not ready: AlterConsumerGroupOffsets answers per
    partition (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS while __consumer_offsets is
    created or moves) and ``result()`` does not raise for those."""
    import time

    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    tps = [TopicPartition(t, p, o) for (t, p), o in offsets.items()]
    deadline = time.monotonic() + timeout
    while True:
        errors: list[object] = []
        try:
            done = admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group, tps)])
            errors = [tp.error for tp in done[group].result(timeout=30).topic_partitions]
        except Exception as exc:  # a whole-request failure (coordinator moving): retry too
            errors = [exc]
        if not any(errors):
            return
        if time.monotonic() > deadline:
            pytest.fail(f"committing offsets of {group} failed: {errors}")
        time.sleep(0.2)


def read_back(bootstrap: str, topic: str, ends: dict[int, int]) -> list[bytes]:
    """Every record value of ``topic`` up to the log end offsets ``ends`` (partition -> offset),
    consumed from the start; bounded by a deadline (fails naming what was not read)."""
    import time

    from confluent_kafka import Consumer, KafkaError, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("readback"),
                  "enable.auto.commit": False, "enable.partition.eof": True})  # fmt: skip
    values: list[bytes] = []
    try:
        todo = {p for p in ends if ends[p] > 0}
        c.assign([TopicPartition(topic, p, 0) for p in todo])
        deadline = time.monotonic() + 120
        while todo and time.monotonic() < deadline:
            for m in c.consume(5000, 0.5):
                if m.error() is not None:
                    if m.error().code() == KafkaError._PARTITION_EOF:
                        if m.offset() >= ends[m.partition()]:
                            todo.discard(m.partition())
                        continue
                    raise AssertionError(f"reading back {topic}: {m.error()}")
                values.append(m.value())
                if m.offset() + 1 >= ends[m.partition()]:
                    todo.discard(m.partition())
        assert not todo, f"partitions {sorted(todo)} of {topic} not read to the end in time"
    finally:
        c.close()
    return values


def _java_hash(text: str) -> int:
    h = 0
    for ch in text:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def warm_up_group_coordinators(bootstrap: str, partitions: int = 12) -> None:
    """Create __consumer_offsets and wait until every one of its partitions takes a commit, so
    no test meets a coordinator that is still loading (a commit there answers NOT_COORDINATOR)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic = "kctl-test-warm-up"
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=60)
    wait_for(lambda: topic in admin.list_topics(timeout=10).topics, "warm-up topic", 60)
    seen: set[int] = set()
    i = 0
    while len(seen) < partitions and i < 10_000:  # group -> partition as Kafka hashes it
        group = f"kctl-warm-up-{i}"
        i += 1
        slot = (_java_hash(group) & 0x7FFFFFFF) % partitions  # Kafka's Utils.abs
        if slot not in seen:
            seen.add(slot)
            commit_offsets(bootstrap, group, {(topic, 0): 0}, timeout=120)


def kctl_environment(**values: str) -> dict[str, str]:
    """This process's environment without any KCTL_* variable, plus ``values`` and plain,
    wide output (no colour, 200 columns)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KCTL_")}
    env.update(NO_COLOR="1", COLUMNS="200", **values)
    return env


def run_kctl(env: dict[str, str], *args: str, input: str | None = None, timeout: float = 60) -> Run:
    """``kctl ARGS...`` as a separate process, as an operator runs it (stdin closed unless
    ``input`` is given, so destructive commands refuse without --yes)."""
    proc = subprocess.run(
        [sys.executable, "-m", "kctl", *args],
        input=input,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        stdin=None if input is not None else subprocess.DEVNULL,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture(scope="session")
def kafka_cluster_state(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path | None]:
    """The state directory of the session's local Kafka cluster (None on Tansu or with
    KCTL_TEST_BOOTSTRAP)."""
    if os.environ.get("KCTL_TEST_BOOTSTRAP") or ENGINE != "kafka":
        yield None
        return
    from kctl.local import kafka_cluster

    state = tmp_path_factory.mktemp("kafka-state")
    cluster = start_kafka_cluster(state)
    warm_up_group_coordinators(cluster.bootstrap)  # type: ignore[attr-defined]
    try:
        yield state
    finally:
        cluster = kafka_cluster.read_state(state)
        if cluster is not None:
            kafka_cluster.kill_all(cluster)


@pytest.fixture(scope="session")
def bootstrap(
    tmp_path_factory: pytest.TempPathFactory, kafka_cluster_state: Path | None
) -> Iterator[str]:
    given = os.environ.get("KCTL_TEST_BOOTSTRAP")
    if given:
        yield given
        return
    if kafka_cluster_state is not None:
        from kctl.local import kafka_cluster

        cluster = kafka_cluster.read_state(kafka_cluster_state)
        assert cluster is not None
        yield cluster.bootstrap
        return
    from kctl.errors import KctlError
    from kctl.local import broker

    state = tmp_path_factory.mktemp("broker-state")
    port = broker.free_port()
    try:
        info, _ = broker.start(port=port, directory=state, wait=30)
    except KctlError as exc:
        tail = broker.log_tail(state / broker.LOG_FILE, 30)
        pytest.fail(
            f"the test broker did not start: {exc.line()}\n--- broker log ---\n{tail}",
            pytrace=False,
        )
    try:
        yield info.bootstrap
    finally:
        broker.stop(state)


def _registry_versions() -> list[str]:
    """The Apicurio Registry versions the registry tests run on, each started once per session:
    every version kctl runs (KCTL_TEST_REGISTRY_VERSIONS=V[,V...] picks some), or the one
    registry KCTL_TEST_SCHEMA_REGISTRY names ("given")."""
    if os.environ.get("KCTL_TEST_SCHEMA_REGISTRY"):
        return ["given"]
    from kctl.local.registry import VERSIONS

    chosen = os.environ.get("KCTL_TEST_REGISTRY_VERSIONS")
    return [v.strip() for v in chosen.split(",") if v.strip()] if chosen else list(VERSIONS)


REGISTRY_VERSIONS = _registry_versions()
_REGISTRY_VERSION_OF: dict[str, str | None] = {}  # the session's registry URLs -> version


@pytest.fixture(
    scope="session", params=REGISTRY_VERSIONS, ids=lambda v: f"apicurio-{v}" if v != "given" else v
)
def schema_registry(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The URL of a Schema Registry of the session (its Confluent-compatible API): Apicurio
    Registry 2.6.13.Final, then 3.3.3 (the fixture is parametrized: every test that uses it runs
    on both, and pytest orders the tests so each registry is started once), through kctl's own
    code (kctl.local.registry), as ``kctl local up --schema-registry [--registry-version V]``
    starts it; KCTL_TEST_SCHEMA_REGISTRY=URL uses a running one instead."""
    given = os.environ.get("KCTL_TEST_SCHEMA_REGISTRY")
    if request.param == "given" and given:
        _REGISTRY_VERSION_OF[given] = None
        yield given
        return
    from kctl.errors import KctlError
    from kctl.local import registry

    state = tmp_path_factory.mktemp(f"registry-state-{request.param}")
    try:
        info = registry.start(state, port=registry.free_port(), version=request.param)
    except KctlError as exc:
        pytest.fail(
            f"the test Schema Registry (Apicurio Registry {request.param}) did not start: "
            f"{exc.line()}",
            pytrace=False,
        )
    _REGISTRY_VERSION_OF[info.url] = info.version
    try:
        yield info.url
    finally:
        registry.stop(state)


@pytest.fixture(scope="session")
def registry_version(schema_registry: str) -> str | None:
    """The Apicurio Registry version behind ``schema_registry`` (None: a registry given with
    KCTL_TEST_SCHEMA_REGISTRY), for the tests of what differs between 2.6 and 3.x."""
    return _REGISTRY_VERSION_OF.get(schema_registry)


@pytest.fixture(scope="session")
def kafka_libs() -> Path:
    """The directory of Kafka's jars (the broker and its tools): Kafka's own tools run from it
    with ``java -cp`` as the reference beside kctl. Resolved like ``kctl local up``."""
    from kctl.local.kafka_jars import locate

    return locate(os.environ.get("KCTL_TEST_KAFKA_VERSION") or None).libs


@pytest.fixture(scope="session")
def kafka_tool(kafka_libs: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run one of Kafka's own tools from the jars, the reference beside kctl:
    ``kafka_tool("org.apache.kafka.tools.GetOffsetShell", "--bootstrap-server", b, ...)``.
    Fails the test with the tool's stderr when it exits non-zero (``check=False`` to keep it)."""
    import shutil

    java = shutil.which("java") or "java"

    def run(cls: str, *args: str, check: bool = True, timeout: float = 120) -> Any:
        proc = subprocess.run(
            [java, "-Xmx256m", "-cp", f"{kafka_libs}/*", cls, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and proc.returncode != 0:
            pytest.fail(f"{cls} {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
        return proc

    return run


@pytest.fixture(scope="session")
def broker_apis(bootstrap: str) -> dict[int, tuple[int, int]]:
    from kctl.local.broker import probe_api_versions

    host, _, port = bootstrap.split(",")[0].rpartition(":")
    return probe_api_versions(host, int(port), timeout=5)


@pytest.fixture(scope="session")
def requires_api(broker_apis: dict[int, tuple[int, int]]) -> Callable[[str], None]:
    """``requires_api("CreatePartitions")`` skips the test, naming the API, when the broker
    does not advertise it."""
    from kctl.broker.apis import API_KEYS

    def check(name: str) -> None:
        if API_KEYS[name] not in broker_apis:
            pytest.skip(f"the broker does not support {name} (not in its ApiVersions answer)")

    return check


@pytest.fixture(scope="session")
def lacks_api(broker_apis: dict[int, tuple[int, int]]) -> Callable[[str], bool]:
    from kctl.broker.apis import API_KEYS

    return lambda name: API_KEYS[name] not in broker_apis


@pytest.fixture
def kctl_env(bootstrap: str, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KCTL_")}
    env.update(
        KCTL_BOOTSTRAP_SERVERS=bootstrap,
        KCTL_CONFIG=str(tmp_path / "kctl-config.yaml"),
        KCTL_STATE_DIR=str(tmp_path / "kctl-state"),
        NO_COLOR="1",
        COLUMNS="200",
    )
    return env


@pytest.fixture
def kctl(kctl_env: dict[str, str]) -> Callable[..., Run]:
    """Run ``kctl ARGS...`` as a separate process, as an operator would."""

    def run(
        *args: str, input: str | None = None, env: dict[str, str] | None = None, timeout: float = 60
    ) -> Run:
        return run_kctl({**kctl_env, **(env or {})}, *args, input=input, timeout=timeout)

    return run


@pytest.fixture
def offline_kctl(tmp_path: Path) -> Callable[..., Run]:
    """``kctl`` for commands that need no broker (decoders, profiles)."""
    env = kctl_environment(KCTL_CONFIG=str(tmp_path / "kctl-config.yaml"))

    def run(*args: str, input: str | None = None, timeout: float = 60) -> Run:
        return run_kctl(env, *args, input=input, timeout=timeout)

    return run


@pytest.fixture
def admin(bootstrap: str):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bootstrap})


def unique(prefix: str = "t") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def new_topic(admin) -> Callable[..., str]:
    """Create a fresh topic through the real client library; returns its name."""
    from confluent_kafka.admin import NewTopic

    def make(
        partitions: int = 3,
        prefix: str = "t",
        config: dict[str, str] | None = None,
        assignment: list[list[int]] | None = None,
    ) -> str:
        """Replication factor 1 unless ``assignment`` (replicas per partition) is given."""
        name = unique(prefix)
        if assignment is not None:
            topic = NewTopic(
                name, len(assignment), replica_assignment=assignment, config=config or {}
            )
        else:
            topic = NewTopic(name, partitions, 1, config=config or {})
        futures = admin.create_topics([topic])
        futures[name].result(timeout=30)
        wait_for(lambda: name in admin.list_topics(timeout=10).topics, f"topic {name} visible")
        return name

    return make


def wait_for(
    condition: Callable[[], bool], what: str, timeout: float = 20.0, interval: float = 0.05
) -> None:
    """Poll ``condition`` until true (bounded); fail naming ``what``."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout:g}s waiting for {what}")


def kafka_topics_describe(kafka_tool: Callable[..., Any], bootstrap: str, topic: str) -> Any:
    """``kafka-topics.sh --describe --topic T`` parsed: (topic fields, {partition: fields}), each
    a dict of its ``Key: value`` pairs (values as printed)."""
    out = kafka_tool(
        "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bootstrap,
        "--describe", "--topic", topic,
    ).stdout  # fmt: skip
    head: dict[str, str] = {}
    parts: dict[int, dict[str, str]] = {}
    for line in out.splitlines():
        if not line.strip():
            continue
        fields = dict(
            f.split(": ", 1) if ": " in f else (f.rstrip(":"), "") for f in line.strip().split("\t")
        )
        if "Partition" in fields:
            parts[int(fields["Partition"])] = fields
        else:
            head = fields
    # Configs in the broker's order: compared as a set of name=value.
    head["Configs"] = sorted(x for x in head.get("Configs", "").split(",") if x)  # type: ignore[assignment]
    return head, parts


def kctl_topic_as_kafka_prints_it(doc: dict[str, Any]) -> Any:
    """``kctl topics describe -o json``'s entry for one topic in kafka-topics.sh's words, for a
    field-by-field comparison with :func:`kafka_topics_describe` (offline replicas and the
    effective min.insync.replicas are kctl's own additions: Kafka's tool does not print them)."""
    ids = lambda xs: ",".join(str(x) for x in xs or [])  # noqa: E731
    head = {
        "Topic": doc["topic"],
        "TopicId": doc["topic_id"],
        "PartitionCount": str(doc["partition_count"]),
        "ReplicationFactor": str(doc["replication_factor"]),
        "Configs": sorted(f"{k}={v}" for k, v in doc["configs"].items()),
    }
    parts = {}
    for p in doc["partitions"]:
        fields = {
            "Topic": doc["topic"],
            "Partition": str(p["partition"]),
            "Leader": str(p["leader"]) if p["leader"] >= 0 else "none",
            "Replicas": ids(p["replicas"]),
            "Isr": ids(p["isr"]),
        }
        if p["adding_replicas"] or p["removing_replicas"]:
            fields["Adding Replicas"] = ids(p["adding_replicas"])
            fields["Removing Replicas"] = ids(p["removing_replicas"])
        if p["elr"] is not None:
            fields["Elr"] = ids(p["elr"])
        if p["last_known_elr"] is not None:
            fields["LastKnownElr"] = ids(p["last_known_elr"])
        parts[p["partition"]] = fields
    return head, parts


def own_dynamic_configs(admin: Any, kind: str, name: str, names: tuple[str, ...]) -> dict[str, str]:
    """The values of ``names`` set on the broker or topic ``name`` itself (its own dynamic
    config, not defaults or cluster-wide ones): one DescribeConfigs through confluent_kafka."""
    from confluent_kafka.admin import ConfigResource, ConfigSource

    fut = admin.describe_configs([ConfigResource(kind, name)], request_timeout=15)
    entries = next(iter(fut.values())).result(timeout=20)
    own = {
        "broker": ConfigSource.DYNAMIC_BROKER_CONFIG.value,
        "topic": ConfigSource.DYNAMIC_TOPIC_CONFIG.value,
    }[kind]
    return {
        n: e.value
        for n, e in entries.items()
        if n in names and e.value and int(getattr(e.source, "value", e.source)) == own
    }
