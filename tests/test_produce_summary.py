"""kctl.produce.summary: what produce reports from the sender's counts (a ProduceSummary filled
by hand, no broker): the stderr line, the -o row and document, and the error it ends with."""

from __future__ import annotations

from kctl.broker.produce import ProduceSummary
from kctl.produce import summary


def counted(**fields) -> ProduceSummary:
    """A sender's result as it ends a run: 2 s long unless told."""
    return ProduceSummary(**{"seconds": 2.0, **fields})


def test_line_counts_size_rate_and_the_one_partitions_offsets():
    s = counted(delivered=1000, bytes=2_500_000, seconds=2.0, spans={3: [1000, 40, 1039]})
    assert summary.line(s, transactional=False, timeout=15) == (
        "delivered 1000, failed 0, unknown 0, 2.50 MB, 500 records/s, partition 3 offsets 40..1039"
    )
    one = counted(delivered=1, bytes=5, spans={0: [1, 7, 7]})
    assert summary.line(one, transactional=False, timeout=15).endswith(", partition 0 offset 7")


def test_line_names_no_offsets_for_several_partitions_none_known_or_an_abort():
    two = counted(delivered=2, spans={0: [1, 5, 5], 1: [1, 9, 9]})
    assert "partition" not in summary.line(two, transactional=False, timeout=15)
    acks0 = counted(delivered=2, spans={0: [2, -1, -1]})  # the broker gave no offsets
    assert "partition" not in summary.line(acks0, transactional=False, timeout=15)
    aborted = counted(failed=2, aborted=True, spans={0: [2, 5, 6]})
    line = summary.line(aborted, transactional=True, timeout=15)
    assert "partition" not in line and line.endswith(", transaction aborted")


def test_line_tells_the_transactions_end_a_quota_and_why_the_run_stopped():
    ok = counted(delivered=1, throttle_seconds=12.34, throttled_responses=40)
    assert summary.line(ok, transactional=True, timeout=15).endswith(
        ", throttled by the broker 12.3 s (40 answers: a quota), transaction committed"
    )
    ends = {
        "abandoned": " (interrupted: gave up waiting for the broker)",
        "interrupted": " (interrupted: input not read to the end)",
        "stalled": " (gave up: nothing delivered for 2.5s)",
    }
    for flag, tail in ends.items():
        line = summary.line(counted(**{flag: True}), transactional=False, timeout=2.5)
        assert line.endswith(tail), (flag, line)
    both = counted(abandoned=True, interrupted=True, stalled=True)
    assert summary.line(both, transactional=False, timeout=1).endswith(
        "(interrupted: gave up waiting for the broker)"
    )


def test_document_is_the_senders_and_the_row_is_it_without_partitions():
    s = counted(delivered=3, bytes=3, spans={0: [3, 0, 2]})
    doc = summary.document(s, "orders", transactional=True)
    assert doc == s.doc("orders", True)
    assert doc["transaction"] == "committed" and len(doc["partitions"]) == 1
    (row,) = summary.rows(doc)
    assert "partitions" not in row
    assert {k: row[k] for k in ("topic", "delivered", "failed", "unknown")} == {
        "topic": "orders",
        "delivered": 3,
        "failed": 0,
        "unknown": 0,
    }
    assert set(row) == set(doc) - {"partitions"}


def test_failure_is_none_when_everything_was_delivered():
    assert summary.failure(counted(delivered=5), "orders") is None


def test_failure_names_what_failed_what_is_unknown_and_a_stall():
    failed = summary.failure(counted(failed=1, first_error="MSG_SIZE_TOO_LARGE: x"), "orders")
    assert failed is not None and failed.exit_code == 1
    assert failed.line() == "1 record(s) not delivered to 'orders' (MSG_SIZE_TOO_LARGE: x)"
    both = summary.failure(counted(failed=2, unknown=3), "orders")
    assert both is not None and both.line() == (
        "2 record(s) not delivered to 'orders', 3 unconfirmed"
    )
    unknown = summary.failure(counted(unknown=4, first_error="timed out"), "orders")
    assert unknown is not None and unknown.line() == (
        "4 record(s) unconfirmed by 'orders' (they may or may not be on the broker) (timed out)"
    )
    stalled = summary.failure(counted(stalled=True), "orders")
    assert stalled is not None
    assert stalled.line() == "delivery to 'orders' stalled: input not read to the end"
    aborted = summary.failure(counted(aborted=True, failed=7), "orders")
    assert aborted is not None and aborted.what == "7 record(s) not delivered to 'orders'"
