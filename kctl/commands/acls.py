"""kctl acls: ACLs: list, add and remove who may do what (kafka-acls.sh)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from kctl.commands._common import confirm, connection, example, note, output_view
from kctl.formatters import Output, cols, emit

if TYPE_CHECKING:
    from kctl.broker.acls import Binding, Filter

app = typer.Typer(
    help="ACLs: list, add and remove who may do what (kafka-acls.sh).", no_args_is_help=True
)

_COLS = (
    "principal",
    "host",
    "operation",
    "permission",
    "resource_type",
    "resource_name",
    "pattern_type",
)


def _emit(ctx: typer.Context, bindings: list[Binding], extra: dict[str, Any] | None = None) -> None:
    rows = [{**b.row(), **(extra or {})} for b in bindings]
    columns = _COLS + tuple(extra or ())
    emit(Output(rows, cols(*columns), name_key="principal"), output_view(ctx))


def _resources(
    topic: list[str],
    group: list[str],
    cluster: bool,
    transactional_id: list[str],
    delegation_token: list[str],
    user_principal: list[str],
) -> list[tuple[str, str]]:
    from kctl.broker.acls import CLUSTER_NAME

    out = [("TOPIC", t) for t in topic] + [("GROUP", g) for g in group]
    out += [("CLUSTER", CLUSTER_NAME)] if cluster else []
    out += [("TRANSACTIONAL_ID", t) for t in transactional_id]
    out += [("DELEGATION_TOKEN", t) for t in delegation_token]
    out += [("USER", u) for u in user_principal]
    return out


# The options every sub-command shares (kafka-acls.sh's names).
_TOPIC = typer.Option([], "--topic", help="A topic (repeatable; '*' for every topic).")
_GROUP = typer.Option([], "--group", help="A consumer group (repeatable).")
_CLUSTER = typer.Option(False, "--cluster", help="The cluster resource.")
_TXN = typer.Option([], "--transactional-id", help="A transactional id (repeatable).")
_TOKEN = typer.Option([], "--delegation-token", help="A delegation token id (repeatable).")
_USER = typer.Option([], "--user-principal", help="A user resource, for token ACLs (repeatable).")
_PRINCIPAL = typer.Option([], "--principal", help="TYPE:NAME, e.g. User:alice (repeatable).")
_HOST = typer.Option(None, "--host", help="Host the ACL applies to (add default: '*').")
_OPERATION = typer.Option(
    [], "--operation", help="Read, Write, Create, Delete, Alter, Describe, All, ... (repeatable)."
)


@app.command(
    "list",
    epilog=example(
        "kctl acls list",
        "kctl acls list --principal User:alice",
        "kctl acls list --topic orders-eu --pattern-type match -o json",
    ),
)
def list_(
    ctx: typer.Context,
    topic: list[str] = _TOPIC,
    group: list[str] = _GROUP,
    cluster: bool = _CLUSTER,
    transactional_id: list[str] = _TXN,
    delegation_token: list[str] = _TOKEN,
    user_principal: list[str] = _USER,
    resource_type: str | None = typer.Option(
        None, "--resource-type", help="Only this type: topic, group, cluster, ... ."
    ),
    pattern_type: str = typer.Option(
        "any",
        "--pattern-type",
        "--resource-pattern-type",
        help="any | literal | prefixed | match (every ACL that applies to the name).",
    ),
    principal: list[str] = _PRINCIPAL,
    host: str | None = typer.Option(None, "--host", help="Only ACLs for this host."),
    operation: list[str] = _OPERATION,
    permission: str | None = typer.Option(None, "--permission", help="allow | deny."),
) -> None:
    """The ACLs that match: with --principal, what that principal may (or may not) do."""
    from kctl.broker import acls as A
    from kctl.broker.client import Admin

    filters = _filters(
        _resources(topic, group, cluster, transactional_id, delegation_token, user_principal),
        resource_type,
        A.pattern(pattern_type, filters=True),
        principal,
        host,
        operation,
        permission,
    )
    admin = Admin(connection(ctx))
    found: set[Binding] = set()
    for f in filters:
        found.update(A.describe(admin, f))
    _emit(ctx, sorted(found, key=lambda b: tuple(b.row().values())))


def _filters(
    resources: list[tuple[str, str]],
    resource_type: str | None,
    pattern_type: str,
    principals: list[str],
    host: str | None,
    operations: list[str],
    permission: str | None,
) -> list[Filter]:
    """Every combination of the selections (an empty selection matches anything)."""
    from kctl.broker import acls as A

    chosen: list[tuple[str | None, str | None]] = list(resources) or [
        (A.resource_type(resource_type) if resource_type else None, None)
    ]
    people: list[str | None] = [A.principal(p) for p in principals] or [None]
    ops: list[str | None] = [A.operation(o) for o in operations] or [None]
    perm = A.permission(permission) if permission else None
    return [
        A.Filter(rtype, name, pattern_type, who, host, op, perm)
        for rtype, name in chosen
        for who in people
        for op in ops
    ]


def _load_file(path: Path) -> list[Binding]:
    """Bindings from a YAML or JSON list; errors name the entry's line."""
    import yaml

    from kctl.broker import acls as A
    from kctl.errors import UsageError
    from kctl.parsing import read_text

    text = read_text(str(path), "--from-file")
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "it"
        problem = getattr(exc, "problem", None) or "not YAML or JSON"
        raise UsageError(f"ACL file {path}: {where}: {problem}") from exc
    lines = (
        [n.start_mark.line + 1 for n in node.value] if isinstance(node, yaml.SequenceNode) else None
    )
    return A.from_document(doc, lines)


@app.command(
    "add",
    epilog=example(
        "kctl acls add --principal User:alice --operation Write --topic orders- "
        "--pattern-type prefixed",
        "kctl acls add --principal User:bob --consumer --topic orders-eu --group g",
        "kctl acls add --deny-principal User:mallory --operation All --topic payments",
        "kctl acls add --from-file acls.yaml",
    ),
)
def add(
    ctx: typer.Context,
    topic: list[str] = _TOPIC,
    group: list[str] = _GROUP,
    cluster: bool = _CLUSTER,
    transactional_id: list[str] = _TXN,
    delegation_token: list[str] = _TOKEN,
    user_principal: list[str] = _USER,
    pattern_type: str = typer.Option(
        "literal", "--pattern-type", "--resource-pattern-type", help="literal | prefixed."
    ),
    principal: list[str] = _PRINCIPAL,
    allow_principal: list[str] = typer.Option(
        [], "--allow-principal", help="TYPE:NAME granted the operations (kafka-acls.sh)."
    ),
    deny_principal: list[str] = typer.Option(
        [], "--deny-principal", help="TYPE:NAME denied the operations (a DENY beats an ALLOW)."
    ),
    host: str = typer.Option("*", "--host", help="Host the ACL applies to."),
    operation: list[str] = _OPERATION,
    permission: str = typer.Option("allow", "--permission", help="allow | deny (--principal)."),
    producer: bool = typer.Option(
        False, "--producer", help="Write, Describe, Create on the topics (and the txn ids)."
    ),
    consumer: bool = typer.Option(
        False, "--consumer", help="Read, Describe on the topics and Read on the groups."
    ),
    idempotent: bool = typer.Option(
        False, "--idempotent", help="With --producer: IdempotentWrite on the cluster."
    ),
    from_file: Path | None = typer.Option(
        None, "--from-file", help="A YAML/JSON list of ACLs (fields in docs/acls.md)."
    ),
) -> None:
    """Grant or deny operations on resources. Adding an ACL that exists changes nothing, so a
    file of ACLs can be applied again and again (the `state` column tells which were new)."""
    from kctl.broker import acls as A
    from kctl.broker.client import Admin
    from kctl.errors import UsageError

    if from_file is not None:
        wanted = _load_file(from_file)
    else:
        wanted = _wanted(
            _resources(topic, group, cluster, transactional_id, delegation_token, user_principal),
            A.pattern(pattern_type),
            [(A.principal(p), A.permission(permission)) for p in principal]
            + [(A.principal(p), "ALLOW") for p in allow_principal]
            + [(A.principal(p), "DENY") for p in deny_principal],
            host,
            [A.operation(o) for o in operation],
            A.shortcut_operations(producer, consumer, idempotent),
        )
    if not wanted:
        raise UsageError("no ACL to add", "give a resource, a principal and an operation")
    admin = Admin(connection(ctx))
    existing = set()
    for rtype, name, ptype in sorted(
        {(b.resource_type, b.resource_name, b.pattern_type) for b in wanted}
    ):
        existing.update(A.describe(admin, A.Filter(rtype, name, ptype)))
    A.create(admin, [b for b in wanted if b not in existing])
    new = sum(b not in existing for b in wanted)
    note(f"{new} ACL(s) added, {len(wanted) - new} already there")
    rows = [{**b.row(), "state": "exists" if b in existing else "added"} for b in wanted]
    emit(Output(rows, cols(*_COLS, "state"), name_key="principal"), output_view(ctx))


def _wanted(
    resources: list[tuple[str, str]],
    pattern_type: str,
    people: list[tuple[str, str]],
    host: str,
    operations: list[str],
    shortcuts: dict[str, set[str]],
) -> list[Binding]:
    """Every (resource, principal, operation) the options ask for, checked; the shortcuts add
    their operations per resource type (the cluster for --idempotent)."""
    from kctl.broker import acls as A
    from kctl.errors import UsageError

    if not people:
        raise UsageError("no principal", "--principal, --allow-principal or --deny-principal")
    if not resources:
        raise UsageError("no resource", "--topic, --group, --cluster, --transactional-id, ...")
    if not operations and not shortcuts:
        raise UsageError("no operation", "--operation, --producer or --consumer")
    if "GROUP" in shortcuts and not any(r == "GROUP" for r, _ in resources):
        raise UsageError("--consumer needs --group", "the group the consumers commit in")
    targets = list(resources)
    if "CLUSTER" in shortcuts and not any(r == "CLUSTER" for r, _ in resources):
        targets.append(("CLUSTER", A.CLUSTER_NAME))
    out: list[Binding] = []
    for rtype, name in targets:
        ops = set(operations) | shortcuts.get(rtype, set())
        ptype = "LITERAL" if rtype == "CLUSTER" else pattern_type
        for who, perm in people:
            for op in sorted(ops):
                b = A.check(A.Binding(rtype, name, ptype, who, host, op, perm))
                if b not in out:
                    out.append(b)
    return out


@app.command(
    "remove",
    epilog=example(
        "kctl acls remove --principal User:alice --topic orders- --pattern-type prefixed",
        "kctl acls remove --principal User:alice --yes",
    ),
)
def remove(
    ctx: typer.Context,
    topic: list[str] = _TOPIC,
    group: list[str] = _GROUP,
    cluster: bool = _CLUSTER,
    transactional_id: list[str] = _TXN,
    delegation_token: list[str] = _TOKEN,
    user_principal: list[str] = _USER,
    resource_type: str | None = typer.Option(None, "--resource-type", help="Only this type."),
    pattern_type: str = typer.Option(
        "any", "--pattern-type", "--resource-pattern-type", help="any | literal | prefixed."
    ),
    principal: list[str] = _PRINCIPAL,
    host: str | None = _HOST,
    operation: list[str] = _OPERATION,
    permission: str | None = typer.Option(None, "--permission", help="allow | deny."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Remove the ACLs that match: they are listed first, then removed after a confirmation
    (or --yes). A filter that matches everything needs at least one selection."""
    from kctl.broker import acls as A
    from kctl.broker.client import Admin
    from kctl.errors import UsageError

    resources = _resources(
        topic, group, cluster, transactional_id, delegation_token, user_principal
    )
    if not (resources or resource_type or principal or operation or host or permission):
        raise UsageError("refusing to remove every ACL", "select a resource or a principal")
    pt = A.pattern(pattern_type, filters=True)
    if pt == "MATCH":
        raise UsageError("--pattern-type match is for list only", "any | literal | prefixed")
    filters = _filters(resources, resource_type, pt, principal, host, operation, permission)
    admin = Admin(connection(ctx))
    matched: set[Binding] = set()
    for f in filters:
        matched.update(A.describe(admin, f))
    if not matched:
        note("no ACL matches: nothing to remove")
        _emit(ctx, [])
        return
    for b in sorted(matched, key=lambda b: tuple(b.row().values())):
        note(
            f"  {b.permission} {b.principal} {b.operation} on {b.resource_type} "
            f"{b.resource_name!r} ({b.pattern_type}, host {b.host})"
        )
    confirm(f"Remove these {len(matched)} ACL(s)?", yes=yes, action="remove ACLs")
    gone = A.delete(admin, filters)
    note(f"{len(gone)} ACL(s) removed")
    _emit(ctx, gone)
