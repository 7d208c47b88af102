"""Global options of one kctl invocation, set once by the root callback."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

OUTPUT_FORMATS = ("table", "plain", "json", "jsonl", "yaml", "csv", "name")


@dataclass
class Settings:
    bootstrap_servers: str | None = None
    profile: str | None = None
    command_config: str | None = None
    overrides: list[str] = field(default_factory=list)
    timeout: float = 15.0
    output: str | None = None
    no_headers: bool = False
    debug: bool = False
    color: bool = True

    def output_format(self) -> str:
        """The asked format, else table on a terminal and plain when piped."""
        if self.output:
            return self.output
        return "table" if sys.stdout.isatty() else "plain"

    def use_color(self) -> bool:
        return self.color and "NO_COLOR" not in os.environ


_current = Settings()


def current() -> Settings:
    return _current


def install(settings: Settings) -> None:
    global _current
    _current = settings
