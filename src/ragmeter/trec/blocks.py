"""Consecutive topics grouped for padded (topics x longest) matrices of bounded size.

Row-wise numpy work (sorts, gathers) on a matrix of ~2^14 to 2^16 cells stays in cache and
reuses freed memory; a topic longer than the bound gets a group of its own.
"""

from __future__ import annotations

import numpy as np


def padded_groups(counts: np.ndarray, cells: int) -> list[tuple[int, int]]:
    """Topic ranges [a, b) whose padded matrix (b - a) x max(counts[a:b]) stays within ``cells``."""
    out, a, n = [], 0, len(counts)
    while a < n:
        b, widest = a + 1, int(counts[a])
        while b < n and max(widest, int(counts[b])) * (b - a + 1) <= cells:
            widest, b = max(widest, int(counts[b])), b + 1
        out.append((a, b))
        a = b
    return out
