"""Text at the command line's boundary (kctl/arguments.py): every string parameter that is not
a path refuses bytes that are not UTF-8 with one usage error naming it, before any command, client
library or broker sees them (they crashed librdkafka, hung commands, or ended as 'unexpected
UnicodeEncodeError'); text that may travel as a Kafka string is at most 32767 bytes; paths stay
bytes-clean, as the file system is. The parameters come from the command tree itself, so a new
command is covered without being listed here. No cluster: -b points where nothing listens."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from argument_tree import NOWHERE, failures, kind, params, run, usage_error

BAD = b"bad\xff\xfe"

# The parameters that are paths kctl opens itself (Path types, or metavar FILE/DIR/PATH): they
# take any bytes. A new one is a decision, so it is listed here.
PATHS = {
    "kctl --command-config",
    "kctl produce --file/-f",
    "kctl dump-segment paths",
    "kctl groups lag --record",
    "kctl groups reset-offsets --from-file",
    "kctl records delete --offsets-json/--offset-json-file",
    "kctl replicas validate --snapshot",
    "kctl replicas compare dirs",
    "kctl partitions elect-leaders --from-file",
    "kctl partitions reassign generate --current-file",
    "kctl partitions reassign generate --from-snapshot",
    "kctl partitions reassign generate --report",
    "kctl partitions reassign execute --file/-f",
    "kctl partitions reassign verify --file/-f",
    "kctl partitions reassign cancel --file/-f",
    "kctl acls add --from-file",
    "kctl users set-password --password-file",
    "kctl profile add --sasl-password-file",
    "kctl profile add --key-password-file",
    "kctl tokens create --hmac-file",
    "kctl tokens renew --hmac-file",
    "kctl tokens expire --hmac-file",
    "kctl metadata image directory",
    "kctl metadata image --snapshot-json",
    "kctl analytics lag --record",
    "kctl analytics lag --plot",
    "kctl produce --value-schema",
    "kctl produce --key-schema",
    "kctl schemas register path",
    "kctl schemas check path",
    "kctl schemas export directory",
    "kctl schemas import directory",
}


def _label(p) -> str:  # type: ignore[no-untyped-def]
    name = "/".join(p.param.opts) if p.is_option else p.param.name
    return " ".join(["kctl", *p.words, name])


def test_the_paths_are_the_declared_ones() -> None:
    from kctl.arguments import is_path

    found = {_label(p) for p in params() if kind(p) in ("str", "path") and is_path(p.param)}
    assert found == PATHS


def test_every_text_parameter_refuses_bytes_that_are_not_utf8() -> None:
    from kctl.arguments import is_path

    cases = [
        (_label(p), p.argv(BAD), usage_error(p.names(), "is not valid UTF-8", "byte 0xff"))
        for p in params()
        if kind(p) == "str" and not is_path(p.param)
    ]
    assert len(cases) > 150  # the whole tree, not a part of it
    assert failures(cases) == []


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            [b"-X", b"bad\xff\xfe=1", b"topics", b"list"],
            "kctl: error: -X is not valid UTF-8 (byte 0xff at position 3)",
        ),
        (
            [b"topics", b"list", b"-Xa=\xc3\xa9\xff"],
            "kctl: error: -X is not valid UTF-8 (byte 0xff at position 4)",
        ),
        (
            [b"-b", BAD, b"topics", b"list"],
            "kctl: error: --bootstrap-server is not valid UTF-8 (byte 0xff at position 3)",
        ),
        (
            [b"consume", b"orders", b"--group", BAD, b"-n", b"1"],
            "kctl: error: --group is not valid UTF-8 (byte 0xff at position 3)",
        ),
        (
            [b"topics", b"describe", BAD],
            "kctl: error: NAMES is not valid UTF-8 (byte 0xff at position 3)",
        ),
        (
            [b"produce", b"t", b"--key", BAD, b"--value", b"v"],
            "kctl: error: --key is not valid UTF-8 (byte 0xff at position 3)",
        ),
        (
            [b"produce", b"t", b"--header", b"h=" + BAD, b"--value", b"v"],
            "kctl: error: --header is not valid UTF-8 (byte 0xff at position 5)",
        ),
        (
            [b"consume", b"t", b"--template", BAD],
            "kctl: error: --template is not valid UTF-8 (byte 0xff at position 3)",
        ),
        (
            [b"transactions", b"describe", BAD],
            "kctl: error: TRANSACTIONAL_ID is not valid UTF-8 (byte 0xff at position 3)",
        ),
        (
            [b"profile", b"add", BAD],
            "kctl: error: NAME is not valid UTF-8 (byte 0xff at position 3)",
        ),
        # -X's form is checked for every command, also those that never connect
        (
            [b"-X", b"1.5", b"profile", b"list"],
            "kctl: error: malformed -X value (expected key=value)",
        ),
    ],
)
def test_text_that_is_not_utf8_is_a_usage_error_naming_it(argv: list[bytes], line: str) -> None:
    r = run([b"-b", NOWHERE.encode(), *argv])
    assert (r.code, r.stdout, r.stderr) == (2, "", line + "\n")


def test_the_environment_variable_of_an_option_is_checked_too(tmp_path: Path) -> None:
    import subprocess
    import sys

    env = {k: v for k, v in os.environb.items() if not k.startswith(b"KCTL_")}
    env[b"KCTL_BOOTSTRAP_SERVERS"] = BAD
    env[b"KCTL_CONFIG"] = str(tmp_path / "c.yaml").encode()
    proc = subprocess.run(
        [sys.executable, "-m", "kctl", "topics", "list"], capture_output=True, env=env, timeout=60
    )
    assert proc.returncode == 2
    assert proc.stderr == (
        b"kctl: error: --bootstrap-server is not valid UTF-8 (byte 0xff at position 3)\n"
    )


def test_a_refused_profile_name_leaves_the_profiles_readable(tmp_path: Path) -> None:
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("KCTL_")}
    env["KCTL_CONFIG"] = str(tmp_path / "c.yaml")

    def kctl(*argv: bytes) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-m", "kctl", *argv], capture_output=True, env=env, timeout=60
        )

    refused = kctl(b"profile", b"add", BAD, b"-b", b"127.0.0.1:9092")
    assert refused.returncode == 2
    listed = kctl(b"profile", b"list", b"-o", b"json")
    assert listed.returncode == 0, listed.stderr


def test_text_longer_than_a_kafka_string_is_refused_where_it_travels_as_one() -> None:
    long = b"g" * 32768
    r = run([b"-b", NOWHERE.encode(), b"groups", b"describe", long])
    assert (r.code, r.stdout) == (2, "")
    assert r.stderr == (
        "kctl: error: GROUPS is too long (32768 bytes; a Kafka string holds at most 32767)\n"
    )
    # 32767 bytes is a Kafka string still: past the boundary (then nothing listens).
    fits = run([b"-b", NOWHERE.encode(), b"--timeout", b"1", b"groups", b"describe", long[:-1]])
    assert "too long" not in fits.stderr and fits.code == 1


def test_record_payloads_and_client_properties_are_not_kafka_strings() -> None:
    """A record's value, or a CA bundle in -X ssl.ca.pem, may be longer than 32767 bytes."""
    big = b"v" * 40000
    value = run([b"-b", NOWHERE.encode(), b"produce", b"t", b"--value", big, b"--acks", b"2"])
    assert value.code == 2 and "--acks" in value.stderr and "too long" not in value.stderr
    prop = run([b"-b", NOWHERE.encode(), b"-X", b"ssl.ca.pem=" + big, b"profile", b"list"])
    assert "too long" not in prop.stderr


def _segment() -> Path:
    root = Path(__file__).parent / "data" / "kafka-3.8-kraft-logs" / "foo-0"
    return root / "00000000000000000000.log"


def test_a_path_that_is_not_utf8_still_opens_its_file(tmp_path: Path) -> None:
    named = Path(os.fsdecode(os.fsencode(tmp_path) + b"/bad\xff\xfe.log"))
    shutil.copyfile(_segment(), named)
    copy = run([b"dump-segment", os.fsencode(named)])
    plain = run([b"dump-segment", str(_segment()).encode()])
    assert copy.code == 0, copy.stderr
    assert copy.stdout.splitlines()[1:] == plain.stdout.splitlines()[1:]
    assert "baseOffset: 0" in copy.stdout
    # JSON strings are Unicode: the name's undecodable bytes are written as \xNN
    for fmt in (b"json", b"jsonl"):
        doc = run([b"-o", fmt, b"dump-segment", os.fsencode(named)])
        assert doc.code == 0, doc.stderr
        first = (
            json.loads(doc.stdout)[0] if fmt == b"json" else json.loads(doc.stdout.split("\n")[0])
        )
        assert first["file"] == str(tmp_path) + "/bad\\xff\\xfe.log"


def test_produce_reads_a_file_whose_name_is_not_utf8(
    kctl_env: dict[str, str], new_topic: Callable[..., str], tmp_path: Path
) -> None:
    """On the cluster: the records of a file named with bytes that are not UTF-8 are sent,
    and read back."""
    import subprocess
    import sys

    topic = new_topic(partitions=1)
    named = os.fsencode(tmp_path) + b"/records\xff\xfe.txt"
    with open(named, "wb") as fh:
        fh.write(b"one\ntwo\n")

    def kctl(*argv: bytes) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable.encode(), b"-m", b"kctl", *argv],
            capture_output=True,
            env=kctl_env,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )

    sent = kctl(b"produce", topic.encode(), b"--file", named)
    assert sent.returncode == 0, sent.stderr
    read = kctl(b"consume", topic.encode(), b"--from", b"beginning", b"-n", b"2", b"-o", b"plain")
    assert read.returncode == 0, read.stderr
    assert read.stdout.split() == [b"one", b"two"]
