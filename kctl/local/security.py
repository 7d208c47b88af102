"""Security for the local Apache Kafka cluster (``kctl local up --security MODE``).

Modes: ``plaintext`` (no security, the default), ``sasl_plaintext`` and ``sasl_ssl`` (SCRAM-SHA-256
and SCRAM-SHA-512), ``ssl`` (TLS with client certificates required). Every secured mode turns on
Kafka's StandardAuthorizer with ``allow.everyone.if.no.acl.found=false``: only the super users
(the admin, and the brokers between themselves) may do anything until ACLs say otherwise.

What is made under the cluster's ``security/`` directory (mode 0700, files 0600):

- a CA (``ca.pem``, ``ca.key``) and certificates signed by it, made with ``openssl``: one for the
  brokers (``CN=kctl-broker``, names ``localhost`` and ``127.0.0.1``, PEM keystore ``broker.pem``
  = key then certificate) and one for the admin client (``CN=admin``: ``admin.pem``,
  ``admin.key``); no certificate is committed anywhere, each cluster gets new ones;
- the admin's SCRAM password (``admin.password``, random). Storage is formatted with the admin's
  SCRAM credentials as salted passwords (``--add-scram ...saltedpassword=...``), so the password
  itself is never on a command line.

The controller listener stays PLAINTEXT on loopback; controllers count its anonymous peers (the
brokers) as super users. The client listener is the only way in for clients.

Pure parts (properties, the SCRAM argument, the client profile) are separate from the side
effects (:func:`make_material`, which runs ``openssl`` and writes files).
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from kctl.errors import KctlError, UsageError

MODES = ("plaintext", "sasl_plaintext", "sasl_ssl", "ssl")
ADMIN = "admin"
BROKER_CN = "kctl-broker"
SCRAM_ITERATIONS = 8192
SUPER_USERS = (f"User:{ADMIN}", f"User:{BROKER_CN}")
# An ssl principal is the certificate's CN (Kafka's default is the whole distinguished name).
PRINCIPAL_RULES = "RULE:^CN=([^,]+).*$/$1/,DEFAULT"
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
DAYS = 825


def check_mode(mode: str) -> str:
    m = mode.lower().replace("-", "_")
    if m not in MODES:
        raise UsageError(f"unknown --security {mode!r}", "choose " + ", ".join(MODES))
    return m


def uses_sasl(mode: str) -> bool:
    return mode.startswith("sasl_")


def uses_tls(mode: str) -> bool:
    return mode in ("ssl", "sasl_ssl")


@dataclass(frozen=True)
class Material:
    """Paths of a secured cluster's files (see the module's docstring)."""

    directory: Path

    @property
    def ca(self) -> Path:
        return self.directory / "ca.pem"

    @property
    def ca_key(self) -> Path:
        return self.directory / "ca.key"

    @property
    def broker_keystore(self) -> Path:
        return self.directory / "broker.pem"

    @property
    def admin_cert(self) -> Path:
        return self.directory / "admin.pem"

    @property
    def admin_key(self) -> Path:
        return self.directory / "admin.key"

    @property
    def admin_password(self) -> Path:
        return self.directory / "admin.password"

    @property
    def token_secret(self) -> Path:
        return self.directory / "token.secret"

    def password(self) -> str:
        return self.admin_password.read_text().strip()


# --- pure: properties and arguments ---------------------------------------------------------


def listener_name(mode: str) -> str:
    return mode.upper()


def broker_properties(mode: str, m: Material, password: str) -> dict[str, str]:
    """server.properties of a broker in ``mode`` (over the plaintext defaults); empty for
    plaintext. ``password`` is the admin's, for the brokers' own SCRAM login to each other."""
    if mode == "plaintext":
        return {}
    name = listener_name(mode)
    prefix = f"listener.name.{name.lower()}"
    props = {
        "listener.security.protocol.map": f"{name}:{name},CONTROLLER:PLAINTEXT",
        "inter.broker.listener.name": name,
        "authorizer.class.name": AUTHORIZER,
        "super.users": ";".join(SUPER_USERS),
        "allow.everyone.if.no.acl.found": "false",
    }
    if uses_sasl(mode):
        jaas = (
            "org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="{ADMIN}" password="{password}";'
        )
        props["sasl.enabled.mechanisms"] = "SCRAM-SHA-256,SCRAM-SHA-512"
        # delegation tokens (kctl tokens): the key that signs them, the same on every node
        props["delegation.token.secret.key"] = m.token_secret.read_text().strip()
        props["sasl.mechanism.inter.broker.protocol"] = "SCRAM-SHA-512"
        props[f"{prefix}.scram-sha-256.sasl.jaas.config"] = jaas
        props[f"{prefix}.scram-sha-512.sasl.jaas.config"] = jaas
    if uses_tls(mode):
        props.update(
            {
                "ssl.keystore.type": "PEM",
                "ssl.keystore.location": str(m.broker_keystore),
                "ssl.truststore.type": "PEM",
                "ssl.truststore.location": str(m.ca),
                "ssl.client.auth": "required" if mode == "ssl" else "none",
                "ssl.principal.mapping.rules": PRINCIPAL_RULES,
                "ssl.endpoint.identification.algorithm": "https",
            }
        )
    return props


def controller_properties(mode: str, m: Material) -> dict[str, str]:
    """The controllers' share: the same authorizer (they answer CreateAcls and authorize what
    brokers forward); the brokers reach them as anonymous peers of the loopback controller
    listener, so that principal is a super user there (and only there)."""
    if mode == "plaintext":
        return {}
    props = {
        "authorizer.class.name": AUTHORIZER,
        "super.users": ";".join((*SUPER_USERS, "User:ANONYMOUS")),
        "allow.everyone.if.no.acl.found": "false",
    }
    if uses_sasl(mode):
        props["delegation.token.secret.key"] = m.token_secret.read_text().strip()
    return props


def salted_password(password: str, salt: bytes, mechanism: str, iterations: int) -> bytes:
    """SCRAM's SaltedPassword = Hi(password, salt, i) (RFC 5802): PBKDF2 with the mechanism's
    hash."""
    digest = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}[mechanism]
    return hashlib.pbkdf2_hmac(digest, password.encode(), salt, iterations)


def scram_format_args(user: str, password: str, salt: bytes) -> list[str]:
    """kafka-storage.sh format ``--add-scram`` arguments for ``user`` in both mechanisms, given
    as salt and salted password: no password on the command line."""
    args: list[str] = []
    for mech in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        salted = salted_password(password, salt, mech, SCRAM_ITERATIONS)
        spec = (
            f"{mech}=[name={user},iterations={SCRAM_ITERATIONS},"
            f'salt="{base64.b64encode(salt).decode()}",'
            f'saltedpassword="{base64.b64encode(salted).decode()}"]'
        )
        args += ["--add-scram", spec]
    return args


def admin_profile(mode: str, bootstrap: str, m: Material) -> dict[str, object]:
    """The profile (kctl's config file form) that connects as the admin: secrets as ``file:``
    references."""
    data: dict[str, object] = {
        "bootstrap_servers": bootstrap,
        "security_protocol": mode.upper(),
    }
    if uses_sasl(mode):
        data["sasl"] = {
            "mechanism": "SCRAM-SHA-512",
            "username": ADMIN,
            "password": f"file:{m.admin_password}",
        }
    if uses_tls(mode):
        tls: dict[str, object] = {"ca_file": str(m.ca), "verify_hostname": True}
        if mode == "ssl":
            tls["cert_file"] = str(m.admin_cert)
            tls["key_file"] = str(m.admin_key)
        data["tls"] = tls
    return data


def save_admin_profile(name: str, mode: str, bootstrap: str, m: Material) -> None:
    """The admin profile (:func:`admin_profile`) saved in kctl's config file as ``name``,
    replacing one of that name; the current profile only when there is none."""
    from kctl import config

    profile = config.profile_from_dict(name, admin_profile(mode, bootstrap, m), "the local cluster")
    with config.edit() as pfile:
        pfile.profiles[name] = profile
        if pfile.current is None:
            pfile.current = name


def librdkafka_admin(mode: str, m: Material) -> dict[str, str]:
    """librdkafka settings that connect as the admin (the cluster's own readiness checks)."""
    if mode == "plaintext":
        return {}
    cfg = {"security.protocol": mode.upper()}
    if uses_sasl(mode):
        cfg.update(
            {
                "sasl.mechanism": "SCRAM-SHA-512",
                "sasl.username": ADMIN,
                "sasl.password": m.password(),
            }
        )
    if uses_tls(mode):
        cfg["ssl.ca.location"] = str(m.ca)
        if mode == "ssl":
            cfg["ssl.certificate.location"] = str(m.admin_cert)
            cfg["ssl.key.location"] = str(m.admin_key)
    return cfg


# --- side effects: files and openssl ---------------------------------------------------------


def _openssl(args: list[str], cwd: Path) -> None:
    exe = shutil.which("openssl")
    if exe is None:
        raise KctlError(
            "openssl is not installed: it makes the local cluster's certificates",
            "install it (apt install openssl) or use --security plaintext / sasl_plaintext",
        )
    proc = subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        raise KctlError(f"openssl {args[0]} failed (exit code {proc.returncode})", last)


def make_ca(directory: Path, cn: str = "kctl local CA") -> tuple[Path, Path]:
    """A new CA in ``directory``: (ca.pem, ca.key)."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    cert, key = directory / "ca.pem", directory / "ca.key"
    _openssl(
        [
            "req", "-x509", "-new", "-nodes", "-newkey", "ec", "-pkeyopt",
            "ec_paramgen_curve:prime256v1", "-keyout", key.name, "-out", cert.name,
            "-days", str(DAYS), "-subj", f"/CN={cn}",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ],
        directory,
    )  # fmt: skip
    key.chmod(0o600)
    return cert, key


def issue(
    directory: Path, name: str, cn: str, ca: Path, ca_key: Path, hosts: tuple[str, ...] = ()
) -> tuple[Path, Path]:
    """A key and a certificate for ``cn`` signed by ``ca``, valid for server and client use:
    (NAME.pem, NAME.key), the key unencrypted PKCS#8 with mode 0600. ``hosts`` become the
    subject alternative names (IP addresses or DNS names)."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    cert, key, csr = directory / f"{name}.pem", directory / f"{name}.key", directory / f"{name}.csr"
    ext = directory / f"{name}.ext"
    sans = ",".join((f"IP:{h}" if h.replace(".", "").isdigit() else f"DNS:{h}") for h in hosts)
    lines = ["basicConstraints=CA:FALSE", "extendedKeyUsage=serverAuth,clientAuth"]
    if sans:
        lines.append(f"subjectAltName={sans}")
    ext.write_text("\n".join(lines) + "\n")
    _openssl(
        [
            "req", "-new", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-keyout", key.name, "-out", csr.name, "-subj", f"/CN={cn}",
        ],
        directory,
    )  # fmt: skip
    _openssl(
        [
            "x509", "-req", "-in", csr.name, "-CA", str(ca), "-CAkey", str(ca_key),
            "-set_serial", str(secrets.randbits(63)), "-days", str(DAYS),
            "-extfile", ext.name, "-out", cert.name,
        ],
        directory,
    )  # fmt: skip
    csr.unlink()
    ext.unlink()
    key.chmod(0o600)
    return cert, key


def make_material(directory: Path, mode: str) -> Material:
    """The secured cluster's files (see the module's docstring), new."""
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)
    m = Material(directory)
    for path in (m.admin_password, m.token_secret):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_urlsafe(24) + "\n")
    if uses_tls(mode):
        make_ca(directory)
        cert, key = issue(
            directory, "broker", BROKER_CN, m.ca, m.ca_key, ("localhost", "127.0.0.1")
        )
        keystore = key.read_text() + cert.read_text()  # cert is the keystore's own path
        fd = os.open(m.broker_keystore, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(keystore)
        m.broker_keystore.chmod(0o600)
        key.unlink()
        issue(directory, "admin", ADMIN, m.ca, m.ca_key)
    return m
