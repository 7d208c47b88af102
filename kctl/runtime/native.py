"""kctl's optional C extension, :mod:`kctl._native`: the per-record hot loops of
``dump-segment --deep-iteration``, ``consume -o jsonl`` and ``produce``, each the exact
equivalent of a pure Python function that stays beside it as the reference (tests compare the
two) and as the fallback where the extension was not built (no C compiler at install).

``KCTL_NATIVE=0`` in the environment makes kctl run the pure Python functions.
"""

from __future__ import annotations

import functools
import os
from types import ModuleType


@functools.cache
def load() -> ModuleType | None:
    """The extension module, or None (not built, or ``KCTL_NATIVE=0``); decided once per
    process."""
    if os.environ.get("KCTL_NATIVE", "").strip() == "0":
        return None
    try:
        from kctl import _native
    except ImportError:
        return None
    return _native
