"""The ``stale_chunk`` failure point: the context supports a fact that the record contradicts.

The diagnosis row of the article "RAG Evaluation Metrics: Formulas and a Worked Example"
"faithfulness high, facts wrong in the system of record: the
retrieved chunk is stale". Per failing fact: if its claim is *supported* in the claim
matrix's answer-vs-context verdicts, the chunks behind that verdict hold the stale text,
and they are named. A failing fact whose claim the context does not support is a
generation fault (the model changed or invented the value), not a stale chunk.

This module reads the claim matrix through small protocols (anything with ``verdicts``
and ``answer_claims`` shaped like :class:`ragmeter.evidence.matrix.Evidence`), so it needs
nothing above the records layer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ragmeter.records.facts import Fact, FactCheck
from ragmeter.records.types import RecordValue
from ragmeter.records.verdicts import FAIL

LABEL = "stale_chunk"
ANSWER_AT_CONTEXT = "answer@context"


class MatrixLike(Protocol):
    @property
    def verdicts(self) -> Mapping[str, Any]: ...

    @property
    def answer_claims(self) -> Any: ...


@dataclass(frozen=True)
class StaleChunk:
    """A fact the context supports and the record contradicts, with the chunks behind it."""

    claim_id: int
    claim: str | None
    chunks: tuple[str, ...]
    quote: str
    fact: Fact
    record: RecordValue

    @property
    def evidence(self) -> str:
        said = f'claim {self.claim_id}' + (f' "{self.claim}"' if self.claim else "")
        quote = f' ("{self.quote}")' if self.quote else ""
        return (f"{said} is supported by {', '.join(self.chunks) or 'the context'}{quote}, but the record says "
                f"{self.fact.attribute} of {self.fact.entity} is {self.record.describe()}")


def find_stale_chunks(matrix: MatrixLike, checks: Sequence[FactCheck]) -> tuple[list[StaleChunk], str | None]:
    """(the stale-chunk findings, why the label could not be checked or None).

    Not checked: no fact checks (no records source, or no facts), or the answer-vs-context
    verdicts are missing (not requested, or the judgment failed)."""
    if not checks:
        return [], "no fact was checked against the records"
    verdicts = matrix.verdicts.get(ANSWER_AT_CONTEXT)
    if not isinstance(verdicts, tuple):
        reason = getattr(verdicts, "reason", None) or "the answer claims were not verified against the context"
        return [], f"no answer-vs-context verdicts: {reason}"
    by_claim = {v.claim: v for v in verdicts}
    claims = matrix.answer_claims
    texts = {c.id: c.text for c in claims} if isinstance(claims, tuple) else {}
    found: list[StaleChunk] = []
    for check in checks:
        if check.verdict != FAIL or check.record is None or check.fact.claim_id is None:
            continue
        v = by_claim.get(check.fact.claim_id)
        if v is None or v.verdict != "supported":
            continue
        found.append(StaleChunk(check.fact.claim_id, texts.get(check.fact.claim_id), tuple(v.sources), v.quote,
                                check.fact, check.record))
    return found, None
