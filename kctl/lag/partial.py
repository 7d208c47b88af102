"""Lag passes over a cluster that is only partly there, pure: what a group listing missed,
the warnings and the error of a one-shot ``groups lag`` that could not read every group, and
what the exporter keeps serving, marked stale, for the groups a collection could not read.

A group's coordinator is the leader of one partition of ``__consumer_offsets``; a broker lists
(ListGroups) the groups of the partitions it leads once it has loaded them. With a broker away,
its groups cannot be listed nor read; right after brokers start, their coordinators are still
loading. Either way those groups are *not known yet*: never "no groups", never lag 0, never a
series that just disappears (:mod:`kctl.broker.groups` reads, this module decides)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kctl.errors import KctlError
from kctl.lag.arithmetic import TP
from kctl.lag.model import LagPass

OFFSETS_TOPIC = "__consumer_offsets"


def _numbers(values: Iterable[int]) -> str:
    return ", ".join(str(v) for v in sorted(values))


def unlisted(
    leaders: Mapping[int, int],
    claimed: set[int],
    loading: Mapping[int, str],
    away: Mapping[int, str],
) -> tuple[list[str], list[str]]:
    """What one round of ListGroups to every broker missed: for the partitions of
    ``__consumer_offsets`` (partition -> leader in ``leaders``) that no broker which answered
    claims to lead (``claimed``), sentences of what is missed for good in this round (their
    leader did not answer: ``away``, broker -> why; no leader) and of what is moving (their
    leader answered but does not lead them yet: worth asking again). Partitions whose leader
    is ``loading`` are told by that."""
    away_parts: dict[int, list[int]] = {}
    moving_parts: dict[int, list[int]] = {}
    leaderless: list[int] = []
    for p in sorted(set(leaders) - claimed):
        leader = leaders[p]
        if leader in loading:
            continue
        if leader in away:
            away_parts.setdefault(leader, []).append(p)
        elif leader < 0:
            leaderless.append(p)
        else:
            moving_parts.setdefault(leader, []).append(p)
    missed = [
        f"the groups of {OFFSETS_TOPIC} partition(s) {_numbers(ps)} are not listed: their "
        f"coordinator, broker {b}, did not answer ({away[b]})"
        for b, ps in sorted(away_parts.items())
    ]
    if leaderless:
        missed.append(
            f"the groups of {OFFSETS_TOPIC} partition(s) {_numbers(leaderless)} are not "
            "listed: the partition has no leader"
        )
    moving = [
        f"the groups of {OFFSETS_TOPIC} partition(s) {_numbers(ps)} are not listed: broker "
        f"{b}, their leader, does not lead them yet"
        for b, ps in sorted(moving_parts.items())
    ]
    return missed, moving


def loading_text(loading: Mapping[int, str]) -> str:
    """Which brokers are still loading their groups, and what they answered."""
    return ", ".join(f"broker {b} ({why})" for b, why in sorted(loading.items()))


def check_listed(loading: Mapping[int, str]) -> None:
    """A group list whose brokers were still loading groups when the timeout ran out fails,
    naming them: it cannot say which groups exist (nor that there are none)."""
    if loading:
        raise KctlError(
            "listing groups",
            f"still loading groups after --timeout: {loading_text(loading)}; their groups are "
            "not known yet, try again",
        )


def unread_by_partitions(wanted: Mapping[str, set[TP]], lost: Mapping[TP, str]) -> dict[str, str]:
    """The groups that read a partition whose log offsets could not be read (``lost``:
    partition -> why), with why (the first such partition, and how many more)."""
    out: dict[str, str] = {}
    for gid, tps in wanted.items():
        bad = sorted(tp for tp in tps if tp in lost)
        if bad:
            (t, p), more = bad[0], len(bad) - 1
            also = f" (and {more} more partition(s))" if more else ""
            out[gid] = f"no log offsets for {t}[{p}]{also}: {lost[bad[0]]}"
    return out


def pass_warnings(done: LagPass) -> list[str]:
    """The stderr warnings of a partial pass: what the group list missed, and the groups not
    read with why (one line per reason)."""
    lines = [f"kctl: warning: {why}" for why in done.unlisted]
    if done.loading:
        lines.append(
            f"kctl: warning: the groups of {loading_text(done.loading)} are not listed: "
            "still loading"
        )
    by_reason: dict[str, list[str]] = {}
    for group, why in sorted(done.unread.items()):
        by_reason.setdefault(why, []).append(group)
    for why, groups in by_reason.items():
        names = ", ".join(repr(g) for g in groups)
        lines.append(f"kctl: warning: lag of group(s) {names} not read: {why}")
    return lines


def unknown_entries(done: LagPass) -> list[dict[str, Any]]:
    """The ``unknown`` list of ``groups lag -o json``: per group not read ``{"group",
    "reason"}``; per part of the group list missed ``{"group": null, "reason"}``."""
    out: list[dict[str, Any]] = [{"group": None, "reason": why} for why in done.unlisted]
    if done.loading:
        out.append({"group": None, "reason": f"still loading: {loading_text(done.loading)}"})
    out += [{"group": g, "reason": why} for g, why in sorted(done.unread.items())]
    return out


def incomplete_error(unknown: list[dict[str, Any]]) -> KctlError | None:
    """The error a one-shot ``groups lag`` ends with (exit 1, after showing what it read) when
    it could not read every group; None when it did."""
    if not unknown:
        return None
    groups = [u["group"] for u in unknown if u["group"] is not None]
    parts = [f"{len(groups)} group(s) not read"] if groups else []
    if len(groups) < len(unknown):
        parts.append("the group list is incomplete")
    return KctlError("lag incomplete", "; ".join(parts) + ": see the warnings above")


@dataclass
class Carried:
    """The exporter's snapshot after a collection: the rows it serves (fresh ones and those
    kept from earlier collections), the groups whose rows are kept (stale), and per group the
    rows to keep next time."""

    rows: list[dict[str, Any]]
    stale: set[str]
    last: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def carry_over(
    last: Mapping[str, list[dict[str, Any]]],
    fresh: list[dict[str, Any]],
    read: Iterable[str],
    failed: bool,
    unread: Iterable[str] = (),
) -> Carried:
    """What the exporter serves after a collection. ``last``: per group the rows it served
    before; ``fresh``: the rows just read, of the groups ``read``; ``failed``: the collection
    read nothing. A group read keeps only its fresh rows (none: gone, or no commit left); a
    group not read (``unread``, or every group when ``failed``) keeps its last rows, marked
    stale; a group the collection did not ask about at all is gone."""
    by_group: dict[str, list[dict[str, Any]]] = {}
    for row in fresh:
        by_group.setdefault(row["group"], []).append(row)
    now: dict[str, list[dict[str, Any]]] = {}
    if failed:
        keep = set(last)
    else:
        keep = (set(unread) & set(last)) - set(by_group)
        now = {g: [] for g in read}
        now.update(by_group)
    for g in keep:
        now[g] = list(last[g])
    rows = [r for g in sorted(now) for r in now[g]]
    return Carried(rows, keep, {g: rs for g, rs in now.items() if rs})
