"""A real Apache Kafka KRaft cluster on loopback: one controller quorum and N brokers, each a JVM
started from the jars that :mod:`kctl.local.kafka_jars` finds.

Layout (under kctl's state directory, ``local-cluster/``)::

    cluster.json              what runs: version, cluster id, every node with port, pid, dirs
    log4j2.properties         the broker logging (Kafka 4) or log4j.properties (Kafka 3)
    node-<id>/server.properties
    node-<id>/data-0 .. data-K    log dirs (brokers have --log-dirs of them; controllers one)
    node-<id>/node.log        the JVM's stdout and stderr

Controllers are separate processes (ids 1000, 1001, ...), so stopping brokers never stops the
quorum: with brokers 1..N an operator can stop two of three and still ask the controller who
leads what. Used by ``kctl local`` and by the test session, so both start it the same way.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import secrets
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kctl.errors import KctlError, UsageError
from kctl.local import security as local_security
from kctl.local.broker import free_ports, log_tail, port_free, reap
from kctl.local.kafka_jars import KafkaRuntime, locate, require_java

STATE_SUBDIR = "local-cluster"
STATE_FILE = "cluster.json"
CONTROLLER_BASE_ID = 1000
HOST = "127.0.0.1"

BROKER_HEAP = os.environ.get("KCTL_LOCAL_BROKER_HEAP", "768m")
CONTROLLER_HEAP = os.environ.get("KCTL_LOCAL_CONTROLLER_HEAP", "256m")

_LOG4J2 = """\
status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.state.name = state.change.logger
logger.state.level = WARN
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.cleaner.name = kafka.log.LogCleaner
logger.cleaner.level = INFO
"""
_LOG4J1 = """\
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.request.logger=WARN
"""


@dataclass
class Node:
    id: int
    role: str  # "broker" or "controller"
    port: int
    directory: str
    log_dirs: list[str]
    pid: int | None = None
    rack: str | None = None  # broker.rack (brokers of a cluster started with --racks)

    @property
    def config(self) -> str:
        return str(Path(self.directory) / "server.properties")

    @property
    def log(self) -> str:
        return str(Path(self.directory) / "node.log")

    @property
    def address(self) -> str:
        return f"{HOST}:{self.port}"


@dataclass
class Cluster:
    version: str
    cluster_id: str
    libs: str
    java: str
    directory: str
    nodes: list[Node] = field(default_factory=list)
    started_at: float = 0.0
    engine: str = "kafka"
    jar_source: str = ""
    # Extra server.properties for every broker (an authorizer, listeners...), over the defaults.
    broker_config: dict[str, str] = field(default_factory=dict)
    # plaintext, sasl_plaintext, sasl_ssl or ssl (kctl.local.security)
    security: str = "plaintext"
    # static (controller.quorum.voters) or dynamic (KIP-853, Kafka 3.9+: voters can be added
    # and removed; every controller formatted as an initial voter with its directory id)
    quorum: str = "static"
    directory_ids: dict[str, str] = field(default_factory=dict)  # controller id -> its log dir id
    # --racks R: broker i in rack "rack-((i-1) % R + 1)"; 0: no broker.rack (also what an
    # added broker continues with)
    racks: int = 0

    @property
    def material(self) -> local_security.Material:
        return local_security.Material(Path(self.directory) / "security")

    def admin_client_config(self) -> dict[str, str]:
        """librdkafka settings that connect as the cluster's admin (empty when plaintext)."""
        return local_security.librdkafka_admin(self.security, self.material)

    @property
    def brokers(self) -> list[Node]:
        return [n for n in self.nodes if n.role == "broker"]

    @property
    def controllers(self) -> list[Node]:
        return [n for n in self.nodes if n.role == "controller"]

    @property
    def bootstrap(self) -> str:
        return ",".join(n.address for n in self.brokers)

    def node(self, node_id: int) -> Node:
        for n in self.nodes:
            if n.id == node_id:
                return n
        ids = ", ".join(str(n.id) for n in self.nodes)
        raise KctlError(f"no node {node_id} in the local cluster", f"its nodes are {ids}")

    def broker(self, broker_id: int) -> Node:
        node = self.node(broker_id)
        if node.role != "broker":
            raise KctlError(f"node {broker_id} is a controller, not a broker")
        return node


# --- state -----------------------------------------------------------------------------------

LOCK_FILE = "local-cluster.lock"


@contextlib.contextmanager
def locked(state: Path, timeout: float = 300.0) -> Iterator[None]:
    """One kctl at a time changes a state directory's cluster: two ``local up`` at once, or a
    ``local down`` while ``up`` is starting, wait for each other (bounded) instead of starting
    two clusters on the same data dirs or stopping half a start."""
    import fcntl

    state.mkdir(parents=True, exist_ok=True)
    fd = os.open(state / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise KctlError(
                        f"another kctl local command holds {state / LOCK_FILE}",
                        f"waited {timeout:g}s; is a 'kctl local up' still starting?",
                    ) from None
                time.sleep(0.1)
        yield
    finally:
        os.close(fd)  # releases the lock


def cluster_dir(state: Path) -> Path:
    return state / STATE_SUBDIR


def read_state(state: Path) -> Cluster | None:
    path = cluster_dir(state) / STATE_FILE
    try:
        raw = json.loads(path.read_text())
        nodes = [Node(**n) for n in raw.pop("nodes")]
        return Cluster(**raw, nodes=nodes)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise KctlError(
            f"the local cluster's state file {path} is unreadable",
            f"{exc}; remove {cluster_dir(state)} after stopping its java processes",
        ) from exc


def write_state(cluster: Cluster) -> None:
    path = Path(cluster.directory) / STATE_FILE
    tmp = path.with_name(f".{STATE_FILE}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(asdict(cluster), indent=2) + "\n")
    os.replace(tmp, path)


# --- processes -------------------------------------------------------------------------------


# The JVMs this process started: their liveness comes from the Popen handle (exact, and
# their exit status is kept for the error message).
_children: dict[int, subprocess.Popen[bytes]] = {}


def exit_status(node: Node) -> int | None:
    proc = _children.get(node.pid or 0)
    return proc.poll() if proc is not None else None


def node_alive(node: Node) -> bool:
    """The recorded pid runs *this node's* JVM (command line names its server.properties): a
    pid reused by another process is never taken for ours, and never signalled."""
    if not node.pid:
        return False
    proc = _children.get(node.pid)
    if proc is not None:
        return proc.poll() is None
    try:
        cmdline = Path(f"/proc/{node.pid}/cmdline").read_bytes()
        stat = Path(f"/proc/{node.pid}/stat").read_text()
    except OSError:
        return False
    if stat.rsplit(")", 1)[-1].split()[0] == "Z":
        reap(node.pid)
        return False
    if not cmdline:  # briefly empty while the kernel maps the process; it is not gone
        return True
    return b"kafka.Kafka" in cmdline and node.config.encode() in cmdline


def _java_args(cluster: Cluster, node: Node) -> list[str]:
    heap = CONTROLLER_HEAP if node.role == "controller" else BROKER_HEAP
    logging = Path(cluster.directory) / (
        "log4j2.properties" if int(cluster.version.split(".")[0]) >= 4 else "log4j.properties"
    )
    log_prop = (
        f"-Dlog4j2.configurationFile={logging}"
        if logging.name.startswith("log4j2")
        else f"-Dlog4j.configuration=file:{logging}"
    )
    return [
        cluster.java,
        "-Xms128m",
        f"-Xmx{heap}",
        "-XX:+UseG1GC",
        "-XX:MaxGCPauseMillis=20",
        "-XX:InitiatingHeapOccupancyPercent=35",
        "-XX:+ExplicitGCInvokesConcurrent",
        "-XX:+ExitOnOutOfMemoryError",
        "-Djava.awt.headless=true",
        log_prop,
        "-cp",
        str(Path(cluster.libs) / "*"),
        "kafka.Kafka",
        node.config,
    ]


def _spawn(cluster: Cluster, node: Node) -> None:
    with open(node.log, "ab") as log:
        proc = subprocess.Popen(
            _java_args(cluster, node),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            cwd=node.directory,
        )
    node.pid = proc.pid
    _children[proc.pid] = proc


def _signal(node: Node, sig: int) -> bool:
    if not node_alive(node):
        return False
    assert node.pid is not None
    with contextlib.suppress(ProcessLookupError):
        os.kill(node.pid, sig)
    return True


def _wait_dead(nodes: Iterable[Node], timeout: float) -> list[Node]:
    """Wait until none of ``nodes`` runs; return those still running at the deadline."""
    pending = [n for n in nodes if node_alive(n)]
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        time.sleep(0.1)
        pending = [n for n in pending if node_alive(n)]
    return pending


# --- configuration ---------------------------------------------------------------------------


def new_cluster_id() -> str:
    """A random id as Kafka's Uuid writes it (URL-safe base64, 22 characters). As Kafka does, one
    starting with "-" is drawn again: kafka-storage.sh would read it as an option."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def node_properties(cluster: Cluster, node: Node, brokers: int) -> dict[str, str]:
    if cluster.quorum == "dynamic":
        quorum = {
            "controller.quorum.bootstrap.servers": ",".join(c.address for c in cluster.controllers)
        }
    else:
        voters = ",".join(f"{c.id}@{c.address}" for c in cluster.controllers)
        quorum = {"controller.quorum.voters": voters}
    props: dict[str, str] = {
        "process.roles": node.role,
        "node.id": str(node.id),
        **quorum,
        "controller.listener.names": "CONTROLLER",
        "log.dirs": ",".join(node.log_dirs),
    }
    if node.role == "broker" and node.rack:
        props["broker.rack"] = node.rack
    rf = min(3, brokers)
    # Topic creation defaults: applied by the controller in Kafka 4.x, by the broker before.
    props["num.partitions"] = "1"
    props["default.replication.factor"] = str(rf)
    if node.role == "controller":
        props["listeners"] = f"CONTROLLER://{node.address}"
        props.update(local_security.controller_properties(cluster.security, cluster.material))
        return props
    listener = local_security.listener_name(cluster.security)
    props.update(
        {
            "listeners": f"{listener}://{node.address}",
            "advertised.listeners": f"{listener}://{node.address}",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "inter.broker.listener.name": "PLAINTEXT",
            "offsets.topic.replication.factor": str(rf),
            # Fewer internal partitions than Kafka's 50: they start in a second on 2 cores.
            "offsets.topic.num.partitions": "12",
            "transaction.state.log.replication.factor": str(rf),
            "transaction.state.log.min.isr": str(min(2, rf)),
            "transaction.state.log.num.partitions": "8",
            "share.coordinator.state.topic.replication.factor": str(rf),
            "share.coordinator.state.topic.min.isr": str(min(2, rf)),
            "share.coordinator.state.topic.num.partitions": "4",
            # A rehearsal cluster: topics exist because somebody created them.
            "auto.create.topics.enable": "false",
            # Classic groups form at once instead of after Kafka's 3 s default delay.
            "group.initial.rebalance.delay.ms": "0",
            "log.cleaner.backoff.ms": "1000",
        }
    )
    if cluster.security != "plaintext":
        props.update(
            local_security.broker_properties(
                cluster.security, cluster.material, cluster.material.password()
            )
        )
    return props


# Broker settings the controllers need as well: the authorizer and who it lets do anything.
_AUTHORIZER = ("authorizer.class.name", "super.users", "allow.everyone.if.no.acl.found")


def _write_configs(cluster: Cluster, brokers: int) -> None:
    base = Path(cluster.directory)
    (base / "log4j2.properties").write_text(_LOG4J2)
    (base / "log4j.properties").write_text(_LOG4J1)
    for node in cluster.nodes:
        _write_node_config(cluster, node, brokers)


def _write_node_config(cluster: Cluster, node: Node, brokers: int) -> None:
    Path(node.directory).mkdir(parents=True, exist_ok=True)
    props = node_properties(cluster, node, brokers)
    if cluster.version.startswith("3.") and node.role == "broker":
        props.pop("share.coordinator.state.topic.replication.factor")
        props.pop("share.coordinator.state.topic.min.isr")
        props.pop("share.coordinator.state.topic.num.partitions")
    if node.role == "broker":
        props.update(cluster.broker_config)
    else:  # in KRaft the controllers handle CreateAcls/DeleteAcls: the same authorizer
        props.update({k: v for k, v in cluster.broker_config.items() if k in _AUTHORIZER})
    text = "".join(f"{k}={v}\n" for k, v in props.items())
    # 0600: a secured broker's file holds the admin's password (its inter-broker login)
    fd = os.open(node.config, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def initial_controllers(cluster: Cluster) -> str:
    """kafka-storage.sh format --initial-controllers: ID@HOST:PORT:DIRECTORY_ID for each."""
    return ",".join(
        f"{c.id}@{c.address}:{cluster.directory_ids[str(c.id)]}" for c in cluster.controllers
    )


def _format_storage(cluster: Cluster, nodes: list[Node] | None = None) -> None:
    """kafka-storage.sh format on every node (or on ``nodes``: a broker added later, formatted
    with the cluster's id), all at once."""
    procs: list[tuple[Node, subprocess.Popen[bytes]]] = []
    salt = secrets.token_bytes(16)
    for node in cluster.nodes if nodes is None else nodes:
        args = _java_args(cluster, node)
        args = [*args[: args.index("kafka.Kafka")], "kafka.tools.StorageTool"]
        args += ["format", f"--cluster-id={cluster.cluster_id}", "-c", node.config]
        args += ["--ignore-formatted"]
        if cluster.quorum == "dynamic" and node.role == "controller":
            args += ["--initial-controllers", initial_controllers(cluster)]
        if node.role == "controller" and local_security.uses_sasl(cluster.security):
            # the admin's SCRAM credentials in the bootstrap metadata: the brokers log in
            # to each other with them
            args += local_security.scram_format_args(
                local_security.ADMIN, cluster.material.password(), salt
            )
        with open(node.log, "ab") as log:
            procs.append((node, subprocess.Popen(args, stdout=log, stderr=log, cwd=node.directory)))
    for node, proc in procs:
        try:
            code = proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = -9
        if code != 0:
            raise KctlError(
                f"formatting the storage of node {node.id} failed (exit code {code})",
                log_tail(node.log, 1, errors_first=True) or node.log,
            )


# --- readiness -------------------------------------------------------------------------------

# (bootstrap, timeout, librdkafka settings of the admin) -> ids of the registered brokers
LiveBrokers = Callable[[str, float, dict[str, str]], set[int]]


def _live_brokers_default(bootstrap: str, timeout: float, client: dict[str, str]) -> set[int]:
    from kctl.broker.cluster import live_broker_ids

    return live_broker_ids(bootstrap, timeout, client)


def wait_ready(
    cluster: Cluster,
    want: set[int],
    timeout: float,
    live_brokers: LiveBrokers = _live_brokers_default,
) -> None:
    """Until every broker in ``want`` is registered and unfenced (in the metadata a broker
    serves), or a node dies, or the deadline passes: each ends in one line naming the node."""
    deadline = time.monotonic() + timeout
    last: set[int] = set()
    client = cluster.admin_client_config()
    while True:
        for node in cluster.nodes:
            if node.pid and not node_alive(node) and (node.role == "controller" or node.id in want):
                code = exit_status(node)
                raise KctlError(
                    f"Kafka node {node.id} ({node.role}) exited while starting"
                    + (f" with exit code {code}" if code is not None else ""),
                    log_tail(node.log, 1, errors_first=True) or f"see {node.log}",
                )
        alive_bootstrap = ",".join(n.address for n in cluster.brokers if node_alive(n))
        if alive_bootstrap:
            with contextlib.suppress(KctlError):
                last = live_brokers(alive_bootstrap, 2.0, client)
            if want <= last and all(_answers(cluster.node(i), cluster.security) for i in want):
                return
        if time.monotonic() > deadline:
            missing = ", ".join(str(i) for i in sorted(want - last))
            raise KctlError(
                f"Kafka brokers {missing} did not register within {timeout:g}s",
                f"see {Path(cluster.directory)}/node-*/node.log",
            )
        time.sleep(0.2)


def _answers(node: Node, mode: str = "plaintext") -> bool:
    """This node's own listener answers (a restarted broker is up, not just still listed): an
    ApiVersions answer (SASL allows it before authentication); a TLS listener, a connection."""
    import socket

    from kctl.local.broker import probe_api_versions

    try:
        if local_security.uses_tls(mode):
            socket.create_connection((HOST, node.port), timeout=1.0).close()
        else:
            probe_api_versions(HOST, node.port, timeout=1.0)
    except (OSError, ValueError):
        return False
    return True


# --- operations ------------------------------------------------------------------------------


def plan_ports(port: int, brokers: int, controllers: int) -> tuple[list[int], list[int]]:
    """Broker ports ``port .. port+N-1`` and controller ports from ``port+100``; with port 0,
    free ports chosen by the system."""
    if port == 0:
        ports = free_ports(brokers + controllers, HOST)
        return ports[:brokers], ports[brokers:]
    broker_ports = [port + i for i in range(brokers)]
    controller_ports = [port + 100 + i for i in range(controllers)]
    for p in (*broker_ports, *controller_ports):
        if not 0 < p < 65536:
            raise KctlError(f"port {p} is out of range", "choose a lower --port")
        if not port_free(HOST, p):
            raise KctlError(f"cannot start the local cluster on {HOST}:{p}", "the port is in use")
    return broker_ports, controller_ports


def running(cluster: Cluster) -> list[Node]:
    return [n for n in cluster.nodes if node_alive(n)]


def start(
    state: Path,
    *,
    brokers: int = 3,
    controllers: int = 1,
    log_dirs: int = 2,
    port: int = 9092,
    version: str | None = None,
    kafka_home: str | None = None,
    wait: float = 180.0,
    live_brokers: LiveBrokers = _live_brokers_default,
    on_progress: Callable[[str], None] = lambda _m: None,
    broker_config: dict[str, str] | None = None,
    security_mode: str | None = None,
    quorum: str = "static",
    racks: int = 0,
) -> tuple[Cluster, bool]:
    """Start the cluster recorded under ``state`` or a new one; return (cluster, started_now).

    A recorded cluster whose nodes all run is returned as it is; one with stopped nodes gets
    them started again on its data (a crashed laptop, ``local down`` then ``up``). ``racks``
    (a new cluster only): broker i gets ``broker.rack`` = :func:`rack_of` (i, racks)."""
    if brokers < 1 or controllers < 1 or log_dirs < 1:
        raise KctlError("--brokers, --controllers and --log-dirs must each be at least 1")
    if racks < 0:
        raise UsageError(f"--racks must be 0 or more, not {racks}")
    with locked(state, timeout=wait + 60):
        return _start_locked(
            state, brokers, controllers, log_dirs, port, version, kafka_home, wait,
            live_brokers, on_progress, broker_config or {}, security_mode, quorum, racks,
        )  # fmt: skip


def rack_of(broker_id: int, racks: int) -> str | None:
    """Round-robin racks: broker 1 in rack-1, 2 in rack-2, ..., R+1 in rack-1 again; None
    without racks."""
    return f"rack-{(broker_id - 1) % racks + 1}" if racks > 0 else None


def _start_locked(
    state: Path,
    brokers: int,
    controllers: int,
    log_dirs: int,
    port: int,
    version: str | None,
    kafka_home: str | None,
    wait: float,
    live_brokers: LiveBrokers,
    on_progress: Callable[[str], None],
    broker_config: dict[str, str],
    security_mode: str | None,
    quorum: str = "static",
    racks: int = 0,
) -> tuple[Cluster, bool]:
    existing = read_state(state)
    if existing is not None:
        if security_mode is not None and existing.security != security_mode:
            raise UsageError(
                f"the local cluster in {existing.directory} runs with --security "
                f"{existing.security}, not {security_mode}",
                "stop and forget it first: kctl local down --purge",
            )
        if len(running(existing)) == len(existing.nodes):
            return existing, False
        return _restart(existing, wait, live_brokers, on_progress), True
    java = require_java()
    runtime: KafkaRuntime = locate(version, kafka_home)
    on_progress(f"Apache Kafka {runtime.version} from {runtime.source} ({runtime.libs})")
    directory = cluster_dir(state)
    directory.mkdir(parents=True, exist_ok=True)
    broker_ports, controller_ports = plan_ports(port, brokers, controllers)
    cluster = Cluster(
        version=runtime.version,
        cluster_id=new_cluster_id(),
        libs=str(runtime.libs),
        java=java,
        directory=str(directory),
        jar_source=runtime.source,
        broker_config=dict(broker_config),
        security=security_mode or "plaintext",
        quorum=quorum,
        racks=racks,
    )
    if quorum not in ("static", "dynamic"):
        raise UsageError(f"unknown quorum {quorum!r}", "static or dynamic")
    if quorum == "dynamic" and tuple(int(x) for x in runtime.version.split(".")[:2]) < (3, 9):
        raise UsageError(f"a dynamic quorum needs Kafka 3.9 or newer, not {runtime.version}")
    for i, p in enumerate(controller_ports):
        nid = CONTROLLER_BASE_ID + i
        home = directory / f"node-{nid}"
        cluster.nodes.append(Node(nid, "controller", p, str(home), [str(home / "metadata")]))
        if quorum == "dynamic":
            cluster.directory_ids[str(nid)] = new_cluster_id()  # the same Uuid text form
    for i, p in enumerate(broker_ports):
        nid = i + 1
        home = directory / f"node-{nid}"
        dirs = [str(home / f"data-{k}") for k in range(log_dirs)]
        cluster.nodes.append(Node(nid, "broker", p, str(home), dirs, rack=rack_of(nid, racks)))
    if cluster.security != "plaintext":
        on_progress(f"making the {cluster.security} material in {cluster.material.directory}")
        local_security.make_material(cluster.material.directory, cluster.security)
    _write_configs(cluster, brokers)
    write_state(cluster)
    try:
        _format_storage(cluster)
        cluster.started_at = time.time()
        for node in cluster.nodes:
            _spawn(cluster, node)
        write_state(cluster)
        wait_ready(cluster, {b.id for b in cluster.brokers}, wait, live_brokers)
    except BaseException:
        kill_all(cluster)
        raise
    return cluster, True


def _restart(
    cluster: Cluster, wait: float, live_brokers: LiveBrokers, on_progress: Callable[[str], None]
) -> Cluster:
    stopped = [n for n in cluster.nodes if not node_alive(n)]
    on_progress("starting stopped nodes " + ", ".join(str(n.id) for n in stopped))
    for node in sorted(stopped, key=lambda n: n.role != "controller"):
        _spawn(cluster, node)
    write_state(cluster)
    wait_ready(cluster, {b.id for b in cluster.brokers}, wait, live_brokers)
    return cluster


def stop_nodes(cluster: Cluster, nodes: list[Node], timeout: float = 60.0) -> list[Node]:
    """SIGTERM (a controlled shutdown: leadership moves away first), SIGKILL after ``timeout``.
    Returns the nodes that were running."""
    was = [n for n in nodes if _signal(n, signal.SIGTERM)]
    for n in _wait_dead(was, timeout):
        _signal(n, signal.SIGKILL)
    _wait_dead(was, 10)
    for n in was:
        if n.pid:
            reap(n.pid)
    write_state(cluster)
    return was


def kill_nodes(cluster: Cluster, nodes: list[Node]) -> list[Node]:
    """SIGKILL: the node dies as in a power cut (no controlled shutdown, no flush)."""
    was = [n for n in nodes if _signal(n, signal.SIGKILL)]
    _wait_dead(was, 10)
    for n in was:
        if n.pid:
            reap(n.pid)
    write_state(cluster)
    return was


def kill_all(cluster: Cluster) -> None:
    kill_nodes(cluster, cluster.nodes)


def stop(state: Path, timeout: float = 60.0, remove: bool = False) -> Cluster | None:
    """Stop every node (brokers first, then the controllers); with ``remove``, delete the data.
    Waits for a ``local up`` that is still starting (the state lock) rather than racing it."""
    with locked(state):
        cluster = read_state(state)
        if cluster is None:
            return None
        stop_nodes(cluster, cluster.brokers, timeout)
        stop_nodes(cluster, cluster.controllers, timeout)
        if remove:
            import shutil

            shutil.rmtree(cluster.directory, ignore_errors=True)
        return cluster


def stop_broker(state: Path, broker_id: int, timeout: float = 60.0) -> bool:
    with locked(state):
        cluster = require_state(state)
        return bool(stop_nodes(cluster, [cluster.broker(broker_id)], timeout))


def kill_broker(state: Path, broker_id: int) -> bool:
    with locked(state):
        cluster = require_state(state)
        return bool(kill_nodes(cluster, [cluster.broker(broker_id)]))


def start_broker(
    state: Path,
    broker_id: int,
    wait: float = 120.0,
    live_brokers: LiveBrokers = _live_brokers_default,
) -> bool:
    """Start one stopped broker on its data and wait until it is registered again; False when
    it was already running."""
    with locked(state, timeout=wait + 60):
        cluster = require_state(state)
        node = cluster.broker(broker_id)
        if node_alive(node):
            return False
        _spawn(cluster, node)
        write_state(cluster)
        wait_ready(cluster, {broker_id}, wait, live_brokers)
        return True


def add_broker(
    state: Path,
    rack: str | None = None,
    wait: float = 180.0,
    live_brokers: LiveBrokers = _live_brokers_default,
    on_progress: Callable[[str], None] = lambda _m: None,
) -> Node:
    """Add one broker to the running cluster: the next id, the next free port, as many log
    dirs as broker 1, its own directory; formatted with the cluster's id (the same quorum
    settings as the others), started, and waited for until it is registered and unfenced.
    Its rack: ``rack``, else the round-robin of ``--racks`` continued, else none. Recorded in
    the state, so status, stop-broker, down and up see it. A broker that fails to start is
    killed and forgotten (its directory is replaced on the next try), so it can be run again."""
    import shutil

    with locked(state, timeout=wait + 60):
        cluster = require_state(state)
        if not any(node_alive(c) for c in cluster.controllers):
            raise KctlError(
                "the local cluster's controllers are not running", "start it first: kctl local up"
            )
        brokers = cluster.brokers
        nid = max((b.id for b in brokers), default=0) + 1
        if nid >= CONTROLLER_BASE_ID:
            raise KctlError(f"no broker id left below the controllers' {CONTROLLER_BASE_ID}")
        used = {n.port for n in cluster.nodes}
        port = max((b.port for b in brokers), default=0) + 1
        if port in used or not 0 < port < 65536 or not port_free(HOST, port):
            port = next(p for p in free_ports(8, HOST) if p not in used)
        home = Path(cluster.directory) / f"node-{nid}"
        if home.exists():  # left by a broker that never started: its data is nobody's
            shutil.rmtree(home)
        count = len(brokers[0].log_dirs) if brokers else 1
        dirs = [str(home / f"data-{k}") for k in range(count)]
        node = Node(nid, "broker", port, str(home), dirs, rack=rack or rack_of(nid, cluster.racks))
        cluster.nodes.append(node)
        _write_node_config(cluster, node, len(brokers))
        on_progress(
            f"adding broker {nid} on {node.address}"
            + (f" in rack {node.rack}" if node.rack else "")
        )
        try:
            _format_storage(cluster, [node])
            _spawn(cluster, node)
            write_state(cluster)
            wait_ready(cluster, {nid}, wait, live_brokers)
        except BaseException:
            kill_nodes(cluster, [node])
            cluster.nodes.remove(node)
            write_state(cluster)  # its directory stays for its node.log; a retry replaces it
            raise
        return node


def require_state(state: Path) -> Cluster:
    cluster = read_state(state)
    if cluster is None:
        raise KctlError("no local Kafka cluster", "start one with: kctl local up --engine kafka")
    return cluster


def status_rows(cluster: Cluster) -> list[dict[str, object]]:
    return [
        {
            "id": n.id,
            "role": n.role,
            "address": n.address,
            "pid": n.pid if node_alive(n) else None,
            "alive": node_alive(n),
            "rack": n.rack,
            "log_dirs": len(n.log_dirs),
            "log": n.log,
        }
        for n in sorted(cluster.nodes, key=lambda n: (n.role != "broker", n.id))
    ]
