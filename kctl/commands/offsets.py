"""kctl offsets: partition offsets (``get``, kafka-get-offsets.sh; in offsets_get.py) and one
__consumer_offsets record decoded (``decode``)."""

from __future__ import annotations

import typer

from kctl.commands._common import environment, example, output_view

app = typer.Typer(
    help="Partition offsets (get) and __consumer_offsets records (decode).", no_args_is_help=True
)


@app.command(
    "decode",
    epilog=example(
        "kctl offsets decode --key 000100086d792d67726f757000066f726465727300000000 "
        "--value 0003000000000000002a0000000000000000018bcfe56800",
        'kctl offsets decode --key "$(xxd -p -c0 k.bin)" -o json',
    ),
)
def decode(
    ctx: typer.Context,
    key: str = typer.Option(..., "--key", help="The record key, hex."),
    value: str | None = typer.Option(
        None, "--value", help="The record value, hex (omit for a tombstone)."
    ),
) -> None:
    """Decode one __consumer_offsets record: an offset commit or group metadata, with the
    consumer protocol's subscription and assignment inside."""
    from kctl.errors import KctlError, UsageError
    from kctl.formatters import Output, cell, cols, emit, to_json
    from kctl.logfmt import internal
    from kctl.logfmt.wire import DecodeError

    def unhex(opt: str, text: str) -> bytes:
        try:
            return bytes.fromhex(text.strip().removeprefix("0x"))
        except ValueError:
            raise UsageError(f"{opt} is not hexadecimal") from None

    raw_key = unhex("--key", key)
    raw_value = None if value is None else unhex("--value", value)
    try:
        doc = internal.decode_offsets_record(raw_key, raw_value)
    except (DecodeError, ValueError) as exc:
        raise KctlError("cannot decode the record", str(exc)) from None
    fmt = environment(ctx).output_format()
    if fmt in ("table", "plain", "csv"):
        k, v = doc["key"], doc["value"]
        rows = [{"field": f"key.{n}", "value": cell(x)} for n, x in k["data"].items()]
        rows.insert(0, {"field": "key.type", "value": f"{k['type']} v{k['version']}"})
        if v is None:
            rows.append({"field": "value", "value": "tombstone"})
        else:
            rows.append({"field": "value.type", "value": f"{v['type']} v{v['version']}"})
            for n, x in v["data"].items():
                shown = to_json(x, indent=False) if isinstance(x, list | dict) else cell(x)
                rows.append({"field": f"value.{n}", "value": shown})
        emit(Output(rows, cols("field", "value"), doc=doc), output_view(ctx))
    else:
        emit(Output([doc], cols("key", "value"), doc=doc), output_view(ctx))
