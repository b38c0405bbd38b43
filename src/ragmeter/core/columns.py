"""``LabelColumns``: a label-only dataset held as columns, so label metrics never build a
``Sample`` per record.

A dataset whose every record is a plain label record (an id, a question, the retrieved ids and
the relevance labels, nothing judged) is read into three parallel lists: each sample's id, its
retrieved ids in rank order and its id -> grade labels (grades as floats). They are exactly what
``Sample.id``, ``Sample.ranked_ids("retrieved")`` and ``Sample.relevance`` give for the sample
built from the same record, so a kernel fed from either scores the same numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ragmeter.core.sample import Sample


@dataclass(frozen=True, slots=True)
class LabelColumns:
    """Per-sample ids, ranked retrieved ids and relevance labels, in dataset order."""

    ids: Sequence[str]
    retrieved: Sequence[Sequence[str]]  # Sample.ranked_ids("retrieved")
    relevance: Sequence[Mapping[str, float]]  # Sample.relevance (float grades)

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def from_samples(cls, samples: Sequence[Sample]) -> LabelColumns:
        """The columns of samples already built (tests, and data given as samples)."""
        return cls([s.id for s in samples], [s.ranked_ids("retrieved") for s in samples],
                   [s.relevance for s in samples])
