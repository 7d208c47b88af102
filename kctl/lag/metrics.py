"""The lag exporter's metrics, pure: one lag pass's rows, each group's Burrow status and the
collector's health in, prometheus_client metric families out (``kctl groups lag --serve``,
:mod:`kctl.broker.lag_exporter`; docs/lag-exporter.md lists every family).

The names and labels of the lag families are kafka-lag-exporter's (seglo/kafka-lag-exporter),
so dashboards and alerts built for it work unchanged:

- per partition of a group (``cluster_name, group, topic, partition, member_host, consumer_id,
  client_id``): ``kafka_consumergroup_group_offset``, ``kafka_consumergroup_group_lag``,
  ``kafka_consumergroup_group_lag_seconds``;
- per group (``cluster_name, group``, plus kctl's ``group_type``):
  ``kafka_consumergroup_group_max_lag``, ``kafka_consumergroup_group_max_lag_seconds``,
  ``kafka_consumergroup_group_sum_lag``;
- per group and topic (``cluster_name, group, topic``): ``kafka_consumergroup_group_topic_sum_lag``;
- per partition (``cluster_name, topic, partition``): ``kafka_partition_latest_offset``,
  ``kafka_partition_earliest_offset``;
- per cluster (``cluster_name``): ``kafka_consumergroup_poll_time_ms``.

A partition without a commit has no lag, offset or time-lag series (kafka-lag-exporter reports
NaN there; a missing series keeps ``max``/``sum`` and comparisons plain) and counts in no
group or topic aggregate. A negative lag (a commit beyond the log end: a truncated log or a
recreated topic) is exported as 0, as kafka-lag-exporter does; ``kctl groups lag`` shows it.
The time lag is kctl's exact one (now - the timestamp of the first record not consumed), not an
estimate: ``time_lag_ms`` / 1000.

kctl's own families: ``kctl_consumergroup_status`` (one series per group and Burrow group status,
1 for the group's status and 0 for the others), ``kctl_consumergroup_severity`` (the worst
partition status as a number), ``kctl_consumergroup_stale`` (1 for a group whose series are
kept from an earlier collection, the last one could not read it) and the collector's health
(``kctl_lag_exporter_*``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from kctl.lag import burrow

PARTITION_LABELS = ("cluster_name", "group", "topic", "partition", "member_host", "consumer_id",
                    "client_id")  # fmt: skip
GROUP_LABELS = ("cluster_name", "group", "group_type")
GROUP_TOPIC_LABELS = ("cluster_name", "group", "topic")
TOPIC_PARTITION_LABELS = ("cluster_name", "topic", "partition")
CLUSTER_LABELS = ("cluster_name",)
STATUS_LABELS = ("cluster_name", "group", "group_type", "status")
# A group's statuses after Burrow's rules (a partition's STOP, STALL, REWIND, NEGATIVE are ERR).
GROUP_STATUSES = ("OK", "WARN", "ERR")


@dataclass(frozen=True)
class Health:
    """The collector's state for its health metrics.

    ``collections``: lag passes attempted; ``errors``: those that failed; ``last_success_s``:
    unix seconds when the last successful pass began (None before the first);
    ``last_duration_s``: how long the last pass took, failed or not (None before the first
    ends); ``poll_ms``: how long the last pass that read groups took; ``partial``: passes that
    could not read every group (a broker away, coordinators loading); ``stale``: the last pass
    failed or was partial (some lag series are from an earlier pass, or missing)."""

    collections: int = 0
    errors: int = 0
    partial: int = 0
    last_success_s: float | None = None
    last_duration_s: float | None = None
    poll_ms: float | None = None
    stale: bool = False
    # Groups whose series are kept from an earlier pass (their coordinator did not answer).
    stale_groups: frozenset[str] = frozenset()


def _has_lag(row: Mapping[str, Any]) -> bool:
    return row.get("lag") is not None


def _lag(row: Mapping[str, Any]) -> float:
    return float(max(0, row["lag"]))


def _partition_labels(cluster: str, row: Mapping[str, Any]) -> list[str]:
    return [cluster, row["group"], row["topic"], str(row["partition"]), row.get("host") or "",
            row.get("member_id") or "", row.get("client_id") or ""]  # fmt: skip


def lag_families(rows: Iterable[Mapping[str, Any]], cluster: str) -> list[Metric]:
    """kafka-lag-exporter's families for one pass's rows (the lag-sample row of
    :func:`kctl.broker.groups.lag_samples`)."""
    offset = GaugeMetricFamily(
        "kafka_consumergroup_group_offset",
        "The committed offset of a group on a partition (a share group: its start offset).",
        labels=PARTITION_LABELS,
    )
    lag = GaugeMetricFamily(
        "kafka_consumergroup_group_lag",
        "Log end offset minus the group's committed offset (0 when negative).",
        labels=PARTITION_LABELS,
    )
    lag_s = GaugeMetricFamily(
        "kafka_consumergroup_group_lag_seconds",
        "Now minus the timestamp of the first record the group has not consumed (0 caught up).",
        labels=PARTITION_LABELS,
    )
    max_lag = GaugeMetricFamily(
        "kafka_consumergroup_group_max_lag",
        "The highest partition lag of the group.",
        labels=GROUP_LABELS,
    )
    max_lag_s = GaugeMetricFamily(
        "kafka_consumergroup_group_max_lag_seconds",
        "The highest partition time lag of the group, in seconds.",
        labels=GROUP_LABELS,
    )
    sum_lag = GaugeMetricFamily(
        "kafka_consumergroup_group_sum_lag",
        "The sum of the group's partition lags.",
        labels=GROUP_LABELS,
    )
    topic_sum = GaugeMetricFamily(
        "kafka_consumergroup_group_topic_sum_lag",
        "The sum of the group's partition lags on one topic.",
        labels=GROUP_TOPIC_LABELS,
    )
    latest = GaugeMetricFamily(
        "kafka_partition_latest_offset",
        "The log end offset of a partition.",
        labels=TOPIC_PARTITION_LABELS,
    )
    earliest = GaugeMetricFamily(
        "kafka_partition_earliest_offset",
        "The log start offset of a partition.",
        labels=TOPIC_PARTITION_LABELS,
    )
    group_max: dict[str, float] = {}
    group_max_s: dict[str, float] = {}
    group_sum: dict[str, float] = {}
    group_type: dict[str, str] = {}
    per_topic: dict[tuple[str, str], float] = {}
    marks: dict[tuple[str, int], tuple[int, int]] = {}
    for row in rows:
        group, topic = row["group"], row["topic"]
        if row.get("log_end_offset", -1) >= 0:
            marks.setdefault((topic, row["partition"]), (row["log_start_offset"],
                                                          row["log_end_offset"]))  # fmt: skip
        if not _has_lag(row):
            continue
        labels, value = _partition_labels(cluster, row), _lag(row)
        offset.add_metric(labels, float(row["committed_offset"]))
        lag.add_metric(labels, value)
        group_type.setdefault(group, row.get("group_type") or "")
        group_max[group] = max(group_max.get(group, 0.0), value)
        group_sum[group] = group_sum.get(group, 0.0) + value
        per_topic[(group, topic)] = per_topic.get((group, topic), 0.0) + value
        if row.get("time_lag_ms") is not None:
            seconds = max(0, row["time_lag_ms"]) / 1000.0
            lag_s.add_metric(labels, seconds)
            group_max_s[group] = max(group_max_s.get(group, 0.0), seconds)
    for group in sorted(group_sum):
        labels = [cluster, group, group_type[group]]
        max_lag.add_metric(labels, group_max[group])
        sum_lag.add_metric(labels, group_sum[group])
        if group in group_max_s:
            max_lag_s.add_metric(labels, group_max_s[group])
    for (group, topic), value in sorted(per_topic.items()):
        topic_sum.add_metric([cluster, group, topic], value)
    for (topic, partition), (start, end) in sorted(marks.items()):
        latest.add_metric([cluster, topic, str(partition)], float(end))
        earliest.add_metric([cluster, topic, str(partition)], float(start))
    return [offset, lag, lag_s, max_lag, max_lag_s, sum_lag, topic_sum, latest, earliest]


def status_families(
    partition_statuses: Mapping[tuple[str, str, int], str | None],
    group_types: Mapping[str, str],
    cluster: str,
) -> list[Metric]:
    """Per group, from its partitions' Burrow statuses (:mod:`kctl.lag.burrow`, the one
    implementation of the rules): ``kctl_consumergroup_status``, one series per group status
    (OK, WARN, ERR), 1 for the group's and 0 for the others, so an alert on one status keeps
    its series through status changes; and ``kctl_consumergroup_severity``, the severity of the
    worst partition status (Burrow's numbers: 1 OK, 2 WARN, 3 ERR, 4 STOP, 5 STALL, 6 REWIND;
    kctl's 7 NEGATIVE; 0 while no partition has a status: none has a commit)."""
    status = GaugeMetricFamily(
        "kctl_consumergroup_status",
        "1 for the group's status after Burrow's rules (OK, WARN, ERR), 0 for the others.",
        labels=STATUS_LABELS,
    )
    severity = GaugeMetricFamily(
        "kctl_consumergroup_severity",
        "The worst partition status of the group: 1 OK, 2 WARN, 3 ERR, 4 STOP, 5 STALL, "
        "6 REWIND, 7 NEGATIVE (0: none).",
        labels=GROUP_LABELS,
    )
    by_group: dict[str, list[str | None]] = {}
    for (group, _topic, _partition), value in partition_statuses.items():
        by_group.setdefault(group, []).append(value)
    for group in sorted(by_group):
        gtype = group_types.get(group, "")
        current = burrow.group_status(by_group[group])
        for name in GROUP_STATUSES:
            status.add_metric([cluster, group, gtype, name], 1.0 if current == name else 0.0)
        worst = burrow.worst_status(by_group[group])
        rank = burrow.SEVERITY[worst] if worst is not None else 0
        severity.add_metric([cluster, group, gtype], float(rank))
    return [status, severity]


def health_families(health: Health, cluster: str) -> list[Metric]:
    """The collector's health: passes and failed passes (counters), the start of the last
    successful pass (0 before the first), the last pass's duration, the stale flag, and
    kafka-lag-exporter's ``kafka_consumergroup_poll_time_ms``."""
    labels = [cluster]
    collections = CounterMetricFamily(
        "kctl_lag_exporter_collections",
        "Lag collections attempted (each asks the cluster once; scrapes never do).",
        labels=CLUSTER_LABELS,
    )
    collections.add_metric(labels, float(health.collections))
    errors = CounterMetricFamily(
        "kctl_lag_exporter_collection_errors",
        "Lag collections that failed.",
        labels=CLUSTER_LABELS,
    )
    errors.add_metric(labels, float(health.errors))
    partial = CounterMetricFamily(
        "kctl_lag_exporter_partial_collections",
        "Lag collections that could not read every group (a broker away, coordinators loading).",
        labels=CLUSTER_LABELS,
    )
    partial.add_metric(labels, float(health.partial))
    success = GaugeMetricFamily(
        "kctl_lag_exporter_last_success_timestamp_seconds",
        "Unix time when the last complete collection began (0: none yet).",
        labels=CLUSTER_LABELS,
    )
    success.add_metric(labels, health.last_success_s or 0.0)
    stale = GaugeMetricFamily(
        "kctl_lag_exporter_stale",
        "1 while the last collection failed or could not read every group: some lag series "
        "are from an earlier collection (kctl_consumergroup_stale says which) or missing.",
        labels=CLUSTER_LABELS,
    )
    stale.add_metric(labels, 1.0 if health.stale else 0.0)
    out: list[Metric] = [collections, errors, partial, success, stale]
    if health.last_duration_s is not None:
        duration = GaugeMetricFamily(
            "kctl_lag_exporter_last_collection_duration_seconds",
            "How long the last collection took (failed or not).",
            labels=CLUSTER_LABELS,
        )
        duration.add_metric(labels, health.last_duration_s)
        out.append(duration)
    if health.poll_ms is not None:
        poll = GaugeMetricFamily(
            "kafka_consumergroup_poll_time_ms",
            "How long the last successful collection took, in milliseconds.",
            labels=CLUSTER_LABELS,
        )
        poll.add_metric(labels, health.poll_ms)
        out.append(poll)
    return out


def stale_families(
    group_types: Mapping[str, str], stale_groups: frozenset[str], cluster: str
) -> list[Metric]:
    """``kctl_consumergroup_stale``: per group served, 1 when its series are kept from an
    earlier collection (the last one could not read it), 0 when they are fresh."""
    stale = GaugeMetricFamily(
        "kctl_consumergroup_stale",
        "1 when the group's series are from an earlier collection (the last could not read "
        "it: its coordinator or a partition leader did not answer), 0 when fresh.",
        labels=GROUP_LABELS,
    )
    for group in sorted(group_types):
        stale.add_metric([cluster, group, group_types[group]],
                         1.0 if group in stale_groups else 0.0)  # fmt: skip
    return [stale]


def families(
    rows: Sequence[Mapping[str, Any]],
    partition_statuses: Mapping[tuple[str, str, int], str | None],
    health: Health,
    cluster: str,
) -> list[Metric]:
    """Every family the exporter serves for one snapshot: the lag families of ``rows``, the
    status of each group from ``partition_statuses`` (what
    :meth:`kctl.lag.burrow.StatusWindows.observe` answered for those rows), whether each
    group's series are stale, and the health."""
    types = {r["group"]: r.get("group_type") or "" for r in rows}
    return [
        *lag_families(rows, cluster),
        *status_families(partition_statuses, types, cluster),
        *stale_families(types, health.stale_groups, cluster),
        *health_families(health, cluster),
    ]
