"""trec_eval's gain table (``gain_init.c``), for the gain measures (ndcg, dcg, ideal_dcg, ndcg_rel,
Rndcg, G, rbp), without numpy.

``setup_gains``: one entry per ``level=gain`` pair whose level is an integer (in the order
given), then one per grade 0..num_rel_levels-1 not named (gain = the grade); each grade's
document count goes to the first entry naming it. The entries are sorted by gain ascending
with glibc's ``qsort`` (a stable merge sort) and trec_eval's comparator, which returns the
difference of two gains *converted to int*: gains less than 1 apart compare equal (so
``ndcg.1=0.5`` leaves grade 1 below grade 0 in the ideal walk). ``get_gain``: the first entry
in sorted order with the label's level, else 0. The ideal ranking walks the entries from the
last one down, each repeated by its count, and stops at the first (counted) one whose gain is
<= 0.

>>> table = gain_table(((1, 3.0),), 3)
>>> [(e.level, e.gain) for e in table.entries], table.gain(1), table.gain(-1)
([(0, 0.0), (2, 2.0), (1, 3.0)], 3.0, 0.0)
>>> table.ideal({0: 5, 1: 2, 2: 1})
[3.0, 3.0, 2.0]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TypeVar

T = TypeVar("T")
INT_MIN = -(2 ** 31)


def c_int(x: float) -> int:
    """``(int) x`` as x86-64 converts a double (cvttsd2si): truncation toward zero, INT_MIN when
    the value does not fit (or is NaN)."""
    if x != x or not -2147483649.0 < x < 2147483648.0:
        return INT_MIN
    return int(x)


def merge_sort(items: list[T], cmp: Callable[[T, T], int]) -> list[T]:
    """glibc's ``qsort`` (msort.c): top-down merge sort, the left half first, taking from the left
    while ``cmp(left, right) <= 0`` (the same order as C for any comparator, consistent or not)."""
    n = len(items)
    if n <= 1:
        return list(items)
    left, right = merge_sort(items[:n // 2], cmp), merge_sort(items[n // 2:], cmp)
    out: list[T] = []
    i = j = 0
    while i < len(left) and j < len(right):
        if cmp(left[i], right[j]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


@dataclass(frozen=True)
class Entry:
    level: int
    gain: float
    counted: bool  # receives the count of documents at its level (the first entry naming the level)


@dataclass(frozen=True)
class GainTable:
    """Sorted gain entries for one parameter set and one number of relevance levels."""

    entries: tuple[Entry, ...]

    @property
    def default(self) -> bool:
        return all(e.counted and e.gain == e.level for e in self.entries)

    def gain(self, label: int) -> float:
        """get_gain: the first sorted entry with the label's level, else 0."""
        return self._gains.get(label, 0.0)

    @cached_property
    def _gains(self) -> dict[int, float]:
        out: dict[int, float] = {}
        for e in self.entries:
            out.setdefault(e.level, e.gain)
        return out

    def counts(self, rel_levels: Mapping[int, int]) -> list[int]:
        """The document count of each sorted entry."""
        return [rel_levels.get(e.level, 0) if e.counted else 0 for e in self.entries]

    def ideal(self, rel_levels: Mapping[int, int]) -> list[float]:
        """The ideal ranking's gains, best first: the walk of m_ndcg.c, positive gains only."""
        counts = self.counts(rel_levels)
        out: list[float] = []
        if not self.entries or self.entries[-1].gain <= 0:
            return out
        for e, n in zip(reversed(self.entries), reversed(counts)):
            if n == 0:
                continue
            if e.gain <= 0:
                break
            out += [e.gain] * n
        return out


def _compare(a: Entry, b: Entry) -> int:
    return c_int(a.gain - b.gain)


@lru_cache(maxsize=256)
def gain_table(pairs: tuple[tuple[int, float], ...], num_rel_levels: int) -> GainTable:
    """setup_gains for ``pairs`` (integer level, gain), in the order given, and grades
    0..num_rel_levels-1."""
    entries = [Entry(level, gain, False) for level, gain in pairs]
    named: dict[int, int] = {}
    for i, e in enumerate(entries):
        named.setdefault(e.level, i)
    for i in named.values():
        entries[i] = Entry(entries[i].level, entries[i].gain, True)
    entries += [Entry(i, float(i), True) for i in range(num_rel_levels) if i not in named]
    return GainTable(tuple(merge_sort(entries, _compare)))
