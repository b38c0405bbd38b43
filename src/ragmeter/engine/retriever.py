"""Score a live retriever: call it on each question, then score its ranked ids.

Accepted retrievers (duck-typed, no hard dependency on any framework):

- any callable ``f(question) -> ranked items`` (a function, or ``f(question, k)`` if it takes k);
- a LangChain retriever (has ``.invoke``) returning ``Document``s;
- a LlamaIndex retriever (has ``.retrieve``) returning ``NodeWithScore``s.

Items may be ids (str), dicts with ``id``/``chunk_id``, LangChain Documents (``.id`` or
``metadata["id"]``), or LlamaIndex nodes (``.node.node_id``). A retriever that returns the
same id twice, or an item with no id, is an error naming the sample.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.sample import Chunk, Sample
from ragmeter.core.settings import DEFAULTS
from ragmeter.engine.evaluate import evaluate
from ragmeter.io.dataset import from_samples, load_dataset


def _caller(retriever: Any, k: int | None) -> Callable[[str], Any]:
    if hasattr(retriever, "invoke") and not inspect.isfunction(retriever):
        return retriever.invoke
    if hasattr(retriever, "retrieve") and not inspect.isfunction(retriever):
        return retriever.retrieve
    if callable(retriever):
        try:
            takes_k = len(inspect.signature(retriever).parameters) >= 2
        except (TypeError, ValueError):
            takes_k = False
        return (lambda q: retriever(q, k)) if takes_k else retriever
    raise TypeError("retriever must be callable, or have .invoke (LangChain) or .retrieve (LlamaIndex)")


def _chunk(item: Any) -> Chunk:
    if isinstance(item, str):
        return Chunk(item)
    if isinstance(item, dict):
        cid = item.get("id", item.get("chunk_id"))
        return Chunk(_str_id(cid), item.get("score"), item.get("text"))
    node = getattr(item, "node", None)
    if node is not None:  # LlamaIndex NodeWithScore
        cid = getattr(node, "node_id", None) or getattr(node, "id_", None)
        text = getattr(node, "text", None)
        return Chunk(_str_id(cid), getattr(item, "score", None), text)
    metadata = getattr(item, "metadata", None) or {}
    cid = getattr(item, "id", None) or metadata.get("id") or metadata.get("chunk_id")
    return Chunk(_str_id(cid), metadata.get("score"), getattr(item, "page_content", None))


def _str_id(cid: Any) -> str:
    if isinstance(cid, int) and not isinstance(cid, bool):
        return str(cid)
    if not isinstance(cid, str) or not cid:
        raise ValueError(f"has no usable id (got {cid!r})")
    return cid


def retrieve_all(retriever: Any, samples: Sequence[Sample], k: int | None) -> list[Sample]:
    """Return new samples whose ``retrieved`` list is what the retriever returns now."""
    call = _caller(retriever, k)
    out = []
    for s in samples:
        if not s.question:
            raise InvalidInputError("has no question to send to the retriever", record=s.id, field="question")
        chunks: list[Chunk] = []
        seen: set[str] = set()
        for rank, item in enumerate(call(s.question), start=1):
            try:
                chunk = _chunk(item)
            except ValueError as exc:
                raise InvalidInputError(f"retrieved item {rank} {exc}", record=s.id, field="retrieved") from None
            if chunk.id in seen:
                raise InvalidInputError(f'the retriever returned chunk "{chunk.id}" twice', record=s.id,
                                        field="retrieved")
            seen.add(chunk.id)
            chunks.append(chunk)
        out.append(dataclasses.replace(s, retrieved=tuple(chunks), context=None))
    return out


def evaluate_retriever(
    retriever: Any,
    dataset: Any,
    k: int | None = DEFAULTS.k,
    metrics: Iterable[str] | None = None,
) -> EvaluationResult:
    """Run ``retriever`` on every question of ``dataset`` and score the ranked ids at ``k``.

    ``dataset``: anything :func:`ragmeter.load_dataset` reads (a path, a list of dicts or samples,
    a DataFrame, a :class:`Dataset`), as :func:`ragmeter.evaluate` takes it."""
    if isinstance(dataset, Iterator):  # a generator of samples: read it once
        dataset = list(dataset)
    samples = load_dataset(dataset).samples
    return evaluate(from_samples(retrieve_all(retriever, samples, k)), metrics, k=k)
