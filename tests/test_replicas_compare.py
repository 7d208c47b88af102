"""``replicas compare`` on copies of real Kafka partition directories (tests/data), with
divergence injected into the copies: a flipped byte, a truncated tail, a missing segment."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import FIXTURES

from kctl.replicas import compare as C

LOGS = FIXTURES / "kafka-3.8-kraft-logs"
META = LOGS / "__cluster_metadata-0"  # 109 batches, offsets 0..115, one segment
SEGMENT = "00000000000000000000.log"


def copy(tmp_path: Path, name: str, src: Path = META) -> Path:
    dst = tmp_path / name / src.name
    shutil.copytree(src, dst)
    for f in dst.iterdir():
        f.chmod(0o644)
    return dst


def batches(d: Path) -> list[C.BatchKey]:
    return C.read_partition_dir(d).batches


def split_segments(d: Path, at_offsets: list[int]) -> None:
    """Roll the segment at batch boundaries, as a broker does: the same bytes, in files named
    after the base offset of their first batch."""
    keys = batches(d)
    data = (d / SEGMENT).read_bytes()
    cuts = [next(k.position for k in keys if k.base_offset == o) for o in at_offsets]
    bounds = [0, *cuts, len(data)]
    (d / SEGMENT).unlink()
    for base, lo, hi in zip([0, *at_offsets], bounds, bounds[1:], strict=False):
        (d / f"{base:020d}.log").write_bytes(data[lo:hi])


def by_replica(results: list[C.ReplicaComparison]) -> dict[str, C.ReplicaComparison]:
    return {Path(r.replica).parent.name: r for r in results}


def test_identical_copies_compare_equal(tmp_path):
    a, b, c = (copy(tmp_path, n) for n in ("b1", "b2", "b3"))
    results = C.compare([C.read_partition_dir(x) for x in (a, b, c)])
    assert [r.status for r in results] == ["reference", "identical", "identical"]
    assert all(r.batches == 109 and r.log_end_offset == 116 for r in results)


def test_flipped_byte_is_found_at_its_batch_offset(tmp_path):
    a, b = copy(tmp_path, "b1"), copy(tmp_path, "b2")
    victim = next(k for k in batches(b) if k.base_offset == 55)
    seg = b / SEGMENT
    data = bytearray(seg.read_bytes())
    data[victim.position + victim.size - 3] ^= 0x01  # inside the batch's records
    seg.write_bytes(bytes(data))
    results = by_replica(C.compare([C.read_partition_dir(a), C.read_partition_dir(b)]))
    r = results["b2"]
    assert r.status == "diverged" and r.first_divergent_offset == 55
    assert "offset 55" in r.differences[0].reason and "corrupt" in r.differences[0].reason
    assert results["b1"].status == "reference"


def test_truncated_tail_is_reported_where_the_replica_ends(tmp_path):
    a, b = copy(tmp_path, "b1"), copy(tmp_path, "b2")
    last = batches(b)[-1]
    seg = b / SEGMENT
    seg.write_bytes(seg.read_bytes()[: last.position + 20])  # cut inside the last batch
    r = by_replica(C.compare([C.read_partition_dir(a), C.read_partition_dir(b)]))["b2"]
    assert r.status == "truncated"
    assert r.first_divergent_offset == last.base_offset
    assert r.log_end_offset == last.base_offset
    assert any(f"the reference at {last.last_offset + 1}" in d.reason for d in r.differences)


def test_missing_middle_segment_is_found_at_its_first_offset(tmp_path):
    a, b = copy(tmp_path, "b1"), copy(tmp_path, "b2")
    split_segments(a, [40, 80])
    split_segments(b, [40, 80])
    assert C.compare([C.read_partition_dir(a), C.read_partition_dir(b)])[1].status == "identical"
    (b / f"{40:020d}.log").unlink()
    results = C.compare([C.read_partition_dir(a), C.read_partition_dir(b)])
    r = results[1]
    assert r.status == "missing-segment" and r.first_divergent_offset == 40
    assert r.differences[0].offset == 40 and "offsets 40-79" in r.differences[0].reason
    assert r.segments == 2


def test_replica_with_other_segment_boundaries_is_identical(tmp_path):
    a, b = copy(tmp_path, "b1"), copy(tmp_path, "b2")
    split_segments(b, [30])  # followers roll segments on their own schedule
    assert C.compare([C.read_partition_dir(a), C.read_partition_dir(b)])[1].status == "identical"


def test_cli_exit_codes_and_json(offline_kctl, tmp_path):
    a, b = copy(tmp_path, "b1", LOGS / "foo-0"), copy(tmp_path, "b2", LOGS / "foo-0")
    r = offline_kctl("replicas", "compare", str(a), str(b))
    assert r.code == 0, r
    seg = b / SEGMENT
    data = bytearray(seg.read_bytes())
    data[-2] ^= 0xFF  # inside the second batch (offset 2)
    seg.write_bytes(bytes(data))
    r = offline_kctl("replicas", "compare", str(a), str(b), "-o", "json")
    assert r.code == 3, r
    doc = json.loads(r.stdout)
    assert doc["reference"] == str(a)
    assert [x["status"] for x in doc["replicas"]] == ["reference", "diverged"]
    assert doc["replicas"][1]["first_divergent_offset"] == 2
    assert "differ" in r.stderr


def test_cli_rejects_one_dir_and_non_partition_dirs(offline_kctl, tmp_path):
    r = offline_kctl("replicas", "compare", str(META))
    assert r.code == 2 and "at least two" in r.stderr
    r = offline_kctl("replicas", "compare", str(META), str(tmp_path))
    assert r.code == 1 and r.stderr.startswith("kctl: error:") and "no segment" in r.stderr


def test_directories_whose_log_files_are_not_segments_are_not_partition_directories(
    offline_kctl, tmp_path
):
    # /tmp-like: *.log files that are no Kafka segment (were compared as corrupt replicas).
    for name in ("x", "y"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "build.log").write_text("make: *** [all] Error 1\n")
        (tmp_path / name / "0.log").write_text("not twenty digits\n")
    x, y = tmp_path / "x", tmp_path / "y"
    r = offline_kctl("replicas", "compare", str(x), str(y))
    assert r.code == 1 and r.stdout == "", r
    assert r.stderr.strip().splitlines() == [
        f"kctl: error: {x} is not a partition directory "
        "(no segment file named like 00000000000000000000.log)"
    ], r
    good = copy(tmp_path, "b1", LOGS / "foo-0")
    r = offline_kctl("replicas", "compare", str(good), str(y))
    assert r.code == 1 and r.stdout == "" and f"{y} is not a partition directory" in r.stderr, r
    r = offline_kctl("replicas", "compare", str(good), str(tmp_path / "absent"))
    assert r.code == 1 and "no directory" in r.stderr and r.stdout == "", r
    # A real partition directory with a stray log file beside its segments compares as before.
    (good / "kafka-server.log").write_text("INFO started\n")
    other = copy(tmp_path, "b2", LOGS / "foo-0")
    r = offline_kctl("replicas", "compare", str(good), str(other), "-o", "json")
    assert r.code == 0, r
    assert [x["status"] for x in json.loads(r.stdout)["replicas"]] == ["reference", "identical"]
