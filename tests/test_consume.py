"""kctl consume against the real session broker; records are written with the client library
directly (not with kctl produce).

Tansu answers ListOffsets(latest) with the base offset of the last batch + 1, which is wrong
for multi-record batches; tests that depend on the end offset (``--from -N``) therefore write
one record per batch (flush after each), which every broker answers correctly."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from conftest import on_tansu, unique

GROUP_CONFIG = ["--consumer-property", "session.timeout.ms=6000",
                "--consumer-property", "heartbeat.interval.ms=1000"]  # fmt: skip


def write(bootstrap: str, topic: str, records: list[dict], *, one_per_batch: bool = False) -> None:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for r in records:
        p.produce(topic, **r)
        if one_per_batch:
            p.flush(10)
    assert p.flush(10) == 0


def lines(r) -> list[dict]:
    assert r.code == 0, r
    return [json.loads(line) for line in r.stdout.splitlines()]


def test_jsonl_has_every_field_and_exits_at_the_end(kctl, new_topic, bootstrap):
    topic = new_topic(partitions=3)  # partition 2 stays empty: it must not block the exit
    write(bootstrap, topic, [
        {"value": b"v0", "key": b"k0", "partition": 0, "headers": [("h", b"1")],
         "timestamp": 1_700_000_000_000},
        {"value": None, "key": None, "partition": 0},
        {"value": b"\xff\xfebin", "key": b"k2", "partition": 1},
    ])  # fmt: skip
    docs = lines(kctl("consume", topic, "-o", "jsonl"))
    docs.sort(key=lambda d: (d["partition"], d["offset"]))
    first, second, binary = docs
    assert first == {
        "topic": topic, "partition": 0, "offset": 0, "timestamp": 1_700_000_000_000,
        "timestamp_type": "CreateTime", "key": "k0", "value": "v0", "headers": [["h", "1"]],
        "leader_epoch": first["leader_epoch"],
    }  # fmt: skip
    assert first["leader_epoch"] is None or first["leader_epoch"] >= 0
    assert (second["key"], second["value"], second["headers"]) == (None, None, [])
    # Not UTF-8: the stream goes on, the value comes raw (base64) with an error field.
    assert binary["value"] == "//5iaW4=" and binary["value_encoding"] == "base64"
    assert "not valid UTF-8" in binary["error"]


def test_value_and_key_formats(kctl, new_topic, bootstrap):
    topic = new_topic(partitions=1)
    write(bootstrap, topic, [
        {"value": b'{"n": 1}', "key": b"\x01\x02"},
        {"value": b"not json", "key": b"\x03"},
    ])  # fmt: skip
    docs = lines(kctl("consume", topic, "-o", "jsonl", "--value-format", "json",
                      "--key-format", "hex"))  # fmt: skip
    assert docs[0]["value"] == {"n": 1} and docs[0]["key"] == "0102"
    assert docs[1]["key"] == "03" and docs[1]["value"] == "bm90IGpzb24="
    assert "not valid JSON" in docs[1]["error"]
    docs = lines(kctl("consume", topic, "-o", "jsonl", "--value-format", "base64"))
    assert docs[0]["value"] == "eyJuIjogMX0=" and "error" not in docs[0]
    docs = lines(kctl("consume", topic, "-o", "jsonl", "--value-format", "hex"))
    assert docs[1]["value"] == b"not json".hex()
    r = kctl("consume", topic, "-o", "plain", "--value-format", "bytes")
    assert r.stdout == '{"n": 1}\nnot json\n'


def test_plain_table_and_template_outputs(kctl, new_topic, bootstrap):
    topic = new_topic(partitions=1)
    write(bootstrap, topic, [{"value": b"hello", "key": b"a", "headers": [("x", b"y")]},
                             {"value": b"world"}, {"value": b"", "key": b""},
                             {"value": None, "key": b"k"}])  # fmt: skip
    r = kctl("consume", topic, "-o", "plain")
    assert (r.code, r.stdout, r.stderr) == (0, "hello\nworld\n\n\n", "")
    r = kctl("consume", topic, "--template", "{partition}:{offset} {key}={value} [{headers}]")
    assert r.stdout == "0:0 a=hello [x=y]\n0:1 =world []\n0:2 = []\n0:3 k= []\n"
    r = kctl("consume", topic, "-o", "table")
    header, row1, row2, row3, row4 = r.stdout.splitlines()
    assert header.split() == ["PARTITION", "OFFSET", "TIMESTAMP", "KEY", "VALUE"]
    assert row1.split()[0:2] == ["0", "0"] and row1.split()[-2:] == ["a", "hello"]
    assert row2.split()[-2:] == ["(null)", "world"]  # no key
    assert row3.split()[-2:] == ['""', '""']  # empty key, empty value
    assert row4.split()[-2:] == ["k", "(null)"]  # a tombstone
    r = kctl("consume", topic, "--template", "{nope}")
    assert r.code == 2 and "unknown field {nope} in --template" in r.stderr


def test_start_positions_partition_filter_and_max_messages(kctl, new_topic, bootstrap):
    topic = new_topic(partitions=2)
    write(bootstrap, topic, [{"value": f"p{p}-{i}".encode(), "partition": p}
                             for p in (0, 1) for i in range(5)], one_per_batch=True)  # fmt: skip

    def values(*args: str) -> list[str]:
        return sorted(d["value"] for d in lines(kctl("consume", topic, "-o", "jsonl", *args)))

    assert len(values()) == 10
    assert values("--from", "latest") == []
    assert values("--from", "3", "--partition", "1") == ["p1-3", "p1-4"]
    assert values("--from", "-2") == ["p0-3", "p0-4", "p1-3", "p1-4"]
    assert values("--from", "-50", "--partition", "0") == [f"p0-{i}" for i in range(5)]
    assert len(values("-n", "3")) == 3
    assert len(values("--max-messages", "7", "--partition", "0")) == 5


def test_start_from_a_time_iso_and_epoch_ms(kctl, new_topic, bootstrap):
    topic = new_topic(partitions=1)
    write(bootstrap, topic, [{"value": b"old"}])
    time.sleep(0.02)  # the boundary must fall strictly between the two appends
    boundary = int(time.time() * 1000)
    time.sleep(0.02)
    write(bootstrap, topic, [{"value": b"new"}])
    r = kctl("consume", topic, "--from", f"@{boundary}", "-o", "plain")
    assert r.stdout == "new\n", r
    from datetime import UTC, datetime

    iso = datetime.fromtimestamp(boundary / 1000, UTC).isoformat(timespec="milliseconds")
    r = kctl("consume", topic, "--from", iso.replace("+00:00", "Z"), "-o", "plain")
    assert r.stdout == "new\n", r
    r = kctl("consume", topic, "--from", "2999-01-01T00:00:00Z", "-o", "plain")
    assert (r.code, r.stdout) == (0, "")


def test_follow_waits_for_new_records(kctl_env, new_topic, bootstrap):
    topic = new_topic(partitions=1)
    write(bootstrap, topic, [{"value": b"before"}])
    proc = subprocess.Popen(
        [sys.executable, "-m", "kctl", "consume", topic, "-f", "-n", "3", "-o", "plain"],
        env=kctl_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        first = proc.stdout.readline()
        assert first == "before\n"
        assert proc.poll() is None  # --follow: still running at the end of the partition
        write(bootstrap, topic, [{"value": b"after-1"}, {"value": b"after-2"}])
        rest, err = proc.communicate(timeout=30)
    finally:
        proc.kill() if proc.poll() is None else None
    assert proc.returncode == 0, err
    assert rest == "after-1\nafter-2\n"


def committed(admin, group: str, topic: str) -> dict[int, int]:
    from confluent_kafka import ConsumerGroupTopicPartitions

    fut = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group]
    return {
        tp.partition: tp.offset
        for tp in fut.result(timeout=15).topic_partitions
        if tp.topic == topic
    }


def test_group_commits_are_visible_through_the_group_api(kctl, new_topic, bootstrap, admin):
    topic = new_topic(partitions=2)
    write(bootstrap, topic, [{"value": f"{p}-{i}".encode(), "partition": p}
                             for p in (0, 1) for i in range(3)])  # fmt: skip
    group = unique("grp")
    r = kctl("consume", topic, "--group", group, "-o", "plain", *GROUP_CONFIG)
    assert sorted(r.stdout.split()) == sorted(f"{p}-{i}" for p in (0, 1) for i in range(3)), r
    assert committed(admin, group, topic) == {0: 3, 1: 3}
    # The next run starts at the committed offsets: only new records.
    write(bootstrap, topic, [{"value": b"new", "partition": 0}])
    r = kctl("consume", topic, "--group", group, "-o", "plain", *GROUP_CONFIG)
    assert r.stdout == "new\n", r
    assert committed(admin, group, topic) == {0: 4, 1: 3}
    # --no-commit reads from the committed offsets and leaves them alone.
    r = kctl("consume", topic, "--group", group, "--from", "earliest", "--no-commit",
             "-o", "plain", *GROUP_CONFIG)  # fmt: skip
    assert len(r.stdout.split()) == 7, r
    assert committed(admin, group, topic) == {0: 4, 1: 3}


def _offsets(r) -> list[tuple[int, int]]:
    """(partition, offset) of each record of a finished ``kctl consume -o jsonl``."""
    assert r.code == 0 and "error" not in r.stderr, r
    return [(d["partition"], d["offset"]) for d in lines(r)]


def _lag(kctl, group: str) -> tuple[int, set[str], dict[int, int]]:
    """The group's total lag, its type and committed offsets, from kctl groups lag."""
    r = kctl("groups", "lag", group, "-o", "json")
    assert r.code == 0, r
    doc = json.loads(r.stdout)
    committed = {row["partition"]: row["committed_offset"] for row in doc["partitions"]}
    return doc["groups"][0]["lag"], {row["group_type"] for row in doc["partitions"]}, committed


@pytest.mark.parametrize(
    "assignors",
    ["range,roundrobin", "cooperative-sticky"],
    ids=["eager", "cooperative"],
)
def test_a_group_reads_each_record_once_on_eager_and_cooperative_rebalancing(
    kctl, new_topic, bootstrap, assignors
):
    """librdkafka's default assignors rebalance eagerly (the callbacks get the whole assignment:
    assign/unassign), cooperative-sticky incrementally (only what is added or taken:
    incremental_assign/unassign; assign() there ended in a KafkaError traceback)."""
    topic, per = new_topic(partitions=3), 4
    write(bootstrap, topic, [{"value": b"v", "partition": p} for p in range(3)
                             for _ in range(per)])  # fmt: skip
    every = [(p, o) for p in range(3) for o in range(per)]
    group = unique("rebal")
    args = ("consume", topic, "--group", group, "-X", f"partition.assignment.strategy={assignors}",
            *GROUP_CONFIG, "-o", "jsonl")  # fmt: skip
    first = _offsets(kctl(*args, "-n", "5"))
    assert len(set(first)) == 5
    ends = {p: o + 1 for p, o in sorted(first)}  # committed: after the last record printed
    assert _lag(kctl, group) == (sum(per - e for e in ends.values()), {"classic"}, ends)
    rest = _offsets(kctl(*args))  # from the commits to the end
    assert sorted(first + rest) == every
    assert _lag(kctl, group) == (0, {"classic"}, dict.fromkeys(range(3), per))
    # --from overrides the committed offsets; what it reads is committed again.
    assert sorted(_offsets(kctl(*args, "--from", "beginning"))) == every
    assert sorted(_offsets(kctl(*args, "--from", "-1"))) == [(p, per - 1) for p in range(3)]
    assert _offsets(kctl(*args, "--from", "latest")) == []
    assert _lag(kctl, group) == (0, {"classic"}, dict.fromkeys(range(3), per))


def test_an_exception_of_the_client_library_ends_as_one_error_line(kctl, new_topic, bootstrap):
    """-X enable.auto.offset.store=true makes librdkafka refuse the offsets kctl stores for
    what it printed: confluent-kafka raises KafkaException from store_offsets, which no
    command catches. It ends as one line naming librdkafka's error, exit 1."""
    topic = new_topic(partitions=1)
    write(bootstrap, topic, [{"value": b"x"}])
    r = kctl("consume", topic, "--group", unique("store"), "-X", "enable.auto.offset.store=true",
             *GROUP_CONFIG, "-o", "plain")  # fmt: skip
    assert r.code == 1, r
    assert r.stderr.startswith("kctl: error: Kafka client: _INVALID_ARG: StoreOffsets failed: ")
    assert r.stderr.endswith(
        "(confluent-kafka raised KafkaException; run with --debug for the traceback)\n"
    )
    assert r.stderr.count("\n") == 1 and "unexpected" not in r.stderr


# kctl's rebalance callback as it was before kctl knew cooperative rebalancing: assign().
OLD_ON_ASSIGN = """
import sys
from kctl.broker import consume
from kctl.cli import main

def on_assign(self, consumer, partitions):
    consumer.assign(partitions)

consume.Consumption._on_assign = on_assign
main(sys.argv[1:])
"""


def test_an_error_raised_in_a_rebalance_callback_ends_as_one_error_line(
    kctl_env, new_topic, bootstrap
):
    """An error in a librdkafka callback comes out of consume(): librdkafka refusing assign()
    on a cooperative rebalance comes as the KafkaError object itself, which is no
    BaseException (only a bare except catches it). The old callback put back shows that such
    an error ends as one line, exit 1; with --debug the traceback comes first."""
    topic = new_topic(partitions=1)
    write(bootstrap, topic, [{"value": b"x"}])
    command = [sys.executable, "-c", OLD_ON_ASSIGN, "consume", topic, "--group", unique("cb"),
               "-X", "partition.assignment.strategy=cooperative-sticky", *GROUP_CONFIG]  # fmt: skip
    r = subprocess.run(command, env=kctl_env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r
    assert r.stderr == (
        "kctl: error: Kafka client: _STATE: Failed to set assignment: Local: Erroneous state "
        "(confluent-kafka raised KafkaError; run with --debug for the traceback)\n"
    )
    r = subprocess.run([*command, "--debug"], env=kctl_env, capture_output=True, text=True,
                       timeout=60)  # fmt: skip
    assert r.returncode == 1, r
    assert "Traceback (most recent call last):" in r.stderr
    assert "\nconfluent_kafka.cimpl.KafkaError: KafkaError{code=_STATE," in r.stderr
    assert r.stderr.splitlines()[-1] == (
        "kctl: error: Kafka client: _STATE: Failed to set assignment: Local: Erroneous state "
        "(confluent-kafka raised KafkaError)"
    )


def test_transactional_records_are_visible_only_under_read_committed(kctl, new_topic, bootstrap):
    from confluent_kafka import Producer

    topic = new_topic(partitions=1)
    write(bootstrap, topic, [{"value": b"plain"}])
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": unique("tx")})
    p.init_transactions(15)
    p.begin_transaction()
    p.produce(topic, b"in-flight")
    p.flush(10)

    def read(isolation: str) -> list[str]:
        r = kctl("consume", topic, "--isolation", isolation, "-o", "plain")
        assert r.code == 0, r
        return r.stdout.split()

    assert read("read_uncommitted") == ["plain", "in-flight"]
    assert read("read_committed") == ["plain"]  # stops at the last stable offset
    p.commit_transaction(15)
    assert read("read_committed") == ["plain", "in-flight"]


def test_aborted_transaction_records_are_hidden_under_read_committed(kctl, new_topic, bootstrap):

    from confluent_kafka import Producer

    topic = new_topic(partitions=1)
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": unique("tx")})
    p.init_transactions(15)
    p.begin_transaction()
    p.produce(topic, b"aborted")
    p.flush(10)
    p.abort_transaction(15)
    write(bootstrap, topic, [{"value": b"after"}])
    r = kctl("consume", topic, "--isolation", "read_committed", "-o", "plain")
    if "aborted" in r.stdout.split() and on_tansu():
        pytest.skip(
            "the Tansu broker does not filter aborted transactions in Fetch (read_committed: "
            "no aborted_transactions in its Fetch answer)"
        )
    assert r.stdout.split() == ["after"], r
    r = kctl("consume", topic, "--isolation", "read_uncommitted", "-o", "plain")
    assert r.stdout.split() == ["aborted", "after"]


def test_closed_pipe_ends_quietly_with_exit_0(kctl_env, new_topic, bootstrap):
    topic = new_topic(partitions=1)
    write(bootstrap, topic, [{"value": b"x" * 100} for _ in range(30_000)])
    proc = subprocess.Popen(
        [sys.executable, "-m", "kctl", "consume", topic, "-o", "jsonl"],
        env=kctl_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert json.loads(proc.stdout.readline())["offset"] == 0
    proc.stdout.close()  # as `| head -1` does
    err = proc.stderr.read()
    assert proc.wait(timeout=30) == 0
    assert err == b""


def test_unknown_topic_and_partition_out_of_range(kctl, new_topic):
    r = kctl("consume", "no-such-topic-cons")
    assert (r.code, r.stderr) == (
        1,
        "kctl: error: unknown topic 'no-such-topic-cons' (not in the cluster's metadata)\n",
    )
    topic = new_topic(partitions=2)
    r = kctl("consume", topic, "--partition", "2")
    assert r.code == 1
    assert r.stderr == (
        f"kctl: error: partition 2 of topic '{topic}' does not exist "
        "(the topic has partitions 0-1)\n"
    )


def test_offset_beyond_the_end_is_reported(kctl, new_topic, bootstrap):
    topic = new_topic(partitions=1)
    write(bootstrap, topic, [{"value": b"x"}])
    r = kctl("consume", topic, "--from", "1000")
    assert r.code == 1, r
    assert r.stderr.startswith(f"kctl: error: start offset 1000 is out of range for {topic}[0]")
    assert r.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--from", "yesterday"], "malformed --from 'yesterday'"),
        (["--from", "2024-13-45T00:00:00Z"], "malformed time"),
        (["--group", "g", "--partition", "0"], "--partition cannot be combined with --group"),
        (["--no-commit"], "--no-commit needs --group"),
        (["--isolation", "serializable"], "unknown --isolation 'serializable'"),
        (["--value-format", "msgpack"], "unknown --value-format 'msgpack'"),
        (["-o", "yaml"], "consume cannot write -o yaml"),
        (["-n", "0"], "--max-messages must be at least 1"),
    ],
)
def test_conflicting_or_invalid_options_are_usage_errors(kctl, new_topic, args, message):
    r = kctl("consume", "any-topic", *args)
    assert r.code == 2, r
    assert message in r.stderr and r.stderr.count("\n") == 1


def test_jsonl_lines_stay_one_record_each_whatever_the_values_hold(kctl, new_topic, bootstrap):
    # The writer serialises a whole batch at once and cuts it between documents: values that
    # look like that boundary, newlines and quotes must stay inside their record.
    topic = new_topic(partitions=1)
    tricky = ['},{"topic":"x"}', 'a\nb\r\n"q"\\', "}\n{", "plain", "é ✓"]
    write(bootstrap, topic, [{"value": v.encode(), "key": v.encode()} for v in tricky])
    docs = lines(kctl("consume", topic, "-o", "jsonl"))
    assert [(d["offset"], d["key"], d["value"]) for d in docs] == [
        (i, v, v) for i, v in enumerate(tricky)
    ]
    # Values decoded as JSON may hold objects with a "topic" key: still one line a record.
    objects = new_topic(partitions=1)
    write(bootstrap, objects, [{"value": b'[{"a":1},{"topic":2}]'}, {"value": b"{}"}])
    docs = lines(kctl("consume", objects, "-o", "jsonl", "--value-format", "json"))
    assert [d["value"] for d in docs] == [[{"a": 1}, {"topic": 2}], {}]


def _raw_messages(bootstrap: str, topic: str, n: int) -> list:
    from confluent_kafka import Consumer, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": unique("raw"),
                  "enable.auto.commit": False})  # fmt: skip
    try:
        meta = c.list_topics(topic, timeout=10).topics[topic].partitions
        c.assign([TopicPartition(topic, p, 0) for p in meta])
        got: list = []
        deadline = time.monotonic() + 30
        while len(got) < n and time.monotonic() < deadline:
            got.extend(m for m in c.consume(1000, 0.5) if m.error() is None)
        assert len(got) == n
        return got
    finally:
        c.close()


def test_jsonl_block_writes_the_same_bytes_as_record_by_record(new_topic, bootstrap):
    import io

    from kctl.formatters.stream import JsonLinesWriter, py_jsonl_block
    from kctl.formatters.stream import jsonl_block as chosen

    def jsonl_block(msgs: list) -> bytes | None:
        """The C function (when built) and the Python one, which must agree."""
        got = chosen(msgs)
        assert got == py_jsonl_block(msgs)
        return got

    def general(msgs: list) -> bytes:
        out = io.BytesIO()
        JsonLinesWriter(out)._write(msgs)
        return out.getvalue()

    topic = new_topic(partitions=2)
    printable = bytes(range(0x20, 0x80)).replace(b'"', b"").replace(b"\\", b"")
    plain = [{"value": b"v%d " % i + printable, "key": b"k%d" % i, "partition": i % 2}
             for i in range(40)]  # fmt: skip
    write(bootstrap, topic, plain)
    msgs = _raw_messages(bootstrap, topic, 40)
    block = jsonl_block(msgs)
    assert block is not None  # ASCII, keyed, no headers: the fast way applies
    assert block == general(msgs) and block.count(b"\n") == 40
    unkeyed = new_topic(partitions=1)
    write(bootstrap, unkeyed, [{"value": b"x" * i} for i in range(1, 6)])
    msgs = _raw_messages(bootstrap, unkeyed, 5)
    assert jsonl_block(msgs) == general(msgs) and b'"key":null' in general(msgs)
    utf8 = new_topic(partitions=1)
    write(bootstrap, utf8, [{"value": "é ✓ 😀".encode(), "key": "ключ".encode()}])
    msgs = _raw_messages(bootstrap, utf8, 1)
    assert jsonl_block(msgs) == general(msgs)
    # Two halves of one character, each in its own value: invalid each, valid joined.
    split = new_topic(partitions=1)
    write(bootstrap, split, [{"value": "é".encode()[:1]}, {"value": "é".encode()[1:]}])
    msgs = _raw_messages(bootstrap, split, 2)
    assert jsonl_block(msgs) is None and b"base64" in general(msgs)
    # Each of these needs the record-by-record path, and gets None.
    for odd in ({"value": b'say "hi"'}, {"value": b"back\\slash"}, {"value": b"tab\t"},
                {"value": b"\xff"}, {"value": None, "key": b"k"}, {"value": b"h",
                "headers": [("h", b"1")]}):  # fmt: skip
        t = new_topic(partitions=1)
        write(bootstrap, t, [{"value": b"fine", "key": b"k"}, odd])
        msgs = _raw_messages(bootstrap, t, 2)
        assert jsonl_block(msgs) is None, odd
        assert jsonl_block(msgs[:1]) == general(msgs[:1])


@pytest.mark.parametrize("lines_only", [False, True])
def test_a_writer_told_to_stop_while_stdout_blocks_finishes_its_record_only(lines_only):
    """The writer blocks on a full pipe; told to stop (as the signal handler does) while the
    reader drains it, it ends at a record boundary: whole lines only, and it says how many
    (records as a list, or as one block of newline-ended lines)."""
    import os
    import threading

    from kctl.formatters.stream import Writer

    records = [b"%06d:" % i + b"y" * 300 + b"\n" for i in range(2000)]  # ~600 KB
    read_fd, write_fd = os.pipe()
    with os.fdopen(write_fd, "wb") as out, os.fdopen(read_fd, "rb") as src:
        writer = Writer(out)
        got = bytearray()

        def drain() -> None:
            got.extend(src.read1(1000))  # the writer is blocked on the full pipe by now
            writer.stopping = True
            while chunk := src.read1(1 << 16):
                got.extend(chunk)

        reader = threading.Thread(target=drain)
        reader.start()
        written = (
            writer.emit_lines(b"".join(records), len(records))
            if lines_only
            else writer.emit(records)
        )
        out.close()
        reader.join(timeout=30)
    assert 0 < written < len(records)
    assert bytes(got) == b"".join(records[:written])


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_a_group_whose_other_members_hold_every_partition_says_so_instead_of_waiting(
    kctl, new_topic, bootstrap, protocol
):
    """A live member of the group (a confluent-kafka consumer here) holds the topic's partition:
    kctl joining the group gets none, and a read to the end says why within --timeout, exit 1,
    nothing on stdout (it waited silently until the other member left)."""
    if on_tansu():
        pytest.skip("Tansu sends no member assignments")
    import threading

    from confluent_kafka import Consumer

    topic = new_topic(partitions=1)
    write(bootstrap, topic, [{"value": b"x"}])
    group = unique("held")
    config = {"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
              "auto.offset.reset": "latest"}  # fmt: skip
    extra: list[str] = []
    if protocol == "consumer":
        config["group.protocol"] = "consumer"  # the broker's assignor keeps it where it is
        extra = ["-X", "group.protocol=consumer"]
    else:
        # The classic assignors order members by member id, which starts with client.id:
        # "a-holder" comes before kctl's "kctl" and keeps the one partition.
        config["client.id"] = "a-holder"
    holder = Consumer(config)
    holder.subscribe([topic])
    deadline = time.monotonic() + 60
    while not holder.assignment() and time.monotonic() < deadline:
        holder.poll(0.2)
    assert holder.assignment(), "the holder got no partition"
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            holder.poll(0.1)

    thread = threading.Thread(target=poll, daemon=True)
    thread.start()
    try:
        started = time.monotonic()
        r = kctl("--timeout", "5", "consume", topic, "--group", group, "-n", "1", *extra,
                 timeout=120)  # fmt: skip
        took = time.monotonic() - started
    finally:
        stop.set()
        thread.join(10)
        holder.close()
    assert r.code == 1 and r.stdout == "", r
    (line,) = r.stderr.strip().splitlines()
    assert line == (
        f"kctl: error: no partitions assigned to group {group!r} (its 1 other live member(s) "
        f"hold all 1 partition(s) of {topic}; waited 5s; a group member reads only what the "
        "group assigns it)"
    ), r
    assert took < 50, took  # well before the 60 s join deadline


def test_a_member_without_partitions_is_told_only_when_others_hold_them_all():
    from kctl.broker.consume import unassigned_error
    from kctl.lag.model import Group, Member

    def member(mid: str, *tps: tuple[str, int]) -> Member:
        return Member(mid, None, "c", "/h", assignment=list(tps))

    tps = [("t", 0), ("t", 1)]
    group = Group("g", "Stable", "consumer", "range", 1, [
        member("me"), member("a", ("t", 0)), member("b", ("t", 1), ("u", 0)),
    ])  # fmt: skip
    error = unassigned_error("g", group, "me", tps, 15.2)
    assert error is not None and error.line() == (
        "no partitions assigned to group 'g' (its 2 other live member(s) hold all 2 "
        "partition(s) of t; waited 15s; a group member reads only what the group assigns it)"
    )
    group.members = [member("me"), member("a", ("t", 0))]  # t[1] free: a rebalance under way
    assert unassigned_error("g", group, "me", tps, 15) is None
    assert unassigned_error("g", None, "me", tps, 15) is None
