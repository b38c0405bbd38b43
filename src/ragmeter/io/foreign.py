"""Ragas and DeepEval field names, with contexts given as texts, mapped onto ragmeter's fields.

- Ragas (``SingleTurnSample``): ``user_input``, ``retrieved_contexts`` (texts, rank order),
  ``response``, ``reference``, ``reference_contexts`` (texts); ``retrieved_context_ids`` /
  ``reference_context_ids`` when the data has ids. The older names: ``question``,
  ``contexts``, ``answer``, ``ground_truth`` / ``ground_truths`` (joined by newlines).
- DeepEval (``LLMTestCase``): ``input``, ``actual_output``, ``expected_output``,
  ``retrieval_context`` (texts, rank order) and ``context`` (the ideal context, texts). In a
  row with ``retrieval_context``, ``context`` is DeepEval's; otherwise it is ragmeter's own
  field (the chunk ids that reached the prompt).

- RAGChecker (``checking_inputs.json``): ``query_id``, ``query``, ``gt_answer`` (the reference),
  ``response``, ``retrieved_context`` (``[{"doc_id", "text"}]``, rank order). Its
  ``checking_outputs.json`` too: ``response_claims`` and ``gt_answer_claims`` (triplets, joined
  by spaces) become the answer's and the reference's claims (no extraction call), and its
  entailment labels and metrics (``answer2response``, ..., ``metrics``) are kept in
  ``metadata["ragchecker"]``.

A context given as text becomes a chunk whose id is :func:`content_id` of the text, so the
same text gets the same id in every row. Reference contexts given as texts become relevance
labels (grade 1) by exact text match: a retrieved text is relevant when it is character for
character one of the reference texts (no case, whitespace or Unicode folding).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from ragmeter.core.errors import InvalidInputError

# Names other tools use for the same fields; one table, so aliases never spread.
ALIASES = {
    "query_id": "id", "qid": "id", "sample_id": "id",
    "query": "question", "user_input": "question", "input": "question",
    "retrieved_ids": "retrieved", "relevant_ids": "relevant", "relevance": "relevant", "labels": "relevant",
    "context_ids": "context",
    "response": "answer", "actual_output": "answer",
    "reference_answer": "reference", "ground_truth": "reference", "expected_output": "reference",
    "gt_answer": "reference",  # RAGChecker
}

RETRIEVED_TEXTS = ("retrieved_contexts", "contexts", "retrieval_context")  # rank order
REFERENCE_TEXTS = ("reference_contexts",)
#: Every field name this module reads (objects are read through these attribute names too).
NAMES = (*RETRIEVED_TEXTS, *REFERENCE_TEXTS, "retrieved_context_ids", "reference_context_ids", "ground_truths",
         "context", "retrieved_context")


def content_id(text: str) -> str:
    """The chunk id of a context given as text: ``text-`` and the first 16 hex digits of the
    SHA-256 of its UTF-8 bytes (stable across rows, runs and machines).

    >>> content_id("abc")
    'text-ba7816bf8f01cfea'
    """
    return "text-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _texts(row: Mapping[str, Any], name: str) -> list[str]:
    value = row[name]
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        got = "a string" if isinstance(value, str) else type(value).__name__
        raise InvalidInputError(f"must be a list of texts, got {got}",
                                field=name, fix='write ["first passage", "second passage"]')
    for i, t in enumerate(value, start=1):
        if not isinstance(t, str):
            raise InvalidInputError(f"item {i} must be a text, got {type(t).__name__}", field=name)
    return list(value)


def _ids(row: Mapping[str, Any], name: str) -> list[Any]:
    value = row[name]
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise InvalidInputError("must be a list of chunk ids", field=name, fix='write ["id1", "id2"]')
    return list(value)


def _doc_chunks(value: Any) -> list[dict[str, Any]]:
    """RAGChecker's ``retrieved_context``: ``[{"doc_id", "text"}]`` -> chunks (a text alone
    gets its content id)."""
    if not isinstance(value, (list, tuple)):
        raise InvalidInputError(f"must be a list of passages, got {type(value).__name__}", field="retrieved_context",
                                fix='write [{"doc_id": "d1", "text": "..."}]')
    chunks = []
    for i, item in enumerate(value, start=1):
        if isinstance(item, str):
            chunks.append({"id": content_id(item), "text": item})
            continue
        if not isinstance(item, Mapping) or not isinstance(item.get("text"), str):
            raise InvalidInputError(f"item {i} must be an object with a \"text\"", field="retrieved_context",
                                    fix='write {"doc_id": "d1", "text": "..."}')
        doc = item.get("doc_id", item.get("id"))
        chunks.append({"id": content_id(item["text"]) if doc is None else doc, "text": item["text"]})
    return chunks


def _give(out: dict[str, Any], target: str, source: str, value: Any, given_by: dict[str, str]) -> None:
    if target in out or target in given_by:
        other = given_by.get(target, target)
        raise InvalidInputError(f'"{source}" and "{other}" both give "{target}"', field=source,
                                fix="keep only one of them")
    out[target] = value
    given_by[target] = source


RAGCHECKER_CLAIMS = {"response_claims": "answer_claims", "gt_answer_claims": "reference_claims"}
RAGCHECKER_KEPT = ("answer2response", "response2answer", "retrieved2response", "retrieved2answer", "metrics")


def _ragchecker_outputs(row: Mapping[str, Any]) -> dict[str, Any]:
    """A ``checking_outputs.json`` record: its claims as ragmeter's, its labels in metadata."""
    out = {k: v for k, v in row.items() if k not in RAGCHECKER_CLAIMS and k not in RAGCHECKER_KEPT}
    given_by: dict[str, str] = {}
    for name, target in RAGCHECKER_CLAIMS.items():
        if name not in row:
            continue
        value = row[name]
        if not isinstance(value, list) or not all(
                isinstance(c, str) or (isinstance(c, list) and all(isinstance(p, str) for p in c)) for c in value):
            raise InvalidInputError("must be a list of claims (triplets of strings, or strings)", field=name)
        _give(out, target, name, [c if isinstance(c, str) else " ".join(c) for c in value], given_by)
    kept = {k: row[k] for k in RAGCHECKER_KEPT if k in row}
    if kept:
        metadata = row.get("metadata") or {}
        if not isinstance(metadata, Mapping):
            raise InvalidInputError("must be an object", field="metadata")
        out["metadata"] = {**metadata, "ragchecker": kept}
        verdicts = _ragchecker_verdicts(row)
        if verdicts:
            out["metadata"]["verdicts"] = verdicts
    return out


# RAGChecker's checking results -> the claim lists and sources they judge (ragmeter's pair names)
RAGCHECKER_PAIRS = {"retrieved2response": "answer@context", "retrieved2answer": "reference@context",
                    "answer2response": "answer@reference", "response2answer": "reference@answer"}
RAGCHECKER_LABELS = {"Entailment": "supported", "Contradiction": "contradicted", "Neutral": "not_found"}


def _ragchecker_verdicts(row: Mapping[str, Any]) -> dict[str, list[dict]]:
    """RAGChecker's own verdicts, per claim, as ragmeter's (``--judge given`` reads them): a claim
    is supported when some chunk entails it (RAGChecker checks each chunk alone), else
    contradicted when one contradicts it, else not found; its sources are those chunks. Against
    the reference or the answer, the one label is the verdict."""
    chunks = [c.get("doc_id") if isinstance(c, Mapping) else None for c in row.get("retrieved_context") or []]
    out: dict[str, list[dict]] = {}
    for field, pair in RAGCHECKER_PAIRS.items():
        labels = row.get(field)
        if labels is None:
            continue
        per_chunk = field.startswith("retrieved")
        if not isinstance(labels, list) or not all(
                (isinstance(x, list) and len(x) == len(chunks)) if per_chunk else isinstance(x, str) for x in labels):
            shape = "one list of labels per claim, a label per retrieved chunk" if per_chunk else "one label per claim"
            raise InvalidInputError(f"must be {shape}", field=field)
        source = pair.split("@")[1]
        verdicts = []
        for x in labels:
            each = x if per_chunk else [x]
            ids = chunks if per_chunk else [source]
            bad = [v for v in each if v not in RAGCHECKER_LABELS]
            if bad:
                raise InvalidInputError(f"unknown label {bad[0]!r}: RAGChecker's labels are "
                                        f"{', '.join(RAGCHECKER_LABELS)}", field=field)
            verdict, sources = "not_found", []
            for label in ("Entailment", "Contradiction"):
                sources = [str(cid) for cid, v in zip(ids, each) if v == label]
                if sources:
                    verdict = RAGCHECKER_LABELS[label]
                    break
            verdicts.append({"verdict": verdict, "sources": sources})
        out[pair] = verdicts
    return out


def native_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    """``row`` with the Ragas / DeepEval context fields turned into ``retrieved`` (chunk
    objects with text) and ``relevant`` (chunk ids), RAGChecker's claims into ``answer_claims``
    and ``reference_claims``. Other fields are left to the row reader (its alias table maps
    ``user_input``, ``response``, ``input`` and the rest)."""
    if any(k in row for k in RAGCHECKER_CLAIMS):
        row = _ragchecker_outputs(row)
    present = [n for n in NAMES if n in row and row[n] is not None]
    deepeval_context = "retrieval_context" in present and "context" in present
    if not present or present == ["context"]:
        return dict(row)  # ragmeter's own row: "context" holds chunk ids
    out = {k: v for k, v in row.items() if k not in NAMES or (k == "context" and not deepeval_context)}
    given_by: dict[str, str] = {}
    retrieved = [n for n in RETRIEVED_TEXTS if n in present]
    for name in retrieved:
        texts = _texts(row, name)
        if "retrieved_context_ids" in present:
            ids = _ids(row, "retrieved_context_ids")
            if len(ids) != len(texts):
                raise InvalidInputError(f"has {len(ids)} ids for {len(texts)} texts in \"{name}\"",
                                        field="retrieved_context_ids", fix="give one id per retrieved text")
        else:
            ids = [content_id(t) for t in texts]
        _give(out, "retrieved", name, [{"id": i, "text": t} for i, t in zip(ids, texts)], given_by)
    if "retrieved_context" in present:
        _give(out, "retrieved", "retrieved_context", _doc_chunks(row["retrieved_context"]), given_by)
    if "retrieved_context_ids" in present and not retrieved:
        _give(out, "retrieved", "retrieved_context_ids", _ids(row, "retrieved_context_ids"), given_by)
    if "reference_context_ids" in present:
        _give(out, "relevant", "reference_context_ids", _ids(row, "reference_context_ids"), given_by)
    reference_texts = [n for n in REFERENCE_TEXTS if n in present] + (["context"] if deepeval_context else [])
    for name in reference_texts:
        if "reference_context_ids" in present:
            continue  # the ids say which chunks are relevant; the texts add nothing to the labels
        labels = list(dict.fromkeys(content_id(t) for t in _texts(row, name)))
        _give(out, "relevant", name, labels, given_by)
    if "ground_truths" in present:
        _give(out, "reference", "ground_truths", "\n".join(_texts(row, "ground_truths")), given_by)
    return out
