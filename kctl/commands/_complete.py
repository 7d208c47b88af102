"""Shell completion: topic, consumer group and profile names, and ``-o`` formats.

Typer calls these (``autocompletion=``) only while the shell asks for candidates
(``_KCTL_COMPLETE=complete_bash|complete_zsh|complete_fish``). Names from the cluster are fetched
with the connection the command line's global options, the profile and the environment
describe, within ``--timeout`` (3 s unless given). Completion output goes to the shell, so any
failure — unreachable cluster, bad profile, authentication — gives no candidates and prints
nothing. Client libraries are imported inside the functions: importing this module stays light.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import typer

#: Seconds to wait for the cluster while completing, unless --timeout is on the command line.
COMPLETION_TIMEOUT = 3.0

_FORMAT_HELP = {
    "table": "aligned columns (default on a terminal)",
    "plain": "tab-separated (default when piped)",
    "json": "one JSON document",
    "jsonl": "JSON lines",
    "yaml": "YAML",
    "csv": "CSV with a header row",
    "name": "names only, one per line (for xargs)",
}


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Nothing may reach the terminal while the shell waits: stderr (Python's and fd 2, where a
    C library would write) goes to /dev/null for the duration."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        with contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _environment(ctx: typer.Context) -> Any:
    """The global options as the root command parsed them (kctl.cli hoists global options from
    anywhere in the words being completed to the front), with the completion timeout."""
    from kctl.environment import Environment

    root = ctx.find_root()
    p = root.params
    source = root.get_parameter_source("timeout")
    given = source is not None and source.name != "DEFAULT"
    timeout = float(p["timeout"]) if given and p.get("timeout") else COMPLETION_TIMEOUT
    return Environment.of_process(
        bootstrap_servers=p.get("bootstrap_server"),
        profile=p.get("profile"),
        command_config=p.get("command_config"),
        overrides=tuple(p.get("overrides") or []),
        timeout=max(0.1, timeout),
    )


def _given(ctx: typer.Context) -> set[str]:
    """Names already on the command line for this command (not offered twice)."""
    out: set[str] = set()
    for value in ctx.params.values():
        if isinstance(value, list | tuple):
            out.update(v for v in value if isinstance(v, str))
    return out


def _offer(names: Iterable[str], ctx: typer.Context, incomplete: str) -> list[str]:
    given = _given(ctx)
    return [n for n in names if n.startswith(incomplete) and n not in given]


def _from_cluster(ctx: typer.Context, fetch: Callable[[Any], list[str]]) -> list[str]:
    try:
        with _quiet():
            from kctl.broker.client import Admin
            from kctl.broker.connect import resolve

            return fetch(Admin(resolve(_environment(ctx))))
    except BaseException:  # completion never prints: no candidates instead
        return []


def topic_names(ctx: typer.Context, incomplete: str) -> list[str]:
    """Topics of the cluster; internal ones (``__...``) once the word starts with '_'."""

    def fetch(admin: Any) -> list[str]:
        from kctl.broker import topics

        internal = incomplete.startswith("_")
        return [t.topic for t in topics.list_topics(admin, internal=internal)]

    return _offer(_from_cluster(ctx, fetch), ctx, incomplete)


def group_names(ctx: typer.Context, incomplete: str) -> list[str]:
    """Consumer groups the cluster lists (with members or only committed offsets)."""

    def fetch(admin: Any) -> list[str]:
        from kctl.broker import groups

        return [g.group for g in groups.list_groups(admin)]

    return _offer(_from_cluster(ctx, fetch), ctx, incomplete)


def profile_names(ctx: typer.Context, incomplete: str) -> list[str]:
    """Profiles in the profile file (KCTL_CONFIG or the default path)."""
    try:
        with _quiet():
            from kctl import config

            names = sorted(config.load().profiles)
    except BaseException:  # completion never prints: no candidates instead
        return []
    return _offer(names, ctx, incomplete)


def output_formats(incomplete: str) -> list[tuple[str, str]]:
    """The ``-o`` formats, with a word on each for shells that show one (zsh, fish)."""
    from kctl.environment import OUTPUT_FORMATS

    return [(f, _FORMAT_HELP.get(f, "")) for f in OUTPUT_FORMATS if f.startswith(incomplete)]


def entity_names(ctx: typer.Context, incomplete: str) -> list[str]:
    """configs --entity-name: topic names when --entity-type is topics."""
    if str(ctx.params.get("entity_type") or "").lower().rstrip("s") != "topic":
        return []
    return topic_names(ctx, incomplete)
