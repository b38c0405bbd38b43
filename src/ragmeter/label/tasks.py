"""What a labeler sees: one task per question, with the candidate chunks to grade.

Candidates are the sample's retrieved list cut at ``k`` (the pool the system under test
returned), with texts from the data or the corpus. A sample with no retrieved list gets the
top ``k`` chunks of the corpus by the embedder's cosine similarity to the question (the
bundled MiniLM by default), so a bare list of questions can be labeled too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.sample import Sample


@dataclass(frozen=True)
class Candidate:
    id: str
    text: str
    source: str  # "retrieved" (the data's list) or "embedder" (top k of the corpus)


@dataclass(frozen=True)
class Task:
    index: int
    id: str
    question: str
    history: str
    candidates: tuple[Candidate, ...]

    def as_dict(self) -> dict:
        return {"index": self.index, "id": self.id, "question": self.question, "history": self.history,
                "candidates": [{"id": c.id, "text": c.text, "source": c.source} for c in self.candidates]}


def build_tasks(samples: Sequence[Sample], *, corpus: Mapping[str, str] | None = None, k: int = 10,
                embedder: Any = None) -> list[Task]:
    """One task per sample, in dataset order. ``embedder`` (an :class:`Embedder`, default the
    bundled MiniLM) is loaded only when some sample has no retrieved list."""
    if k < 1:
        raise InvalidInputError(f"k must be at least 1, got {k}", field="k")
    corpus = corpus or {}
    bare = [s for s in samples if not s.retrieved]
    found: dict[str, list[str]] = {}
    if bare:
        if not corpus:
            raise InvalidInputError(f"{len(bare)} sample(s) have no retrieved list, e.g. {bare[0].id!r}",
                                    field="retrieved", fix="give --corpus, so candidates come from the corpus "
                                                           "by embedding similarity")
        from ragmeter.embeddings.search import DenseIndex

        if embedder is None:
            from ragmeter.embeddings.minilm import bundled

            embedder = bundled()
        index = DenseIndex(corpus, embedder)
        for s, hits in zip(bare, index.search([s.question or "" for s in bare], k)):
            found[s.id] = [cid for cid, _ in hits]
    tasks = []
    for i, s in enumerate(samples):
        if not s.question:
            raise InvalidInputError("has no question to label", record=s.id, field="question")
        if s.id in found:
            cands = tuple(Candidate(cid, corpus[cid], "embedder") for cid in found[s.id])
        else:
            cands = tuple(Candidate(c.id, _text(s, c.id, c.text, corpus), "retrieved") for c in s.retrieved[:k])
        history = str(s.metadata.get("history") or "")
        tasks.append(Task(i, s.id, s.question, "" if history == "(none)" else history, cands))
    return tasks


def _text(s: Sample, cid: str, text: str | None, corpus: Mapping[str, str]) -> str:
    if text is not None:
        return text
    if cid in corpus:
        return corpus[cid]
    raise InvalidInputError(f'chunk "{cid}" has no text to show', record=s.id, field="retrieved",
                            fix="give chunk texts in the data or with --corpus")


def tasks_from_labels(samples: Sequence[Sample], grades_by_sample: Mapping[str, Sequence[str]], *,
                      k: int = 10) -> list[Task]:
    """Tasks for agreement and export, without texts or an embedder: each sample's retrieved list
    cut at ``k``, then any other chunk the labels file graded for it (sorted by id)."""
    tasks = []
    for i, s in enumerate(samples):
        ids = [c.id for c in s.retrieved[:k]]
        ids += sorted(set(grades_by_sample.get(s.id, ())) - set(ids))
        tasks.append(Task(i, s.id, s.question or "", "", tuple(Candidate(cid, "", "labels") for cid in ids)))
    return tasks
