"""The kinds of generated questions and how many of each a test set gets.

``parse_kinds("single=0.5,multi=0.2,unanswerable=0.2,conversational=0.1")`` gives the shares;
``allocate(n, shares)`` turns them into counts that sum to ``n`` by the largest-remainder
(Hamilton) method: each kind gets ``floor(n * share / total)``, and the seats left go to the
largest fractional parts, ties in the order the kinds were written.
"""

from __future__ import annotations

import math
from fractions import Fraction

from ragmeter.core.errors import InvalidParameterError

KINDS = ("single", "multi", "unanswerable", "conversational")
DEFAULT = "single=0.5,multi=0.2,unanswerable=0.2,conversational=0.1"


def parse_kinds(spec: str) -> dict[str, float]:
    shares: dict[str, float] = {}
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        name, sep, value = part.partition("=")
        name = name.strip()
        if name not in KINDS:
            raise InvalidParameterError(f"unknown kind {name!r}: use {', '.join(KINDS)}")
        if name in shares:
            raise InvalidParameterError(f"kind {name!r} given twice")
        try:
            share = float(value) if sep else 1.0
        except ValueError:
            raise InvalidParameterError(f"the share of {name!r} must be a number, got {value!r}") from None
        if not math.isfinite(share) or share < 0:
            raise InvalidParameterError(f"the share of {name!r} must be a finite number >= 0, got {value!r}")
        shares[name] = share
    if not shares or sum(shares.values()) <= 0:
        raise InvalidParameterError("give at least one kind with a share above 0, e.g. single=1")
    return shares


def allocate(n: int, shares: dict[str, float]) -> dict[str, int]:
    """Counts per kind summing to ``n`` (largest remainder)."""
    if n < 0:
        raise InvalidParameterError(f"n must be >= 0, got {n}")
    exact = {k: Fraction(repr(s)) for k, s in shares.items()}  # 0.1 as 1/10, so 0.2+0.2+0.1 sums exactly
    total = sum(exact.values())
    quotas = {k: n * s / total for k, s in exact.items()}
    counts = {k: math.floor(q) for k, q in quotas.items()}
    left = n - sum(counts.values())
    order = sorted(shares, key=lambda k: -(quotas[k] - counts[k]))  # stable: ties keep the written order
    for k in order[:left]:
        counts[k] += 1
    return counts
