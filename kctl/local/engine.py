"""Which engine ``kctl local up`` runs, and the checks of its options before anything starts:
Apache Kafka when Java 17 and its jars can be had (``--engine auto``), else Tansu; a port on
loopback; security only on the Kafka engine; one engine's cluster at a time in a state dir.

:func:`choose_engine` and :func:`up_choice` are pure but for the probe of Java and the jars,
which they take as an argument."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from kctl.errors import UsageError

ENGINES = ("auto", "kafka", "tansu")

Probe = Callable[[str | None], str | None]  # Kafka version -> why the Kafka engine can run, or None


def _available(version: str | None) -> str | None:
    from kctl.local.kafka_jars import available_without_fetching

    return available_without_fetching(version)


def choose_engine(engine: str, version: str | None, probe: Probe = _available) -> tuple[str, str]:
    """(engine, why) for ``--engine``; ``auto`` is Kafka when ``probe`` says why it can run."""
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r}", "choose kafka, tansu or auto")
    if engine != "auto":
        return engine, "asked for with --engine"
    why = probe(version)
    if why:
        return "kafka", why
    return "tansu", "Java 17 with Maven, the jar cache or KAFKA_HOME is not available"


def up_choice(
    engine: str,
    port: int,
    security: str | None,
    version: str | None,
    probe: Probe = _available,
) -> tuple[str, str, str | None]:
    """(engine, why, security mode or None) for ``kctl local up``, checked in this order: the
    port (0..65535), the engine, the security mode (a secured cluster needs Kafka)."""
    from kctl.local.security import check_mode

    if not 0 <= port < 65536:
        raise UsageError(f"--port {port} is out of range", "0..65535")
    chosen, why = choose_engine(engine, version, probe)
    if security is not None:
        security = check_mode(security)
        if security != "plaintext" and chosen == "tansu":
            raise UsageError(
                f"--security {security} needs the Kafka engine",
                "Tansu has no authentication or authorizer here; use --engine kafka",
            )
    return chosen, why, security


def refuse_other_engine(state: Path, engine: str) -> None:
    """One local cluster per state dir: Tansu not while a Kafka cluster is recorded, Kafka not
    while a Tansu broker runs."""
    from kctl.local import broker, kafka_cluster

    if engine == "tansu":
        if kafka_cluster.read_state(state) is not None:
            raise UsageError("a local Kafka cluster is recorded", "stop it first: kctl local down")
        return
    info = broker.read_info(state)
    if info is not None and broker._alive(info.pid):
        raise UsageError("a local Tansu broker is running", "stop it first: kctl local down")


def resolve_kafka_home(given: str | None, environ: Mapping[str, str]) -> str | None:
    """``--kafka-home``, else a non-empty ``$KAFKA_HOME``, else None (kctl's cache or Maven)."""
    if given is None and environ.get("KAFKA_HOME"):
        return environ["KAFKA_HOME"]
    return given
