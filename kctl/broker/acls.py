"""ACLs (kafka-acls.sh): describe, create and delete bindings through kafka-python's
DescribeAcls / CreateAcls / DeleteAcls (librdkafka lacks the cluster, delegation-token and user
resource types and the token operations).

The names, the operations each resource type accepts, the kafka-acls.sh shortcuts, what the
options of list, add and remove select, the parsing of a bulk file and the rows shown are pure
functions; the calls at the bottom send requests.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kctl.broker import kafka_python
from kctl.broker.client import Admin
from kctl.errors import KctlError, UsageError

# Kafka's resource types (codes of the protocol) and the kctl/kafka-acls.sh words for them.
RESOURCE_TYPES = {
    "topic": ("TOPIC", 2),
    "group": ("GROUP", 3),
    "cluster": ("CLUSTER", 4),
    "transactional-id": ("TRANSACTIONAL_ID", 5),
    "delegation-token": ("DELEGATION_TOKEN", 6),
    "user": ("USER", 7),
}
OPERATIONS = {
    "ALL": 2,
    "READ": 3,
    "WRITE": 4,
    "CREATE": 5,
    "DELETE": 6,
    "ALTER": 7,
    "DESCRIBE": 8,
    "CLUSTER_ACTION": 9,
    "DESCRIBE_CONFIGS": 10,
    "ALTER_CONFIGS": 11,
    "IDEMPOTENT_WRITE": 12,
    "CREATE_TOKENS": 13,
    "DESCRIBE_TOKENS": 14,
    "TWO_PHASE_COMMIT": 15,
}
# The operations Kafka's authorizer checks on each resource type (AclCommand refuses others).
VALID_OPERATIONS = {
    "TOPIC": {"READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "DESCRIBE_CONFIGS",
              "ALTER_CONFIGS", "ALL"},
    "GROUP": {"READ", "DESCRIBE", "DELETE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "ALL"},
    "CLUSTER": {"CREATE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS",
                "IDEMPOTENT_WRITE", "ALTER", "DESCRIBE", "CREATE_TOKENS", "DESCRIBE_TOKENS",
                "ALL"},
    "TRANSACTIONAL_ID": {"DESCRIBE", "WRITE", "TWO_PHASE_COMMIT", "ALL"},
    "DELEGATION_TOKEN": {"DESCRIBE", "ALL"},
    "USER": {"CREATE_TOKENS", "DESCRIBE_TOKENS", "ALL"},
}  # fmt: skip
PATTERN_TYPES = {"any": 1, "match": 2, "literal": 3, "prefixed": 4}
PERMISSIONS = {"allow": 3, "deny": 2}
CLUSTER_NAME = "kafka-cluster"  # the one cluster resource's name

_CODE_TO_TYPE = {code: name for name, code in RESOURCE_TYPES.values()}
_CODE_TO_OP = {code: name for name, code in OPERATIONS.items()}
_CODE_TO_PATTERN = {code: name.upper() for name, code in PATTERN_TYPES.items()}
_CODE_TO_PERMISSION = {code: name.upper() for name, code in PERMISSIONS.items()}


@dataclass(frozen=True)
class Binding:
    """One ACL: who (principal, host) may or may not (permission) do what (operation) on which
    resources (type, name, pattern type). Names are Kafka's: TOPIC, PREFIXED, WRITE, ALLOW."""

    resource_type: str
    resource_name: str
    pattern_type: str
    principal: str
    host: str
    operation: str
    permission: str

    def row(self) -> dict[str, str]:
        return asdict(self)


def operation(text: str) -> str:
    """Kafka's name of an operation typed as Write, write, IdempotentWrite or IDEMPOTENT_WRITE."""
    key = text.strip().replace("-", "_")
    if "_" not in key and key.upper() not in OPERATIONS:
        key = "".join("_" + c if c.isupper() and i else c for i, c in enumerate(key))
    key = key.upper()
    if key not in OPERATIONS:
        raise UsageError(f"unknown operation {text!r}", "e.g. Read, Write, Describe, All")
    return key


def principal(text: str) -> str:
    """A principal as Kafka writes it, TYPE:NAME (User:alice); ``*`` alone for everyone's
    wildcard is User:*."""
    kind, colon, name = text.partition(":")
    if not colon or not kind or not name or " " in text:
        raise UsageError(f"principal {text!r} is not TYPE:NAME", "e.g. User:alice or User:*")
    return text


def check(b: Binding) -> Binding:
    """``b`` when Kafka's authorizer can apply it; a usage error naming what is wrong."""
    allowed = VALID_OPERATIONS[b.resource_type]
    if b.operation not in allowed:
        raise UsageError(
            f"operation {b.operation} does not apply to {b.resource_type} resources",
            f"allowed: {', '.join(sorted(allowed))}",
        )
    if b.resource_type == "CLUSTER" and b.resource_name != CLUSTER_NAME:
        raise UsageError(f"the cluster resource is named {CLUSTER_NAME!r}")
    if b.pattern_type not in ("LITERAL", "PREFIXED"):
        raise UsageError(f"pattern type {b.pattern_type} is for filters only", "literal|prefixed")
    if b.pattern_type == "PREFIXED" and b.resource_name == "*":
        raise UsageError("a prefixed pattern cannot be '*'", "use a literal '*' for every name")
    return b


def resource_type(word: str) -> str:
    key = word.strip().lower().replace("_", "-")
    if key == "transactionalid":
        key = "transactional-id"
    if key not in RESOURCE_TYPES:
        raise UsageError(f"unknown resource type {word!r}", ", ".join(RESOURCE_TYPES))
    return RESOURCE_TYPES[key][0]


def pattern(word: str, *, filters: bool = False) -> str:
    key = word.strip().lower()
    allowed = PATTERN_TYPES if filters else {"literal": 3, "prefixed": 4}
    if key not in allowed:
        raise UsageError(f"unknown pattern type {word!r}", "|".join(allowed))
    return key.upper()


def permission(word: str) -> str:
    key = word.strip().lower()
    if key not in PERMISSIONS:
        raise UsageError(f"unknown permission {word!r}", "allow|deny")
    return key.upper()


def shortcut_operations(producer: bool, consumer: bool, idempotent: bool) -> dict[str, set[str]]:
    """kafka-acls.sh's --producer / --consumer: operations per resource type."""
    ops: dict[str, set[str]] = {}
    if producer:
        ops.setdefault("TOPIC", set()).update({"WRITE", "DESCRIBE", "CREATE"})
        ops.setdefault("TRANSACTIONAL_ID", set()).update({"WRITE", "DESCRIBE"})
        if idempotent:
            ops.setdefault("CLUSTER", set()).add("IDEMPOTENT_WRITE")
    if consumer:
        ops.setdefault("TOPIC", set()).update({"READ", "DESCRIBE"})
        ops.setdefault("GROUP", set()).add("READ")
    return ops


def from_document(doc: Any, lines: list[int] | None = None) -> list[Binding]:
    """Bindings from a bulk file's document: a list of mappings with ``resource_type``,
    ``resource_name``, ``principal``, ``operation`` and optionally ``pattern_type`` (literal),
    ``host`` (*), ``permission`` (allow). ``lines``: each entry's line in the file, for errors."""
    if not isinstance(doc, list):
        raise UsageError("an ACL file holds a list of ACLs", "YAML or JSON list of mappings")
    out = []
    for i, entry in enumerate(doc):
        where = f"line {lines[i]}" if lines and i < len(lines) else f"entry {i + 1}"
        try:
            if not isinstance(entry, dict):
                raise UsageError("not a mapping")
            unknown = set(entry) - {
                "resource_type", "resource_name", "pattern_type", "principal", "host",
                "operation", "permission",
            }  # fmt: skip
            if unknown:
                raise UsageError(f"unknown field {sorted(unknown)[0]!r}")
            for key in ("resource_type", "principal", "operation"):
                if not isinstance(entry.get(key), str):
                    raise UsageError(f"missing {key}")
            rtype = resource_type(entry["resource_type"])
            name = entry.get("resource_name", CLUSTER_NAME if rtype == "CLUSTER" else None)
            if not isinstance(name, str) or not name:
                raise UsageError("missing resource_name")
            out.append(
                check(
                    Binding(
                        rtype,
                        name,
                        pattern(str(entry.get("pattern_type", "literal"))),
                        principal(entry["principal"]),
                        str(entry.get("host", "*")),
                        operation(entry["operation"]),
                        permission(str(entry.get("permission", "allow"))),
                    )
                )
            )
        except UsageError as exc:
            raise UsageError(f"ACL file, {where}: {exc.what}", exc.why) from exc
    return out


def ordered(bindings: Iterable[Binding]) -> list[Binding]:
    """Bindings in the order kctl shows them: by resource type, name, pattern type, principal,
    host, operation, permission."""
    return sorted(bindings, key=lambda b: tuple(b.row().values()))


def rows(bindings: Iterable[Binding]) -> list[dict[str, Any]]:
    """One row per binding: list's and remove's."""
    return [b.row() for b in bindings]


def add_rows(wanted: Iterable[Binding], existing: set[Binding]) -> list[dict[str, Any]]:
    """``acls add``'s rows: each wanted binding with its ``state``, ``added`` or ``exists``."""
    return [{**b.row(), "state": "exists" if b in existing else "added"} for b in wanted]


def sentence(b: Binding) -> str:
    """A binding for people: ``ALLOW User:alice WRITE on TOPIC 'orders' (LITERAL, host *)``."""
    return (
        f"{b.permission} {b.principal} {b.operation} on {b.resource_type} "
        f"{b.resource_name!r} ({b.pattern_type}, host {b.host})"
    )


def resources(
    topics: Iterable[str] = (),
    groups: Iterable[str] = (),
    cluster: bool = False,
    transactional_ids: Iterable[str] = (),
    delegation_tokens: Iterable[str] = (),
    user_principals: Iterable[str] = (),
) -> list[tuple[str, str]]:
    """The (resource type, name) pairs kafka-acls.sh's resource options name, in that order."""
    out = [("TOPIC", t) for t in topics] + [("GROUP", g) for g in groups]
    out += [("CLUSTER", CLUSTER_NAME)] if cluster else []
    out += [("TRANSACTIONAL_ID", t) for t in transactional_ids]
    out += [("DELEGATION_TOKEN", t) for t in delegation_tokens]
    out += [("USER", u) for u in user_principals]
    return out


def filters(
    chosen: list[tuple[str, str]],
    resource_type_word: str | None,
    pattern_type: str,
    principals: Sequence[str],
    host: str | None,
    operations: Sequence[str],
    permission_word: str | None,
) -> list[Filter]:
    """Every combination of the selections, each checked (an empty selection matches
    anything; ``resource_type_word`` counts only without named resources). ``pattern_type``:
    Kafka's name (:func:`pattern`)."""
    targets: list[tuple[str | None, str | None]] = list(chosen) or [
        (resource_type(resource_type_word) if resource_type_word else None, None)
    ]
    people: list[str | None] = [principal(p) for p in principals] or [None]
    ops: list[str | None] = [operation(o) for o in operations] or [None]
    perm = permission(permission_word) if permission_word else None
    return [
        Filter(rtype, name, pattern_type, who, host, op, perm)
        for rtype, name in targets
        for who in people
        for op in ops
    ]


def removal_filters(
    chosen: list[tuple[str, str]],
    resource_type_word: str | None,
    pattern_word: str,
    principals: Sequence[str],
    host: str | None,
    operations: Sequence[str],
    permission_word: str | None,
) -> list[Filter]:
    """What ``acls remove`` deletes: :func:`filters`, refused when nothing is selected (that
    would remove every ACL) or with the pattern type ``match`` (for listing only)."""
    if not (chosen or resource_type_word or principals or operations or host or permission_word):
        raise UsageError("refusing to remove every ACL", "select a resource or a principal")
    pt = pattern(pattern_word, filters=True)
    if pt == "MATCH":
        raise UsageError("--pattern-type match is for list only", "any | literal | prefixed")
    return filters(chosen, resource_type_word, pt, principals, host, operations, permission_word)


def bindings_to_add(
    chosen: list[tuple[str, str]],
    *,
    pattern_word: str = "literal",
    principals: Sequence[str] = (),
    allow_principals: Sequence[str] = (),
    deny_principals: Sequence[str] = (),
    permission_word: str = "allow",
    host: str = "*",
    operations: Sequence[str] = (),
    producer: bool = False,
    consumer: bool = False,
    idempotent: bool = False,
    from_file: Path | None = None,
) -> list[Binding]:
    """What ``acls add`` asks for: the bindings of a file (``from_file``), else every
    (resource, principal, operation) of the options, checked; the shortcuts add their
    operations per resource type (the cluster for ``idempotent``). ``principals`` get
    ``permission_word``, the others ALLOW or DENY."""
    if from_file is not None:
        wanted = read_file(from_file)
    else:
        pt = pattern(pattern_word)
        people = (
            [(principal(p), permission(permission_word)) for p in principals]
            + [(principal(p), "ALLOW") for p in allow_principals]
            + [(principal(p), "DENY") for p in deny_principals]
        )
        ops = [operation(o) for o in operations]
        shortcuts = shortcut_operations(producer, consumer, idempotent)
        wanted = _expand(chosen, pt, people, host, ops, shortcuts)
    if not wanted:
        raise UsageError("no ACL to add", "give a resource, a principal and an operation")
    return wanted


def _expand(
    chosen: list[tuple[str, str]],
    pattern_type: str,
    people: list[tuple[str, str]],
    host: str,
    operations: list[str],
    shortcuts: dict[str, set[str]],
) -> list[Binding]:
    if not people:
        raise UsageError("no principal", "--principal, --allow-principal or --deny-principal")
    if not chosen:
        raise UsageError("no resource", "--topic, --group, --cluster, --transactional-id, ...")
    if not operations and not shortcuts:
        raise UsageError("no operation", "--operation, --producer or --consumer")
    if "GROUP" in shortcuts and not any(r == "GROUP" for r, _ in chosen):
        raise UsageError("--consumer needs --group", "the group the consumers commit in")
    targets = list(chosen)
    if "CLUSTER" in shortcuts and not any(r == "CLUSTER" for r, _ in chosen):
        targets.append(("CLUSTER", CLUSTER_NAME))
    out: list[Binding] = []
    for rtype, name in targets:
        ops = set(operations) | shortcuts.get(rtype, set())
        ptype = "LITERAL" if rtype == "CLUSTER" else pattern_type
        for who, perm in people:
            for op in sorted(ops):
                b = check(Binding(rtype, name, ptype, who, host, op, perm))
                if b not in out:
                    out.append(b)
    return out


def read_file(path: Path) -> list[Binding]:
    """Bindings from a YAML or JSON list (``--from-file``); errors name the entry's line."""
    import yaml

    from kctl.inputs import ACL, read_input

    text = read_input(path, "--from-file", ACL)
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
    return from_document(doc, lines)


def _binding(resource: Any, acl: Any) -> Binding:
    """A binding from protocol structs: the resource's type, name and pattern type, the ACL's
    principal, host, operation and permission (Kafka's names for the codes)."""
    return Binding(
        _CODE_TO_TYPE.get(resource.resource_type, str(resource.resource_type)),
        resource.resource_name,
        _CODE_TO_PATTERN.get(resource.pattern_type, str(resource.pattern_type)),
        acl.principal,
        acl.host,
        _CODE_TO_OP.get(acl.operation, str(acl.operation)),
        _CODE_TO_PERMISSION.get(acl.permission_type, str(acl.permission_type)),
    )


def _raise(code: int, message: str | None, what: str) -> None:
    import kafka.errors as Errors

    if code:
        name = Errors.for_code(code).__name__
        why = f"{name}: {message}" if message else name
        if code == 54:  # SECURITY_DISABLED
            why = "no authorizer is configured on the brokers (authorizer.class.name)"
        raise KctlError(what, why)


@dataclass
class Filter:
    """What list and remove select; None or "ANY" matches everything."""

    resource_type: str | None = None
    resource_name: str | None = None
    pattern_type: str = "ANY"
    principal: str | None = None
    host: str | None = None
    operation: str | None = None
    permission: str | None = None

    def fields(self) -> dict[str, Any]:
        rtype = self.resource_type
        return {
            "resource_type_filter": 1 if rtype is None else dict(RESOURCE_TYPES.values())[rtype],
            "resource_name_filter": self.resource_name,
            "pattern_type_filter": PATTERN_TYPES[self.pattern_type.lower()],
            "principal_filter": self.principal,
            "host_filter": self.host,
            "operation": 1 if self.operation is None else OPERATIONS[self.operation],
            "permission_type": 1
            if self.permission is None
            else PERMISSIONS[self.permission.lower()],
        }


def describe(admin: Admin, flt: Filter) -> list[Binding]:
    """DescribeAcls: the bindings ``flt`` selects (any broker answers)."""
    from kafka.protocol.admin import DescribeAclsRequest

    admin.metadata()
    with kafka_python.LazyClient(admin) as lazy:
        answer = kafka_python.send(
            lazy.client, DescribeAclsRequest(**flt.fields()), "describing ACLs"
        )
    _raise(answer.error_code, answer.error_message, "describing ACLs")
    found = [_binding(res, acl) for res in answer.resources for acl in res.acls]
    return sorted(found, key=lambda b: tuple(b.row().values()))


def describe_all(admin: Admin, flts: Iterable[Filter]) -> list[Binding]:
    """The bindings any of ``flts`` selects, each once, in :func:`ordered` order."""
    found: set[Binding] = set()
    for f in flts:
        found.update(describe(admin, f))
    return ordered(found)


def add(admin: Admin, wanted: list[Binding]) -> set[Binding]:
    """Create the bindings of ``wanted`` that do not exist yet (one DescribeAcls per resource
    pattern, one CreateAcls); returns those that already existed."""
    existing: set[Binding] = set()
    for rtype, name, ptype in sorted(
        {(b.resource_type, b.resource_name, b.pattern_type) for b in wanted}
    ):
        existing.update(describe(admin, Filter(rtype, name, ptype)))
    create(admin, [b for b in wanted if b not in existing])
    return existing


def create(admin: Admin, bindings: list[Binding]) -> None:
    """CreateAcls (an existing binding is left as it is: creating it again is a no-op)."""
    from kafka.protocol.admin import CreateAclsRequest as R

    if not bindings:
        return
    creations = [
        R.AclCreation(
            resource_type=dict(RESOURCE_TYPES.values())[b.resource_type],
            resource_name=b.resource_name,
            resource_pattern_type=PATTERN_TYPES[b.pattern_type.lower()],
            principal=b.principal,
            host=b.host,
            operation=OPERATIONS[b.operation],
            permission_type=PERMISSIONS[b.permission.lower()],
        )
        for b in bindings
    ]
    admin.metadata()
    with kafka_python.LazyClient(admin) as lazy:
        answer = kafka_python.send(lazy.client, R(creations=creations), "adding ACLs")
    for b, result in zip(bindings, answer.results, strict=False):
        _raise(
            result.error_code,
            result.error_message,
            f"adding {b.permission} {b.operation} for {b.principal} on "
            f"{b.resource_type} {b.resource_name!r}",
        )


def delete(admin: Admin, filters: list[Filter]) -> list[Binding]:
    """DeleteAcls: every binding the filters match goes; returns them."""
    from kafka.protocol.admin import DeleteAclsRequest as R

    request = R(filters=[R.DeleteAclsFilter(**f.fields()) for f in filters])
    admin.metadata()
    with kafka_python.LazyClient(admin) as lazy:
        answer = kafka_python.send(lazy.client, request, "removing ACLs")
    gone = []
    for result in answer.filter_results:
        _raise(result.error_code, result.error_message, "removing ACLs")
        for m in result.matching_acls:
            _raise(m.error_code, m.error_message, "removing ACLs")
            gone.append(_binding(m, m))  # a matching ACL carries its resource too
    return sorted(set(gone), key=lambda b: tuple(b.row().values()))
