"""kctl dump-segment: decode Kafka's on-disk files (kafka-dump-log.sh / DumpLogSegments)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from kctl.commands._common import example, note
from kctl.logfmt import FILE_TYPES

if TYPE_CHECKING:
    from kctl.formatters.dump import DumpWriter

EPILOG = example(
    "kctl dump-segment /var/lib/kafka/orders-0/00000000000000000000.log",
    "kctl dump-segment 00000000000000000000.log --deep-iteration --print-data-log -o jsonl",
    "kctl dump-segment __consumer_offsets-7/*.log --offsets-decoder --print-data-log",
    "kctl dump-segment /var/lib/kafka   # summarise every partition of a log dir",
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
    from kctl.formatters.dump import DumpWriter

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
    decoder = (
        "offsets"
        if offsets_decoder
        else "txn"
        if transaction_log_decoder
        else "metadata"
        if cluster_metadata_decoder
        else None
    )
    out = DumpWriter(
        settings.current().output,
        sys.stdout,
        data=print_data_log or decoder is not None,
        skip_meta=skip_record_metadata,
        key_format=key_format,
        value_format=value_format,
        payload=_payload_decoder(decoder),
        control=_control_record,
    )
    opts = _Options(
        deep=deep_iteration or print_data_log or decoder is not None,
        max_bytes=max_bytes,
        range=_parse_range(offsets),
        verify_only=verify_index_only,
        sanity_only=index_sanity_check,
        strict=strict,
        file_type=file_type,
    )
    try:
        for p in paths:
            if p.is_dir():
                _dump_dir(out, p)
            else:
                _dump_file(out, opts, p)
            if opts.strict and out.problems:
                break
    except BrokenPipeError:
        raise  # the reader of stdout left (`| head`): the CLI ends quietly
    except OSError as exc:
        raise KctlError(f"cannot read {exc.filename or ''}".strip(), exc.strerror) from None
    out.finish()
    if out.problems:
        out.out.flush()
        note(f"kctl: {out.problems} problem(s) found")
        raise typer.Exit(EXIT_FINDINGS)


@dataclass(frozen=True, slots=True)
class _Options:
    """What to read of each file (what to show is the writer's)."""

    deep: bool
    max_bytes: int | None
    range: tuple[int, int] | None
    verify_only: bool
    sanity_only: bool
    strict: bool
    file_type: str | None


def _payload_decoder(decoder: str | None) -> Any:
    """(key, value) -> {"key", "value"} for the chosen record decoder; None for raw bytes."""
    if decoder is None:
        return None
    from kctl.logfmt import internal, metadata

    if decoder == "offsets":
        return internal.decode_offsets_record
    if decoder == "txn":
        return internal.decode_transaction_record
    return lambda key, value: {"key": None, "value": metadata.decode_metadata_record(value)}


def _control_record(key: bytes | None, value: bytes | None) -> dict[str, Any]:
    from kctl.logfmt import batch as B

    return B.control_record(key, value)


# ---------------------------------------------------------------------------------------------


def _dump_dir(out: DumpWriter, root: Path) -> None:
    from kctl import forensics

    dirs = forensics.partition_dirs(root)
    if not dirs:
        note(f"kctl: {root}: no partition directories with segments")
    for d in dirs:
        s = forensics.summarise_partition(d)
        for file, p in s.problems:
            out.problem(Path(file), p)
        out.partition(s)


def _dump_file(out: DumpWriter, opts: _Options, path: Path) -> None:
    from kctl import forensics

    kind = opts.file_type or forensics.detect_type(path)
    if kind is None:
        note(f"Ignoring unknown file {path}")
        return
    out.file_start(path)
    if kind in ("log", "kraft-snapshot"):
        _dump_log(out, opts, path, kind)
    elif kind in ("index", "timeindex"):
        _dump_index(out, opts, path, kind)
    else:
        _dump_small(out, path, kind)


def _dump_log(out: DumpWriter, opts: _Options, path: Path, kind: str) -> None:
    from kctl import forensics

    out.log_start(
        kind,
        forensics.base_offset_of(path) if kind == "log" else 0,
        forensics.snapshot_id(path) if kind != "log" else None,
    )
    lo, hi = opts.range or (None, None)
    # The fast path: record metadata of ordinary magic-2 batches straight to JSON text.
    fast = opts.deep and not out.data and lo is None and out.fmt in ("json", "jsonl")
    gaps = forensics.OffsetGaps() if opts.deep and lo is None else None
    with forensics.mapped(path) as buf:
        try:
            _scan_log(out, opts, path, buf, fast, gaps, lo, hi)
        finally:
            if gaps is not None:
                out.offset_gaps(path, gaps.pairs, gaps.count)


_RELEASE_STEP = 64 << 20


def _scan_log(
    out: DumpWriter,
    opts: _Options,
    path: Path,
    buf: Any,
    fast: bool,
    gaps: Any,
    lo: int | None,
    hi: int | None,
) -> None:
    """Every batch of the segment in ``buf`` (its memory map) to ``out``. Stretches of valid
    magic-2 batches are read in chunks (:func:`_stretch`) when the output allows; anything
    else (other magics, problems, --offsets, deep text) goes through :func:`B.scan`, which
    reports problems and resyncs; each hands over to the other where it stops."""
    from kctl import forensics
    from kctl.logfmt import batch as B

    end = min(len(buf), opts.max_bytes) if opts.max_bytes else len(buf)
    mv = memoryview(buf) if len(buf) else buf
    chunked = lo is None and (fast or not opts.deep)
    reader = forensics.ChunkReader(path) if chunked and end else None
    pos = 0
    magic: int | None = None  # of the last batch read, for B.scan's resync
    released = 0
    try:
        while pos < end:
            if reader is not None:
                pos, n = _stretch(out, opts, path, reader, mv, pos, end, fast, gaps)
                if n:
                    magic = 2
                if pos >= end or (out.problems and opts.strict):
                    return
            for item in B.scan(
                buf,
                pos,
                end,
                resync=not opts.strict,
                stop_at_partial=bool(opts.max_bytes),
                seen_magic=magic,
            ):
                if isinstance(item, B.Problem):
                    out.problem(path, item)
                    if opts.strict:
                        return
                    if item.resumed_at is None:
                        pos = end
                    continue
                b = item
                magic = b.magic
                pos = b.next_position
                if b.position - released >= _RELEASE_STEP:  # keep memory flat in file size
                    released = forensics.release(buf, released, b.position)
                if lo is not None and (b.last_offset < lo or b.base_offset > hi):
                    continue
                if _one_batch(out, opts, path, mv, b, fast, gaps, lo, hi):
                    return
                if reader is not None and b.is_valid and b.magic == 2:
                    break  # back to the chunked reader
            else:
                return
    finally:
        if reader is not None:
            reader.close()
        if mv is not buf:
            mv.release()


def _stretch(
    out: DumpWriter,
    opts: _Options,
    path: Path,
    reader: Any,
    mv: Any,
    pos: int,
    end: int,
    fast: bool,
    gaps: Any,
) -> tuple[int, int]:
    """The valid magic-2 batches from ``pos`` on, read in chunks: batch level straight to text
    lines (or batch objects), or deep through the fast JSON path. Returns (the position of the
    first thing it leaves to B.scan, or ``end``; how many batches it wrote)."""
    from kctl.logfmt import batch as B

    file = str(path)
    chunk = reader.CHUNK
    done = 0
    text = out.text
    while pos < end:
        data = reader.read(pos, min(chunk, end - pos))
        heads, stop, cut = B.v2_headers(data, 0, len(data))
        if heads:
            done += len(heads)
            if opts.deep:
                for rel, fields in heads:
                    if _fast_records(out, opts, path, file, data, mv, pos, rel, fields, gaps):
                        return pos + rel, done
            elif text:
                out.v2_lines(pos, heads)
            else:
                v2_batch = B.v2_batch
                for rel, fields in heads:
                    out.batch(file, v2_batch(pos + rel, fields, fields[4]))
        pos += stop
        if not cut or pos + cut > end:
            return pos, done  # something B.scan must report (or the end)
        chunk = max(chunk, cut)
    return pos, done


def _fast_records(
    out: DumpWriter,
    opts: _Options,
    path: Path,
    file: str,
    data: Any,
    mv: Any,
    base: int,
    rel: int,
    fields: tuple[Any, ...],
    gaps: Any,
) -> bool:
    """One valid magic-2 batch at ``base + rel`` under --deep-iteration -o json/jsonl: the
    fast path from the chunk ``data`` when it applies, else the general one. True: stop."""
    from kctl.logfmt import batch as B
    from kctl.logfmt.codecs import decompress
    from kctl.logfmt.fast import records_json

    b = B.v2_batch(base + rel, fields, fields[4])
    if not b.is_control:
        payload = data[rel + B.V2_HEADER : rel + b.size]
        try:
            codec = fields[5] & B.COMPRESSION_MASK
            done = records_json(
                decompress(codec, payload) if codec else payload,
                fields[0],
                fields[7],
                fields[12],
                fields[11],
            )
        except ValueError:
            done = None  # the general path reports it
        if done is not None:
            return _emit_decoded(out, file, b, done, gaps)
    return _one_batch(out, opts, path, mv, b, False, gaps, None, None)


def _emit_decoded(out: DumpWriter, file: str, b: Any, done: Any, gaps: Any) -> bool:
    """A batch whose records the fast path decoded: to ``out``, offsets to the gap check."""
    recs, offsets = done
    out.batch_with_records_json(file, b, recs)
    if gaps is not None:
        gaps.check(offsets)
    return False


def _one_batch(
    out: DumpWriter,
    opts: _Options,
    path: Path,
    mv: Any,
    b: Any,
    fast: bool,
    gaps: Any,
    lo: int | None,
    hi: int | None,
) -> bool:
    """One batch (from B.scan, positions in the file ``mv`` maps) to ``out``. True: stop
    (--strict and a problem)."""
    from kctl.logfmt import batch as B
    from kctl.logfmt.fast import records_json

    file = str(path)
    if not opts.deep:
        out.batch(file, b)
        return False
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
            return _emit_decoded(out, file, b, done, gaps)
    try:
        data, rows = B.decode_records(mv, b)
    except ValueError as exc:
        out.batch(file, b)
        out.problem(path, B.Problem(b.position, "records", str(exc), b.next_position))
        return opts.strict
    if gaps is not None:
        gaps.check([r[0] for r in rows])
    if lo is not None:
        rows = [r for r in rows if lo <= r[0] <= hi]
    out.records(path, b, data, rows)
    return bool(opts.strict and out.problems)


def _dump_index(out: DumpWriter, opts: _Options, path: Path, kind: str) -> None:
    from kctl import forensics
    from kctl.logfmt import batch as B

    check = (forensics.check_offset_index if kind == "index" else forensics.check_time_index)(
        path, verify=not opts.sanity_only
    )
    if opts.sanity_only:
        if check.sanity:
            for reason in check.sanity:
                out.problem(path, B.Problem(0, "index", f"sanity check failed: {reason}"))
        else:
            out.index_sanity_passed(path)
        return
    if not check.entries:
        out.index_empty(path)
    if not check.log_found:
        note(f"kctl: {path}: no segment {path.name.split('.', 1)[0]}.log next to it, not verified")
    if not opts.verify_only:
        entry = out.offset_index_entry if kind == "index" else out.time_index_entry
        for e in check.entries:
            entry(path, e)
    for p in check.problems:
        out.problem(path, p)
    for idx_off, log_off in check.mismatches:
        out.problem(
            path,
            B.Problem(0, "index", f"Index offset: {idx_off}, log offset: {log_off}"),
        )
    for idx_off, log_off in check.not_found:
        out.problem(
            path,
            B.Problem(0, "index", f"Indexed offset: {idx_off}, found log offset: {log_off}"),
        )
    for idx_ts, log_ts in check.timestamp_mismatches:
        out.problem(
            path,
            B.Problem(0, "index", f"Index timestamp: {idx_ts}, log timestamp: {log_ts}"),
        )
    for idx_ts, prev in check.out_of_order:
        out.problem(
            path,
            B.Problem(
                0, "index", f"Index timestamp: {idx_ts}, Previously indexed timestamp: {prev}"
            ),
        )


def _dump_small(out: DumpWriter, path: Path, kind: str) -> None:
    from kctl import forensics
    from kctl.logfmt import batch as B
    from kctl.logfmt import indexes as X
    from kctl.logfmt import snapshot as S
    from kctl.logfmt.wire import DecodeError

    file = str(path)
    try:
        if kind == "txnindex":
            with forensics.mapped(path) as buf:
                for t in X.aborted_txns(buf):
                    out.aborted_txn(file, t)
                if len(buf) % 34:
                    raise DecodeError(f"size {len(buf)} is not a multiple of 34")
            return
        if kind == "producer-snapshot":
            with forensics.mapped(path) as buf:
                snap = S.producer_snapshot(buf)
            if not snap.crc_valid:
                out.problem(
                    path,
                    B.Problem(
                        2,
                        "crc",
                        f"Snapshot is corrupt (CRC is no longer valid). Stored crc: "
                        f"{snap.crc}. Computed crc: {snap.computed_crc}",
                    ),
                )
            for e in snap.entries:
                out.producer_entry(file, snap, e)
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
        out.small_document(file, kind, doc)
    except DecodeError as exc:
        out.problem(path, B.Problem(0, "file", str(exc)))
