"""Schema Registry formats, pure: Confluent's wire format and the Avro, Protobuf and JSON Schema
codecs that turn a record's bytes into JSON data and back (docs/schemas.md). No I/O: schemas
come from a :class:`kctl.schemas.model.SchemaSource` (kctl.registry's HTTP client)."""
