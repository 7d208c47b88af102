"""A corpus of real Kafka files for comparing ``kctl dump-segment`` with DumpLogSegments.

:func:`build` starts its own one-broker cluster (conftest's ``start_kafka_cluster``), writes
with librdkafka (every codec, idempotent and transactional producers with committed and
aborted transactions, a compacted topic the cleaner has run over, small segments), commits
offsets for a classic and a KIP-848 consumer group, changes topics, configs, ACLs, SCRAM
users and quotas (so ``__cluster_metadata`` holds those records and snapshots are taken),
stops the cluster and copies the files off its stopped nodes into ``dest``.

Runnable on its own to keep a corpus around while working on the decoders:
``python tests/dump_corpus.py /tmp/corpus``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")

BROKER_CONFIG = {
    # internal partitions: one each, so every record of a kind lands in one file
    "offsets.topic.num.partitions": "1",
    "transaction.state.log.num.partitions": "1",
    "transaction.state.log.min.isr": "1",
    "share.coordinator.state.topic.num.partitions": "1",
    # the cleaner runs at once over what can be cleaned
    "log.cleaner.backoff.ms": "200",
    "log.cleaner.min.compaction.lag.ms": "0",
    "log.cleaner.min.cleanable.ratio": "0.01",
    # KRaft snapshots after a few records
    "metadata.log.max.record.bytes.between.snapshots": "2000",
    "metadata.log.max.snapshot.interval.ms": "1000",
    # ACLs need an authorizer; everybody may do anything (ANONYMOUS is a super user)
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "super.users": "User:ANONYMOUS",
    "allow.everyone.if.no.acl.found": "true",
}


def _wait(cond: Callable[[], Any], what: str, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.2)


def _create(admin: Any, name: str, config: dict[str, str], partitions: int = 1) -> None:
    from confluent_kafka.admin import NewTopic

    fs = admin.create_topics([NewTopic(name, partitions, 1, config=config)])
    fs[name].result(30)


def _produce(bootstrap: str, topic: str, n: int, size: int, conf: dict[str, Any]) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "log_level": 0, **conf})
    for i in range(n):
        if i and i % (n // 3) == 0:  # segment.ms: a new segment for each third
            assert p.flush(60) == 0
            time.sleep(0.4)
        # headers in the first third only: the rest is what the text fast path takes
        headers = [("h1", b"v"), ("trace", str(i).encode())] if i % 3 == 0 and i < n // 3 else None
        key = None if i % 5 == 0 else f"key-{i % 17}".encode()
        p.produce(topic, value=(f"value-{i}-".encode() * size)[:size], key=key, headers=headers)
        if i % 100 == 99:  # several batches in every segment
            assert p.flush(60) == 0
    assert p.flush(60) == 0


def _transactions(bootstrap: str, topic: str) -> None:
    from confluent_kafka import Producer

    p = Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": "corpus-txn",
            "compression.type": "lz4",
        }
    )
    p.init_transactions(60)
    for round_ in range(6):
        p.begin_transaction()
        for i in range(20):
            p.produce(topic, key=f"t{i}".encode(), value=f"txn-{round_}-{i}".encode())
        assert p.flush(60) == 0  # on the broker before the marker: aborted data in .txnindex
        if round_ % 2:
            p.abort_transaction(60)
        else:
            p.commit_transaction(60)


def _compacted(bootstrap: str, admin: Any, topic: str) -> None:
    from confluent_kafka import Producer

    _create(
        admin,
        topic,
        {
            "cleanup.policy": "compact",
            "segment.ms": "300",
            "min.cleanable.dirty.ratio": "0.01",
            "delete.retention.ms": "86400000",
            "min.compaction.lag.ms": "0",
        },
    )
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for round_ in range(4):
        for i in range(30):
            # tombstones in the last full round: nothing after them, so the cleaner keeps
            # them and sets the delete horizon of their batches
            value = None if (i % 7 == 0 and round_ == 3) else f"r{round_}-{i}".encode()
            p.produce(topic, key=f"k{i}".encode(), value=value)
        assert p.flush(30) == 0
        time.sleep(0.4)  # segment.ms: the next round starts a new segment
    # one more append rolls the last full segment so the cleaner may take it
    p.produce(topic, key=b"roll", value=b"x")
    assert p.flush(30) == 0


def _groups(bootstrap: str, topic: str) -> None:
    from confluent_kafka import Consumer

    for protocol in ("classic", "consumer"):
        conf = {
            "bootstrap.servers": bootstrap,
            "group.id": f"corpus-{protocol}",
            "group.protocol": protocol,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "log_level": 0,
        }
        if protocol == "classic":
            conf["session.timeout.ms"] = 6000
        c = Consumer(conf)
        c.subscribe([topic])
        got = 0
        deadline = time.monotonic() + 90
        last = None
        errors: list[Any] = []
        while got < 1:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the {protocol} group read {got} records: {errors[-3:]}")
            m = c.poll(1.0)
            if m is not None and m.error():
                errors.append(m.error())
            elif m is not None:
                got += 1
                last = m
        assert last is not None
        c.commit(message=last, asynchronous=False)
        c.close()


def _share_group(bootstrap: str, topic: str, libs: str) -> None:
    """A KIP-932 share group reads a few records (Kafka's console share consumer): its state
    lands in __share_group_state."""
    java = shutil.which("java") or "java"
    cp = ["-Xmx192m", "-cp", f"{libs}/*"]
    subprocess.run(
        [java, *cp, "kafka.admin.ConfigCommand", "--bootstrap-server", bootstrap, "--alter",
         "--entity-type", "groups", "--entity-name", "corpus-share",
         "--add-config", "share.auto.offset.reset=earliest"],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    subprocess.run(
        [java, *cp, "org.apache.kafka.tools.consumer.ConsoleShareConsumer",
         "--bootstrap-server", bootstrap, "--topic", topic, "--group", "corpus-share",
         "--max-messages", "20", "--timeout-ms", "60000"],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip


def _metadata_changes(bootstrap: str, admin: Any, libs: str) -> None:
    from confluent_kafka.admin import (
        AclBinding,
        AclOperation,
        AclPermissionType,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ResourcePatternType,
        ResourceType,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    _create(admin, "corpus-meta", {"retention.ms": "3600000"}, partitions=3)
    res = ConfigResource(ResourceType.TOPIC, "corpus-meta")
    res.add_incremental_config(
        ConfigEntry("max.message.bytes", "200000", incremental_operation=AlterConfigOpType.SET)
    )
    admin.incremental_alter_configs([res])[res].result(30)
    acl = AclBinding(
        ResourceType.TOPIC,
        "corpus-meta",
        ResourcePatternType.LITERAL,
        "User:alice",
        "*",
        AclOperation.READ,
        AclPermissionType.ALLOW,
    )
    for f in admin.create_acls([acl]).values():
        f.result(30)
    up = UserScramCredentialUpsertion(
        "alice", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), b"secret", b"salt"
    )
    for f in admin.alter_user_scram_credentials([up]).values():
        f.result(30)
    java = shutil.which("java") or "java"
    subprocess.run(
        [java, "-Xmx128m", "-cp", f"{libs}/*", "kafka.admin.ConfigCommand",
         "--bootstrap-server", bootstrap, "--alter", "--add-config",
         "producer_byte_rate=1048576,consumer_byte_rate=2097152",
         "--entity-type", "users", "--entity-name", "alice"],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    admin.delete_topics(["corpus-meta"])["corpus-meta"].result(30)


CONTROLLER_CONFIG = {
    k: v
    for k, v in BROKER_CONFIG.items()
    if k.startswith("metadata.") or k in ("authorizer.class.name", "super.users")
}


def _reconfigure_controllers(cluster: Any) -> None:
    """Restart the controllers with :data:`CONTROLLER_CONFIG` (an authorizer for ACLs, early
    snapshots): conftest's cluster gives broker_config to brokers only."""
    from confluent_kafka.admin import AdminClient

    from kctl.local import kafka_cluster

    kafka_cluster.stop_nodes(cluster, cluster.controllers)
    for node in cluster.controllers:
        with open(node.config, "a") as fh:
            fh.write("".join(f"\n{k}={v}" for k, v in CONTROLLER_CONFIG.items()) + "\n")
        kafka_cluster._spawn(cluster, node)
    kafka_cluster.write_state(cluster)
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})

    def ready() -> bool:
        from confluent_kafka.admin import NewTopic

        fs = admin.create_topics([NewTopic("corpus-probe", 1, 1)], request_timeout=5)
        try:
            fs["corpus-probe"].result(10)
        except Exception as exc:
            return "TOPIC_ALREADY_EXISTS" in str(exc)
        return True

    _wait(ready, "the controller back", 120)


def build(state: Path, dest: Path, start: Callable[..., Any]) -> Path:
    """Build the corpus with a cluster from ``start(state, brokers, broker_config)``; copy its
    files into ``dest`` (one sub-directory per node). Returns ``dest``."""
    from confluent_kafka.admin import AdminClient

    from kctl.local import kafka_cluster

    cluster = start(state, 1, BROKER_CONFIG)
    try:
        _reconfigure_controllers(cluster)
        bootstrap = cluster.bootstrap
        admin = AdminClient({"bootstrap.servers": bootstrap})
        small = {"segment.ms": "300"}
        for codec in CODECS:
            topic = f"corpus-{codec}"
            _create(admin, topic, small)
            _produce(bootstrap, topic, 1500, 120, {"compression.type": codec})
        _create(admin, "corpus-idem", small)
        _produce(bootstrap, "corpus-idem", 800, 60, {"enable.idempotence": True})
        _create(admin, "corpus-txn", {})
        _transactions(bootstrap, "corpus-txn")
        _compacted(bootstrap, admin, "corpus-compact")
        _groups(bootstrap, "corpus-none")
        _share_group(bootstrap, "corpus-none", cluster.libs)
        _metadata_changes(bootstrap, admin, cluster.libs)

        def cleaned() -> bool:
            """The cleaner went up to the segment of the last append (offset 120)."""
            for d in cluster.brokers[0].log_dirs:
                cp = Path(d) / "cleaner-offset-checkpoint"
                for line in cp.read_text().splitlines() if cp.exists() else []:
                    parts = line.split()
                    if parts[:2] == ["corpus-compact", "0"] and int(parts[2]) >= 120:
                        return True
            return False

        _wait(cleaned, "the cleaner to clean corpus-compact", 90)
        time.sleep(2)  # a metadata snapshot after the last changes (interval 1 s)
    finally:
        kafka_cluster.stop(state)
        recorded = kafka_cluster.read_state(state)
        kafka_cluster.kill_all(recorded if recorded is not None else cluster)
    dest.mkdir(parents=True, exist_ok=True)
    for node in cluster.nodes:
        for d in node.log_dirs:
            if Path(d).exists():
                shutil.copytree(d, dest / f"node-{node.id}" / Path(d).name, dirs_exist_ok=True)
    return dest


if __name__ == "__main__":  # python tests/dump_corpus.py DEST
    import tempfile

    sys.path.insert(0, str(Path(__file__).parent))
    from conftest import start_kafka_cluster

    with tempfile.TemporaryDirectory() as tmp:
        print(build(Path(tmp), Path(sys.argv[1]), start_kafka_cluster))
