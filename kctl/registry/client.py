"""A Confluent-compatible Schema Registry's REST API, as kctl uses it.

One ``RegistryClient`` per run: one kept-alive HTTP(S) connection (reopened when the server
closed it), schemas cached by id and by subject/version for the client's life, so a consume of a
million records asks the registry once per schema id, never once per record. Every failure is a
one-line ``KctlError`` naming the registry's URL. Stdlib only (http.client, ssl)."""

from __future__ import annotations

import base64
import http.client
import json
import socket
import ssl
import threading
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any

from kctl.errors import FindingsError, KctlError, NotFoundError, UsageError
from kctl.schemas.model import AVRO, SCHEMA_TYPES, Reference, RegisteredSchema, Schema

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
ACCEPT = "application/vnd.schemaregistry.v1+json, application/json"
LEVELS = (
    "BACKWARD",
    "BACKWARD_TRANSITIVE",
    "FORWARD",
    "FORWARD_TRANSITIVE",
    "FULL",
    "FULL_TRANSITIVE",
    "NONE",
)
# Confluent's error codes (the body's error_code).
SUBJECT_NOT_FOUND, VERSION_NOT_FOUND, SCHEMA_NOT_FOUND = 40401, 40402, 40403
_STALE = (
    http.client.RemoteDisconnected,
    BrokenPipeError,
    ConnectionResetError,
    ConnectionAbortedError,
    http.client.CannotSendRequest,
    http.client.BadStatusLine,
)


class RegistryError(KctlError):
    """The registry answered with an error (HTTP status and Confluent's error_code kept)."""

    def __init__(self, what: str, why: str | None = None, *, status: int = 0, code: int = 0,
                 message: str = "") -> None:  # fmt: skip
        self.status = status
        self.code = code
        self.message = message
        super().__init__(what, why)


class NoSuchPath(RegistryError):
    """HTTP 404 without a registry's error code: most likely no Confluent API at that URL."""


class RegistryNotFound(NotFoundError):
    """A subject, version or schema id the registry does not have."""

    def __init__(self, what: str, why: str | None = None, *, code: int = 0) -> None:
        self.code = code
        super().__init__(what, why)


class RegistryRefused(UsageError):
    """The registry refused a schema or a request (HTTP 422 and others): its message. The
    schema given is at fault, not the connection; exit 1 like any operation that failed."""

    exit_code = 1


class Incompatible(FindingsError):
    """HTTP 409: a schema incompatible with the subject's earlier versions (exit 3)."""


@dataclass(frozen=True)
class Compatibility:
    """A compatibility check's answer: compatible or not, with the registry's reasons."""

    compatible: bool
    messages: tuple[str, ...] = ()


def schema_from_json(doc: dict[str, Any]) -> Schema:
    """A Schema from a registry answer (``schemaType`` absent: Avro)."""
    refs = tuple(
        Reference(str(r.get("name", "")), str(r.get("subject", "")), int(r.get("version", 0)))
        for r in doc.get("references") or ()
    )
    kind = str(doc.get("schemaType") or AVRO).upper()
    return Schema(kind, str(doc.get("schema", "")), refs)


def schema_to_json(schema: Schema) -> dict[str, Any]:
    """The body the registry takes for a schema (register, lookup, compatibility)."""
    body: dict[str, Any] = {"schema": schema.text}
    if schema.schema_type != AVRO:
        body["schemaType"] = schema.schema_type
    if schema.references:
        body["references"] = [
            {"name": r.name, "subject": r.subject, "version": r.version} for r in schema.references
        ]
    return body


def quote(part: str | int) -> str:
    """A path segment: subjects may hold ``/``, spaces, ``:`` ..."""
    return urllib.parse.quote(str(part), safe="")


class RegistryClient:
    """A Schema Registry's Confluent API at ``url`` (its base: for Apicurio
    ``http://HOST:PORT/apis/ccompat/v7``). Implements kctl.schemas.model.SchemaSource."""

    def __init__(
        self,
        url: str,
        *,
        user_info: str | None = None,
        ca_file: str | None = None,
        cert_file: str | None = None,
        key_file: str | None = None,
        timeout: float = 15.0,
    ) -> None:
        parts = urllib.parse.urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(
                f"not a schema registry URL: {url!r}",
                "give http(s)://HOST:PORT[/path], e.g. http://127.0.0.1:8081",
            )
        if parts.username is not None and user_info is None:
            user_info = (
                urllib.parse.unquote(parts.username)
                + ":"
                + urllib.parse.unquote(parts.password or "")
            )
        host = parts.hostname
        netloc = f"[{host}]" if ":" in host else host
        if parts.port:
            netloc += f":{parts.port}"
        self.url = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))
        self._https = parts.scheme == "https"
        self._host = host
        self._port = parts.port or (443 if self._https else 80)
        self._base = parts.path.rstrip("/")
        self.timeout = timeout
        self._headers = {"Accept": ACCEPT, "User-Agent": "kctl"}
        if user_info:
            token = base64.b64encode(user_info.encode()).decode("ascii")
            self._headers["Authorization"] = f"Basic {token}"
        self._ssl: ssl.SSLContext | None = None
        if self._https:
            ctx = ssl.create_default_context(cafile=ca_file)
            if cert_file:
                ctx.load_cert_chain(cert_file, key_file)
            self._ssl = ctx
        elif ca_file or cert_file:
            raise UsageError(f"TLS files given for {self.url}", "the URL is http://, not https://")
        self._conn: http.client.HTTPConnection | None = None
        self._lock = threading.RLock()
        self._answered = False  # one successful answer: from then on GETs ride out restarts
        self._by_id: dict[int, Schema] = {}
        self._by_version: dict[tuple[str, int], RegisteredSchema] = {}
        self._latest: dict[str, RegisteredSchema] = {}
        self._registered: dict[tuple[str, Schema], int] = {}
        self.requests = 0  # HTTP requests sent (tests assert the caching)

    # -- SchemaSource ---------------------------------------------------------------------

    def schema_by_id(self, schema_id: int) -> Schema:
        """The schema with this id (cached for the client's life)."""
        schema_id = int(schema_id)
        cached = self._by_id.get(schema_id)
        if cached is not None:
            return cached
        doc = self._get(f"/schemas/ids/{schema_id}", schema_id=schema_id)
        schema = schema_from_json(doc)
        self._by_id[schema_id] = schema
        return schema

    def resolve(self, schema: Schema) -> Schema:
        """``schema`` with its ``latest`` references (version 0) as the version numbers the
        registry stores."""
        if all(r.version for r in schema.references):
            return schema
        from dataclasses import replace

        refs = tuple(
            r
            if r.version
            else Reference(r.name, r.subject, self.subject_version(r.subject).version or 0)
            for r in schema.references
        )
        return replace(schema, references=refs)

    def subject_version(self, subject: str, version: int | None = None) -> RegisteredSchema:
        """The schema ``subject`` holds at ``version`` (None: the latest)."""
        if version is None:
            cached = self._latest.get(subject)
        else:
            cached = self._by_version.get((subject, int(version)))
        if cached is not None:
            return cached
        which = "latest" if version is None else str(int(version))
        doc = self._get(
            f"/subjects/{quote(subject)}/versions/{which}", subject=subject, version=which
        )
        found = RegisteredSchema(
            int(doc["id"]),
            schema_from_json(doc),
            str(doc.get("subject", subject)),
            int(doc["version"]),
        )
        self._by_version[(subject, found.version or 0)] = found
        self._by_id.setdefault(found.id, found.schema)
        if version is None:
            self._latest[subject] = found
        return found

    def register(
        self,
        subject: str,
        schema: Schema,
        *,
        schema_id: int | None = None,
        version: int | None = None,
    ) -> int:
        """The id of ``schema`` under ``subject``, registering it when new (``schema_id`` and
        ``version``: explicit ones, which a registry accepts only in IMPORT mode)."""
        key = (subject, schema)
        if schema_id is None and key in self._registered:
            return self._registered[key]
        body = schema_to_json(schema)
        if schema_id is not None:
            body["id"] = int(schema_id)
        if version is not None:
            body["version"] = int(version)
        doc = self._call("POST", f"/subjects/{quote(subject)}/versions", body, subject=subject)
        new_id = int(doc["id"])
        self._registered[key] = new_id
        # Not cached by id: a registry may keep another text than the one given (Apicurio 3
        # answers Avro and JSON schemas in a compact form of its own).
        self._latest.pop(subject, None)
        return new_id

    def ping(self) -> None:
        """One small request (``GET /config``) to learn, before a command prints anything, that
        the registry answers: one that cannot be reached, refuses the credentials or is no
        Confluent API at that URL (a 404 without a registry's error) raises its one-line error;
        any registry answer will do (one that does not support ``/config`` answers too)."""
        try:
            self._get("/config")
        except (RegistryNotFound, RegistryRefused):
            return
        except RegistryError as exc:
            if exc.status in (401, 403) or isinstance(exc, NoSuchPath):
                raise

    # -- the rest of the API (kctl schemas) --------------------------------------------

    def subjects(self, *, deleted: bool = False) -> list[str]:
        """Every subject (``deleted``: soft-deleted ones too)."""
        query = "?deleted=true" if deleted else ""
        return [str(s) for s in self._get(f"/subjects{query}")]

    def versions(self, subject: str, *, deleted: bool = False) -> list[int]:
        """The versions ``subject`` holds, ascending."""
        query = "?deleted=true" if deleted else ""
        doc = self._get(f"/subjects/{quote(subject)}/versions{query}", subject=subject)
        return sorted(int(v) for v in doc)

    def lookup(self, subject: str, schema: Schema) -> RegisteredSchema:
        """The version of ``subject`` that holds ``schema`` (NotFoundError when none)."""
        doc = self._call(
            "POST", f"/subjects/{quote(subject)}", schema_to_json(schema), subject=subject,
            idempotent=True,
        )  # fmt: skip
        return RegisteredSchema(int(doc["id"]), schema_from_json({**schema_to_json(schema), **doc}),
                                str(doc.get("subject", subject)), int(doc["version"]))  # fmt: skip

    def subjects_of_id(self, schema_id: int) -> list[tuple[str, int]]:
        """The (subject, version) pairs that hold schema ``schema_id``."""
        doc = self._get(f"/schemas/ids/{int(schema_id)}/versions", schema_id=schema_id)
        return [(str(d["subject"]), int(d["version"])) for d in doc]

    def check(self, subject: str, schema: Schema, version: int | str = "latest") -> Compatibility:
        """Is ``schema`` compatible with ``subject`` at ``version`` (the subject's level)?"""
        doc = self._call(
            "POST",
            f"/compatibility/subjects/{quote(subject)}/versions/{quote(version)}?verbose=true",
            schema_to_json(schema),
            subject=subject,
            version=str(version),
            idempotent=True,
        )
        # Confluent: "messages" (a list); Apicurio: "reason" (a string or null).
        messages = doc.get("messages") or doc.get("reason") or []
        if isinstance(messages, str):
            messages = [messages]
        return Compatibility(bool(doc.get("is_compatible")), tuple(str(m) for m in messages))

    def delete_subject(self, subject: str, *, permanent: bool = False) -> list[int]:
        """Delete every version of ``subject`` (soft; ``permanent`` after a soft delete)."""
        query = "?permanent=true" if permanent else ""
        doc = self._call("DELETE", f"/subjects/{quote(subject)}{query}", subject=subject)
        self._forget(subject)
        return sorted(int(v) for v in doc or ())

    def delete_version(self, subject: str, version: int, *, permanent: bool = False) -> int:
        """Delete one version of ``subject``."""
        query = "?permanent=true" if permanent else ""
        doc = self._call(
            "DELETE", f"/subjects/{quote(subject)}/versions/{int(version)}{query}",
            subject=subject, version=str(version),
        )  # fmt: skip
        self._forget(subject)
        return int(doc)

    def compatibility(self, subject: str | None = None) -> str | None:
        """The compatibility level of ``subject`` (None when it sets none) or the global one."""
        if subject is None:
            doc = self._get("/config")
        else:
            try:
                doc = self._get(f"/config/{quote(subject)}", subject=subject)
            except RegistryNotFound:
                return None
        level = doc.get("compatibilityLevel") or doc.get("compatibility")
        return str(level) if level else None

    def set_compatibility(self, level: str, subject: str | None = None) -> str:
        """Set the compatibility level of ``subject`` or the global one; the level set."""
        path = "/config" if subject is None else f"/config/{quote(subject)}"
        try:
            doc = self._call("PUT", path, {"compatibility": level}, subject=subject)
        except (RegistryError, RegistryNotFound) as exc:
            # Apicurio 2.6 sets NONE by deleting its COMPATIBILITY rule, and answers 404 "No
            # rule named 'COMPATIBILITY'" when there is none: the level is NONE already.
            if level == "NONE" and "no rule named" in exc.line().lower():
                return level
            raise
        return str(doc.get("compatibility") or doc.get("compatibilityLevel") or level)

    def mode(self) -> str:
        """The registry's global mode (READWRITE, READONLY, IMPORT)."""
        return str(self._get("/mode").get("mode", ""))

    def set_mode(self, mode: str) -> str:
        doc = self._call("PUT", "/mode", {"mode": mode})
        return str(doc.get("mode", mode))

    def _forget(self, subject: str) -> None:
        self._latest.pop(subject, None)
        for version_key in [k for k in self._by_version if k[0] == subject]:
            del self._by_version[version_key]
        for schema_key in [k for k in self._registered if k[0] == subject]:
            del self._registered[schema_key]

    # -- HTTP ------------------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> RegistryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _get(self, path: str, **about: Any) -> Any:
        return self._call("GET", path, None, idempotent=True, **about)

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            if self._https:
                self._conn = http.client.HTTPSConnection(
                    self._host, self._port, timeout=self.timeout, context=self._ssl
                )
            else:
                self._conn = http.client.HTTPConnection(
                    self._host, self._port, timeout=self.timeout
                )
        return self._conn

    def _send(self, method: str, path: str, payload: bytes | None) -> tuple[int, bytes, str]:
        headers = dict(self._headers)
        if payload is not None:
            headers["Content-Type"] = CONTENT_TYPE
        for attempt in (0, 1):
            reused = self._conn is not None
            conn = self._connection()
            try:
                conn.request(method, self._base + path, body=payload, headers=headers)
                response = conn.getresponse()
                body = response.read()
                if response.will_close:
                    self.close()
                self.requests += 1
                return response.status, body, response.getheader("Content-Type") or ""
            except _STALE:
                self.close()
                if reused and attempt == 0:
                    continue  # the server closed the kept-alive connection: once more, fresh
                raise
            except BaseException:
                self.close()
                raise
        raise AssertionError("unreachable")

    def _call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        idempotent: bool = False,
        subject: str | None = None,
        version: str | None = None,
        schema_id: int | None = None,
    ) -> Any:
        payload = None if body is None else json.dumps(body).encode()
        deadline = time.monotonic() + self.timeout
        delay = 0.1
        with self._lock:
            while True:
                try:
                    status, raw, kind = self._send(method, path, payload)
                    break
                except (OSError, http.client.HTTPException) as exc:
                    retry = idempotent and self._answered and not isinstance(exc, ssl.SSLError)
                    if retry and time.monotonic() + delay < deadline:
                        time.sleep(delay)
                        delay = min(delay * 2, 1.0)
                        continue
                    raise self._unreachable(exc) from None
        self._answered = True
        return self._answer(method, path, status, raw, kind, subject, version, schema_id)

    def _unreachable(self, exc: BaseException) -> KctlError:
        if isinstance(exc, (socket.timeout, TimeoutError)):
            return KctlError(
                f"the schema registry at {self.url} did not answer",
                f"timed out after {self.timeout:g}s",
            )
        if isinstance(exc, ssl.SSLCertVerificationError):
            return KctlError(
                f"TLS with the schema registry at {self.url} failed",
                f"its certificate: {exc.verify_message or exc.reason}",
            )
        if isinstance(exc, ssl.SSLError):
            return KctlError(
                f"TLS with the schema registry at {self.url} failed",
                getattr(exc, "reason", None) or str(exc),
            )
        why = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        return KctlError(f"cannot reach the schema registry at {self.url}", why)

    def _answer(
        self,
        method: str,
        path: str,
        status: int,
        raw: bytes,
        kind: str,
        subject: str | None,
        version: str | None,
        schema_id: int | None,
    ) -> Any:
        try:
            doc = json.loads(raw) if raw.strip() else None
        except ValueError:
            doc = _NOT_JSON
        if 200 <= status < 300:
            if doc is _NOT_JSON:
                raise KctlError(
                    f"the schema registry at {self.url} answered {method} {path.split('?')[0]} "
                    f"with {kind.split(';')[0] or 'something'} that is not JSON",
                    "is the URL the base of the Confluent-compatible API? on Apicurio it ends "
                    "in /apis/ccompat/v7",
                )
            return doc
        code, message = 0, ""
        if isinstance(doc, dict):
            try:
                code = int(doc.get("error_code") or 0)
            except (TypeError, ValueError):
                code = 0
            message = str(doc.get("message") or doc.get("detail") or doc.get("error") or "")
        elif doc is _NOT_JSON or doc is None:
            if status == 404:
                raise KctlError(
                    f"the schema registry at {self.url} answered {method} {path.split('?')[0]} "
                    "with HTTP 404 and no registry error",
                    "is the URL the base of the Confluent-compatible API? on Apicurio it ends "
                    "in /apis/ccompat/v7",
                )
            text = raw.decode("utf-8", "replace").strip()
            message = " ".join(text.split())[:200]
        detail = f"HTTP {status}" + (f": {message}" if message else "")
        if status in (401, 403):
            raise RegistryError(
                f"the schema registry at {self.url} denied {method} {path.split('?')[0]}",
                detail, status=status, code=code, message=message,
            )  # fmt: skip
        if status == 404 and code == 0 and message and "resource" not in message.lower():
            raise RegistryError(  # Apicurio: {"error_code": 0, "message": "Operation not ...}
                f"the schema registry at {self.url} does not support {method} "
                f"{path.split('?')[0]}",
                detail, status=status, code=code, message=message,
            )  # fmt: skip
        if status == 404 and not 40400 <= code < 40500:
            raise NoSuchPath(
                f"the schema registry at {self.url} has no {method} {path.split('?')[0]}",
                f"{detail}; is the URL the base of the Confluent-compatible API? on Apicurio "
                "it ends in /apis/ccompat/v7", status=status, code=code, message=message,
            )  # fmt: skip
        if status == 404 or code in (SUBJECT_NOT_FOUND, VERSION_NOT_FOUND, SCHEMA_NOT_FOUND):
            if code == SCHEMA_NOT_FOUND or (schema_id is not None and subject is None):
                what = f"schema id {schema_id}" if schema_id is not None else "schema"
            elif code == VERSION_NOT_FOUND and subject is not None:
                what = f"version {version} of subject {subject!r}"
            elif subject is not None:
                what = f"subject {subject!r}"
            else:
                what = "what was asked"
            raise RegistryNotFound(f"{what} not found in the schema registry at {self.url}",
                                   detail, code=code)  # fmt: skip
        if status == 409:
            raise Incompatible(
                f"the schema registry at {self.url} refused the schema as incompatible"
                + (f" with subject {subject!r}" if subject else ""),
                detail,
            )
        if status == 422 or 400 <= status < 500:
            raise RegistryRefused(
                f"the schema registry at {self.url} refused {method} {path.split('?')[0]}",
                detail,
            )
        raise RegistryError(
            f"the schema registry at {self.url} failed {method} {path.split('?')[0]}",
            detail, status=status, code=code, message=message,
        )  # fmt: skip


_NOT_JSON = object()


def schema_type(name: str) -> str:
    """AVRO/PROTOBUF/JSON from a user's spelling (avro, protobuf, proto, json, json-schema)."""
    key = name.strip().upper().replace("-", "_")
    key = {"PROTO": "PROTOBUF", "JSON_SCHEMA": "JSON", "JSONSCHEMA": "JSON"}.get(key, key)
    if key not in SCHEMA_TYPES:
        raise UsageError(f"unknown schema type {name!r}", "give avro, protobuf or json")
    return key
