"""Connection profiles: a YAML file of named connections in the XDG config directory.

```yaml
current_profile: prod
profiles:
  prod:
    bootstrap_servers: kafka-1:9093,kafka-2:9093
    security_protocol: SASL_SSL          # PLAINTEXT | SSL | SASL_PLAINTEXT | SASL_SSL
    sasl: {mechanism: SCRAM-SHA-512, username: ops, password: env:KAFKA_PASSWORD}
    tls: {ca_file: /etc/kafka/ca.pem, cert_file: null, key_file: null, key_password: null,
          verify_hostname: true}
    client: {client.id: kctl-ops}        # librdkafka properties, applied last
```

Secrets are best stored as references, ``env:VAR`` or ``file:PATH``, resolved only when a client
is built; the file is written with mode 0600; :func:`masked` hides every secret for display.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kctl.errors import ConfigError, NotFoundError

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
SECRET_WORDS = ("password", "secret", "token", "jaas", "credential")
MASK = "********"


def config_path() -> Path:
    env = os.environ.get("KCTL_CONFIG")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "kctl" / "config.yaml"


@dataclass
class Sasl:
    mechanism: str = "PLAIN"
    username: str | None = None
    password: str | None = None


@dataclass
class Tls:
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    key_password: str | None = None
    verify_hostname: bool = True


@dataclass
class Profile:
    name: str
    bootstrap_servers: str | None = None
    security_protocol: str = "PLAINTEXT"
    sasl: Sasl | None = None
    tls: Tls | None = None
    client: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("name")
        return {k: v for k, v in data.items() if v not in (None, {})}


def is_secret_key(key: str) -> bool:
    return any(word in key.lower() for word in SECRET_WORDS)


def is_reference(value: str) -> bool:
    return value.startswith(("env:", "file:"))


def resolve_secret(value: str | None, where: str) -> str | None:
    """Turn ``env:VAR`` / ``file:PATH`` into the secret itself; literals pass through."""
    if value is None:
        return None
    if value.startswith("env:"):
        var = value[4:]
        if var not in os.environ:
            raise ConfigError(f"environment variable {var} is not set", f"referenced by {where}")
        return os.environ[var]
    if value.startswith("file:"):
        path = Path(value[5:]).expanduser()
        try:
            return path.read_text().strip()
        except OSError as exc:
            raise ConfigError(
                f"cannot read secret file {path}", f"{where}: {exc.strerror}"
            ) from exc
    return value


def _mask(value: Any) -> Any:
    if value is None:
        return None
    text = str(value)
    return text if is_reference(text) else MASK


def masked(profile: Profile) -> dict[str, Any]:
    """The profile as a dict, every secret hidden (references are shown: they are not secret)."""
    data = profile.to_dict()
    if "sasl" in data and data["sasl"].get("password") is not None:
        data["sasl"]["password"] = _mask(data["sasl"]["password"])
    if "tls" in data and data["tls"].get("key_password") is not None:
        data["tls"]["key_password"] = _mask(data["tls"]["key_password"])
    if "client" in data:
        data["client"] = {
            k: (_mask(v) if is_secret_key(k) else v) for k, v in data["client"].items()
        }
    return data


def _check_keys(data: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ConfigError(
            f"unknown key {unknown[0]!r} in {where}", f"allowed: {', '.join(sorted(allowed))}"
        )


def profile_from_dict(name: str, data: Any, where: str) -> Profile:
    if not isinstance(data, dict):
        raise ConfigError(f"profile {name!r} in {where} is not a mapping")
    _check_keys(
        data,
        {"bootstrap_servers", "security_protocol", "sasl", "tls", "client"},
        f"profile {name!r}",
    )
    proto = str(data.get("security_protocol") or "PLAINTEXT").upper()
    if proto not in SECURITY_PROTOCOLS:
        raise ConfigError(
            f"profile {name!r} has security_protocol {proto!r}",
            f"expected one of {', '.join(SECURITY_PROTOCOLS)}",
        )
    sasl = None
    if data.get("sasl") is not None:
        if not isinstance(data["sasl"], dict):
            raise ConfigError(f"profile {name!r}: sasl is not a mapping")
        _check_keys(data["sasl"], {"mechanism", "username", "password"}, f"profile {name!r} sasl")
        sasl = Sasl(**{k: (None if v is None else str(v)) for k, v in data["sasl"].items()})
        sasl.mechanism = (sasl.mechanism or "PLAIN").upper()
        if sasl.mechanism not in SASL_MECHANISMS:
            raise ConfigError(
                f"profile {name!r} has sasl mechanism {sasl.mechanism!r}",
                f"expected one of {', '.join(SASL_MECHANISMS)}",
            )
    tls = None
    if data.get("tls") is not None:
        if not isinstance(data["tls"], dict):
            raise ConfigError(f"profile {name!r}: tls is not a mapping")
        _check_keys(
            data["tls"],
            {"ca_file", "cert_file", "key_file", "key_password", "verify_hostname"},
            f"profile {name!r} tls",
        )
        tls = Tls(**data["tls"])
    client = data.get("client") or {}
    if not isinstance(client, dict):
        raise ConfigError(f"profile {name!r}: client is not a mapping of librdkafka properties")
    bootstrap = data.get("bootstrap_servers")
    if isinstance(bootstrap, list):
        bootstrap = ",".join(str(b) for b in bootstrap)
    return Profile(
        name=name,
        bootstrap_servers=None if bootstrap is None else str(bootstrap),
        security_protocol=proto,
        sasl=sasl,
        tls=tls,
        client={str(k): str(v) for k, v in client.items()},
    )


@dataclass
class ProfileFile:
    path: Path
    current: str | None = None
    profiles: dict[str, Profile] = field(default_factory=dict)

    def get(self, name: str) -> Profile:
        try:
            return self.profiles[name]
        except KeyError:
            known = ", ".join(sorted(self.profiles)) or "none defined"
            raise NotFoundError(
                f"unknown profile {name!r}", f"profiles in {self.path}: {known}"
            ) from None

    def save(self) -> None:
        import yaml

        doc = {
            "current_profile": self.current,
            "profiles": {name: p.to_dict() for name, p in sorted(self.profiles.items())},
        }
        text = yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.chmod(tmp, 0o600)
        os.replace(tmp, self.path)


def load(path: Path | None = None, *, must_exist: bool = False) -> ProfileFile:
    """Read the profile file; a missing file is an empty one unless ``must_exist``."""
    path = path or config_path()
    if not path.exists():
        if must_exist:
            raise ConfigError(
                f"profile file {path} does not exist", "add one with 'kctl profile add'"
            )
        return ProfileFile(path=path)
    import yaml

    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read profile file {path}", exc.strerror) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "parse error"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"corrupt profile file {path}", f"{where}: {problem}") from exc
    if data is None:
        return ProfileFile(path=path)
    if not isinstance(data, dict):
        raise ConfigError(f"corrupt profile file {path}", "expected a mapping at the top level")
    _check_keys(data, {"current_profile", "profiles"}, str(path))
    profiles_data = data.get("profiles") or {}
    if not isinstance(profiles_data, dict):
        raise ConfigError(f"corrupt profile file {path}", "'profiles' is not a mapping")
    profiles = {str(n): profile_from_dict(str(n), d, str(path)) for n, d in profiles_data.items()}
    current = data.get("current_profile")
    return ProfileFile(
        path=path, current=None if current is None else str(current), profiles=profiles
    )
