"""Every file kctl reads as input goes through one reader (kctl/inputs.py, docs/limits.md): a
directory, /dev/zero, a FIFO without a writer, a missing path, a file that is not UTF-8 and
one over its limit each end in one ``kctl: error:`` line naming the option or the path, exit
1 or 2, nothing on stdout, and no hang.

The options are found in the Typer command tree (path-typed options and those whose name says
file, json, snapshot or config), so a new one is covered, or must be classified here as an
output or as not read by kctl. No cluster: the address points nowhere, so a file that got
through would end in a connection error, which names neither the option nor the path (the
last test, of an output file, runs on the cluster)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import kctl_environment

from kctl import inputs
from kctl.errors import KctlError, UsageError

NOWHERE = "127.0.0.1:1"
ROOT = Path(__file__).resolve().parents[1]
SEGMENT = ROOT / "tests/data/kafka-3.8-kraft-logs/__cluster_metadata-0/00000000000000000000.log"

# (command, option) -> (the arguments that reach the read, the kind of the file). "{}" is
# replaced by the hostile path. Every such read happens before kctl connects.
INPUT_FILES: dict[tuple[str, str], tuple[list[str], inputs.Kind]] = {
    ("acls add", "--from-file"): (["--from-file", "{}"], inputs.ACL),
    ("groups reset-offsets", "--from-file"): (["g", "--from-file", "{}"], inputs.OFFSETS),
    ("partitions elect-leaders", "--from-file"): (
        ["--preferred", "--from-file", "{}"],
        inputs.PLAN,
    ),
    ("partitions reassign cancel", "--file"): (["--file", "{}"], inputs.PLAN),
    ("partitions reassign execute", "--file"): (["--file", "{}"], inputs.PLAN),
    ("partitions reassign verify", "--file"): (["--file", "{}"], inputs.PLAN),
    ("profile add", "--sasl-password-file"): (
        ["p", "--bootstrap-servers", "h:1", "--sasl-password-file", "{}"],
        inputs.SECRET,
    ),
    ("profile add", "--key-password-file"): (
        ["p", "--bootstrap-servers", "h:1", "--key-password-file", "{}"],
        inputs.SECRET,
    ),
    ("records delete", "--offsets-json"): (["--offsets-json", "{}", "--yes"], inputs.OFFSETS),
    ("replicas validate", "--snapshot"): (["--snapshot", "{}"], inputs.SNAPSHOT),
    ("partitions reassign generate", "--from-snapshot"): (
        ["--from-snapshot", "{}"],
        inputs.SNAPSHOT,
    ),
    ("tokens renew", "--hmac-file"): (["--hmac-file", "{}"], inputs.SECRET),
    ("tokens expire", "--hmac-file"): (["--hmac-file", "{}", "--yes"], inputs.SECRET),
    ("users set-password", "--password-file"): (["u", "--password-file", "{}"], inputs.SECRET),
    ("", "--command-config"): (["--command-config", "{}", "topics", "list"], inputs.PROPERTIES),
    ("schemas register", "path"): (["s", "{}", "--type", "avro"], inputs.SCHEMA),
    ("schemas check", "path"): (["s", "{}", "--type", "avro"], inputs.SCHEMA),
}
# Found in the tree but not an input file kctl reads whole, each with why.
NOT_INPUT_FILES = {
    ("analytics lag", "--record"): "an output (samples appended)",
    ("analytics lag", "--out"): "an output",
    ("analytics lag", "--plot"): "an output",
    ("analytics lag", "inputs"): "Spark's input; each named file is checked regular",
    ("groups lag", "--record"): "an output",
    ("partitions reassign generate", "--current-file"): "an output",
    ("partitions reassign generate", "--report"): "an output",
    ("tokens create", "--hmac-file"): "an output",
    ("metadata image", "--snapshot-json"): "an output",
    ("metadata image", "directory"): "a directory, walked",
    ("replicas compare", "dirs"): "directories, walked",
    ("dump-segment", "paths"): "segments: mapped or streamed, no cap (test_dump_inputs below)",
    ("produce", "--file"): "streamed line by line: FIFOs allowed, lines capped (test_produce)",
    ("profile add", "--ca-file"): "a path stored in the profile, read by librdkafka",
    ("profile add", "--cert-file"): "a path stored in the profile, read by librdkafka",
    ("profile add", "--key-file"): "a path stored in the profile, read by librdkafka",
    ("profile add", "--registry-ca-file"): "a path stored in the profile, read by ssl",
    ("profile add", "--registry-cert-file"): "a path stored in the profile, read by ssl",
    ("profile add", "--registry-key-file"): "a path stored in the profile, read by ssl",
    ("topics create", "--config"): "key=value, not a file",
    ("quorum add-controller", "--directory-id"): "an id, not a path",
    ("quorum remove-controller", "--directory-id"): "an id, not a path",
    ("partitions move-dir", "--to-dir"): "a broker's log dir, not read by kctl",
    ("schemas export", "directory"): "an output directory",
    ("schemas import", "directory"): "a directory: its index.json and schema files read through "
    "kctl.inputs (test_schemas_cli)",
    ("", "--profile"): "a profile's name",
    ("local up", "--admin-profile"): "a profile's name",
}
WORDS = ("file", "json", "snapshot", "config", "path", "dir", "inputs", "out", "record", "plot")
NOT_FILES = {"--kafka-json", "--log-dirs", "--skip-record-metadata", "--plot-groups", "--type",
             "--export", "--num-records", "--output", "--timeout", "--record-size", "--idle-timeout",
             "--stall-timeout", "--dir-throttle"}  # fmt: skip


def file_options() -> set[tuple[str, str]]:
    """(command, option) of every parameter of the tree that may name a file (the root's
    global options under command "")."""
    import typer.main

    from kctl import cli

    root = typer.main.get_command(cli.register(None))
    found: set[tuple[str, str]] = set()

    def params(cmd: object, path: str) -> None:
        for p in getattr(cmd, "params", []):
            if p.name in ("help", "version") or getattr(p, "is_flag", False):
                continue
            longs = [o for o in p.opts if o.startswith("--")]
            name = longs[0] if longs else p.name
            if name in NOT_FILES:
                continue
            if getattr(p.type, "name", "") == "path" or any(w in p.name for w in WORDS):
                found.add((path, name))

    def walk(cmd: object, path: tuple[str, ...]) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, (*path, name))
        else:
            params(cmd, " ".join(path))

    walk(root, ())
    params(root, "")
    return found


def test_every_file_option_is_classified() -> None:
    unknown = file_options() - set(INPUT_FILES) - set(NOT_INPUT_FILES)
    assert not unknown, f"classify in INPUT_FILES or NOT_INPUT_FILES: {sorted(unknown)}"
    gone = (set(INPUT_FILES) | set(NOT_INPUT_FILES)) - file_options()
    assert not gone, f"no longer in the command tree: {sorted(gone)}"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    base = tmp_path_factory.mktemp("hostile")
    os.mkfifo(base / "fifo")
    (base / "latin1").write_bytes(b"caf\xe9=1\n")
    with open(base / "huge", "wb") as f:
        f.truncate(inputs.SNAPSHOT.limit + 1)  # sparse: over every limit, no disk used
    return {
        "directory": bytes(base),
        "/dev/zero": b"/dev/zero",
        "fifo": bytes(base / "fifo"),
        "missing": bytes(base / "missing"),
        "not UTF-8": bytes(base / "latin1"),
        "over the limit": bytes(base / "huge"),
        "a name not UTF-8": bytes(base) + b"/bad\xff\xfe",
    }


def run(args: list[bytes], tmp: Path, timeout: float = 20) -> tuple[int, bytes, bytes]:
    env = kctl_environment(KCTL_CONFIG=str(tmp / "config.yaml"))
    proc = subprocess.run(
        [sys.executable, "-m", "kctl", "--bootstrap-server", NOWHERE, "--timeout", "2", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        timeout=timeout,  # a FIFO that blocked the read: TimeoutExpired fails the test
    )
    return proc.returncode, proc.stdout, proc.stderr


def argv(command: str, template: list[str], path: bytes) -> list[bytes]:
    words = [w.encode() for w in command.split()]
    return [*words, *(path if a == "{}" else a.encode() for a in template)]


@pytest.mark.parametrize("case", sorted(INPUT_FILES), ids=" ".join)
def test_hostile_input_files(case: tuple[str, str], hostile: dict[str, bytes], tmp_path: Path):
    command, _ = case
    template, kind = INPUT_FILES[case]
    for label, path in hostile.items():
        code, out, err = run(argv(command, template, path), tmp_path)
        lines = err.decode("utf-8", "backslashreplace").splitlines()
        shown = os.fsdecode(path).encode("utf-8", "backslashreplace").decode()
        assert code in (1, 2), (label, code, lines)
        assert out == b"", (label, out)
        assert len(lines) == 1 and lines[0].startswith("kctl: error: "), (label, lines)
        assert shown in lines[0], (label, lines)
        if label == "over the limit":
            assert inputs.size_text(kind.limit or 0) in lines[0], lines
        if label == "not UTF-8":
            assert "offset 3" in lines[0], lines


def test_dump_inputs(hostile: dict[str, bytes], tmp_path: Path) -> None:
    """dump-segment: /dev/zero and a FIFO are refused at once; no cap on a segment's size."""
    for label in ("/dev/zero", "fifo", "missing"):
        code, out, err = run([b"dump-segment", hostile[label]], tmp_path)
        assert code == 1 and out == b"", (label, err)
        assert err.startswith(b"kctl: error: ") and hostile[label] in err, err
    code, out, err = run([b"dump-segment", str(SEGMENT).encode()], tmp_path)
    assert code == 0, err


def test_kctl_config_not_a_regular_file(hostile: dict[str, bytes], tmp_path: Path) -> None:
    """KCTL_CONFIG naming /tmp is "a directory" (not "unsafe, mode 1777"); a profile file that
    is not UTF-8 or not YAML is one line naming it."""
    (tmp_path / "bad.yaml").write_text("profiles: [\n")
    cases = {
        "/tmp": "profile file /tmp is a directory",
        "/dev/zero": "profile file /dev/zero is a character device",
        os.fsdecode(hostile["not UTF-8"]): "is not UTF-8 text (undecodable byte at offset 3)",
        str(tmp_path / "bad.yaml"): f"corrupt profile file {tmp_path / 'bad.yaml'} (line 2",
    }
    for config, expected in cases.items():
        proc = subprocess.run(
            [sys.executable, "-m", "kctl", "profile", "list"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env=kctl_environment(KCTL_CONFIG=config),
            timeout=20,
        )
        assert proc.returncode == 1 and proc.stdout == "", (config, proc.stderr)
        assert proc.stderr.startswith("kctl: error: ") and expected in proc.stderr, proc.stderr
        assert len(proc.stderr.splitlines()) == 1, proc.stderr


def test_a_file_name_not_utf8_is_read(tmp_path: Path) -> None:
    """Paths stay bytes: --command-config under a name that is not UTF-8 is read (the run then
    fails on the unreachable address, not on the file)."""
    name = bytes(tmp_path) + b"/client\xff.properties"
    with open(name, "wb") as f:
        f.write(b"client.id=kctl-test\n")
    code, _, err = run([b"--command-config", name, b"topics", b"list"], tmp_path)
    assert code == 1 and b"cannot connect" in err, err


def test_reader_limits_hold_while_reading(tmp_path: Path) -> None:
    """A file that lies about its size (/proc files say 0) is still cut at the limit."""
    small = inputs.Kind("test", 16)
    with pytest.raises(KctlError, match="larger than 16 bytes"):
        inputs.read_bytes("/proc/self/maps", "--x", small)
    (tmp_path / "ok").write_bytes(b"x" * 16)
    assert inputs.read_bytes(tmp_path / "ok", "--x", small) == b"x" * 16
    (tmp_path / "over").write_bytes(b"x" * 17)
    with pytest.raises(UsageError, match=r"--x .*over is larger than 16 bytes"):
        inputs.read_bytes(tmp_path / "over", "--x", small)


def test_snapshot_shape_is_checked(tmp_path: Path) -> None:
    """A snapshot whose replicas are not a list is one line naming the field."""
    import json

    doc = {"format": "kctl-cluster-snapshot", "version": 1, "taken_at_ms": 1,
           "cluster_id": "c", "controller_id": 1,
           "brokers": [{"id": 1, "host": "h", "port": 9092}],
           "topics": [{"name": "t", "internal": False, "partitions": [
               {"partition": 0, "leader": 1, "replicas": "x", "isr": [1]}]}]}  # fmt: skip
    snap = tmp_path / "snap.json"
    snap.write_text(json.dumps(doc))
    code, out, err = run([b"replicas", b"validate", b"--snapshot", bytes(snap)], tmp_path)
    assert code == 2 and out == b"", err
    assert b"topics[0].partitions[0].replicas: expected a list" in err, err


class _Pieces:
    """A stream whose read1 answers pieces of the given sizes in turn (as a pipe does)."""

    def __init__(self, data: bytes, sizes: list[int]) -> None:
        self.data, self.sizes, self.pos, self.i = data, sizes, 0, 0

    def read1(self, n: int) -> bytes:
        size = self.sizes[self.i % len(self.sizes)]
        self.i += 1
        piece = self.data[self.pos : self.pos + min(n, size)]
        self.pos += len(piece)
        return piece

    read = read1


def test_line_cap_against_a_reference() -> None:
    """produce's line cap (kctl.produce.lines.read_chunks): on every input and any way it is
    cut into reads, the first line over the cap is named by its number, and the complete lines
    yielded before the error are exactly the lines before it (they are sent)."""
    import random

    from kctl.produce.lines import read_chunks

    rng = random.Random(30)
    for _ in range(20000):
        cap = rng.randint(0, 6)
        data = bytes(rng.choice(b"ab\n") for _ in range(rng.randint(0, 30)))
        lines = data.split(b"\n")
        bad = next((i for i, line in enumerate(lines) if len(line) > cap), None)
        stream = _Pieces(data, [rng.randint(1, 12) for _ in range(5)])
        got = b""
        if bad is None:
            for chunk in read_chunks(stream, None, cap, "f"):  # type: ignore[arg-type]
                got += chunk
            assert got == data
            continue
        with pytest.raises(UsageError, match=f"^line {bad + 1} of f is longer than {cap} bytes"):
            for chunk in read_chunks(stream, None, cap, "f"):  # type: ignore[arg-type]
                got += chunk
        before = b"".join(line + b"\n" for line in lines[:bad])
        assert got[: got.rfind(b"\n") + 1] == before, (data, cap, got)


def test_line_cap_on_dev_zero() -> None:
    """/dev/zero never ends a line: the cap stops it after at most the cap and one read."""
    from kctl.produce.lines import CHUNK, read_chunks

    seen = 0
    with open("/dev/zero", "rb") as zero, pytest.raises(UsageError, match=r"^line 1 of /dev/zero"):
        for chunk in read_chunks(zero, None, 1000, "/dev/zero"):
            seen += len(chunk)
    assert seen <= 1000 + CHUNK


def test_current_file_that_cannot_be_written_is_one_line(kctl, new_topic, tmp_path):
    """An output file, not read: a directory there is one 'cannot write' line (was: unexpected
    IsADirectoryError), on the cluster."""
    topic = new_topic(partitions=1)
    r = kctl("partitions", "reassign", "generate", "--topic", topic, "--brokers", "1",
             "--current-file", str(tmp_path))  # fmt: skip
    assert r.code == 1 and r.stdout == "", r
    assert r.stderr == f"kctl: error: cannot write --current-file {tmp_path} (Is a directory)\n"
