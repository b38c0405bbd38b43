"""standalone_question: 1 when a turn's question is understandable without the earlier
turns (MTRAG's non-standalone questions, Katsis et al. 2025), 0 when it is not.

From the data's ``standalone`` flag when given (no call); turn 1 is standalone by
definition; otherwise one judge call per turn (``turn.standalone``).

>>> float(True), float(False)
(1.0, 0.0)
"""

from __future__ import annotations

from ragmeter.metrics.judged import need
from ragmeter.metrics.spec import Measure, MetricSpec, register


def standalone_question(ev, sample, measure: Measure, env=None) -> float:
    return float(bool(need(ev.standalone, "not judged")))


register(MetricSpec(
    name="standalone_question", version=1, family="conversation", accepts_k=False, rank_aware=False, binary=True,
    needs=frozenset({"turn_standalone"}), label="standalone", mean_label="standalone questions",
    definition="1 if the question is understandable without the earlier turns, else 0",
    source="Katsis et al. 2025, MTRAG (non-standalone questions)", aliases=("standalone",),
    undefined="not a conversation turn", compute=standalone_question))
