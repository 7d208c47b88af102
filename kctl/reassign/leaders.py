"""Pass 3 of the whole-cluster planner (:mod:`kctl.reassign.passes`), pure: balance preferred
leaders by reordering replica lists, no data moved. A partition keeps its first replica where it
still holds one; then leaderships pass from the broker with the most to a replica of the same
partition with at least two fewer (greedy, one reorder each) while that helps; then, for the
brokers still outside the band, augmenting paths (BFS over brokers, X -> Y when X leads a
partition Y holds a replica of: a chain of reorders that changes only its ends' counts). Exact:
the band is reached whenever some choice of leaders among the replicas reaches it."""

from __future__ import annotations

from collections.abc import Callable

from kctl.reassign.load import Heaps, band


def balance_leaders(
    new: list[list[int]],
    orig: list[list[int]],
    eligible: list[int],
    tolerance: float,
    keep_leaders: bool,
) -> int:
    """Balance preferred leaders among the ``eligible`` brokers by reordering the replica lists
    ``new`` in place (``orig``: the lists before the plan; ``keep_leaders``: reorder only the
    partitions whose replicas change); the number of partitions whose preferred leader changes.

    A partition keeps its first replica where it still holds one. Then direct passes (the
    lead of one partition from the broker with the most to a replica of it with at least
    two fewer) while they help; then augmenting paths (:func:`_chains`) for the brokers
    still outside the band. The paths are exact: when none exists, no assignment of the
    leaders to the replicas reaches the band (a cut of the max-flow formulation), so the
    band is reached whenever it can be."""
    count: dict[int, int] = {b: 0 for b in eligible}
    led: dict[int, list[int]] = {b: [] for b in eligible}
    pos: dict[int, int] = {}  # partition -> its index in led[its leader]
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
    lo, hi = band(total / len(eligible), tolerance, True)
    heaps = Heaps(dict(count), {b: None for b in eligible})
    cnt = heaps.load
    fixed = keep_leaders

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
    _chains(new, orig, eligible, fixed, cnt, led, lo, hi, give)
    return sum(1 for i, reps in enumerate(new) if reps and orig[i] and reps[0] != orig[i][0])


def _chains(
    new: list[list[int]],
    orig: list[list[int]],
    elig: list[int],
    fixed: bool,
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
    if all(lo <= cnt[b] <= hi for b in elig):
        return

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
