"""The lag rows of one pass, pure: what :func:`kctl.broker.groups.lag_samples` read (groups,
their committed offsets, share groups' start offsets and lags, log offsets, the times of the
first records not consumed) in, one row per (group, topic, partition) in the lag-sample schema
(minus ``ts_ms`` and ``cluster``) out.

Every group type has the same row:

- classic, consumer (KIP-848) and streams (KIP-1071) groups: ``committed_offset`` is the
  offset the group committed, ``lag`` the log end minus it (kafka-consumer-groups.sh's and
  kafka-streams-groups.sh's LAG);
- share groups (KIP-932) commit nothing: ``committed_offset`` is the share-partition start
  offset (the first record not yet acknowledged for good) and ``lag`` is the lag the broker
  answers in DescribeShareGroupOffsets v1+ (kafka-share-groups.sh's LAG: the records from the
  start offset to the end that are not yet acknowledged); on older brokers, which answer none,
  the log end minus the start offset.

``time_lag_ms`` is now minus the timestamp of the first record a group has not consumed: 0
when the group is caught up (or only transaction markers are left), null without a commit,
and null when the pass was not asked for time lag."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kctl.lag.arithmetic import TP, lag_of
from kctl.lag.model import Group, Member

GONE = (-1, -1)  # the log offsets of a partition that no longer exists


def wanted_partitions(
    groups: Mapping[str, Group],
    positions: Mapping[str, Mapping[TP, int]],
    topics: list[str] | None,
) -> tuple[dict[str, set[TP]], dict[tuple[str, str, int], Member]]:
    """The partitions of each group (those it has a position on plus those assigned to its
    members; only ``topics`` when given) and the owning member of each."""
    owners: dict[tuple[str, str, int], Member] = {}
    wanted: dict[str, set[TP]] = {}
    for gid, group in groups.items():
        tps = set(positions.get(gid, {}))
        for m in group.members:
            for tp in m.assignment:
                owners[(gid, *tp)] = m
                tps.add(tp)
        if topics:
            tps = {tp for tp in tps if tp[0] in topics}
        wanted[gid] = tps
    return wanted, owners


def read_position(position: int | None, marks: tuple[int, int]) -> int | None:
    """Where the first record not consumed is read for time lag: the position, or the log start
    when records were deleted under it; None when nothing needs reading (no position, the
    partition gone, or caught up)."""
    start, end = marks
    if position is None or position < 0 or end < 0 or position >= end:
        return None
    return max(position, start)


def positions_to_read(
    positions: Mapping[str, Mapping[TP, int]], marks: Mapping[TP, tuple[int, int]]
) -> dict[TP, set[int]]:
    """Per partition, the distinct positions whose first record must be read for time lag
    (groups at the same position share one read)."""
    out: dict[TP, set[int]] = {}
    for per_group in positions.values():
        for tp, at in per_group.items():
            where = read_position(at, marks.get(tp, GONE))
            if where is not None:
                out.setdefault(tp, set()).add(where)
    return out


def group_positions(
    groups: Mapping[str, Group],
    group_ids: list[str],
    committed: Mapping[str, Mapping[TP, int]],
    share_offsets: Mapping[str, Mapping[TP, tuple[int, int]]],
) -> dict[str, dict[TP, int]]:
    """Each group's position per partition: its commits, or a share group's start offsets."""
    return {
        gid: (
            {tp: s for tp, (s, _lag) in share_offsets.get(gid, {}).items() if s >= 0}
            if groups[gid].type == "share"
            else dict(committed.get(gid, {}))
        )
        for gid in group_ids
    }


UNREAD = -1  # a record time that could not be read (or a record without a timestamp)


def time_lag_ms(
    position: int | None, end: int, first_record_ts: int | None, now_ms: int
) -> int | None:
    """now - the timestamp of the first record not consumed, never below 0 (a producer's
    clock ahead of ours); 0 when caught up or when no data record is left before the end
    (``first_record_ts`` None: transaction markers only); None without a position or a log
    end, and when the record's time is unknown (``first_record_ts`` below 0: unreadable, or a
    pre-0.10 record without a timestamp)."""
    if position is None or position < 0 or end < 0:
        return None
    if position >= end or first_record_ts is None:
        return 0
    if first_record_ts < 0:
        return None
    return max(0, now_ms - first_record_ts)


@dataclass(frozen=True)
class LagPlan:
    """What one lag pass reads, decided before any log offset is asked: per group its
    partitions (``wanted``), its position on each (only those), the owning members, and share
    groups' lags as the broker answered them."""

    groups: Mapping[str, Group]
    group_ids: list[str]
    positions: dict[str, dict[TP, int]]
    wanted: dict[str, set[TP]]
    owners: dict[tuple[str, str, int], Member]
    share_lags: dict[str, dict[TP, int]]

    def partitions(self) -> list[TP]:
        """Every partition some group of the pass reads, sorted (their log offsets are asked)."""
        return sorted(set().union(*self.wanted.values())) if self.wanted else []

    def reads(self, marks: Mapping[TP, tuple[int, int]]) -> dict[TP, set[int]]:
        """The first records to read for time lag (:func:`positions_to_read`)."""
        return positions_to_read(self.positions, marks)


def lag_plan(
    groups: Mapping[str, Group],
    group_ids: list[str],
    committed: Mapping[str, Mapping[TP, int]],
    share_offsets: Mapping[str, Mapping[TP, tuple[int, int]]],
    topics: list[str] | None = None,
) -> LagPlan:
    """The plan of a pass over ``group_ids``: ``committed`` are classic/consumer/streams
    groups' commits, ``share_offsets`` share groups' (start offset, broker lag); only
    ``topics`` when given."""
    positions = group_positions(groups, group_ids, committed, share_offsets)
    wanted, owners = wanted_partitions({g: groups[g] for g in group_ids}, positions, topics)
    return LagPlan(
        groups=groups,
        group_ids=group_ids,
        positions={
            g: {tp: at for tp, at in positions[g].items() if tp in wanted[g]} for g in group_ids
        },
        wanted=wanted,
        owners=owners,
        share_lags={
            g: {tp: lag for tp, (_start, lag) in share_offsets.get(g, {}).items()}
            for g in group_ids
            if groups[g].type == "share"
        },
    )


def lag_rows(
    plan: LagPlan,
    marks: Mapping[TP, tuple[int, int]],
    record_times: Mapping[tuple[TP, int], int] | None = None,
    now_ms: int = 0,
) -> list[dict[str, Any]]:
    """One row per (group, topic, partition) of the plan, groups in its order, partitions
    sorted. ``record_times``: per (partition, position read, as :func:`read_position` chooses
    it) the timestamp of the first data record there or after (absent: none before the end;
    below 0: unknown, see :func:`time_lag_ms`); None when time lag was not asked for."""
    rows = []
    for gid in plan.group_ids:
        group = plan.groups[gid]
        share = group.type == "share"
        for tp in sorted(plan.wanted[gid]):
            start, end = marks.get(tp, GONE)
            cur = plan.positions[gid].get(tp)
            lag = lag_of(cur, end) if end >= 0 else None
            if share and cur is not None:
                broker_lag = plan.share_lags[gid][tp]
                lag = broker_lag if broker_lag >= 0 else lag
            owner = plan.owners.get((gid, *tp))
            time_lag = None
            if record_times is not None:
                where = read_position(cur, (start, end))
                found = record_times.get((tp, where)) if where is not None else None
                time_lag = time_lag_ms(cur, end, found, now_ms)
            rows.append(
                {
                    "group": gid,
                    "topic": tp[0],
                    "partition": tp[1],
                    "committed_offset": -1 if cur is None else cur,
                    "log_start_offset": start,
                    "log_end_offset": end,
                    "lag": lag,
                    "group_state": group.state,
                    "member_id": owner.member_id if owner else None,
                    "client_id": owner.client_id if owner else None,
                    "host": owner.host if owner else None,
                    "group_type": group.type,
                    "time_lag_ms": time_lag,
                }
            )
    return rows
