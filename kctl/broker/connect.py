"""The one place that turns global options, a profile, a ``--command-config`` file and ``-X``
overrides into client configurations: librdkafka's (confluent-kafka) and kafka-python's.

Precedence, lowest first: profile < command-config properties < ``-b`` / env < ``-X``.
"""

from __future__ import annotations

import logging
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kctl import config
from kctl.environment import Environment
from kctl.errors import ConfigError
from kctl.parsing import key_value

DEFAULT_BOOTSTRAP = "127.0.0.1:9092"

# Java client properties (kafka-*.sh --command-config) that librdkafka understands as they are.
_JAVA_PASSTHROUGH = {
    "client.id",
    "request.timeout.ms",
    "metadata.max.age.ms",
    "socket.connection.setup.timeout.ms",
    "reconnect.backoff.ms",
    "reconnect.backoff.max.ms",
    "retry.backoff.ms",
    "ssl.key.password",
    "ssl.keystore.location",
    "ssl.keystore.password",
    "ssl.endpoint.identification.algorithm",
    "ssl.cipher.suites",
    "sasl.kerberos.service.name",
    "sasl.oauthbearer.client.id",
    "sasl.oauthbearer.client.secret",
    "sasl.oauthbearer.scope",
    "sasl.oauthbearer.token.endpoint.url",
}
_JAAS_FIELD = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')


@dataclass
class Connection:
    """Everything needed to build a client, secrets already resolved."""

    bootstrap_servers: str
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: str | None = None
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    key_password: str | None = None
    verify_hostname: bool = True
    extra: dict[str, str] = field(default_factory=dict)  # librdkafka properties, applied last
    timeout: float = 15.0
    profile: str | None = None
    debug: bool = False

    def __repr__(self) -> str:
        """Every secret masked (``config.is_secret``): a repr may reach a log or a traceback."""
        fields = {k: v for k, v in vars(self).items() if k != "extra"}
        shown = ", ".join(f"{k}={config.mask_value(k, v)!r}" for k, v in fields.items())
        extra = {k: config.mask_value(k, v) for k, v in self.extra.items()}
        return f"Connection({shown}, extra={extra!r})"


def parse_properties(text: str, source: str) -> dict[str, str]:
    """A Java .properties file: ``key=value`` or ``key: value``, ``#``/``!`` comments,
    backslash line continuations."""
    props: dict[str, str] = {}
    logical: list[tuple[int, str]] = []
    buf, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip() if not buf else raw.lstrip()
        if not buf:
            start = number
            if not line or line[0] in "#!":
                continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            buf += line[:-1]
            continue
        logical.append((start, buf + line))
        buf = ""
    if buf:
        logical.append((start, buf))
    for number, line in logical:
        match = re.match(r"([^=:\s]+)\s*[=:]\s*(.*)$", line) or re.match(r"(\S+)\s+(.*)$", line)
        if not match:
            # Never echo the line: it may be a secret alone (a password on a line of its own).
            raise ConfigError(f"malformed line {number} in {source}", "expected key=value")
        props[match.group(1)] = match.group(2)
    return props


def parse_override(item: str, option: str = "-X") -> tuple[str, str]:
    """A ``-X key=value`` client override (or ``--consumer-property`` and the like, named by
    ``option`` in the error); a malformed one is not echoed: it may be a secret typed without
    its key."""
    return key_value(item, option, strip_key=True, secret=True)


def _apply_java_properties(conn: Connection, props: dict[str, str], source: str) -> None:
    for key, value in props.items():
        if key == "bootstrap.servers":
            conn.bootstrap_servers = value
        elif key == "security.protocol":
            conn.security_protocol = value.upper()
        elif key == "sasl.mechanism":
            conn.sasl_mechanism = value.upper()
        elif key == "sasl.jaas.config":
            fields = dict(_JAAS_FIELD.findall(value))
            if "username" in fields:
                conn.sasl_username = fields["username"]
            if "password" in fields:
                conn.sasl_password = fields["password"]
        elif key in ("ssl.truststore.location", "ssl.ca.location"):
            # Java's default truststore type is JKS: a location without a type is JKS, unless
            # its name says PEM.
            pem_name = value.lower().endswith((".pem", ".crt", ".cer"))
            kind = props.get("ssl.truststore.type", "PEM" if pem_name else "JKS").upper()
            if key == "ssl.truststore.location" and kind != "PEM":
                given = "" if "ssl.truststore.type" in props else " (no type given: Java's default)"
                raise ConfigError(
                    f"{source}: ssl.truststore.type {kind}{given} is not readable by librdkafka",
                    f"convert it to PEM (keytool -exportcert -rfc -keystore {value} -alias "
                    "ALIAS -file ca.pem) and set ssl.truststore.location=ca.pem with "
                    "ssl.truststore.type=PEM",
                )
            conn.ca_file = value
        elif key == "ssl.keystore.type" and value.upper() not in ("PKCS12", "PEM"):
            raise ConfigError(
                f"{source}: ssl.keystore.type {value.upper()} is not readable by librdkafka",
                "convert the keystore to PKCS12 or PEM",
            )
        elif key in ("ssl.truststore.type", "ssl.truststore.password", "ssl.keystore.type"):
            continue
        elif key in _JAVA_PASSTHROUGH:
            conn.extra[key] = value
        else:
            sys.stderr.write(
                f"kctl: warning: {source}: ignoring {key} (no librdkafka equivalent)\n"
            )


def resolve(s: Environment) -> Connection:
    """Build the :class:`Connection` that global options ``s``, the environment and the
    profile file describe (commands call this once, through ``commands._common.connection``)."""
    try:
        pfile: config.ProfileFile | None = config.load()
    except ConfigError as exc:
        # An explicit bootstrap without --profile needs no profile: a broken file is a warning.
        if s.profile or not s.bootstrap_servers:
            raise
        sys.stderr.write(
            f"kctl: warning: ignoring the profile file: {exc.line()}; "
            f"connecting to {s.bootstrap_servers} as given\n"
        )
        pfile = None
    name = s.profile or (pfile.current if pfile else None)
    profile = pfile.get(name) if pfile and name else None
    if s.profile and profile is None:  # pragma: no cover - get() raises first
        raise ConfigError(f"unknown profile {s.profile!r}")
    conn = Connection(bootstrap_servers="", timeout=s.timeout, debug=s.debug)
    if profile is not None:
        conn.profile = profile.name
        conn.bootstrap_servers = profile.bootstrap_servers or ""
        conn.security_protocol = profile.security_protocol
        where = f"profile {profile.name!r}"
        if profile.sasl:
            conn.sasl_mechanism = profile.sasl.mechanism
            conn.sasl_username = config.resolve_secret(
                profile.sasl.username, f"{where} sasl.username"
            )
            conn.sasl_password = config.resolve_secret(
                profile.sasl.password, f"{where} sasl.password"
            )
        if profile.tls:
            conn.ca_file = profile.tls.ca_file
            conn.cert_file = profile.tls.cert_file
            conn.key_file = profile.tls.key_file
            conn.key_password = config.resolve_secret(
                profile.tls.key_password, f"{where} tls.key_password"
            )
            conn.verify_hostname = bool(profile.tls.verify_hostname)
        for key, value in profile.client.items():
            conn.extra[key] = config.resolve_secret(value, f"{where} client.{key}") or ""
    if s.command_config:
        from kctl.inputs import PROPERTIES, decode, read_bytes

        path = Path(s.command_config).expanduser()
        raw = read_bytes(path, "--command-config", PROPERTIES, error=ConfigError)
        text = decode(raw, path, "--command-config")
        _apply_java_properties(conn, parse_properties(text, str(path)), str(path))
    if s.bootstrap_servers:
        conn.bootstrap_servers = s.bootstrap_servers
    for item in s.overrides:
        key, value = parse_override(item)
        conn.extra[key] = value
    if "bootstrap.servers" in conn.extra:
        conn.bootstrap_servers = conn.extra.pop("bootstrap.servers")
    conn.bootstrap_servers = conn.bootstrap_servers or DEFAULT_BOOTSTRAP
    if conn.security_protocol not in config.SECURITY_PROTOCOLS:
        raise ConfigError(
            f"unknown security protocol {conn.security_protocol!r}",
            f"expected one of {', '.join(config.SECURITY_PROTOCOLS)}",
        )
    return conn


def _quiet_logger(debug: bool) -> logging.Logger:
    """librdkafka writes its log to stderr unless given a logger: keep it for --debug only."""
    logger = logging.getLogger("kctl.librdkafka")
    logger.propagate = False
    if not logger.handlers:
        if debug:
            handler: logging.Handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(logging.Formatter("librdkafka: %(message)s"))
        else:
            handler = logging.NullHandler()
        logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if debug else logging.CRITICAL)
    return logger


def librdkafka_config(conn: Connection, **extra: Any) -> dict[str, Any]:
    """confluent-kafka (librdkafka) configuration; ``extra`` is what the command adds
    (group.id, callbacks, ...), the user's ``-X`` overrides still win over it."""
    cfg: dict[str, Any] = {
        "bootstrap.servers": conn.bootstrap_servers,
        "security.protocol": conn.security_protocol,
        "client.id": "kctl",
        "logger": _quiet_logger(conn.debug),
        "socket.connection.setup.timeout.ms": max(1000, int(conn.timeout * 1000)),
    }
    if conn.sasl_mechanism and conn.security_protocol.startswith("SASL"):
        cfg["sasl.mechanism"] = conn.sasl_mechanism
        if conn.sasl_mechanism != "OAUTHBEARER":
            if conn.sasl_username is not None:
                cfg["sasl.username"] = conn.sasl_username
            if conn.sasl_password is not None:
                cfg["sasl.password"] = conn.sasl_password
    if conn.security_protocol in ("SSL", "SASL_SSL"):
        for key, value in (
            ("ssl.ca.location", conn.ca_file),
            ("ssl.certificate.location", conn.cert_file),
            ("ssl.key.location", conn.key_file),
            ("ssl.key.password", conn.key_password),
        ):
            if value:
                cfg[key] = value
        if not conn.verify_hostname:
            cfg["ssl.endpoint.identification.algorithm"] = "none"
    cfg.update(extra)
    cfg.update(conn.extra)
    return cfg


_KP_MAP = {
    "client.id": "client_id",
    "request.timeout.ms": "request_timeout_ms",
    "ssl.ca.location": "ssl_cafile",
    "ssl.certificate.location": "ssl_certfile",
    "ssl.key.location": "ssl_keyfile",
    "ssl.key.password": "ssl_password",
    "sasl.username": "sasl_plain_username",
    "sasl.password": "sasl_plain_password",
    "sasl.mechanism": "sasl_mechanism",
    "security.protocol": "security_protocol",
}


def kafka_python_config(conn: Connection) -> dict[str, Any]:
    """kafka-python configuration for the protocol calls librdkafka lacks."""
    cfg: dict[str, Any] = {
        "bootstrap_servers": conn.bootstrap_servers.split(","),
        "security_protocol": conn.security_protocol,
        "client_id": "kctl",
        "request_timeout_ms": max(1000, int(conn.timeout * 1000)),
        "bootstrap_timeout_ms": max(1000, int(conn.timeout * 1000)),
    }
    if conn.security_protocol.startswith("SASL") and conn.sasl_mechanism:
        cfg["sasl_mechanism"] = conn.sasl_mechanism
        cfg["sasl_plain_username"] = conn.sasl_username
        cfg["sasl_plain_password"] = conn.sasl_password
    if conn.security_protocol in ("SSL", "SASL_SSL"):
        cfg["ssl_cafile"] = conn.ca_file
        cfg["ssl_certfile"] = conn.cert_file
        cfg["ssl_keyfile"] = conn.key_file
        cfg["ssl_password"] = conn.key_password
        cfg["ssl_check_hostname"] = conn.verify_hostname
    for key, value in conn.extra.items():
        if key in _KP_MAP:
            cfg[_KP_MAP[key]] = value
    if "request_timeout_ms" in cfg:
        cfg["request_timeout_ms"] = int(cfg["request_timeout_ms"])
    return cfg
