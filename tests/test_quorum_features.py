"""kctl quorum, kctl features and kctl cluster log-dirs --kafka-json beside Kafka's own tools
(MetadataQuorumCommand, FeatureCommand, LogDirsCommand from the same jars) on the session
cluster: the same leader, epoch, voters, observers, directory ids, feature levels and log-dir
document. Changes (feature levels, unregistering a broker) are tested on the ops cluster in
test_cluster_ops.py."""

from __future__ import annotations

import json
import re

import pytest
from conftest import on_tansu

pytestmark = pytest.mark.skipif(on_tansu(), reason="Tansu is not a KRaft cluster of Kafka's")


def _kafka_status(kafka_tool, bootstrap: str) -> dict[str, str]:
    out = kafka_tool(
        "org.apache.kafka.tools.MetadataQuorumCommand",
        "--bootstrap-server", bootstrap, "describe", "--status",
    ).stdout  # fmt: skip
    return dict(
        (k.strip(), v.strip()) for k, _, v in (ln.partition(":") for ln in out.splitlines()) if v
    )


def _kafka_replication(kafka_tool, bootstrap: str) -> dict[int, dict[str, str]]:
    out = kafka_tool(
        "org.apache.kafka.tools.MetadataQuorumCommand",
        "--bootstrap-server", bootstrap, "describe", "--replication",
    ).stdout  # fmt: skip
    lines = [ln.split() for ln in out.splitlines() if ln.strip()]
    header, rows = lines[0], lines[1:]
    return {int(r[0]): dict(zip(header, r, strict=True)) for r in rows}


def test_quorum_status_is_what_kafka_metadata_quorum_reports(kctl, kafka_tool, bootstrap):
    before = _kafka_status(kafka_tool, bootstrap)
    r = kctl("quorum", "describe", "-o", "json")
    after = _kafka_status(kafka_tool, bootstrap)
    assert r.code == 0, r
    doc = json.loads(r.stdout)
    assert doc["cluster_id"] == before["ClusterId"]
    assert doc["leader_id"] == int(before["LeaderId"])
    assert doc["leader_epoch"] == int(before["LeaderEpoch"]) == int(after["LeaderEpoch"])
    # The metadata log grows with every heartbeat: kctl's answer lies between Kafka's two.
    assert int(before["HighWatermark"]) <= doc["high_watermark"] <= int(after["HighWatermark"])
    voters = json.loads(before["CurrentVoters"])
    observers = json.loads(before["CurrentObservers"])
    assert [(v["id"], v.get("directoryId"), v.get("endpoints", [])) for v in voters] == [
        (v["id"], v["directory_id"], v["endpoints"]) for v in doc["voters"]
    ]
    assert sorted((o["id"], o["directoryId"]) for o in observers) == sorted(
        (o["id"], o["directory_id"]) for o in doc["observers"]
    )
    assert doc["max_follower_lag"] >= 0 and doc["max_follower_lag_time_ms"] >= 0


def test_quorum_replication_rows_match_kafka_metadata_quorum(kctl, kafka_tool, bootstrap):
    before = _kafka_replication(kafka_tool, bootstrap)
    r = kctl("quorum", "describe", "--replication", "-o", "json")
    after = _kafka_replication(kafka_tool, bootstrap)
    assert r.code == 0, r
    rows = json.loads(r.stdout)
    assert {row["node_id"] for row in rows} == set(before)
    zero = "AAAAAAAAAAAAAAAAAAAAAA"  # Kafka prints a static voter's missing id as the zero Uuid
    for row in rows:
        theirs = before[row["node_id"]]
        assert row["status"] == theirs["Status"]
        assert (row["directory_id"] or zero) == theirs["DirectoryId"]
        low = int(before[row["node_id"]]["LogEndOffset"])
        high = int(after[row["node_id"]]["LogEndOffset"])
        assert low <= row["log_end_offset"] <= high, (row, theirs)
        assert row["lag"] >= 0 and row["last_fetch_timestamp"] > 0
    assert rows[0]["status"] == "Leader"
    r = kctl("quorum", "describe", "--replication")
    assert r.code == 0 and r.stdout.splitlines()[0].split("\t")[0] == "NODE-ID", r


def _kafka_features(kafka_tool, bootstrap: str) -> dict[str, dict[str, str]]:
    out = kafka_tool(
        "org.apache.kafka.tools.FeatureCommand", "--bootstrap-server", bootstrap, "describe"
    ).stdout
    found = {}
    for line in out.splitlines():
        fields = dict(re.findall(r"(\w+): (\S+)", line))
        if "Feature" in fields:
            found[fields["Feature"]] = fields
    return found


def test_features_are_what_kafka_features_describes(kctl, kafka_tool, bootstrap):
    theirs = _kafka_features(kafka_tool, bootstrap)
    r = kctl("features", "describe", "-o", "json")
    assert r.code == 0, r
    rows = {row["feature"]: row for row in json.loads(r.stdout)}
    assert set(rows) == set(theirs)
    from kctl.broker.features import level_name

    for name, row in rows.items():
        t = theirs[name]
        assert level_name(name, row["supported_min"]) == t["SupportedMinVersion"], name
        assert level_name(name, row["supported_max"]) == t["SupportedMaxVersion"], name
        assert row["finalized_version"] == t["FinalizedVersionLevel"], name
        assert row["epoch"] is not None
    assert rows["metadata.version"]["finalized_version"].endswith(
        f"-IV{rows['metadata.version']['finalized_version'].rsplit('IV', 1)[1]}"
    )


def test_a_feature_plan_is_validated_by_the_controller_and_changes_nothing(
    kctl, kafka_tool, bootstrap
):
    before = _kafka_features(kafka_tool, bootstrap)["transaction.version"]
    level = int(before["FinalizedVersionLevel"])
    r = kctl("features", "downgrade", "--feature", f"transaction.version={level - 1}", "-o", "json")
    # The controller validates a downgrade of transaction.version (it may refuse it: then the
    # plan fails in one line naming the feature); either way nothing changes.
    if r.code == 0:
        (row,) = json.loads(r.stdout)
        assert row["result"] == "OK" and row["change"] == "safe-downgrade", row
        assert "plan only" in r.stderr
    else:
        assert r.code == 1 and r.stdout == "", r
        assert r.stderr.startswith(
            "kctl: error: the controller refuses to downgrade transaction.version"
        ), r
    after = _kafka_features(kafka_tool, bootstrap)["transaction.version"]
    assert after["FinalizedVersionLevel"] == before["FinalizedVersionLevel"]
    r = kctl("features", "upgrade", "--feature", f"transaction.version={level}", "-o", "json")
    assert r.code == 0 and json.loads(r.stdout)[0]["result"] == "nothing to do", r


def test_a_plan_refuses_levels_outside_the_supported_range_but_lets_a_feature_be_turned_off():
    from kctl.broker.features import Feature, plan
    from kctl.errors import UsageError

    mv = Feature("metadata.version", 7, 30, 30, 1)
    ev = Feature("some.version", 1, 2, 2, 1)
    assert [c.kind for c in plan([mv, ev], {"metadata.version": 29}, "safe")] == ["safe-downgrade"]
    assert plan([mv, ev], {"some.version": 0}, "safe")[0].target == 0  # off
    for wanted in ({"metadata.version": 6}, {"metadata.version": 0}, {"some.version": 3}):
        with pytest.raises(UsageError, match="is out of range"):
            plan([mv, ev], wanted, "unsafe")


def test_a_metadata_version_below_what_the_brokers_support_is_refused_naming_their_range(
    kctl, bootstrap
):
    # 3.0 is metadata.version 1 (3.0-IV1); Kafka 4 brokers support 3.3-IV3 (7) and later, and
    # FeatureCommand answers "Unknown metadata.version '3.0'": no controller round trip.
    r = kctl("features", "downgrade", "--metadata", "3.0")
    assert r.code == 2 and r.stdout == "", r
    line = r.stderr.strip()
    assert "\n" not in line and "Request" not in line and "Response(" not in line, r
    rows = {
        row["feature"]: row for row in json.loads(kctl("features", "describe", "-o", "json").stdout)
    }
    low = rows["metadata.version"]["supported_min"]
    assert line.startswith("kctl: error: metadata.version=3.0-IV1 is out of range"), r
    assert f"levels {low}.." in line and "3.3-IV3.." in line, r


def test_a_metadata_version_downgrade_the_controller_refuses_is_its_reason_in_one_line(
    kctl, kafka_tool, bootstrap
):
    # Only validated (kafka-features.sh --dry-run and kctl's plan): nothing changes.
    from kctl.broker.features import level_name

    rows = {
        row["feature"]: row for row in json.loads(kctl("features", "describe", "-o", "json").stdout)
    }
    level = rows["metadata.version"]["finalized_level"]
    lower = level_name("metadata.version", level - 1)
    theirs = kafka_tool(
        "org.apache.kafka.tools.FeatureCommand", "--bootstrap-server", bootstrap,
        "downgrade", "--feature", f"metadata.version={level - 1}", "--dry-run", check=False,
    ).stdout  # fmt: skip
    # e.g. "Unsupported metadata.version downgrade from 30 to 29. Refusing to perform the
    # requested downgrade because it might delete metadata information."
    reason = re.search(r"Unsupported metadata\.version downgrade[^\n]*\.", theirs)
    assert reason, theirs
    for unsafe in ((), ("--unsafe",)):
        r = kctl("features", "downgrade", "--metadata", lower, *unsafe, "-o", "json")
        assert r.code == 1 and r.stdout == "", r
        (line,) = r.stderr.strip().splitlines()
        verb = "unsafely downgrade" if unsafe else "downgrade"
        assert line.startswith(
            f"kctl: error: the controller refuses to {verb} metadata.version from "
            f"{level_name('metadata.version', level)} to {lower} (InvalidUpdateVersionError: "
        ), r
        assert "Request" not in line and "Response(" not in line, r
        if not unsafe:
            assert reason.group(0) in line, (line, theirs)
    after = json.loads(kctl("features", "describe", "-o", "json").stdout)
    assert {row["feature"]: row for row in after}["metadata.version"]["finalized_level"] == level


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("features", "upgrade", "--feature", "no.such.version=1"), "unknown feature"),
        (("features", "upgrade", "--feature", "share.version"), "is not NAME=LEVEL"),
        (("features", "upgrade", "--feature", "share.version=99"), "out of range"),
        (("features", "upgrade", "--metadata", "9.9"), "unknown metadata version"),
        (("features", "upgrade", "--feature", "share.version=0"), "use kctl features downgrade"),
        (("features", "upgrade"), "nothing to change"),
        (("quorum", "add-controller", "5", "--directory-id", "x", "--listener", "C://h:1"),
         "is not a directory id"),
        (("quorum", "add-controller", "5", "--directory-id", "AAAAAAAAAAAAAAAAAAAAAA",
          "--listener", "h:1"), "is not NAME://HOST:PORT"),
        (("quorum", "remove-controller", "424242"), "is not in the metadata quorum"),
        (("cluster", "unregister", "424242", "--yes"), "broker 424242 is not registered"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line(kctl, args, message):
    r = kctl(*args)
    lines = r.stderr.strip().splitlines()
    assert r.code in (1, 2) and len(lines) == 1 and message in lines[0], r
    assert "Traceback" not in r.stderr


def test_a_static_quorum_refuses_to_remove_its_voter_in_one_line(kctl, bootstrap):
    r = kctl("quorum", "describe", "-o", "json")
    leader = json.loads(r.stdout)["leader_id"]
    r = kctl("quorum", "remove-controller", str(leader))  # the plan needs the directory id
    assert r.code == 2 and "static quorum" in r.stderr, r


def test_unregistering_a_live_broker_is_refused(kctl):
    r = kctl("cluster", "describe", "-o", "json")
    broker = json.loads(r.stdout)["brokers"][0]["broker"]
    r = kctl("cluster", "unregister", str(broker), "--yes")
    assert r.code == 1 and f"broker {broker} is alive" in r.stderr, r


def test_log_dirs_kafka_json_is_kafka_log_dirs_document(kctl, kafka_tool, bootstrap, new_topic):
    topic = new_topic(partitions=3, prefix="logdirs")
    r = kctl("produce", topic, input="".join(f"r{i}\n" for i in range(30)))
    assert r.code == 0, r
    brokers = sorted(
        b["broker"] for b in json.loads(kctl("cluster", "describe", "-o", "json").stdout)["brokers"]
    )

    def kafka() -> dict:
        out = kafka_tool(
            "org.apache.kafka.tools.LogDirsCommand", "--bootstrap-server", bootstrap,
            "--describe", "--topic-list", topic,
            "--broker-list", ",".join(map(str, brokers)),
        ).stdout  # fmt: skip
        (line,) = [ln for ln in out.splitlines() if ln.startswith("{")]
        return json.loads(line)

    def normal(doc: dict) -> dict:
        for b in doc["brokers"]:
            b["logDirs"].sort(key=lambda d: d["logDir"])
            for d in b["logDirs"]:
                d["partitions"].sort(key=lambda p: p["partition"])
        doc["brokers"].sort(key=lambda b: b["broker"])
        return doc

    r = kctl("cluster", "log-dirs", "--topic", topic, "--kafka-json")
    assert r.code == 0, r
    ours = json.loads(r.stdout)
    assert normal(ours) == normal(kafka())
    assert list(ours) == ["brokers", "version"] and ours["version"] == 1
    assert sum(len(d["partitions"]) for b in ours["brokers"] for d in b["logDirs"]) == 3
