"""The environment of one kctl invocation: the global options (``-b``, ``-p``, ``-o``, ...) and
what the process was started with (whether stdout, stdin and stderr are terminals, the environment
variables that matter). The root command builds one :class:`Environment`, click's context carries
it to the sub-command, and every command passes it on explicitly (``connection(ctx)``,
``output_view(ctx)``); nothing reads global state. Tests build their own and swap it in.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

OUTPUT_FORMATS = ("table", "plain", "json", "jsonl", "yaml", "csv", "name")


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


@dataclass(frozen=True)
class Environment:
    bootstrap_servers: str | None = None
    profile: str | None = None
    command_config: str | None = None
    overrides: tuple[str, ...] = ()
    timeout: float = 15.0
    output: str | None = None
    no_headers: bool = False
    schema_registry: str | None = None  # --schema-registry / KCTL_SCHEMA_REGISTRY_URL
    debug: bool = False
    color: bool = True
    stdout_isatty: bool = False
    stdin_isatty: bool = False
    stderr_isatty: bool = False
    variables: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of_process(cls, **options: Any) -> Environment:
        """The global options ``options`` with what this process was started with."""
        return cls(
            **options,
            stdout_isatty=_isatty(sys.stdout),
            stdin_isatty=_isatty(sys.stdin),
            stderr_isatty=_isatty(sys.stderr),
            variables=dict(os.environ),
        )

    def output_format(self) -> str:
        """The asked format, else table on a terminal and plain when piped."""
        if self.output:
            return self.output
        return "table" if self.stdout_isatty else "plain"

    def use_color(self) -> bool:
        return self.color and "NO_COLOR" not in self.variables
