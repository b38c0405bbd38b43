"""Evidence beyond the context: the answer's facts against the user's records, and the run's
tool calls against its criteria (the seed's Data Validation and Agent Assurance checks).

Two parts of each sample's :class:`~ragmeter.evidence.matrix.Evidence`, filled after the claim
matrix's own two stages:

- ``facts`` (need ``facts``): the answer's claims become checkable facts through one
  ``facts.extract`` call per answered sample (or are read from ``metadata.facts`` as given,
  with no call), then each fact is looked up in the record source and judged Pass / Fail /
  Cannot verify (:func:`ragmeter.records.judge_fact`). Without a record source, every
  sample's facts are ``Unavailable`` with the reason, and no call is made for them.
- ``actions`` (need ``actions``): the sample's ``tool_calls``, ``tools`` and ``criteria``
  (kept in its metadata by the dataset reader) with the suite's criteria, graded by
  :func:`ragmeter.actions.grade.grade_case`; ``never_claim`` and ``when.claims_state`` ask the
  judge through the claim matrix's ``claims.verify`` prompt.

All lookups and gradings run in one event loop; a lookup never raises (a timeout or an error
is one fact that cannot be verified, with the reason), and the source is closed at the end.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence

from ragmeter.actions.calls import AgentRun
from ragmeter.actions.criteria import CriteriaSet, Criterion
from ragmeter.actions.grade import CaseGrade, VerifyFn, grade_case
from ragmeter.actions.judged import verifier
from ragmeter.actions.readers import run_from_sample
from ragmeter.core.errors import InvalidInputError
from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import ACTIONS, FACTS, Claim, Evidence, Unavailable
from ragmeter.evidence.sources import Sources
from ragmeter.judges.judge import Judge, JudgeRequest, Judgment
from ragmeter.judges.prompts import load_prompt
from ragmeter.records.extraction import (
    FACTS_SCHEMA,
    PROMPT_ID,
    SCHEMA_NAME,
    fact_inputs,
    parse_facts,
)
from ragmeter.records.facts import Fact, FactCheck, judge_fact

NO_RECORDS = ("needs a record source to check the answer's facts against: --records FILE.jsonl|FILE.csv|"
              "http(s)://host/path/{entity}|mcp:COMMAND#TOOL|python:MODULE:FUNCTION")
NO_JUDGE_FACTS = ("the answer's facts are extracted from its claims by a judge: give --judge, or the facts in the "
                  "sample's metadata.facts")
FACT_FIELDS = ("entity", "attribute", "value", "unit", "claim_id")


def given_facts(s: Sample) -> list[Fact] | None:
    """The facts written in the sample (``metadata.facts``: objects with entity, attribute,
    value, and optionally unit and claim_id), used as given; None when there are none."""
    items = s.metadata.get("facts")
    if items is None:
        return None
    if not isinstance(items, list):
        raise InvalidInputError("must be a list of facts", record=s.id, field="metadata.facts",
                                fix='write [{"entity": "R2", "attribute": "price", "value": "$89", "claim_id": 1}]')
    out = []
    for i, item in enumerate(items, start=1):
        if not isinstance(item, Mapping) or set(item) - set(FACT_FIELDS) or not all(
                isinstance(item.get(k), str) and item[k].strip() for k in ("entity", "attribute")) \
                or "value" not in item:
            raise InvalidInputError(f"fact {i} needs a string entity and attribute and a value (keys: "
                                    f"{', '.join(FACT_FIELDS)})", record=s.id, field="metadata.facts")
        claim_id = item.get("claim_id")
        if claim_id is not None and (isinstance(claim_id, bool) or not isinstance(claim_id, int)):
            raise InvalidInputError(f"fact {i}: claim_id must be the number of an answer claim", record=s.id,
                                    field="metadata.facts")
        out.append(Fact(item["entity"].strip(), item["attribute"].strip(), item["value"], item.get("unit"), claim_id))
    return out


def _needs_claims(criteria: Sequence[Criterion], run: AgentRun) -> bool:
    """Some criterion reads the answer's claims, and its question/answer condition (read
    without claims) does not already rule it out: only then is the answer split."""
    for c in criteria:
        when = c.when
        if c.kind != "never_claim" and (when is None or (when.claims_match is None and when.claims_state is None)):
            continue
        if when is not None and any(
                pattern is not None and text is not None and not re.search(pattern, text, re.IGNORECASE)
                for pattern, text in ((when.question_matches, run.question), (when.answer_matches, run.answer))):
            continue
        return True
    return False


class BeyondContext:
    """Plans and gathers the ``facts`` and ``actions`` evidence of each sample."""

    def __init__(self, needs: set[str], sources: Sources) -> None:
        self.facts = FACTS in needs
        self.actions = ACTIONS in needs
        self.records = records = sources.records
        self.criteria = sources.action_criteria or CriteriaSet()
        self.refuses = sources.refuses
        self.prompt = load_prompt(PROMPT_ID)
        self._pending: dict[int, list[Fact]] = {}  # id(evidence) -> facts to look up
        attributes = getattr(records.source, "attributes", None) if records is not None else None
        self.attributes: tuple[str, ...] | None = tuple(attributes) if attributes else None

    def wants_answer_claims(self, s: Sample) -> bool:
        """Whether this sample's answer must be split into claims for these needs."""
        if self.facts and self.records is not None and given_facts(s) is None \
                and not (self.refuses is not None and self.refuses(PROMPT_ID)):
            return True
        if self.actions:
            run = run_from_sample(s)
            return _needs_claims(self.criteria.for_case(run.id, run.criteria), run)
        return False

    def prepare(self, s: Sample, ev: Evidence) -> None:
        """Before any call: given facts, and why a sample has none (checks the data early)."""
        if self.actions:
            run_from_sample(s)  # bad tool calls or criteria stop the run before any call
        if not self.facts:
            return
        given = given_facts(s)
        if self.records is None:
            ev.facts = Unavailable(NO_RECORDS)
        elif given is not None:
            self._pending[id(ev)] = given
        elif s.answer is None or not s.answer.strip():
            ev.facts = Unavailable("the sample has no answer")

    def request(self, s: Sample, ev: Evidence, judge_present: bool) -> JudgeRequest | None:
        """The ``facts.extract`` request, once the answer's claims are known (stage 2)."""
        if not self.facts or ev.facts is not None or id(ev) in self._pending:
            return None
        why = self.refuses(PROMPT_ID) if self.refuses is not None else None
        if why:  # the judge does not serve fact extraction: no claims were split for it either
            ev.facts = Unavailable(why)
            return None
        claims = ev.answer_claims
        if isinstance(claims, Unavailable) or claims is None:
            ev.facts = claims if isinstance(claims, Unavailable) else Unavailable(
                NO_JUDGE_FACTS if not judge_present else "the answer's claims were not extracted")
            return None
        if not claims:
            self._pending[id(ev)] = []
            return None
        entities = s.metadata.get("entities")
        inputs = fact_inputs(s.question, claims, attributes=self.attributes,
                             entities=entities if isinstance(entities, (Mapping, list)) else None)
        return JudgeRequest(self.prompt, inputs, FACTS_SCHEMA, SCHEMA_NAME)

    def read(self, ev: Evidence, j: Judgment | Exception, bad: Unavailable | None) -> None:
        if bad is not None:
            ev.facts = bad
            return
        claims = ev.answer_claims if isinstance(ev.answer_claims, tuple) else ()
        facts, _ = parse_facts(j.value if isinstance(j, Judgment) else {}, claim_ids=[c.id for c in claims],
                               attributes=self.attributes)
        self._pending[id(ev)] = facts

    def finishes(self) -> bool:
        """Whether facts are pending a lookup or cases a grading."""
        return bool(self._pending) or self.actions

    async def finish(self, samples: Sequence[Sample], evidence: Sequence[Evidence], judge: Judge | None) -> None:
        """Look every pending fact up and grade every case, on the running event loop (the
        planner opens the record lookup around it)."""
        verify = verifier(judge) if judge is not None else None
        await asyncio.gather(*(self._check(ev) for ev in evidence if id(ev) in self._pending))
        if self.actions:
            grades = await asyncio.gather(*(self._grade(s, ev, verify) for s, ev in zip(samples, evidence)))
            for ev, grade in zip(evidence, grades):
                ev.actions = grade
        self._pending.clear()

    async def _check(self, ev: Evidence) -> None:
        assert self.records is not None  # facts are pending only with a record source
        records = self.records
        facts = self._pending[id(ev)]
        outcomes = await asyncio.gather(*(records.lookup(f.entity, f.attribute) for f in facts))
        checks: list[FactCheck] = [judge_fact(f, o, records.identity) for f, o in zip(facts, outcomes)]
        ev.facts = tuple(checks)

    async def _grade(self, s: Sample, ev: Evidence, verify: VerifyFn | None) -> CaseGrade:
        run = run_from_sample(s)
        claims: tuple[Claim, ...] | None = ev.answer_claims if isinstance(ev.answer_claims, tuple) else None
        return await grade_case(run, self.criteria.for_case(run.id, run.criteria), claims=claims,
                                records=self.records, verify=verify)
