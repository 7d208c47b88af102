"""kctl schemas: a Schema Registry's jobs from the command line (subjects, versions, schemas,
compatibility, deletes, backups), like rpk registry. Any Confluent-compatible registry."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from kctl.commands._common import confirm, example, note, output_view, schema_registry
from kctl.formatters import Output, cols, emit
from kctl.inputs import Kind, MiB
from kctl.schemas.names import subject_and_version

if TYPE_CHECKING:
    from kctl.registry.client import RegistryClient
    from kctl.schemas.model import Reference, RegisteredSchema, Schema

app = typer.Typer(
    help="Schema Registry: subjects, schemas, compatibility, deletes, export and import.",
    no_args_is_help=True,
)

EXTENSIONS = {".avsc": "AVRO", ".proto": "PROTOBUF", ".json": "JSON"}
SUFFIX = {"AVRO": "avsc", "PROTOBUF": "proto", "JSON": "json"}
INDEX = "index.json"
EXPORT_FORMAT = "kctl-schemas-export/1"
DOC_FORMATS = ("json", "jsonl", "yaml")


INDEX_FILE = Kind("export index", 256 * MiB)  # import DIR/index.json


def read_schema(path: Path, kind: str | None, refs: list[str]) -> Schema:
    """The schema in ``path``: its type from ``--type`` or the extension; the references as
    given (a version 0 stands for ``latest``: :func:`resolve_references`). Read before the
    registry is asked anything."""
    from kctl.errors import UsageError
    from kctl.inputs import SCHEMA, read_input
    from kctl.registry.client import schema_type
    from kctl.schemas.model import Schema
    from kctl.schemas.names import parse_reference

    references = tuple(parse_reference(item) for item in refs)
    if kind is not None:
        stype = schema_type(kind)
    else:
        found = EXTENSIONS.get(path.suffix.lower())
        if found is None:
            raise UsageError(
                f"cannot tell the schema type of {path}",
                "name it .avsc, .proto or .json, or give --type avro|protobuf|json",
            )
        stype = found
    text = read_input(path, "schema file", SCHEMA)
    return Schema(stype, text, references)


def refs_text(refs: tuple[Reference, ...] | list[Reference]) -> str:
    return ", ".join(f"{r.name}={r.subject}:{r.version}" for r in refs)


def refs_doc(refs: tuple[Reference, ...] | list[Reference]) -> list[dict[str, Any]]:
    return [{"name": r.name, "subject": r.subject, "version": r.version} for r in refs]


# -- list ------------------------------------------------------------------------------------


@app.command(
    "list",
    epilog=example(
        "kctl schemas list",
        "kctl schemas list --deleted -o json",
        "kctl schemas list -o name",
    ),
)
def list_subjects(
    ctx: typer.Context,
    deleted: bool = typer.Option(
        False, "--deleted", help="Include soft-deleted subjects (DELETED column)."
    ),
) -> None:
    """Every subject with its number of versions and its latest version's id and type
    (-o name: the subject names only, one request)."""
    from kctl.errors import NotFoundError

    client = schema_registry(ctx)
    view = output_view(ctx)
    live = client.subjects()
    names = sorted(set(live) | set(client.subjects(deleted=True) if deleted else ()))
    columns = cols("subject", "versions:>", "latest:>", "id:>", "type")
    if deleted:
        columns += cols("deleted")
    if view.format == "name":
        emit(Output([{"subject": s} for s in names], columns), view)
        return
    rows = []
    alive = set(live)
    for subject in names:
        row: dict[str, Any] = {"subject": subject}
        if subject in alive:
            try:
                latest = client.subject_version(subject)
                row.update(
                    versions=len(client.versions(subject)),
                    latest=latest.version,
                    id=latest.id,
                    type=latest.schema.schema_type,
                )
            except NotFoundError:  # deleted between the two calls
                row.update(versions=None, latest=None, id=None, type=None)
        else:
            try:
                versions = client.versions(subject, deleted=True)
            except NotFoundError:
                versions = []
            row.update(versions=len(versions), latest=max(versions, default=None), id=None,
                       type=None)  # fmt: skip
        if deleted:
            row["deleted"] = subject not in alive
        rows.append(row)
    emit(Output(rows, columns), view)


# -- describe -------------------------------------------------------------------------------


def compatibility_of(client: RegistryClient, subject: str | None) -> tuple[str | None, str]:
    """The compatibility level that applies to ``subject`` and where it comes from."""
    level = client.compatibility()
    if subject is not None:
        # Confluent answers 40408 for a subject without its own level (None here); Apicurio
        # answers the level that applies, its own or not: the same as the global one is
        # reported as the global one.
        own = client.compatibility(subject)
        if own is not None and own != level:
            return own, "subject"
    return level, "global"


@app.command(
    "describe",
    epilog=example(
        "kctl schemas describe orders-value", "kctl schemas describe orders-value -o json"
    ),
)
def describe(
    ctx: typer.Context,
    subject: str = typer.Argument(..., help="The subject.", metavar="SUBJECT"),
) -> None:
    """Each version of SUBJECT with its id, type and references, and the compatibility level
    that applies (the subject's own, else the global one: which is said)."""
    client = schema_registry(ctx)
    versions = client.versions(subject)
    rows = []
    for version in versions:
        found = client.subject_version(subject, version)
        rows.append(
            {
                "version": version,
                "id": found.id,
                "type": found.schema.schema_type,
                "references": refs_text(found.schema.references),
                "_refs": refs_doc(found.schema.references),
            }
        )
    level, source = compatibility_of(client, subject)
    doc = {
        "subject": subject,
        "compatibility": level,
        "compatibility_source": source,
        "versions": [
            {"version": r["version"], "id": r["id"], "schema_type": r["type"],
             "references": r["_refs"]}
            for r in rows
        ],
    }  # fmt: skip
    view = output_view(ctx)
    emit(
        Output(
            rows,
            cols("version:>", "id:>", "type", "references"),
            doc=doc,
            title=f"{subject}: compatibility {level} ({source})",
        ),
        view,
    )
    if view.format not in (*DOC_FORMATS, "name", "table"):
        note(f"compatibility: {level} ({source} level)")


# -- get -------------------------------------------------------------------------------------


@app.command(
    "get",
    epilog=example(
        "kctl schemas get orders-value",
        "kctl schemas get orders-value:2 -o json",
        "kctl schemas get --id 42 > orders.avsc",
    ),
)
def get(
    ctx: typer.Context,
    target: str | None = typer.Argument(
        None, help="SUBJECT or SUBJECT:VERSION (default: the latest).", metavar="SUBJECT[:VERSION]"
    ),
    schema_id: int | None = typer.Option(None, "--id", help="The schema with this id."),
) -> None:
    """A schema's text on stdout, as the registry holds it; -o json: a document with its id,
    subject, version, type and references."""
    from kctl.errors import KctlError, UsageError
    from kctl.schemas.model import RegisteredSchema

    if (target is None) == (schema_id is None):
        raise UsageError("give SUBJECT[:VERSION] or --id N", "one of them")
    client = schema_registry(ctx)
    found: RegisteredSchema
    if schema_id is not None:
        schema = client.schema_by_id(schema_id)
        subject = version = None
        try:
            holders = client.subjects_of_id(schema_id)
        except KctlError:
            holders = []
        if holders:
            subject, version = holders[0]
        found = RegisteredSchema(schema_id, schema, subject, version)
    else:
        assert target is not None
        name, wanted = subject_and_version(target)
        found = client.subject_version(name, wanted)
    view = output_view(ctx)
    doc = {
        "id": found.id,
        "subject": found.subject,
        "version": found.version,
        "schema_type": found.schema.schema_type,
        "references": refs_doc(found.schema.references),
        "schema": found.schema.text,
    }
    if view.format in DOC_FORMATS:
        emit(Output([doc], cols("id", "subject", "version", "schema_type"), doc=doc), view)
        return
    text = found.schema.text
    typer.echo(text if text.endswith("\n") else text + "\n", nl=False)


# -- register --------------------------------------------------------------------------------

_TYPE_HELP = "The schema type: avro, protobuf or json (default: from the extension)."
_REF_HELP = "NAME=SUBJECT:VERSION: a schema this one imports (repeatable)."


@app.command(
    "register",
    epilog=example(
        "kctl schemas register orders-value orders.avsc",
        "kctl schemas register orders-value order.proto --reference common.proto=common-value:1",
        "kctl schemas register orders-value order.proto --as-descriptor",
        "kctl schemas register events-value event.schema --type json -o json",
    ),
)
def register(
    ctx: typer.Context,
    subject: str = typer.Argument(..., help="The subject.", metavar="SUBJECT"),
    path: Path = typer.Argument(..., help="The schema file.", metavar="FILE"),
    kind: str | None = typer.Option(None, "--type", help=_TYPE_HELP),
    references: list[str] = typer.Option([], "--reference", help=_REF_HELP),
    as_descriptor: bool = typer.Option(
        False,
        "--as-descriptor",
        help="Protobuf: register the .proto file as its compiled FileDescriptorProto in base64 "
        "(what confluent-kafka's ProtobufSerializer registers, and what its "
        "ProtobufDeserializer reads from a registry that ignores format=serialized).",
    ),
) -> None:
    """Register the schema in FILE under SUBJECT: its id on stdout (the same id and version
    when the subject already holds it), the registry's answer on stderr."""
    from kctl.errors import UsageError

    schema = read_schema(path, kind, references)
    if as_descriptor and schema.schema_type != "PROTOBUF":
        raise UsageError(
            "--as-descriptor is for Protobuf schemas", f"{path} is {schema.schema_type}"
        )
    client = schema_registry(ctx)
    schema = client.resolve(schema)
    if as_descriptor:
        from kctl.schemas.codec import protobuf_descriptor

        schema = protobuf_descriptor(client, schema, path.name)
    from kctl.errors import KctlError

    schema_id = client.register(subject, schema)
    version = None
    try:
        version = client.lookup(subject, schema).version
    except KctlError:  # the id is what matters; the version is a courtesy
        version = None
    view = output_view(ctx)
    doc = {"subject": subject, "id": schema_id, "version": version}
    if view.format in DOC_FORMATS:
        emit(Output([doc], cols("subject", "id:>", "version:>"), doc=doc), view)
    else:
        typer.echo(str(schema_id))
    note(
        f"registered {schema.schema_type} schema {path} under {subject!r}: id {schema_id}"
        + (f", version {version}" if version is not None else "")
    )


# -- check -----------------------------------------------------------------------------------


@app.command(
    "check",
    epilog=example(
        "kctl schemas check orders-value orders-v2.avsc",
        "kctl schemas check orders-value orders-v2.avsc --all -o json",
    ),
)
def check(
    ctx: typer.Context,
    subject: str = typer.Argument(..., help="The subject.", metavar="SUBJECT"),
    path: Path = typer.Argument(..., help="The new schema file.", metavar="FILE"),
    all_versions: bool = typer.Option(
        False, "--all", help="Against every version (default: the latest)."
    ),
    version: int | None = typer.Option(None, "--version", help="Against this version."),
    kind: str | None = typer.Option(None, "--type", help=_TYPE_HELP),
    references: list[str] = typer.Option([], "--reference", help=_REF_HELP),
) -> None:
    """Would the registry take FILE as SUBJECT's next version? Checked under the subject's
    compatibility level against the latest version (or --all, --version), with the registry's
    reasons. Exit 3 when incompatible, 0 when compatible."""
    from kctl.errors import FindingsError, UsageError

    if all_versions and version is not None:
        raise UsageError("give --all or --version, not both")
    schema = read_schema(path, kind, references)
    client = schema_registry(ctx)
    schema = client.resolve(schema)
    if all_versions:
        targets: list[int | str] = list(client.versions(subject))
    else:
        targets = [version if version is not None else "latest"]
    rows = []
    for target in targets:
        answer = client.check(subject, schema, target)
        rows.append(
            {
                "version": target,
                "compatible": answer.compatible,
                "reasons": "; ".join(answer.messages),
                "_messages": list(answer.messages),
            }
        )
    level, source = compatibility_of(client, subject)
    doc = {
        "subject": subject,
        "compatibility": level,
        "compatibility_source": source,
        "compatible": all(r["compatible"] for r in rows),
        "versions": [
            {"version": r["version"], "compatible": r["compatible"], "reasons": r["_messages"]}
            for r in rows
        ],
    }
    emit(Output(rows, cols("version:>", "compatible", "reasons"), doc=doc), output_view(ctx))
    bad = [r for r in rows if not r["compatible"]]
    if bad:
        # Apicurio 3 answers is_compatible false without the rule's causes, verbose or not.
        silent = "" if any(r["_messages"] for r in bad) else "; the registry gave no reasons"
        raise FindingsError(
            f"{path} is incompatible with {subject!r} version "
            + ", ".join(str(r["version"]) for r in bad),
            f"compatibility {level}, {source} level{silent}",
        )


# -- delete ----------------------------------------------------------------------------------


@app.command(
    "delete",
    epilog=example(
        "kctl schemas delete orders-value --yes",
        "kctl schemas delete orders-value:3 --yes",
        "kctl schemas delete orders-value --permanent --yes",
    ),
)
def delete(
    ctx: typer.Context,
    target: str = typer.Argument(
        ..., help="SUBJECT (every version) or SUBJECT:VERSION.", metavar="SUBJECT[:VERSION]"
    ),
    permanent: bool = typer.Option(
        False, "--permanent", help="Hard delete (after the soft delete the registry requires)."
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete a subject or one version: soft by default (the registry keeps it, list
    --deleted shows it), --permanent to remove it for good."""
    from kctl.errors import KctlError

    subject, version = subject_and_version(target)
    client = schema_registry(ctx)
    what = f"{subject!r}" + (f" version {version}" if version is not None else " (every version)")
    how = "permanently delete" if permanent else "soft-delete"
    confirm(f"{how.capitalize()} {what}?", yes=yes, action=f"{how} {what}")
    rows = []
    if version is None:
        try:
            soft = client.delete_subject(subject)
        except KctlError as exc:
            if not (permanent and _soft_deleted(exc)):
                raise
            soft = []
        gone = client.delete_subject(subject, permanent=True) if permanent else soft
        rows = [{"subject": subject, "version": v, "deleted": "permanent" if permanent else "soft"}
                for v in gone]  # fmt: skip
    else:
        try:
            client.delete_version(subject, version)
        except KctlError as exc:
            if not (permanent and _soft_deleted(exc)):
                raise
        if permanent:
            client.delete_version(subject, version, permanent=True)
        rows = [{"subject": subject, "version": version,
                 "deleted": "permanent" if permanent else "soft"}]  # fmt: skip
    emit(Output(rows, cols("subject", "version:>", "deleted")), output_view(ctx))


def _soft_deleted(exc: BaseException) -> bool:
    """Already soft-deleted (Confluent 40404/40406; Apicurio says so in the message)."""
    code = getattr(exc, "code", 0)
    return code in (40404, 40406) or "soft delete" in str(exc).lower()


# -- config ----------------------------------------------------------------------------------


@app.command(
    "config",
    epilog=example(
        "kctl schemas config",
        "kctl schemas config orders-value",
        "kctl schemas config orders-value --set BACKWARD_TRANSITIVE",
        "kctl schemas config --set FULL",
    ),
)
def config(
    ctx: typer.Context,
    subject: str | None = typer.Argument(
        None, help="The subject (default: the global level).", metavar="[SUBJECT]"
    ),
    level: str | None = typer.Option(
        None,
        "--set",
        help="Set the level: BACKWARD, BACKWARD_TRANSITIVE, FORWARD, FORWARD_TRANSITIVE, FULL, "
        "FULL_TRANSITIVE or NONE.",
        metavar="LEVEL",
    ),
) -> None:
    """The compatibility level, global or of SUBJECT (falling back to the global one: the
    SOURCE column says which); --set changes it."""
    from kctl.errors import UsageError
    from kctl.registry.client import LEVELS

    client = schema_registry(ctx)
    if level is not None:
        wanted = level.strip().upper().replace("-", "_")
        if wanted not in LEVELS:
            raise UsageError(f"--set {level!r} is not a compatibility level", ", ".join(LEVELS))
        client.set_compatibility(wanted, subject)
    found, source = compatibility_of(client, subject)
    rows = [{"subject": subject if subject is not None else "(global)", "compatibility": found,
             "source": source}]  # fmt: skip
    emit(Output(rows, cols("subject", "compatibility", "source")), output_view(ctx))


# -- export / import ------------------------------------------------------------------------


def _safe(subject: str) -> str:
    """A file name for a subject: anything but letters, digits, ``.-_`` becomes ``_``."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", subject) or "_"


def export_order(found: dict[tuple[str, int], RegisteredSchema]) -> list[tuple[str, int]]:
    """Every (subject, version), referenced schemas before those that import them, else by
    subject then version."""
    order: list[tuple[str, int]] = []
    seen: set[tuple[str, int]] = set()

    def visit(key: tuple[str, int], stack: tuple[tuple[str, int], ...]) -> None:
        if key in seen or key not in found or key in stack:
            return
        for ref in found[key].schema.references:
            visit((ref.subject, ref.version), (*stack, key))
        seen.add(key)
        order.append(key)

    for key in sorted(found):
        visit(key, ())
    return order


@app.command(
    "export",
    epilog=example(
        "kctl schemas export backup/", "kctl schemas export backup/ --subject orders-value"
    ),
)
def export(
    ctx: typer.Context,
    directory: Path = typer.Argument(..., help="Where to write (created).", metavar="DIR"),
    subjects: list[str] = typer.Option(
        [], "--subject", help="Only this subject (repeatable; default: every subject)."
    ),
) -> None:
    """Every subject and version into DIR: one file per schema version and index.json (ids,
    types, references and the order to import them in: references first)."""
    import json

    from kctl.errors import UsageError

    client = schema_registry(ctx)
    names = subjects or sorted(client.subjects())
    found: dict[tuple[str, int], RegisteredSchema] = {}
    for subject in names:
        for version in client.versions(subject):
            found[(subject, version)] = client.subject_version(subject, version)
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory} is not a directory")
    if directory.is_dir() and (directory / INDEX).exists():
        raise UsageError(f"{directory / INDEX} exists", "export into an empty directory")
    directory.mkdir(parents=True, exist_ok=True)
    entries = []
    rows = []
    used: set[str] = set()
    for subject, version in export_order(found):
        item = found[(subject, version)]
        stem = f"{_safe(subject)}.v{version}"
        while stem in used:
            stem += "_"
        used.add(stem)
        name = f"{stem}.{SUFFIX.get(item.schema.schema_type, 'txt')}"
        (directory / name).write_text(item.schema.text, encoding="utf-8")
        entries.append(
            {
                "subject": subject,
                "version": version,
                "id": item.id,
                "schema_type": item.schema.schema_type,
                "references": refs_doc(item.schema.references),
                "file": name,
            }
        )
        rows.append({"subject": subject, "version": version, "id": item.id,
                     "type": item.schema.schema_type, "file": name})  # fmt: skip
    level = client.compatibility()
    own = {}  # the subjects' own levels (not those that only follow the global one)
    for subject in sorted({s for s, _ in found}):
        subject_level = client.compatibility(subject)
        if subject_level is not None and subject_level != level:
            own[subject] = subject_level
    index = {
        "format": EXPORT_FORMAT,
        "registry": client.url,
        "compatibility": level,
        "subject_compatibility": own,
        "schemas": entries,
    }
    with open(directory / INDEX, "w", encoding="utf-8") as out:
        json.dump(index, out, indent=2)
        out.write("\n")
    emit(Output(rows, cols("subject", "version:>", "id:>", "type", "file")), output_view(ctx))
    note(f"exported {len(entries)} schema version(s) of {len(names)} subject(s) to {directory}")


@app.command(
    "import",
    epilog=example("kctl schemas import backup/", "kctl schemas import backup/ --keep-ids"),
)
def import_(
    ctx: typer.Context,
    directory: Path = typer.Argument(
        ..., help="A directory kctl schemas export wrote.", metavar="DIR"
    ),
    keep_ids: bool = typer.Option(
        False,
        "--keep-ids",
        help="Register with the exported ids and versions (the registry's IMPORT mode); an id "
        "the registry does not keep is an error (exit 1) naming the topics whose records "
        "carry it.",
    ),
) -> None:
    """Register every schema version of an export, in its order (references first, mapped to
    the versions they get here). The registry assigns the ids (on Apicurio: content ids), so
    they may differ from the exported ones: NEW-ID says; --keep-ids asks for the same ids and
    fails when the registry did not keep them all."""
    import json

    from kctl.errors import KctlError, UsageError
    from kctl.inputs import SCHEMA, read_input
    from kctl.schemas.model import Reference, Schema

    text = read_input(directory / INDEX, "export index", INDEX_FILE)
    try:
        index = json.loads(text)
        if not isinstance(index, dict) or index.get("format") != EXPORT_FORMAT:
            raise ValueError(f"not a {EXPORT_FORMAT} index")
        entries = list(index["schemas"])
        levels = {str(k): str(v) for k, v in (index.get("subject_compatibility") or {}).items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError(f"{directory / INDEX} is not an export index", str(exc)) from None
    client = schema_registry(ctx)
    mode = None
    if keep_ids:
        try:
            mode = client.mode()
            client.set_mode("IMPORT")
        except KctlError as exc:
            raise KctlError(
                f"the schema registry at {client.url} refuses IMPORT mode: --keep-ids cannot "
                "keep the ids (import without it)",
                exc.why or exc.what,
            ) from None
    versions: dict[tuple[str, int], int] = {}
    rows = []
    try:
        for entry in entries:
            try:
                subject, version = str(entry["subject"]), int(entry["version"])
                refs = tuple(
                    Reference(
                        str(r["name"]),
                        str(r["subject"]),
                        versions.get((str(r["subject"]), int(r["version"])), int(r["version"])),
                    )
                    for r in entry.get("references") or ()
                )
                stype = str(entry.get("schema_type") or "AVRO")
                file = directory / str(entry["file"])
            except (KeyError, TypeError, ValueError) as exc:
                raise UsageError(f"{directory / INDEX}: a malformed entry", repr(exc)) from None
            schema = Schema(stype, read_input(file, "schema file", SCHEMA), refs)
            new_id = client.register(
                subject,
                schema,
                schema_id=int(entry["id"]) if keep_ids else None,
                version=version if keep_ids else None,
            )
            new_version = client.lookup(subject, schema).version or 0
            versions[(subject, version)] = new_version
            rows.append({"subject": subject, "version": version, "new_version": new_version,
                         "id": entry.get("id"), "new_id": new_id})  # fmt: skip
        # The subjects' own levels after their versions: an older version the level would
        # refuse today is restored as it was.
        for subject, subject_level in levels.items():
            client.set_compatibility(subject_level, subject)
    finally:
        if mode is not None:
            client.set_mode(mode or "READWRITE")
    emit(Output(rows, cols("subject", "version:>", "new_version:>", "id:>", "new_id:>")),
         output_view(ctx))  # fmt: skip
    if keep_ids:
        from kctl.schemas.transfer import ids_not_kept

        ids_not_kept(client.url, rows)
    moved = sum(1 for r in rows if r["id"] != r["new_id"])
    kept = (
        f"; {moved} got a different id (the registry assigns ids: Apicurio's are content ids)"
        if moved
        else "; every id kept"
    )
    if levels:
        kept += f"; compatibility set on {len(levels)} subject(s) as exported"
    note(f"imported {len(rows)} schema version(s) into {client.url}{kept}")
