"""How the command line names what a registry holds: ``SUBJECT[:VERSION]`` and
``NAME=SUBJECT:VERSION`` references; the topic a subject is for. Pure."""

from __future__ import annotations

from kctl.errors import UsageError
from kctl.schemas.model import Reference

EXAMPLE_SUBJECT = "e.g. orders-value:2"
EXAMPLE_REFERENCE = "e.g. common.proto=common-value:1"


def _version(tail: str) -> int | bool | None:
    """A ``:VERSION`` suffix as a number, None for ``latest``/``-1``, False when ``tail`` is no
    version (then the colon belongs to the subject)."""
    if tail in ("latest", "-1"):
        return None
    if tail.isascii() and tail.isdigit() and len(tail) <= 10:
        return int(tail)
    return False


def subject_and_version(text: str, option: str = "SUBJECT[:VERSION]") -> tuple[str, int | None]:
    """``orders-value`` -> (orders-value, None); ``orders-value:3`` -> (orders-value, 3);
    ``:latest`` (or ``:-1``) is None. A subject may itself hold colons (Confluent's contexts:
    ``:.staging:orders-value``): only a last part that is a version is read as one."""
    subject, colon, tail = text.rpartition(":")
    version = _version(tail) if colon else False
    if version is False:
        subject, version = text, None
    if not subject.strip():
        raise UsageError(f"{option} {text!r} has no subject", EXAMPLE_SUBJECT)
    if version == 0:
        raise UsageError(f"{option} {text!r}: versions start at 1", EXAMPLE_SUBJECT)
    return subject, version


def parse_reference(item: str, option: str = "--reference") -> Reference:
    """``NAME=SUBJECT:VERSION``, the version a number or ``latest`` (kept as version 0 until the
    registry says which number it is: :meth:`kctl.registry.client.RegistryClient.resolve`)."""
    from kctl.parsing import key_value

    name, target = key_value(
        item, option, form="NAME=SUBJECT:VERSION", example=EXAMPLE_REFERENCE[5:]
    )
    subject, colon, tail = target.rpartition(":")
    version = _version(tail) if colon else False
    if not subject or version is False or version == 0:
        raise UsageError(f"{option} {item!r} is not NAME=SUBJECT:VERSION", EXAMPLE_REFERENCE)
    return Reference(name, subject, version or 0)


def topic_of(subject: str) -> str | None:
    """The topic whose keys or values ``subject`` names under Confluent's TopicNameStrategy
    (``orders-value``, ``orders-key`` -> ``orders``); None for another subject."""
    topic, dash, side = subject.rpartition("-")
    return topic if dash and topic and side in ("value", "key") else None
