"""Record accuracy: are the facts the answer states true in the user's system of record?

Faithfulness compares the answer with the retrieved context only, so an answer copied
faithfully from a stale chunk scores 1.00 and is wrong. Here each fact the answer states
(entity, attribute, value, unit; from the ``facts.extract`` prompt, or given in the sample)
is looked up in the record source and gets Pass, Fail or Cannot verify
(:mod:`ragmeter.records.facts`); per sample:

- ``record_accuracy`` = Pass / (Pass + Fail): cannot-verify counts neither way. NotComputed
  when the answer states no checkable fact or none could be verified (no record); Failed
  when none could be verified because the lookups failed (a timeout, an error: the reason
  is kept); NotComputed with the reason when no record source is given.
- ``record_coverage`` = (Pass + Fail) / facts: the share of stated facts that could be checked.

The reference system is TestMu AI's Data Validation (Pass / Fail / Cannot verify per fact).

>>> from ragmeter.evidence.matrix import Evidence
>>> from ragmeter.core.sample import Sample
>>> from ragmeter.metrics import JudgedContext, make_measure
>>> from ragmeter.records import Fact, FactCheck
>>> c = lambda v: FactCheck(Fact("R2", "price", 1), v, None, "", "t")
>>> ev = Evidence(facts=(c("pass"), c("fail"), c("cannot_verify")))
>>> [f(ev, Sample("s"), make_measure(n), JudgedContext()) for f, n in
...  ((record_accuracy, "record_accuracy"), (record_coverage, "record_coverage"))]
[0.5, 0.6666666666666666]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragmeter.core.measure import Display, Measure
from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import FACTS, Evidence, Unavailable
from ragmeter.metrics.claim_reading import require
from ragmeter.metrics.kinds import JudgedContext, JudgedSpec, Unscorable
from ragmeter.metrics.spec_table import register

if TYPE_CHECKING:  # the records code loads where facts were checked, not wherever metrics are listed
    from ragmeter.records.facts import FactCheck

NEEDS = frozenset({FACTS})
NO_FACTS = "the answer states no fact that the system of record holds"


def _checks(ev: Evidence) -> tuple[FactCheck, ...]:
    checks = require(ev.facts, "the answer's facts were not checked")
    if not checks:
        raise Unscorable(NO_FACTS)
    return checks


def record_accuracy(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    from ragmeter.records.facts import fact_counts, undefined_reason

    checks = _checks(ev)
    rate = fact_counts(checks).rate
    if rate is None:
        why = undefined_reason(checks) or "no fact could be verified"
        raise Unscorable(Unavailable(why, failed=any(c.lookup_failed for c in checks)))
    return rate


def record_coverage(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    from ragmeter.records.facts import fact_counts

    checks = _checks(ev)
    return fact_counts(checks).verified / len(checks)


SOURCE = ("TestMu AI Agent Testing's Data Validation check, as the article 'RAG Evaluation Metrics: Formulas and a "
          "Worked Example' (TestMu AI) describes it; ragmeter.records")

register(JudgedSpec(
    name="record_accuracy", version=1, family="records", evidence=NEEDS,
    display=Display("record acc", "record accuracy"),
    definition="facts the system of record confirms / facts it confirms or contradicts (cannot verify: neither)",
    source=SOURCE, aliases=("fact_accuracy",),
    undefined="no record source; the answer states no checkable fact; or none could be verified",
    compute=record_accuracy))

register(JudgedSpec(
    name="record_coverage", version=1, family="records", evidence=NEEDS,
    display=Display("record cov", "record coverage"),
    definition="facts the system of record confirms or contradicts / facts the answer states",
    source=SOURCE, undefined="no record source, or the answer states no checkable fact",
    compute=record_coverage))
