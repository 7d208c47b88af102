"""kctl._native, the C loops, against the pure Python functions they replace: the same result
(or the same refusal) on every input — generated record batches with their damage, consumed
messages of every shape, produce loops with refused records. The slower end-to-end tests (dump,
consume, produce on the real cluster) run through whichever is loaded; this file checks the two
agree, that kctl.runtime.native alone chooses between them, and that the extension was built
where scripts/test.sh runs (KCTL_REQUIRE_NATIVE=1).

The C functions come from kctl.runtime.native's accessors (what kctl runs), the Python twins
from their modules."""

from __future__ import annotations

import ast
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kctl.runtime import native as chooser

# The C loops as kctl.runtime.native hands them out (None each when the extension is not built).
records_json = chooser.records_json()
jsonl_block = chooser.jsonl_block()
produce_chunk = chooser.produce_chunk()
needs_native = pytest.mark.skipif(chooser.load() is None, reason="kctl._native is not built here")


def test_the_extension_is_built_where_the_test_script_runs() -> None:
    if os.environ.get("KCTL_REQUIRE_NATIVE") != "1":
        pytest.skip("KCTL_REQUIRE_NATIVE is not set (scripts/test.sh sets it)")
    import importlib.util

    # Built, whether or not this run chose it (KCTL_NATIVE=0 runs the Python twins).
    built = importlib.util.find_spec("kctl._native") is not None
    assert built, "kctl._native did not build: see pip's output for setup.py"


# What a fresh process runs: for each loop, True when the Python twin.
_CHOICES = (
    "from kctl.logfmt import fast; from kctl.runtime import native;"
    "print(fast.records_json is fast.py_records_json, native.load() is None,"
    " native.records_json() is None, native.jsonl_block() is None,"
    " native.produce_chunk() is None, native.producer() is None)"
)


def test_kctl_native_0_selects_the_python_functions() -> None:
    env = {**os.environ, "KCTL_NATIVE": "0"}
    out = subprocess.run([sys.executable, "-c", _CHOICES], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["True"] * 6, out.stderr


@needs_native
def test_every_loop_runs_in_c_when_the_extension_is_chosen() -> None:
    from kctl import _native
    from kctl.logfmt import fast

    env = {k: v for k, v in os.environ.items() if k != "KCTL_NATIVE"}
    out = subprocess.run([sys.executable, "-c", _CHOICES], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["False"] * 6, out.stderr
    assert fast.records_json is records_json is _native.records_json
    assert (jsonl_block, produce_chunk) == (_native.jsonl_block, _native.produce_chunk)


def test_only_kctl_runtime_native_imports_the_extension_or_reads_kctl_native() -> None:
    """The choice is made in one place: no other module of kctl imports kctl._native (at module
    level or in a function) or names the KCTL_NATIVE variable."""
    from test_layers import IMPORTS, PACKAGE

    importers = {i.source for i in IMPORTS if i.target == "kctl._native"}
    assert importers == {"kctl.runtime.native"}
    readers = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and node.value == "KCTL_NATIVE":
                readers.add(path.relative_to(PACKAGE))
    assert readers == {Path("runtime", "native.py")}


# ---- records_json: dump-segment's deep fast path ------------------------------------------


def _same(got: tuple | None, want: tuple | None) -> bool:
    """The C result equals the Python one; its offsets a range exactly when consecutive."""
    if got is None or want is None:
        return got is want
    text, offsets = got
    consecutive = want[1] == list(range(want[1][0], want[1][0] + len(want[1])))
    return (
        text == want[0] and list(offsets) == want[1] and isinstance(offsets, range) == consecutive
    )


def _zigzag(v: int) -> bytes:
    from test_logfmt_schemas import uv  # Kafka's varints, written independently of kctl

    return uv(((v << 1) ^ (v >> 63)) & ((1 << 64) - 1))


def _record(rng: random.Random, i: int) -> bytes:
    """One v2 record; its fields sometimes of one, two, three or four varint bytes, sometimes
    with headers (which the fast path declines)."""

    def num(small: int) -> int:
        if rng.random() < 0.9:
            return small
        return rng.choice([rng.randrange(1 << 13), rng.randrange(1 << 19), 1 << 21, -3])

    key = None if rng.random() < 0.3 else os.urandom(rng.choice([0, 3, 200]))
    value = None if rng.random() < 0.1 else os.urandom(rng.choice([0, 5, 100, 9000]))
    body = (
        b"\x00"
        + _zigzag(num(7 * i))
        + _zigzag(num(i))
        + (_zigzag(-1) if key is None else _zigzag(len(key)) + key)
        + (_zigzag(-1) if value is None else _zigzag(len(value)) + value)
        + (b"\x02\x02h\x00" if rng.random() < 0.005 else b"\x00")
    )
    return _zigzag(len(body)) + body


def _mutate(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    what = rng.randrange(4)
    if what == 0 and b:
        b[rng.randrange(len(b))] = rng.randrange(256)
    elif what == 1 and b:
        del b[rng.randrange(len(b)) :]
    elif what == 2:
        b += bytes([rng.randrange(256)])
    else:
        b[:0] = b"\x80"
    return bytes(b)


@needs_native
def test_records_json_in_c_matches_python_on_generated_and_damaged_batches() -> None:
    from kctl.logfmt.fast import py_records_json

    assert records_json is not None
    rng = random.Random(20261125)
    bases = [0, 7, 1 << 40, -(1 << 63) + (1 << 32), -(1 << 63) + (1 << 32) + 1]
    bases += [(1 << 63) - (1 << 32), (1 << 63) - (1 << 32) - 1, -1]
    compared = accepted = 0
    for _ in range(3000):
        count = rng.choice([1, 2, 5, 40])
        data = b"".join(_record(rng, i) for i in range(count))
        if rng.random() < 0.3:
            data = _mutate(rng, data)
        odd = rng.random() < 0.3  # edges of the 64-bit range, wrong counts
        args = (
            data,
            rng.choice(bases) if odd else 7,
            rng.choice([0, -5, (1 << 63) - (1 << 32)]) if odd else 1_700_000_000_000,
            rng.choice([count - 1, count + 1, 0, count]) if odd else count,
            rng.choice([-1, 0, 12, 2**31 - 1, -7]),
        )
        for text in (None, "CreateTime", "LogAppendTime"):
            want = py_records_json(*args, text=text)
            assert _same(records_json(*args, text=text), want), (args, text)
            compared += 1
            accepted += want is not None
    # Both outcomes well represented: the fast path taken, and declined.
    assert accepted > 1000 and compared - accepted > 1000, (accepted, compared)


@needs_native
def test_records_json_in_c_reads_memoryviews_of_a_real_segment() -> None:
    """The broker-written segment in tests/data, as dump-segment hands it over (memoryviews of
    a map): both functions, every batch, text and JSON."""
    import mmap
    from pathlib import Path

    from kctl.logfmt import batch as B
    from kctl.logfmt.fast import py_records_json

    assert records_json is not None
    segs = sorted(Path(__file__).parent.joinpath("data").rglob("*.log"))
    assert segs
    batches = 0
    for seg in segs:
        with seg.open("rb") as f:
            if not seg.stat().st_size:
                continue
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            mv = memoryview(mm)
            try:
                for b in B.scan(mv):
                    if b.magic != 2 or b.is_control:
                        continue
                    try:
                        payload = B.v2_payload(mv, b, 1 << 28)
                    except ValueError:
                        continue
                    args = (payload, b.base_offset, b.first_timestamp, b.count, b.base_sequence)
                    for text in (None, "CreateTime"):
                        got = records_json(*args, text)
                        assert _same(got, py_records_json(*args, text))
                    batches += 1
                    del payload
            finally:
                mv.release()
                mm.close()
    assert batches > 0


# ---- jsonl_block: consume -o jsonl -------------------------------------------------------


def _message(rng: random.Random, i: int, topic: str, variant: str) -> object:
    from confluent_kafka import Message

    texts = [b"plain text", "é ✓ 😀".encode(), b"", b"x" * 300]
    value: bytes | None = rng.choice(texts) + b"%d" % i
    key: bytes | None = b"k%d" % i
    headers = None
    ts = (1, 1_700_000_000_000 + i)
    epoch = 4
    if variant == "unkeyed":
        key = None
    elif variant == "odd":
        pick = rng.randrange(12)
        if pick == 0:
            value = b'say "hi"'
        elif pick == 1:
            value = b"back\\slash"
        elif pick == 2:
            value = b"\x1f"
        elif pick == 3:
            value = "é".encode()[:1]
        elif pick == 4:
            value = b"\xed\xa0\x80"  # a surrogate: not UTF-8
        elif pick == 5:
            value = None
        elif pick == 6:
            key = None
        elif pick == 7:
            headers = [("h", b"1")]
        elif pick == 8:
            ts = (0, -1)
        elif pick == 9:
            ts = (2, 5)
        elif pick == 10:
            epoch = -1  # leader_epoch() None
        else:
            topic = "other"
    return Message(
        topic=topic,
        partition=rng.randrange(3),
        offset=rng.choice([i, 1 << 40]),
        key=key,
        value=value,
        headers=headers,
        timestamp=ts,
        leader_epoch=epoch,
    )


@needs_native
@pytest.mark.parametrize("variant", ["keyed", "unkeyed", "odd"])
def test_jsonl_block_in_c_matches_python(variant: str) -> None:
    from kctl.formatters.stream import TIMESTAMP_TYPES, py_jsonl_block

    assert jsonl_block is not None
    rng = random.Random(variant)
    taken = 0
    for _ in range(400):
        n = rng.choice([1, 2, 7])
        msgs = [_message(rng, i, "orders", variant) for i in range(n)]
        want = py_jsonl_block(msgs)
        assert jsonl_block(msgs, TIMESTAMP_TYPES) == want, msgs
        taken += want is not None
    assert taken > (0 if variant == "odd" else 399)
    assert jsonl_block([], TIMESTAMP_TYPES) is None


# ---- produce_chunk: produce's plain and keyed loop ------------------------------------------


class _Refusing:
    """A produce() that records its calls and raises ``exc`` at the given call numbers."""

    def __init__(self, refuse: dict[int, BaseException]) -> None:
        self.calls: list[tuple[object, ...]] = []
        self.refuse = refuse
        self.n = 0

    def __call__(self, *args: object) -> None:
        self.n += 1
        if self.n in self.refuse:
            raise self.refuse[self.n]
        self.calls.append(args)


@needs_native
def test_produce_chunk_in_c_calls_produce_as_the_python_loops_do() -> None:
    """The lines of a chunk as split_lines and Sender.plain/keyed hand them to produce(): empty
    lines as empty values, a line without the separator as a value alone, the first separator
    splitting key from value; an unterminated last piece left alone unless it is the end."""
    from kctl.produce.lines import split_lines

    assert produce_chunk is not None
    data = b"k1\tv1\nno separator\n\n\tempty key\nk\t\na\tb\tc\nk::v\nunfinished"
    end = data.rfind(b"\n") + 1
    ((lines, size),) = list(split_lines([data[:end]]))
    for sep in (b"\t", None, b"::"):
        want = []
        for line in lines:
            k, found, v = line.partition(sep) if sep else (b"", b"", line)
            want.append(("t", v, k) if found else ("t", line))
        keyed = sum(len(c) == 3 for c in want)
        p = _Refusing({})
        got = produce_chunk(p, "t", data, 0, end, sep, (BufferError,))
        assert p.calls == want
        assert got == (
            end,
            len(lines),
            size - keyed * len(sep or b""),
            len(lines) - keyed if sep else 0,
        )
    p = _Refusing({})
    got = produce_chunk(p, "t", data, end, len(data), b"\t", (BufferError,))
    assert got == (len(data), 1, len(b"unfinished"), 1) and p.calls == [("t", b"unfinished")]


@needs_native
def test_produce_chunk_in_c_stops_at_a_refused_line_and_propagates_the_rest() -> None:
    assert produce_chunk is not None
    from confluent_kafka import KafkaException, Producer

    data = b"k1\tv1\nno separator\n\n\tempty key\n"
    # A real client whose queue holds two records (no broker configured: they stay queued, and
    # no connection errors join them in len(), as a refused port's did now and then), so its
    # third produce() raises BufferError (queue full).
    producer = Producer({"queue.buffering.max.messages": 2, "log_level": 0})
    catch = (BufferError, KafkaException)
    stopped, records, nbytes, unkeyed = produce_chunk(
        producer.produce, "t", data, 0, len(data), b"\t", catch
    )
    # Stopped at the empty third line: nothing of it handed over; counts of what went before.
    assert data[stopped:].startswith(b"\n\tempty key") and records == 2
    assert nbytes == 4 + len(b"no separator") and unkeyed == 1
    assert len(producer) == 2
    producer.purge()
    assert producer.flush(5) == 0  # the purged records reported, the client empty
    p = _Refusing({1: KeyError("boom")})
    with pytest.raises(KeyError):
        produce_chunk(p, "t", data, 0, len(data), b"\t", (BufferError,))
    with pytest.raises(ValueError):
        produce_chunk(p, "t", data, 5, len(data) + 1, None, (BufferError,))
    with pytest.raises(TypeError):
        produce_chunk(p, "t", data, 0, len(data), b"", (BufferError,))


@pytest.mark.broker
def test_produce_through_the_c_loop_and_the_python_loop_delivers_the_same(
    kctl, new_topic, bootstrap, tmp_path
) -> None:
    """The same keyed file produced twice, once with KCTL_NATIVE=0: the same records on the
    topic and the same totals."""
    import json

    lines = [b"k%d\tvalue %d" % (i % 7, i) if i % 5 else b"unkeyed %d" % i for i in range(3000)]
    src = tmp_path / "in.txt"
    src.write_bytes(b"\n".join(lines) + b"\n")
    got = []
    for flag in ("1", "0"):
        topic = new_topic(partitions=3)
        run = kctl(
            "produce", topic, "--file", str(src), "--key-separator", "\t", "-o", "json",
            env={"KCTL_NATIVE": flag},
        )  # fmt: skip
        assert run.code == 0, run
        summary = json.loads(run.stdout)
        assert summary["delivered"] == 3000
        read = kctl("consume", topic, "--from-beginning", "--max-messages", "3000", "-o", "jsonl")
        assert read.code == 0, read
        # Keyed records land by the key's hash; unkeyed ones anywhere.
        recs = sorted(
            (d["key"] or "", d["value"], d["partition"] if d["key"] else -1)
            for d in map(json.loads, read.stdout.splitlines())
        )
        got.append((summary["bytes"], recs))
    assert got[0] == got[1]
    assert len(got[0][1]) == 3000
    assert got[0][0] == sum(len(line) for line in lines) - 2400  # the separators not counted


def test_kctl_native_producer_0_keeps_produce_on_confluent_kafka_and_the_c_loop() -> None:
    env = {**os.environ, "KCTL_NATIVE_PRODUCER": "0"}
    env.pop("KCTL_NATIVE", None)
    out = subprocess.run([sys.executable, "-c", _CHOICES], env=env, capture_output=True, text=True)
    built = chooser.load() is not None
    assert out.stdout.split() == [str(not built)] * 5 + ["True"], out.stderr


@needs_native
def test_the_c_producer_drives_the_librdkafka_confluent_kafka_loaded() -> None:
    """The very library confluent-kafka's cimpl links (its wheel's confluent_kafka.libs), not a
    second copy from the system, in the version confluent-kafka reports."""
    import confluent_kafka

    got = chooser.rdkafka_library()
    assert got is not None
    path, version = got
    libs = Path(confluent_kafka.__file__).resolve().parent.parent / "confluent_kafka.libs"
    assert Path(path).resolve().parent == libs.resolve()
    assert version == confluent_kafka.libversion()[0]


def _c_producer(**props: str) -> object:
    """kctl's C producer with no broker configured: its records stay queued, and no connection
    errors join them in len() (as a refused port's would)."""
    from confluent_kafka import KafkaError

    cls = chooser.producer()
    assert cls is not None
    config = {"log_level": "0", **props}
    return cls(list(config.items()), "t", [KafkaError.MSG_SIZE_TOO_LARGE])


@needs_native
def test_c_producer_counts_handed_refused_and_purged_records_exactly() -> None:
    """produce_lines hands each line to librdkafka: a line over message.max.bytes is refused by
    the client and counted failed (definite, no partition), handed over all the same; it stops
    with the queue-full error at the first line the full queue does not take (nothing of that
    line handed over); purged records come back as unknown."""
    p: Any = _c_producer(**{"queue.buffering.max.messages": "3", "message.max.bytes": "1000"})
    big = b"x" * 2000
    data = b"k1\tv1\n" + big + b"\nno separator\nk2\tv2\nk3\tv3\n"
    stopped, records, nbytes, unkeyed, err = p.produce_lines(data, 0, len(data), b"\t")
    assert err == -184  # RD_KAFKA_RESP_ERR__QUEUE_FULL
    assert data[stopped:] == b"k3\tv3\n" and records == 4 and unkeyed == 2
    assert nbytes == 4 + 2000 + len(b"no separator") + 4
    assert len(p) == 3
    assert p.error_count() == 1
    p.purge(True, True, False)
    assert p.flush(5) == 0
    t = p.tally()
    assert (t["failed"], t["unknown"]) == (1, 3)
    assert t["first_failed"] == 10  # MSG_SIZE_TOO_LARGE
    assert t["first_unknown"] == -152  # RD_KAFKA_RESP_ERR__PURGE_QUEUE
    assert t["spans"] == {} and t["partitions"] == {}  # never assigned a partition


@needs_native
def test_c_producer_refuses_a_bad_configuration_with_librdkafkas_reason() -> None:
    cls = chooser.producer()
    assert cls is not None
    with pytest.raises(RuntimeError, match="No such configuration property"):
        cls([("no.such.property", "1")], "t", [])
    with pytest.raises(RuntimeError, match="outside allowed range"):
        cls([("linger.ms", "-5")], "t", [])
    p: Any = _c_producer()
    with pytest.raises(TypeError):
        p.produce_lines(b"a\n", 0, 2, b"")
    with pytest.raises(ValueError):
        p.produce_lines(b"a\n", 0, 3, None)
