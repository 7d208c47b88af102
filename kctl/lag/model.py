"""Consumer groups as plain data: what the broker layer reads (groups, members, listings, lag
passes, describe answers) and what ``groups reset-offsets`` asks and plans. No I/O, no client
library: :mod:`kctl.broker.groups` fills these in, :mod:`kctl.lag.rules` and
:mod:`kctl.lag.report` turn them into rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kctl.lag.arithmetic import TP, ResetRow

ACTIVE_STATES = ("Stable", "PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling")
GROUP_TYPES = ("classic", "consumer", "share", "streams")


@dataclass
class Member:
    member_id: str
    group_instance_id: str | None
    client_id: str
    host: str
    assignment: list[TP] = field(default_factory=list)
    # Consumer-protocol (KIP-848) members only: their epoch, the partitions the group's
    # assignor wants them to own, what they subscribe to.
    member_epoch: int | None = None
    target_assignment: list[TP] | None = None
    subscribed_topics: list[str] | None = None
    subscribed_regex: str | None = None
    # Streams-group (KIP-1071) members only: their process, topology epoch and tasks per kind
    # ("active", "standby", "warmup": ["SUBTOPOLOGY:PARTITION", ...]), owned and targeted.
    process_id: str | None = None
    topology_epoch: int | None = None
    tasks: dict[str, list[str]] | None = None
    target_tasks: dict[str, list[str]] | None = None


@dataclass
class Group:
    group: str
    state: str
    protocol_type: str | None
    assignor: str | None
    coordinator: int | None
    members: list[Member] = field(default_factory=list)
    type: str = "classic"  # classic | consumer (KIP-848), as the describing request tells
    group_epoch: int | None = None  # consumer protocol only
    assignment_epoch: int | None = None  # consumer protocol: the target assignment's epoch

    @property
    def active(self) -> bool:
        return bool(self.members) or self.state in ACTIVE_STATES


@dataclass(frozen=True)
class Listed:
    """One group as ListGroups reports it (its state there may be stale or 'Unknown')."""

    group: str
    state: str
    type: str  # classic | consumer | share | streams | unknown
    simple: bool


@dataclass
class Listing:
    """Every group the brokers list (ListGroups to each), and what kept the list from being
    complete. A group's coordinator is the leader of its partition of ``__consumer_offsets``;
    a broker lists the groups of the partitions it leads and has loaded. ``loading``: brokers
    that answered that they are still loading (or moving) groups, with the error; ``missed``:
    other reasons some groups could not be listed (a broker that does not answer, a partition
    of ``__consumer_offsets`` without a leader), one sentence each. Complete when both are
    empty: a group not listed then does not exist."""

    groups: list[Listed]
    loading: dict[int, str] = field(default_factory=dict)
    missed: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.loading and not self.missed


@dataclass(frozen=True)
class LagPass:
    """One lag pass: when it sampled, the groups it chose and one row per (group, topic,
    partition) in the lag-sample schema minus ``ts_ms`` and ``cluster`` (plus ``group_type``).

    A pass over a cluster with a broker away is partial: ``unread`` holds the groups it chose
    but could not read (group -> why: their coordinator or a partition leader did not answer),
    ``unlisted`` and ``loading`` what kept the group list from being complete
    (:class:`Listing`'s ``missed`` and ``loading``). All empty: the pass is complete."""

    ts_ms: int
    groups: list[str]
    rows: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)  # warnings for stderr (unread time lags)
    unread: dict[str, str] = field(default_factory=dict)
    unlisted: list[str] = field(default_factory=list)
    loading: dict[int, str] = field(default_factory=dict)  # brokers still loading groups

    @property
    def complete(self) -> bool:
        return not self.unread and not self.unlisted and not self.loading


@dataclass
class Described:
    """What ``groups describe`` read for one view (offsets, members or state).

    ``share_offsets`` is set for share groups' default view (start offset, lag per partition),
    ``lag_rows`` for the offsets view of other groups, ``addresses`` (broker id -> host:port)
    for the state view."""

    view: str  # offsets | members | state
    ids: list[str]
    groups: dict[str, Group]
    share_offsets: dict[str, dict[TP, tuple[int, int]]] | None = None
    lag_rows: list[dict[str, Any]] | None = None
    addresses: dict[int, str] | None = None
    unlisted: list[str] = field(default_factory=list)  # what --all-groups' listing missed


@dataclass
class ResetRequest:
    """What ``groups reset-offsets`` was asked: one spec over a scope of partitions."""

    group: str
    kind: str  # earliest | latest | current | offset | shift | time | file
    value: Any = None  # N for offset/shift, {tp: offset} for file
    scope: dict[str, list[int] | None] = field(default_factory=dict)  # --topic T[:P,...]
    all_topics: bool = False
    file_name: str | None = None
    ts_ms: int | None = None  # time specs: the timestamp to look up


@dataclass
class ResetPlan:
    group: str
    rows: list[ResetRow]  # one per partition
    marks: dict[TP, tuple[int, int]]  # (log start, log end) per partition, for clamp notes
    share: bool = False  # a share group: start offsets (AlterShareGroupOffsets), not commits


@dataclass
class OffsetsDeleted:
    """What ``groups delete-offsets`` did: the partitions asked and the broker's answer per
    partition (error name, None where deleted), or for a share group the topics asked and the
    answer per topic."""

    group: str
    partitions: list[TP] = field(default_factory=list)
    errors: dict[TP, str | None] = field(default_factory=dict)
    share_topics: list[str] | None = None  # a share group: its state is deleted per topic
    topic_errors: dict[str, str | None] = field(default_factory=dict)
