"""Generate ``kctl/logfmt/schemas.py`` from Apache Kafka's message JSON files.

    python tools/gen_schemas.py            # rewrite kctl/logfmt/schemas.py
    python tools/gen_schemas.py --check    # exit 1 if schemas.py differs from what it would write
    python tools/gen_schemas.py --input DIR --output -   # another Kafka tree, to stdout

The input is a directory laid out like Kafka's source tree (see ``SOURCES``); the files kctl ships
with are under ``tools/kafka-messages/<version>/`` with a PROVENANCE.md. Only facts are read from
them (names, types, version ranges, tags); the output is formatted with ``ruff format`` so that
re-running this script reproduces the committed file byte for byte.

Kafka's rules this follows (its ``generator`` module, FieldSpec/Versions/MessageDataGenerator):

* a version range is ``"N"``, ``"N-M"``, ``"N+"`` (up to 32767) or ``"none"``;
* a field without ``versions`` but with ``taggedVersions`` takes ``taggedVersions`` as its versions
  (so a tagged-only field is absent, not a regular field, in versions below its tagged versions);
* a type ``Foo`` or ``[]Foo`` that is not a primitive names a struct: inline ``fields``, else one of
  the message's ``commonStructs``;
* a tag is an integer (Jackson also takes the JSON string "0" for one, as some metadata files of
  Kafka 3.x write it).

Anything this script does not understand (a field-level ``flexibleVersions`` override, an unknown
primitive, a struct it cannot resolve) stops it with an error instead of producing a guess.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
KAFKA_VERSION = "4.3.1"
DEFAULT_INPUT = ROOT / "tools" / "kafka-messages" / KAFKA_VERSION
DEFAULT_OUTPUT = ROOT / "kctl" / "logfmt" / "schemas.py"

# (directory in Kafka's tree, file names or None for every *.json, internal topic or None).
SOURCES: tuple[tuple[str, tuple[str, ...] | None, str | None], ...] = (
    ("metadata/src/main/resources/common/metadata", None, None),
    ("group-coordinator/src/main/resources/common/message", None, "__consumer_offsets"),
    ("transaction-coordinator/src/main/resources/common/message", None, "__transaction_state"),
    ("share-coordinator/src/main/resources/common/message", None, "__share_group_state"),
    (
        "clients/src/main/resources/common/message",
        (
            # embedded in GroupMetadataValue members (protocol type "consumer")
            "ConsumerProtocolSubscription.json",
            "ConsumerProtocolAssignment.json",
            # KRaft control records
            "LeaderChangeMessage.json",
            "SnapshotHeaderRecord.json",
            "SnapshotFooterRecord.json",
            "KRaftVersionRecord.json",
            "VotersRecord.json",
        ),
        None,
    ),
)

MAX_VERSION = 32767
PRIMITIVES = {
    "bool",
    "int8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "float64",
    "string",
    "bytes",
    "uuid",
    "records",
}
FIELD_KEYS = {
    "name",
    "type",
    "versions",
    "nullableVersions",
    "taggedVersions",
    "tag",
    "fields",
    "about",
    "default",
    "ignorable",
    "entityType",
    "mapKey",
    "zeroCopy",
}


class SchemaError(RuntimeError):
    pass


def strip_comments(text: str) -> str:
    """Kafka's JSON allows ``//`` comments (Jackson's ALLOW_COMMENTS); drop them, not in strings."""
    out: list[str] = []
    i, n, in_string = 0, len(text), False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                in_string = False
        elif c == '"':
            in_string = True
            out.append(c)
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise SchemaError("unterminated /* comment")
            i = end + 2
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


def load(path: Path) -> dict[str, Any]:
    try:
        return json.loads(strip_comments(path.read_text(encoding="utf-8")))
    except (ValueError, SchemaError) as exc:
        raise SchemaError(f"{path}: {exc}") from None


def versions(text: Any, default: tuple[int, int] | None = None) -> tuple[int, int] | None:
    """Kafka's Versions.parse: (low, high) inclusive, None for "none"."""
    if text is None or str(text).strip() == "":
        return default
    s = str(text).strip()
    if s == "none":
        return None
    if s.endswith("+"):
        return (int(s[:-1]), MAX_VERSION)
    if "-" in s:
        lo, hi = s.split("-", 1)
        return (int(lo), int(hi))
    return (int(s), int(s))


def snake(name: str) -> str:
    """CamelCase to snake_case the way kctl names fields: ``KRaftVersion`` → ``k_raft_version``,
    ``TopicId`` → ``topic_id``, ``LastKnownElr`` → ``last_known_elr``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def convert_fields(
    fields: list[dict[str, Any]], common: dict[str, list[dict[str, Any]]], where: str
) -> tuple[Any, ...]:
    out = []
    for f in fields:
        name = f["name"]
        here = f"{where}.{name}"
        unknown = set(f) - FIELD_KEYS
        if unknown:
            # e.g. a field-level "flexibleVersions" override changes the encoding: not supported.
            raise SchemaError(f"{here}: unsupported field keys {sorted(unknown)}")
        raw_type = f["type"]
        is_array = raw_type.startswith("[]")
        base = raw_type[2:] if is_array else raw_type
        sub = None
        if base in PRIMITIVES:
            ftype = raw_type
            if "fields" in f:
                raise SchemaError(f"{here}: primitive type {raw_type} with fields")
        elif re.fullmatch(r"[A-Z][A-Za-z0-9]*", base):
            if "fields" in f:
                struct_fields = f["fields"]
            elif base in common:
                struct_fields = common[base]
            else:
                raise SchemaError(f"{here}: struct type {base} has no fields and no common struct")
            ftype = "[]struct" if is_array else "struct"
            sub = convert_fields(struct_fields, common, here)
        else:
            raise SchemaError(f"{here}: unknown type {raw_type}")
        tagged = versions(f.get("taggedVersions"))
        tag = f.get("tag")
        if (tag is None) != (tagged is None):
            raise SchemaError(f"{here}: tag {tag!r} with taggedVersions {tagged!r}")
        if isinstance(tag, str) and tag.strip().isdigit():
            # A few files write the tag as a JSON string ("tag": "0"); Jackson reads it into
            # FieldSpec's Integer all the same. It is the number on the wire.
            tag = int(tag)
        if tag is not None and (not isinstance(tag, int) or isinstance(tag, bool) or tag < 0):
            raise SchemaError(f"{here}: tag {tag!r} is not a non-negative integer")
        # Kafka: "If versions is not set, but taggedVersions is, default to taggedVersions."
        fversions = versions(f.get("versions"), tagged)
        if fversions is None:
            raise SchemaError(f"{here}: no versions")
        nullable = versions(f.get("nullableVersions"))
        out.append((snake(name), ftype, fversions, nullable, tagged, tag, sub))
    return tuple(out)


def convert(path: Path, topic: str | None) -> tuple[str, dict[str, Any]]:
    spec = load(path)
    name = spec["name"]
    common = {s["name"]: s["fields"] for s in spec.get("commonStructs", [])}
    valid = versions(spec.get("validVersions"))
    if valid is None:
        raise SchemaError(f"{path}: no validVersions")
    return name, {
        "api_key": spec.get("apiKey"),
        "fields": convert_fields(spec.get("fields", []), common, name),
        "flexible": versions(spec.get("flexibleVersions")),
        "topic": topic,
        "type": spec.get("type"),
        "valid": valid,
    }


def collect(input_dir: Path) -> dict[str, dict[str, Any]]:
    schemas: dict[str, dict[str, Any]] = {}
    for directory, names, topic in SOURCES:
        folder = input_dir / directory
        paths = sorted(folder.glob("*.json")) if names is None else [folder / n for n in names]
        if not paths:
            raise SchemaError(f"no message files under {folder}")
        for path in paths:
            name, schema = convert(path, topic)
            if name in schemas:
                raise SchemaError(f"{path}: message {name} defined twice")
            schemas[name] = schema
    return dict(sorted(schemas.items()))


def render(schemas: dict[str, dict[str, Any]], input_dir: Path) -> str:
    try:
        shown = input_dir.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        shown = input_dir.as_posix()
    doc = f"""Field layouts of the Kafka messages kctl decodes from disk: names, types, versions.

GENERATED by tools/gen_schemas.py from {shown} (Apache Kafka's message
JSON files, Apache-2.0; see PROVENANCE.md there). Do not edit by hand: change the generator or its
input and re-run it. Facts only: field names, types, version ranges, tags.

Per message: ``api_key`` (Kafka's apiKey: a metadata record's type, a coordinator record's key
prefix), ``fields``, ``flexible`` and ``valid`` version ranges, ``topic`` (the internal topic of a
coordinator record, else None) and ``type`` (Kafka's message type: metadata, coordinator-key,
coordinator-value, data).
Field tuple: (snake_name, type, versions, nullable_versions, tagged_versions, tag, sub_fields);
a range is (low, high) inclusive, 32767 meaning "and later", None meaning never; a struct type is
"struct" or "[]struct" with its fields in sub_fields; tag is an int or None.
"""
    head = '"""' + doc + '"""\n\nfrom __future__ import annotations\n\nfrom typing import Any\n\n'
    return head + f"SCHEMAS: dict[str, dict[str, Any]] = {schemas!r}\n"


def ruff_format(text: str) -> str:
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    proc = subprocess.run(
        [ruff, "format", "--stdin-filename", str(DEFAULT_OUTPUT), "-"],
        input=text,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    if proc.returncode != 0:
        raise SchemaError(f"ruff format failed: {proc.stderr.strip()}")
    return proc.stdout


def generate(input_dir: Path = DEFAULT_INPUT) -> str:
    return ruff_format(render(collect(input_dir), input_dir))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--input", type=Path, default=DEFAULT_INPUT)
    ap.add_argument("--output", default=str(DEFAULT_OUTPUT), help="a path, or - for stdout")
    ap.add_argument("--check", action="store_true", help="compare with --output, write nothing")
    args = ap.parse_args(argv)
    try:
        text = generate(args.input)
    except SchemaError as exc:
        print(f"gen_schemas: error: {exc}", file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    out = Path(args.output)
    if args.check:
        same = out.exists() and out.read_text(encoding="utf-8") == text
        if not same:
            print(f"gen_schemas: {out} is out of date; run tools/gen_schemas.py", file=sys.stderr)
        return 0 if same else 1
    out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
