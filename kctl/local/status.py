"""What ``kctl local`` reports, pure: the documents of ``up``, ``status`` and ``fetch`` and the
lines people read on stderr. The node rows of a Kafka cluster come from
:func:`kctl.local.kafka_cluster.status_rows` (which asks the processes whether they live); the
Tansu broker's state from :func:`kctl.local.broker.status`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kctl.local.broker import BrokerInfo
    from kctl.local.kafka_cluster import Cluster

Row = dict[str, Any]


def kafka_up_doc(cluster: Cluster, profile: str | None, nodes: list[Row]) -> Row:
    """``local up -o json`` for the Kafka engine; ``profile``: the admin profile of a secured
    cluster."""
    return {
        "bootstrap": cluster.bootstrap,
        "engine": "kafka",
        "version": cluster.version,
        "cluster_id": cluster.cluster_id,
        "security": cluster.security,
        "quorum": cluster.quorum,
        "profile": profile,
        "nodes": nodes,
    }


def kafka_up_note(cluster: Cluster, started: bool, why: str, profile: str | None) -> str:
    if not started:
        return f"local Kafka cluster already running ({cluster.directory})"
    secured = "" if profile is None else f", {cluster.security} (profile {profile!r})"
    return (
        f"Apache Kafka {cluster.version} started ({why}): {len(cluster.brokers)} brokers, "
        f"{len(cluster.controllers)} controller(s){secured}, data in {cluster.directory}"
    )


def tansu_up_doc(info: BrokerInfo) -> Row:
    return {"bootstrap": info.bootstrap, "pid": info.pid, "engine": "tansu"}


def tansu_up_note(info: BrokerInfo, started: bool, why: str) -> str:
    if started:
        return f"local broker started: Tansu ({why}; pid {info.pid}, log {info.log})"
    return f"local broker already running (pid {info.pid})"


def kafka_status_doc(cluster: Cluster, nodes: list[Row]) -> Row:
    """``local status -o json`` for a recorded Kafka cluster: running while any node lives."""
    return {
        "engine": "kafka",
        "version": cluster.version,
        "cluster_id": cluster.cluster_id,
        "bootstrap": cluster.bootstrap,
        "running": any(r["alive"] for r in nodes),
        "nodes": nodes,
    }


def none_running_warning(directory: str | Path) -> str:
    return (
        f"kctl: warning: the local Kafka cluster in {directory} is recorded but "
        "none of its nodes runs (start it again: kctl local up; forget it: "
        "kctl local down --purge)"
    )


def key_value_rows(data: Row) -> list[Row]:
    """The Tansu broker's status as key/value rows (the table form)."""
    return [{"key": k, "value": v} for k, v in data.items()]


def tansu_status_doc(data: Row) -> Row:
    return {**data, "engine": "tansu"}


def down_note(cluster_directory: str | None, purge: bool, tansu_stopped: bool) -> str:
    """After ``local down``: the Kafka cluster (its directory, None when there was none) or
    else the Tansu broker."""
    if cluster_directory is not None:
        return "local Kafka cluster stopped" + (
            " and its data deleted" if purge else f" (data kept in {cluster_directory})"
        )
    return "local broker stopped" if tansu_stopped else "no local broker was running"


_PAST = {"stop": "stopped", "kill": "killed (SIGKILL)", "start": "started and registered"}


def node_note(verb: str, broker_id: int, done: bool) -> str:
    """After ``stop-broker``, ``kill-broker`` or ``start-broker``; ``done``: False when the
    broker already was in that state."""
    if done:
        return f"broker {broker_id} {_PAST[verb]}"
    return f"broker {broker_id} was already " + ("running" if verb == "start" else "stopped")


def fetch_doc(version: str, libs: Path, source: str, jars: list[str]) -> Row:
    """``local fetch -o json``: where Kafka's jars are and where they came from."""
    return {"version": version, "libs": str(libs), "source": source, "jars": jars}


def registry_row(reg: Row) -> Row:
    """The Schema Registry as a row of ``local status``'s node table."""
    return {
        "id": None,
        "role": "schema-registry",
        "address": reg.get("url"),
        "pid": reg.get("pid"),
        "alive": bool(reg.get("running")) and bool(reg.get("answering")),
        "log_dirs": None,
    }


def registry_fields(reg: Row) -> Row:
    """The Schema Registry as keys of the Tansu broker's status."""
    return {
        "schema_registry": reg.get("url"),
        "schema_registry_running": bool(reg.get("running")) and bool(reg.get("answering")),
        "schema_registry_pid": reg.get("pid"),
    }
