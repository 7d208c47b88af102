"""kctl consume --include REGEX beside kafka-console-consumer.sh --include (ConsoleConsumer
from the same jars): every topic whose whole name matches, and nothing else."""

from __future__ import annotations

import json

import pytest
from conftest import on_tansu, unique


def test_include_reads_every_matching_topic_as_the_console_consumer_does(
    kctl, new_topic, kafka_tool, bootstrap
):
    base = unique("inc")
    names = {}
    for suffix, n in (("-eu", 3), ("-us", 2), ("-eu-archive", 4)):
        names[suffix] = name = new_topic(partitions=2, prefix=base + suffix)
        r = kctl("produce", name, input="".join(f"{suffix}:{i}\n" for i in range(n)))
        assert r.code == 0, r
    pattern = base + "-(eu|us)-[0-9a-f]+"  # a whole-name match: not the archive
    r = kctl("consume", "--include", pattern, "-o", "jsonl")
    assert r.code == 0, r
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert sorted(row["value"] for row in rows) == ["-eu:0", "-eu:1", "-eu:2", "-us:0", "-us:1"]
    assert {row["topic"] for row in rows} == {names["-eu"], names["-us"]}
    if on_tansu():
        return
    theirs = kafka_tool(
        "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", bootstrap,
        "--include", pattern, "--from-beginning", "--max-messages", "5", "--timeout-ms", "20000",
    ).stdout  # fmt: skip
    assert sorted(theirs.split()) == sorted(row["value"] for row in rows)


def test_include_errors_are_one_line(kctl):
    r = kctl("consume", "--include", unique("nothing-") + ".*")
    assert r.code == 1 and "no topic matches --include" in r.stderr, r
    r = kctl("consume", "--include", "(")
    assert r.code == 2 and "malformed --include regex" in r.stderr, r
    r = kctl("consume", "t", "--include", "t.*")
    assert r.code == 2 and "exclude each other" in r.stderr, r


@pytest.mark.skipif(on_tansu(), reason="no __consumer_offsets on Tansu")
def test_include_leaves_internal_topics_out_unless_named(kctl):
    r = kctl("consume", "--include", ".*", "-n", "1", "-o", "jsonl", "--timeout", "5")
    assert r.code == 0, r
    assert all(json.loads(x)["topic"] != "__consumer_offsets" for x in r.stdout.splitlines())
