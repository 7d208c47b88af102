"""Decoder tests on bytes nobody on this project wrote: Kafka's own files (fixtures), kafka-python's
record builders, and batches librdkafka produced through the test broker, fetched back raw."""

from __future__ import annotations

import contextlib
import socket
import struct
from pathlib import Path

import pytest
from conftest import FIXTURES, wait_for
from hypothesis import given, settings
from hypothesis import strategies as st

from kctl.logfmt import batch as B
from kctl.logfmt.wire import read_uvarint, read_varint, write_uvarint, write_varint

KRAFT = FIXTURES / "kafka-3.8-kraft-logs"


def scan_all(data: bytes) -> tuple[list[B.Batch], list[B.Problem]]:
    items = list(B.scan(data))
    return (
        [i for i in items if isinstance(i, B.Batch)],
        [i for i in items if isinstance(i, B.Problem)],
    )


def test_cluster_metadata_segment_has_the_documented_batches_records_and_controls() -> None:
    data = (KRAFT / "__cluster_metadata-0" / "00000000000000000000.log").read_bytes()
    batches, problems = scan_all(data)
    assert problems == []
    assert len(batches) == 109
    assert sum(len(B.decode_records(data, b)[1]) for b in batches) == 116
    assert sum(b.is_control for b in batches) == 2
    assert all(b.is_valid and b.magic == 2 and b.codec == "none" for b in batches)
    first = B.records(data, batches[0])[0]
    control = B.control_record(first.key, first.value)
    assert control["type"] == "LEADER_CHANGE"
    assert control["data"]["leader_id"] == 1


def test_topic_segment_decodes_values_sequences_and_producer() -> None:
    data = (KRAFT / "foo-0" / "00000000000000000000.log").read_bytes()
    batches, problems = scan_all(data)
    assert problems == [] and len(batches) == 2
    first = batches[0]
    assert (first.base_offset, first.last_offset, first.count) == (0, 1, 2)
    assert (first.producer_id, first.producer_epoch, first.base_sequence) == (0, 0, 0)
    assert first.last_sequence == 1 and first.position == 0 and first.size == 80
    assert first.timestamp_type == "CreateTime" and first.max_timestamp == 1725272040952
    recs = [r for b in batches for r in B.records(data, b)]
    assert [r.value for r in recs] == [b"m1", b"m2", b"m3"]
    assert [r.offset for r in recs] == [0, 1, 2]
    assert [r.sequence for r in recs] == [0, 1, 2]
    assert all(r.key is None for r in recs)


def test_bootstrap_checkpoint_has_snapshot_header_and_footer() -> None:
    data = (KRAFT / "bootstrap.checkpoint").read_bytes()
    batches, _ = scan_all(data)
    kinds = [
        B.control_record(r.key, r.value)["type"]
        for b in batches
        if b.is_control
        for r in B.records(data, b)
    ]
    assert kinds == ["SNAPSHOT_HEADER", "SNAPSHOT_FOOTER"]


def _v2_batch(codec: int = 0, **kw: object) -> bytes:
    from kafka.record.default_records import DefaultRecordBatchBuilder

    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=codec,
        is_transactional=kw.get("transactional", False),
        producer_id=kw.get("pid", -1),
        producer_epoch=kw.get("epoch", -1),
        base_sequence=kw.get("seq", -1),
        batch_size=1 << 20,
    )
    for i in range(5):
        builder.append(
            i,
            timestamp=1700000000000 + i,
            key=f"k{i}".encode(),
            value=b"v" * (i * 50),
            headers=[("h", b"x"), ("trace", None)],
        )
    return bytes(builder.build())


def test_kafka_python_v2_batches_with_headers_gzip_and_transactions() -> None:
    for codec in (0, 1):
        data = _v2_batch(codec, transactional=True, pid=42, epoch=3, seq=10)
        batches, problems = scan_all(data)
        assert problems == [] and len(batches) == 1
        b = batches[0]
        assert b.codec == ("none", "gzip")[codec] and b.is_valid and b.is_transactional
        assert (b.producer_id, b.producer_epoch, b.base_sequence, b.last_sequence) == (
            42,
            3,
            10,
            14,
        )
        recs = B.records(data, b)
        assert [r.key for r in recs] == [b"k0", b"k1", b"k2", b"k3", b"k4"]
        assert [len(r.value or b"") for r in recs] == [0, 50, 100, 150, 200]
        assert recs[3].headers == [("h", b"x"), ("trace", None)]
        assert [r.timestamp for r in recs][-1] == 1700000000004


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [0, 1, 2])
def test_kafka_python_message_sets_v0_v1_plain_and_compressed(
    magic: int, codec: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import cramjam
    import kafka.codec
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    if codec == 2:  # kafka-python frames xerial snappy itself; give it a raw snappy compressor
        shim = type(
            "S", (), {"compress": staticmethod(lambda b: bytes(cramjam.snappy.compress_raw(b)))}
        )
        monkeypatch.setattr(kafka.codec, "snappy", shim)
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
    for i in range(4):
        builder.append(
            i,
            timestamp=1600000000000 + i if magic else None,
            key=None if i == 0 else b"key",
            value=b"value-%d" % i,
        )
    data = bytes(builder.build())
    if magic == 1 and codec:
        # A v1 wrapper on disk carries the absolute offset of its last inner message (the broker
        # sets it; the producer wrote 0); inner offsets are relative. The CRC does not cover it.
        data = struct.pack(">q", 3) + data[8:]
    batches, problems = scan_all(data)
    assert problems == []
    recs = [r for b in batches for r in B.records(data, b)]
    assert all(b.magic == magic and b.is_valid for b in batches)
    assert [r.offset for r in recs] == [0, 1, 2, 3]
    assert [r.value for r in recs] == [b"value-0", b"value-1", b"value-2", b"value-3"]
    assert recs[0].key is None and recs[1].key == b"key"
    assert all(r.is_valid for r in recs)
    if magic == 1:
        assert [r.timestamp for r in recs] == [1600000000000 + i for i in range(4)]
    if codec:
        assert len(batches) == 1 and batches[0].codec == ("none", "gzip", "snappy")[codec]


def test_corrupted_copy_reports_crc_and_truncation_and_resumes(tmp_path: Path) -> None:
    data = bytearray((KRAFT / "__cluster_metadata-0" / "00000000000000000000.log").read_bytes())
    data[500] ^= 0xFF  # inside a batch: CRC no longer holds
    data[2000:2007] = b"garbage"
    data = data[:8600]  # last batch cut short
    batches, problems = scan_all(bytes(data))
    kinds = [p.kind for p in problems]
    assert kinds.count("crc") == 2 and kinds[-1] == "truncated"
    assert problems[-1].position == 8543
    assert len([b for b in batches if b.is_valid]) == 106


def test_broken_length_resyncs_at_the_next_valid_batch() -> None:
    data = bytearray((KRAFT / "__cluster_metadata-0" / "00000000000000000000.log").read_bytes())
    data[8:12] = struct.pack(">i", 10_000_000)  # first batch claims to run past the file
    batches, problems = scan_all(bytes(data))
    assert problems[0].position == 0 and problems[0].kind == "truncated"
    assert problems[0].resumed_at == 91
    assert len(batches) == 108


def test_unknown_magic_is_reported() -> None:
    data = bytearray((KRAFT / "foo-0" / "00000000000000000000.log").read_bytes())
    data[16] = 7
    _, problems = scan_all(bytes(data))
    assert problems[0].kind == "magic" and "unknown magic 7" in problems[0].reason
    assert problems[0].resumed_at == 80


def test_payload_that_does_not_decompress_is_a_decode_error() -> None:
    import crc32c

    data = bytearray(_v2_batch(1))
    data[70:80] = b"\x00" * 10  # break the gzip stream, then make the CRC hold again
    data[17:21] = struct.pack(">I", crc32c.crc32c(bytes(data[21:])))
    (b,), problems = scan_all(bytes(data))
    assert problems == [] and b.is_valid
    with pytest.raises(ValueError, match="does not decompress"):
        B.decode_records(bytes(data), b)


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_varint_round_trips(value: int) -> None:
    raw = write_varint(value)
    assert read_varint(raw, 0) == (value, len(raw))


@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_unsigned_varint_round_trips(value: int) -> None:
    raw = write_uvarint(value)
    assert read_uvarint(raw, 0) == (value, len(raw))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_any_bytes_give_a_report_never_a_crash(data: bytes) -> None:
    for item in B.scan(data):
        if isinstance(item, B.Batch):
            with contextlib.suppress(ValueError):
                B.decode_records(data, item)


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=149), st.integers(min_value=0, max_value=255))
def test_any_single_byte_damage_gives_a_report_never_a_crash(pos: int, value: int) -> None:
    data = bytearray((KRAFT / "foo-0" / "00000000000000000000.log").read_bytes())
    data[pos] = value
    for item in B.scan(bytes(data)):
        if isinstance(item, B.Batch):
            with contextlib.suppress(ValueError):
                B.decode_records(bytes(data), item)


# --- produced by librdkafka through the broker, fetched back raw over the protocol -----------


def fetch_raw(bootstrap: str, topic: str, partition: int = 0) -> bytes:
    """The records bytes of one Fetch (v4) response, as the partition's leader sends them."""
    from confluent_kafka.admin import AdminClient
    from kafka.protocol.old.fetch import FetchRequest_v4, FetchResponse_v4

    md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=10)
    leader = md.brokers[md.topics[topic].partitions[partition].leader]
    host, port = leader.host, leader.port
    req = FetchRequest_v4(-1, 500, 1, 16 << 20, 0, [(topic, [(partition, 0, 16 << 20)])])
    body = req.encode()
    head = struct.pack(">hhih", 1, 4, 7, 4) + b"kctl"
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        msg = head + bytes(body)
        sock.sendall(struct.pack(">i", len(msg)) + msg)
        size = struct.unpack(">i", _recv(sock, 4))[0]
        payload = _recv(sock, size)
    resp = FetchResponse_v4.decode(payload[4:])
    parts = resp.responses[0][1] if hasattr(resp, "responses") else resp.topics[0][1]
    return bytes(parts[0][-1])


def _recv(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("broker closed the connection")
        buf += chunk
    return buf


@pytest.mark.broker
def test_librdkafka_batches_for_every_codec_idempotent_and_transactional(
    bootstrap: str, new_topic, tmp_path: Path
) -> None:
    from confluent_kafka import Producer

    topic = new_topic(partitions=1, prefix="dump")
    for codec in ("gzip", "snappy", "lz4", "zstd"):
        p = Producer(
            {
                "bootstrap.servers": bootstrap,
                "compression.type": codec,
                "enable.idempotence": True,
                "linger.ms": 50,
            }
        )
        for i in range(20):
            p.produce(
                topic,
                key=b"k%d" % i,
                value=(codec * 20).encode(),
                partition=0,
                headers=[("codec", codec.encode())],
            )
        assert p.flush(20) == 0
    tp = Producer(
        {
            "bootstrap.servers": bootstrap,
            "transactional.id": f"tx-{topic}",
            "compression.type": "none",
        }
    )
    tp.init_transactions(20)
    tp.begin_transaction()
    tp.produce(topic, value=b"in-txn", partition=0)
    tp.commit_transaction(20)

    # commit_transaction returns once the coordinator has decided; it writes the COMMIT marker
    # to the partition after that: fetch until the marker is there (bounded).
    def with_marker() -> bool:
        nonlocal raw
        raw = fetch_raw(bootstrap, topic)
        return any(b.is_control for b in scan_all(raw)[0])

    raw = b""
    wait_for(with_marker, "the COMMIT marker on the partition", 30, 0.1)
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(raw)
    batches, problems = scan_all(raw)
    assert problems == [] and all(b.is_valid for b in batches)
    assert {"gzip", "snappy", "lz4", "zstd"} <= {b.codec for b in batches}
    data_recs = [(b, r) for b in batches if not b.is_control for r in B.records(raw, b)]
    assert len(data_recs) == 81
    assert [r.offset for _, r in data_recs] == list(range(81)) or len(
        {r.offset for _, r in data_recs}
    ) == 81
    for b, r in data_recs[:80]:
        assert r.value == (b.codec * 20).encode() and r.headers == [("codec", b.codec.encode())]
        assert b.producer_id >= 0 and b.base_sequence >= 0
    txn = [b for b in batches if b.is_transactional]
    assert any(not b.is_control for b in txn)
    markers = [
        B.control_record(r.key, r.value) for b in txn if b.is_control for r in B.records(raw, b)
    ]
    assert markers and markers[-1]["type"] == "COMMIT" and "coordinator_epoch" in markers[-1]


def test_v2_headers_walk_gives_the_batches_scan_gives_and_stops_where_scan_must_take_over() -> None:
    data = (KRAFT / "__cluster_metadata-0" / "00000000000000000000.log").read_bytes()
    batches, _ = scan_all(data)
    heads, stop, cut = B.v2_headers(memoryview(data), 0, len(data))
    assert (stop, cut) == (len(data), 0)
    assert [B.v2_batch(pos, f, f[4]) for pos, f in heads] == batches
    # A cut batch: the walk stops before it and says how big it is (at least a header).
    last = batches[-1]
    heads, stop, cut = B.v2_headers(memoryview(data), 0, len(data) - 1)
    assert (len(heads), stop, cut) == (len(batches) - 1, last.position, last.size)
    heads, stop, cut = B.v2_headers(memoryview(data), 0, last.position + 20)
    assert (stop, cut) == (last.position, B.V2_HEADER)
    # A bad checksum: the walk stops there with nothing cut (scan reports it).
    damaged = bytearray(data)
    damaged[500] ^= 0xFF
    heads, stop, cut = B.v2_headers(memoryview(damaged), 0, len(damaged))
    assert stop <= 500 < stop + batches[len(heads)].size and cut == 0
