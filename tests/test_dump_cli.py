"""kctl dump-segment and kctl offsets decode, run as an operator runs them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import FIXTURES

KRAFT = FIXTURES / "kafka-3.8-kraft-logs"
FOO = KRAFT / "foo-0" / "00000000000000000000.log"
META = KRAFT / "__cluster_metadata-0" / "00000000000000000000.log"


def test_text_output_matches_dump_log_segments_lines(offline_kctl) -> None:
    r = offline_kctl("dump-segment", str(FOO), "--deep-iteration", "--print-data-log")
    assert r.code == 0, r
    lines = r.stdout.splitlines()
    assert lines[0] == f"Dumping {FOO}" and lines[1] == "Log starting offset: 0"
    assert lines[2].startswith(
        "baseOffset: 0 lastOffset: 1 count: 2 baseSequence: 0 lastSequence: 1 producerId: 0"
    )
    assert "position: 0 CreateTime: 1725272040952 size: 80 magic: 2 compresscodec: none" in lines[2]
    assert lines[2].endswith("isvalid: true")
    assert (
        lines[3]
        == "| offset: 0 CreateTime: 1725272040411 keySize: -1 valueSize: 2 sequence: 0 headerKeys: [] payload: m1"
    )


def test_jsonl_is_one_object_per_batch_with_records_nested(offline_kctl) -> None:
    r = offline_kctl("dump-segment", str(META), "--deep-iteration", "-o", "jsonl")
    assert r.code == 0, r
    docs = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(docs) == 109 and sum(len(d["records"]) for d in docs) == 116
    assert docs[0]["records"][0]["control"]["type"] == "LEADER_CHANGE"
    assert {"base_offset", "last_offset", "crc", "is_valid", "codec", "producer_id"} <= set(docs[0])


def test_cluster_metadata_decoder_and_offsets_range(offline_kctl) -> None:
    r = offline_kctl(
        "dump-segment", str(META), "--cluster-metadata-decoder", "--offsets", "1..4", "-o", "json"
    )
    assert r.code == 0, r
    docs = json.loads(r.stdout)
    types = [rec["payload"]["type"] for d in docs for rec in d["records"]]
    assert types[:2] == ["BeginTransactionRecord", "FeatureLevelRecord"]


def test_corrupted_copy_exits_3_with_file_and_position(offline_kctl, tmp_path: Path) -> None:
    seg = tmp_path / "00000000000000000000.log"
    data = bytearray(META.read_bytes())
    data[500] ^= 0xFF
    seg.write_bytes(bytes(data[:8600]))
    r = offline_kctl("dump-segment", str(seg), "-o", "jsonl")
    assert r.code == 3, r
    assert f"{seg}: byte 384: crc: CRC mismatch" in r.stderr
    assert "byte 8543: truncated" in r.stderr and "Traceback" not in r.stderr
    problems = [json.loads(x) for x in r.stdout.splitlines() if '"problem"' in x]
    assert [p["problem"] for p in problems] == ["crc", "truncated"]
    strict = offline_kctl("dump-segment", str(seg), "--strict")
    assert (
        strict.code == 3 and strict.stderr.count("crc:") == 1 and "truncated" not in strict.stderr
    )


def test_index_beyond_the_segment_and_mismatch_are_reported(offline_kctl, tmp_path: Path) -> None:
    part = tmp_path / "__cluster_metadata-0"
    shutil.copytree(KRAFT / "__cluster_metadata-0", part)
    for f in part.iterdir():
        f.chmod(0o644)
    ok = offline_kctl(
        "dump-segment", str(part / "00000000000000000000.index"), "--verify-index-only"
    )
    assert ok.code == 0, ok
    (part / "00000000000000000000.index").write_bytes(
        bytes.fromhex("00000038 0000101b 00000040 00fffff0")
    )
    r = offline_kctl("dump-segment", str(part / "00000000000000000000.index"))
    assert r.code == 3, r
    assert "offset: 64 position: 16777200" in r.stdout
    assert "beyond the segment" in r.stderr
    tix = offline_kctl(
        "dump-segment", str(part / "00000000000000000000.timeindex"), "--index-sanity-check"
    )
    assert tix.code == 0 and "passed sanity check" in tix.stdout


def test_directory_summary_per_partition(offline_kctl) -> None:
    r = offline_kctl("dump-segment", str(KRAFT), "-o", "json")
    assert r.code == 0, r
    rows = {d["partition"]: d for d in json.loads(r.stdout)}
    assert rows["foo-0"]["records"] == 3 and rows["foo-0"]["producers"] == 1
    assert rows["__cluster_metadata-0"]["batches"] == 109
    assert rows["__cluster_metadata-0"]["last_offset"] == 115


def test_small_files_and_snapshot(offline_kctl) -> None:
    r = offline_kctl(
        "dump-segment",
        str(KRAFT / "foo-0" / "00000000000000000003.snapshot"),
        str(KRAFT / "bootstrap.checkpoint"),
        str(KRAFT / "__cluster_metadata-0" / "quorum-state"),
    )
    assert r.code == 0, r
    assert (
        "producerId: 0 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty"
        in r.stdout
    )
    assert "KRaft bootstrap snapshot" in r.stdout and "leaderEpoch: 2" in r.stdout


def test_missing_file_is_one_line_error(offline_kctl, tmp_path: Path) -> None:
    r = offline_kctl("dump-segment", str(tmp_path / "nope.log"))
    assert r.code == 1 and r.stderr.startswith("kctl: error: cannot read")


def test_offsets_decode_one_record(offline_kctl) -> None:
    key = (FIXTURES / "consumer-offsets-records" / "offset_commit-03.key").read_bytes().hex()
    value = (FIXTURES / "consumer-offsets-records" / "offset_commit-03.payload").read_bytes().hex()
    r = offline_kctl("offsets", "decode", "--key", key, "--value", value, "-o", "json")
    assert r.code == 0, r
    doc = json.loads(r.stdout)
    assert doc["key"]["data"]["topic"] == "t01" and doc["value"]["data"]["offset"] == 106
    bad = offline_kctl("offsets", "decode", "--key", "zz")
    assert bad.code == 2


def test_quorum_state_lists_show_as_json_not_python(offline_kctl):
    r = offline_kctl("dump-segment", str(KRAFT / "__cluster_metadata-0" / "quorum-state"))
    assert r.code == 0, r
    assert 'currentVoters: [{"voterId":1}]' in r.stdout.splitlines()
    assert "{'" not in r.stdout


def test_an_argument_that_is_not_a_kafka_file_is_an_error(offline_kctl, tmp_path):
    other = tmp_path / "notes.txt"
    other.write_text("root:x:0:0\n")
    r = offline_kctl("dump-segment", str(other))
    assert r.code == 1 and r.stdout == ""
    assert r.stderr.startswith(f"kctl: error: {other} is not a Kafka file kctl knows by its name (")
    assert "--type" in r.stderr and len(r.stderr.splitlines()) == 1
    forced = offline_kctl("dump-segment", "--type", "log", str(other))
    assert forced.code == 3  # read as a segment when asked: it is not one, and says so
