"""A minimal OpenID Connect provider on loopback for the Schema Registry's own basic auth.

Apicurio Registry 2.6's HTTP basic auth (``registry.auth.basic-auth-client-credentials``) is
its OIDC client-credentials flow: for each ``Authorization: Basic user:password`` it asks the
OIDC server's token endpoint for a token with ``grant_type=client_credentials`` (the user as
client id, the password as its secret) and admits the request when it gets one that Quarkus
OIDC validates (issuer, RS256 signature against the provider's JWKS, expiry). This serves just
that, as Keycloak does for a realm: discovery, the JWKS and the token endpoint, for the clients
given. Not part of kctl: the registry is real, this stands in for the identity server.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.parse
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

REALM = "kctl"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class OidcServer:
    """``OidcServer({"alice": "secret"})``: ``.start()``, ``.issuer`` (the realm's URL, Apicurio's
    ``quarkus.oidc.auth-server-url``), ``.token_endpoint``, ``.stop()``; ``.requests`` counts
    the token requests (granted, refused)."""

    def __init__(self, clients: dict[str, str]) -> None:
        self.clients = dict(clients)
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = uuid.uuid4().hex[:12]
        self.granted = 0
        self.refused = 0
        self.paths: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def issuer(self) -> str:
        return f"http://127.0.0.1:{self.port}/realms/{REALM}"

    @property
    def token_endpoint(self) -> str:
        return f"{self.issuer}/protocol/openid-connect/token"

    def start(self) -> OidcServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def discovery(self) -> dict[str, object]:
        base = f"{self.issuer}/protocol/openid-connect"
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{base}/auth",
            "token_endpoint": f"{base}/token",
            "jwks_uri": f"{base}/certs",
            "userinfo_endpoint": f"{base}/userinfo",
            "introspection_endpoint": f"{base}/token/introspect",
            "grant_types_supported": ["client_credentials"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
        }

    def jwks(self) -> dict[str, object]:
        numbers = self.key.public_key().public_numbers()

        def raw(n: int) -> bytes:
            return n.to_bytes((n.bit_length() + 7) // 8, "big")

        jwk = {"kty": "RSA", "kid": self.kid, "use": "sig", "alg": "RS256",
               "n": _b64(raw(numbers.n)), "e": _b64(raw(numbers.e))}  # fmt: skip
        return {"keys": [jwk]}

    def token(self, client_id: str) -> str:
        now = int(time.time())
        header = {"alg": "RS256", "typ": "JWT", "kid": self.kid}
        claims = {
            "iss": self.issuer,
            "sub": client_id,
            "aud": ["registry-api", "account"],
            "azp": client_id,
            "preferred_username": client_id,
            "iat": now,
            "exp": now + 300,
            "jti": uuid.uuid4().hex,
            "typ": "Bearer",
            "scope": "openid profile email",
        }
        signing = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
        signature = self.key.sign(signing.encode(), padding.PKCS1v15(), hashes.SHA256())
        return f"{signing}.{_b64(signature)}"

    def public_pem(self) -> bytes:
        return self.key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _json(self, status: int, doc: object) -> None:
                body = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                path = urllib.parse.urlsplit(self.path).path.rstrip("/")
                server.paths.append(f"GET {self.path}")
                if path == f"/realms/{REALM}/.well-known/openid-configuration":
                    self._json(200, server.discovery())
                elif path == f"/realms/{REALM}/protocol/openid-connect/certs":
                    self._json(200, server.jwks())
                else:
                    self._json(404, {"error": "not found"})

            def do_POST(self) -> None:
                path = urllib.parse.urlsplit(self.path).path.rstrip("/")
                server.paths.append(f"POST {self.path}")
                length = int(self.headers.get("Content-Length") or 0)
                form = urllib.parse.parse_qs(self.rfile.read(length).decode())
                if path != f"/realms/{REALM}/protocol/openid-connect/token":
                    self._json(404, {"error": "not found"})
                    return
                client = (form.get("client_id") or [""])[0]
                secret = (form.get("client_secret") or [""])[0]
                auth = self.headers.get("Authorization") or ""
                if auth.startswith("Basic "):
                    decoded = base64.b64decode(auth[6:]).decode()
                    client, _, secret = decoded.partition(":")
                grant = (form.get("grant_type") or [""])[0]
                if grant != "client_credentials" or server.clients.get(client) != secret:
                    server.refused += 1
                    self._json(401, {"error": "unauthorized_client",
                                     "error_description": "Invalid client credentials"})  # fmt: skip
                    return
                server.granted += 1
                self._json(200, {"access_token": server.token(client), "token_type": "Bearer",
                                 "expires_in": 300, "scope": "openid"})  # fmt: skip

        return Handler
