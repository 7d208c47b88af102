"""The pure parts of running a reassignment in waves (kctl.reassign.waves, .progress): where each
partition of a plan stands, the wave schedule under a count and a byte budget, the throttle
changes between waves, bytes copied, rate, ETA and stalls. No broker."""

from __future__ import annotations

import itertools
import random

import pytest

from kctl import parsing
from kctl.errors import UsageError
from kctl.reassign import progress, throttles, waves


def test_classify_reads_the_state_from_the_cluster_alone() -> None:
    plan = {("a", 0): [2, 3], ("a", 1): [3, 1], ("a", 2): [1, 2], ("b", 0): [2], ("c", 0): [1]}
    current = {("a", 0): [2, 3], ("a", 1): [1, 3], ("a", 2): [1, 3, 2], ("b", 0): [1]}
    states = waves.classify(plan, current, [("a", 2)])
    assert states == {
        ("a", 0): waves.DONE,
        ("a", 1): waves.PENDING,  # a reorder is still to do
        ("a", 2): waves.IN_FLIGHT,
        ("b", 0): waves.PENDING,
        ("c", 0): waves.MISSING,
    }


def test_schedule_by_count() -> None:
    tps = [("t", p) for p in (4, 0, 3, 1, 2)]
    assert waves.schedule(tps, {}, 2) == [[("t", 0), ("t", 1)], [("t", 2), ("t", 3)], [("t", 4)]]
    assert waves.schedule(tps, {}) == [[("t", p) for p in range(5)]]
    assert waves.schedule([], {}, 2) == []


def test_schedule_by_bytes_puts_a_partition_over_the_budget_alone() -> None:
    cost = {("t", 0): 40, ("t", 1): 70, ("t", 2): 500, ("t", 3): 10, ("t", 4): 90}
    assert waves.schedule(cost, cost, max_bytes=100) == [
        [("t", 0)],
        [("t", 1)],
        [("t", 2)],
        [("t", 3), ("t", 4)],
    ]
    # Both limits: whichever closes the wave first.
    assert waves.schedule(cost, cost, max_concurrent=1, max_bytes=1000) == [
        [tp] for tp in sorted(cost)
    ]


def test_schedule_random_invariants() -> None:
    rng = random.Random(7)
    for _ in range(300):
        n = rng.randint(0, 40)
        tps = [(rng.choice("xyz"), p) for p in range(n)]
        cost = {tp: rng.choice([0, 1, 10, 100, 1000]) for tp in tps}
        mc = rng.choice([None, 1, 2, 5])
        mb = rng.choice([None, 50, 500, 5000])
        out = waves.schedule(tps, cost, mc, mb)
        flat = [tp for w in out for tp in w]
        assert flat == sorted(set(tps))  # every partition once, in order
        for w in out:
            assert w
            if mc is not None:
                assert len(w) <= mc
            if mb is not None and len(w) > 1:
                assert sum(cost[tp] for tp in w) <= mb
        # Greedy: the next wave's first partition would not have fitted in the previous one.
        for a, b in itertools.pairwise(out):
            by_count = mc is not None and len(a) >= mc
            by_bytes = mb is not None and sum(cost[tp] for tp in a) + cost[b[0]] > mb
            assert by_count or by_bytes


def test_move_bytes_counts_each_added_replica() -> None:
    current = {("t", 0): [1, 2], ("t", 1): [1, 2], ("t", 2): [1]}
    target = {("t", 0): [3, 4], ("t", 1): [2, 1], ("t", 2): [1, 2, 3]}
    sizes = {("t", 0): 100, ("t", 1): 50, ("t", 2): 7}
    assert waves.move_bytes(current, target, sizes) == {("t", 0): 200, ("t", 1): 0, ("t", 2): 14}
    assert waves.adding(current, target, ("t", 2)) == [2, 3]


def test_throttle_diff_removes_what_the_next_wave_does_not_move() -> None:
    before = [
        ("broker", "1", {"leader.replication.throttled.rate": "10"}),
        ("broker", "2", {"leader.replication.throttled.rate": "10"}),
        ("topic", "a", {"leader.replication.throttled.replicas": "0:1"}),
    ]
    after = [
        ("broker", "2", {"leader.replication.throttled.rate": "10"}),
        ("broker", "3", {"leader.replication.throttled.rate": "10"}),
        ("topic", "b", {"leader.replication.throttled.replicas": "0:2"}),
    ]
    out = throttles.throttle_diff(before, after)
    assert out[:3] == after
    assert sorted(out[3:]) == [
        ("broker", "1", {"leader.replication.throttled.rate": None}),
        ("topic", "a", {"leader.replication.throttled.replicas": None}),
    ]
    assert throttles.throttle_diff(before, []) == [(k, n, dict.fromkeys(v)) for k, n, v in before]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("50000000", 50_000_000),
        ("50MB", 50_000_000),
        ("50M", 50_000_000),
        ("1.5GiB", 1536 * 1024 * 1024),
        ("10kB/s", 10_000),
        ("2 mib", 2 * 1024 * 1024),
        (7, 7),
    ],
)
def test_parse_size(text: str, value: int) -> None:
    assert parsing.byte_size(text, "--throttle") == value


@pytest.mark.parametrize("text", ["", "0", "-5", "ten", "5XB", "0.1"])
def test_parse_size_refuses(text: str) -> None:
    with pytest.raises(UsageError):
        parsing.byte_size(text, "--throttle")


def test_copied_caps_each_adding_replica_at_the_partition_size() -> None:
    sizes = {("t", 0, 1): 1000, ("t", 0, 4): 400, ("t", 0, 5): 1200}
    assert progress.partition_sizes(sizes) == {("t", 0): 1200}
    assert progress.copied(("t", 0), [4, 5], sizes, 1000) == (1400, 2000)
    assert progress.copied(("t", 0), [6], sizes, 1000) == (0, 1000)


def test_rate_eta_and_window() -> None:
    tr = progress.Tracker(window=10)
    assert tr.rate() is None
    for t in range(0, 31):
        tr.sample(float(t), t * 100)
    assert tr.rate() == pytest.approx(100.0)
    assert tr.samples[0][0] >= 19  # only about the window is kept
    assert progress.eta_seconds(1000, 100.0) == 10.0
    assert progress.eta_seconds(0, None) == 0.0
    assert progress.eta_seconds(5, 0.0) is None


def test_stalls_restart_when_bytes_grow() -> None:
    tr = progress.Tracker()
    a, b = ("t", 0), ("t", 1)
    tr.watch(0.0, a, 0)
    tr.watch(0.0, b, 0)
    tr.watch(50.0, a, 10)
    assert tr.stalled(60.0, 60, [a, b]) == [b]
    tr.watch(70.0, a, 10)  # no growth: the clock keeps running from 50
    assert tr.stalled(110.0, 60, [a, b]) == [a, b]
    tr.forget(b)
    assert tr.stalled(110.0, 60, [a, b]) == [a]


def test_progress_line_fields() -> None:
    line = progress.progress_line(
        wave=2, waves=3, partitions_done=4, partitions_total=6, bytes_copied=300,
        bytes_total=1000, rate=70.0, in_flight=[("t", 5)], stuck=[], elapsed=12.34,
    )  # fmt: skip
    assert line == {
        "phase": "replicas",
        "wave": 2,
        "waves": 3,
        "partitions_done": 4,
        "partitions_total": 6,
        "bytes_copied": 300,
        "bytes_total": 1000,
        "rate_bytes_per_s": 70.0,
        "eta_seconds": 10.0,
        "elapsed_seconds": 12.3,
        "in_flight": ["t-5"],
        "stuck": [],
    }
    done = progress.progress_line(
        wave=3, waves=3, partitions_done=6, partitions_total=6, bytes_copied=990,
        bytes_total=1000, rate=None, in_flight=[], stuck=[], elapsed=1,
    )  # fmt: skip
    assert done["eta_seconds"] == 0.0


def test_a_broker_that_stops_answering_keeps_the_bytes_it_had_copied():
    """execute --wait's progress: a broker that dies mid-copy (not asked once fenced, or not
    answering before) keeps its last size, so bytes_copied never goes backwards; a broker
    that answers gives what it says, and a replica gone from an answering broker is gone."""
    from kctl.reassign.progress import carry_forward

    last = {("t", 0, 2): 900, ("t", 0, 3): 500, ("t", 1, 3): 10}
    now = {("t", 0, 3): 700}
    assert carry_forward(last, now, answered={1, 3}) == {("t", 0, 3): 700, ("t", 0, 2): 900}
    assert carry_forward(last, {}, answered={1, 2, 3}) == {}
