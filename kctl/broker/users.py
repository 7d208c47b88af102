"""SCRAM users (kafka-configs.sh --entity-type users --add-config SCRAM-SHA-...):
DescribeUserScramCredentials and AlterUserScramCredentials through kafka-python. The password
never leaves this process: the salted password is derived here (PBKDF2, a random salt, as Kafka's
own admin client does) and only it is sent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kctl.broker import kafka_python
from kctl.broker.client import Admin
from kctl.errors import KctlError, NotFoundError, UsageError

MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
MIN_ITERATIONS = 4096  # Kafka refuses fewer (and more than 16384)
MAX_ITERATIONS = 16384


@dataclass(frozen=True)
class Credential:
    user: str
    mechanism: str
    iterations: int


def mechanism(text: str) -> str:
    key = text.strip().upper().replace("_", "-")
    if key not in MECHANISMS:
        raise UsageError(f"unknown SCRAM mechanism {text!r}", " or ".join(MECHANISMS))
    return key


def _client(admin: Admin) -> Any:
    return kafka_python.LazyClient(admin)


def describe(admin: Admin, users: list[str] | None) -> list[Credential]:
    """Every user's SCRAM credentials (mechanism, iterations); ``users`` must all have some."""
    from kafka.errors import KafkaError

    admin.metadata()
    with _client(admin) as lazy:
        try:
            answer = lazy.client.describe_user_scram_credentials(users)
        except KafkaError as exc:
            raise KctlError("describing SCRAM users", str(exc) or type(exc).__name__) from exc
    out = []
    for user, info in sorted(answer.items()):
        if info["error"]:
            if users is not None:
                raise NotFoundError(f"user {user!r} has no SCRAM credentials", info["error"])
            continue
        for ci in info["credential_infos"]:
            out.append(Credential(user, ci["mechanism"].name.replace("_", "-"), ci["iterations"]))
    return sorted(out, key=lambda c: (c.user, c.mechanism))


def set_password(admin: Admin, user: str, mech: str, password: str, iterations: int) -> None:
    from kafka.admin import UserScramCredentialUpsertion

    if not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
        raise UsageError(
            f"--iterations {iterations} is out of range",
            f"Kafka takes {MIN_ITERATIONS}..{MAX_ITERATIONS}",
        )
    upsert = UserScramCredentialUpsertion(user, mech, password, iterations=iterations)
    _alter(admin, [upsert], f"setting the {mech} password of {user!r}")


def delete(admin: Admin, user: str, mechs: list[str]) -> None:
    from kafka.admin import UserScramCredentialDeletion

    # One request per mechanism: Kafka refuses two alterations of one user in one request.
    for m in mechs:
        _alter(
            admin,
            [UserScramCredentialDeletion(user, m)],
            f"deleting the {m} credentials of {user!r}",
        )


def _alter(admin: Admin, alterations: list[Any], what: str) -> None:
    from kafka.errors import KafkaError

    admin.metadata()
    with _client(admin) as lazy:
        try:
            answer = lazy.client.alter_user_scram_credentials(alterations)
        except KafkaError as exc:
            raise KctlError(what, str(exc) or type(exc).__name__) from exc
    for message in answer.values():
        if message:
            raise KctlError(what, message)
