"""The data model of one evaluation sample: what was asked, retrieved, read and answered.

Samples are frozen. Readers build them; metrics only read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ragmeter.core.frozen import reduce_frozen


@dataclass(frozen=True, slots=True)
class Chunk:
    """One retrieved chunk: its id, and optionally the retriever's score and the text."""

    id: str
    score: float | None = None
    text: str | None = None


@dataclass(frozen=True, slots=True)
class Sample:
    """One question with its retrieval, context, answer and labels.

    - ``retrieved``: chunks in rank order (rank 1 first), as the retriever returned them.
    - ``relevance``: chunk id -> grade (a plain list of ids in the input means grade 1).
    - ``context``: chunk ids in the order they reached the prompt; ``None`` means the
      prompt received exactly the retrieved list (see :attr:`context_ids`).
    - ``answerable``: ``False`` marks a question the corpus cannot answer.
    - ``reference_claims`` / ``answer_claims``: claims written by hand, used instead of
      asking a judge to split the text.
    - ``answer_context``: the chunks the answer was written from when they are not this
      sample's own context: a request that retrieved several times becomes one sample per
      retrieval, and the one that carries the answer holds every retrieval's chunks here, so
      the answer is judged against all it read. ``None``: the context.
    """

    id: str
    question: str | None = None
    retrieved: tuple[Chunk, ...] = ()
    relevance: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    context: tuple[str, ...] | None = None
    answer: str | None = None
    reference: str | None = None
    answerable: bool = True
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    reference_claims: tuple[str, ...] | None = None  # given claims are used as given (no extraction call)
    answer_claims: tuple[str, ...] | None = None
    answer_context: tuple[Chunk, ...] | None = None  # several retrievals: every one's chunks (see above)

    __reduce__ = reduce_frozen  # the read-only mappings pickle as dicts

    @property
    def retrieved_ids(self) -> tuple[str, ...]:
        return tuple([c.id for c in self.retrieved])

    @property
    def context_ids(self) -> tuple[str, ...]:
        """What reached the prompt: the explicit context, or else the retrieved list."""
        return self.context if self.context is not None else self.retrieved_ids

    @property
    def answer_context_ids(self) -> tuple[str, ...]:
        """What the answer was written from: :attr:`answer_context`'s ids, else the context."""
        return tuple([c.id for c in self.answer_context]) if self.answer_context is not None else self.context_ids

    @property
    def has_labels(self) -> bool:
        return len(self.relevance) > 0

    def ranked_ids(self, view: str) -> tuple[str, ...]:
        """The ranked list a metric reads: ``'retrieved'`` or ``'context'``."""
        if view == "retrieved":
            return self.retrieved_ids
        if view == "context":
            return self.context_ids
        raise ValueError(f"unknown view {view!r}; use 'retrieved' or 'context'")
