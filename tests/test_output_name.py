"""``-o name``: names only, one per line, no header — for ``| xargs`` (kubectl's habit)."""

from __future__ import annotations

import io
import json

from conftest import commit_offsets, unique

from kctl.formatters import Output, View, cols, emit

NAME = View("name")


def test_renderer_prints_the_first_column_once_per_name():
    out = io.StringIO()
    rows = [{"topic": "a", "partition": 0}, {"topic": "a", "partition": 1}, {"topic": "b"}]
    emit(Output(rows, cols("topic", "partition:>"), footer=[{"topic": "TOTAL"}]), NAME, out)
    assert out.getvalue() == "a\nb\n"


def test_renderer_prints_name_key_when_given():
    out = io.StringIO()
    rows = [{"group": "g", "member_id": "m-1"}, {"group": "g", "member_id": "m-2"}]
    emit(Output(rows, cols("group", "member_id"), name_key="member_id"), NAME, out)
    assert out.getvalue() == "m-1\nm-2\n"


def test_renderer_prints_nothing_for_no_rows():
    out = io.StringIO()
    emit(Output([], cols("topic")), NAME, out)
    assert out.getvalue() == ""


def test_topics_list(kctl, new_topic):
    prefix = unique("nm")
    names = sorted(new_topic(prefix=prefix) for _ in range(2))
    r = kctl("topics", "list", "--pattern", f"{prefix}.*", "-o", "name")
    assert r.code == 0, r
    assert r.stdout == "".join(f"{n}\n" for n in names)


def test_topics_describe_names_each_topic_once(kctl, new_topic):
    topic = new_topic(partitions=3)
    r = kctl("topics", "describe", topic, "-o", "name")
    assert (r.code, r.stdout) == (0, f"{topic}\n"), r


def test_groups_list(kctl, bootstrap, new_topic):
    topic = new_topic(partitions=1)
    group = unique("nm-g")
    commit_offsets(bootstrap, group, {(topic, 0): 0})
    r = kctl("groups", "list", "-o", "name")
    assert r.code == 0, r
    assert group in r.stdout.splitlines()
    assert all(line and "\t" not in line and line != "GROUP" for line in r.stdout.splitlines())


def test_cluster_describe_names_the_broker_ids(kctl):
    ids = [
        b["broker"] for b in json.loads(kctl("cluster", "describe", "-o", "json").stdout)["brokers"]
    ]
    r = kctl("cluster", "describe", "-o", "name")
    assert r.code == 0, r
    assert r.stdout == "".join(f"{i}\n" for i in ids)


def test_profile_list(offline_kctl):
    for name in ("b-prof", "a-prof"):
        assert offline_kctl("-b", "h:9092", "profile", "add", name).code == 0
    r = offline_kctl("profile", "list", "-o", "name")
    assert (r.code, r.stdout) == (0, "a-prof\nb-prof\n"), r


def test_name_is_offered_in_help_and_refused_by_consume(kctl, new_topic):
    r = kctl("consume", new_topic(partitions=1), "-o", "name")
    assert r.code == 2 and r.stderr.startswith("kctl: error: "), r


def test_unknown_format_lists_name(offline_kctl):
    r = offline_kctl("-o", "names", "profile", "list")
    assert r.code == 2 and "name" in r.stderr, r
