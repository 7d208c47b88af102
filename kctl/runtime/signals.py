"""SIGINT and SIGTERM handled alike by the commands that stream (produce, consume -f): a
context manager installs a handler for both in the main thread and restores the previous ones."""

from __future__ import annotations

import signal
import threading
from typing import Any, Self


class SignalTrap:
    """Subclasses define ``_handler(signum, frame)``; ``with trap:`` routes SIGINT and SIGTERM
    to it (in the main thread only: other threads cannot install handlers)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.previous: dict[int, Any] = {}

    def _handler(self, signum: int, frame: Any) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def __enter__(self) -> Self:
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                self.previous[sig] = signal.signal(sig, self._handler)
        return self

    def __exit__(self, *exc: Any) -> None:
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)
        self.previous.clear()
