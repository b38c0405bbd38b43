"""Response groundedness: two judges rate how well the context grounds the whole answer (Ragas).

Ragas's ResponseGroundedness (NVIDIA's dual-judge metric, ``nv_response_groundedness``) asks
two differently worded prompts for a rating r of the answer against the retrieved context:
0 (not supported), 1 (partly supported), 2 (fully supported). Each rating is rescaled to
[0, 1] by r / 2 and the two are averaged:

    response_groundedness = (r1 / 2 + r2 / 2) / 2.

Two calls per answered sample (:mod:`ragmeter.evidence.groundedness_ratings`), whatever the
answer's length: one holistic judgment, where ``faithfulness`` counts claims. Where ragmeter
differs from Ragas, on purpose: an empty answer or context is NotComputed (Ragas scores it 0),
and a rating that never validated makes the sample Failed (Ragas keeps the other judge's
rating alone): a sample is never scored on half its judgments.

``groundedness`` stays the alias of ``faithfulness``: TruLens's "groundedness" and the
article's use of the word are the claim-counting check; Ragas's metric has its own name here.

>>> from ragmeter.core.sample import Sample
>>> from ragmeter.metrics import JudgedContext, make_measure
>>> ev = Evidence(groundedness={"groundedness.judge1": 2, "groundedness.judge2": 1})
>>> response_groundedness(ev, Sample("q1"), make_measure("response_groundedness"), JudgedContext()) == (2/2 + 1/2) / 2
True
"""

from __future__ import annotations

from ragmeter.core.measure import Display, Measure
from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import GROUNDEDNESS, Evidence
from ragmeter.metrics.claim_reading import require
from ragmeter.metrics.kinds import JudgedContext, JudgedSpec
from ragmeter.metrics.spec_table import register


def response_groundedness(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    ratings = [require(r) for r in require(ev.groundedness or None, "no groundedness rating").values()]
    return sum(r / 2 for r in ratings) / len(ratings)


register(JudgedSpec(
    name="response_groundedness", version=1, family="generation", evidence=frozenset({GROUNDEDNESS}),
    display=Display("grounded", "response groundedness"),
    definition="(r1 / 2 + r2 / 2) / 2, r1 and r2 two judges' ratings (0, 1, 2) of the answer against the context",
    source="Ragas 0.4 ResponseGroundedness (NVIDIA dual-judge metrics, nv_response_groundedness)",
    aliases=("nv_response_groundedness",),
    undefined="the sample has no answer, or the context is empty", compute=response_groundedness))
