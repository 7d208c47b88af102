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
    schema_registry:                     # a Confluent-compatible Schema Registry
      url: https://registry:8081         # for Apicurio: http://HOST:PORT/apis/ccompat/v7
      basic_auth_user_info: env:SR_AUTH  # user:password (a secret)
      ca_file: /etc/kafka/ca.pem         # cert_file, key_file: a client certificate
```

Secrets are best stored as references, ``env:VAR`` or ``file:PATH``, resolved only when a client
is built; :func:`masked` hides every secret for display, and :func:`is_secret` is the one test of
what is secret, shared by every output and error path.

The file is changed only through :func:`edit`: an exclusive ``flock`` on ``config.yaml.lock`` in the
same directory is held around the whole read-modify-write, the new content goes to a uniquely
named temporary file (``O_EXCL``, mode 0600) in the directory of the real file, is fsynced and
renamed over it, and the directory is fsynced. A symlinked ``config.yaml`` is written through (its
target is replaced, the link stays). As ssh does with keys, a file or directory that another user
owns or that group or others may write is refused (:func:`check_safe`).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kctl.errors import ConfigError, NotFoundError

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
# A property is secret when its lower-cased name contains one of these: passwords of every kind
# (sasl.password, ssl.key.password, ssl.keystore.password, ssl.truststore.password, Java's
# sasl_plain_password/ssl_password), secrets (sasl.oauthbearer.client.secret), tokens, JAAS
# configurations (sasl.jaas.config), private keys (ssl.key.pem, Java's ssl.keystore.key,
# sasl.oauthbearer.assertion.private.key.*) and librdkafka's sasl.oauthbearer.config.
SECRET_WORDS = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "jaas",
    "credential",
    "private",
    "key.pem",
    "keystore.key",
    "oauthbearer.config",
)
# Names that contain a secret word but hold no secret (an address).
NOT_SECRET = frozenset({"sasl.oauthbearer.token.endpoint.url"})
# Values that are secret whatever the property is called: a PEM private key, a JAAS login.
_SECRET_VALUE_MARKS = ("PRIVATE KEY-----", "LoginModule")
MASK = "********"
LOCK_SUFFIX = ".lock"


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
class SchemaRegistry:
    """A profile's Schema Registry: the base URL of its Confluent API, ``user:password`` for
    HTTP basic auth (a secret: literal, ``env:VAR`` or ``file:PATH``) and TLS files."""

    url: str
    basic_auth_user_info: str | None = None
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None


SCHEMA_REGISTRY_KEYS = frozenset(
    {"url", "basic_auth_user_info", "ca_file", "cert_file", "key_file"}
)


@dataclass
class Profile:
    name: str
    bootstrap_servers: str | None = None
    security_protocol: str = "PLAINTEXT"
    sasl: Sasl | None = None
    tls: Tls | None = None
    client: dict[str, str] = field(default_factory=dict)
    schema_registry: SchemaRegistry | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("name")
        if data.get("schema_registry"):
            data["schema_registry"] = {
                k: v for k, v in data["schema_registry"].items() if v is not None
            }
        return {k: v for k, v in data.items() if v not in (None, {})}


def is_secret_key(key: str) -> bool:
    """The property ``key`` holds a secret (see :data:`SECRET_WORDS`)."""
    name = key.lower()
    return name not in NOT_SECRET and any(word in name for word in SECRET_WORDS)


def is_secret(key: str, value: Any = None) -> bool:
    """``key`` names a secret, or ``value`` is one by its kind (a PEM private key, a JAAS
    configuration) whatever it is called."""
    if is_secret_key(key):
        return True
    return isinstance(value, str) and any(mark in value for mark in _SECRET_VALUE_MARKS)


def mask_value(key: str, value: Any) -> Any:
    """``value`` as it may be shown: a secret becomes ``********`` (references stay)."""
    return _mask(value) if is_secret(key, value) else value


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
        from kctl.inputs import SECRET, read_input

        return read_input(value[5:], f"secret file of {where}", SECRET, error=ConfigError).strip()
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
        data["client"] = {k: mask_value(k, v) for k, v in data["client"].items()}
    if "schema_registry" in data:
        registry = {k: v for k, v in data["schema_registry"].items() if v is not None}
        if registry.get("basic_auth_user_info") is not None:
            registry["basic_auth_user_info"] = _mask(registry["basic_auth_user_info"])
        if registry.get("url"):
            registry["url"] = mask_url(registry["url"])
        data["schema_registry"] = registry
    return data


def mask_url(url: str) -> str:
    """``https://user:password@host/...`` with the password masked."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    info, at, host = parts.netloc.rpartition("@")
    if not at or ":" not in info:
        return url
    user = info.split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}:{MASK}@{host}"))


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
        {"bootstrap_servers", "security_protocol", "sasl", "tls", "client", "schema_registry"},
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
        raw = {k: (None if v is None else str(v)) for k, v in data["sasl"].items()}
        sasl = Sasl(
            mechanism=(raw.get("mechanism") or "PLAIN").upper(),
            username=raw.get("username"),
            password=raw.get("password"),
        )
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
    registry = None
    if data.get("schema_registry") is not None:
        registry = schema_registry_from_dict(data["schema_registry"], f"profile {name!r}")
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
        schema_registry=registry,
    )


def schema_registry_from_dict(data: Any, where: str) -> SchemaRegistry:
    """A ``schema_registry:`` block: a mapping with ``url`` and the optional
    ``basic_auth_user_info``, ``ca_file``, ``cert_file``, ``key_file``; unknown keys refused."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: schema_registry is not a mapping", "give at least its url")
    _check_keys(data, set(SCHEMA_REGISTRY_KEYS), f"{where} schema_registry")
    raw = {k: (None if v is None else str(v)) for k, v in data.items()}
    url = (raw.get("url") or "").strip()
    if not url:
        raise ConfigError(f"{where}: schema_registry has no url", "such as http://127.0.0.1:8081")
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"{where}: schema_registry.url {url!r} is not an http:// or https:// URL")
    return SchemaRegistry(
        url=url,
        basic_auth_user_info=raw.get("basic_auth_user_info"),
        ca_file=raw.get("ca_file"),
        cert_file=raw.get("cert_file"),
        key_file=raw.get("key_file"),
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
        """Write the file atomically (see :func:`write_atomic`). To change it, use
        :func:`edit`, which holds the lock from the read to this write."""
        import yaml

        doc = {
            "current_profile": self.current,
            "profiles": {name: p.to_dict() for name, p in sorted(self.profiles.items())},
        }
        text = yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)
        write_atomic(self.path, text)


def _who(uid: int) -> str:
    import pwd

    try:
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        return f"uid {uid}"


def _me() -> str:
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return str(os.getuid())


def _owned_safely(uid: int) -> bool:
    """Ours, or root's (as ssh accepts)."""
    return uid in (os.getuid(), 0)


def _check_stat(path: Path | str, st: os.stat_result, kind: str) -> None:
    if not _owned_safely(st.st_uid):
        raise ConfigError(
            f"unsafe {kind} {path}: it is owned by {_who(st.st_uid)}, not by you",
            f"fix: chown {_me()} {path}, or set KCTL_CONFIG to a file of yours",
        )
    writable = st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    if writable:
        who = {
            stat.S_IWGRP: "its group",
            stat.S_IWOTH: "all users",
            stat.S_IWGRP | stat.S_IWOTH: "its group and all users",
        }[writable]
        shared = stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX  # /tmp and the like
        raise ConfigError(
            f"unsafe {kind} {path}: mode {stat.S_IMODE(st.st_mode):04o} lets {who} write it",
            "fix: set KCTL_CONFIG to a file in a private directory"
            if shared
            else f"fix: chmod go-w {path}",
        )


def check_safe(path: Path) -> None:
    """Refuse, as ssh does with keys, a profile file or directory that another user owns or
    that group or others may write, and a symlinked file whose link another user owns (the
    current user and root are trusted owners). A symlink of ours is followed: its target and
    the target's directory are checked the same way."""
    directory = path.parent
    try:
        _check_stat(directory, os.stat(directory), "profile directory")
        lst = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ConfigError(f"cannot read profile file {path}", exc.strerror) from exc
    if stat.S_ISLNK(lst.st_mode):
        if not _owned_safely(lst.st_uid):
            raise ConfigError(
                f"unsafe profile file {path}: it is a symlink owned by {_who(lst.st_uid)}, "
                "not by you",
                f"fix: remove it (rm {path}) or set KCTL_CONFIG to a file of yours",
            )
        real = Path(os.path.realpath(path))
        try:
            _check_stat(real.parent, os.stat(real.parent), "profile directory")
            st = os.stat(real)
        except FileNotFoundError:
            return  # a dangling link of ours: written through on save
        except OSError as exc:
            raise ConfigError(f"cannot read profile file {path}", exc.strerror) from exc
        _check_regular(path, st)
        _check_stat(real, st, "profile file")
        return
    _check_regular(path, lst)
    _check_stat(path, lst, "profile file")


def _check_regular(path: Path, st: os.stat_result) -> None:
    """A profile file that is a directory, a FIFO or a device is named as such (not judged
    by its mode: /tmp is "a directory", not "unsafe, mode 1777")."""
    if not stat.S_ISREG(st.st_mode):
        from kctl.inputs import require_regular

        require_regular(path, "profile file", ConfigError)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, text: str) -> None:
    """Replace the content of ``path`` (a symlink's target, the link kept) with ``text``: a
    new file of a unique name created with ``O_EXCL`` and mode 0600 in the same directory,
    fsynced, renamed over the old one, then the directory fsynced."""
    import tempfile

    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    directory = target.parent
    try:
        # mkstemp: O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600, a random name never reused
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise ConfigError(f"cannot write profile file {path}", exc.strerror) from exc
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fchmod(fh.fileno(), 0o600)
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise ConfigError(f"cannot write profile file {path}", exc.strerror) from exc
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(directory)


@contextlib.contextmanager
def edit(path: Path | None = None, *, must_exist: bool = False) -> Iterator[ProfileFile]:
    """Read-modify-write the profile file under an exclusive lock: the lock
    (``fcntl.flock`` on ``<file>.lock`` beside the file) is taken before the read and released
    after the write, so concurrent kctl processes never lose each other's changes. The file is
    saved when the block ends without an exception."""
    import fcntl

    path = path or config_path()
    if must_exist and not path.exists():
        load(path, must_exist=True)  # raises the usual error
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create {path.parent}", exc.strerror) from exc
    check_safe(path)
    lock_path = path.with_name(path.name + LOCK_SUFFIX)
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise ConfigError(f"cannot open lock file {lock_path}", exc.strerror) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        pfile = load(path, must_exist=must_exist)
        yield pfile
        pfile.save()
    finally:
        os.close(fd)  # releases the lock


def load(path: Path | None = None, *, must_exist: bool = False) -> ProfileFile:
    """Read the profile file; a missing file is an empty one unless ``must_exist``."""
    path = path or config_path()
    check_safe(path)
    if not path.exists():
        if must_exist:
            raise ConfigError(
                f"profile file {path} does not exist", "add one with 'kctl profile add'"
            )
        return ProfileFile(path=path)
    import yaml

    from kctl.inputs import PROFILES, read_input

    text = read_input(path, "profile file", PROFILES, error=ConfigError)
    try:
        data = yaml.safe_load(text)
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
