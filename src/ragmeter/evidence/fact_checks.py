"""The provider of ``facts``: the facts the answer states, checked against the user's records
(Data Validation's check in the article "RAG Evaluation Metrics: Formulas and a Worked Example").

The answer's claims become checkable facts through one ``facts.extract`` call per answered
sample in the verification stage (or are read from ``metadata.facts`` as given, with no
call), then each fact is looked up in the record source and judged Pass / Fail / Cannot
verify (:func:`ragmeter.records.judge_fact`). Without a record source, every sample's facts
are ``Unavailable`` with the reason, and no call is made for them. All lookups run in one
event loop after the judge; a lookup never raises (a timeout or an error is one fact that
cannot be verified, with the reason). The prompt's inputs, schema and reply parser are
:mod:`ragmeter.records.extraction`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import ANSWER_CLAIMS, FACTS, Evidence, Unavailable
from ragmeter.evidence.provider import VERIFICATION, ProviderBase, Wanted, unavailable
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


class FactChecks(ProviderBase):
    """Plans and gathers the ``facts`` evidence of each sample."""

    prompts = {FACTS: ("claims.extract", "facts.extract")}
    reads = frozenset({ANSWER_CLAIMS})

    def __init__(self, needs: frozenset[str], sources: Sources) -> None:
        super().__init__(needs, sources)
        self.records = records = sources.records
        self.refuses = sources.refuses
        self.prompt = load_prompt(PROMPT_ID)
        self._pending: dict[int, list[Fact]] = {}  # id(evidence) -> facts to look up
        attributes = getattr(records.source, "attributes", None) if records is not None else None
        self.attributes: tuple[str, ...] | None = tuple(attributes) if attributes else None

    def requires(self, sample: Sample) -> frozenset[str]:
        """The answer's claims, where the facts are to be extracted from them."""
        if self.records is not None and given_facts(sample) is None \
                and not (self.refuses is not None and self.refuses(PROMPT_ID)):
            return frozenset({ANSWER_CLAIMS})
        return frozenset()

    def prepare(self, sample: Sample, ev: Evidence) -> None:
        """Before any call: given facts, and why a sample has none (checks the data early)."""
        given = given_facts(sample)
        if self.records is None:
            ev.facts = Unavailable(NO_RECORDS)
        elif given is not None:
            self._pending[id(ev)] = given
        elif sample.answer is None or not sample.answer.strip():
            ev.facts = Unavailable("the sample has no answer")

    def requests(self, stage: str, sample: Sample, ev: Evidence, wanted: Wanted) -> dict[str, JudgeRequest]:
        """The ``facts.extract`` request, once the answer's claims are known (stage 2)."""
        if stage != VERIFICATION:
            return {}
        request = self._request(sample, ev, judge_present=self.sources.judge is not None)
        if request is None:
            return {}
        if self.sources.judge is None:
            ev.facts = Unavailable(NO_JUDGE_FACTS)
            return {}
        return {PROMPT_ID: request}

    def _request(self, s: Sample, ev: Evidence, judge_present: bool) -> JudgeRequest | None:
        if ev.facts is not None or id(ev) in self._pending:
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

    def read(self, ev: Evidence, name: str, judgment: Judgment | Exception) -> None:
        bad = unavailable(judgment)
        if bad is not None:
            ev.facts = bad
            return
        claims = ev.answer_claims if isinstance(ev.answer_claims, tuple) else ()
        facts, _ = parse_facts(judgment.value if isinstance(judgment, Judgment) else {},
                               claim_ids=[c.id for c in claims], attributes=self.attributes)
        self._pending[id(ev)] = facts

    def finishes(self) -> bool:
        return bool(self._pending)

    async def finish(self, samples: Sequence[Sample], evidence: Sequence[Evidence], judge: Judge | None) -> None:
        """Look every pending fact up, on the running event loop (the record lookup opened)."""
        await asyncio.gather(*(self._check(ev) for ev in evidence if id(ev) in self._pending))
        self._pending.clear()

    async def _check(self, ev: Evidence) -> None:
        assert self.records is not None  # facts are pending only with a record source
        records = self.records
        facts = self._pending[id(ev)]
        outcomes = await asyncio.gather(*(records.lookup(f.entity, f.attribute) for f in facts))
        checks: list[FactCheck] = [judge_fact(f, o, records.identity) for f, o in zip(facts, outcomes)]
        ev.facts = tuple(checks)


PROVIDER = FactChecks
