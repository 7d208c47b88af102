"""What `kctl acls` list, add and remove select from their options, and the rows they show:
kctl.broker.acls' pure helpers, without a broker (tests/test_acls.py runs them on a cluster
with an authorizer)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kctl.broker import acls as A
from kctl.errors import UsageError

B = A.Binding


def test_resources_in_kafka_acls_order_with_the_clusters_one_name():
    assert A.resources(["t1", "t2"], ["g"], True, ["tx"], ["tok"], ["User:u"]) == [
        ("TOPIC", "t1"),
        ("TOPIC", "t2"),
        ("GROUP", "g"),
        ("CLUSTER", "kafka-cluster"),
        ("TRANSACTIONAL_ID", "tx"),
        ("DELEGATION_TOKEN", "tok"),
        ("USER", "User:u"),
    ]
    assert A.resources() == []


def test_filters_are_every_combination_and_an_empty_selection_matches_anything():
    got = A.filters(
        A.resources(["t"], ["g"]), "cluster", "ANY", ["User:a", "User:b"], None, ["Read"], "deny"
    )
    assert [(f.resource_type, f.resource_name, f.principal) for f in got] == [
        ("TOPIC", "t", "User:a"),
        ("TOPIC", "t", "User:b"),
        ("GROUP", "g", "User:a"),
        ("GROUP", "g", "User:b"),
    ]  # named resources win over --resource-type
    assert {(f.operation, f.permission, f.pattern_type) for f in got} == {("READ", "DENY", "ANY")}
    assert A.filters([], None, "ANY", [], None, [], None) == [A.Filter()]
    (by_type,) = A.filters([], "transactionalId", "MATCH", [], "h", [], None)
    assert (by_type.resource_type, by_type.resource_name, by_type.host) == (
        "TRANSACTIONAL_ID",
        None,
        "h",
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([], "bogus", "ANY", [], None, [], None), "unknown resource type 'bogus'"),
        (([], None, "ANY", ["alice"], None, [], None), "principal 'alice' is not TYPE:NAME"),
        (([], None, "ANY", [], None, ["Fly"], None), "unknown operation 'Fly'"),
        (([], None, "ANY", [], None, [], "maybe"), "unknown permission 'maybe'"),
    ],
)
def test_filters_refuse_unknown_words(args, message):
    with pytest.raises(UsageError, match=message):
        A.filters(*args)


def test_removal_refuses_to_select_everything_and_the_match_pattern():
    with pytest.raises(UsageError, match="refusing to remove every ACL"):
        A.removal_filters([], None, "any", [], None, [], None)
    with pytest.raises(UsageError, match="refusing to remove every ACL"):
        A.removal_filters([], None, "bogus", [], None, [], None)  # refused before the word
    with pytest.raises(UsageError, match="--pattern-type match is for list only"):
        A.removal_filters([], None, "match", ["User:a"], None, [], None)
    (f,) = A.removal_filters([], None, "prefixed", [], "h", [], None)
    assert (f.pattern_type, f.host) == ("PREFIXED", "h")


def test_add_builds_one_binding_per_resource_principal_and_operation():
    got = A.bindings_to_add(
        A.resources(["t"]),
        pattern_word="prefixed",
        principals=["User:a"],
        deny_principals=["User:m"],
        permission_word="allow",
        host="10.0.0.1",
        operations=["Read", "DescribeConfigs"],
    )
    assert got == [
        B("TOPIC", "t", "PREFIXED", "User:a", "10.0.0.1", "DESCRIBE_CONFIGS", "ALLOW"),
        B("TOPIC", "t", "PREFIXED", "User:a", "10.0.0.1", "READ", "ALLOW"),
        B("TOPIC", "t", "PREFIXED", "User:m", "10.0.0.1", "DESCRIBE_CONFIGS", "DENY"),
        B("TOPIC", "t", "PREFIXED", "User:m", "10.0.0.1", "READ", "DENY"),
    ]


def test_add_shortcuts_give_operations_per_resource_type_and_the_cluster_literal():
    got = A.bindings_to_add(
        A.resources(["t"], ["g"], transactional_ids=["tx"]),
        pattern_word="prefixed",
        allow_principals=["User:a"],
        producer=True,
        consumer=True,
        idempotent=True,
    )
    ops = {(b.resource_type, b.operation, b.pattern_type) for b in got}
    assert ops == {
        ("TOPIC", "CREATE", "PREFIXED"),
        ("TOPIC", "DESCRIBE", "PREFIXED"),
        ("TOPIC", "READ", "PREFIXED"),
        ("TOPIC", "WRITE", "PREFIXED"),
        ("GROUP", "READ", "PREFIXED"),
        ("TRANSACTIONAL_ID", "DESCRIBE", "PREFIXED"),
        ("TRANSACTIONAL_ID", "WRITE", "PREFIXED"),
        ("CLUSTER", "IDEMPOTENT_WRITE", "LITERAL"),
    }
    assert len(got) == len(ops)


def test_add_keeps_each_binding_once():
    got = A.bindings_to_add(
        A.resources(["t", "t"]),
        principals=["User:a"],
        allow_principals=["User:a"],
        operations=["Read", "read"],
    )
    assert got == [B("TOPIC", "t", "LITERAL", "User:a", "*", "READ", "ALLOW")]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"operations": ["Read"]}, "no principal"),
        ({"principals": ["User:a"], "operations": ["Read"], "chosen": []}, "no resource"),
        ({"principals": ["User:a"]}, "no operation"),
        ({"principals": ["User:a"], "consumer": True}, "--consumer needs --group"),
        (
            {"principals": ["User:a"], "operations": ["IdempotentWrite"]},
            "operation IDEMPOTENT_WRITE does not apply to TOPIC resources",
        ),
        (
            {"principals": ["User:a"], "operations": ["Read"], "pattern_word": "match"},
            "unknown pattern type 'match' \\(literal\\|prefixed\\)",
        ),
        (
            {"principals": ["User:a"], "operations": ["Read"], "permission_word": "maybe"},
            "unknown permission 'maybe'",
        ),
    ],
)
def test_add_refuses_what_cannot_become_an_acl(options, message):
    chosen = options.pop("chosen", A.resources(["t"]))
    with pytest.raises(UsageError, match=message):
        A.bindings_to_add(chosen, **options)


def test_add_reads_a_file_instead_of_the_options_and_refuses_an_empty_one(tmp_path: Path):
    path = tmp_path / "acls.yaml"
    path.write_text(
        "- {resource_type: topic, resource_name: t, principal: 'User:a', operation: Read}\n"
        "- {resource_type: cluster, principal: 'User:a', operation: IdempotentWrite}\n"
    )
    assert A.bindings_to_add([], from_file=path) == [
        B("TOPIC", "t", "LITERAL", "User:a", "*", "READ", "ALLOW"),
        B("CLUSTER", "kafka-cluster", "LITERAL", "User:a", "*", "IDEMPOTENT_WRITE", "ALLOW"),
    ]
    path.write_text("[]\n")
    with pytest.raises(UsageError, match="no ACL to add"):
        A.bindings_to_add([], from_file=path)


def test_a_files_errors_name_the_line_of_the_entry_or_of_the_yaml_problem(tmp_path: Path):
    path = tmp_path / "acls.yaml"
    path.write_text(
        "- resource_type: topic\n  resource_name: t\n  principal: User:a\n  operation: Read\n"
        "- resource_type: topic\n  principal: User:a\n  operation: Read\n"
    )
    with pytest.raises(UsageError, match=r"^ACL file, line 5: missing resource_name$"):
        A.read_file(path)
    path.write_text("[1, 2\n")
    with pytest.raises(UsageError, match=f"ACL file {path}: line 2: expected ','"):
        A.read_file(path)


def test_rows_orders_states_and_sentences():
    a = B("TOPIC", "t", "LITERAL", "User:b", "*", "READ", "ALLOW")
    b = B("GROUP", "g", "LITERAL", "User:a", "*", "READ", "DENY")
    c = B("TOPIC", "s", "PREFIXED", "User:a", "*", "WRITE", "ALLOW")
    assert A.ordered([a, b, c]) == [b, c, a]
    assert A.rows([b]) == [
        {
            "resource_type": "GROUP",
            "resource_name": "g",
            "pattern_type": "LITERAL",
            "principal": "User:a",
            "host": "*",
            "operation": "READ",
            "permission": "DENY",
        }
    ]
    assert [r["state"] for r in A.add_rows([a, b], {b})] == ["added", "exists"]
    assert A.sentence(c) == "ALLOW User:a WRITE on TOPIC 's' (PREFIXED, host *)"
