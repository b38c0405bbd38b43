"""``ScoreColumn``: one measure's outcomes over all samples, held as arrays.

A label measure scores every sample at once; holding each result as a
:class:`~ragmeter.core.results.Score` object costs an object per sample and measure
(250,000 for 50,000 samples x 5 measures). A column keeps the values as one float64 array,
the provenance once, and the samples not computed as reason codes, and builds each
``Score`` / ``NotComputed`` only when one is read: it is a ``Sequence[Outcome]`` equal to
the tuple of outcomes it stands for, so ``result["mrr"][3]``, iteration, ``len`` and
comparisons work as on a tuple, while means, summaries and the JSON output read the arrays.
An outcome once built is kept, so reading it twice gives the same object, as a tuple does.

>>> from ragmeter.core.results import Provenance
>>> prov = Provenance("m@5", "m", 1, {}, 5, "retrieved", "0")
>>> col = ScoreColumn(np.array([0.5, np.nan, 1.0]), prov, np.array([-1, 0, -1]), ("no labels",))
>>> col[0], col[1].reason, len(col), col.scored_values().tolist()
(Score(value=0.5), 'no labels', 3, [0.5, 1.0])
>>> col == (Score(0.5, prov), NotComputed("no labels", prov), Score(1.0, prov))
True
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any, overload

import numpy as np

from ragmeter.core.results import NotComputed, Outcome, Provenance, Score


class ScoreColumn(Sequence[Outcome]):
    """Per-sample values (float64; any value where not scored), the provenance, and per
    sample the index into ``reasons`` of why it was not computed (-1: scored).

    Immutable: the arrays are copied read-only."""

    __slots__ = ("_values", "_provenance", "_codes", "_reasons", "_all_scored", "_built", "_mean")

    def __init__(self, values: np.ndarray, provenance: Provenance, codes: np.ndarray | None = None,
                 reasons: Sequence[str] = ()) -> None:
        v = np.array(values, dtype=np.float64)
        v.setflags(write=False)
        c = np.full(len(v), -1, dtype=np.int64) if codes is None else np.array(codes, dtype=np.int64)
        c.setflags(write=False)
        if c.shape != v.shape:
            raise ValueError(f"ScoreColumn: {len(c)} reason codes for {len(v)} values")
        if len(c) and (c.max() >= len(reasons) or c.min() < -1):
            raise ValueError("ScoreColumn: a reason code out of range")
        self._values, self._provenance, self._codes, self._reasons = v, provenance, c, tuple(reasons)
        self._all_scored = bool((c < 0).all())
        self._built: list[Outcome | None] | None = None  # the outcomes read so far, by index
        self._mean: tuple[float | None] | None = None

    @property
    def provenance(self) -> Provenance:
        return self._provenance

    @property
    def values(self) -> np.ndarray:
        """Every sample's value (read-only; meaningless where not scored: see :attr:`scored`)."""
        return self._values

    @property
    def scored(self) -> np.ndarray:
        """Per sample: whether it was scored."""
        return self._codes < 0

    @property
    def all_scored(self) -> bool:
        return self._all_scored

    def scored_values(self) -> np.ndarray:
        """The scored samples' values, in sample order."""
        return self._values if self._all_scored else self._values[self._codes < 0]

    def mean(self) -> float | None:
        """fsum of the scored values / their count (``None`` if none), computed once (the
        result's repr, ``means()`` and the summary read it)."""
        if self._mean is None:
            scored = self.scored_values()
            self._mean = (exact_mean(scored.tolist()),)
        return self._mean[0]

    def value_list(self) -> list[float | None]:
        """Per sample: the value as a Python float, ``None`` where not scored."""
        out: list[float | None] = self._values.tolist()
        if not self._all_scored:
            for i in np.flatnonzero(self._codes >= 0).tolist():
                out[i] = None
        return out

    def not_scored_reasons(self) -> list[str]:
        """The reasons of the samples not computed, in sample order."""
        if self._all_scored:
            return []
        return [self._reasons[c] for c in self._codes[self._codes >= 0].tolist()]

    def _at(self, i: int) -> Outcome:
        built = self._built
        if built is None:
            built = self._built = [None] * len(self._values)
        outcome = built[i]
        if outcome is None:
            code = int(self._codes[i])
            outcome = built[i] = (Score(float(self._values[i]), self._provenance) if code < 0
                                  else NotComputed(self._reasons[code], self._provenance))
        return outcome

    def __len__(self) -> int:
        return len(self._values)

    @overload
    def __getitem__(self, index: int) -> Outcome: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Outcome, ...]: ...

    def __getitem__(self, index: int | slice) -> Outcome | tuple[Outcome, ...]:
        if isinstance(index, slice):  # as a tuple slices: a tuple
            return tuple(self._at(i) for i in range(*index.indices(len(self))))
        n = len(self)
        i = index.__index__()
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("ScoreColumn index out of range")
        return self._at(i)

    def __iter__(self) -> Iterator[Outcome]:
        if self._built is None:  # every outcome built at once, and kept
            prov, reasons = self._provenance, self._reasons
            self._built = [Score(value, prov) if code < 0 else NotComputed(reasons[code], prov)
                           for value, code in zip(self._values.tolist(), self._codes.tolist())]
        for i in range(len(self._values)):
            yield self._at(i)

    def __eq__(self, other: object) -> bool:
        """Equal to a tuple of the same outcomes (as the tuple it stands for is) or another column."""
        if isinstance(other, ScoreColumn):
            if self._provenance != other._provenance or len(self) != len(other):
                return False
            return tuple(self) == tuple(other)
        if isinstance(other, tuple):
            return tuple(self) == other
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None  # type: ignore[assignment]  # equal to a tuple, so not hashable apart from it

    def __repr__(self) -> str:
        head = ", ".join(repr(o) for o in self[:3])
        more = f", ... {len(self) - 3} more" if len(self) > 3 else ""
        return f"ScoreColumn({head}{more})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (ScoreColumn, (self._values, self._provenance, self._codes, self._reasons))


def exact_mean(values: Sequence[float]) -> float | None:
    """fsum(values) / n: exact, so no order of the values can move it; ``None`` if empty. Where
    the sum passes the largest float though the mean does not (two scores of 1e308, a metric of
    one's own), the sum of values / n, exact in the same way.

    >>> exact_mean([0.1] * 10), exact_mean([1e308, 1e308]), exact_mean([])
    (0.1, 1e+308, None)
    """
    n = len(values)
    if not n:
        return None
    try:
        return math.fsum(values) / n
    except OverflowError:  # "intermediate overflow in fsum"
        return math.fsum(v / n for v in values)
