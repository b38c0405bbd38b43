"""Grading criteria against what a run did: a verdict per criterion, with its evidence.

Verdicts (:mod:`ragmeter.records.verdicts`):

- ``pass`` / ``fail``, with the calls, record values or claims behind them;
- ``unable_to_verify``: nothing to check the criterion against: no calls recorded (an
  empty trace counts as none unless the case says ``calls_complete``), no record source, a
  lookup that failed, no answer claims, no judge, or arguments that are not JSON;
- ``not_applicable``: the criterion's ``when`` does not hold for this case, or there is
  nothing it constrains (``check_arguments`` with no call to the tool).

Unable-to-verify and not-applicable stay outside the pass rate; unable-to-verify lowers the
coverage. When the case declares its tools, a ``declared_tools`` criterion is added first:
a call to a tool the agent does not declare fails it.

A case's verdict: fail if any criterion fails, else unable to verify if any is, else pass
if any passes, else not applicable.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ragmeter.actions.calls import AgentRun, ToolCall
from ragmeter.actions.criteria import ActionCriterion, Condition, ValueRef
from ragmeter.core import patterns
from ragmeter.core.finite import NOT_FINITE, non_finite
from ragmeter.records.lookup import RecordLookup
from ragmeter.records.normalise import compare
from ragmeter.records.pointer import MISSING, resolve
from ragmeter.records.types import CannotVerify
from ragmeter.records.verdicts import (
    FAIL,
    NOT_APPLICABLE,
    PASS,
    UNABLE_TO_VERIFY,
    VerdictCounts,
    count,
)

DECLARED_TOOLS = ActionCriterion(id="declared_tools", kind="declared_tools",
                           description="every call is to a tool the agent declares")


class ClaimLike(Protocol):
    @property
    def id(self) -> int: ...

    @property
    def text(self) -> str: ...


class StatementVerdict(Protocol):
    """Per statement: ``supported`` when the answer's claims make it, with the claims behind it."""

    @property
    def verdict(self) -> str: ...

    @property
    def sources(self) -> tuple[str, ...]: ...

    @property
    def quote(self) -> str: ...


# (statements, the answer's claims) -> one verdict per statement, in order
VerifyFn = Callable[[Sequence[str], Sequence[Any]], Awaitable[Sequence[StatementVerdict]]]


@dataclass(frozen=True)
class CriterionResult:
    criterion: ActionCriterion
    verdict: str
    evidence: str
    calls: tuple[int, ...] = ()  # indices of the calls the verdict rests on

    @property
    def id(self) -> str:
        return self.criterion.id

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.criterion.kind, "criterion": self.criterion.describe(),
                "verdict": self.verdict, "evidence": self.evidence, "calls": list(self.calls)}


@dataclass(frozen=True)
class CaseGrade:
    case_id: str
    results: tuple[CriterionResult, ...]

    @property
    def counts(self) -> VerdictCounts:
        return count(r.verdict for r in self.results)

    @property
    def verdict(self) -> str:
        verdicts = {r.verdict for r in self.results}
        for v in (FAIL, UNABLE_TO_VERIFY, PASS):
            if v in verdicts:
                return v
        return NOT_APPLICABLE

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.case_id, "verdict": self.verdict, "criteria": [r.as_dict() for r in self.results]}


class _Unable(Exception):
    """Raised inside a check when it has nothing to check against."""


def _result(c: ActionCriterion, verdict: str, evidence: str, calls: Sequence[ToolCall] = ()) -> CriterionResult:
    return CriterionResult(c, verdict, evidence, tuple(x.index for x in calls))


def _calls(run: AgentRun) -> tuple[ToolCall, ...]:
    if run.calls is None:
        raise _Unable("no tool calls were recorded for this case")
    if not run.calls and not run.calls_complete:
        raise _Unable("the trace holds no tool calls (set calls_complete when the run made none)")
    return run.calls


def _listing(calls: Sequence[ToolCall]) -> str:
    return "; ".join(c.describe() for c in calls[:5]) + (f"; and {len(calls) - 5} more" if len(calls) > 5 else "")


def _meets(call: ToolCall, c: ActionCriterion) -> bool | None:
    """Whether a call's arguments meet the criterion's constraints (None: not readable)."""
    if not c.constraints:
        return True
    if call.arguments is None:
        return None
    return all(k.holds(call.arguments) for k in c.constraints)


async def _applies(c: ActionCriterion, when: Condition, run: AgentRun, claims: Sequence[Any] | None,
                   verify: VerifyFn | None) -> bool:
    for name, text in (("question", run.question), ("answer", run.answer)):
        pattern = getattr(when, f"{name}_matches")
        if pattern is not None:
            if text is None:
                raise _Unable(f"the condition reads the {name}, and the case has none")
            if not _search(pattern, text, f"when.{name}_matches"):
                return False
    if when.claims_match is not None or when.claims_state is not None:
        if claims is None:
            raise _Unable("the condition reads the answer's claims, and there are none")
        if when.claims_match is not None and not any(_search(when.claims_match, x.text, "when.claims_match")
                                                     for x in claims):
            return False
        if when.claims_state is not None:
            verdicts = await _statements([when.claims_state], claims, verify)
            if verdicts[0].verdict != "supported":
                return False
    return True


def _search(pattern: str, text: str, what: str) -> bool:
    """A user pattern searched with a time limit (core.patterns); past it, unable to verify."""
    try:
        return patterns.search(pattern, text, ignore_case=True)
    except patterns.PatternTimeout as exc:
        raise _Unable(f"{what}: {exc}; {patterns.FIX}") from None


async def _statements(statements: Sequence[str], claims: Sequence[Any], verify: VerifyFn | None
                      ) -> Sequence[StatementVerdict]:
    if verify is None:
        raise _Unable("no judge was given to check statements against the answer's claims")
    try:
        out = await verify(list(statements), list(claims))
    except Exception as exc:  # noqa: BLE001  (a failed judgment leaves the criterion unverified)
        raise _Unable(f"the judge could not check the statements ({type(exc).__name__}: {str(exc)[:120]})") from None
    if len(out) != len(statements):
        raise _Unable(f"the judge gave {len(out)} verdicts for {len(statements)} statements")
    return out


def _value(ref: ValueRef, run: AgentRun, what: str) -> Any:
    if ref.from_call is None:
        return ref.literal
    calls = [c for c in _calls(run) if c.name == ref.from_call]
    if not calls:
        raise _Unable(f"no {ref.from_call} call to read the {what} from")
    last = calls[-1]
    if ref.argument is not None:
        if last.arguments is None:
            raise _Unable(f"the arguments of {last.describe()} are not JSON")
        found = resolve(last.arguments, ref.argument)
    else:
        if not last.has_result:
            raise _Unable(f"the trace holds no result for {last.describe()}")
        found = resolve(last.result, ref.result or "")
    if found is MISSING or found is None or isinstance(found, (dict, list)):
        raise _Unable(f"{last.describe()} has no single value at {ref.argument or ref.result}")
    if non_finite(found):
        raise _Unable(f"{last.describe()} holds {found!r} at {ref.argument or ref.result}, {NOT_FINITE}")
    return found


async def _check(c: ActionCriterion, run: AgentRun, claims: Sequence[Any] | None, records: RecordLookup | None,
                 verify: VerifyFn | None) -> CriterionResult:
    if c.when is not None and not await _applies(c, c.when, run, claims, verify):
        return _result(c, NOT_APPLICABLE, f"does not apply: {c.when.describe()} does not hold")
    if c.kind in ("must_call", "must_not_call", "check_arguments"):
        calls = _calls(run)
        to_tool = [x for x in calls if x.name == c.tool]
        meets = [(x, _meets(x, c)) for x in to_tool]
        hits = [x for x, ok in meets if ok]
        unreadable = [x for x, ok in meets if ok is None]
        misses = [x for x, ok in meets if ok is False]
        if c.kind == "must_call":
            if hits:
                return _result(c, PASS, f"called: {_listing(hits)}", hits)
            if unreadable:
                raise _Unable(f"the arguments of {_listing(unreadable)} are not JSON")
            said = f"calls to {c.tool} with other arguments: {_listing(misses)}" if misses else \
                f"no call to {c.tool} among {len(calls)} call(s): {_listing(calls) or 'none'}"
            return _result(c, FAIL, said, misses)
        if c.kind == "must_not_call":
            if hits:
                return _result(c, FAIL, f"called: {_listing(hits)}", hits)
            if unreadable:
                raise _Unable(f"the arguments of {_listing(unreadable)} are not JSON")
            return _result(c, PASS, f"no such call among {len(calls)} call(s)")
        if not to_tool:
            return _result(c, NOT_APPLICABLE, f"no call to {c.tool}")
        if misses:
            return _result(c, FAIL, f"arguments not met by {_listing(misses)}", misses)
        if unreadable:
            raise _Unable(f"the arguments of {_listing(unreadable)} are not JSON")
        return _result(c, PASS, f"every call meets them: {_listing(hits)}", hits)
    if c.kind == "order":
        calls = _calls(run)
        checked = False
        for first, then in zip(c.tools, c.tools[1:]):
            seen_first = False
            for x in calls:
                if x.name == first:
                    seen_first = True
                elif x.name == then:
                    checked = True
                    if not seen_first:
                        return _result(c, FAIL, f"{x.describe()} came before any call to {first}", [x])
        if not checked:
            return _result(c, NOT_APPLICABLE, f"no call to {', '.join(c.tools[1:])}")
        return _result(c, PASS, "calls in order: " + " -> ".join(x.name for x in calls if x.name in c.tools))
    if c.kind == "max_calls":
        calls = _calls(run)
        counted = [x for x in calls if c.tool is None or x.name == c.tool]
        verdict = PASS if c.limit is not None and len(counted) <= c.limit else FAIL
        return _result(c, verdict, f"{len(counted)} call(s)" + (f" to {c.tool}" if c.tool else "")
                       + f", at most {c.limit} allowed", counted if verdict == FAIL else ())
    if c.kind == "declared_tools":
        calls = _calls(run)
        declared = run.declared or frozenset()
        stray = [x for x in calls if x.name not in declared]
        if stray:
            return _result(c, FAIL, f"undeclared tool(s) called: {_listing(stray)} (declared: "
                                    f"{', '.join(sorted(declared)) or 'none'})", stray)
        return _result(c, PASS, f"{len(calls)} call(s), all to declared tools")
    if c.kind == "record":
        return await _record(c, run, records)
    if c.kind == "never_claim":
        if claims is None:
            raise _Unable("the answer's claims are not available" if verify is not None else
                          "no judge was given to split the answer into claims and check the statements")
        if not claims:
            return _result(c, PASS, "the answer makes no claims")
        verdicts = await _statements(c.statements, claims, verify)
        made = [(s, v) for s, v in zip(c.statements, verdicts) if v.verdict == "supported"]
        if made:
            said = "; ".join(f'"{s}" (claims {", ".join(v.sources) or "?"}' + (f': "{v.quote}")' if v.quote else ")")
                             for s, v in made)
            return _result(c, FAIL, f"the answer claims: {said}")
        return _result(c, PASS, f"none of {len(c.statements)} statement(s) is made by the answer's "
                                f"{len(claims)} claim(s)")
    raise _Unable(f"unknown criterion kind {c.kind!r}")


async def _record(c: ActionCriterion, run: AgentRun, records: RecordLookup | None) -> CriterionResult:
    if records is None:
        raise _Unable("no record source was given")
    if c.entity is None or c.attribute is None:
        raise _Unable("the criterion names no entity or attribute")
    entity = str(_value(c.entity, run, "entity"))
    expected = _value(c.expected, run, "expected value") if c.expected is not None else None
    outcome = await records.lookup(entity, c.attribute)
    if isinstance(outcome, CannotVerify):
        if outcome.final:
            return _result(c, FAIL, f"the system of record holds no {c.attribute} for {entity}: {outcome.reason}")
        raise _Unable(outcome.reason)
    if c.expected is None:
        return _result(c, PASS, f"the record of {entity} exists: {c.attribute} = {outcome.describe()}")
    result = compare(expected, None, outcome.value, outcome.unit)
    if result.outcome == "equal":
        return _result(c, PASS, f"the record of {entity} has {c.attribute} = {outcome.describe()}, as expected")
    if result.outcome == "different":
        return _result(c, FAIL, f"the record of {entity} has {c.attribute} = {outcome.describe()}, expected "
                                f"{expected}")
    raise _Unable(f"the record of {entity} has {c.attribute} = {outcome.describe()}, expected {expected}: "
                  f"{result.note}")


async def grade_case(run: AgentRun, criteria: Sequence[ActionCriterion], *, claims: Sequence[Any] | None = None,
                     records: RecordLookup | None = None, verify: VerifyFn | None = None) -> CaseGrade:
    """Every criterion's verdict for one case (never raises for what the case lacks).

    ``claims``: the answer's claims (the claim matrix's ``answer_claims``), None when not
    available; ``records``: the lookup for ``record`` criteria; ``verify``: the judge
    callback for ``never_claim`` and ``when.claims_state``."""
    todo = ([DECLARED_TOOLS] if run.tools is not None else []) + list(criteria)
    out = []
    for c in todo:
        try:
            out.append(await _check(c, run, claims, records, verify))
        except _Unable as why:
            out.append(_result(c, UNABLE_TO_VERIFY, str(why)))
        except patterns.PatternTimeout as exc:  # an arguments constraint's matches / not_matches
            out.append(_result(c, UNABLE_TO_VERIFY, f"arguments: {exc}; {patterns.FIX}"))
    return CaseGrade(run.id, tuple(out))
