"""The lag exporter's metrics without a cluster (kctl.lag.metrics): kafka-lag-exporter's names and
labels, the values taken from hand-written lag rows, no series for a partition without a commit,
the Burrow status per group and the collector's health; and the text Prometheus scrapes."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.metrics_core import Metric

from kctl.lag import metrics as M
from kctl.lag.burrow import StatusWindows

CLUSTER = "prod"
PARTITION_LABELS = ["cluster_name", "group", "topic", "partition", "member_host", "consumer_id",
                    "client_id"]  # fmt: skip


def row(group: str, topic: str, partition: int, committed: int, end: int, *, start: int = 0,
        time_lag_ms: int | None = None, member: str | None = None,
        group_type: str = "classic") -> dict[str, Any]:  # fmt: skip
    """A lag row as kctl.broker.groups.lag_samples makes it (lag null without a commit)."""
    return {
        "group": group,
        "topic": topic,
        "partition": partition,
        "committed_offset": committed,
        "log_start_offset": start,
        "log_end_offset": end,
        "lag": None if committed < 0 else end - committed,
        "group_state": "Stable" if member else "Empty",
        "member_id": member,
        "client_id": "app-client" if member else None,
        "host": "/10.0.0.7" if member else None,
        "group_type": group_type,
        "time_lag_ms": time_lag_ms,
    }


ROWS = [
    row("app", "orders", 0, 3, 10, time_lag_ms=4_500, member="m-1"),  # lag 7
    row("app", "orders", 1, 10, 10, time_lag_ms=0, member="m-1"),  # caught up
    row("app", "payments", 0, 1, 10, start=2, time_lag_ms=60_000),  # lag 9, deleted under it
    row("app", "payments", 1, -1, 10),  # no commit: no lag series
    row("batch", "orders", 0, 500, 10, group_type="consumer"),  # beyond the log end: 0
    row("batch", "orders", 1, 2, 10, group_type="consumer"),  # lag 8, no time lag asked
]


def by_name(families: list[Metric]) -> dict[str, Metric]:
    return {f.name: f for f in families}


def series(family: Metric) -> dict[tuple[str, ...], float]:
    """Label values (in the family's label order) -> value, one entry per sample."""
    out = {}
    for s in family.samples:
        out[tuple(s.labels.values())] = s.value
    assert len(out) == len(family.samples), "a label set appears twice"
    return out


def lag_families() -> dict[str, Metric]:
    return by_name(M.lag_families(ROWS, CLUSTER))


def test_names_types_and_label_names_are_kafka_lag_exporters():
    fams = lag_families()
    expected = {
        "kafka_consumergroup_group_offset": PARTITION_LABELS,
        "kafka_consumergroup_group_lag": PARTITION_LABELS,
        "kafka_consumergroup_group_lag_seconds": PARTITION_LABELS,
        # kctl adds group_type to the per-group series only
        "kafka_consumergroup_group_max_lag": ["cluster_name", "group", "group_type"],
        "kafka_consumergroup_group_max_lag_seconds": ["cluster_name", "group", "group_type"],
        "kafka_consumergroup_group_sum_lag": ["cluster_name", "group", "group_type"],
        "kafka_consumergroup_group_topic_sum_lag": ["cluster_name", "group", "topic"],
        "kafka_partition_latest_offset": ["cluster_name", "topic", "partition"],
        "kafka_partition_earliest_offset": ["cluster_name", "topic", "partition"],
    }
    assert set(fams) == set(expected)
    for name, labels in expected.items():
        assert fams[name].type == "gauge", name
        for s in fams[name].samples:
            assert list(s.labels) == labels, name


def test_partition_series_carry_the_owner_and_the_committed_offset_and_lag():
    fams = lag_families()
    owned = (CLUSTER, "app", "orders", "0", "/10.0.0.7", "m-1", "app-client")
    unowned = (CLUSTER, "app", "payments", "0", "", "", "")
    assert series(fams["kafka_consumergroup_group_offset"])[owned] == 3
    assert series(fams["kafka_consumergroup_group_lag"])[owned] == 7
    assert series(fams["kafka_consumergroup_group_lag"])[unowned] == 9
    assert series(fams["kafka_consumergroup_group_offset"])[unowned] == 1


def test_a_partition_without_a_commit_has_no_offset_lag_or_time_lag_series():
    fams = lag_families()
    for name in ("kafka_consumergroup_group_offset", "kafka_consumergroup_group_lag",
                 "kafka_consumergroup_group_lag_seconds"):  # fmt: skip
        assert not [k for k in series(fams[name]) if k[2:4] == ("payments", "1")], name
    # ... but its log offsets are exported
    assert series(fams["kafka_partition_latest_offset"])[(CLUSTER, "payments", "1")] == 10


def test_negative_lag_is_exported_as_zero_and_counts_zero_in_the_aggregates():
    fams = lag_families()
    lags = series(fams["kafka_consumergroup_group_lag"])
    assert lags[(CLUSTER, "batch", "orders", "0", "", "", "")] == 0
    assert series(fams["kafka_consumergroup_group_sum_lag"])[(CLUSTER, "batch", "consumer")] == 8
    assert series(fams["kafka_consumergroup_group_max_lag"])[(CLUSTER, "batch", "consumer")] == 8


def test_time_lag_is_in_seconds_and_only_where_the_row_has_one():
    fams = lag_families()
    lag_s = series(fams["kafka_consumergroup_group_lag_seconds"])
    assert lag_s == {
        (CLUSTER, "app", "orders", "0", "/10.0.0.7", "m-1", "app-client"): 4.5,
        (CLUSTER, "app", "orders", "1", "/10.0.0.7", "m-1", "app-client"): 0.0,
        (CLUSTER, "app", "payments", "0", "", "", ""): 60.0,
    }
    # batch has no time lag at all: no max_lag_seconds series rather than a made-up 0
    assert series(fams["kafka_consumergroup_group_max_lag_seconds"]) == {
        (CLUSTER, "app", "classic"): 60.0
    }


def test_group_and_topic_aggregates():
    fams = lag_families()
    assert series(fams["kafka_consumergroup_group_sum_lag"]) == {
        (CLUSTER, "app", "classic"): 16.0,
        (CLUSTER, "batch", "consumer"): 8.0,
    }
    assert series(fams["kafka_consumergroup_group_max_lag"]) == {
        (CLUSTER, "app", "classic"): 9.0,
        (CLUSTER, "batch", "consumer"): 8.0,
    }
    assert series(fams["kafka_consumergroup_group_topic_sum_lag"]) == {
        (CLUSTER, "app", "orders"): 7.0,
        (CLUSTER, "app", "payments"): 9.0,
        (CLUSTER, "batch", "orders"): 8.0,
    }


def test_partition_log_offsets_once_per_partition_whatever_the_groups_reading_it():
    fams = lag_families()
    assert series(fams["kafka_partition_earliest_offset"]) == {
        (CLUSTER, "orders", "0"): 0.0,
        (CLUSTER, "orders", "1"): 0.0,
        (CLUSTER, "payments", "0"): 2.0,
        (CLUSTER, "payments", "1"): 0.0,
    }
    assert set(series(fams["kafka_partition_latest_offset"]).values()) == {10.0}


def test_a_partition_that_is_gone_has_no_log_offset_series():
    gone = {**row("app", "old", 0, 5, 0), "log_start_offset": -1, "log_end_offset": -1,
            "lag": None}  # fmt: skip
    fams = by_name(M.lag_families([gone], CLUSTER))
    assert series(fams["kafka_partition_latest_offset"]) == {}
    assert series(fams["kafka_consumergroup_group_lag"]) == {}


def test_group_status_one_series_per_status_with_the_groups_at_one():
    statuses = {("app", "orders", 0): "OK", ("app", "orders", 1): "STALL",
                ("batch", "orders", 0): "WARN", ("batch", "orders", 1): None,
                ("idle", "t", 0): None}  # fmt: skip
    types = {"app": "classic", "batch": "consumer", "idle": "share"}
    status, severity = M.status_families(statuses, types, CLUSTER)
    assert status.name == "kctl_consumergroup_status"
    assert series(status) == {
        (CLUSTER, "app", "classic", "OK"): 0.0,
        (CLUSTER, "app", "classic", "WARN"): 0.0,
        (CLUSTER, "app", "classic", "ERR"): 1.0,  # a STALL partition makes the group ERR
        (CLUSTER, "batch", "consumer", "OK"): 0.0,
        (CLUSTER, "batch", "consumer", "WARN"): 1.0,
        (CLUSTER, "batch", "consumer", "ERR"): 0.0,
        (CLUSTER, "idle", "share", "OK"): 1.0,  # no partition with a status: OK (Burrow's)
        (CLUSTER, "idle", "share", "WARN"): 0.0,
        (CLUSTER, "idle", "share", "ERR"): 0.0,
    }
    assert series(severity) == {
        (CLUSTER, "app", "classic"): 5.0,  # STALL
        (CLUSTER, "batch", "consumer"): 2.0,  # WARN
        (CLUSTER, "idle", "share"): 0.0,
    }


def test_status_comes_from_the_burrow_windows_over_passes():
    # A partition whose committed offset never moves while a member owns it and lag stays
    # above 0: STALL once the window has two entries (Burrow's rules, kctl.lag.burrow).
    windows = StatusWindows(3)
    stuck = [row("app", "orders", 0, 3, 10, member="m-1")]
    for i in range(3):
        statuses = windows.observe(stuck, 1_000 * (i + 1))
    fams = by_name(M.families(stuck, statuses, M.Health(), CLUSTER))
    assert series(fams["kctl_consumergroup_status"])[(CLUSTER, "app", "classic", "ERR")] == 1
    assert series(fams["kctl_consumergroup_severity"])[(CLUSTER, "app", "classic")] == 5


def test_health_before_any_collection():
    fams = by_name(M.health_families(M.Health(), CLUSTER))
    assert series(fams["kctl_lag_exporter_collections"]) == {(CLUSTER,): 0.0}
    assert series(fams["kctl_lag_exporter_collection_errors"]) == {(CLUSTER,): 0.0}
    assert series(fams["kctl_lag_exporter_last_success_timestamp_seconds"]) == {(CLUSTER,): 0.0}
    assert series(fams["kctl_lag_exporter_stale"]) == {(CLUSTER,): 0.0}
    assert "kctl_lag_exporter_last_collection_duration_seconds" not in fams
    assert "kafka_consumergroup_poll_time_ms" not in fams


def test_health_after_a_failure_following_successes():
    health = M.Health(collections=5, errors=2, last_success_s=1_700_000_000.5,
                      last_duration_s=15.0, poll_ms=42.0, stale=True)  # fmt: skip
    fams = by_name(M.health_families(health, CLUSTER))
    assert fams["kctl_lag_exporter_collections"].type == "counter"
    assert fams["kctl_lag_exporter_collection_errors"].type == "counter"
    assert series(fams["kctl_lag_exporter_collections"]) == {(CLUSTER,): 5.0}
    assert series(fams["kctl_lag_exporter_collection_errors"]) == {(CLUSTER,): 2.0}
    assert series(fams["kctl_lag_exporter_last_success_timestamp_seconds"]) == {
        (CLUSTER,): 1_700_000_000.5
    }
    assert series(fams["kctl_lag_exporter_stale"]) == {(CLUSTER,): 1.0}
    assert series(fams["kctl_lag_exporter_last_collection_duration_seconds"]) == {(CLUSTER,): 15.0}
    assert series(fams["kafka_consumergroup_poll_time_ms"]) == {(CLUSTER,): 42.0}


class _Served:
    def __init__(self, families: list[Metric]) -> None:
        self.families = families

    def collect(self) -> Any:
        return iter(self.families)


def test_exposition_text_as_prometheus_scrapes_it():
    registry = CollectorRegistry(auto_describe=False)
    health = M.Health(collections=1, last_success_s=1.0, last_duration_s=0.5, poll_ms=500.0)
    registry.register(_Served(M.families(ROWS, {}, health, CLUSTER)))
    text = generate_latest(registry).decode()
    assert "# TYPE kafka_consumergroup_group_lag gauge" in text
    assert (
        'kafka_consumergroup_group_lag{client_id="app-client",cluster_name="prod",'
        'consumer_id="m-1",group="app",member_host="/10.0.0.7",partition="0",topic="orders"} 7.0'
    ) in text
    assert "# TYPE kctl_lag_exporter_collection_errors_total counter" in text
    assert 'kctl_lag_exporter_collection_errors_total{cluster_name="prod"} 0.0' in text
    assert 'kctl_lag_exporter_collections_total{cluster_name="prod"} 1.0' in text
    assert "_created" not in text  # no creation-time series beside the counters
    assert 'partition="1",topic="payments"' not in text.split("kafka_partition_")[0]


def test_label_values_are_escaped_in_the_exposition():
    odd = row('we"ird\\grp', "t", 0, 1, 2)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Served(M.lag_families([odd], "c\nx")))
    text = generate_latest(registry).decode()
    assert 'group="we\\"ird\\\\grp"' in text
    assert 'cluster_name="c\\nx"' in text
