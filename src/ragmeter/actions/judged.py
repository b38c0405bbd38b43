"""The judge behind ``never_claim`` and ``when.claims_state``: the claim matrix's own check.

``verifier(judge)`` returns the callback :func:`ragmeter.actions.grade.grade_case` takes. It
asks the ``claims.verify`` prompt with the answer's claims as the evidence (passages
``claim-1``, ``claim-2``, ...) and the statements as the claims to verify: a statement is
*made* by the answer when the verdict is ``supported``; the passages behind it name the
claims. One judge call per (statements, claims), stored in the judge's ledger like every
judgment.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragmeter.actions.grade import VerifyFn
from ragmeter.judges.judge import Judge, JudgeRequest
from ragmeter.judges.prompts import load_prompt
from ragmeter.judges.replies import Keyed
from ragmeter.judges.schemas import VERIFY


@dataclass(frozen=True)
class StatementCheck:
    verdict: str  # supported (the answer makes the statement) | contradicted | not_found
    sources: tuple[str, ...] = ()  # the answer claims behind it ("claim-2")
    quote: str = ""


def statement_request(statements: Sequence[str], claims: Sequence[Any]) -> JudgeRequest:
    """The ``claims.verify`` request: the answer's claims as evidence, the statements as claims."""
    evidence = "\n".join(f"[claim-{c.id}] {c.text}" for c in claims)
    listing = "\n".join(f"{i}. {s}" for i, s in enumerate(statements, start=1))
    ids = tuple(range(1, len(statements) + 1))
    return JudgeRequest(load_prompt("claims.verify"), {"evidence": evidence, "claims": listing}, VERIFY, "verdicts",
                        Keyed("verdicts", "id", ids),
                        parts={"passages": [(f"claim-{c.id}", c.text) for c in claims],
                               "claims": list(zip(ids, statements))})


def verifier(judge: Judge) -> VerifyFn:
    """A ``verify`` callback that asks ``judge`` (ledger-backed; a failed judgment raises, so
    the criterion is unable to verify)."""

    async def verify(statements: Sequence[str], claims: Sequence[Any]) -> list[StatementCheck]:
        j = await judge.ask(statement_request(statements, claims))
        if not j.ok:
            raise RuntimeError(j.error or "the judgment did not validate")
        return [StatementCheck(v["verdict"], tuple(v["sources"]), v["quote"]) for v in j.value["verdicts"]]

    return verify
