"""kctl local: a local cluster on loopback — real Apache Kafka (KRaft, N brokers, from Maven
Central) or Tansu (a pip-only Kafka-protocol broker) — for trying kctl, rehearsing failures, and
for the tests."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from kctl.commands._common import example, note, output_view
from kctl.errors import EXIT_FAILED, UsageError
from kctl.formatters import Output, cols, emit
from kctl.parsing import bounded

app = typer.Typer(
    help="Start, inspect and stop a local cluster on loopback (Apache Kafka or Tansu); stop, "
    "kill and restart single brokers to rehearse failures.",
    no_args_is_help=True,
)

if TYPE_CHECKING:
    from kctl.local.kafka_cluster import Cluster

ENGINES = ("auto", "kafka", "tansu")


def _state() -> Path:
    from kctl.local.broker import state_dir

    return state_dir()


def _choose_engine(engine: str, version: str | None) -> tuple[str, str]:
    """(engine, why) for ``--engine auto``: Kafka when Java 17 and its jars can be had."""
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r}", "choose kafka, tansu or auto")
    if engine != "auto":
        return engine, "asked for with --engine"
    from kctl.local.kafka_jars import available_without_fetching

    why = available_without_fetching(version)
    if why:
        return "kafka", why
    return "tansu", "Java 17 with Maven, the jar cache or KAFKA_HOME is not available"


@app.command(
    "up",
    epilog=example(
        "kctl local up",
        "kctl local up --engine kafka --brokers 3 --log-dirs 2",
        "export KCTL_BOOTSTRAP_SERVERS=$(kctl local up --no-headers)",
        "kctl local up --engine tansu --port 19092",
        "kctl local up --engine kafka --brokers 1 --security sasl_ssl   # then: kctl --profile "
        "local-admin users list",
        "kctl local up --engine kafka --controllers 3 --quorum dynamic",
    ),
)
def up(
    ctx: typer.Context,
    engine: str = typer.Option(
        "auto",
        "--engine",
        help="kafka (Apache Kafka, needs Java 17), tansu (pip only), or auto: kafka when Java 17 "
        "and the jars (KAFKA_HOME, cache or Maven) are there, else tansu.",
    ),
    port: int = typer.Option(
        9092,
        "--port",
        help="First broker port on 127.0.0.1 (brokers on PORT.., controllers on PORT+100..); "
        "0 picks free ports.",
    ),
    brokers: int = typer.Option(
        3,
        "--brokers",
        help="Number of Kafka brokers (ids 1..N, N <= 32).",
        callback=bounded("--brokers", 1, 32),
    ),
    controllers: int = typer.Option(
        1,
        "--controllers",
        help="Number of KRaft controllers (separate processes, ids 1000..; 1..9).",
        callback=bounded("--controllers", 1, 9),
    ),
    log_dirs: int = typer.Option(
        2,
        "--log-dirs",
        help="Data directories per Kafka broker (1..16).",
        callback=bounded("--log-dirs", 1, 16),
    ),
    kafka_version: str | None = typer.Option(
        None, "--kafka-version", help="Apache Kafka version (default: the newest kctl pins)."
    ),
    kafka_home: str | None = typer.Option(
        None,
        "--kafka-home",
        help="An unpacked Apache Kafka distribution to run instead of the cache/Maven "
        "(default: $KAFKA_HOME).",
    ),
    wait: float = typer.Option(
        180.0,
        "--wait",
        help="Seconds to wait until every broker is registered.",
        callback=bounded("--wait", 1, 3600),
    ),
    security_mode: str | None = typer.Option(
        None,
        "--security",
        help="Kafka engine: plaintext (default), sasl_plaintext, sasl_ssl (SCRAM-SHA-256/512) or "
        "ssl (client certificates). A secured cluster gets a new CA and certificates, an admin "
        "super user, StandardAuthorizer (nothing allowed without an ACL) and the profile "
        "--admin-profile. Default: the running cluster's mode, else plaintext.",
    ),
    quorum: str = typer.Option(
        "static",
        "--quorum",
        help="Kafka engine: static (controller.quorum.voters) or dynamic (Kafka 3.9+: every "
        "controller an initial voter, and controllers can be removed and added again with "
        "kctl quorum remove-controller / add-controller).",
    ),
    admin_profile: str = typer.Option(
        "local-admin",
        "--admin-profile",
        help="Name of the profile written for a secured cluster's admin (replaced on a new "
        "cluster; secrets as file: references).",
    ),
) -> None:
    """Start a local cluster in the background and print its bootstrap address."""
    import os

    if not 0 <= port < 65536:
        raise UsageError(f"--port {port} is out of range", "0..65535")
    chosen, why = _choose_engine(engine, kafka_version)
    if security_mode is not None:
        from kctl.local.security import check_mode

        security_mode = check_mode(security_mode)
        if security_mode != "plaintext" and chosen == "tansu":
            raise UsageError(
                f"--security {security_mode} needs the Kafka engine",
                "Tansu has no authentication or authorizer here; use --engine kafka",
            )
    if chosen == "tansu":
        from kctl.local.broker import free_port

        _up_tansu(ctx, port or free_port(), wait, why)  # 0: a free port, as for Kafka
        return
    from kctl.local import broker as tansu
    from kctl.local import kafka_cluster

    state = _state()
    if tansu.read_info(state) and tansu._alive(tansu.read_info(state).pid):  # type: ignore[union-attr]
        raise UsageError("a local Tansu broker is running", "stop it first: kctl local down")
    if kafka_home is None and os.environ.get("KAFKA_HOME"):
        kafka_home = os.environ["KAFKA_HOME"]
    cluster, started = kafka_cluster.start(
        state,
        brokers=brokers,
        controllers=controllers,
        log_dirs=log_dirs,
        port=port,
        version=kafka_version,
        kafka_home=kafka_home,
        wait=wait,
        on_progress=note,
        security_mode=security_mode,
        quorum=quorum,
    )
    profile = None
    if cluster.security != "plaintext":
        profile = admin_profile
        if started:
            _write_admin_profile(cluster, admin_profile)
    if started:
        secured = "" if profile is None else f", {cluster.security} (profile {profile!r})"
        note(
            f"Apache Kafka {cluster.version} started ({why}): {len(cluster.brokers)} brokers, "
            f"{len(cluster.controllers)} controller(s){secured}, data in {cluster.directory}"
        )
    else:
        note(f"local Kafka cluster already running ({cluster.directory})")
    emit(
        Output(
            [{"bootstrap": cluster.bootstrap}],
            cols("bootstrap"),
            doc={
                "bootstrap": cluster.bootstrap,
                "engine": "kafka",
                "version": cluster.version,
                "cluster_id": cluster.cluster_id,
                "security": cluster.security,
                "quorum": cluster.quorum,
                "profile": profile,
                "nodes": kafka_cluster.status_rows(cluster),
            },
        ),
        output_view(ctx),
    )


def _write_admin_profile(cluster: Cluster, name: str) -> None:
    """The secured cluster's admin profile, saved (replacing one of that name); the current
    profile only when there is none."""
    from kctl import config
    from kctl.commands.profile import check_name
    from kctl.local import security

    check_name(name)
    data = security.admin_profile(cluster.security, cluster.bootstrap, cluster.material)
    profile = config.profile_from_dict(name, data, "the local cluster")
    with config.edit() as pfile:
        pfile.profiles[name] = profile
        if pfile.current is None:
            pfile.current = name


def _up_tansu(ctx: typer.Context, port: int, wait: float, why: str) -> None:
    from kctl.local import broker, kafka_cluster

    if kafka_cluster.read_state(_state()) is not None:
        raise UsageError("a local Kafka cluster is recorded", "stop it first: kctl local down")
    info, started = broker.start(port=port, wait=wait)
    if started:
        note(f"local broker started: Tansu ({why}; pid {info.pid}, log {info.log})")
    else:
        note(f"local broker already running (pid {info.pid})")
    emit(
        Output(
            [{"bootstrap": info.bootstrap}],
            cols("bootstrap"),
            doc={"bootstrap": info.bootstrap, "pid": info.pid, "engine": "tansu"},
        ),
        output_view(ctx),
    )


@app.command("status", epilog=example("kctl local status", "kctl local status -o json"))
def status(ctx: typer.Context) -> None:
    """Every node of the local cluster: id, role, address, pid, alive. Exit 1 if none runs."""
    from kctl.local import broker, kafka_cluster

    cluster = kafka_cluster.read_state(_state())
    if cluster is not None:
        rows = kafka_cluster.status_rows(cluster)
        emit(
            Output(
                rows,
                cols("id:>", "role", "address", "pid:>", "alive", "log_dirs:>"),
                doc={
                    "engine": "kafka",
                    "version": cluster.version,
                    "cluster_id": cluster.cluster_id,
                    "bootstrap": cluster.bootstrap,
                    "running": any(r["alive"] for r in rows),
                    "nodes": rows,
                },
            ),
            output_view(ctx),
        )
        if not any(r["alive"] for r in rows):
            note(
                f"kctl: warning: the local Kafka cluster in {cluster.directory} is recorded but "
                "none of its nodes runs (start it again: kctl local up; forget it: "
                "kctl local down --purge)"
            )
            raise typer.Exit(EXIT_FAILED)
        return
    data = broker.status()
    rows = [{"key": k, "value": v} for k, v in data.items()]
    emit(Output(rows, cols("key", "value"), doc={**data, "engine": "tansu"}), output_view(ctx))
    if not data["running"]:
        raise typer.Exit(EXIT_FAILED)


@app.command("down", epilog=example("kctl local down", "kctl local down --purge"))
def down(
    purge: bool = typer.Option(
        False, "--purge", help="Also delete the Kafka cluster's data (the next up starts afresh)."
    ),
) -> None:
    """Stop the local cluster (Kafka: brokers, then controllers; data kept unless --purge)."""
    from kctl.local import broker, kafka_cluster

    state = _state()
    cluster = kafka_cluster.stop(state, remove=purge)
    if cluster is not None:
        note(
            "local Kafka cluster stopped"
            + (" and its data deleted" if purge else f" (data kept in {cluster.directory})")
        )
        return
    info = broker.stop()
    note("local broker stopped" if info else "no local broker was running")


def _node_op(verb: str, broker_id: int) -> None:
    from kctl.local import kafka_cluster

    state = _state()
    if verb == "stop":
        done = kafka_cluster.stop_broker(state, broker_id)
    elif verb == "kill":
        done = kafka_cluster.kill_broker(state, broker_id)
    else:
        done = kafka_cluster.start_broker(state, broker_id)
    past = {"stop": "stopped", "kill": "killed (SIGKILL)", "start": "started and registered"}
    note(
        f"broker {broker_id} {past[verb]}"
        if done
        else f"broker {broker_id} was already " + ("running" if verb == "start" else "stopped")
    )


@app.command(
    "stop-broker",
    epilog=example("kctl local stop-broker 2", "kctl topics describe --under-replicated"),
)
def stop_broker(broker_id: int = typer.Argument(..., help="Broker id (1..N).")) -> None:
    """Stop one broker with a controlled shutdown (SIGTERM): leaders move away first."""
    _node_op("stop", broker_id)


@app.command("kill-broker", epilog=example("kctl local kill-broker 3"))
def kill_broker(broker_id: int = typer.Argument(..., help="Broker id (1..N).")) -> None:
    """Kill one broker with SIGKILL, as a power cut would: no controlled shutdown."""
    _node_op("kill", broker_id)


@app.command("start-broker", epilog=example("kctl local start-broker 2"))
def start_broker(broker_id: int = typer.Argument(..., help="Broker id (1..N).")) -> None:
    """Start a stopped or killed broker on its data; waits until it is registered again."""
    _node_op("start", broker_id)


@app.command(
    "fetch",
    epilog=example("kctl local fetch", "kctl local fetch --kafka-version 3.9.1 -o json"),
)
def fetch(
    ctx: typer.Context,
    kafka_version: str | None = typer.Option(
        None, "--kafka-version", help="Apache Kafka version (default: the newest kctl pins)."
    ),
) -> None:
    """Resolve Apache Kafka's jars (broker and tools) into kctl's cache with Maven, ahead of
    `local up` (e.g. before going offline); prints where they are."""
    from kctl.local.kafka_jars import DEFAULT_VERSION, cached, check_version, resolve_with_maven

    version = check_version(kafka_version or DEFAULT_VERSION)
    runtime = cached(version)
    if runtime is None:
        note(f"resolving Apache Kafka {version} from Maven Central with mvn")
        runtime = resolve_with_maven(version)
    jars = sorted(p.name for p in runtime.libs.glob("*.jar"))
    note(f"Apache Kafka {version}: {len(jars)} jars ({runtime.source})")
    emit(
        Output(
            [{"version": version, "libs": str(runtime.libs)}],
            cols("version", "libs"),
            doc={
                "version": version,
                "libs": str(runtime.libs),
                "source": runtime.source,
                "jars": jars,
            },
        ),
        output_view(ctx),
    )
