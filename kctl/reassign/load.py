"""Loads of brokers for the whole-cluster planner, pure: the tolerance band around a mean and
brokers kept by load in heaps (:class:`Heaps`), shared by the passes (:mod:`kctl.reassign.passes`)
and the leader pass (:mod:`kctl.reassign.leaders`)."""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable


def band(mean: float, tolerance: float, integral: bool) -> tuple[float, float]:
    """The band of loads within ``tolerance`` (a fraction) of ``mean``; a count (``integral``)
    may always be within [floor(mean), ceil(mean)]."""
    lo, hi = mean * (1 - tolerance), mean * (1 + tolerance)
    if integral:  # a count can always be within [floor(mean), ceil(mean)]
        lo, hi = min(lo, math.floor(mean)), max(hi, math.ceil(mean))
    return lo, hi


class Heaps:
    """Brokers by load: one min-heap per rack and one max-heap, with lazy deletion (an entry
    is current when its load equals the broker's)."""

    def __init__(self, load: dict[int, float], rack: dict[int, str | None]) -> None:
        self.load, self.rack = load, rack
        self.by_rack: dict[str | None, list[tuple[float, int]]] = {}
        self.top: list[tuple[float, int]] = []
        for b in sorted(load):
            self.by_rack.setdefault(rack[b], []).append((load[b], b))
            self.top.append((-load[b], b))
        for h in self.by_rack.values():
            heapq.heapify(h)
        heapq.heapify(self.top)
        self.racks = sorted(self.by_rack, key=lambda r: (r is None, r or ""))

    def add(self, b: int, delta: float) -> None:
        self.load[b] += delta
        heapq.heappush(self.by_rack[self.rack[b]], (self.load[b], b))
        heapq.heappush(self.top, (-self.load[b], b))

    def least(self, rack: str | None, exclude: Iterable[int]) -> int | None:
        """The least-loaded broker of ``rack`` not in ``exclude``."""
        h = self.by_rack[rack]
        held: list[tuple[float, int]] = []
        found = None
        while h:
            load, b = h[0]
            if load != self.load[b]:
                heapq.heappop(h)
                continue
            if b in exclude:
                held.append(heapq.heappop(h))
                continue
            found = b
            break
        for item in held:
            heapq.heappush(h, item)
        return found

    def smallest(self, n: int, skip: set[int] | None = None) -> list[int]:
        """Up to ``n`` least-loaded brokers over all racks, ascending (load, id)."""
        cands: list[tuple[float, int]] = []
        for r in self.racks:
            h = self.by_rack[r]
            held: list[tuple[float, int]] = []
            seen: set[int] = set()
            while h and len(held) < n:
                load, b = heapq.heappop(h)
                if load != self.load[b] or b in seen:
                    continue
                seen.add(b)
                held.append((load, b))
            for item in held:
                heapq.heappush(h, item)
            cands += [x for x in held if not skip or x[1] not in skip]
        cands.sort()
        return [b for _, b in cands[:n]]

    def largest(self, skip: set[int]) -> int | None:
        while self.top:
            load, b = self.top[0]
            if -load != self.load[b] or b in skip:
                heapq.heappop(self.top)
                continue
            return b
        return None
