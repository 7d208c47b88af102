"""Replication throttles of a reassignment, pure: the configs kafka-reassign-partitions.sh sets
(rates on the brokers a move touches, the throttled replica lists on its topics) and, for a run
in waves, the changes that take the throttles of one wave to the next (so a broker or topic that
no longer moves loses its throttle). Setting and removing them:
:mod:`kctl.broker.reassign.throttles`."""

from __future__ import annotations

from kctl.reassign.assign import Assignment

RATE_CONFIGS = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
# The throttle of moves between a broker's log dirs (kafka-reassign-partitions.sh's
# --replica-alter-log-dirs-throttle): removed with the replication rates.
DIR_RATE_CONFIG = "replica.alter.log.dirs.io.max.bytes.per.second"
BROKER_CONFIGS = (*RATE_CONFIGS, DIR_RATE_CONFIG)
REPLICA_CONFIGS = (
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
)

# (kind "broker" or "topic", its name, configs to set (a value) or remove (None))
Change = tuple[str, str, dict[str, str | None]]
Changes = list[Change]


def throttled_replicas(current: Assignment, proposed: Assignment) -> dict[str, dict[str, str]]:
    """Per topic, the values of leader.replication.throttled.replicas (the current replicas of
    each moving partition) and follower.replication.throttled.replicas (the replicas being
    added), as kafka-reassign-partitions.sh sets them."""
    out: dict[str, dict[str, list[str]]] = {}
    for (topic, partition), new in sorted(proposed.items()):
        old = current.get((topic, partition), [])
        adding = [b for b in new if b not in old]
        if not adding and set(new) == set(old):
            continue
        entry = out.setdefault(topic, {"leader": [], "follower": []})
        entry["leader"] += [f"{partition}:{b}" for b in old]
        entry["follower"] += [f"{partition}:{b}" for b in adding]
    return {
        topic: {
            "leader.replication.throttled.replicas": ",".join(v["leader"]),
            "follower.replication.throttled.replicas": ",".join(v["follower"]),
        }
        for topic, v in out.items()
    }


def throttle_changes(current: Assignment, proposed: Assignment, rate: int) -> Changes:
    """(kind, name, configs to set): broker rates on every broker the moving partitions touch,
    throttled replica lists on their topics."""
    moving = throttled_replicas(current, proposed)
    brokers = sorted(
        {
            b
            for tp, new in proposed.items()
            if set(new) != set(current.get(tp, []))
            for b in [*new, *current.get(tp, [])]
        }
    )
    out: Changes = [("broker", str(b), {name: str(rate) for name in RATE_CONFIGS}) for b in brokers]
    out += [("topic", topic, dict(values)) for topic, values in sorted(moving.items())]
    return out


def throttle_diff(before: Changes, after: Changes) -> Changes:
    """The config changes that take the throttles from ``before`` to ``after`` (each a list of
    (kind, name, configs) as :func:`throttle_changes` gives): everything of ``after``, plus a
    removal (None) of every config ``before`` set that ``after`` does not."""
    now = {(k, n): dict(v) for k, n, v in after}
    out: Changes = [(k, n, dict(v)) for k, n, v in after]
    for kind, name, values in before:
        gone: dict[str, str | None] = {
            key: None for key in values if key not in now.get((kind, name), {})
        }
        if gone:
            out.append((kind, name, gone))
    return out


def dir_rate_changes(brokers: list[int], rate: int) -> Changes:
    """The log-dir move rate on ``brokers``."""
    return [("broker", str(b), {DIR_RATE_CONFIG: str(rate)}) for b in brokers]


# (kind "broker" or "topic", its name, {throttle config: value}) as set on the cluster
ThrottleValue = tuple[str, str, dict[str, str]]
