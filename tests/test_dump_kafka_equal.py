"""kctl dump-segment's default text equals Kafka's DumpLogSegments line for line, on a corpus of
real files written by a real cluster (tests/dump_corpus.py: every codec, idempotent and
transactional producers with commits and aborts, a cleaned compacted topic, several segments
per partition, classic, KIP-848 and share groups, __transaction_state, __share_group_state, __cluster_metadata with its
snapshots after topic/config/ACL/SCRAM/quota changes, producer snapshots, indexes).

One JVM per option set (``--files a,b,c``), one kctl run per option set, stdout compared line
by line. Files left out, each for a reason (docs/dump-segment.md lists them):
- directories of deleted topics (``*-delete``): their index is not trimmed and DumpLogSegments
  dies on it (NoSuchElementException), kctl reads them;
- ``*.deleted`` segments and the other non-segment files: DumpLogSegments ignores them.
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ENGINE, start_kafka_cluster

pytestmark = pytest.mark.skipif(
    ENGINE != "kafka", reason="needs Apache Kafka (its cluster writes the corpus, its tool reads)"
)

KNOWN = (".log", ".index", ".timeindex", ".txnindex", ".snapshot", ".checkpoint")

# Lines allowed to differ: (option set, kafka line, kctl line, reason). Empty: none do.
ALLOWED: list[tuple[str, str, str, str]] = []

# kctl as this interpreter runs it (the checkout under test, whatever the working directory).
KCTL = [sys.executable, "-m", "kctl"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from dump_corpus import build

    given = os.environ.get("KCTL_TEST_DUMP_CORPUS")  # a corpus kept from an earlier build
    if given:
        return Path(given)
    return build(
        tmp_path_factory.mktemp("corpus-cluster"),
        tmp_path_factory.mktemp("corpus"),
        start_kafka_cluster,
    )


def corpus_files(root: Path, within: str = "") -> list[str]:
    return sorted(
        str(p)
        for p in root.rglob("*")
        if p.is_file()
        and p.suffix in KNOWN
        and within in str(p)
        and not any(part.endswith("-delete") for part in p.parts)
    )


def dump_both(kafka_libs: Path, files: list[str], opts: list[str]) -> tuple[list[str], list[str]]:
    java = shutil.which("java") or "java"
    kafka = subprocess.run(
        [java, "-Xmx256m", "-cp", f"{kafka_libs}/*", "org.apache.kafka.tools.DumpLogSegments",
         "--files", ",".join(files), *opts],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert kafka.returncode == 0, kafka.stderr[-3000:]
    mine = subprocess.run(
        [*KCTL, "dump-segment", *files, *opts],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert mine.returncode == 0, mine.stderr[-3000:]
    return kafka.stdout.splitlines(), mine.stdout.splitlines()


# (id, DumpLogSegments options, which files: a path part, "" for all)
OPTION_SETS = [
    ("batches", [], ""),
    ("deep", ["--deep-iteration"], ""),
    ("data", ["--print-data-log"], ""),
    ("data-skip-metadata", ["--print-data-log", "--skip-record-metadata"], ""),
    ("offsets-decoder", ["--offsets-decoder"], "__consumer_offsets"),
    ("transaction-log-decoder", ["--transaction-log-decoder"], "__transaction_state"),
    ("share-group-state-decoder", ["--share-group-state-decoder"], "__share_group_state"),
    ("cluster-metadata-decoder", ["--cluster-metadata-decoder"], "__cluster_metadata"),
    ("cluster-metadata-bootstrap", ["--cluster-metadata-decoder"], "bootstrap.checkpoint"),
    ("verify-index-only", ["--verify-index-only"], ""),
    ("index-sanity-check", ["--index-sanity-check"], ""),
    ("max-bytes", ["--max-bytes", "3000"], ""),
    ("deep-skip-metadata", ["--deep-iteration", "--skip-record-metadata"], ""),
    ("deep-max-bytes", ["--deep-iteration", "--max-bytes", "5000"], ""),
    ("offsets-decoder-skip-metadata", ["--offsets-decoder", "--skip-record-metadata"],
     "__consumer_offsets"),
    ("cluster-metadata-decoder-skip-metadata",
     ["--cluster-metadata-decoder", "--skip-record-metadata"], "__cluster_metadata"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "opts", "within"), OPTION_SETS, ids=[o[0] for o in OPTION_SETS])
def test_text_equals_dump_log_segments(
    corpus: Path, kafka_libs: Path, name: str, opts: list[str], within: str
) -> None:
    files = corpus_files(corpus, within)
    assert files, f"no corpus files under {within!r}"
    kafka, mine = dump_both(kafka_libs, files, opts)
    allowed = {(k, c) for n, k, c, _ in ALLOWED if n == name}
    differing = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
        None, kafka, mine, autojunk=False
    ).get_opcodes():
        if tag == "equal":
            continue
        pairs = list(zip(kafka[i1:i2], mine[j1:j2], strict=False))
        extra = [(k, "") for k in kafka[i1 + len(pairs) : i2]] + [
            ("", c) for c in mine[j1 + len(pairs) : j2]
        ]
        differing += [p for p in pairs + extra if p not in allowed]
    assert not differing, (
        f"{len(differing)} line(s) differ from DumpLogSegments {' '.join(opts)} over "
        f"{len(files)} files:\n"
        + "\n".join(f"- kafka: {k[:400]}\n+ kctl:  {c[:400]}" for k, c in differing[:10])
    )
    assert len(kafka) > 0


def test_the_corpus_holds_what_it_should(corpus: Path, kafka_libs: Path) -> None:
    """What the comparison covers is really in the corpus (by Kafka's own reading)."""
    files = corpus_files(corpus)
    suffixes = {Path(f).suffix for f in files}
    assert suffixes >= set(KNOWN), suffixes
    assert any(f.endswith(".txnindex") and Path(f).stat().st_size for f in files)
    kafka, _ = dump_both(kafka_libs, files, ["--deep-iteration"])
    text = "\n".join(kafka)
    for codec in ("none", "gzip", "snappy", "lz4", "zstd"):
        assert f"compresscodec: {codec} " in text, codec
    for marker in ("endTxnMarker: COMMIT", "endTxnMarker: ABORT", "deleteHorizonMs: OptionalLong[",
                   "SnapshotHeader ", "SnapshotFooter ", "LeaderChange: ", "isTransactional: true",
                   "valueSize: -1"):  # fmt: skip
        assert marker in text, marker
    for topic in ("corpus-none", "corpus-idem", "corpus-compact"):
        assert sum(f"/{topic}-0/" in f and f.endswith(".log") for f in files) >= 2, topic
    meta, _ = dump_both(kafka_libs, corpus_files(corpus, "__cluster_metadata"),
                        ["--cluster-metadata-decoder"])  # fmt: skip
    meta_text = "\n".join(meta)
    for record in ("TOPIC_RECORD", "CONFIG_RECORD", "ACCESS_CONTROL_ENTRY_RECORD",
                   "USER_SCRAM_CREDENTIAL_RECORD", "CLIENT_QUOTA_RECORD", "FEATURE_LEVEL_RECORD",
                   "REMOVE_TOPIC_RECORD", "REGISTER_BROKER_RECORD", "PARTITION_CHANGE_RECORD"):  # fmt: skip
        assert f'"type":"{record}"' in meta_text, record
    offsets, _ = dump_both(kafka_libs, corpus_files(corpus, "__consumer_offsets"),
                           ["--offsets-decoder"])  # fmt: skip
    offsets_text = "\n".join(offsets)
    # classic, KIP-848 consumer and KIP-932 share group records
    for record_type in ("1", "2", "3", "5", "6", "7", "8", "10", "11", "12", "13", "14", "15"):
        assert f'key: {{"type":"{record_type}"' in offsets_text, record_type
    assert "payload: <DELETE>" in offsets_text
    share, _ = dump_both(kafka_libs, corpus_files(corpus, "__share_group_state"),
                         ["--share-group-state-decoder"])  # fmt: skip
    assert '"stateBatches":[{' in "\n".join(share)


_JAVA_DECODER = """
import java.io.*;
import java.nio.charset.StandardCharsets;
public class Utf8 { public static void main(String[] a) throws Exception {
  BufferedReader r = new BufferedReader(new InputStreamReader(System.in));
  String l; while ((l = r.readLine()) != null) {
    byte[] b = new byte[l.length() / 2];
    for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(l.substring(2 * i, 2 * i + 2), 16);
    StringBuilder sb = new StringBuilder();
    for (char c : new String(b, StandardCharsets.UTF_8).toCharArray()) sb.append(String.format("%04x", (int) c));
    System.out.println(sb);
  }}}
"""


def test_invalid_utf8_is_replaced_as_java_does(tmp_path: Path) -> None:
    """Payloads print as Java's new String(bytes, UTF_8): one U+FFFD per sequence Java rejects
    (Python's "replace" groups them differently), against the JVM on random byte strings."""
    import random

    from kctl.logfmt.kafka_json import java_utf8

    rng = random.Random(14)
    tricky = [0x41, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0,
              0xF4, 0xF5, 0xFF]  # fmt: skip
    cases = [bytes(rng.choice(tricky) for _ in range(rng.randint(1, 8))) for _ in range(3000)]
    source = tmp_path / "Utf8.java"
    source.write_text(_JAVA_DECODER)
    java = shutil.which("java") or "java"
    out = subprocess.run(
        [java, str(source)],
        input="".join(c.hex() + "\n" for c in cases),
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout.splitlines()  # fmt: skip
    assert len(out) == len(cases)
    for case, want in zip(cases, out, strict=True):
        got = java_utf8(case).encode("utf-16-be").hex()
        assert got == want, case.hex()


def _damage(segment: Path, into: Path) -> list[str] | None:
    """Copies of a real segment (three batches or more) and its indexes, damaged: 20 bytes of
    junk after the last batch, offset-index entries pointing at the wrong batch, time-index
    entries with a wrong and an out-of-order timestamp."""
    import struct

    log = segment.read_bytes()
    batches = []  # (position, last offset, max timestamp)
    pos = 0
    while pos + 61 <= len(log):
        base, size = struct.unpack_from(">qi", log, pos)
        delta = struct.unpack_from(">i", log, pos + 23)[0]
        max_ts = struct.unpack_from(">q", log, pos + 35)[0]
        batches.append((pos, base + delta, max_ts))
        pos += 12 + size
    if len(batches) < 3:
        return None
    base = int(segment.name.split(".")[0])
    (_, last0, _), (p1, last1, ts1), (_, last2, ts2) = batches[:3]
    stem = into / segment.name.split(".")[0]
    Path(f"{stem}.log").write_bytes(log + b"\0" * 7 + b"\1" * 13)
    Path(f"{stem}.index").write_bytes(
        b"".join(struct.pack(">ii", o - base, p1) for o in (last0, last1, last2))
    )
    Path(f"{stem}.timeindex").write_bytes(
        struct.pack(">qi", ts1 + 5, last1 - base)
        + struct.pack(">qi", ts2 - 100_000, last2 - base)
        + struct.pack(">qi", ts2, last2 - base)
    )
    return [f"{stem}.log", f"{stem}.index", f"{stem}.timeindex"]


@pytest.mark.parametrize("opts", [[], ["--verify-index-only"]], ids=["dump", "verify-index-only"])
def test_damaged_files_report_as_dump_log_segments(
    corpus: Path, kafka_libs: Path, tmp_path: Path, opts: list[str]
) -> None:
    """Junk after the last batch, index entries that do not match the log: the same stdout,
    and on stderr the same report blocks (kctl's own problem lines besides, and exit 3)."""
    segments = [Path(f) for f in corpus_files(corpus, "/corpus-") if f.endswith(".log")]
    files = next(filter(None, (_damage(s, tmp_path) for s in segments)), None)
    assert files, "no segment of the corpus topics with three batches"
    java = shutil.which("java") or "java"
    kafka = subprocess.run(
        [java, "-Xmx256m", "-cp", f"{kafka_libs}/*", "org.apache.kafka.tools.DumpLogSegments",
         "--files", ",".join(files), *opts],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    mine = subprocess.run([*KCTL, "dump-segment", *files, *opts], capture_output=True, text=True)
    assert kafka.returncode == 0 and mine.returncode == 3, (kafka.stderr, mine.stderr)
    assert mine.stdout.splitlines() == kafka.stdout.splitlines()
    assert "Found 20 invalid bytes at the end of" in mine.stdout
    report = [line for line in mine.stderr.splitlines() if not line.startswith("kctl: ")]
    assert report == kafka.stderr.splitlines()
    assert any(line.startswith("Mismatches in :") for line in report)
    assert any(line.startswith("Found out of order timestamp in :") for line in report)


def test_deep_text_fast_path_equals_the_general_path(corpus: Path) -> None:
    """--deep-iteration text takes the fast path (kctl.logfmt.fast.records_text) for ordinary
    batches; its lines equal the general path's (forced by --offsets) on the corpus segments,
    and (test above) DumpLogSegments'."""
    from kctl.dump import DumpOptions, dump
    from kctl.dump.model import Records, RecordsText

    logs = [f for f in corpus_files(corpus, "/corpus-") if f.endswith(".log")]
    kinds: dict[type, int] = {}
    for f in logs:
        for item in dump([Path(f)], DumpOptions(deep=True, text_records=True, raw_headers=True)):
            kinds[type(item)] = kinds.get(type(item), 0) + 1
    assert kinds.get(RecordsText, 0) >= 10 and kinds.get(Records, 0) >= 1, kinds
    fast = subprocess.run(
        [*KCTL, "dump-segment", *logs, "--deep-iteration"], capture_output=True, text=True
    )
    general = subprocess.run(
        [*KCTL, "dump-segment", *logs, "--deep-iteration", "--offsets", "0.."],
        capture_output=True, text=True,
    )  # fmt: skip
    assert fast.returncode == general.returncode == 0, (fast.stderr, general.stderr)
    assert fast.stdout == general.stdout
    # Spread over worker processes (transactions, control batches, every codec, compaction):
    # the same bytes, text and JSON lines.
    for opts in ([], ["-o", "jsonl"]):
        runs = [
            subprocess.run(
                [*KCTL, "dump-segment", *logs, "--deep-iteration", *opts],
                capture_output=True, text=True, env={**os.environ, "KCTL_DUMP_WORKERS": workers},
            )
            for workers in ("0", "2")
        ]  # fmt: skip
        assert runs[0].returncode == runs[1].returncode == 0, runs[1].stderr[-2000:]
        assert (runs[0].stdout, runs[0].stderr) == (runs[1].stdout, runs[1].stderr), opts


def _legacy_segment(magic: int, codec: int) -> bytes:
    """A message set of magic 0/1 as kafka-python's producer encodes it, with the offsets a
    broker gives it on disk (a compressed wrapper carries its last inner message's offset)."""
    import struct

    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
    for i in range(4):
        builder.append(
            i,
            timestamp=1_600_000_000_000 + i if magic else None,
            key=None if i == 0 else b"key",
            value=b"value-%d" % i,
        )
    data = bytes(builder.build())
    if codec:
        data = struct.pack(">q", 3) + data[8:]
    return data


def test_magic_0_and_1_segments_equal_dump_log_segments(
    kafka_libs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Message sets v0/v1 (Kafka 4 no longer writes them; kafka-python's encoder does), plain
    and compressed: the same lines as DumpLogSegments, batch level, deep and with data."""
    import cramjam
    import kafka.codec

    # kafka-python frames xerial snappy itself; it needs a raw compressor
    shim = type(
        "S", (), {"compress": staticmethod(lambda b: bytes(cramjam.snappy.compress_raw(b)))}
    )
    monkeypatch.setattr(kafka.codec, "snappy", shim)
    files = []
    for magic, codec in ((0, 0), (0, 1), (1, 0), (1, 1), (1, 2)):
        d = tmp_path / f"legacy-m{magic}-c{codec}-0"
        d.mkdir()
        seg = d / "00000000000000000000.log"
        seg.write_bytes(_legacy_segment(magic, codec))
        files.append(str(seg))
    for opts in ([], ["--deep-iteration"], ["--print-data-log"]):
        kafka, mine = dump_both(kafka_libs, files, opts)
        assert mine == kafka, opts
        assert any("isValid: true crc: " in line for line in kafka) or not opts


_JAVA_DOUBLES = """
import java.io.*;
public class Doubles { public static void main(String[] a) throws Exception {
  BufferedReader r = new BufferedReader(new InputStreamReader(System.in));
  String l; while ((l = r.readLine()) != null)
    System.out.println(Double.toString(Double.longBitsToDouble(Long.parseUnsignedLong(l, 16))));
}}
"""


def test_doubles_print_as_java_does(tmp_path: Path) -> None:
    """Quota values (float64 in ClientQuotaRecord) print as Java's Double.toString, against the
    JVM: whole numbers up to 2^53 and eighths, the values quotas take. (Java before 19 prints
    more digits than needed for some other values, e.g. 1.63308205114561792E17; kctl prints
    the shortest form, as Java 19 and later do.)"""
    import random
    import struct

    from kctl.logfmt.kafka_json import java_double

    rng = random.Random(14)
    values = [0.0, -0.0, 1.0, 1e7, 9999999.0, 1e-3, 9.99e-4, 2097152.0, 1e21, 0.5, 1.5e10]
    values += [float(rng.randint(-(1 << 53), 1 << 53)) for _ in range(400)]
    values += [float(rng.randint(0, 1 << 30)) for _ in range(300)]
    values += [rng.randint(-(1 << 20), 1 << 20) / 8 for _ in range(300)]
    source = tmp_path / "Doubles.java"
    source.write_text(_JAVA_DOUBLES)
    java = shutil.which("java") or "java"
    bits = [struct.unpack(">Q", struct.pack(">d", v))[0] for v in values]
    out = subprocess.run(
        [java, str(source)], input="".join(f"{b:x}\n" for b in bits),
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout.splitlines()  # fmt: skip
    assert len(out) == len(values)
    wrong = [(v, java_double(v), want) for v, want in zip(values, out, strict=True)
             if java_double(v) != want]  # fmt: skip
    assert not wrong, wrong[:10]
