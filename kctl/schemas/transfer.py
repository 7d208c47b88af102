"""What ``kctl schemas import`` checks of what a registry did with an export. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kctl.errors import KctlError
from kctl.schemas.names import topic_of


def ids_not_kept(url: str, rows: Sequence[Mapping[str, Any]]) -> None:
    """After ``import --keep-ids`` (``rows``: subject, id as exported, new_id as registered):
    one line, exit 1, when an id came back other than the exported one (a registry may take
    IMPORT mode and still assign its own ids: Apicurio 3.3). Records carry the id of the
    subject they were written under, so the error names the topics of the subjects holding a
    lost id (``TOPIC-value``, ``TOPIC-key``); other subjects (record name strategies,
    referenced schemas) are named as subjects."""
    lost = [r for r in rows if r.get("id") is not None and int(r["id"]) != r["new_id"]]
    if not lost:
        return
    ids: dict[int, int] = {}
    topics: set[str] = set()
    others: set[str] = set()
    for r in lost:
        ids.setdefault(int(r["id"]), int(r["new_id"]))
        subject = str(r["subject"])
        topic = topic_of(subject)
        if topic is not None:
            topics.add(topic)
        else:
            others.add(subject)
    asked = len({int(r["id"]) for r in rows if r.get("id") is not None})
    why = "ids " + some([f"{old}->{new}" for old, new in sorted(ids.items())])
    why += " (exported->registered)"
    if topics:
        why += f"; records of topic(s) {some(sorted(topics))} carry the exported ids"
    if others:
        why += f"; subject(s) {some(sorted(others))} held them"
    raise KctlError(
        f"the schema registry at {url} did not keep {len(ids)} of {asked} schema id(s) "
        "asked for with --keep-ids",
        why,
    )


def some(items: Sequence[str], most: int = 10) -> str:
    """``items`` joined with commas: the first ``most``, then how many more."""
    shown = ", ".join(items[:most])
    return shown + (f" and {len(items) - most} more" if len(items) > most else "")
