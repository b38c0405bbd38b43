"""standalone_question: 1 when a turn's question is understandable without the earlier
turns (MTRAG's non-standalone questions, Katsis et al. 2025), 0 when it is not.

From the data's ``standalone`` flag when given (no call); turn 1 is standalone by
definition; otherwise one judge call per turn (``turn.standalone``).

>>> float(True), float(False)
(1.0, 0.0)
"""

from __future__ import annotations

from ragmeter.core.measure import Display, Measure
from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import STANDALONE, Evidence
from ragmeter.metrics.claim_reading import require
from ragmeter.metrics.kinds import JudgedContext, JudgedSpec
from ragmeter.metrics.spec_table import register


def standalone_question(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    return float(bool(require(ev.standalone, "not judged")))


register(JudgedSpec(
    name="standalone_question", version=1, family="conversation", binary=True,
    evidence=frozenset({STANDALONE}), display=Display("standalone", "standalone questions"),
    definition="1 if the question is understandable without the earlier turns, else 0",
    source="Katsis et al. 2025, MTRAG (non-standalone questions)", aliases=("standalone",),
    undefined="not a conversation turn", compute=standalone_question))
