"""kctl acls: ACLs: list, add and remove who may do what (kafka-acls.sh)."""

from __future__ import annotations

from pathlib import Path

import typer

from kctl.commands._common import confirm, connection, example, note, output_view
from kctl.formatters import Output, cols, emit

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

    chosen = A.resources(topic, group, cluster, transactional_id, delegation_token, user_principal)
    filters = A.filters(
        chosen,
        resource_type,
        A.pattern(pattern_type, filters=True),
        principal,
        host,
        operation,
        permission,
    )
    found = A.describe_all(Admin(connection(ctx)), filters)
    emit(Output(A.rows(found), cols(*_COLS), name_key="principal"), output_view(ctx))


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

    wanted = A.bindings_to_add(
        A.resources(topic, group, cluster, transactional_id, delegation_token, user_principal),
        pattern_word=pattern_type,
        principals=principal,
        allow_principals=allow_principal,
        deny_principals=deny_principal,
        permission_word=permission,
        host=host,
        operations=operation,
        producer=producer,
        consumer=consumer,
        idempotent=idempotent,
        from_file=from_file,
    )
    existing = A.add(Admin(connection(ctx)), wanted)
    rows = A.add_rows(wanted, existing)
    new = sum(row["state"] == "added" for row in rows)
    note(f"{new} ACL(s) added, {len(rows) - new} already there")
    emit(Output(rows, cols(*_COLS, "state"), name_key="principal"), output_view(ctx))


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

    filters = A.removal_filters(
        A.resources(topic, group, cluster, transactional_id, delegation_token, user_principal),
        resource_type,
        pattern_type,
        principal,
        host,
        operation,
        permission,
    )
    admin = Admin(connection(ctx))
    matched = A.describe_all(admin, filters)
    gone = []
    if not matched:
        note("no ACL matches: nothing to remove")
    else:
        for b in matched:
            note(f"  {A.sentence(b)}")
        confirm(f"Remove these {len(matched)} ACL(s)?", yes=yes, action="remove ACLs")
        gone = A.delete(admin, filters)
        note(f"{len(gone)} ACL(s) removed")
    emit(Output(A.rows(gone), cols(*_COLS), name_key="principal"), output_view(ctx))
