"""kctl.registry.client.RegistryClient against a real Schema Registry (the session's Apicurio,
or KCTL_TEST_SCHEMA_REGISTRY): schemas by id and subject/version, registering, the cache (one
HTTP request per schema, never per record), error lines naming the URL, and GETs riding out a
registry restart."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest
from conftest import unique
from schema_support import DATA, apicurio_3

from kctl.errors import KctlError, NotFoundError
from kctl.registry.client import (
    Incompatible,
    RegistryClient,
    RegistryRefused,
    quote,
    schema_from_json,
    schema_to_json,
)
from kctl.schemas.model import AVRO, JSON, PROTOBUF, Reference, Schema


def avro(name: str, *fields: tuple[str, str]) -> Schema:
    doc = {
        "type": "record",
        "name": name,
        "namespace": "kctl.test",
        "fields": [{"name": n, "type": t} for n, t in fields],
    }
    return Schema(AVRO, json.dumps(doc))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def client(schema_registry: str) -> RegistryClient:
    return RegistryClient(schema_registry)


def test_schema_json_forms() -> None:
    s = schema_from_json(
        {"schema": "{}", "references": [{"name": "a", "subject": "b", "version": 2}]}
    )
    assert s == Schema(AVRO, "{}", (Reference("a", "b", 2),))
    assert schema_to_json(s) == {
        "schema": "{}",
        "references": [{"name": "a", "subject": "b", "version": 2}],
    }
    assert schema_to_json(Schema(PROTOBUF, "x")) == {"schema": "x", "schemaType": "PROTOBUF"}
    assert schema_from_json({"schema": "{}", "schemaType": "JSON"}).schema_type == JSON
    assert quote("a/b c:1") == "a%2Fb%20c%3A1"


def test_register_then_read_by_id_and_version(client: RegistryClient) -> None:
    subject = unique("client-avro")
    first = avro("A", ("x", "int"))
    id1 = client.register(subject, first)
    assert client.register(subject, first) == id1  # the same schema: the same id
    found = client.subject_version(subject)
    assert (found.id, found.subject, found.version) == (id1, subject, 1)
    assert found.schema.schema_type == AVRO and json.loads(found.schema.text) == json.loads(
        first.text
    )
    assert client.schema_by_id(id1).text == found.schema.text
    second = avro("A", ("x", "int"), ("y", "string"))
    id2 = client.register(subject, second)
    assert id2 != id1  # content ids: never assumed dense, only distinct
    assert client.subject_version(subject).version == 2  # latest is not cached across register
    assert client.subject_version(subject, 1).id == id1
    assert client.versions(subject) == [1, 2]
    assert subject in client.subjects()


def test_protobuf_with_a_reference_and_json_schema(client: RegistryClient) -> None:
    common = unique("client-common")
    cid = client.register(common, Schema(PROTOBUF, (DATA / "common.proto").read_text()))
    order = Schema(
        PROTOBUF, (DATA / "order.proto").read_text(), (Reference("common.proto", common, 1),)
    )
    subject = unique("client-order")
    oid = client.register(subject, order)
    got = RegistryClient(client.url).schema_by_id(oid)
    assert got.schema_type == PROTOBUF
    assert got.references == (Reference("common.proto", common, 1),)
    assert "message Order" in got.text
    assert RegistryClient(client.url).schema_by_id(cid).schema_type == PROTOBUF
    js = Schema(JSON, json.dumps({"type": "object", "properties": {"a": {"type": "integer"}}}))
    jid = client.register(unique("client-json"), js)
    assert RegistryClient(client.url).schema_by_id(jid).schema_type == JSON


def test_cached_one_request_per_schema(client: RegistryClient) -> None:
    subject = unique("client-cache")
    sid = client.register(subject, avro("C", ("x", "long")))
    fresh = RegistryClient(client.url)
    for _ in range(1000):
        fresh.schema_by_id(sid)
        fresh.subject_version(subject, 1)
    assert fresh.requests == 2
    fresh.subject_version(subject)
    fresh.subject_version(subject)
    assert fresh.requests == 3


def test_kept_alive_connection_survives_the_server_closing_it(client: RegistryClient) -> None:
    subject = unique("client-alive")
    sid = client.register(subject, avro("K", ("x", "int")))
    assert client._conn is not None
    client._conn.sock.close()  # as if the server had dropped the idle connection
    assert client.subject_version(subject).id == sid


def test_not_found_errors_name_what_and_the_url(client: RegistryClient) -> None:
    subject = unique("client-missing")
    with pytest.raises(NotFoundError) as e:
        client.subject_version(subject)
    assert f"subject {subject!r} not found" in e.value.line() and client.url in e.value.line()
    client.register(subject, avro("M", ("x", "int")))
    with pytest.raises(NotFoundError) as e:
        client.subject_version(subject, 9)
    assert f"version 9 of subject {subject!r}" in e.value.line()
    with pytest.raises(NotFoundError) as e:
        client.schema_by_id(2_000_000_000)
    assert "schema id 2000000000 not found" in e.value.line()


def test_invalid_and_incompatible_schemas(
    client: RegistryClient, registry_version: str | None
) -> None:
    """The registry's reasons with the answer; Apicurio 3 gives none (its Confluent API drops
    the rule's causes, verbose or not)."""
    subject = unique("client-bad")
    with pytest.raises(RegistryRefused) as e:
        client.register(subject, Schema(AVRO, '{"type": "recor"}'))
    assert e.value.exit_code == 1 and "HTTP 422" in e.value.line() and "\n" not in e.value.line()
    client.register(subject, avro("B", ("x", "int")))
    client.set_compatibility("BACKWARD", subject)
    answer = client.check(subject, avro("B", ("y", "int")))
    assert not answer.compatible
    if apicurio_3(registry_version):
        assert answer.messages == ()
    else:
        assert answer.messages and "y" in answer.messages[0]
    assert client.check(subject, avro("B", ("x", "int"), ("z", "int"))).compatible is False
    with pytest.raises(Incompatible) as ex:
        client.register(subject, avro("B", ("y", "int")))
    assert ex.value.exit_code == 3 and "incompatible" in ex.value.line()


def test_unreachable_is_one_line_at_once() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/apis/ccompat/v7"
    started = time.monotonic()
    with pytest.raises(KctlError) as e:
        RegistryClient(url, timeout=5).schema_by_id(1)
    assert time.monotonic() - started < 2  # the first contact does not retry
    assert e.value.line() == f"cannot reach the schema registry at {url} (Connection refused)"


def test_wrong_base_url_says_so(schema_registry: str) -> None:
    root = schema_registry.split("/apis/")[0]
    if root == schema_registry:
        pytest.skip("not an Apicurio URL")
    with pytest.raises(KctlError) as e:
        RegistryClient(root).subjects()
    assert "/apis/ccompat/v7" in e.value.line() and root in e.value.line()


def test_user_info_in_the_url_is_not_shown(schema_registry: str) -> None:
    with_auth = schema_registry.replace("http://", "http://alice:s3cret@")
    c = RegistryClient(with_auth)
    assert "s3cret" not in c.url and c._headers["Authorization"].startswith("Basic ")
    c.subjects()  # Apicurio without auth ignores the header


def test_ping_answers_or_says_why_in_one_line(client: RegistryClient) -> None:
    """What dump-segment asks before it prints anything: any registry answer will do."""
    client.ping()
    assert client.requests == 1
    gone = RegistryClient("http://127.0.0.1:9/apis/ccompat/v7")
    with pytest.raises(KctlError) as e:
        gone.ping()
    assert e.value.line() == (
        "cannot reach the schema registry at http://127.0.0.1:9/apis/ccompat/v7 "
        "(Connection refused)"
    )
    root = client.url.removesuffix("/apis/ccompat/v7")  # Apicurio's root: not the Confluent API
    with pytest.raises(KctlError) as e:
        RegistryClient(root).ping()
    assert "is the URL the base of the Confluent-compatible API?" in e.value.line()


def test_bad_url_is_a_usage_error() -> None:
    with pytest.raises(KctlError) as e:
        RegistryClient("127.0.0.1:8081")
    assert e.value.exit_code == 2


def test_gets_ride_out_a_registry_restart(tmp_path: Path) -> None:
    """A registry that goes away and comes back while a client is in use (a long consume):
    an idempotent GET retries until it answers again, within the client's timeout."""
    import threading

    from kctl.local import registry

    state = tmp_path / "state"
    port = registry.free_port()
    info = registry.start(state, port=port)
    try:
        c = RegistryClient(info.url, timeout=60)
        subject = unique("client-restart")
        c.register(subject, avro("R", ("x", "int")))
        registry.stop(state)
        assert not registry.ready(port)
        # In memory: after the restart the subject is gone, but the GET is answered (404).
        restarter = threading.Thread(target=registry.start, args=(state,), kwargs={"port": port})
        restarter.start()
        with pytest.raises(NotFoundError):
            c.subject_version(unique("client-restart-after"))
        restarter.join()
        assert c.requests >= 2
    finally:
        registry.stop(state)


def _openssl(*args: str, cwd: Path) -> None:
    import subprocess

    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.parametrize("version", ["2.6.13.Final", "3.3.3"])
def test_https_with_a_ca_file(tmp_path: Path, version: str) -> None:
    """A real registry over TLS (Apicurio 2.6 and 3.3 with Quarkus' HTTPS port and a
    certificate from a test CA): the client verifies it against ``ca_file``, and without it
    says why, one line. (Client certificates are not tested: Apicurio 2.6's build fixes
    quarkus.http.ssl.client-auth to NONE.)"""
    import shutil

    from kctl.local import registry

    if shutil.which("openssl") is None:
        pytest.skip("no openssl to make the test certificates")
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
             "ca.pem", "-days", "2", "-subj", "/CN=kctl test CA", cwd=tmp_path)  # fmt: skip
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out",
             "server.csr", "-subj", "/CN=127.0.0.1", cwd=tmp_path)  # fmt: skip
    (tmp_path / "ext").write_text("subjectAltName=IP:127.0.0.1\n")
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext",
             cwd=tmp_path)  # fmt: skip
    state = tmp_path / "state"
    tls_port = registry.free_port()
    registry.start(
        state,
        port=registry.free_port(),
        version=version,
        extra_properties={
            "quarkus.http.ssl-port": str(tls_port),
            "quarkus.http.ssl.certificate.files": str(tmp_path / "server.pem"),
            "quarkus.http.ssl.certificate.key-files": str(tmp_path / "server.key"),
        },
    )
    try:
        deadline = time.monotonic() + 30  # the HTTPS port may open after /health/ready on HTTP
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", tls_port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        url = f"https://127.0.0.1:{tls_port}/apis/ccompat/v7"
        c = RegistryClient(url, ca_file=str(tmp_path / "ca.pem"))
        subject = unique("client-tls")
        sid = c.register(subject, avro("T", ("x", "int")))
        assert c.subject_version(subject).id == sid
        with pytest.raises(KctlError) as e:
            RegistryClient(url).subjects()
        assert e.value.line().startswith(f"TLS with the schema registry at {url} failed")
        assert "certificate" in e.value.line()
    finally:
        registry.stop(state)
