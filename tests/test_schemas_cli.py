"""kctl schemas through the CLI, on a real Schema Registry (the session's Apicurio, or
KCTL_TEST_SCHEMA_REGISTRY): each verb with Avro, Protobuf and JSON Schema, references, check's
exit codes, deletes, config, export/import, and the one-line errors."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import Run, unique
from tests.schema_support import DATA, apicurio_3

AVRO_V1 = {
    "type": "record",
    "name": "Order",
    "namespace": "kctl.cli",
    "fields": [{"name": "id", "type": "long"}, {"name": "note", "type": "string"}],
}
AVRO_ADDED = {
    **AVRO_V1,
    "fields": [*AVRO_V1["fields"], {"name": "qty", "type": "int", "default": 0}],
}
AVRO_REMOVED = {
    **AVRO_V1,
    "fields": [{"name": "id", "type": "long"}, {"name": "qty", "type": "int"}],
}
JSON_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Event",
    "type": "object",
    "properties": {"kind": {"type": "string"}, "n": {"type": "integer"}},
    "required": ["kind"],
}


@pytest.fixture
def sr(offline_kctl: Callable[..., Run], schema_registry: str) -> Callable[..., Run]:
    """``kctl --schema-registry URL ARGS...``"""

    def run(*args: str, input: str | None = None) -> Run:
        return offline_kctl("--schema-registry", schema_registry, *args, input=input)

    return run


def write(path: Path, doc: object) -> Path:
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def ok(run: Run) -> Run:
    assert run.code == 0, run
    return run


def test_register_get_describe_list_each_format(sr: Callable[..., Run], tmp_path: Path) -> None:
    avsc = write(tmp_path / "order.avsc", AVRO_V1)
    js = write(tmp_path / "event.json", JSON_SCHEMA)
    common, order, avro, jsn = (
        unique(p) for p in ("cli-common", "cli-order", "cli-avro", "cli-json")
    )
    aid = int(ok(sr("schemas", "register", avro, str(avsc))).stdout)
    reg = ok(sr("schemas", "register", jsn, str(js), "-o", "json"))
    assert json.loads(reg.stdout)["subject"] == jsn and json.loads(reg.stdout)["version"] == 1
    assert f"under '{jsn}'" in reg.stderr
    cid = int(ok(sr("schemas", "register", common, str(DATA / "common.proto"))).stdout)
    oid = int(
        ok(
            sr("schemas", "register", order, str(DATA / "order.proto"),
               "--reference", f"common.proto={common}:1")
        ).stdout
    )  # fmt: skip
    assert len({aid, cid, oid}) == 3
    # get: the text as the registry holds it; -o json with the metadata
    assert json.loads(ok(sr("schemas", "get", avro)).stdout) == AVRO_V1
    assert json.loads(ok(sr("schemas", "get", f"{jsn}:1")).stdout) == JSON_SCHEMA
    doc = json.loads(ok(sr("schemas", "get", "--id", str(oid), "-o", "json")).stdout)
    assert doc["id"] == oid and doc["schema_type"] == "PROTOBUF"
    assert doc["subject"] == order and doc["version"] == 1
    assert doc["references"] == [{"name": "common.proto", "subject": common, "version": 1}]
    assert "message Order" in doc["schema"]
    # describe: versions, ids, types, references, compatibility with its source
    d = json.loads(ok(sr("schemas", "describe", order, "-o", "json")).stdout)
    assert (
        d["subject"] == order
        and d["compatibility"]
        and d["compatibility_source"]
        in (
            "subject",
            "global",
        )
    )
    assert d["versions"] == [
        {"version": 1, "id": oid, "schema_type": "PROTOBUF",
         "references": [{"name": "common.proto", "subject": common, "version": 1}]}
    ]  # fmt: skip
    plain = ok(sr("schemas", "describe", order)).stdout
    assert f"common.proto={common}:1" in plain
    # list: names, and the columns
    names = ok(sr("schemas", "list", "-o", "name")).stdout.split()
    assert {common, order, avro, jsn} <= set(names)
    rows = {r["subject"]: r for r in json.loads(ok(sr("schemas", "list", "-o", "json")).stdout)}
    assert rows[avro] == {"subject": avro, "versions": 1, "latest": 1, "id": aid, "type": "AVRO"}
    assert rows[jsn]["type"] == "JSON" and rows[order]["type"] == "PROTOBUF"


def test_avro_reference_to_another_subject(sr: Callable[..., Run], tmp_path: Path) -> None:
    money = {"type": "record", "name": "Money", "namespace": "kctl.cli",
             "fields": [{"name": "units", "type": "long"}, {"name": "currency", "type": "string"}]}  # fmt: skip
    order = {"type": "record", "name": "Priced", "namespace": "kctl.cli",
             "fields": [{"name": "id", "type": "long"}, {"name": "price", "type": "kctl.cli.Money"}]}  # fmt: skip
    ms, os_ = unique("cli-money"), unique("cli-priced")
    ok(sr("schemas", "register", ms, str(write(tmp_path / "money.avsc", money))))
    pid = int(
        ok(
            sr("schemas", "register", os_, str(write(tmp_path / "priced.avsc", order)),
               "--reference", f"kctl.cli.Money={ms}:latest")
        ).stdout
    )  # fmt: skip
    doc = json.loads(ok(sr("schemas", "get", os_, "-o", "json")).stdout)
    assert doc["id"] == pid
    assert doc["references"] == [{"name": "kctl.cli.Money", "subject": ms, "version": 1}]


def test_register_type_option_and_unknown_extension(sr: Callable[..., Run], tmp_path: Path) -> None:
    f = write(tmp_path / "event.schema", JSON_SCHEMA)
    subject = unique("cli-typed")
    r = sr("schemas", "register", subject, str(f))
    assert r.code == 2 and "--type" in r.stderr and r.stderr.count("\n") == 1
    ok(sr("schemas", "register", subject, str(f), "--type", "json"))
    assert (
        json.loads(ok(sr("schemas", "get", subject, "-o", "json")).stdout)["schema_type"] == "JSON"
    )


def test_check_exit_codes_with_the_registrys_reasons(
    sr: Callable[..., Run], tmp_path: Path, registry_version: str | None
) -> None:
    """Exit 3 and the registry's reasons; Apicurio 3 answers without reasons, and the error line
    says so."""
    subject = unique("cli-check")
    ok(sr("schemas", "register", subject, str(write(tmp_path / "v1.avsc", AVRO_V1))))
    ok(sr("schemas", "config", subject, "--set", "BACKWARD"))
    bad = sr(
        "schemas",
        "check",
        subject,
        str(write(tmp_path / "removed.avsc", AVRO_REMOVED)),
        "-o",
        "json",
    )
    assert bad.code == 3, bad
    doc = json.loads(bad.stdout)
    assert doc["compatible"] is False and doc["compatibility"] == "BACKWARD"
    assert "incompatible" in bad.stderr and bad.stderr.count("\n") == 1
    if apicurio_3(registry_version):
        assert doc["versions"][0]["reasons"] == []
        assert bad.stderr.endswith("; the registry gave no reasons)\n"), bad.stderr
    else:
        assert doc["versions"][0]["reasons"]  # the registry's own words
        assert "gave no reasons" not in bad.stderr
    added = write(tmp_path / "added.avsc", AVRO_ADDED)
    good = sr("schemas", "check", subject, str(added))
    assert good.code == 0 and "true" in good.stdout
    ok(sr("schemas", "register", subject, str(added)))
    every = json.loads(
        ok(sr("schemas", "check", subject, str(added), "--all", "-o", "json")).stdout
    )
    assert [v["version"] for v in every["versions"]] == [1, 2]
    # Protobuf and JSON Schema: an unchanged schema is compatible
    proto = unique("cli-check-proto")
    ok(sr("schemas", "register", proto, str(DATA / "common.proto")))
    assert sr("schemas", "check", proto, str(DATA / "common.proto")).code == 0
    js = unique("cli-check-json")
    jf = write(tmp_path / "e.json", JSON_SCHEMA)
    ok(sr("schemas", "register", js, str(jf)))
    assert sr("schemas", "check", js, str(jf)).code == 0


def test_delete_soft_then_permanent(sr: Callable[..., Run], tmp_path: Path) -> None:
    subject = unique("cli-delete")
    ok(sr("schemas", "register", subject, str(write(tmp_path / "v1.avsc", AVRO_V1))))
    ok(sr("schemas", "register", subject, str(write(tmp_path / "v2.avsc", AVRO_ADDED))))
    refused = sr("schemas", "delete", subject)  # no --yes, no terminal
    assert refused.code == 1 and "--yes" in refused.stderr
    assert subject in ok(sr("schemas", "list", "-o", "name")).stdout.split()
    one = ok(sr("schemas", "delete", f"{subject}:1", "--yes", "-o", "json"))
    assert json.loads(one.stdout) == [{"subject": subject, "version": 1, "deleted": "soft"}]
    ok(sr("schemas", "delete", subject, "--yes"))
    assert subject not in ok(sr("schemas", "list", "-o", "name")).stdout.split()
    rows = json.loads(ok(sr("schemas", "list", "--deleted", "-o", "json")).stdout)
    mine = [r for r in rows if r["subject"] == subject]
    assert mine and mine[0]["deleted"] is True
    ok(sr("schemas", "delete", subject, "--permanent", "--yes"))
    assert subject not in ok(sr("schemas", "list", "--deleted", "-o", "name")).stdout.split()
    gone = sr("schemas", "get", subject)
    assert gone.code == 1 and f"subject '{subject}' not found" in gone.stderr


def test_config_global_and_per_subject(sr: Callable[..., Run], tmp_path: Path) -> None:
    glob = json.loads(ok(sr("schemas", "config", "-o", "json")).stdout)[0]
    assert glob["subject"] == "(global)" and glob["source"] == "global"
    # Setting the global level to what it is (the dev registry is shared: not changed)
    again = json.loads(
        ok(sr("schemas", "config", "--set", glob["compatibility"], "-o", "json")).stdout
    )
    assert again[0]["compatibility"] == glob["compatibility"]
    subject = unique("cli-config")
    ok(sr("schemas", "register", subject, str(write(tmp_path / "v1.avsc", AVRO_V1))))
    other = "FULL_TRANSITIVE" if glob["compatibility"] != "FULL_TRANSITIVE" else "FORWARD"
    set_ = json.loads(
        ok(sr("schemas", "config", subject, "--set", other.lower(), "-o", "json")).stdout
    )
    assert set_ == [{"subject": subject, "compatibility": other, "source": "subject"}]
    d = json.loads(ok(sr("schemas", "describe", subject, "-o", "json")).stdout)
    assert (d["compatibility"], d["compatibility_source"]) == (other, "subject")
    bad = sr("schemas", "config", subject, "--set", "SIDEWAYS")
    assert bad.code == 2 and "BACKWARD" in bad.stderr


def test_export_delete_import_round_trip(sr: Callable[..., Run], tmp_path: Path) -> None:
    common, order, avro = unique("cli-x-common"), unique("cli-x-order"), unique("cli-x-avro")
    ok(sr("schemas", "register", avro, str(write(tmp_path / "v1.avsc", AVRO_V1))))
    ok(sr("schemas", "register", avro, str(write(tmp_path / "v2.avsc", AVRO_ADDED))))
    ok(sr("schemas", "register", common, str(DATA / "common.proto")))
    ok(sr("schemas", "register", order, str(DATA / "order.proto"),
          "--reference", f"common.proto={common}:1"))  # fmt: skip
    glob = json.loads(ok(sr("schemas", "config", "-o", "json")).stdout)[0]["compatibility"]
    own = "FULL" if glob != "FULL" else "FORWARD"
    ok(sr("schemas", "config", avro, "--set", own))
    mine = [order, avro, common]  # out of order: the export puts the reference first
    before = {
        (s, v): json.loads(ok(sr("schemas", "get", f"{s}:{v}", "-o", "json")).stdout)
        for s, v in [(avro, 1), (avro, 2), (common, 1), (order, 1)]
    }
    out = tmp_path / "backup"
    args = [a for s in mine for a in ("--subject", s)]
    ok(sr("schemas", "export", str(out), *args))
    index = json.loads((out / "index.json").read_text())
    order_of = [(e["subject"], e["version"]) for e in index["schemas"]]
    assert order_of.index((common, 1)) < order_of.index((order, 1))
    assert {(e["subject"], e["version"]): e["id"] for e in index["schemas"]} == {
        k: d["id"] for k, d in before.items()
    }
    for s in (order, avro, common):  # the importer first: a referenced subject cannot go first
        ok(sr("schemas", "delete", s, "--permanent", "--yes"))
    imported = ok(sr("schemas", "import", str(out), "-o", "json"))
    rows = json.loads(imported.stdout)
    assert [(r["subject"], r["version"], r["new_version"]) for r in rows] == [
        (s, v, v) for s, v in order_of
    ]
    assert "imported 4 schema version(s)" in imported.stderr
    assert index["subject_compatibility"] == {avro: own}
    d = json.loads(ok(sr("schemas", "describe", avro, "-o", "json")).stdout)
    assert (d["compatibility"], d["compatibility_source"]) == (own, "subject")
    for (s, v), d in before.items():
        after = json.loads(ok(sr("schemas", "get", f"{s}:{v}", "-o", "json")).stdout)
        assert after["schema"] == d["schema"] and after["schema_type"] == d["schema_type"]
        assert after["references"] == d["references"]


@pytest.fixture(scope="module")
def other_registry(
    registry_version: str | None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """An empty registry of the other version than the session's one (2.6.13 for 3.3.3, 3.3.3
    for 2.6.13), this module's own."""
    from kctl.local import registry

    if registry_version is None:
        pytest.skip("KCTL_TEST_SCHEMA_REGISTRY: the session's registry is not one kctl started")
    other = next(v for v in registry.VERSIONS if v != registry_version)
    state = tmp_path_factory.mktemp("other-registry")
    info = registry.start(state, port=registry.free_port(), version=other)
    try:
        yield info.url
    finally:
        registry.stop(state)


def test_export_from_one_apicurio_version_imports_into_the_other(
    sr: Callable[..., Run], offline_kctl: Callable[..., Run], other_registry: str, tmp_path: Path
) -> None:
    """2.6.13 -> 3.3.3 and 3.3.3 -> 2.6.13: subjects, versions, types, references (mapped),
    a subject's own compatibility level and the schemas themselves come through (Avro and JSON
    Schema texts compared as JSON: 3.3 answers a compact form of its own; .proto as text)."""
    avro, common, order, event = (unique(f"xv-{k}") for k in ("avro", "common", "order", "event"))
    ok(sr("schemas", "register", avro, str(write(tmp_path / "v1.avsc", AVRO_V1))))
    ok(sr("schemas", "register", avro, str(write(tmp_path / "v2.avsc", AVRO_ADDED))))
    ok(sr("schemas", "register", common, str(DATA / "common.proto")))
    ok(sr("schemas", "register", order, str(DATA / "order.proto"),
          "--reference", f"common.proto={common}:1"))  # fmt: skip
    ok(sr("schemas", "register", event, str(write(tmp_path / "e.json", JSON_SCHEMA))))
    ok(sr("schemas", "config", avro, "--set", "FULL_TRANSITIVE"))
    out = tmp_path / "backup"
    picked = [a for s in (avro, common, order, event) for a in ("--subject", s)]
    ok(sr("schemas", "export", str(out), *picked))
    into = ok(offline_kctl("--schema-registry", other_registry, "schemas", "import", str(out),
                           "-o", "json"))  # fmt: skip
    rows = json.loads(into.stdout)
    assert sorted((r["subject"], r["version"], r["new_version"]) for r in rows) == sorted(
        [(avro, 1, 1), (avro, 2, 2), (common, 1, 1), (order, 1, 1), (event, 1, 1)]
    )
    for subject, version in [(avro, 1), (avro, 2), (common, 1), (order, 1), (event, 1)]:
        before = json.loads(ok(sr("schemas", "get", f"{subject}:{version}", "-o", "json")).stdout)
        after = json.loads(ok(offline_kctl("--schema-registry", other_registry, "schemas", "get",
                                           f"{subject}:{version}", "-o", "json")).stdout)  # fmt: skip
        assert after["schema_type"] == before["schema_type"]
        assert after["references"] == before["references"]
        if before["schema_type"] == "PROTOBUF":
            assert after["schema"] == before["schema"]
        else:
            assert json.loads(after["schema"]) == json.loads(before["schema"])
    level = ok(offline_kctl("--schema-registry", other_registry, "schemas", "config", avro,
                            "-o", "json"))  # fmt: skip
    assert json.loads(level.stdout)[0]["compatibility"] == "FULL_TRANSITIVE"


def foreign_export(directory: Path, topic: str, record: str) -> list[tuple[str, int]]:
    """An export as another registry wrote it (ids 900001.. that this registry never gave):
    TOPIC-value (two versions), TOPIC-key, and a subject named by its record (Confluent's
    RecordNameStrategy). The (subject, exported id) pairs."""
    entries, pairs = [], []
    for n, (subject, version) in enumerate(
        [(f"{topic}-value", 1), (f"{topic}-value", 2), (f"{topic}-key", 1), (record, 1)]
    ):
        fields = [{"name": f"f{i}_{topic.replace('-', '_')}", "type": "int"} for i in range(n + 1)]
        schema = {"type": "record", "name": f"R{n}", "namespace": "kctl.keep", "fields": fields}
        name = f"s{n}.avsc"
        write(directory / name, schema)
        entries.append({"subject": subject, "version": version, "id": 900001 + n,
                        "schema_type": "AVRO", "references": [], "file": name})  # fmt: skip
        pairs.append((subject, 900001 + n))
    index = {"format": "kctl-schemas-export/1", "registry": "http://elsewhere:8081",
             "compatibility": "BACKWARD", "subject_compatibility": {}, "schemas": entries}  # fmt: skip
    write(directory / "index.json", index)
    return pairs


def test_keep_ids_fails_naming_the_topics_when_the_registry_does_not_keep_them(
    sr: Callable[..., Run], tmp_path: Path, schema_registry: str, registry_version: str | None
) -> None:
    """--keep-ids: Apicurio 2.6 has no IMPORT mode (one line, nothing registered); Apicurio 3.3
    takes IMPORT mode and assigns its own ids anyway: every schema is registered, the rows say
    which id each got, and the exit is 1 with one line naming the ids and the topics whose
    records carry them (TOPIC-value, TOPIC-key) and the other subjects."""
    topic, record = unique("keep"), f"kctl.keep.{unique('Rec').replace('-', '_')}"
    backup = tmp_path / "b"
    backup.mkdir()
    foreign_export(backup, topic, record)
    r = sr("schemas", "import", str(backup), "--keep-ids", "-o", "json")
    assert r.code == 1 and r.stderr.count("\n") == 1, r
    if not apicurio_3(registry_version):  # Apicurio 2.6: no /mode
        assert "refuses IMPORT mode" in r.stderr, r
        listed = ok(sr("schemas", "list", "-o", "name")).stdout.split()
        assert f"{topic}-value" not in listed and record not in listed
        return
    rows = json.loads(r.stdout)
    assert [(x["subject"], x["version"], x["id"]) for x in rows] == [
        (f"{topic}-value", 1, 900001), (f"{topic}-value", 2, 900002),
        (f"{topic}-key", 1, 900003), (record, 1, 900004),
    ]  # fmt: skip
    got = [x["new_id"] for x in rows]
    assert 900001 not in got and len(set(got)) == 4
    pairs = ", ".join(f"{900001 + i}->{new}" for i, new in enumerate(got))
    assert r.stderr == (
        f"kctl: error: the schema registry at {schema_registry} did not keep 4 of 4 schema id(s) asked "
        f"for with --keep-ids (ids {pairs} (exported->registered); records of topic(s) {topic} "
        f"carry the exported ids; subject(s) {record} held them)\n"
    ), r.stderr
    # registered all the same (nothing lost), and the registry is back in READWRITE
    for subject, version, new_id in [(f"{topic}-value", 2, got[1]), (record, 1, got[3])]:
        doc = json.loads(ok(sr("schemas", "get", f"{subject}:{version}", "-o", "json")).stdout)
        assert doc["id"] == new_id
    from kctl.registry.client import RegistryClient

    assert RegistryClient(schema_registry).mode() == "READWRITE"


def test_ids_not_kept_names_many_in_one_bounded_line() -> None:
    from kctl.errors import KctlError
    from kctl.schemas.transfer import ids_not_kept

    rows = [{"subject": f"t{i}-value", "id": i, "new_id": i + 100} for i in range(30)]
    rows += [{"subject": "kept-value", "id": 500, "new_id": 500}]
    with pytest.raises(KctlError) as e:
        ids_not_kept("http://r:8081", rows)
    line = e.value.line()
    assert line.startswith(
        "the schema registry at http://r:8081 did not keep 30 of 31 schema id(s) asked for with "
        "--keep-ids (ids 0->100, 1->101, "
    )
    assert "9->109 and 20 more (exported->registered)" in line and "kept" not in line[60:]
    assert (
        "records of topic(s) t0, t1, t10, " in line
        and "t17 and 20 more carry the exported ids)" in line
    )
    ids_not_kept("http://r:8081", [rows[-1]])  # every id kept: no error


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        # a last part that is no version belongs to the subject (Confluent's contexts hold colons)
        (("get", "x:abc"), 1, "subject 'x:abc' not found"),
        (("get", ":3"), 2, "has no subject"),
        (("get",), 2, "give SUBJECT[:VERSION] or --id N"),
        (("delete", "x:0", "--yes"), 2, "versions start at 1"),
        (
            ("register", "x", "/nonexistent/o.avsc"),
            1,
            "cannot read schema file /nonexistent/o.avsc",
        ),
        (("register", "x", "o.avsc", "--reference", "foo"), 2, "is not NAME=SUBJECT:VERSION"),
        (("register", "x", "o.avsc", "--reference", "a=b"), 2, "is not NAME=SUBJECT:VERSION"),
        (("register", "x", "o.avsc", "--type", "xml"), 2, "unknown schema type"),
        (("get", "--id", "2000000000"), 1, "schema id 2000000000 not found"),
    ],
)
def test_bad_input_is_one_line(
    sr: Callable[..., Run], tmp_path: Path, args: tuple[str, ...], code: int, words: str
) -> None:
    write(tmp_path / "o.avsc", AVRO_V1)
    import os

    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        r = sr("schemas", *args)
    finally:
        os.chdir(here)
    assert r.code == code, r
    assert words in r.stderr and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def test_unknown_subject_and_refused_schema(sr: Callable[..., Run], tmp_path: Path) -> None:
    subject = unique("cli-nope")
    r = sr("schemas", "describe", subject)
    assert (
        r.code == 1 and f"subject '{subject}' not found" in r.stderr and r.stderr.count("\n") == 1
    )
    bad = write(tmp_path / "bad.avsc", '{"type": "recor"}')
    r = sr("schemas", "register", subject, str(bad))
    assert r.code == 1 and "HTTP 422" in r.stderr and r.stderr.count("\n") == 1


def test_unreachable_registry(offline_kctl: Callable[..., Run]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    r = offline_kctl("--schema-registry", url, "schemas", "list")
    assert r.code == 1 and r.stdout == ""
    assert (
        r.stderr == f"kctl: error: cannot reach the schema registry at {url} (Connection refused)\n"
    )


def test_registry_from_the_environment_and_none(
    offline_kctl: Callable[..., Run], schema_registry: str, tmp_path: Path
) -> None:
    from tests.conftest import kctl_environment, run_kctl

    env = kctl_environment(
        KCTL_CONFIG=str(tmp_path / "kctl-config.yaml"), KCTL_SCHEMA_REGISTRY_URL=schema_registry
    )
    assert run_kctl(env, "schemas", "config").code == 0
    del env["KCTL_SCHEMA_REGISTRY_URL"]
    r = run_kctl(env, "schemas", "list")
    assert r.code == 2 and "KCTL_SCHEMA_REGISTRY_URL" in r.stderr


def test_every_help_has_an_example_that_parses(offline_kctl: Callable[..., Run]) -> None:
    for verb in (
        "list",
        "describe",
        "get",
        "register",
        "check",
        "delete",
        "config",
        "export",
        "import",
    ):
        r = offline_kctl("schemas", verb, "--help")
        assert r.code == 0 and "Examples" in r.stdout and f"kctl schemas {verb}" in r.stdout
