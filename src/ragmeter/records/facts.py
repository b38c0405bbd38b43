"""Facts stated in an answer, checked against the system of record.

A :class:`Fact` is one checkable statement: ``Fact("ORD-1042", "status", "shipped",
claim_id=3)``, from claim 3 of the answer. :func:`check_fact` looks it up and gives:

- ``pass``: the record holds the same value after normalising (numbers, units, currencies,
  dates, case and spaces; :mod:`ragmeter.records.normalise`);
- ``fail``: the record holds another value, which the check carries;
- ``cannot_verify``: no such record, a lookup that failed or timed out, or a statement that
  cannot be compared exactly (an approximation, an ambiguous date), with the reason.

``record_accuracy = Pass / (Pass + Fail)``, with its coverage ``(Pass + Fail) / facts``;
cannot-verify counts neither way (:mod:`ragmeter.records.verdicts`). A check never raises
and never passes a fact it could not compare.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragmeter.core.aio import run_sync
from ragmeter.records.lookup import RecordLookup
from ragmeter.records.normalise import compare
from ragmeter.records.types import CannotVerify, JsonScalar, LookupOutcome, RecordValue
from ragmeter.records.verdicts import CANNOT_VERIFY, FAIL, PASS, VerdictCounts, count


@dataclass(frozen=True)
class Fact:
    """One checkable statement: ``attribute`` of ``entity`` is ``value`` (in ``unit``)."""

    entity: str
    attribute: str
    value: JsonScalar
    unit: str | None = None
    claim_id: int | None = None  # the answer claim it comes from (the claim matrix's numbering)

    def describe(self) -> str:
        shown = f"{self.value} {self.unit}" if self.unit else str(self.value)
        return f"{self.attribute} of {self.entity} is {shown}"

    def as_dict(self) -> dict[str, Any]:
        return {"entity": self.entity, "attribute": self.attribute, "value": self.value, "unit": self.unit,
                "claim_id": self.claim_id}


@dataclass(frozen=True)
class FactCheck:
    """A fact's verdict with its evidence: the record's value (pass, fail) or the reason."""

    fact: Fact
    verdict: str  # pass | fail | cannot_verify
    record: RecordValue | None
    reason: str
    source: str
    lookup_failed: bool = False  # cannot verify because the lookup timed out, errored or was refused

    def as_dict(self) -> dict[str, Any]:
        return {"fact": self.fact.as_dict(), "verdict": self.verdict,
                "record": None if self.record is None else {"value": self.record.value, "unit": self.record.unit},
                "reason": self.reason, "source": self.source, "lookup_failed": self.lookup_failed}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> FactCheck:
        """The check :meth:`as_dict` wrote (a run directory's evidence)."""
        f, rec = d["fact"], d.get("record")
        return cls(Fact(f["entity"], f["attribute"], f["value"], f.get("unit"), f.get("claim_id")), d["verdict"],
                   None if rec is None else RecordValue(rec["value"], rec.get("unit")), d.get("reason", ""),
                   d.get("source", ""), bool(d.get("lookup_failed", False)))


def judge_fact(fact: Fact, outcome: LookupOutcome, source: str) -> FactCheck:
    """The verdict of one fact given its lookup outcome (pure: no I/O)."""
    if isinstance(outcome, CannotVerify):
        return FactCheck(fact, CANNOT_VERIFY, None, outcome.reason, source, lookup_failed=not outcome.final)
    result = compare(fact.value, fact.unit, outcome.value, outcome.unit)
    if result.outcome == "equal":
        return FactCheck(fact, PASS, outcome, f"the record holds {outcome.describe()}", source)
    if result.outcome == "different":
        note = f" ({result.note})" if result.note else ""
        return FactCheck(fact, FAIL, outcome, f"stated {_shown(fact)}; the record holds {outcome.describe()}{note}",
                         source)
    return FactCheck(fact, CANNOT_VERIFY, outcome, f"stated {_shown(fact)}, the record holds {outcome.describe()}: "
                                                   f"{result.note}", source)


def _shown(fact: Fact) -> str:
    return f"{fact.value} {fact.unit}" if fact.unit else str(fact.value)


async def check_fact(fact: Fact, lookup: RecordLookup) -> FactCheck:
    return judge_fact(fact, await lookup.lookup(fact.entity, fact.attribute), lookup.identity)


async def check_facts(facts: Iterable[Fact], lookup: RecordLookup) -> list[FactCheck]:
    """Every fact's verdict, looked up concurrently (bounded by the lookup's limits)."""
    facts = list(facts)
    await lookup.prepare()
    return list(await asyncio.gather(*(check_fact(f, lookup) for f in facts)))


def check_facts_sync(facts: Sequence[Fact], lookup: RecordLookup) -> list[FactCheck]:
    """The sync wrapper: one event loop for the batch, the source closed at the end."""

    async def main() -> list[FactCheck]:
        try:
            return await check_facts(facts, lookup)
        finally:
            await lookup.aclose()

    return run_sync(main)


def fact_counts(checks: Iterable[FactCheck]) -> VerdictCounts:
    return count(c.verdict for c in checks)


def record_accuracy(checks: Sequence[FactCheck]) -> float | None:
    """Pass / (Pass + Fail); None when no fact was verified (see :func:`undefined_reason`)."""
    return fact_counts(checks).rate


def verification_coverage(checks: Sequence[FactCheck]) -> float | None:
    """(Pass + Fail) / facts; None when there is no fact."""
    return fact_counts(checks).coverage


def undefined_reason(checks: Sequence[FactCheck]) -> str | None:
    """Why record accuracy is undefined for these checks, or None when it is defined."""
    if not checks:
        return "the answer states no fact that the system of record holds"
    if fact_counts(checks).verified:
        return None
    reasons = sorted({c.reason for c in checks})
    return f"no fact could be verified ({len(checks)} cannot verify: {'; '.join(reasons[:3])})"
