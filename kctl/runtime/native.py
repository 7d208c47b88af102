"""kctl's optional C extension, :mod:`kctl._native`: the per-record hot loops of
``dump-segment --deep-iteration``, ``consume -o jsonl`` and ``produce``, each the exact
equivalent of a pure Python function that stays beside it as the reference (tests compare the
two) and as the fallback where the extension was not built (no C compiler at install).

The one place that decides whether kctl runs them (:func:`load`): every hot loop asks here for
its C function the same way — :func:`records_json`, :func:`jsonl_block`, :func:`produce_chunk`,
:func:`producer` — and runs its Python twin when the answer is None. Nothing else in kctl imports
:mod:`kctl._native` or reads ``KCTL_NATIVE``. The twins live with their callers (this is the
ground floor):

- ``records_json``: :func:`kctl.logfmt.fast.py_records_json`
- ``jsonl_block``: :func:`kctl.formatters.stream.py_jsonl_block`
- ``produce_chunk``: the plain and keyed loops of :class:`kctl.broker.produce.Sender`
- ``producer`` (kctl's own producer on librdkafka's C API, plain and keyed lines): the same
  loops on confluent-kafka's Producer (:mod:`kctl.broker.native_producer`)

``KCTL_NATIVE=0`` in the environment makes kctl run the pure Python functions;
``KCTL_NATIVE_PRODUCER=0`` only keeps ``produce`` on confluent-kafka's Producer (the C loop
``produce_chunk`` feeding it stays).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any


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


def records_json() -> Callable[..., tuple[str, Sequence[int]] | None] | None:
    """``records_json(data, base_offset, first_ts, count, base_seq, text=None)`` in C (the deep
    dump's fast path), or None: run :func:`kctl.logfmt.fast.py_records_json`."""
    ext = load()
    return None if ext is None else ext.records_json


def jsonl_block() -> Callable[[list[Any], tuple[str | None, ...]], bytes | None] | None:
    """``jsonl_block(msgs, timestamp_types)`` in C (``consume -o jsonl``), or None: run
    :func:`kctl.formatters.stream.py_jsonl_block`."""
    ext = load()
    return None if ext is None else ext.jsonl_block


def produce_chunk() -> Callable[..., tuple[int, int, int, int]] | None:
    """``produce_chunk(produce, topic, data, start, end, sep, catch)`` in C (``produce``'s plain
    and keyed lines), or None: run the Python loops of :class:`kctl.broker.produce.Sender`."""
    ext = load()
    return None if ext is None else ext.produce_chunk


def producer() -> Any | None:
    """:class:`kctl._native.Producer` (``produce``'s plain and keyed lines on librdkafka's C
    API), or None: produce through confluent-kafka (also with ``KCTL_NATIVE_PRODUCER=0``).
    Imports confluent_kafka first: the C producer drives the librdkafka it loaded."""
    ext = load()
    if ext is None or os.environ.get("KCTL_NATIVE_PRODUCER", "").strip() == "0":
        return None
    import confluent_kafka  # noqa: F401  (loads the librdkafka the C producer opens)

    return getattr(ext, "Producer", None)


def rdkafka_library() -> tuple[str, str] | None:
    """(path, version) of the librdkafka :func:`producer` drives, or None when it cannot."""
    ext = load()
    if ext is None or not hasattr(ext, "rdkafka"):
        return None
    import confluent_kafka  # noqa: F401

    try:
        path, version = ext.rdkafka()
    except RuntimeError:
        return None
    return str(path), str(version)
