"""RAGChecker (Ru et al. 2024, amazon-science/RAGChecker): its ``checking_inputs.json`` and
``checking_outputs.json``.

- Inputs: ``{"results": [...]}`` (:mod:`ragmeter.io.shapes` reads the list), each with
  ``query_id``, ``query``, ``gt_answer`` (the reference), ``response``, ``retrieved_context``
  (``[{"doc_id", "text"}]``, rank order).
- Outputs: ``response_claims`` and ``gt_answer_claims`` (triplets, joined by spaces) become the
  answer's and the reference's claims (no extraction call), and its entailment labels and
  metrics (``answer2response``, ..., ``metrics``) are kept in ``metadata["ragchecker"]``, and
  its verdicts per claim in ``metadata["verdicts"]`` (``--judge given`` reads them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.io.formats.base import RETRIEVED_DOCUMENTS, ContextField, Format, RecordReader, give

CLAIMS = {"response_claims": "answer_claims", "gt_answer_claims": "reference_claims"}
KEPT = ("answer2response", "response2answer", "retrieved2response", "retrieved2answer", "metrics")


def is_output(row: Mapping[str, Any]) -> bool:
    return any(k in row for k in CLAIMS)


def read_output(row: Mapping[str, Any]) -> dict[str, Any]:
    """A ``checking_outputs.json`` record: its claims as ragmeter's, its labels in metadata."""
    out = {k: v for k, v in row.items() if k not in CLAIMS and k not in KEPT}
    given_by: dict[str, str] = {}
    for name, target in CLAIMS.items():
        if name not in row:
            continue
        value = row[name]
        if not isinstance(value, list) or not all(
                isinstance(c, str) or (isinstance(c, list) and all(isinstance(p, str) for p in c)) for c in value):
            raise InvalidInputError("must be a list of claims (triplets of strings, or strings)", field=name)
        give(out, target, name, [c if isinstance(c, str) else " ".join(c) for c in value], given_by)
    kept = {k: row[k] for k in KEPT if k in row}
    if kept:
        metadata = row.get("metadata") or {}
        if not isinstance(metadata, Mapping):
            raise InvalidInputError("must be an object", field="metadata")
        out["metadata"] = {**metadata, "ragchecker": kept}
        verdicts = read_verdicts(row)
        if verdicts:
            out["metadata"]["verdicts"] = verdicts
    return out


# RAGChecker's checking results -> the claim lists and sources they judge (ragmeter's pair names)
PAIRS = {"retrieved2response": "answer@context", "retrieved2answer": "reference@context",
                    "answer2response": "answer@reference", "response2answer": "reference@answer"}
LABELS = {"Entailment": "supported", "Contradiction": "contradicted", "Neutral": "not_found"}


def read_verdicts(row: Mapping[str, Any]) -> dict[str, list[dict]]:
    """RAGChecker's own verdicts, per claim, as ragmeter's (``--judge given`` reads them): a claim
    is supported when some chunk entails it (RAGChecker checks each chunk alone), else
    contradicted when one contradicts it, else not found; its sources are those chunks. Against
    the reference or the answer, the one label is the verdict."""
    chunks = [c.get("doc_id") if isinstance(c, Mapping) else None for c in row.get("retrieved_context") or []]
    out: dict[str, list[dict]] = {}
    for field, pair in PAIRS.items():
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
            bad = [v for v in each if v not in LABELS]
            if bad:
                raise InvalidInputError(f"unknown label {bad[0]!r}: RAGChecker's labels are "
                                        f"{', '.join(LABELS)}", field=field)
            verdict, sources = "not_found", []
            for label in ("Entailment", "Contradiction"):
                sources = [str(cid) for cid, v in zip(ids, each) if v == label]
                if sources:
                    verdict = LABELS[label]
                    break
            verdicts.append({"verdict": verdict, "sources": sources})
        out[pair] = verdicts
    return out



FORMAT = Format(
    name="ragchecker",
    tried="RAGChecker's (query, response, gt_answer, retrieved_context; a .json file {\"results\": [...]})",
    aliases={"query_id": "id", "query": "question", "gt_answer": "reference"},
    contexts={"retrieved_context": ContextField(RETRIEVED_DOCUMENTS)},
    record=RecordReader(is_output, read_output),
)
