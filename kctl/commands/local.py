"""kctl local: a local cluster on loopback — real Apache Kafka (KRaft, N brokers, from Maven
Central) or Tansu (a pip-only Kafka-protocol broker) — for trying kctl, rehearsing failures, and
for the tests."""

from __future__ import annotations

from pathlib import Path

import typer

from kctl.commands._common import example, note, output_view
from kctl.errors import EXIT_FAILED
from kctl.formatters import Output, cols, emit

app = typer.Typer(
    help="Start, inspect and stop a local cluster on loopback (Apache Kafka or Tansu); stop, "
    "kill and restart single brokers to rehearse failures.",
    no_args_is_help=True,
)


def _state() -> Path:
    from kctl.local.broker import state_dir

    return state_dir()


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
        "kctl local up --schema-registry   # also Apicurio Registry on 127.0.0.1:8081",
        "kctl local up --schema-registry --registry-version 3.3.3   # Apicurio 3 (Java 21+)",
        "kctl local up --engine kafka --brokers 3 --racks 3   # then: kctl local add-broker",
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
        min=1,
        max=32,
    ),
    controllers: int = typer.Option(
        1,
        "--controllers",
        help="Number of KRaft controllers (separate processes, ids 1000..; 1..9).",
        min=1,
        max=9,
    ),
    log_dirs: int = typer.Option(
        2,
        "--log-dirs",
        help="Data directories per Kafka broker (1..16).",
        min=1,
        max=16,
    ),
    racks: int = typer.Option(
        0,
        "--racks",
        help="Kafka engine, a new cluster: put the brokers in R racks round-robin (broker.rack "
        "of broker i is rack-((i-1) % R + 1)); 0: no racks.",
        min=0,
        max=32,
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
        min=1,
        max=3600,
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
    schema_registry: bool = typer.Option(
        False,
        "--schema-registry",
        help="Also start a Schema Registry (Apicurio Registry 2.6 on Java 17, or 3.3 on Java 21+, "
        "in memory) on 127.0.0.1; the profile written carries its URL (a plaintext cluster's: "
        "'local').",
    ),
    registry_port: int = typer.Option(
        8081,
        "--registry-port",
        help="The Schema Registry's port on 127.0.0.1 (0: a free one).",
        min=0,
        max=65535,
    ),
    registry_version: str | None = typer.Option(
        None,
        "--registry-version",
        help="With --schema-registry: Apicurio Registry 2.6.13.Final (the default) or 3.3.3 "
        "(needs Java 21+: JAVA_HOME, the java on PATH or a JDK under /usr/lib/jvm).",
    ),
) -> None:
    """Start a local cluster in the background and print its bootstrap address."""
    import os

    from kctl.local import kafka_cluster, security
    from kctl.local.engine import refuse_other_engine, resolve_kafka_home, up_choice
    from kctl.local.status import kafka_up_doc, kafka_up_note

    chosen, why, security_mode = up_choice(engine, port, security_mode, kafka_version)
    if registry_version is not None and not schema_registry:
        from kctl.errors import UsageError

        raise UsageError("--registry-version needs --schema-registry")
    if schema_registry:
        _check_registry(registry_port, registry_version)
    if chosen == "tansu":
        _up_tansu(
            ctx, port, wait, why, registry_port if schema_registry else None, registry_version
        )
        return
    state = _state()
    refuse_other_engine(state, "kafka")
    cluster, started = kafka_cluster.start(
        state,
        brokers=brokers,
        controllers=controllers,
        log_dirs=log_dirs,
        port=port,
        version=kafka_version,
        kafka_home=resolve_kafka_home(kafka_home, os.environ),
        wait=wait,
        on_progress=note,
        security_mode=security_mode,
        quorum=quorum,
        racks=racks,
    )
    if racks and cluster.racks != racks:
        note(
            f"kctl: warning: --racks {racks} is for a new cluster; this one keeps "
            + (f"{cluster.racks} racks" if cluster.racks else "no racks")
            + " (kctl local down --purge first to change them)"
        )
    profile = None if cluster.security == "plaintext" else admin_profile
    if started and profile is not None:
        from kctl.commands.profile import check_name

        security.save_admin_profile(
            check_name(profile), cluster.security, cluster.bootstrap, cluster.material
        )
    note(kafka_up_note(cluster, started, why, profile))
    registry_url = None
    if schema_registry:
        registry_url = _up_registry(registry_port, registry_version)
        profile = _registry_profile(profile or LOCAL_PROFILE, cluster.bootstrap, registry_url)
    doc = kafka_up_doc(cluster, profile, kafka_cluster.status_rows(cluster))
    if registry_url:
        doc["schema_registry"] = registry_url
    emit(Output([{"bootstrap": cluster.bootstrap}], cols("bootstrap"), doc=doc), output_view(ctx))


LOCAL_PROFILE = "local"  # the profile a plaintext cluster with a Schema Registry gets


def _check_registry(port: int, version: str | None) -> None:
    """Before the cluster starts: the version known, Java for it, and the registry's port free
    (unless ours runs on it already: then it must be of the version asked for, if one was)."""
    from kctl.errors import KctlError
    from kctl.local import registry
    from kctl.local.broker import port_free

    wanted = registry.flavour(version).version
    info = registry.read_info(_state())
    if info is not None and registry.alive(info.pid):
        if version is not None and info.version != wanted:
            raise KctlError(
                f"a Schema Registry of another version runs: Apicurio Registry {info.version}, "
                f"not {wanted}",
                "kctl local down stops it (its schemas are in memory: they go with it)",
            )
        return
    registry.require_java(wanted)
    if port and not port_free(registry.HOST, port):
        raise KctlError(
            f"cannot start the Schema Registry on {registry.HOST}:{port}: the port is in use",
            "give another with --registry-port N (0: a free one)",
        )


def _up_registry(port: int, version: str | None) -> str:
    """Start the local Schema Registry (or find it running); its URL."""
    from kctl.local import registry

    info = registry.start(_state(), port, on_progress=note, version=version)
    if info.started:
        note(f"Schema Registry (Apicurio Registry {info.version}) started: {info.url} "
             f"(pid {info.pid}, log {info.log})")  # fmt: skip
    else:
        note(f"Schema Registry (Apicurio Registry {info.version}) already running: {info.url} "
             f"(pid {info.pid})")  # fmt: skip
    return info.url


def _registry_profile(name: str, bootstrap: str, url: str) -> str:
    """The profile ``name`` carries the registry: the secured cluster's admin profile gets the
    block; a plaintext cluster gets (or replaces) the profile 'local' of its bootstrap and the
    registry. The current profile is set only when there is none."""
    from kctl import config
    from kctl.commands.profile import check_name

    check_name(name)
    with config.edit() as pfile:
        existing = pfile.profiles.get(name)
        if existing is not None and name != LOCAL_PROFILE:
            existing.schema_registry = config.SchemaRegistry(url=url)
        else:
            pfile.profiles[name] = config.profile_from_dict(
                name,
                {"bootstrap_servers": bootstrap, "schema_registry": {"url": url}},
                "the local cluster",
            )
        if pfile.current is None:
            pfile.current = name
    note(f"profile {name!r}: bootstrap {bootstrap}, schema_registry {url}")
    return name


def _up_tansu(
    ctx: typer.Context,
    port: int,
    wait: float,
    why: str,
    registry_port: int | None = None,
    registry_version: str | None = None,
) -> None:
    from kctl.local import broker
    from kctl.local.engine import refuse_other_engine
    from kctl.local.status import tansu_up_doc, tansu_up_note

    port = port or broker.free_port()  # 0: a free port, as for Kafka
    refuse_other_engine(_state(), "tansu")
    info, started = broker.start(port=port, wait=wait)
    note(tansu_up_note(info, started, why))
    doc = tansu_up_doc(info)
    if registry_port is not None:
        url = _up_registry(registry_port, registry_version)
        doc["profile"] = _registry_profile(LOCAL_PROFILE, info.bootstrap, url)
        doc["schema_registry"] = url
    emit(Output([{"bootstrap": info.bootstrap}], cols("bootstrap"), doc=doc), output_view(ctx))


@app.command("status", epilog=example("kctl local status", "kctl local status -o json"))
def status(ctx: typer.Context) -> None:
    """Every node of the local cluster: id, role, address, pid, alive; and the Schema Registry
    when `local up --schema-registry` started one. Exit 1 if no broker runs."""
    from kctl.local import broker, kafka_cluster, registry
    from kctl.local import status as show

    state = _state()
    reg = registry.status(state) if registry.read_info(state) is not None else None
    cluster = kafka_cluster.read_state(state)
    if cluster is not None:
        rows = kafka_cluster.status_rows(cluster)
        doc = show.kafka_status_doc(cluster, rows)
        if reg is not None:
            doc["schema_registry"] = reg
            rows = [*rows, show.registry_row(reg)]
        node_cols = cols("id:>", "role", "address", "pid:>", "alive", "rack", "log_dirs:>")
        emit(Output(rows, node_cols, doc=doc), output_view(ctx))
        if not doc["running"]:
            note(show.none_running_warning(cluster.directory))
            raise typer.Exit(EXIT_FAILED)
        return
    data = broker.status()
    doc = show.tansu_status_doc(data)
    if reg is not None:
        doc["schema_registry"] = reg
    rows = show.key_value_rows({**data, **(show.registry_fields(reg) if reg else {})})
    emit(Output(rows, cols("key", "value"), doc=doc), output_view(ctx))
    if not data["running"]:
        raise typer.Exit(EXIT_FAILED)


@app.command("down", epilog=example("kctl local down", "kctl local down --purge"))
def down(
    purge: bool = typer.Option(
        False, "--purge", help="Also delete the Kafka cluster's data (the next up starts afresh)."
    ),
) -> None:
    """Stop the local cluster (Kafka: brokers, then controllers; data kept unless --purge) and
    the Schema Registry when one runs (its schemas are in memory: they go with it)."""
    from kctl.local import broker, kafka_cluster, registry
    from kctl.local.status import down_note

    stopped = registry.stop(_state())
    if stopped is not None:
        note(f"Schema Registry stopped ({stopped.url})")
    cluster = kafka_cluster.stop(_state(), remove=purge)
    if cluster is not None:
        note(down_note(cluster.directory, purge, tansu_stopped=False))
        return
    note(down_note(None, purge, tansu_stopped=broker.stop() is not None))


def _node_op(verb: str, broker_id: int) -> None:
    from kctl.local import kafka_cluster
    from kctl.local.status import node_note

    ops = {"stop": kafka_cluster.stop_broker, "kill": kafka_cluster.kill_broker}
    done = ops.get(verb, kafka_cluster.start_broker)(_state(), broker_id)
    note(node_note(verb, broker_id, done))


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
    "add-broker",
    epilog=example(
        "kctl local add-broker",
        "kctl local add-broker --rack rack-2 -o json",
        "kctl partitions reassign generate --add-broker 4   # then give it its share",
    ),
)
def add_broker(
    ctx: typer.Context,
    rack: str | None = typer.Option(
        None,
        "--rack",
        help="Its broker.rack (default: the next of the round-robin of `local up --racks`, "
        "none without racks).",
    ),
    wait: float = typer.Option(
        180.0, "--wait", help="Seconds to wait until it is registered.", min=1, max=3600
    ),
) -> None:
    """Add a broker to the running local Kafka cluster (next id, next free port, its own log
    dirs, formatted with the cluster's id) and wait until it is registered and unfenced. It
    holds no partition until a reassignment gives it some."""
    from kctl.local import kafka_cluster

    if rack is not None and not rack.strip():
        from kctl.errors import UsageError

        raise UsageError("--rack must not be empty")
    state = _state()
    node = kafka_cluster.add_broker(state, rack=rack, wait=wait, on_progress=note)
    cluster = kafka_cluster.require_state(state)
    note(
        f"broker {node.id} added on {node.address}"
        + (f" in rack {node.rack}" if node.rack else "")
        + f": {len(cluster.brokers)} brokers"
    )
    row = next(r for r in kafka_cluster.status_rows(cluster) if r["id"] == node.id)
    doc = {**row, "bootstrap": cluster.bootstrap}
    emit(
        Output([row], cols("id:>", "role", "address", "pid:>", "alive", "rack", "log_dirs:>"),
               doc=doc),
        output_view(ctx),
    )  # fmt: skip


@app.command(
    "fetch",
    epilog=example(
        "kctl local fetch",
        "kctl local fetch --kafka-version 3.9.1 -o json",
        "kctl local fetch --schema-registry   # also Apicurio Registry (142 MB)",
        "kctl local fetch --schema-registry --registry-version 3.3.3",
    ),
)
def fetch(
    ctx: typer.Context,
    kafka_version: str | None = typer.Option(
        None, "--kafka-version", help="Apache Kafka version (default: the newest kctl pins)."
    ),
    schema_registry: bool = typer.Option(
        False,
        "--schema-registry",
        help="Also resolve the Schema Registry that `local up --schema-registry` runs "
        "(Apicurio Registry 2.6.13.Final, a 142 MB tar.gz unpacked into the cache).",
    ),
    registry_version: str | None = typer.Option(
        None,
        "--registry-version",
        help="With --schema-registry: the Apicurio Registry version to resolve, 2.6.13.Final "
        "(the default) or 3.3.3 (159 MB).",
    ),
) -> None:
    """Resolve Apache Kafka's jars (broker and tools) into kctl's cache with Maven, ahead of
    `local up` (e.g. before going offline); prints where they are."""
    from kctl.local.kafka_jars import DEFAULT_VERSION, cached, check_version, resolve_with_maven
    from kctl.local.status import fetch_doc

    if registry_version is not None:
        if not schema_registry:
            from kctl.errors import UsageError

            raise UsageError("--registry-version needs --schema-registry")
        from kctl.local import registry

        registry.flavour(registry_version)  # a version kctl runs, before anything is fetched
    version = check_version(kafka_version or DEFAULT_VERSION)
    runtime = cached(version)
    if runtime is None:
        note(f"resolving Apache Kafka {version} from Maven Central with mvn")
        runtime = resolve_with_maven(version)
    jars = sorted(p.name for p in runtime.libs.glob("*.jar"))
    note(f"Apache Kafka {version}: {len(jars)} jars ({runtime.source})")
    doc = fetch_doc(version, runtime.libs, runtime.source, jars)
    if schema_registry:
        from kctl.local import registry

        app = registry.locate(note, registry_version)
        note(f"Apicurio Registry {app.version}: {app.runner} ({app.source})")
        doc["schema_registry"] = {
            "version": app.version,
            "home": str(app.home),
            "runner": str(app.runner),
            "source": app.source,
        }
    emit(
        Output([{"version": version, "libs": str(runtime.libs)}], cols("version", "libs"), doc=doc),
        output_view(ctx),
    )
