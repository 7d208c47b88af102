"""Consumer-group operations (kafka-consumer-groups.sh): list, describe, lag, delete, reset.

The cost of a lag check does not grow with the number of groups or partitions:

- FindCoordinator: one request for all groups (v4+, KIP-699; one per group on older brokers);
- DescribeGroups: one request per coordinator for all of its groups; the groups it answers
  Dead (groups of the consumer protocol, KIP-848, are unknown to it) are described again with
  ConsumerGroupDescribe through librdkafka;
- OffsetFetch: one request per coordinator for all of its groups (v8+, KIP-709; one per group
  on older brokers);
- Metadata: one request for the leaders of the groups' topics;
- ListOffsets: one request per partition leader and per spec (earliest, latest) for every
  partition, all sent at once over kafka-python's connections (librdkafka's ``list_offsets``
  took ~2 s per spec at 20,000 partitions, one Python future per partition).

The group requests go through kafka-python's protocol classes (librdkafka's Python API sends one
request per group); ListOffsets and the admin operations (commit, delete) go through
librdkafka. What is pure lives in :mod:`kctl.lag`: the arithmetic (lag, reset plans, clamping)
in ``arithmetic``, the groups as data in ``model``, the refusals and rows in ``rules`` and
``report``, the sequence of ``groups lag``'s passes in ``watch``; the operations here read and
write, and call those rules where a command's sequence needs them.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kctl.broker import kafka_python
from kctl.broker.client import Admin
from kctl.errors import KctlError, NotFoundError, UnsupportedByBroker
from kctl.lag import partial, rules
from kctl.lag.arithmetic import TP
from kctl.lag.model import (
    GROUP_TYPES,
    Described,
    Group,
    LagPass,
    Listed,
    Listing,
    Member,
    OffsetsDeleted,
    ResetPlan,
    ResetRequest,
)

if TYPE_CHECKING:
    from kctl.lag.report import LagReport

# Kafka error codes the group requests answer with.
_GROUP_ID_NOT_FOUND = 69
_RETRIABLE = {
    14,
    15,
    16,
}  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR
OFFSETS_TOPIC = partial.OFFSETS_TOPIC


_STATE_NAMES = {
    "UNKNOWN": "Unknown",
    "PREPARING_REBALANCING": "PreparingRebalance",
    "COMPLETING_REBALANCING": "CompletingRebalance",
    "STABLE": "Stable",
    "DEAD": "Dead",
    "EMPTY": "Empty",
    "ASSIGNING": "Assigning",
    "RECONCILING": "Reconciling",
    "NOT_READY": "NotReady",
}


def _error_name(code: int) -> str:
    import kafka.errors as Errors

    return str(getattr(Errors.for_code(code), "message", f"error code {code}"))


def list_groups(admin: Admin) -> list[Listed]:
    """Every group the cluster's brokers list, of every type (:meth:`GroupReader.listing`:
    the groups of brokers that do not answer are left out)."""
    with GroupReader(admin) as reader:
        return reader.listing().groups


def list_group_ids(admin: Admin) -> list[tuple[str, str, bool]]:
    """(group id, listed state, is simple consumer group) for every group the cluster lists."""
    return [(g.group, g.state, g.simple) for g in list_groups(admin)]


class GroupReader(kafka_python.LazyClient):
    """kafka-python protocol requests about groups, over one connection pool for a command (or a
    whole ``--watch``). Use as a context manager; the client starts on first use.

    Strict by default: a group that cannot be read fails the operation. With ``unread`` set to
    a dict (:meth:`tolerant`), a group whose coordinator does not answer, or does not settle
    within the timeout, is put there (group -> why) instead, and the reads go on with the
    others; the methods leave such groups out of their answers (``committed`` and
    ``share_offsets`` map them to nothing)."""

    def __init__(self, admin: Admin) -> None:
        super().__init__(admin)
        self._coordinators: dict[str, int] = {}
        self.unread: dict[str, str] | None = None

    def version(self, request_class: Any) -> int:
        """The highest version of an API both kafka-python and the broker speak (-1: none)."""
        return kafka_python.api_version(self.client, request_class)

    def send(self, request: Any, what: str, node_id: int | None = None) -> Any:
        return kafka_python.send(self.client, request, what, node_id)

    @contextmanager
    def tolerant(self) -> Iterator[dict[str, str]]:
        """Within the block, groups that cannot be read go to the dict it yields (and
        ``unread``) instead of failing the reads."""
        self.unread = {}
        try:
            yield self.unread
        finally:
            self.unread = None

    def _give_up(self, group_ids: list[str], why: str, error: KctlError) -> None:
        """Groups that could not be read: in ``unread`` when tolerant, else ``error`` raised."""
        if self.unread is None:
            raise error
        for gid in group_ids:
            self.unread.setdefault(gid, why)
        self.forget(group_ids)

    def _settle(self, deadline: float, pending: list[str], what: str, code: int) -> list[str]:
        """Between retries of groups whose coordinator answered a retriable error: a short
        wait, then the groups to ask again; when the timeout has run out they are given up
        (:meth:`_give_up`) and none is left."""
        if not pending:
            return []
        if time.monotonic() >= deadline:
            why = f"{_error_name(code)}: the coordinator did not settle in time"
            self._give_up(pending, why, KctlError(what, why))
            return []
        time.sleep(0.1)
        return pending

    # -- coordinators ---------------------------------------------------------------------

    def coordinators(self, group_ids: list[str]) -> dict[str, int]:
        """Group id -> coordinator node: one FindCoordinator v4+ for all unknown ids (one per id
        on older brokers). Answers are kept for the reader's lifetime (``forget`` drops one).
        Tolerant, groups whose coordinator is not found in time are left out."""
        from kafka.protocol.metadata import FindCoordinatorRequest

        what = "finding group coordinators"
        unknown = [g for g in dict.fromkeys(group_ids) if g not in self._coordinators]
        deadline = time.monotonic() + self.admin.timeout
        while unknown:
            retry, code = [], 15
            try:
                if self.version(FindCoordinatorRequest) >= 4:
                    request = FindCoordinatorRequest(key_type=0, coordinator_keys=unknown)
                    response = self.send(request, what)
                    answers = [(c.key, c.error_code, c.node_id) for c in response.coordinators]
                else:
                    answers = []
                    for gid in unknown:
                        request = FindCoordinatorRequest(key=gid, key_type=0, max_version=3)
                        r = self.send(request, f"finding the coordinator of group {gid!r}")
                        answers.append((gid, r.error_code, r.node_id))
            except kafka_python.NoAnswer:
                # The broker asked did not answer: another is asked next (kafka-python backs
                # off from a node that failed), within the timeout.
                if self.unread is None or time.monotonic() >= deadline:
                    raise
                time.sleep(0.1)
                continue
            for gid, c, node in answers:
                if c in _RETRIABLE:
                    retry.append(gid)
                    code = c
                elif c:
                    raise KctlError(f"finding the coordinator of group {gid!r}", _error_name(c))
                else:
                    self._coordinators[gid] = node
            unknown = self._settle(deadline, retry, what, code)
        return {g: self._coordinators[g] for g in group_ids if g in self._coordinators}

    def forget(self, group_ids: list[str]) -> None:
        for gid in group_ids:
            self._coordinators.pop(gid, None)

    def _by_coordinator(self, group_ids: list[str]) -> list[tuple[int, list[str]]]:
        """The groups per coordinator node, nodes in order."""
        by_node: dict[int, list[str]] = defaultdict(list)
        for gid, node in self.coordinators(group_ids).items():
            by_node[node].append(gid)
        return sorted(by_node.items())

    def _per_coordinator(
        self, group_ids: list[str], ask: Callable[[int, list[str]], list[str]], what: str
    ) -> None:
        """Call ``ask(node, groups)`` once per coordinator; it returns the groups whose
        coordinator moved (retried, bounded by the timeout). Tolerant, the groups of a
        coordinator that does not answer are given up."""
        pending = list(dict.fromkeys(group_ids))
        deadline = time.monotonic() + self.admin.timeout
        while pending:
            by_node = self._by_coordinator(pending)
            pending = []
            for node, gids in by_node:
                try:
                    moved = ask(node, gids)
                except kafka_python.NoAnswer as exc:
                    self._give_up(gids, _no_answer(node, exc), exc)
                    continue
                self.forget(moved)
                pending += moved
            pending = self._settle(deadline, pending, what, 16)

    def _per_coordinator_at_once(
        self,
        group_ids: list[str],
        build: Callable[[list[str]], Any],
        take: Callable[[int, Any], list[str]],
        what: str,
    ) -> None:
        """One request per coordinator, ``build(groups)``, all sent at once (one round trip);
        ``take(node, response)`` returns the groups whose coordinator moved (asked again,
        bounded by the timeout). Tolerant, the groups of a coordinator that does not answer
        are given up and the others' answers taken."""
        pending = list(dict.fromkeys(group_ids))
        deadline = time.monotonic() + self.admin.timeout
        while pending:
            batches = self._by_coordinator(pending)
            requests = [(node, build(gids)) for node, gids in batches]
            if self.unread is None:
                responses = kafka_python.send_all(self.client, requests, what)
            else:
                responses = kafka_python.send_each(self.client, requests, what)
            pending = []
            for (node, gids), response in zip(batches, responses, strict=True):
                if isinstance(response, kafka_python.NoAnswer):
                    self._give_up(gids, _no_answer(node, response), response)
                    continue
                moved = take(node, response)
                self.forget(moved)
                pending += moved
            pending = self._settle(deadline, pending, what, 16)

    def listing(self) -> Listing:
        """Every group of every type (classic, consumer, share, streams) the brokers list, and
        what could not be listed: the one listing of every "all groups" path.

        To every broker at once, on its connection: a Metadata of ``__consumer_offsets`` (the
        partitions it leads, as it sees them), then ListGroups with no filter (v5+ lists share
        and streams groups, which librdkafka's ListGroups leaves out). A broker answers one
        connection's requests in order, so its list covers the partitions its Metadata says it
        leads. A partition no broker that answered claims has groups nobody listed: while its
        leader answers that it is loading groups (COORDINATOR_LOAD_IN_PROGRESS, ...) or does
        not lead it yet (leadership moving: a restart), everything is asked again, within the
        timeout; what is left then is in ``loading``. A broker that does not answer and a
        partition without a leader are not waited for: ``missed`` names them."""
        deadline = time.monotonic() + self.admin.timeout
        while True:
            try:
                found, loading, missed, moving = self._list_once()
            except kafka_python.NoAnswer:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.2)  # the broker asked for metadata is away: another is asked
                continue
            if not (loading or moving) or time.monotonic() >= deadline:
                break
            time.sleep(0.2)
        return Listing([found[g] for g in sorted(found)], loading, [*missed, *moving])

    def _list_once(self) -> tuple[dict[str, Listed], dict[int, str], list[str], list[str]]:
        """One round of :meth:`listing`: the groups found, the brokers loading (-> error name),
        what was missed for good and what is moving (sentences)."""
        from kafka.protocol.admin import ListGroupsRequest
        from kafka.protocol.metadata import MetadataRequest

        def metadata() -> Any:
            topic = MetadataRequest.MetadataRequestTopic(name=OFFSETS_TOPIC)
            return MetadataRequest(topics=[topic], allow_auto_topic_creation=False)

        def leaders(md: Any) -> dict[int, int]:
            topics = [t for t in md.topics if t.name == OFFSETS_TOPIC and not t.error_code]
            return {p.partition_index: p.leader_id for t in topics for p in t.partitions}

        cluster = self.send(metadata(), "reading the cluster's brokers")
        where = leaders(cluster)  # partition -> leader, as one broker sees it
        brokers = sorted(b.node_id for b in cluster.brokers)
        requests: list[tuple[int, Any]] = []
        everything: dict[str, list[str]] = {"states_filter": [], "types_filter": []}
        for node in brokers:
            requests += [(node, metadata()), (node, ListGroupsRequest(**everything))]
        answers = kafka_python.send_each(self.client, requests, "listing groups")
        found: dict[str, Listed] = {}
        loading: dict[int, str] = {}
        away: dict[int, str] = {}
        claimed: set[int] = set()
        for i, node in enumerate(brokers):
            md, listed = answers[2 * i], answers[2 * i + 1]
            failed = next((a for a in (md, listed) if isinstance(a, kafka_python.NoAnswer)), None)
            if failed is not None:
                away[node] = str(failed.why)
                continue
            if listed.error_code in _RETRIABLE:  # a coordinator still loading, say
                loading[node] = _error_name(listed.error_code)
                continue
            if listed.error_code:
                raise KctlError(f"listing groups on broker {node}", _error_name(listed.error_code))
            own = leaders(md)
            for p, leader in own.items():
                where.setdefault(p, leader)
                if leader == node:
                    claimed.add(p)
            for g in listed.groups:
                kind = getattr(g, "group_type", "") or ""
                state = getattr(g, "group_state", "") or ""
                found[g.group_id] = Listed(
                    g.group_id,
                    _STATE_NAMES.get(state.upper(), state or "Unknown"),
                    kind if kind in GROUP_TYPES else "unknown",
                    not g.protocol_type,
                )
        return found, loading, *partial.unlisted(where, claimed, loading, away)

    # -- DescribeGroups -------------------------------------------------------------------

    def describe(self, group_ids: list[str]) -> dict[str, Group]:
        """DescribeGroups, one request per coordinator; ConsumerGroupDescribe for the groups it
        answers Dead. A group neither knows is reported as Kafka does: state Dead, no members."""
        from kafka.protocol.admin import DescribeGroupsRequest

        out: dict[str, Group] = {}

        def build(gids: list[str]) -> Any:
            return DescribeGroupsRequest(groups=gids, include_authorized_operations=False)

        def take(node: int, response: Any) -> list[str]:
            moved = []
            for g in response.groups:
                if g.error_code in _RETRIABLE:
                    moved.append(g.group_id)
                    continue
                if g.error_code and g.error_code != _GROUP_ID_NOT_FOUND:
                    raise KctlError(f"describing group {g.group_id!r}", _error_name(g.error_code))
                out[g.group_id] = Group(
                    group=g.group_id,
                    state=g.group_state or ("Dead" if g.error_code else "Unknown"),
                    protocol_type=g.protocol_type or None,
                    assignor=g.protocol_data or None,
                    coordinator=node,
                    members=sorted((_member(m) for m in g.members), key=lambda m: m.member_id),
                )
            return moved

        if group_ids:
            self._per_coordinator_at_once(group_ids, build, take, "describing groups")
        # DescribeGroups only knows classic groups: a group of the consumer protocol (KIP-848)
        # answers Dead with no members there. Those go through ConsumerGroupDescribe.
        dead = [gid for gid in group_ids if gid in out and out[gid].state == "Dead"]
        if dead:
            out.update(self.describe_consumer_protocol(dead))
        dead = [gid for gid in group_ids if gid in out and out[gid].state == "Dead"]
        if dead:
            out.update(self.describe_share(dead))
        dead = [gid for gid in group_ids if gid in out and out[gid].state == "Dead"]
        if dead:
            out.update(self.describe_streams(dead))
        unread = self.unread or {}
        return {gid: out[gid] for gid in group_ids if gid in out and gid not in unread}

    def describe_share(self, group_ids: list[str]) -> dict[str, Group]:
        """ShareGroupDescribe (KIP-932) for groups neither DescribeGroups nor
        ConsumerGroupDescribe knows, one request per coordinator; unknown ones are left out."""
        from kctl.broker.messages import ShareGroupDescribeRequest as R

        def members(g: Any) -> list[Member]:
            return [
                Member(
                    member_id=m.member_id,
                    group_instance_id=None,
                    client_id=m.client_id,
                    host=m.client_host,
                    assignment=_assigned(m.assignment),
                    member_epoch=m.member_epoch,
                    subscribed_topics=sorted(m.subscribed_topic_names or []),
                )
                for m in g.members
            ]

        return self._describe_epoch_groups(R, "share", group_ids, members)

    def _describe_epoch_groups(
        self,
        request_class: Any,
        kind: str,
        group_ids: list[str],
        members: Callable[[Any], list[Member]],
    ) -> dict[str, Group]:
        """ShareGroupDescribe or StreamsGroupDescribe, one request per coordinator: the groups
        of that kind; the others (an error for each) are left out."""
        if not group_ids or self.version(request_class) < 0:
            return {}
        out: dict[str, Group] = {}
        what = f"describing {kind} groups"

        def ask(node: int, gids: list[str]) -> list[str]:
            request = request_class(group_ids=gids, include_authorized_operations=False)
            response = self.send(request, what, node_id=node)
            moved = []
            for g in response.groups:
                if g.error_code in _RETRIABLE:
                    moved.append(g.group_id)
                elif not g.error_code:
                    out[g.group_id] = _epoch_group(g, node, members(g), kind)
            return moved

        self._per_coordinator(group_ids, ask, what)
        return out

    def share_offsets(self, group_ids: list[str]) -> dict[str, dict[TP, tuple[int, int]]]:
        """Per share group, (start offset, lag) of every partition it has state for
        (DescribeShareGroupOffsets; lag -1 on brokers before v1, and where Kafka has none)."""
        from kctl.broker.messages import DescribeShareGroupOffsetsRequest as R

        if self.version(R) < 0:
            raise UnsupportedByBroker("DescribeShareGroupOffsets", "share group offsets")
        out: dict[str, dict[TP, tuple[int, int]]] = {g: {} for g in group_ids}

        def ask(node: int, gids: list[str]) -> list[str]:
            groups = [
                R.DescribeShareGroupOffsetsRequestGroup(group_id=g, topics=None) for g in gids
            ]
            response = self.send(R(groups=groups), "describing share group offsets", node_id=node)
            moved = []
            for g in response.groups:
                if g.error_code in _RETRIABLE:
                    moved.append(g.group_id)
                    continue
                if g.error_code:
                    raise KctlError(
                        f"describing the offsets of share group {g.group_id!r}",
                        g.error_message or _error_name(g.error_code),
                    )
                for topic in g.topics:
                    for part in topic.partitions:
                        if part.error_code:
                            continue
                        lag = getattr(part, "lag", -1)
                        out[g.group_id][(topic.topic_name, part.partition_index)] = (
                            part.start_offset,
                            -1 if lag is None else lag,
                        )
            return moved

        self._per_coordinator(group_ids, ask, "describing share group offsets")
        return out

    def share_starts(self, group: str) -> dict[TP, int]:
        """A share group's start offset per partition (where it has one): its "committed"
        offsets, as resets and deletes see them."""
        return {
            tp: start for tp, (start, _lag) in self.share_offsets([group])[group].items()
            if start >= 0
        }  # fmt: skip

    def alter_share_offsets(self, group: str, targets: dict[TP, int]) -> dict[TP, str | None]:
        """AlterShareGroupOffsets (KIP-932; the group must be empty): error name (or None) per
        partition."""
        from kctl.broker.messages import AlterShareGroupOffsetsRequest as R

        what = f"resetting the start offsets of share group {group!r}"
        if self.version(R) < 0:
            raise UnsupportedByBroker("AlterShareGroupOffsets", what)
        by_topic: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for (t, p), offset in sorted(targets.items()):
            by_topic[t].append((p, offset))
        Topic = R.AlterShareGroupOffsetsRequestTopic
        Part = Topic.AlterShareGroupOffsetsRequestPartition
        request = R(
            group_id=group,
            topics=[
                Topic(topic_name=t, partitions=[Part(partition_index=p, start_offset=o)
                                                for p, o in ps])
                for t, ps in by_topic.items()
            ],
        )  # fmt: skip
        response = self.send(request, what, node_id=self.coordinators([group])[group])
        if response.error_code:
            raise KctlError(what, response.error_message or _error_name(response.error_code))
        return {
            (t.topic_name, p.partition_index): (
                (p.error_message or _error_name(p.error_code)) if p.error_code else None
            )
            for t in response.responses
            for p in t.partitions
        }

    def delete_share_offsets(self, group: str, topics: list[str]) -> dict[str, str | None]:
        """DeleteShareGroupOffsets (KIP-932; per topic, the group must be empty): error name
        (or None) per topic."""
        from kctl.broker.messages import DeleteShareGroupOffsetsRequest as R

        what = f"deleting the offsets of share group {group!r}"
        if self.version(R) < 0:
            raise UnsupportedByBroker("DeleteShareGroupOffsets", what)
        Topic = R.DeleteShareGroupOffsetsRequestTopic
        request = R(group_id=group, topics=[Topic(topic_name=t) for t in sorted(topics)])
        response = self.send(request, what, node_id=self.coordinators([group])[group])
        if response.error_code:
            raise KctlError(what, response.error_message or _error_name(response.error_code))
        return {
            t.topic_name: (t.error_message or _error_name(t.error_code)) if t.error_code else None
            for t in response.responses
        }

    def describe_streams(self, group_ids: list[str]) -> dict[str, Group]:
        """StreamsGroupDescribe (KIP-1071, Kafka 4.1+) for groups no other describe knows:
        members with process, topology epoch and tasks; a member's assignment is the source
        topic partitions of its active tasks."""
        from kctl.broker.messages import StreamsGroupDescribeRequest as R

        def members(g: Any) -> list[Member]:
            subtopologies = g.topology.subtopologies or [] if g.topology else []
            sources = {
                st.subtopology_id: sorted(
                    {*st.source_topics, *(t.name for t in st.repartition_source_topics)}
                )
                for st in subtopologies
            }
            return [_streams_member(m, sources) for m in g.members]

        return self._describe_epoch_groups(R, "streams", group_ids, members)

    def describe_consumer_protocol(self, group_ids: list[str]) -> dict[str, Group]:
        """ConsumerGroupDescribe (KIP-848) for groups DescribeGroups answered Dead, one request
        per coordinator: state, epochs, assignor, members with their current and target
        assignments and subscriptions. A group it does not know is left out (the caller keeps
        its Dead answer); a broker without the API leaves them all out."""
        from kctl.broker.messages import ConsumerGroupDescribeRequest as R

        if self.version(R) < 0:
            return {}
        out: dict[str, Group] = {}

        def ask(node: int, gids: list[str]) -> list[str]:
            request = R(group_ids=gids, include_authorized_operations=False)
            response = self.send(request, "describing consumer groups", node_id=node)
            moved = []
            for g in response.groups:
                if g.error_code in _RETRIABLE:
                    moved.append(g.group_id)
                    continue
                if g.error_code:  # GROUP_ID_NOT_FOUND, or a classic group: not ours
                    continue
                members = [
                    Member(
                        member_id=m.member_id,
                        group_instance_id=m.instance_id,
                        client_id=m.client_id,
                        host=m.client_host,
                        assignment=_assigned(m.assignment),
                        member_epoch=m.member_epoch,
                        target_assignment=_assigned(m.target_assignment),
                        subscribed_topics=sorted(m.subscribed_topic_names or []),
                        subscribed_regex=m.subscribed_topic_regex or None,
                    )
                    for m in g.members
                ]
                out[g.group_id] = _epoch_group(g, node, members, "consumer")
            return moved

        self._per_coordinator(group_ids, ask, "describing consumer groups")
        return out

    # -- OffsetFetch ----------------------------------------------------------------------

    def committed(self, group_ids: list[str]) -> dict[str, dict[TP, int]]:
        """Committed offsets of every group (all topics): one OffsetFetch per coordinator on
        brokers with v8+, else one per group."""
        from kafka.protocol.consumer import OffsetFetchRequest

        version = self.version(OffsetFetchRequest)
        if version < 2:
            raise UnsupportedByBroker(
                "OffsetFetch v2+", "fetching committed offsets of every topic of a group"
            )
        out: dict[str, dict[TP, int]] = {gid: {} for gid in group_ids}

        def take(gid: str, code: int, topics: Any) -> bool:
            if code in _RETRIABLE:
                return False
            if code and code != _GROUP_ID_NOT_FOUND:
                raise KctlError(f"fetching committed offsets of group {gid!r}", _error_name(code))
            offsets: dict[TP, int] = {}
            for t in topics or []:
                name = t.name
                for part in t.partitions:
                    if part.error_code:
                        if part.error_code in _RETRIABLE:
                            return False
                    elif (at := part.committed_offset) >= 0:
                        offsets[(name, part.partition_index)] = at
            out[gid] = offsets
            return True

        def build(gids: list[str]) -> Any:
            return OffsetFetchRequest(
                groups=[
                    OffsetFetchRequest.OffsetFetchRequestGroup(group_id=g, topics=None)
                    for g in gids
                ],
                require_stable=False,
                # v10 (Kafka 4.1+) answers topic ids instead of names: stay at v9.
                min_version=8,
                max_version=9,
            )

        def take_all(node: int, response: Any) -> list[str]:
            return [g.group_id for g in response.groups
                    if not take(g.group_id, g.error_code, g.topics)]  # fmt: skip

        def ask(node: int, gids: list[str]) -> list[str]:
            moved = []
            for gid in gids:
                request = OffsetFetchRequest(
                    group_id=gid, topics=None, min_version=2, max_version=7
                )
                r = self.send(request, f"fetching committed offsets of group {gid!r}", node)
                if not take(gid, r.error_code, r.topics):
                    moved.append(gid)
            return moved

        if group_ids and version >= 8:
            self._per_coordinator_at_once(group_ids, build, take_all, "fetching committed offsets")
        elif group_ids:
            self._per_coordinator(group_ids, ask, "fetching committed offsets")
        return out

    # -- OffsetDelete ---------------------------------------------------------------------

    def require_offset_delete(self, what: str) -> None:
        """Fail, naming the API, when the broker does not implement OffsetDelete."""
        from kafka.protocol.consumer import OffsetDeleteRequest

        if self.version(OffsetDeleteRequest) < 0:
            raise UnsupportedByBroker("OffsetDelete", what)

    def delete_offsets(self, group: str, tps: list[TP]) -> dict[TP, str | None]:
        """OffsetDelete (Kafka 2.4+, KIP-496) on the group's coordinator: error name (or None)
        per partition. A broker without OffsetDelete is named in one line."""
        from kafka.protocol.consumer import OffsetDeleteRequest

        what = f"deleting offsets of group {group!r}"
        self.require_offset_delete(what)
        by_topic: dict[str, list[int]] = defaultdict(list)
        for t, p in sorted(tps):
            by_topic[t].append(p)
        Topic = OffsetDeleteRequest.OffsetDeleteRequestTopic
        Part = Topic.OffsetDeleteRequestPartition
        request = OffsetDeleteRequest(
            group_id=group,
            topics=[
                Topic(name=t, partitions=[Part(partition_index=p) for p in ps])
                for t, ps in by_topic.items()
            ],
        )
        node = self.coordinators([group])[group]
        response = self.send(request, what, node_id=node)
        if response.error_code:
            raise KctlError(what, _error_name(response.error_code))
        return {
            (t.name, p.partition_index): _error_name(p.error_code) if p.error_code else None
            for t in response.topics
            for p in t.partitions
        }


def _assigned(assignment: Any) -> list[TP]:
    """(topic, partition) pairs of a KIP-848/932 Assignment struct (topics with their names)."""
    return sorted(
        (t.topic_name, p) for t in (assignment.topic_partitions or []) for p in t.partitions
    )


_TASK_KINDS = (("active", "active_tasks"), ("standby", "standby_tasks"), ("warmup", "warmup_tasks"))


def _tasks(assignment: Any) -> dict[str, list[str]]:
    """A streams Assignment as {"active": ["SUBTOPOLOGY:PARTITION", ...], ...}."""
    return {
        kind: sorted(
            f"{t.subtopology_id}:{p}"
            for t in (getattr(assignment, field_) or [])
            for p in t.partitions
        )
        for kind, field_ in _TASK_KINDS
    }


def _task_partitions(tasks: dict[str, list[str]], sources: dict[str, list[str]]) -> list[TP]:
    """The topic partitions active tasks read: each source topic of the task's subtopology at
    the task's partition."""
    out: set[TP] = set()
    for task in tasks["active"]:
        sub, _, part = task.rpartition(":")
        out.update((topic, int(part)) for topic in sources.get(sub, []))
    return sorted(out)


def _streams_member(m: Any, sources: dict[str, list[str]]) -> Member:
    tasks, target = _tasks(m.assignment), _tasks(m.target_assignment)
    return Member(
        member_id=m.member_id,
        group_instance_id=m.instance_id,
        client_id=m.client_id,
        host=m.client_host,
        assignment=_task_partitions(tasks, sources),
        member_epoch=m.member_epoch,
        target_assignment=_task_partitions(target, sources),
        process_id=m.process_id,
        topology_epoch=m.topology_epoch,
        tasks=tasks,
        target_tasks=target,
    )


def _epoch_group(g: Any, node: int, members: list[Member], kind: str) -> Group:
    """A group of the consumer, share or streams protocol from its ConsumerGroupDescribe,
    ShareGroupDescribe or StreamsGroupDescribe answer (the same fields in all three)."""
    return Group(
        group=g.group_id,
        state=_STATE_NAMES.get(g.group_state.upper(), g.group_state),
        protocol_type=kind,
        assignor=getattr(g, "assignor_name", None) or None,  # streams groups have none
        coordinator=node,
        members=sorted(members, key=lambda m: m.member_id),
        type=kind,
        group_epoch=g.group_epoch,
        assignment_epoch=g.assignment_epoch,
    )


def _no_answer(node: int, exc: KctlError) -> str:
    """Why a coordinator's groups were not read: it did not answer."""
    return f"their coordinator, broker {node}, did not answer: {exc.why}"


def _member(m: Any) -> Member:
    tps: list[TP] = []
    if m.member_assignment:
        from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

        try:
            assigned = ConsumerProtocolAssignment.decode(m.member_assignment)
        except Exception:  # a non-consumer protocol (e.g. Connect) has its own format
            assigned = None
        for item in getattr(assigned, "assigned_partitions", None) or []:
            tps += [(item.topic, p) for p in item.partitions]
    return Member(
        member_id=m.member_id,
        group_instance_id=getattr(m, "group_instance_id", None),
        client_id=m.client_id,
        host=m.client_host,
        assignment=sorted(tps),
    )


def describe(admin: Admin, group_ids: list[str]) -> dict[str, Group]:
    """Describe groups: one FindCoordinator and one DescribeGroups per coordinator."""
    with GroupReader(admin) as reader:
        return reader.describe(group_ids)


def committed_offsets(admin: Admin, group_ids: list[str]) -> dict[str, dict[TP, int]]:
    """Committed offsets of groups: one OffsetFetch per coordinator (v8+)."""
    with GroupReader(admin) as reader:
        return reader.committed(group_ids)


def require_known(
    reader: GroupReader,
    groups: dict[str, Group],
    committed: dict[str, dict[TP, int]],
    listed: list[Listed] | None = None,
) -> None:
    """A group with no members and no committed offsets that ListGroups does not know (Kafka
    describes it as Dead, some brokers as Empty) does not exist for an operator."""
    suspects = rules.unknown_suspects(groups, committed)
    if not suspects:
        return
    names = {g.group for g in (listed if listed is not None else reader.listing().groups)}
    rules.check_known(groups, suspects, names)


def choose_groups(
    reader: GroupReader, groups: list[str], all_groups: bool, *, default_all: bool = False
) -> tuple[list[str], Listing | None]:
    """The groups named (each once), or every listed group (:meth:`GroupReader.listing`);
    also the listing when one was made (``default_all``: no group named means every
    group)."""
    if rules.lists_every_group(groups, all_groups, default_all=default_all):
        listing = reader.listing()
        return [g.group for g in listing.groups], listing
    return list(dict.fromkeys(groups)), None


def list_described(admin: Admin, types: set[str]) -> tuple[Listing, dict[str, Group]]:
    """The groups the cluster lists (:meth:`GroupReader.listing`), of ``types`` (all when
    empty), and their descriptions. Brokers still loading groups when the timeout runs out
    fail it (:func:`kctl.lag.partial.check_listed`)."""
    with GroupReader(admin) as reader:
        listing = reader.listing()
        partial.check_listed(listing.loading)
        listing.groups = [g for g in listing.groups if not types or g.type in types]
        return listing, reader.describe([g.group for g in listing.groups])


def describe_for(admin: Admin, groups: list[str], all_groups: bool, view: str) -> Described:
    """What ``groups describe`` shows in ``view`` (offsets, members, state): the groups'
    descriptions, and their lag rows (offsets), or share groups' start offsets (offsets of
    share groups only), or the brokers' addresses (state). Unknown groups are refused; with
    ``all_groups``, what the listing missed is in ``unlisted``."""
    with GroupReader(admin) as reader:
        ids, listing = choose_groups(reader, groups, all_groups)
        listed = listing.groups if listing is not None else None
        found = Described(view, ids, {})
        if listing is not None:
            partial.check_listed(listing.loading)
            found.unlisted = listing.missed
        found.groups = reader.describe(ids)
        if rules.share_offsets_view(ids, found.groups, view):
            found.share_offsets = reader.share_offsets(ids)
            return found
        if view == "offsets":
            found.lag_rows = lag_samples(admin, reader, ids, listed=listed)
        else:
            known = {g: d for g, d in found.groups.items() if d.type != "share"}
            others = [gid for gid in ids if gid not in found.groups or gid in known]
            require_known(reader, known, reader.committed(others), listed)
    if view == "state":
        brokers = admin.metadata().brokers
        found.addresses = {b: f"{node.host}:{node.port}" for b, node in brokers.items()}
    return found


def describe_known(admin: Admin, group_ids: list[str]) -> dict[str, Group]:
    """The groups' descriptions; a group that does not exist is an error."""
    with GroupReader(admin) as reader:
        described = reader.describe(group_ids)
        require_known(reader, described, reader.committed(group_ids))
    return described


def delete_group_offsets(
    admin: Admin,
    group: str,
    scope: dict[str, list[int] | None],
    confirm: Callable[[str], None],
) -> OffsetsDeleted:
    """OffsetDelete of a group's committed offsets for ``scope`` (``--topic T[:P,...]``), or
    for a share group DeleteShareGroupOffsets of whole topics; ``confirm(question)`` is asked
    before anything is deleted (it raises to stop)."""
    tps = scope_partitions(admin, scope)
    with GroupReader(admin) as reader:
        described = reader.describe([group])[group]
        if described.type == "share":
            topics = rules.share_offsets_topics(group, scope, described)
            confirm(f"Delete the offsets of share group {group!r} for {', '.join(topics)}?")
            errors = reader.delete_share_offsets(group, topics)
            return OffsetsDeleted(group, share_topics=topics, topic_errors=errors)
        reader.require_offset_delete(f"deleting offsets of group {group!r}")
        require_known(reader, {group: described}, reader.committed([group]))
        confirm(f"Delete {len(tps)} committed offset(s) of group {group!r}?")
        return OffsetsDeleted(group, tps, reader.delete_offsets(group, tps))


def lag_samples(
    admin: Admin,
    reader: GroupReader,
    group_ids: list[str],
    topics: list[str] | None = None,
    listed: list[Listed] | None = None,
    *,
    time_lag: bool = False,
    notes: list[str] | None = None,
    unread: dict[str, str] | None = None,
    maybe_gone: frozenset[str] = frozenset(),
) -> list[dict[str, Any]]:
    """One row per (group, topic, partition) in the lag-sample schema of DESIGN.md, minus
    ``ts_ms`` and ``cluster`` (:func:`kctl.lag.rows.lag_rows`), for groups of every type.

    ``unread`` (a dict): a group that cannot be read (its coordinator, or the leader of one of
    its partitions, does not answer) goes there with why, and has no rows, instead of failing
    the whole pass. ``maybe_gone``: groups that may no longer exist (read again from an earlier
    pass): one that does not is left out instead of being an error.

    The partitions of a group are those it has a position on (committed offsets; a share
    group's start offsets) plus those assigned to its members. Positions are read before the
    log end offsets, so a lag is never negative unless the log really ends before the commit
    (a recreated topic, say). A partition that no longer exists gets log offsets -1 and a null
    lag. ``time_lag``: also read the first record not consumed of every lagging partition
    (:func:`kctl.broker.record_times.first_record_times`, one Fetch per leader) for
    ``time_lag_ms``; partitions whose first record cannot be read get a null time lag and a
    line in ``notes``."""
    from kctl.lag import rows as lag_rows

    if unread is not None:
        with reader.tolerant() as skipped:
            found = _read_groups(reader, group_ids)
        unread.update(skipped)
    else:
        found = _read_groups(reader, group_ids)
    described, committed, share_offsets = found
    group_ids = [g for g in group_ids if unread is None or g not in unread]
    require_known(reader, {g: d for g, d in described.items() if g not in maybe_gone}, committed,
                  listed)  # fmt: skip
    plan = lag_rows.lag_plan(described, group_ids, committed, share_offsets, topics)
    lost: dict[TP, str] | None = {} if unread is not None else None
    marks = watermarks(admin, plan.partitions(), reader, failed=lost)
    if unread is not None and lost:
        unread.update(partial.unread_by_partitions(plan.wanted, lost))
        group_ids = [g for g in group_ids if g not in unread]
        plan = lag_rows.lag_plan(described, group_ids, committed, share_offsets, topics)
    times: dict[tuple[TP, int], int] | None = None
    now_ms = 0
    if time_lag:
        failed: dict[tuple[TP, int], str] = {}
        times = first_record_times(admin, reader, plan.reads(marks), failed)
        now_ms = int(time.time() * 1000)
        if failed and notes is not None:
            notes.append(rules.unread_times_note(failed))
    return lag_rows.lag_rows(plan, marks, times, now_ms)


def _read_groups(
    reader: GroupReader, group_ids: list[str]
) -> tuple[dict[str, Group], dict[str, dict[TP, int]], dict[str, dict[TP, tuple[int, int]]]]:
    """The groups' descriptions, the commits of those that commit and share groups' start
    offsets; a tolerant reader's ``unread`` groups are left out of all three."""
    described = reader.describe(group_ids)
    skip = reader.unread or {}
    shares = [g for g in group_ids if g in described and described[g].type == "share"]
    committed = reader.committed([g for g in group_ids if g not in shares and g not in skip])
    share_offsets = reader.share_offsets(shares) if shares else {}
    skip = reader.unread or {}
    return (
        {g: d for g, d in described.items() if g not in skip},
        {g: c for g, c in committed.items() if g not in skip},
        {g: o for g, o in share_offsets.items() if g not in skip},
    )


def first_record_times(
    admin: Admin,
    reader: GroupReader,
    wanted: dict[TP, set[int]],
    failed: dict[tuple[TP, int], str],
) -> dict[tuple[TP, int], int]:
    """The timestamp of the first data record at or after each (partition, position): one
    round of Fetches (one per leader) per distinct position of the busiest partition, so
    groups at the same positions cost one round; positions with no data record before the log
    end are left out. One that cannot be read maps to ``UNREAD`` and its reason goes to
    ``failed``; a record without a timestamp (pre-0.10) maps to ``UNREAD`` too."""
    from kctl.broker.record_times import first_record_times as fetch_times
    from kctl.lag.rows import UNREAD

    out: dict[tuple[TP, int], int] = {}
    queues = {tp: sorted(at) for tp, at in wanted.items()}
    while queues:
        round_ = {tp: at.pop(0) for tp, at in queues.items()}
        queues = {tp: at for tp, at in queues.items() if at}
        errors: dict[TP, str] = {}
        for tp, found in fetch_times(admin, round_, client=reader, errors=errors).items():
            out[(tp, round_[tp])] = found.timestamp_ms if found.timestamp_ms >= 0 else UNREAD
        for tp, why in errors.items():
            out[(tp, round_[tp])] = UNREAD
            failed[(tp, round_[tp])] = why
    return out


def lag_pass(
    admin: Admin,
    reader: GroupReader,
    groups: list[str],
    all_groups: bool,
    topics: list[str] | None = None,
    *,
    time_lag: bool = False,
    partial_ok: bool = False,
    seen: list[str] | None = None,
) -> LagPass:
    """One lag pass: the groups named, or every group the cluster lists (none named means
    every group), and their lag rows (only ``topics``, when given; with ``time_lag_ms`` when
    ``time_lag``), stamped with the time the pass began.

    ``partial_ok``: a group that cannot be read is in the pass's ``unread`` instead of
    failing it, and what the listing missed in ``unlisted`` and ``loading`` (else a listing
    still loading fails, and what it missed is in ``unlisted``). ``seen``: groups an earlier
    pass read (the exporter's); every group asked for, those the listing leaves out are read
    still, and left out only when they turn out not to exist: a coordinator that has just
    taken over a group may answer ListGroups before it has loaded it."""
    ids, listing = choose_groups(reader, groups, all_groups, default_all=True)
    listed = listing.groups if listing is not None else None
    maybe_gone: frozenset[str] = frozenset()
    if listing is not None:
        if not partial_ok:
            partial.check_listed(listing.loading)
        maybe_gone = frozenset(seen or []) - set(ids)
        ids += sorted(maybe_gone)
    ts_ms = int(time.time() * 1000)
    notes: list[str] = []
    unread: dict[str, str] | None = {} if partial_ok else None
    rows: list[dict[str, Any]] = []
    if ids:
        rows = lag_samples(admin, reader, ids, topics or None, listed, time_lag=time_lag,
                           notes=notes, unread=unread, maybe_gone=maybe_gone)  # fmt: skip
    unread = unread or {}
    read = [g for g in ids if g not in unread]
    if maybe_gone:  # those that do not exist any more are not in the pass
        read = [g for g in read if g not in maybe_gone or any(r["group"] == g for r in rows)]
    return LagPass(ts_ms, read, rows, notes, unread,
                   listing.missed if listing is not None else [],
                   listing.loading if listing is not None else {})  # fmt: skip


def watch_lag(
    admin: Admin,
    groups: list[str],
    all_groups: bool,
    topics: list[str] | None,
    *,
    show: Callable[[LagReport], None],
    note: Callable[[str], None],
    watch: float | None = None,
    record: Path | None = None,
    time_lag: bool = False,
) -> LagReport:
    """``groups lag``: lag passes over one connection pool, once or every ``watch`` seconds
    until interrupted (:func:`kctl.lag.watch.run_passes`), samples appended to ``record``;
    the last pass's report."""
    from kctl.lag.samples import record_samples
    from kctl.lag.watch import run_passes

    with GroupReader(admin) as reader:  # kafka-python loads while librdkafka connects
        # The cluster id only where samples are recorded: it costs a whole-cluster Metadata.
        cluster_id = admin.metadata().cluster_id if record is not None else ""

        def save(rows: list[dict[str, Any]], ts_ms: int) -> int:
            assert record is not None
            return record_samples(record, rows, cluster_id, ts_ms)

        return run_passes(
            lambda: lag_pass(
                admin, reader, groups, all_groups, topics, time_lag=time_lag, partial_ok=True
            ),
            show,
            note,
            every=all_groups or not groups,
            watch=watch,
            record=save if record is not None else None,
            record_name=str(record),
            sleep=time.sleep,
            timed=time_lag,
        )


def watermarks(
    admin: Admin,
    tps: list[TP],
    client: kafka_python.LazyClient | None = None,
    *,
    failed: dict[TP, str] | None = None,
) -> dict[TP, tuple[int, int]]:
    """(log start, log end) per partition. Partitions that do not exist (a deleted topic a
    group still has offsets for) are left out. With ``client`` (a kafka-python pool already
    open): one Metadata and one ListOffsets per partition leader per end, all sent at once;
    without, two librdkafka ListOffsets rounds, each batched per leader. ``failed`` (with
    ``client``): a partition without a leader, or whose leader does not answer, goes there
    (partition -> why) and is left out, instead of failing the whole call."""
    from kctl.broker.offsets import list_offsets

    if not tps:
        return {}
    if client is not None:
        from kctl.broker.offsets import EARLIEST, LATEST, Spec, leaders, read_offsets

        specs = [Spec(EARLIEST), Spec(LATEST)]
        if failed is None:
            starts_, ends_ = read_offsets(client.client, tps, specs, timeout=admin.timeout,
                                          skip_gone=True)  # fmt: skip
        else:
            topics = sorted({t for t, _ in tps})
            try:
                where = leaders(client.client, topics)
            except kafka_python.NoAnswer:  # the broker asked is away: another is asked
                where = leaders(client.client, topics)
            for tp in tps:
                if where.get(tp, 0) < 0:
                    failed[tp] = "the partition has no leader"
            live = [tp for tp in tps if tp not in failed]
            try:
                starts_, ends_ = read_offsets(client.client, live, specs, timeout=admin.timeout,
                                              skip_gone=True, known_leaders=where)  # fmt: skip
            except KctlError:  # a leader does not answer: each leader on its own
                starts_, ends_ = _offsets_per_leader(admin, client, live, where, failed)
        return {tp: (starts_[tp][0], ends_[tp][0]) for tp in tps if tp in starts_ and tp in ends_}
    starts = list_offsets(admin, tps, "earliest", skip_gone=True)
    ends = list_offsets(admin, tps, "latest", skip_gone=True)
    return {tp: (starts[tp], ends[tp]) for tp in tps if tp in starts and tp in ends}


def _offsets_per_leader(
    admin: Admin,
    client: kafka_python.LazyClient,
    tps: list[TP],
    where: dict[TP, int],
    failed: dict[TP, str],
) -> list[dict[TP, tuple[int, int]]]:
    """:func:`watermarks` after a leader did not answer: the partitions of each leader asked
    on their own, those of a leader that fails put in ``failed``."""
    from kctl.broker.offsets import EARLIEST, LATEST, Spec, read_offsets

    by_leader: dict[int, list[TP]] = defaultdict(list)
    for tp in tps:
        if tp in where:  # else gone: left out
            by_leader[where[tp]].append(tp)
    starts: dict[TP, tuple[int, int]] = {}
    ends: dict[TP, tuple[int, int]] = {}
    for leader, part in sorted(by_leader.items()):
        try:
            s, e = read_offsets(client.client, part, [Spec(EARLIEST), Spec(LATEST)],
                                timeout=admin.timeout, skip_gone=True,
                                known_leaders={tp: leader for tp in part})  # fmt: skip
        except KctlError as exc:
            for tp in part:
                failed[tp] = f"its leader, broker {leader}, did not answer ({exc.why or exc})"
            continue
        starts.update(s)
        ends.update(e)
    return [starts, ends]


def offsets_for_time(admin: Admin, tps: list[TP], ts_ms: int) -> dict[TP, int]:
    """The first offset whose timestamp is at or after ``ts_ms`` per partition; the log end
    where no record is that late (kafka-consumer-groups.sh resets there too)."""
    from kctl.broker.offsets import list_offsets

    return list_offsets(admin, tps, ts_ms, skip_gone=True)


def partitions_of(admin: Admin, topics: list[str]) -> dict[str, int]:
    """Partition count per topic; an unknown topic is an error naming it."""
    md = admin.metadata()
    out = {}
    for t in topics:
        if t not in md.topics or md.topics[t].error is not None:
            raise NotFoundError(f"unknown topic {t!r}", "not in the cluster's metadata")
        out[t] = len(md.topics[t].partitions)
    return out


def commit(admin: Admin, group: str, targets: dict[TP, int]) -> None:
    """OffsetCommit the targets for an inactive group (AlterConsumerGroupOffsets)."""
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

    request = ConsumerGroupTopicPartitions(
        group, [TopicPartition(t, p, o) for (t, p), o in sorted(targets.items())]
    )
    futures = admin.client.alter_consumer_group_offsets([request], request_timeout=admin.timeout)
    res = admin.result(futures[group], f"committing offsets for group {group!r}")
    for tp in res.topic_partitions:
        if tp.error is not None:
            raise KctlError(
                f"committing offset {tp.offset} of {tp.topic}[{tp.partition}] for group {group!r}",
                tp.error.str(),
            )


def set_share_starts(admin: Admin, group: str, targets: dict[TP, int]) -> None:
    """The start offsets of an empty share group (kafka-share-groups.sh --reset-offsets)."""
    with GroupReader(admin) as reader:
        result = reader.alter_share_offsets(group, targets)
    failed = sorted((tp, err) for tp, err in result.items() if err)
    if failed:
        (t, p), err = failed[0]
        raise KctlError(
            f"{len(failed)} start offset(s) of share group {group!r} not set", f"{t}[{p}]: {err}"
        )


def apply_reset(admin: Admin, plan: ResetPlan) -> None:
    """Commit a reset plan: new committed offsets, or a share group's new start offsets."""
    targets = {(r.topic, r.partition): r.target for r in plan.rows}
    if plan.share:
        set_share_starts(admin, plan.group, targets)
    else:
        commit(admin, plan.group, targets)


def delete(admin: Admin, group_ids: list[str]) -> None:
    """DeleteGroups (librdkafka sends one per coordinator)."""
    futures = admin.client.delete_consumer_groups(group_ids, request_timeout=admin.timeout)
    for gid, fut in futures.items():
        admin.result(fut, f"deleting group {gid!r}")


# -- reset-offsets (kafka-consumer-groups.sh --reset-offsets) ---------------------------------


def scope_partitions(admin: Admin, scope: dict[str, list[int] | None]) -> list[TP]:
    """Expand ``--topic T[:P,...]`` against the cluster: unknown topics and partitions fail."""
    counts = partitions_of(admin, list(scope))
    tps = []
    for t, parts in scope.items():
        for p in parts if parts is not None else range(counts[t]):
            if p >= counts[t]:
                raise NotFoundError(
                    f"partition {p} of topic {t!r} does not exist",
                    f"{t} has {counts[t]} partition(s)",
                )
            tps.append((t, p))
    return tps


def plan_reset_offsets(admin: Admin, req: ResetRequest) -> ResetPlan:
    """The plan of a reset, as kafka-consumer-groups.sh makes it: a group with active members is
    refused, partitions must exist, targets are clamped into each partition's log."""
    from kctl.lag.arithmetic import plan_reset

    with GroupReader(admin) as reader:
        described = reader.describe([req.group])[req.group]
        share = described.type == "share"
        committed = (
            reader.share_starts(req.group) if share else reader.committed([req.group])[req.group]
        )
    rules.check_resettable(req.group, described)
    if req.kind == "file":
        counts = partitions_of(admin, sorted({t for t, _ in req.value}))
        for t, p in req.value:
            if not 0 <= p < counts[t]:
                raise NotFoundError(
                    f"{req.file_name}: partition {p} of topic {t!r} does not exist",
                    f"{t} has {counts[t]} partition(s)",
                )
        tps = sorted(req.value)
    elif req.all_topics:
        tps = sorted(committed)
        if not tps:
            raise KctlError(
                f"group {req.group!r} has no committed offsets", "name the topics with --topic"
            )
    else:
        tps = scope_partitions(admin, req.scope)
    marks = watermarks(admin, tps)
    missing = [tp for tp in tps if tp not in marks]
    if missing:
        t, p = missing[0]
        raise NotFoundError(
            f"no log offsets for {t}[{p}]", "the partition has no leader or is gone"
        )
    times = offsets_for_time(admin, tps, req.ts_ms) if req.ts_ms is not None else None
    rows = plan_reset(req.kind, req.value, tps, committed, marks, times)
    return ResetPlan(req.group, rows, marks, share)
