"""Whole-cluster reassignment plans (``reassign generate``), pure: decommission (``remove``),
scale out (``add``), balance replicas / leaders / bytes within a tolerance, change the
replication factor, stay within a budget of moves or bytes, and balance a broker's log dirs
(``balance_disks``).

The input is a :class:`~kctl.reassign.layout.Layout` (the current replicas of the chosen
partitions, each partition's size, the brokers and their racks, the fenced brokers, the log dir
of each replica); :func:`plan` returns a :class:`~kctl.reassign.layout.Plan` (the new replica
lists, the log-dir moves and the figures); :mod:`kctl.reassign.report` turns it into the plan
document and the before/after figures. Same input, same plan: every choice is ordered by (load,
broker id) or (size, partition index), never by set or dict iteration order, and nothing is
random.

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
3. **Preferred leaders** (no data moves; :mod:`kctl.reassign.leaders`): a partition keeps its
   first replica where it still holds one; then leaderships pass from the broker with the most
   to a replica of the same partition with at least two fewer (greedy, one reorder each) while
   that helps; then, for the brokers still outside the band, augmenting paths (BFS over
   brokers, X -> Y when X leads a partition Y holds a replica of: a chain of reorders that
   changes only its ends' counts). Exact: the band is reached whenever some choice of leaders
   among the replicas reaches it.
4. **Log dirs** (``balance_disks``, greedy): per broker, replicas move from its fullest online
   log dir to its emptiest, the largest one not overshooting, until within the band.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterable, Iterator

from kctl.reassign.assign import TP, PlanError
from kctl.reassign.layout import METRICS, Goal, Layout, LowerBound, Plan
from kctl.reassign.leaders import balance_leaders
from kctl.reassign.load import Heaps, band


class _Planner:
    """The state of one plan: the new replica lists, the brokers' loads, the budget used; passes
    1, 2 and 4 and the lower bound as methods (pass 3: :mod:`kctl.reassign.leaders`)."""

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
        self.heaps = Heaps(
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
        lo, hi = band(mean, self.goal.tolerance, metric != "disk")
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
            c_lo, c_hi = band(sum(count.values()) / len(count), self.goal.tolerance, True)
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
            _lo, hi = band(mean, self.goal.tolerance, False)
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

    def lower_bound(self) -> LowerBound | None:
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
            out: LowerBound = {"replicas": k, "bytes": sum(copies[:k])}
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
        lo, hi = band(mean, self.goal.tolerance, not disk)
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
        lo, hi = band(total / len(p.eligible), goal.tolerance, p.metric != "disk")
        within = p.within(lo, hi)
    leader_changes = balance_leaders(p.new, p.orig, p.eligible, goal.tolerance, goal.keep_leaders)
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
