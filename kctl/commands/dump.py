"""kctl dump-segment: decode Kafka's on-disk files (kafka-dump-log.sh / DumpLogSegments)."""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

import typer

from kctl.commands._common import example, note
from kctl.logfmt import FILE_TYPES

EPILOG = example(
    "kctl dump-segment /var/lib/kafka/orders-0/00000000000000000000.log",
    "kctl dump-segment 00000000000000000000.log --deep-iteration --print-data-log -o jsonl",
    "kctl dump-segment __consumer_offsets-7/*.log --offsets-decoder --print-data-log",
    "kctl dump-segment /var/lib/kafka   # summarise every partition of a log dir",
)

_TEXT_FORMATS = (None, "plain")


class _Ctx:
    """Options of one run plus what was found (problems)."""

    def __init__(self, **kw: Any) -> None:
        self.__dict__.update(kw)
        self.problems = 0
        self.first = True  # for the streamed -o json array

    # -- output ---------------------------------------------------------------------------
    def obj(self, doc: dict[str, Any]) -> None:
        from kctl.formatters import to_json

        if self.fmt == "jsonl":
            self.out.write(to_json(doc, indent=False) + "\n")
        elif self.fmt == "json":
            self.out.write(("[\n" if self.first else ",\n") + to_json(doc, indent=False))
            self.first = False
        else:
            self.collected.append(doc)

    def raw(self, text: str) -> None:
        """One document already serialised (the fast path); -o json/jsonl only."""
        if self.fmt == "jsonl":
            self.out.write(text + "\n")
        else:
            self.out.write(("[\n" if self.first else ",\n") + text)
            self.first = False

    def line(self, text: str) -> None:
        self.out.write(text + "\n")

    def problem(self, file: Path, p: Any) -> None:
        self.problems += 1
        where = f"byte {p.position}"
        resumed = "" if p.resumed_at is None else f", resumed at byte {p.resumed_at}"
        note(f"kctl: {file}: {where}: {p.kind}: {p.reason}{resumed}")
        if self.fmt not in _TEXT_FORMATS:
            self.obj(
                {
                    "file": str(file),
                    "problem": p.kind,
                    "position": p.position,
                    "reason": p.reason,
                    "resumed_at": p.resumed_at,
                }
            )


def _parse_range(text: str | None) -> tuple[int, int] | None:
    from kctl.errors import UsageError

    if not text:
        return None
    lo, sep, hi = text.partition("..")
    try:
        return (
            (int(lo) if lo else 0, int(hi) if hi else 2**63 - 1)
            if sep
            else (
                int(text),
                int(text),
            )
        )
    except ValueError:
        raise UsageError(f"--offsets {text!r} is not FROM..TO", "e.g. 100..200 or 100..") from None


def _fmt_bytes(data: bytes | None, how: str) -> str | None:
    if data is None:
        return None
    if how == "hex":
        return data.hex()
    if how == "base64":
        return base64.b64encode(data).decode()
    return data.decode("utf-8", "replace")


def dump_segment(
    paths: list[Path] = typer.Argument(
        ..., help="Files or directories (log dir or partition dir)."
    ),
    deep_iteration: bool = typer.Option(
        False, "--deep-iteration", help="Every record of every batch, not only batch headers."
    ),
    print_data_log: bool = typer.Option(
        False, "--print-data-log", help="Keys and values too (implies --deep-iteration)."
    ),
    offsets_decoder: bool = typer.Option(
        False, "--offsets-decoder", help="Decode __consumer_offsets keys and values."
    ),
    transaction_log_decoder: bool = typer.Option(
        False, "--transaction-log-decoder", help="Decode __transaction_state keys and values."
    ),
    cluster_metadata_decoder: bool = typer.Option(
        False, "--cluster-metadata-decoder", help="Decode KRaft __cluster_metadata records."
    ),
    skip_record_metadata: bool = typer.Option(
        False, "--skip-record-metadata", help="With --print-data-log: keys and values only."
    ),
    max_bytes: int | None = typer.Option(
        None, "--max-bytes", help="Read at most this many bytes of each log file.", min=1
    ),
    offsets: str | None = typer.Option(
        None, "--offsets", help="Only batches/records in FROM..TO (inclusive).", metavar="FROM..TO"
    ),
    key_format: str = typer.Option("text", "--key-format", help="text|hex|base64"),
    value_format: str = typer.Option("text", "--value-format", help="text|hex|base64"),
    verify_index_only: bool = typer.Option(
        False, "--verify-index-only", help="Index files: report mismatches only, no entries."
    ),
    index_sanity_check: bool = typer.Option(
        False, "--index-sanity-check", help="Index files: only Kafka's sanity check."
    ),
    strict: bool = typer.Option(False, "--strict", help="Stop at the first problem."),
    file_type: str | None = typer.Option(
        None,
        "--type",
        help="Override the type found from the name: " + "|".join(FILE_TYPES),
    ),
) -> None:
    """Decode Kafka log segments, indexes, snapshots and checkpoints; summarise log dirs.
    Exit 3 when anything was invalid (each problem on stderr with file and byte position)."""
    from kctl import settings
    from kctl.errors import EXIT_FINDINGS, KctlError, UsageError

    for opt, value in (("--key-format", key_format), ("--value-format", value_format)):
        if value not in ("text", "hex", "base64"):
            raise UsageError(f"{opt} {value!r} is not one of text, hex, base64")
    if file_type is not None and file_type not in FILE_TYPES:
        raise UsageError(f"--type {file_type!r} is not one of {', '.join(FILE_TYPES)}")
    if sum((offsets_decoder, transaction_log_decoder, cluster_metadata_decoder)) > 1:
        raise UsageError(
            "choose one of --offsets-decoder, --transaction-log-decoder, --cluster-metadata-decoder"
        )
    for p in paths:
        if not p.exists():
            raise KctlError(f"cannot read {p}", "no such file or directory")
    fmt = settings.current().output
    ctx = _Ctx(
        fmt=fmt,
        out=sys.stdout,
        collected=[],
        deep=deep_iteration
        or print_data_log
        or offsets_decoder
        or transaction_log_decoder
        or cluster_metadata_decoder,
        data=print_data_log
        or offsets_decoder
        or transaction_log_decoder
        or cluster_metadata_decoder,
        decoder="offsets"
        if offsets_decoder
        else "txn"
        if transaction_log_decoder
        else "metadata"
        if cluster_metadata_decoder
        else None,
        skip_meta=skip_record_metadata,
        max_bytes=max_bytes,
        range=_parse_range(offsets),
        key_format=key_format,
        value_format=value_format,
        verify_only=verify_index_only,
        sanity_only=index_sanity_check,
        strict=strict,
        file_type=file_type,
    )
    try:
        for p in paths:
            if p.is_dir():
                _dump_dir(ctx, p)
            else:
                _dump_file(ctx, p)
            if ctx.strict and ctx.problems:
                break
    except BrokenPipeError:
        raise  # the reader of stdout left (`| head`): the CLI ends quietly
    except OSError as exc:
        raise KctlError(f"cannot read {exc.filename or ''}".strip(), exc.strerror) from None
    if fmt == "json":
        ctx.out.write("[]\n" if ctx.first else "\n]\n")
    elif fmt not in _TEXT_FORMATS and fmt != "jsonl":
        _emit_collected(ctx)
    if ctx.problems:
        ctx.out.flush()
        note(f"kctl: {ctx.problems} problem(s) found")
        raise typer.Exit(EXIT_FINDINGS)


def _emit_collected(ctx: _Ctx) -> None:
    from kctl.formatters import Output, cols, emit

    rows = ctx.collected
    keys: list[str] = []
    for row in rows:
        for k in row:
            if k not in keys and k != "file" and not isinstance(row[k], list | dict):
                keys.append(k)
    if "base_offset" in keys:  # batches: the columns that fit a terminal
        keys = [k for k in _BATCH_COLUMNS if k in keys] + [k for k in keys if k == "problem"]
    emit(Output(rows, cols(*keys), doc=rows))


_BATCH_COLUMNS = (
    "position",
    "base_offset",
    "last_offset",
    "count",
    "producer_id",
    "is_transactional",
    "is_control",
    "max_timestamp",
    "size",
    "codec",
    "is_valid",
)


# ---------------------------------------------------------------------------------------------


def _dump_dir(ctx: _Ctx, root: Path) -> None:
    from kctl import forensics

    dirs = forensics.partition_dirs(root)
    if not dirs:
        note(f"kctl: {root}: no partition directories with segments")
    for d in dirs:
        s = forensics.summarise_partition(d)
        for file, p in s.problems:
            ctx.problem(Path(file), p)
        if ctx.fmt in _TEXT_FORMATS:
            r = s.row()
            ctx.line(" ".join(f"{k}: {_text(v)}" for k, v in r.items()))
        else:
            ctx.obj(s.document())


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "none"
    if isinstance(v, list):
        return "[" + ",".join(str(x) for x in v) + "]"
    return str(v)


def _dump_file(ctx: _Ctx, path: Path) -> None:
    from kctl import forensics

    kind = ctx.file_type or forensics.detect_type(path)
    text = ctx.fmt in _TEXT_FORMATS
    if kind is None:
        note(f"Ignoring unknown file {path}")
        return
    if text:
        ctx.line(f"Dumping {path}")
    if kind in ("log", "kraft-snapshot"):
        _dump_log(ctx, path, kind)
    elif kind in ("index", "timeindex"):
        _dump_index(ctx, path, kind)
    else:
        _dump_small(ctx, path, kind)


def _batch_text(b: Any) -> str:
    if b.magic >= 2:
        horizon = (
            "OptionalLong.empty"
            if b.delete_horizon_ms is None
            else f"OptionalLong[{b.delete_horizon_ms}]"
        )
        head = (
            f"baseOffset: {b.base_offset} lastOffset: {b.last_offset} count: {b.count} "
            f"baseSequence: {b.base_sequence} lastSequence: {b.last_sequence} "
            f"producerId: {b.producer_id} producerEpoch: {b.producer_epoch} "
            f"partitionLeaderEpoch: {b.partition_leader_epoch} "
            f"isTransactional: {'true' if b.is_transactional else 'false'} "
            f"isControl: {'true' if b.is_control else 'false'} deleteHorizonMs: {horizon}"
        )
    else:
        head = f"offset: {b.last_offset}"
    return (
        f"{head} position: {b.position} {b.timestamp_type}: {b.max_timestamp} size: {b.size} "
        f"magic: {b.magic} compresscodec: {b.codec} crc: {b.crc} "
        f"isvalid: {'true' if b.is_valid else 'false'}"
    )


def _batch_doc(file: str, b: Any) -> dict[str, Any]:
    return {
        "file": file,
        "position": b.position,
        "base_offset": b.base_offset,
        "last_offset": b.last_offset,
        "count": b.count,
        "base_sequence": b.base_sequence,
        "last_sequence": b.last_sequence,
        "producer_id": b.producer_id,
        "producer_epoch": b.producer_epoch,
        "partition_leader_epoch": b.partition_leader_epoch,
        "is_transactional": b.is_transactional,
        "is_control": b.is_control,
        "delete_horizon_ms": b.delete_horizon_ms,
        "timestamp_type": b.timestamp_type,
        "first_timestamp": b.first_timestamp,
        "max_timestamp": b.max_timestamp,
        "size": b.size,
        "magic": b.magic,
        "codec": b.codec,
        "crc": b.crc,
        "is_valid": b.is_valid,
    }


def _decode_payload(ctx: _Ctx, b: Any, key: bytes | None, value: bytes | None) -> Any:
    """(decoded key and value) for the chosen decoder; raises ValueError on bad bytes."""
    from kctl.logfmt import internal, metadata

    if ctx.decoder == "offsets":
        return internal.decode_offsets_record(key, value)
    if ctx.decoder == "txn":
        return internal.decode_transaction_record(key, value)
    return {"key": None, "value": metadata.decode_metadata_record(value)}


def _dump_log(ctx: _Ctx, path: Path, kind: str) -> None:
    from kctl import forensics

    text = ctx.fmt in _TEXT_FORMATS
    if text:
        if kind == "log":
            ctx.line(f"Log starting offset: {forensics.base_offset_of(path)}")
        elif forensics.snapshot_id(path) is None:
            ctx.line("KRaft bootstrap snapshot")
        else:
            end_offset, epoch = forensics.snapshot_id(path)  # type: ignore[misc]
            ctx.line(f"Snapshot end offset: {end_offset}, epoch: {epoch}")
    lo, hi = ctx.range or (None, None)
    # The fast path: record metadata of ordinary magic-2 batches straight to JSON text.
    fast = ctx.deep and not ctx.data and lo is None and ctx.fmt in ("json", "jsonl")
    gaps = _Gaps() if ctx.deep and lo is None else None
    with forensics.mapped(path) as buf:
        try:
            _scan_log(ctx, path, buf, text, fast, gaps, lo, hi)
        finally:
            if gaps is not None:
                gaps.report(path)


class _Gaps:
    """DumpLogSegments' deep-iteration check: a record whose offset is not the previous record's
    plus one. Normal in compacted topics, so reported on stderr as Kafka does, not a problem."""

    LIMIT = 100

    def __init__(self) -> None:
        self.last = -1
        self.pairs: list[tuple[int, int]] = []
        self.count = 0

    def check(self, offsets: list[int]) -> None:
        import itertools

        if not offsets:
            return
        first = offsets[0]
        if self.last != -1 and first != self.last + 1:
            self._add(self.last, first)
        n = len(offsets)
        if offsets[-1] - first != n - 1 or offsets != list(range(first, first + n)):
            for a, b in itertools.pairwise(offsets):
                if b != a + 1:
                    self._add(a, b)
        self.last = offsets[-1]

    def _add(self, a: int, b: int) -> None:
        self.count += 1
        if len(self.pairs) < self.LIMIT:
            self.pairs.append((a, b))

    def report(self, path: Path) -> None:
        if not self.count:
            return
        note(f"Non-consecutive offsets in {path}")
        for a, b in self.pairs:
            note(f"  {a} is followed by {b}")
        if self.count > len(self.pairs):
            note(f"  ... and {self.count - len(self.pairs)} more")


_RELEASE_STEP = 64 << 20


def _scan_log(
    ctx: _Ctx,
    path: Path,
    buf: Any,
    text: bool,
    fast: bool,
    gaps: _Gaps | None,
    lo: int | None,
    hi: int | None,
) -> None:
    from kctl import forensics
    from kctl.formatters import to_json
    from kctl.logfmt import batch as B
    from kctl.logfmt.fast import records_json

    file = str(path)
    released = 0
    end = min(len(buf), ctx.max_bytes) if ctx.max_bytes else len(buf)
    mv = memoryview(buf) if len(buf) else buf
    try:
        for item in B.scan(buf, 0, end, resync=not ctx.strict, stop_at_partial=bool(ctx.max_bytes)):
            if isinstance(item, B.Problem):
                ctx.problem(path, item)
                if ctx.strict:
                    return
                continue
            b = item
            if b.position - released >= _RELEASE_STEP:  # keep memory flat in file size
                released = forensics.release(buf, released, b.position)
            if lo is not None and (b.last_offset < lo or b.base_offset > hi):
                continue
            if not ctx.deep:
                if text:
                    ctx.line(_batch_text(b))
                else:
                    ctx.obj(_batch_doc(file, b))
                continue
            if fast and b.magic == 2 and not b.is_control:
                try:
                    done = records_json(
                        B.v2_payload(mv, b),
                        b.base_offset,
                        b.first_timestamp or 0,
                        b.count or 0,
                        -1 if b.base_sequence is None else b.base_sequence,
                    )
                except ValueError:
                    done = None  # the general path below reports it
                if done is not None:
                    recs, offsets = done
                    ctx.raw(
                        to_json(_batch_doc(file, b), indent=False)[:-1]
                        + ',"records":['
                        + recs
                        + "]}"
                    )
                    if gaps is not None:
                        gaps.check(offsets)
                    continue
            try:
                data, rows = B.decode_records(mv, b)
            except ValueError as exc:
                if text:
                    ctx.line(_batch_text(b))
                else:
                    ctx.obj(_batch_doc(file, b))
                ctx.problem(path, B.Problem(b.position, "records", str(exc), b.next_position))
                if ctx.strict:
                    return
                continue
            if gaps is not None:
                gaps.check([r[0] for r in rows])
            if lo is not None:
                rows = [r for r in rows if lo <= r[0] <= hi]
            if text:
                _records_text(ctx, path, b, data, rows)
            else:
                _records_json(ctx, path, b, data, rows)
            if ctx.strict and ctx.problems:
                return
    finally:
        if mv is not buf:
            mv.release()


def _control_info(b: Any, data: Any, r: tuple[Any, ...]) -> dict[str, Any]:
    from kctl.logfmt import batch as B

    kp, kl, vp, vl = r[2], r[3], r[4], r[5]
    key = None if kl < 0 else bytes(data[kp : kp + kl])
    value = None if vl < 0 else bytes(data[vp : vp + vl])
    return B.control_record(key, value)


def _records_text(ctx: _Ctx, path: Path, b: Any, data: Any, rows: list[tuple[Any, ...]]) -> None:
    from kctl.formatters import to_json
    from kctl.logfmt.wire import DecodeError

    out: list[str] = [_batch_text(b)]
    ts_type = b.timestamp_type
    v2 = b.magic >= 2
    for r in rows:
        offset, ts, kp, kl, vp, vl, headers, seq = r[:8]
        parts = ["|"]
        if not ctx.skip_meta:
            parts.append(f"offset: {offset} {ts_type}: {ts} keySize: {kl} valueSize: {vl}")
            if v2:
                parts.append(f"sequence: {seq} headerKeys: [{','.join(h[0] for h in headers)}]")
            else:
                parts.append(f"isValid: {'true' if r[10] else 'false'} crc: {r[9]}")
            if b.is_control:
                try:
                    c = _control_info(b, data, r)
                    if "coordinator_epoch" in c:
                        parts.append(
                            f"endTxnMarker: {c['type']} coordinatorEpoch: {c['coordinator_epoch']}"
                        )
                    else:
                        parts.append(f"{c['type']} {to_json(c.get('data'), indent=False)}")
                except (DecodeError, ValueError) as exc:
                    ctx.problem(path, _rec_problem(b, offset, exc))
        if ctx.data and not b.is_control:
            key = None if kl < 0 else bytes(data[kp : kp + kl])
            value = None if vl < 0 else bytes(data[vp : vp + vl])
            if ctx.decoder:
                try:
                    d = _decode_payload(ctx, b, key, value)
                    if d["key"] is not None:
                        parts.append("key: " + to_json(d["key"], indent=False))
                    parts.append("payload: " + to_json(d["value"], indent=False))
                except (DecodeError, ValueError) as exc:
                    ctx.problem(path, _rec_problem(b, offset, exc))
            else:
                if key is not None:
                    parts.append(f"key: {_fmt_bytes(key, ctx.key_format)}")
                if value is not None:
                    parts.append(f"payload: {_fmt_bytes(value, ctx.value_format)}")
        out.append(" ".join(parts))
    ctx.out.write("\n".join(out) + "\n")


def _rec_problem(b: Any, offset: int, exc: Exception) -> Any:
    from kctl.logfmt import batch as B

    return B.Problem(b.position, "records", f"record at offset {offset}: {exc}", b.next_position)


def _records_json(ctx: _Ctx, path: Path, b: Any, data: Any, rows: list[tuple[Any, ...]]) -> None:
    from kctl.logfmt.wire import DecodeError

    doc = _batch_doc(str(path), b)
    recs = []
    v2 = b.magic >= 2
    for r in rows:
        offset, ts, kp, kl, vp, vl, headers, seq = r[:8]
        rec: dict[str, Any] = {}
        if not ctx.skip_meta:
            rec = {
                "offset": offset,
                "timestamp": ts,
                "key_size": kl,
                "value_size": vl,
                "sequence": seq,
                "header_keys": [h[0] for h in headers],
            }
            if not v2:
                rec["crc"] = r[9]
                rec["is_valid"] = r[10]
            if b.is_control:
                try:
                    rec["control"] = _control_info(b, data, r)
                except (DecodeError, ValueError) as exc:
                    ctx.problem(path, _rec_problem(b, offset, exc))
        if ctx.data and not b.is_control:
            key = None if kl < 0 else bytes(data[kp : kp + kl])
            value = None if vl < 0 else bytes(data[vp : vp + vl])
            if ctx.decoder:
                try:
                    d = _decode_payload(ctx, b, key, value)
                    rec["key"], rec["payload"] = d["key"], d["value"]
                except (DecodeError, ValueError) as exc:
                    ctx.problem(path, _rec_problem(b, offset, exc))
            else:
                rec["key"] = _fmt_bytes(key, ctx.key_format)
                rec["payload"] = _fmt_bytes(value, ctx.value_format)
                if headers:
                    rec["headers"] = {k: _fmt_bytes(v, ctx.value_format) for k, v in headers}
        recs.append(rec)
    doc["records"] = recs
    ctx.obj(doc)


def _dump_index(ctx: _Ctx, path: Path, kind: str) -> None:
    from kctl import forensics
    from kctl.logfmt import batch as B

    text = ctx.fmt in _TEXT_FORMATS
    check = (forensics.check_offset_index if kind == "index" else forensics.check_time_index)(
        path, verify=not ctx.sanity_only
    )
    if ctx.sanity_only:
        if check.sanity:
            for reason in check.sanity:
                ctx.problem(path, B.Problem(0, "index", f"sanity check failed: {reason}"))
        elif text:
            ctx.line(f"{path} passed sanity check.")
        else:
            ctx.obj({"file": str(path), "sanity_check": "passed"})
        return
    if not check.entries and text:
        ctx.line(f"{path} is empty.")
    if not check.log_found:
        note(f"kctl: {path}: no segment {path.name.split('.', 1)[0]}.log next to it, not verified")
    if not ctx.verify_only:
        for e in check.entries:
            if kind == "index":
                if text:
                    ctx.line(f"offset: {e.offset} position: {e.position}")
                else:
                    ctx.obj({"file": str(path), "offset": e.offset, "position": e.position})
            elif text:
                ctx.line(f"timestamp: {e.timestamp} offset: {e.offset}")
            else:
                ctx.obj({"file": str(path), "timestamp": e.timestamp, "offset": e.offset})
    for p in check.problems:
        ctx.problem(path, p)
    for idx_off, log_off in check.mismatches:
        ctx.problem(
            path,
            B.Problem(0, "index", f"Index offset: {idx_off}, log offset: {log_off}"),
        )
    for idx_off, log_off in check.not_found:
        ctx.problem(
            path,
            B.Problem(0, "index", f"Indexed offset: {idx_off}, found log offset: {log_off}"),
        )
    for idx_ts, log_ts in check.timestamp_mismatches:
        ctx.problem(
            path,
            B.Problem(0, "index", f"Index timestamp: {idx_ts}, log timestamp: {log_ts}"),
        )
    for idx_ts, prev in check.out_of_order:
        ctx.problem(
            path,
            B.Problem(
                0, "index", f"Index timestamp: {idx_ts}, Previously indexed timestamp: {prev}"
            ),
        )


def _dump_small(ctx: _Ctx, path: Path, kind: str) -> None:
    from kctl import forensics
    from kctl.logfmt import batch as B
    from kctl.logfmt import indexes as X
    from kctl.logfmt import snapshot as S
    from kctl.logfmt.wire import DecodeError

    text = ctx.fmt in _TEXT_FORMATS
    file = str(path)
    try:
        if kind == "txnindex":
            with forensics.mapped(path) as buf:
                for t in X.aborted_txns(buf):
                    if text:
                        ctx.line(
                            f"version: {t.version} producerId: {t.producer_id} "
                            f"firstOffset: {t.first_offset} lastOffset: {t.last_offset} "
                            f"lastStableOffset: {t.last_stable_offset}"
                        )
                    else:
                        ctx.obj({"file": file, **_asdict(t)})
                if len(buf) % 34:
                    raise DecodeError(f"size {len(buf)} is not a multiple of 34")
            return
        if kind == "producer-snapshot":
            with forensics.mapped(path) as buf:
                snap = S.producer_snapshot(buf)
            if not snap.crc_valid:
                ctx.problem(
                    path,
                    B.Problem(
                        2,
                        "crc",
                        f"Snapshot is corrupt (CRC is no longer valid). Stored crc: "
                        f"{snap.crc}. Computed crc: {snap.computed_crc}",
                    ),
                )
            for e in snap.entries:
                if text:
                    ctx.line(
                        f"producerId: {e.producer_id} producerEpoch: {e.producer_epoch} "
                        f"coordinatorEpoch: {e.coordinator_epoch} "
                        f"currentTxnFirstOffset: {e.current_txn_first_offset} "
                        f"lastTimestamp: {e.timestamp} firstSequence: {e.first_sequence} "
                        f"lastSequence: {e.last_sequence} lastOffset: {e.last_offset} "
                        f"offsetDelta: {e.offset_delta} timestamp: {e.timestamp}"
                    )
                else:
                    ctx.obj(
                        {
                            "file": file,
                            "snapshot_version": snap.version,
                            "crc": snap.crc,
                            "crc_valid": snap.crc_valid,
                            **_asdict(e),
                            "first_sequence": e.first_sequence,
                        }
                    )
            return
        content = path.read_text(encoding="utf-8", errors="replace")
        if kind == "leader-epoch-checkpoint":
            doc: dict[str, Any] = S.checkpoint(content, "leader-epoch")
        elif kind == "offset-checkpoint":
            doc = S.checkpoint(content, "offset")
        elif kind in ("partition-metadata", "meta-properties"):
            doc = S.properties(content)
        else:
            doc = S.quorum_state(content)
        if text:
            if "entries" in doc:
                ctx.line(f"version: {doc['version']} entries: {len(doc['entries'])}")
                for e in doc["entries"]:
                    ctx.line(" ".join(f"{k}: {v}" for k, v in e.items()))
            else:
                for k, v in doc.items():
                    ctx.line(f"{k}: {_text(v) if not isinstance(v, dict | list) else v}")
        else:
            ctx.obj({"file": file, "type": kind, **doc})
    except DecodeError as exc:
        ctx.problem(path, B.Problem(0, "file", str(exc)))


def _asdict(obj: Any) -> dict[str, Any]:
    return {name: getattr(obj, name) for name in obj.__slots__}
