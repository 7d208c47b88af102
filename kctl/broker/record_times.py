"""The first record a group has not consumed, for ``groups lag --time-lag``: one Fetch per
partition leader carrying all its partitions, a few hundred bytes each, decoded by
:mod:`kctl.lag.record_time`.

A Fetch answers each partition from the batch holding the offset asked for; that batch's header
alone usually gives the time (:mod:`kctl.lag.record_time`). Kafka returns a partition's first
batch only whole: the first non-empty partition of an answer gets it whatever its size (KIP-74);
any other partition whose first batch is larger than its limit gets no bytes at all. So the
first round answers the partitions whose first batch is small (and the one that came first), and
follow-up rounds, each again one Fetch per leader, take the rest: partitions answered with no
bytes while they have records (asked again with room for a larger batch, :data:`LIMITS`), those
whose bytes held only transaction markers or empty batches (the next offset is fetched), those
whose position lies inside a CreateTime batch cut short at the end of the answer (fetched again
whole to decode its records), those whose records were deleted under the position (fetched from
the log start), and those whose leader moved (metadata is read again, once).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kctl.broker import kafka_python
from kctl.broker.client import Admin
from kctl.errors import KctlError
from kctl.lag.record_time import RecordTime, scan_first_record

TP = tuple[str, int]

MAX_VERSION = 12  # Fetch v13+ names topics by id only
MIN_VERSION = 4  # isolation_level; Kafka 4 answers v4+ only
# The bytes allowed per partition, round after round. Kafka answers a partition whose first
# batch is larger than its limit with NO bytes at all (a first batch cut short is dropped),
# except for the first non-empty partition of an answer, which gets its whole first batch
# (KIP-74). So the first round allows a few hundred bytes (small batches, and the batch headers
# of the following ones), and a partition answered with nothing while it has records is asked
# again with room for a Java producer's batch (16 KiB by default), then for librdkafka's and
# the broker's default largest batch (1 MB), then for a large one.
LIMITS = (512, 64 << 10, (1 << 20) + (64 << 10), 16 << 20)
PARTITION_BYTES = LIMITS[0]
MAX_FOLLOW_UPS = 3  # follow-up rounds per partition (markers, large batches, deleted records)
# No limit of the whole answer of our own: the partition limits bound it (plus one whole first
# batch); the broker applies its own (fetch.max.bytes, 55 MiB by default), and a partition it
# leaves without bytes is asked again with the next limit.
REQUEST_BYTES = 0x7FFFFFFF
# The leader may have moved: read metadata again and retry the partition (once).
_LEADER_MOVED = frozenset(
    {
        "NOT_LEADER_OR_FOLLOWER",
        "NOT_LEADER_FOR_PARTITION",  # kafka-python's name for it
        "LEADER_NOT_AVAILABLE",
        "REPLICA_NOT_AVAILABLE",
        "FENCED_LEADER_EPOCH",
        "UNKNOWN_LEADER_EPOCH",
        "KAFKA_STORAGE_ERROR",
        "UNKNOWN_TOPIC_OR_PARTITION",
        "BROKER_NOT_AVAILABLE",  # ours too: the leader could not be reached or asked
    }
)


@dataclass
class _Want:
    """A partition still being read: where, with how many bytes, and what it has used."""

    position: int  # the position asked for
    offset: int  # where the next Fetch reads
    max_bytes: int = PARTITION_BYTES
    follow_ups: int = 0
    moved: bool = False  # the leader-moved retry was used


def first_record_times(
    admin: Admin,
    positions: dict[TP, int],
    *,
    client: Any = None,
    errors: dict[TP, str] | None = None,
) -> dict[TP, RecordTime]:
    """For each partition, the first data record at or after ``position`` (the first offset a
    group has not consumed). ONE Fetch request per partition leader carrying all its partitions
    (``replica_id`` -1, ``read_uncommitted``, max wait 0, min bytes 0, Fetch v4-v12: the highest
    the leader and kafka-python both speak that still names topics), then at most
    :data:`MAX_FOLLOW_UPS` follow-up rounds (again one Fetch per leader) for the partitions
    whose first bytes held none.

    Left out of the answer: partitions where no data record lies between the position and the
    log end (only transaction markers, or the position at the end): the caller treats them as
    caught up. A position below the log start (records deleted under a commit) reads from the
    log start. A partition whose leader moved is retried once after metadata is read again.

    ``client``: a kafka-python client to reuse (a :class:`kafka_python.LazyClient` such as the
    command's ``GroupReader``, or a ``KafkaAdminClient``); else one is opened and closed here.
    ``errors``: where a partition that cannot be read goes (partition -> why: a broker error
    name, or what went wrong); it is left out of the answer. Without ``errors``, any such
    partition raises :class:`KctlError` naming them: a time lag the command cannot read must not
    pass for a caught-up partition."""
    if not positions:
        return {}
    failed: dict[TP, str] = {} if errors is None else errors
    if client is None:
        with kafka_python.LazyClient(admin) as lazy:
            found = _read(admin, lazy.client, positions, failed)
    else:
        raw = client.client if isinstance(client, kafka_python.LazyClient) else client
        found = _read(admin, raw, positions, failed)
    if errors is None and failed:
        shown = "; ".join(f"{t}[{p}]: {why}" for (t, p), why in sorted(failed.items())[:5])
        more = f"; and {len(failed) - 5} more" if len(failed) > 5 else ""
        raise KctlError("reading the first records not consumed", shown + more)
    return found


def _read(
    admin: Admin, client: Any, positions: dict[TP, int], failed: dict[TP, str]
) -> dict[TP, RecordTime]:
    wants = {tp: _Want(at, at) for tp, at in positions.items()}
    found: dict[TP, RecordTime] = {}
    versions: dict[int, int] = {}
    leaders = _leaders(admin, list(wants))
    while wants:
        refresh = False
        by_leader: dict[int, list[TP]] = {}
        for tp in list(wants):
            node = leaders.get(tp, _UNKNOWN)
            if node >= 0:
                by_leader.setdefault(node, []).append(tp)
            elif _moved(wants, tp, failed, _NO_LEADER[node == _UNKNOWN]):
                refresh = True
        out_of_range: list[TP] = []
        for node, tps in sorted(by_leader.items()):
            answers = _fetch(client, node, {tp: wants[tp] for tp in tps}, versions)
            for tp in tps:
                if _settle(wants, tp, answers[tp], found, failed, out_of_range):
                    refresh = True
        if out_of_range:
            _out_of_range(admin, wants, out_of_range, failed)
        if refresh and wants:
            leaders = _leaders(admin, list(wants))
    return found


# (error name or None, high watermark, log start offset, record bytes) of one partition
_Answer = tuple[str | None, int, int, bytes]


def _settle(
    wants: dict[TP, _Want],
    tp: TP,
    got: _Answer,
    found: dict[TP, RecordTime],
    failed: dict[TP, str],
    out_of_range: list[TP],
) -> bool:
    """Take one partition's answer: found, left out, failed, or read again (updating its
    want); out of range: added to ``out_of_range``. True when metadata must be read again
    (its leader moved)."""
    want = wants[tp]
    error, high, _log_start, records = got
    if error == "OFFSET_OUT_OF_RANGE":
        out_of_range.append(tp)  # Kafka answers no log start with the error: ask for it
        return False
    if error is not None and error.split(":", 1)[0] in _LEADER_MOVED:
        return _moved(wants, tp, failed, error)
    if error is not None:
        failed[tp] = error
        del wants[tp]
        return False
    scan = scan_first_record(records, want.offset)
    if scan.found is not None:
        found[tp] = scan.found
        del wants[tp]
    elif scan.problem is not None:
        failed[tp] = f"corrupt records from offset {want.offset}: {scan.problem}"
        del wants[tp]
    elif scan.next_offset is None:  # no bytes at all
        if want.offset >= high:
            del wants[tp]  # at the end: nothing after the position
        else:
            why = (
                f"the broker returned no bytes from offset {want.offset} with "
                f"{want.max_bytes} allowed (a larger first batch)"
            )
            _again(wants, tp, failed, want.offset, _grow(want.max_bytes), why)
    elif scan.next_offset >= high and scan.batch_bytes is None:
        del wants[tp]  # only markers or empty batches up to the end
    elif scan.batch_bytes:  # a batch cut short whose records must be read
        why = f"the batch at offset {scan.next_offset} was never read whole"
        size = max(want.max_bytes, scan.batch_bytes)
        _again(wants, tp, failed, scan.next_offset, size, why)
    else:
        why = f"only transaction markers or empty batches up to offset {scan.next_offset}"
        _again(wants, tp, failed, scan.next_offset, _grow(want.max_bytes), why)
    return False


def _out_of_range(
    admin: Admin, wants: dict[TP, _Want], tps: list[TP], failed: dict[TP, str]
) -> None:
    """Partitions whose offset was out of range: below the log start (records deleted under
    the position) they are read from the log start; at or past the log end they are left out
    (nothing after the position). One ListOffsets round (librdkafka batches it per leader)."""
    from kctl.broker.offsets import list_offsets

    starts = list_offsets(admin, tps, "earliest", skip_gone=True)
    for tp in tps:
        start = starts.get(tp)
        if start is None:
            failed[tp] = "UNKNOWN_TOPIC_OR_PARTITION"
            del wants[tp]
        elif wants[tp].offset < start:
            why = f"offset {wants[tp].offset} went below the log start again"
            _again(wants, tp, failed, start, wants[tp].max_bytes, why)
        else:
            del wants[tp]


def _again(
    wants: dict[TP, _Want], tp: TP, failed: dict[TP, str], offset: int, max_bytes: int, why: str
) -> None:
    """Read ``tp`` again from ``offset`` with ``max_bytes`` in the next round, if its
    follow-ups allow; else it fails with ``why`` (what the last Fetch left unread)."""
    want = wants[tp]
    if want.follow_ups >= MAX_FOLLOW_UPS:
        failed[tp] = (
            f"no data record read from offset {want.position} in {MAX_FOLLOW_UPS + 1} "
            f"fetches: {why}"
        )
        del wants[tp]
        return
    want.follow_ups += 1
    want.offset = offset
    want.max_bytes = max_bytes


def _grow(limit: int) -> int:
    """The next per-partition limit after ``limit``."""
    return next((n for n in LIMITS if n > limit), LIMITS[-1])


def _moved(wants: dict[TP, _Want], tp: TP, failed: dict[TP, str], error: str) -> bool:
    """The leader of ``tp`` moved (or has none): retry it once after reading metadata again."""
    want = wants[tp]
    if want.moved:
        failed[tp] = error
        del wants[tp]
        return False
    want.moved = True
    return True


_UNKNOWN = -2  # a partition metadata does not know, where a leader's id would be
_NO_LEADER = ("LEADER_NOT_AVAILABLE", "UNKNOWN_TOPIC_OR_PARTITION")  # indexed by unknown-ness


def _leaders(admin: Admin, tps: list[TP]) -> dict[TP, int]:
    """The leader of each partition: -1 when it has none, :data:`_UNKNOWN` when metadata does
    not know the partition."""
    md = admin.metadata()
    out: dict[TP, int] = {}
    for topic, partition in tps:
        t = md.topics.get(topic)
        p = t.partitions.get(partition) if t is not None and t.error is None else None
        out[(topic, partition)] = _UNKNOWN if p is None else p.leader
    return out


def _fetch(
    client: Any, node: int, wants: dict[TP, _Want], versions: dict[int, int]
) -> dict[TP, _Answer]:
    """One Fetch to ``node`` for all of ``wants``: each partition's answer. A broker that cannot
    be reached or asked answers each partition with the reason (retried like a leader move)."""
    from kctl.broker.logdirs import api_range

    what = f"fetching the first records not consumed from broker {node}"
    try:
        if node not in versions:
            found = api_range(client, node, "Fetch")
            if found is None or found[1] < MIN_VERSION:
                raise KctlError(f"broker {node} does not answer Fetch v{MIN_VERSION}+")
            versions[node] = min(found[1], MAX_VERSION)
        response = kafka_python.send(client, build_request(wants, versions[node]), what, node)
    except KctlError as exc:
        why = f"BROKER_NOT_AVAILABLE: broker {node}: {exc.line()}"
        return {tp: (why, -1, -1, b"") for tp in wants}
    return parse_response(response, list(wants))


def build_request(wants: dict[TP, _Want], version: int) -> Any:
    """A Fetch (``version`` <= 12) for every partition of ``wants`` from its offset."""
    from kafka.protocol.consumer import FetchRequest as F

    topics: dict[str, list[Any]] = {}
    for (topic, partition), want in wants.items():
        topics.setdefault(topic, []).append(
            F.FetchTopic.FetchPartition(
                partition=partition,
                current_leader_epoch=-1,
                fetch_offset=want.offset,
                last_fetched_epoch=-1,
                log_start_offset=-1,
                partition_max_bytes=want.max_bytes,
            )
        )
    return F(
        version=version,
        replica_id=-1,
        max_wait_ms=0,
        min_bytes=0,
        max_bytes=REQUEST_BYTES,
        isolation_level=0,  # read_uncommitted: every record up to the high watermark
        session_id=0,
        session_epoch=-1,  # no fetch session: a full, one-off fetch
        topics=[F.FetchTopic(topic=t, partitions=ps) for t, ps in topics.items()],
        forgotten_topics_data=[],
        rack_id="",
    )


def parse_response(response: Any, tps: list[TP]) -> dict[TP, _Answer]:
    """(error name or None, high watermark, log start offset (-1 before v5), record bytes) for
    each of ``tps`` from a Fetch response; a top-level error is every partition's."""
    from kctl.broker.logdirs import error_name

    top = getattr(response, "error_code", 0) or 0
    missing = error_name(top) if top else "the broker answered nothing for the partition"
    out: dict[TP, _Answer] = {tp: (missing, -1, -1, b"") for tp in tps}
    for t in response.responses:
        for p in t.partitions:
            tp = (t.topic, p.partition_index)
            if tp not in out:
                continue
            code = top or p.error_code or 0
            out[tp] = (
                None if code == 0 else error_name(code),
                p.high_watermark,
                getattr(p, "log_start_offset", -1),
                bytes(p.records or b""),
            )
    return out
