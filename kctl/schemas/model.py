"""What the codecs and the registry client share: a schema as a registry holds it, its
references, where schemas come from, and the errors of decoding and encoding one record."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kctl.errors import KctlError

# The registry's schemaType values (a schema without one is Avro).
AVRO, PROTOBUF, JSON = "AVRO", "PROTOBUF", "JSON"
SCHEMA_TYPES = (AVRO, PROTOBUF, JSON)

# --key-format/--value-format names of the registry formats; schema-registry takes the type
# from the schema the record's id names.
RECORD_FORMATS = {"avro": AVRO, "protobuf": PROTOBUF, "json-schema": JSON}
REGISTRY_FORMATS = (*RECORD_FORMATS, "schema-registry")


@dataclass(frozen=True)
class Reference:
    """A schema another one imports: ``name`` as the importing schema spells it (a .proto path,
    an Avro full name, a JSON Schema $ref), held by ``subject`` at ``version``."""

    name: str
    subject: str
    version: int


@dataclass(frozen=True)
class Schema:
    """A schema's text as the registry holds it, its type and its references."""

    schema_type: str  # AVRO | PROTOBUF | JSON
    text: str
    references: tuple[Reference, ...] = ()


@dataclass(frozen=True)
class RegisteredSchema:
    """A schema with its registry id (a content id on Apicurio: never dense) and, when it was
    looked up by subject, the subject and version."""

    id: int
    schema: Schema
    subject: str | None = None
    version: int | None = None


class SchemaSource(Protocol):
    """Where codecs get schemas: kctl.registry.client.RegistryClient (cached per run)."""

    def schema_by_id(self, schema_id: int) -> Schema: ...

    def subject_version(self, subject: str, version: int | None = None) -> RegisteredSchema:
        """``version`` None: the latest."""
        ...

    def register(self, subject: str, schema: Schema) -> int:
        """The id of ``schema`` under ``subject``, registering it when new."""
        ...


class SchemaError(KctlError):
    """A schema that cannot be used (does not parse, a missing reference). Exit code 1."""


class DecodeError(Exception):
    """One record's bytes do not decode (not the wire format, unknown id, do not fit the
    schema): the record is shown raw with this message; the stream goes on."""


class EncodeError(Exception):
    """One input value does not fit the schema: ``path`` names the field (``$.items[2].qty``),
    ``why`` says what is wrong."""

    def __init__(self, path: str, why: str) -> None:
        self.path = path
        self.why = why
        super().__init__(f"{path}: {why}")
