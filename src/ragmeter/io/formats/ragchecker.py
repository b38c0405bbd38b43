"""RAGChecker (Ru et al. 2024, amazon-science/RAGChecker): its ``checking_inputs.json`` and
``checking_outputs.json``.

- Inputs: ``{"results": [...]}`` (:mod:`ragmeter.io.shapes` reads the list), each with
  ``query_id``, ``query``, ``gt_answer`` (the reference), ``response``, ``retrieved_context``
  (``[{"doc_id", "text"}]``, rank order).
- Outputs: ``response_claims`` and ``gt_answer_claims`` (triplets, joined by spaces) become the
  answer's and the reference's claims (no extraction call), and its entailment labels and
  metrics (``answer2response``, ..., ``metrics``) are kept in ``metadata["ragchecker"]``.
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
    return out


FORMAT = Format(
    name="ragchecker",
    tried="RAGChecker's (query, response, gt_answer, retrieved_context; a .json file {\"results\": [...]})",
    aliases={"query_id": "id", "query": "question", "gt_answer": "reference"},
    contexts={"retrieved_context": ContextField(RETRIEVED_DOCUMENTS)},
    record=RecordReader(is_output, read_output),
)
