"""What ``kctl produce`` reports when it is done, from the sender's result
(:class:`kctl.broker.produce.ProduceSummary`): the line for people on stderr, the row and the
document for ``-o``, and the error the run ends with. Pure: no client library, no broker."""

from __future__ import annotations

from typing import Any, Protocol

from kctl.errors import KctlError


class Result(Protocol):
    """What the sender counted (:class:`kctl.broker.produce.ProduceSummary` is one)."""

    delivered: int
    failed: int
    unknown: int
    bytes: int
    first_error: str | None
    interrupted: bool
    abandoned: bool
    stalled: bool
    aborted: bool
    throttle_seconds: float
    throttled_responses: int

    @property
    def rate(self) -> float: ...

    def doc(self, topic: str, transactional: bool) -> dict[str, Any]: ...

    def partition_rows(self) -> list[dict[str, Any]]: ...


def line(result: Result, *, transactional: bool, timeout: float) -> str:
    """The one-line summary for stderr: counts, size and rate; the offsets when one partition
    got everything; a quota's throttling; the transaction's end; why the run stopped early.
    ``timeout``: the seconds without progress after which kctl gives up (to name them)."""
    text = (
        f"delivered {result.delivered}, failed {result.failed}, unknown {result.unknown}, "
        f"{result.bytes / 1e6:.2f} MB, {result.rate:,.0f} records/s"
    )
    rows = result.partition_rows()
    if len(rows) == 1 and rows[0]["first_offset"] is not None and not result.aborted:
        row = rows[0]
        first, last = row["first_offset"], row["last_offset"]
        span = f"offset {first}" if first == last else f"offsets {first}..{last}"
        text += f", partition {row['partition']} {span}"
    if result.throttled_responses:
        text += (
            f", throttled by the broker {result.throttle_seconds:.1f} s "
            f"({result.throttled_responses} answers: a quota)"
        )
    if result.aborted:
        text += ", transaction aborted"
    elif transactional:
        text += ", transaction committed"
    if result.abandoned:
        text += " (interrupted: gave up waiting for the broker)"
    elif result.interrupted:
        text += " (interrupted: input not read to the end)"
    elif result.stalled:
        text += f" (gave up: nothing delivered for {timeout:g}s)"
    return text


def document(result: Result, topic: str, *, transactional: bool) -> dict[str, Any]:
    """The summary as ``-o json``/``yaml``/``jsonl`` print it (fields in docs/produce.md)."""
    return result.doc(topic, transactional)


def rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The one row of ``-o table``/``plain``/``csv``/``name``: the document without its
    partitions (``name`` prints the topic)."""
    return [{k: v for k, v in doc.items() if k != "partitions"}]


def failure(result: Result, topic: str) -> KctlError | None:
    """The error a finished run ends with (exit 1), or None when everything was delivered:
    records not delivered (failed, or an aborted transaction), records whose fate is unknown,
    or a stall that left input unread. Bad input and interrupts are the caller's to report
    first (``summary.error``, exit 130)."""
    if not (result.failed or result.unknown or result.aborted or result.stalled):
        return None
    if result.aborted or result.failed:
        what = f"{result.failed} record(s) not delivered to {topic!r}"
        if result.unknown:
            what += f", {result.unknown} unconfirmed"
    elif result.unknown:
        what = (
            f"{result.unknown} record(s) unconfirmed by {topic!r} "
            "(they may or may not be on the broker)"
        )
    else:
        what = f"delivery to {topic!r} stalled: input not read to the end"
    return KctlError(what, result.first_error)
