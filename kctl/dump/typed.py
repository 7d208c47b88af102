"""Record keys and values in a Schema Registry format, for ``dump-segment --value-decoder
schema-registry`` (and ``--key-decoder``): kafka-dump-log.sh's ``--value-decoder-class`` hook
with the codecs of :mod:`kctl.schemas` (pure: the schemas come from the SchemaSource the codecs
were given)."""

from __future__ import annotations

from typing import Any

from kctl.dump.segment import PayloadDecoder


def typed_payload(key_codec: Any | None, value_codec: Any | None) -> PayloadDecoder:
    """(key, value) -> a decoded entry (``"schema": True``): ``"key"``/``"value"`` hold the JSON
    data of what a codec (``kctl.schemas.codec.RecordDecoder``) decoded, with
    ``key_schema_id``/``value_schema_id`` and ``key_message``/``value_message``; what has no
    codec, is null or does not decode is absent (the writer shows it raw), a failure is told in
    ``"error"``. It never raises for bad bytes (the scan goes on); a registry that cannot be
    reached (a KctlError) ends the run."""
    from kctl.schemas.model import DecodeError

    def one(entry: dict[str, Any], what: str, codec: Any, data: bytes | None) -> None:
        if codec is None or data is None:
            return
        try:
            d = codec.decode(data)
        except DecodeError as exc:
            error = f"{what} could not be decoded ({exc})"
            entry["error"] = f"{entry['error']}; {error}" if "error" in entry else error
            return
        entry[what] = d.value
        entry[f"{what}_schema_id"] = d.schema_id
        if d.message is not None:
            entry[f"{what}_message"] = d.message

    def decode(key: bytes | None, value: bytes | None) -> dict[str, Any]:
        entry: dict[str, Any] = {"schema": True}
        one(entry, "key", key_codec, key)
        one(entry, "value", value_codec, value)
        return entry

    return decode
