"""Whole-cluster reassignment plans, pure: decommission (``remove``), scale out (``add``),
balance replicas / leaders / bytes within a tolerance, change the replication factor, stay
within a budget of moves or bytes, and balance a broker's log dirs (``balance_disks``).

The input is a :class:`Layout` (the current replicas of the chosen partitions, each
partition's size, the brokers and their racks, the fenced brokers, the log dir of each
replica); :func:`plan` returns a :class:`Plan` (the new replica lists, the log-dir moves and
the figures). Same input, same plan: every choice is ordered by (load, broker id) or
(size, partition index), never by set or dict iteration order, and nothing is random.

The algorithm, in four passes (docs/partitions.md, "How the planner works"):

1. **Hard constraints** (exact, minimal): per partition, the replicas on a removed broker, the
   second replica on a broker or (where racks allow) on a rack, and the replicas above the
   target replication factor leave; replicas below it are added. Each new replica goes to the
   least-loaded eligible broker on a rack the partition does not use yet (one heap per rack:
   O(racks x log brokers) per placement). Nothing else moves, so a decommission moves exactly
   the replicas on the removed brokers.
2. **Balance** (greedy): while a broker is above the tolerance band of the mean (replica count,
   or bytes with ``--balance disk``), or one is below it, move one replica from the most loaded
   broker to one of the least loaded ones that can take it (rack-safe), choosing the replica
   that does the most good for its bytes: for counts the one closest in size to the bytes per
   replica the destination still lacks (and the source has in excess) against the mean bytes,
   so the bytes end even too (a new broker gets its share of bytes with its share of
   replicas), or the smallest under ``--max-bytes``; for bytes the largest one that does not
   overshoot the mean. Each move lowers the sum of squared loads, so it ends;
   heaps with lazy deletion keep it O(moves x log brokers) plus a bounded scan of the source's
   replicas (sorted once by size).
3. **Preferred leaders** (no data moves): a partition keeps its first replica where it still
   holds one; then leaderships pass from the broker with the most to a replica of the same
   partition with at least two fewer (greedy, one reorder each) while that helps; then, for
   the brokers still outside the band, augmenting paths (BFS over brokers, X -> Y when X leads
   a partition Y holds a replica of: a chain of reorders that changes only its ends' counts).
   Exact: the band is reached whenever some choice of leaders among the replicas reaches it.
4. **Log dirs** (``balance_disks``, greedy): per broker, replicas move from its fullest online
   log dir to its emptiest, the largest one not overshooting, until within the band.
"""

from __future__ import annotations

import heapq
import math
from array import array
from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from kctl.replicas.assign import PlanError

TP = tuple[str, int]
METRICS = ("replicas", "leaders", "disk")


@dataclass
class Layout:
    """What the planner is given. ``partitions[i]`` is placed on ``replicas[i]`` (preferred
    leader first) and holds ``sizes[i]`` bytes (its largest replica; 0 when unknown)."""

    partitions: list[TP]
    replicas: list[list[int]]
    sizes: list[int]
    racks: dict[int, str | None]  # every registered broker -> its rack
    fenced: set[int] = field(default_factory=set)
    # Optional: broker -> its online log dirs; (partition index, broker) -> the dir it is in.
    log_dirs: dict[int, list[str]] = field(default_factory=dict)
    replica_dirs: dict[tuple[int, int], str] = field(default_factory=dict)
    # Per replica bytes where known ((partition index, broker) -> size), for log-dir balance.
    replica_sizes: dict[tuple[int, int], int] = field(default_factory=dict)
    # (broker, log dir) -> bytes there that the plan does not move (other topics, internal
    # ones, future replicas): counted when log dirs are balanced.
    dir_fixed: dict[tuple[int, str], int] = field(default_factory=dict)


@dataclass
class Goal:
    remove: list[int] = field(default_factory=list)
    add: dict[int, str | None] = field(default_factory=dict)  # new broker -> its rack
    balance: str | None = None  # replicas | leaders | disk
    tolerance: float = 0.10
    replication_factor: int | None = None
    max_moves: int | None = None
    max_bytes: int | None = None
    balance_disks: bool = False
    targets: list[int] | None = None  # only these brokers may hold replicas
    keep_leaders: bool = False  # reorder only the partitions whose replicas change


@dataclass
class Plan:
    replicas: list[list[int]]
    dir_moves: dict[tuple[int, int], str]  # (partition index, broker) -> new log dir
    moved_replicas: int
    moved_bytes: int
    leader_changes: int
    dir_moved_bytes: int
    budget_reached: bool
    unfinished: int  # required moves left undone (budget)
    lower_bound: dict[str, int] | None
    within_tolerance: bool
    eligible: list[int]
    metric: str


def _band(mean: float, tolerance: float, integral: bool) -> tuple[float, float]:
    lo, hi = mean * (1 - tolerance), mean * (1 + tolerance)
    if integral:  # a count can always be within [floor(mean), ceil(mean)]
        lo, hi = min(lo, math.floor(mean)), max(hi, math.ceil(mean))
    return lo, hi


class _Heaps:
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


class _Planner:
    def __init__(self, layout: Layout, goal: Goal) -> None:
        self.layout, self.goal = layout, goal
        if goal.balance is not None and goal.balance not in METRICS:
            raise PlanError(f"unknown balance {goal.balance!r} (replicas, leaders or disk)")
        if goal.tolerance < 0:
            raise PlanError("the tolerance must be >= 0")
        racks = dict(layout.racks)
        for b, r in goal.add.items():
            racks.setdefault(b, r)
            if r is not None:
                racks[b] = r
        self.rack = racks
        removed = set(goal.remove)
        unknown = sorted(removed - set(racks) - _on_any(layout.replicas))
        if unknown:
            raise PlanError(f"--remove-broker {unknown[0]}: no such broker")
        pool = set(goal.targets) if goal.targets is not None else set(racks)
        self.removed = removed
        self.eligible = sorted(pool - removed - set(layout.fenced))
        missing = [b for b in pool if b not in racks]
        if missing:
            raise PlanError(f"unknown broker {sorted(missing)[0]}")
        if not self.eligible:
            raise PlanError("no broker is left to hold the replicas")
        self.ok = set(self.eligible)
        ranks = {self.rack[b] for b in self.eligible}
        self.rack_aware = None not in ranks and len(ranks) >= 2
        self.n_racks = len(ranks) if self.rack_aware else 1
        self.metric = "disk" if goal.balance == "disk" else "replicas"
        self.size = layout.sizes
        self.orig = layout.replicas
        self.new = [list(r) for r in layout.replicas]
        # Brokers' load over the eligible brokers (the others are reported, not balanced).
        self.load: dict[int, float] = {b: 0 for b in self.eligible}
        for i, reps in enumerate(self.new):
            w = self.weight(i)
            for b in reps:
                if b in self.load:
                    self.load[b] += w
        self.heaps = _Heaps(
            self.load, {b: (self.rack[b] if self.rack_aware else None) for b in self.eligible}
        )
        self.moves = 0
        self.bytes = 0
        self.budget_reached = False
        self.unfinished = 0
        # Bytes per eligible broker while counts are balanced (None: not tracked).
        self.bload: dict[int, float] | None = None
        self.bmean = 0.0
        self.clo = self.chi = 0
        # Replica counts per eligible broker while bytes are balanced (None: not tracked), and
        # the band of counts a disk move may not leave (or, outside it, go further from).
        self.count: dict[int, int] | None = None
        self.count_lo = self.count_hi = 0

    def weight(self, i: int) -> int:
        return self.size[i] if self.metric == "disk" else 1

    def cost(self, i: int, src: int | None, dst: int | None) -> tuple[int, int]:
        """(replicas, bytes) of the plan that change when a replica of partition ``i`` leaves
        ``src`` for ``dst`` (None: no such side), relative to the original assignment."""
        orig = self.orig[i]
        d = (dst is not None and dst not in orig) - (src is not None and src not in orig)
        return d, d * self.size[i]

    def affordable(self, moves: int, nbytes: int) -> bool:
        g = self.goal
        if g.max_moves is not None and self.moves + moves > g.max_moves:
            return False
        return not (g.max_bytes is not None and self.bytes + nbytes > g.max_bytes)

    def constrained(self, i: int, rf: int) -> bool:
        return self.rack_aware and rf <= self.n_racks

    # -- pass 1 ----------------------------------------------------------------------------

    def hard(self) -> None:
        g = self.goal
        order: Iterable[int] = range(len(self.new))
        if g.max_moves is not None or g.max_bytes is not None:
            order = sorted(order, key=lambda i: (self.size[i], i))  # most moves per byte first
        else:
            # The most constrained first: a replica with one place to go (the only broker left
            # on its rack) is placed before those that may go to several, which then avoid the
            # brokers the forced ones fill (in partition order, a decommission left 75/94/69/119
            # replicas where 99 and 114 were the fullest possible).
            options = self.options()
            order = sorted(order, key=lambda i: (options[i], i))
        for i in order:
            reps = self.new[i]
            if not reps:  # a partition the metadata gave no replicas (an error): left alone
                continue
            rf = g.replication_factor or len(reps)
            keep: list[int] = []
            drop: list[int] = []
            rack_rule = self.constrained(i, rf)
            # A replica that stays where it is though its broker takes nothing new (fenced)
            # holds its rack first: a replica that shares it is the one that moves.
            out_only = g.targets is not None  # every replica off the target brokers leaves
            seen_racks = {
                self.rack.get(b)
                for b in reps
                if b not in self.ok and not out_only and b not in self.removed
            }
            for b in reps:
                bad = b in keep or (b not in self.ok and (out_only or b in self.removed))
                if not bad and rack_rule and b in self.ok and self.rack[b] in seen_racks:
                    bad = True
                if bad:
                    drop.append(b)
                else:
                    keep.append(b)
                    seen_racks.add(self.rack.get(b))
            while len(keep) > rf:  # replication factor down: never the leader if avoidable
                victim = max(
                    keep[1:] or keep,
                    key=lambda b: (b not in self.ok, self.load.get(b, 0), b),
                )
                keep.remove(victim)
                drop.append(victim)
            need = rf - len(keep)
            if not drop and not need:
                continue
            if need and not self.affordable(need, need * self.size[i]):
                self.budget_reached = True
                self.unfinished += need
                continue
            w = self.weight(i)
            for b in drop:
                if b in self.load:
                    self.heaps.add(b, -w)
            placed = list(keep)
            for _ in range(need):
                got = self.pick(i, placed, rf)
                if got is None:
                    raise PlanError(
                        f"{_name(self.layout.partitions[i])} needs {rf} replicas; only "
                        f"{len(self.eligible)} broker(s) can hold them"
                    )
                placed.append(got)
                self.heaps.add(got, w)
            # A replacement takes the place of the replica it replaces (the leader's included).
            extra = placed[len(keep) :]
            out: list[int] = []
            for b in reps:
                if b in keep and b not in out:
                    out.append(b)
                elif extra:
                    out.append(extra.pop(0))
            self.new[i] = out + extra
            added = sum(1 for b in self.new[i] if b not in self.orig[i])
            self.moves += added
            self.bytes += added * self.size[i]

    def options(self) -> list[int]:
        """Per partition, how many brokers could take a new replica of it: the eligible brokers
        on racks its staying replicas do not use (where racks are enforced), else those not
        holding it; ``len(eligible) + 1`` when it needs no new replica. An estimate for the
        order of placement (pass 1), not a constraint."""
        per_rack: dict[str | None, int] = {}
        for b in self.eligible:
            per_rack[self.rack[b]] = per_rack.get(self.rack[b], 0) + 1
        n = len(self.eligible)
        out = [n + 1] * len(self.new)
        g = self.goal
        for i, reps in enumerate(self.new):
            rf = g.replication_factor or len(reps)
            staying = list(dict.fromkeys(b for b in reps if b in self.ok))
            if not reps or len(staying) >= rf:
                continue
            if self.constrained(i, rf):
                used = {self.rack[b] for b in staying}
                free = sum(k for r, k in per_rack.items() if r not in used)
                out[i] = free if free > 0 else n - len(staying)
            else:
                out[i] = n - len(staying)
        return out

    def pick(self, i: int, placed: list[int], rf: int) -> int | None:
        """The least-loaded eligible broker for one more replica of partition ``i``: on a rack
        ``placed`` does not use where the racks allow."""
        used = {self.rack[b] for b in placed if b in self.rack}
        exclude = set(placed)
        best: tuple[float, int] | None = None
        for strict in (True, False):
            for r in self.heaps.racks:
                if strict and self.rack_aware and r in used:  # racks unused first
                    continue
                b = self.heaps.least(r, exclude)
                if b is not None and (best is None or (self.load[b], b) < best):
                    best = (self.load[b], b)
            if best is not None:
                return best[1]
        return None

    # -- pass 2 ----------------------------------------------------------------------------

    def balance(self) -> bool:
        """Greedy moves until every eligible broker is within the band; whether it is."""
        metric = self.metric
        total = sum(self.load.values())
        mean = total / len(self.eligible)
        lo, hi = _band(mean, self.goal.tolerance, metric != "disk")
        if metric != "disk" and self.goal.max_bytes is None and any(self.size):
            bload: dict[int, float] = {b: 0 for b in self.eligible}
            for i, reps in enumerate(self.new):
                for b in reps:
                    if b in bload:
                        bload[b] += self.size[i]
            self.bload = bload
            self.bmean = sum(bload.values()) / len(self.eligible)
            self.clo, self.chi = math.ceil(lo), math.floor(hi)
        if metric == "disk":
            count: dict[int, int] = {b: 0 for b in self.eligible}
            for reps in self.new:
                for b in reps:
                    if b in count:
                        count[b] += 1
            self.count = count
            c_lo, c_hi = _band(sum(count.values()) / len(count), self.goal.tolerance, True)
            self.count_lo, self.count_hi = math.ceil(c_lo), math.floor(c_hi)
        on: dict[int, list[tuple[int, int]]] | None = None
        stuck: set[int] = set()
        while True:
            src = self.heaps.largest(stuck)
            low = self.heaps.smallest(1)
            if src is None or not low:
                break
            if self.load[src] <= hi and self.load[low[0]] >= lo:
                break
            if on is None:
                on = self.index()
            if self.move_one(src, on, lo, hi):
                stuck.clear()  # loads changed: a broker stuck before may have a way out now
            else:
                stuck.add(src)
                if self.budget_reached:
                    break
        return self.within(lo, hi)

    def within(self, lo: float, hi: float) -> bool:
        return all(lo <= self.load[b] <= hi for b in self.eligible)

    def index(self) -> dict[int, list[tuple[int, int]]]:
        """Per eligible broker, its replicas as (size, partition index), ascending."""
        idx: dict[int, array[int]] = {b: array("q") for b in self.eligible}
        for i, reps in enumerate(self.new):
            for b in reps:
                a = idx.get(b)
                if a is not None:
                    a.append(i)
        size = self.size
        return {b: sorted((size[i], i) for i in a) for b, a in idx.items()}

    def fits(self, i: int, src: int, dst: int) -> bool:
        reps = self.new[i]
        if dst in reps:
            return False
        if self.rack_aware:
            # never fewer distinct racks (with at least as many racks as replicas: all distinct)
            r, was = self.rack[dst], self.rack[src]
            if r != was:
                others = [self.rack.get(b) for b in reps if b != src]
                if r in others and was not in others:
                    return False
        return True

    def move_one(
        self, src: int, on: dict[int, list[tuple[int, int]]], lo: float, hi: float
    ) -> bool:
        """Move one replica off ``src`` to one of the least-loaded brokers that can take it;
        whether one moved."""
        mine = on[src]
        for dst in self.heaps.smallest(8, {src}):
            gap = self.load[src] - self.load[dst]
            if self.metric != "disk":
                if gap < 2:
                    break
                cands: Iterable[int] = (
                    range(min(len(mine), 4096))  # the smallest bytes first
                    if self.bload is None
                    else _closest(mine, self.size_target(src, dst), 4096)
                )
            else:
                if gap <= 0:
                    break
                if self.load[src] <= hi and self.load[dst] >= lo:
                    continue  # both in the band: moving between them is no part of the goal
                if self.disk_move(src, dst, on, gap, lo, hi):
                    return True
                continue
            for k in cands:
                _size, i = mine[k]
                if not self.fits(i, src, dst):
                    continue
                dm, db = self.cost(i, src, dst)
                if not self.affordable(max(dm, 0), max(db, 0)):
                    self.budget_reached = True
                    continue
                self.apply(i, src, dst, on)
                return True
        return False

    def size_target(self, src: int, dst: int) -> float:
        """The size of replica whose move from ``src`` to ``dst`` keeps bytes even while counts
        are balanced: the bytes ``dst`` lacks against the mean per replica it still lacks,
        capped by what ``src`` has in excess per replica in excess; 0 (the smallest) when either
        side has no bytes to give or take."""
        assert self.bload is not None
        need_b, need_c = self.bmean - self.bload[dst], self.clo - self.load[dst]
        over_b, over_c = self.bload[src] - self.bmean, self.load[src] - self.chi
        want = need_b / need_c if need_c >= 1 else need_b
        spare = over_b / over_c if over_c >= 1 else over_b
        return max(0.0, min(want, spare))

    def _need_cap(
        self, src: int, dst: int, gap: float, lo: float, hi: float
    ) -> tuple[float, float]:
        """The bytes that must pass from ``src`` to ``dst`` to bring the one outside the band
        into it (``need``), and the most that may pass without pushing the other out of it or
        past the middle of the pair (``cap``)."""
        ls, ld = self.load[src], self.load[dst]
        need, cap = (ls - hi, hi - ld) if ls > hi else (lo - ld, ls - lo)
        return max(need, 1.0), (min(cap, gap) if cap > 0 else gap / 2)

    def disk_candidates(
        self, mine: list[tuple[int, int]], need: float, cap: float, gap: float
    ) -> Iterator[int]:
        """Indexes into ``mine`` (src's replicas by size) in the order they are worth trying:
        the smallest replica that alone brings the broker into the band without pushing the
        other out of it (fewest bytes); then the largest smaller ones (every byte of them is
        needed); then any other that still evens the pair out (less than the gap). An empty
        replica never: moving it changes no bytes (and would only upset the counts)."""
        k0 = bisect_left(mine, (need, -1))
        n = len(mine)
        for k in range(k0, min(n, k0 + 256)):
            if mine[k][0] > cap or mine[k][0] >= gap:
                break
            yield k
        for k in range(k0 - 1, max(-1, k0 - 1 - 256), -1):
            size = mine[k][0]
            if size <= 0:
                break
            if size <= cap:
                yield k
        for k in range(k0, min(n, k0 + 256)):
            size = mine[k][0]
            if size >= gap:
                break
            if size > cap:
                yield k

    def count_allows(self, src: int, dst: int) -> bool:
        """Whether one replica may pass from ``src`` to ``dst`` without taking either count out
        of its band, or further out of it than it is."""
        assert self.count is not None
        cs, cd = self.count[src], self.count[dst]
        return cd + 1 <= self.count_hi and cs - 1 >= self.count_lo

    def disk_move(
        self,
        src: int,
        dst: int,
        on: dict[int, list[tuple[int, int]]],
        gap: float,
        lo: float,
        hi: float,
    ) -> bool:
        """One step of the disk goal from ``src`` to ``dst``: a replica that lowers the spread
        of bytes (0 < size < gap), or, where the replica counts forbid a single move, a swap
        with a smaller non-empty replica of ``dst`` (the net bytes between 0 and the gap);
        whether one was made. Either way the sum of squared loads falls, so the pass ends."""
        need, cap = self._need_cap(src, dst, gap, lo, hi)
        mine, theirs = on[src], on[dst]
        single = self.count_allows(src, dst)
        best: tuple[float, int, int] | None = None  # (bytes moved, i, j) of the best swap
        for k in self.disk_candidates(mine, need, cap, gap):
            a, i = mine[k]
            if not self.fits(i, src, dst):
                continue
            if single:
                dm, db = self.cost(i, src, dst)
                if not self.affordable(max(dm, 0), max(db, 0)):
                    self.budget_reached = True
                    continue
                self.apply(i, src, dst, on)
                return True
            if best is not None and a >= best[0]:
                continue
            j = self._swap_partner(i, a, theirs, src, dst, need, cap, gap)
            if j is not None and (best is None or a + self.size[j] < best[0]):
                best = (a + self.size[j], i, j)
        if best is None:
            return False
        _, i, j = best
        dm1, db1 = self.cost(i, src, dst)
        dm2, db2 = self.cost(j, dst, src)
        if not self.affordable(max(dm1, 0) + max(dm2, 0), max(db1, 0) + max(db2, 0)):
            self.budget_reached = True
            return False
        self.apply(i, src, dst, on)
        self.apply(j, dst, src, on)
        return True

    def _swap_partner(
        self,
        i: int,
        a: int,
        theirs: list[tuple[int, int]],
        src: int,
        dst: int,
        need: float,
        cap: float,
        gap: float,
    ) -> int | None:
        """A non-empty replica of ``dst`` to send back to ``src`` for partition ``i`` (``a``
        bytes): the net bytes ``a - b`` within [need, cap] where one fits, the smallest such
        ``b`` (fewest bytes copied); else any ``b`` with ``0 < a - b < gap``, the net nearest
        ``need``. Bounded scans of ``theirs`` (dst's replicas by size)."""
        lo_b, hi_b = max(1.0, a - cap), a - need
        k = bisect_left(theirs, (lo_b, -1))
        for _ in range(256):
            if k >= len(theirs) or theirs[k][0] > hi_b:
                break
            b, j = theirs[k]
            k += 1
            if j != i and src not in self.new[j] and self.fits(j, dst, src):
                return j
        # no net within the band: the one nearest need from below (still lowers the spread)
        k = bisect_left(theirs, (max(1.0, a - need), -1))
        for _ in range(256):
            if k >= len(theirs):
                break
            b, j = theirs[k]
            k += 1
            if b >= a:
                break
            if a - b < gap and j != i and src not in self.new[j] and self.fits(j, dst, src):
                return j
        return None

    def apply(self, i: int, src: int, dst: int, on: dict[int, list[tuple[int, int]]]) -> None:
        dm, db = self.cost(i, src, dst)
        self.moves += dm
        self.bytes += db
        reps = self.new[i]
        reps[reps.index(src)] = dst
        w = self.weight(i)
        self.heaps.add(src, -w)
        self.heaps.add(dst, w)
        entry = (self.size[i], i)
        mine = on[src]
        del mine[bisect_right(mine, entry) - 1]
        insort(on[dst], entry)
        if self.bload is not None:
            self.bload[src] -= self.size[i]
            self.bload[dst] += self.size[i]
        if self.count is not None:
            self.count[src] -= 1
            self.count[dst] += 1

    # -- pass 3 ----------------------------------------------------------------------------

    def leaders(self) -> int:
        """Balance preferred leaders by reordering replica lists; the number of partitions
        whose preferred leader changes.

        A partition keeps its first replica where it still holds one. Then direct passes (the
        lead of one partition from the broker with the most to a replica of it with at least
        two fewer) while they help; then augmenting paths (:meth:`_chains`) for the brokers
        still outside the band. The paths are exact: when none exists, no assignment of the
        leaders to the replicas reaches the band (a cut of the max-flow formulation), so the
        band is reached whenever it can be."""
        count: dict[int, int] = {b: 0 for b in self.eligible}
        led: dict[int, list[int]] = {b: [] for b in self.eligible}
        pos: dict[int, int] = {}  # partition -> its index in led[its leader]
        new, orig = self.new, self.orig
        for i, reps in enumerate(new):
            if not reps:
                continue
            first = orig[i][0] if orig[i] and orig[i][0] in reps else reps[0]
            if first != reps[0]:
                reps.remove(first)
                reps.insert(0, first)
            if first in count:
                count[first] += 1
                pos[i] = len(led[first])
                led[first].append(i)
        total = sum(count.values())
        lo, hi = _band(total / len(self.eligible), self.goal.tolerance, True)
        heaps = _Heaps(dict(count), {b: None for b in self.eligible})
        cnt = heaps.load
        fixed = self.goal.keep_leaders

        def give(i: int, src: int, dst: int) -> None:
            """The lead of partition ``i`` passes from ``src`` to ``dst`` (a replica of it)."""
            lst = led[src]
            k = pos.pop(i)
            last = lst.pop()
            if last != i:
                lst[k] = last
                pos[last] = k
            pos[i] = len(led[dst])
            led[dst].append(i)
            reps = new[i]
            reps.remove(dst)
            reps.insert(0, dst)

        stuck: set[int] = set()
        while True:
            src = heaps.largest(stuck)
            low = heaps.smallest(1)
            if src is None or not low or (cnt[src] <= hi and cnt[low[0]] >= lo):
                break
            done = False
            lst = led[src]
            for k in range(len(lst) - 1, -1, -1):
                i = lst[k]
                if fixed and new[i] == orig[i]:
                    continue
                best = None
                for b in new[i][1:]:
                    if (
                        b in cnt
                        and cnt[b] <= cnt[src] - 2
                        and (best is None or (cnt[b], b) < (cnt[best], best))
                    ):
                        best = b
                if best is None:
                    continue
                give(i, src, best)
                heaps.add(src, -1)
                heaps.add(best, 1)
                done = True
                break
            if done:
                stuck.clear()  # a count fell: a broker stuck before may have a way out now
            else:
                stuck.add(src)
        self._chains(cnt, led, lo, hi, give)
        return sum(1 for i, reps in enumerate(new) if reps and orig[i] and reps[0] != orig[i][0])

    def _chains(
        self,
        cnt: dict[int, float],
        led: dict[int, list[int]],
        lo: float,
        hi: float,
        give: Callable[[int, int, int], None],
    ) -> None:
        """Augmenting paths for the brokers the direct passes leave outside the band.

        Over the band: BFS over brokers from broker A, an edge X -> Y when X
        leads a partition (one that may be reordered) of which Y holds a replica, to the first
        broker that can take one more (below the band when one is reachable and any exists,
        else any broker below ``hi``); each step of the path passes one lead, so only the ends'
        counts change. Under the band: the same search backwards from U (Y -> U
        when Y leads a partition U holds a replica of) to a broker that can give one up and
        stay at or above ``lo``. When A (or U) has no path, the brokers it reaches lead every
        partition they could lead (or none they could lose) and are all at the limit: no
        assignment of leaders reaches the band. Deterministic: replica lists and leader lists
        in their order, brokers by (count, id)."""
        elig = self.eligible
        if all(lo <= cnt[b] <= hi for b in elig):
            return
        new, orig, fixed = self.new, self.orig, self.goal.keep_leaders

        def movable(i: int) -> bool:
            return not (fixed and new[i] == orig[i])

        # A search that fails leaves a closed set: its brokers lead only partitions whose
        # replicas are all inside it and have no room (or, going up, none to spare). No later
        # path can pass through such a broker, so it is skipped from then on: the failures
        # together cost one pass over the partitions, not one per broker.
        dead: set[int] = set()
        over = sorted((b for b in elig if cnt[b] > hi), key=lambda b: (-cnt[b], b))
        for a in over:
            while cnt[a] > hi and a not in dead:
                want_low = any(cnt[b] < lo for b in elig)
                parent: dict[int, tuple[int, int]] = {a: (a, -1)}
                depth = {a: 0}
                queue = [a]
                end = None
                low_end = None
                h = 0
                while h < len(queue) and low_end is None:
                    x = queue[h]
                    h += 1
                    if end is not None and depth[x] >= depth[end]:
                        break  # the shortest paths are all seen: none ends below the band
                    for i in led[x]:
                        if not movable(i):
                            continue
                        for y in new[i][1:]:
                            if y in parent or y not in cnt or y in dead:
                                continue
                            parent[y] = (x, i)
                            depth[y] = depth[x] + 1
                            queue.append(y)
                            if cnt[y] + 1 <= hi:
                                if end is None:
                                    end = y
                                if not want_low or cnt[y] < lo:
                                    low_end = y
                                    break
                        if low_end is not None:
                            break
                end = low_end if low_end is not None else end
                if end is None:  # no assignment brings a under the band's top
                    dead.update(parent)
                    break
                node = end
                while node != a:
                    x, i = parent[node]
                    give(i, x, node)
                    node = x
                cnt[a] -= 1
                cnt[end] += 1
        under = sorted((b for b in elig if cnt[b] < lo), key=lambda b: (cnt[b], b))
        if not under:
            return
        holds: dict[int, list[int]] = {b: [] for b in elig}  # broker -> partitions it holds
        for i, reps in enumerate(new):
            for b in reps:
                if b in holds:
                    holds[b].append(i)
        dead.clear()
        for u in under:
            while cnt[u] < lo and u not in dead:
                # back[y] = (z, i): y leads i, of which z (nearer u) holds a replica
                back: dict[int, tuple[int, int]] = {u: (u, -1)}
                queue = [u]
                source = None
                h = 0
                while h < len(queue) and source is None:
                    z = queue[h]
                    h += 1
                    for i in holds[z]:
                        y = new[i][0]
                        if y == z or y in back or y not in cnt or y in dead or not movable(i):
                            continue
                        back[y] = (z, i)
                        queue.append(y)
                        if cnt[y] - 1 >= lo:
                            source = y
                            break
                if source is None:  # no assignment brings u up to the band's bottom
                    dead.update(back)
                    break
                node = source
                while node != u:
                    z, i = back[node]
                    give(i, node, z)
                    node = z
                cnt[source] -= 1
                cnt[u] += 1

    # -- pass 4 ----------------------------------------------------------------------------

    def disks(self) -> tuple[dict[tuple[int, int], str], int]:
        lay = self.layout
        moves: dict[tuple[int, int], str] = {}
        moved = 0
        per: dict[tuple[int, str], list[tuple[int, int]]] = {}
        for (i, b), d in sorted(lay.replica_dirs.items()):
            if b in self.orig[i] and b in self.new[i]:  # stays on the broker
                size = lay.replica_sizes.get((i, b), self.size[i])
                per.setdefault((b, d), []).append((size, i))
        for b in sorted(lay.log_dirs):
            dirs = sorted(lay.log_dirs[b])
            if len(dirs) < 2 or b not in self.ok:
                continue
            items = {d: sorted(per.get((b, d), [])) for d in dirs}
            used = {
                d: float(sum(s for s, _ in items[d]) + lay.dir_fixed.get((b, d), 0)) for d in dirs
            }
            mean = sum(used.values()) / len(dirs)
            _lo, hi = _band(mean, self.goal.tolerance, False)
            for _ in range(sum(len(v) for v in items.values()) + 1):
                src = max(dirs, key=lambda d: (used[d], d))
                dst = min(dirs, key=lambda d: (used[d], d))
                if used[src] <= hi or src == dst:
                    break
                gap = used[src] - used[dst]
                want = min(used[src] - mean, mean - used[dst])
                mine = items[src]
                k = bisect_right(mine, (want, 1 << 62)) - 1
                if k < 0:
                    k = 0
                    if not mine or mine[0][0] >= gap or mine[0][0] <= 0:
                        break
                size, i = mine.pop(k)
                if size <= 0:
                    break
                insort(items[dst], (size, i))
                used[src] -= size
                used[dst] += size
                if lay.replica_dirs.get((i, b)) == dst:
                    moves.pop((i, b), None)
                else:
                    moves[(i, b)] = dst
                moved += size
        return moves, moved

    # -- bounds ----------------------------------------------------------------------------

    def lower_bound(self) -> dict[str, int] | None:
        g = self.goal
        if g.targets is not None:
            return None
        orig = self.orig
        required = 0
        req_bytes = 0
        gone = self.removed
        if gone or g.replication_factor:
            for i, reps in enumerate(orig):
                rf = g.replication_factor or len(reps)
                stay = sum(1 for b in reps if b not in gone)
                n = max(0, rf - min(stay, rf))
                required += n
                req_bytes += n * self.size[i]
            return {"replicas": required, "bytes": req_bytes}
        if g.add or g.balance in ("replicas", "disk"):
            disk = self.metric == "disk"
            if disk:
                return {"bytes": self._band_need(True)}
            k = self._band_need(False)
            # each moved replica is some replica: at least the k smallest replicas' bytes
            eligible = set(self.eligible)
            copies = sorted(
                self.size[i] for i, reps in enumerate(orig) for b in reps if b in eligible
            )
            out = {"replicas": k, "bytes": sum(copies[:k])}
            if g.max_bytes is None and any(self.size):
                # what the count balance moves replicas of typical size for: the bytes that
                # must move for the bytes per broker to be within the band as well
                out["even_bytes"] = self._band_need(True)
            return out
        return None

    def _band_need(self, disk: bool) -> int:
        """What must leave the brokers above the band of the original loads (replica counts,
        or bytes with ``disk``), or reach those below it: the larger of the two sums."""
        load: dict[int, float] = {b: 0 for b in self.eligible}
        for i, reps in enumerate(self.orig):
            for b in reps:
                if b in load:
                    load[b] += self.size[i] if disk else 1
        mean = sum(load.values()) / len(self.eligible)
        lo, hi = _band(mean, self.goal.tolerance, not disk)
        if not disk:  # whole replicas: a count is within the band from ceil(lo) to floor(hi)
            lo, hi = math.ceil(lo), math.floor(hi)
        excess = sum(max(0.0, v - hi) for v in load.values())
        deficit = sum(max(0.0, lo - v) for v in load.values())
        return math.ceil(max(excess, deficit))


def _closest(mine: list[tuple[int, int]], target: float, limit: int) -> Iterator[int]:
    """Indexes into ``mine`` (sorted by size) from the size nearest ``target`` outwards, at
    most ``limit``."""
    right = bisect_left(mine, (target, -1))
    left = right - 1
    n = len(mine)
    for _ in range(min(limit, n)):
        if right < n and (left < 0 or mine[right][0] - target <= target - mine[left][0]):
            yield right
            right += 1
        else:
            yield left
            left -= 1


def _on_any(replicas: list[list[int]]) -> set[int]:
    out: set[int] = set()
    for reps in replicas:
        out.update(reps)
    return out


def _name(tp: TP) -> str:
    return f"{tp[0]}-{tp[1]}"


def plan(layout: Layout, goal: Goal) -> Plan:
    """The plan for ``goal`` (module docstring). A PlanError when no plan can satisfy the hard
    constraints (too few brokers for the replication factor, unknown brokers)."""
    p = _Planner(layout, goal)
    p.hard()
    within = True
    if goal.add or goal.balance in ("replicas", "disk"):
        within = p.balance()
    else:
        total = sum(p.load.values())
        lo, hi = _band(total / len(p.eligible), goal.tolerance, p.metric != "disk")
        within = p.within(lo, hi)
    leader_changes = p.leaders()
    dir_moves, dir_bytes = p.disks() if goal.balance_disks else ({}, 0)
    lower = p.lower_bound()
    return Plan(
        replicas=p.new,
        dir_moves=dir_moves,
        moved_replicas=p.moves,
        moved_bytes=p.bytes,
        leader_changes=leader_changes,
        dir_moved_bytes=dir_bytes,
        budget_reached=p.budget_reached,
        unfinished=p.unfinished,
        lower_bound=lower,
        within_tolerance=within,
        eligible=p.eligible,
        metric=p.metric,
    )


# ---------------------------------------------------------------------------------------------
# The plan document and the figures


def changed(layout: Layout, result: Plan) -> list[int]:
    """Indexes of the partitions the plan changes (replicas, their order, or a log dir)."""
    dirs = {i for i, _ in result.dir_moves}
    return [i for i, reps in enumerate(result.replicas) if reps != layout.replicas[i] or i in dirs]


def document(layout: Layout, result: Plan) -> dict[str, Any]:
    """kafka-reassign-partitions.sh's plan JSON of the changed partitions; ``log_dirs`` names
    the target dir of a replica that moves between its broker's log dirs, else ``"any"``."""
    out = []
    for i in changed(layout, result):
        topic, partition = layout.partitions[i]
        reps = result.replicas[i]
        out.append(
            {
                "topic": topic,
                "partition": partition,
                "replicas": list(reps),
                "log_dirs": [result.dir_moves.get((i, b), "any") for b in reps],
            }
        )
    out.sort(key=lambda e: (e["topic"], e["partition"]))
    return {"version": 1, "partitions": out}


def _figures(
    layout: Layout, assignment: list[list[int]], brokers: list[int]
) -> dict[int, list[int]]:
    fig = {b: [0, 0, 0] for b in brokers}
    for i, reps in enumerate(assignment):
        for k, b in enumerate(reps):
            f = fig.get(b)
            if f is None:
                f = fig[b] = [0, 0, 0]
            f[0] += 1
            f[2] += layout.sizes[i]
            if k == 0:
                f[1] += 1
    return fig


def _spread(values: list[int]) -> int:
    return max(values) - min(values) if values else 0


def report(layout: Layout, goal: Goal, result: Plan) -> dict[str, Any]:
    """Before/after per broker and per rack, the spreads, and what moves."""
    racks = dict(layout.racks)
    racks.update({b: r for b, r in goal.add.items() if r is not None or b not in racks})
    brokers = sorted(set(racks) | set(goal.add))
    before = _figures(layout, layout.replicas, brokers)
    after = _figures(layout, result.replicas, brokers)
    rows: list[dict[str, Any]] = []
    removed, fenced = set(goal.remove), set(layout.fenced)
    for b in sorted(set(before) | set(after)):
        x, y = before.get(b, [0, 0, 0]), after.get(b, [0, 0, 0])
        state = (
            "removed" if b in removed else "fenced" if b in fenced
            else "new" if b in goal.add else "" if b in racks else "unknown"
        )  # fmt: skip
        rows.append(
            {
                "broker": b,
                "rack": racks.get(b),
                "state": state,
                "replicas_before": x[0],
                "replicas_after": y[0],
                "leaders_before": x[1],
                "leaders_after": y[1],
                "bytes_before": x[2],
                "bytes_after": y[2],
            }
        )
    by_rack: dict[str, dict[str, Any]] = {}
    for r in rows:
        key = r["rack"] if r["rack"] is not None else "-"
        agg = by_rack.setdefault(key, {"rack": key, "brokers": 0})
        agg["brokers"] += 1
        for k in ("replicas_before", "replicas_after", "leaders_before", "leaders_after",
                  "bytes_before", "bytes_after"):  # fmt: skip
            agg[k] = agg.get(k, 0) + r[k]
    eligible = set(result.eligible)
    live = [r for r in rows if r["broker"] in eligible]
    spread = {
        k: {
            "before": _spread([int(r[f"{k}_before"]) for r in live]),
            "after": _spread([int(r[f"{k}_after"]) for r in live]),
        }
        for k in ("replicas", "leaders", "bytes")
    }
    return {
        "goal": {
            "remove_brokers": sorted(goal.remove),
            "add_brokers": sorted(goal.add),
            "balance": goal.balance,
            "tolerance_pct": round(goal.tolerance * 100, 3),
            "replication_factor": goal.replication_factor,
            "max_moves": goal.max_moves,
            "max_bytes": goal.max_bytes,
            "balance_disks": goal.balance_disks,
            "keep_leaders": goal.keep_leaders,
        },
        "partitions": len(layout.partitions),
        "partitions_changed": len(changed(layout, result)),
        "moved_replicas": result.moved_replicas,
        "moved_bytes": result.moved_bytes,
        "leader_changes": result.leader_changes,
        "log_dir_moves": len(result.dir_moves),
        "log_dir_moved_bytes": result.dir_moved_bytes,
        "lower_bound": result.lower_bound,
        "within_tolerance": result.within_tolerance,
        "budget_reached": result.budget_reached,
        "unfinished_moves": result.unfinished,
        "spread": spread,
        "brokers": rows,
        "racks": [by_rack[k] for k in sorted(by_rack)],
    }


# ---------------------------------------------------------------------------------------------
# From a cluster snapshot


def from_snapshot(
    snapshot: Any, topics: list[str] | None = None, include: str | None = None, dirs: bool = True
) -> Layout:
    """The layout of a :class:`~kctl.replicas.model.ClusterSnapshot`: every non-internal topic
    (or ``topics``, or those whose name matches the regular expression ``include``), sizes from
    its log dirs (a partition's size is its largest replica); ``dirs``: also each replica's log
    dir and size (what ``balance_disks`` needs)."""
    import re

    pattern = re.compile(include) if include else None
    wanted = set(topics or [])
    known = {t.name for t in snapshot.topics}
    for name in sorted(wanted - known):
        raise PlanError(f"unknown topic {name!r}")
    chosen = []
    for t in snapshot.topics:
        if wanted:
            if t.name not in wanted:
                continue
        elif t.internal:
            continue
        if pattern is not None and not pattern.search(t.name):
            continue
        chosen.append(t)
    chosen.sort(key=lambda t: t.name)
    partitions: list[TP] = []
    replicas: list[list[int]] = []
    index: dict[TP, int] = {}
    for t in chosen:
        for p in sorted(t.partitions, key=lambda p: p.partition):
            index[(t.name, p.partition)] = len(partitions)
            partitions.append((t.name, p.partition))
            replicas.append(list(p.replicas))
    sizes = [0] * len(partitions)
    log_dirs: dict[int, list[str]] = {}
    replica_dirs: dict[tuple[int, int], str] = {}
    replica_sizes: dict[tuple[int, int], int] = {}
    dir_fixed: dict[tuple[int, str], int] = {}
    for d in snapshot.log_dirs:
        if d.error is not None:
            continue
        log_dirs.setdefault(d.broker, []).append(d.path)
        for r in d.replicas:
            i = index.get((r.topic, r.partition))
            if i is None or r.is_future:
                if dirs:
                    key = (d.broker, d.path)
                    dir_fixed[key] = dir_fixed.get(key, 0) + r.size
                continue
            if r.size > sizes[i]:
                sizes[i] = r.size
            if dirs:
                replica_dirs[(i, d.broker)] = d.path
                replica_sizes[(i, d.broker)] = r.size
    racks = {b.id: b.rack for b in snapshot.brokers}
    fenced = set(snapshot.fenced_brokers or [])
    for b in fenced:
        racks.setdefault(b, None)
    return Layout(
        partitions, replicas, sizes, racks, fenced, log_dirs, replica_dirs, replica_sizes, dir_fixed
    )
