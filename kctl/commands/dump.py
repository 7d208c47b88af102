"""kctl dump-segment: decode Kafka's on-disk files (kafka-dump-log.sh / DumpLogSegments)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from kctl.commands._common import environment, example, note, output_view
from kctl.logfmt import FILE_TYPES

EPILOG = example(
    "kctl dump-segment /var/lib/kafka/orders-0/00000000000000000000.log",
    "kctl dump-segment 00000000000000000000.log --deep-iteration --print-data-log -o jsonl",
    "kctl dump-segment __consumer_offsets-7/*.log --offsets-decoder --print-data-log",
    "kctl dump-segment /var/lib/kafka   # summarise every partition of a log dir",
    "kctl dump-segment orders-0/00000000000000000000.log --value-decoder schema-registry",
)


def _parse_range(text: str | None) -> tuple[int, int] | None:
    """``--offsets``: FROM..TO with either end open, or one offset; not checked for order (an
    empty range selects nothing)."""
    from kctl.parsing import offset_range

    if not text:
        return None
    return offset_range(
        text,
        "--offsets",
        form="FROM..TO",
        hint="e.g. 100..200 or 100..",
        open_ends=True,
        single=True,
        ordered=False,
    )


def dump_segment(
    ctx: typer.Context,
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
    share_group_state_decoder: bool = typer.Option(
        False, "--share-group-state-decoder", help="Decode __share_group_state keys and values."
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
    key_format: str = typer.Option("text", "--key-format", help="text (or string)|hex|base64"),
    value_format: str = typer.Option("text", "--value-format", help="text (or string)|hex|base64"),
    value_decoder: str | None = typer.Option(
        None,
        "--value-decoder",
        help="schema-registry (or avro|protobuf|json-schema): values decoded through the "
        "Schema Registry, printed as compact JSON (implies --print-data-log).",
    ),
    key_decoder: str | None = typer.Option(
        None,
        "--key-decoder",
        help="The same for keys (implies --print-data-log).",
    ),
    verify_index_only: bool = typer.Option(
        False, "--verify-index-only", help="Index files: report mismatches only, no entries."
    ),
    index_sanity_check: bool = typer.Option(
        False, "--index-sanity-check", help="Index files: only Kafka's sanity check."
    ),
    max_decompressed_bytes: int = typer.Option(
        256 << 20,
        "--max-decompressed-bytes",
        help="Most bytes one compressed batch may decompress to; more is reported as a problem.",
        min=1,
        max=(1 << 31) - 1,
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
    from kctl.dump import DumpOptions, dump
    from kctl.errors import EXIT_FINDINGS, KctlError, UsageError
    from kctl.formatters.dump import DumpWriter
    from kctl.parsing import payload_format

    # The one vocabulary of kctl.parsing ("text" and "string" alike); the writer says "text".
    shown = ("string", "hex", "base64")
    key_format = payload_format(key_format, "--key-format", shown).replace("string", "text")
    value_format = payload_format(value_format, "--value-format", shown).replace("string", "text")
    if file_type is not None and file_type not in FILE_TYPES:
        raise UsageError(f"--type {file_type!r} is not one of {', '.join(FILE_TYPES)}")
    chosen = (offsets_decoder, transaction_log_decoder, cluster_metadata_decoder)
    if sum((*chosen, share_group_state_decoder)) > 1:
        raise UsageError(
            "choose one of --offsets-decoder, --transaction-log-decoder, "
            "--cluster-metadata-decoder, --share-group-state-decoder"
        )
    typed = value_decoder is not None or key_decoder is not None
    if typed and sum((*chosen, share_group_state_decoder)):
        raise UsageError(
            "--key-decoder/--value-decoder and the internal topics' decoders exclude each other"
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
        else "share"
        if share_group_state_decoder
        else None
    )
    payload = _typed_payload(ctx, key_decoder, value_decoder) if typed else None
    out = DumpWriter(
        environment(ctx).output,
        sys.stdout,
        data=print_data_log or decoder is not None or typed,
        skip_meta=skip_record_metadata,
        key_format=key_format,
        value_format=value_format,
        view=output_view(ctx),
        typed=typed,
    )
    opts = DumpOptions(
        deep=deep_iteration or print_data_log or decoder is not None or typed,
        max_bytes=max_bytes,
        range=_parse_range(offsets),
        verify_only=verify_index_only,
        sanity_only=index_sanity_check,
        strict=strict,
        file_type=file_type,
        decoder=decoder,
        payload=payload,
        control=not skip_record_metadata,
        json_records=out.fmt in ("json", "jsonl") and not out.data,
        text_records=out.text and not out.data and not skip_record_metadata,
        raw_headers=out.text,
        max_decompressed=max_decompressed_bytes,
    )
    write = out.write
    try:
        for item in dump(paths, opts):
            write(item)
    except BrokenPipeError:
        raise  # the reader of stdout left (`| head`): the CLI ends quietly
    except OSError as exc:
        raise KctlError(f"cannot read {exc.filename or ''}".strip(), exc.strerror) from None
    out.finish()
    if out.problems:
        out.out.flush()
        note(f"kctl: {out.problems} problem(s) found")
        raise typer.Exit(EXIT_FINDINGS)
    if out.undecoded:
        out.out.flush()
        note(f"kctl: warning: {out.undecoded} record(s) could not be decoded")
        raise typer.Exit(EXIT_FINDINGS)


def _typed_payload(ctx: typer.Context, key_decoder: str | None, value_decoder: str | None) -> Any:
    """--key-decoder/--value-decoder: the Schema Registry decoders of keys and values (one
    registry client, its schemas cached for the run)."""
    from kctl.commands._common import schema_registry
    from kctl.dump.typed import typed_payload
    from kctl.errors import UsageError
    from kctl.schemas.codec import RecordDecoder
    from kctl.schemas.model import REGISTRY_FORMATS

    for option, name in (("--key-decoder", key_decoder), ("--value-decoder", value_decoder)):
        if name is not None and name not in REGISTRY_FORMATS:
            raise UsageError(
                f"unknown {option} {name!r}", f"expected one of {'|'.join(REGISTRY_FORMATS)}"
            )
    client = schema_registry(ctx)
    client.ping()  # before `Dumping FILE` goes to stdout: an unreachable registry prints nothing
    return typed_payload(
        RecordDecoder(client, key_decoder) if key_decoder else None,
        RecordDecoder(client, value_decoder) if value_decoder else None,
    )
