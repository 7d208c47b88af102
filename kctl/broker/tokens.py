"""Delegation tokens (kafka-delegation-tokens.sh, KIP-48): create, renew, expire and describe
through kafka-python with Kafka's own message schemas (kctl.broker.messages).

A token is created by a principal that logged in with SASL (not with a token), and works as a
SCRAM login: username = the token id, password = the HMAC, with the SCRAM extension
``tokenauth=true``. The HMAC is the secret: it is returned by ``create`` and by ``describe`` (as
Kafka's tool shows it), and taken by ``renew`` and ``expire``."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from kctl.broker import kafka_python
from kctl.broker.client import Admin
from kctl.errors import KctlError, UsageError


@dataclass(frozen=True)
class Token:
    token_id: str
    hmac: str  # base64, as kafka-delegation-tokens.sh prints it
    owner: str
    requester: str | None
    renewers: tuple[str, ...]
    issued_ms: int
    expiry_ms: int
    max_ms: int


def principal(text: str) -> tuple[str, str]:
    """``TYPE:NAME`` (``User:alice``) split, or a one-line error."""
    kind, sep, name = text.partition(":")
    if not sep or not kind or not name:
        raise UsageError(f"malformed principal {text!r}", "expected TYPE:NAME, e.g. User:alice")
    return kind, name


def hmac_bytes(text: str) -> bytes:
    """The HMAC as kafka-delegation-tokens.sh prints it (base64), decoded."""
    try:
        return base64.b64decode(text.strip(), validate=True)
    except ValueError:
        raise UsageError("the HMAC is not base64", "give it as tokens create printed it") from None


def _raise(code: int, what: str) -> None:
    if code:
        import kafka.errors as Errors

        err = Errors.for_code(code)
        hint = ""
        if err.__name__ == "DelegationTokenAuthDisabledError":
            hint = ": the brokers have no delegation.token.secret.key, or this is no SASL login"
        elif err.__name__ == "DelegationTokenRequestNotAllowedError":
            hint = ": a token cannot be asked for with a token login, nor without SASL"
        raise KctlError(what, f"{err.__name__}{hint}")


def _ask(admin: Admin, request: Any, what: str) -> Any:
    with kafka_python.LazyClient(admin) as lazy:
        if kafka_python.api_version(lazy.client, type(request)) < 0:
            raise KctlError(what, "the cluster does not support delegation tokens here")
        return kafka_python.send(lazy.client, request, what)


def create(admin: Admin, renewers: list[str], owner: str | None, max_lifetime_ms: int) -> Token:
    from kctl.broker.messages import CreateDelegationTokenRequest as R

    kind, name = principal(owner) if owner else (None, None)
    request = R(
        owner_principal_type=kind,
        owner_principal_name=name,
        renewers=[
            R.CreatableRenewers(principal_type=t, principal_name=n)
            for t, n in map(principal, renewers)
        ],
        max_lifetime_ms=max_lifetime_ms,
    )
    answer = _ask(admin, request, "creating a delegation token")
    _raise(answer.error_code, "creating a delegation token")
    requester = None
    if getattr(answer, "token_requester_principal_name", None):
        requester = (
            f"{answer.token_requester_principal_type}:{answer.token_requester_principal_name}"
        )
    return Token(
        token_id=answer.token_id,
        hmac=base64.b64encode(answer.hmac).decode(),
        owner=f"{answer.principal_type}:{answer.principal_name}",
        requester=requester,
        renewers=tuple(sorted(renewers)),
        issued_ms=answer.issue_timestamp_ms,
        expiry_ms=answer.expiry_timestamp_ms,
        max_ms=answer.max_timestamp_ms,
    )


def renew(admin: Admin, hmac: str, period_ms: int) -> int:
    """The token's new expiry time (ms since the epoch)."""
    from kctl.broker.messages import RenewDelegationTokenRequest as R

    answer = _ask(admin, R(hmac=hmac_bytes(hmac), renew_period_ms=period_ms), "renewing a token")
    _raise(answer.error_code, "renewing the delegation token")
    return int(answer.expiry_timestamp_ms)


def expire(admin: Admin, hmac: str, period_ms: int) -> int:
    """Expire the token after ``period_ms`` (negative: now); its new expiry time."""
    from kctl.broker.messages import ExpireDelegationTokenRequest as R

    request = R(hmac=hmac_bytes(hmac), expiry_time_period_ms=period_ms)
    answer = _ask(admin, request, "expiring a token")
    _raise(answer.error_code, "expiring the delegation token")
    return int(answer.expiry_timestamp_ms)


def describe(admin: Admin, owners: list[str]) -> list[Token]:
    """The tokens this principal may see (its own, those it renews, all with Describe on the
    tokens), only those of ``owners`` when given."""
    from kctl.broker.messages import DescribeDelegationTokenRequest as R

    request = R(
        owners=[R.DescribeDelegationTokenOwner(principal_type=t, principal_name=n)
                for t, n in map(principal, owners)] if owners else None
    )  # fmt: skip
    answer = _ask(admin, request, "describing delegation tokens")
    _raise(answer.error_code, "describing delegation tokens")
    out = []
    for t in answer.tokens:
        requester = getattr(t, "token_requester_principal_name", None)
        out.append(
            Token(
                token_id=t.token_id,
                hmac=base64.b64encode(t.hmac).decode(),
                owner=f"{t.principal_type}:{t.principal_name}",
                requester=f"{t.token_requester_principal_type}:{requester}" if requester else None,
                renewers=tuple(
                    sorted(f"{r.principal_type}:{r.principal_name}" for r in t.renewers)
                ),
                issued_ms=t.issue_timestamp,
                expiry_ms=t.expiry_timestamp,
                max_ms=t.max_timestamp,
            )
        )
    return sorted(out, key=lambda k: (k.owner, k.issued_ms, k.token_id))
