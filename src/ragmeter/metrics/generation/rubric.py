"""Rubric scores (G-Eval style) on user-defined or built-in criteria.

One judge call per (sample, criterion) returns an integer score on the criterion's scale and
a reason. Where the backend exposes token log-probabilities (OpenAI-compatible servers),
the score is the probability-weighted mean over the scale, sum(s * p(s)) / sum(p(s))
(Liu et al. 2023, G-Eval); otherwise the plain score. The provenance says which.
``scale='unit'`` (default) maps the score to [0, 1] as (s - low) / (high - low); ``'raw'``
keeps the criterion's scale.

Criteria: the built-in ones and those of a criteria file (``ragmeter.evidence.rubric_criteria``).

``rubric_joint(criterion=...)``: the same score, with every ``rubric_joint`` criterion of the
run judged in one call that returns all of them as one JSON object (the metric reference's
rubric judge). Fewer calls; each score then depends on which criteria share the call (they are
in the prompt, hence in the ledger key). The per-criterion ``rubric`` stays the default: see
``docs/judged-variants.md`` for what was measured of their agreement.

>>> c = RubricCriterion("tone", "Polite?", 1, 5)
>>> (4 - c.low) / (c.high - c.low)
0.75
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragmeter.core.errors import InvalidParameterError
from ragmeter.core.measure import Display, Measure, Param
from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import RUBRIC, RUBRIC_JOINT, Evidence, with_argument
from ragmeter.evidence.rubric_criteria import BUILTIN, RubricCriterion, load_rubric_criteria
from ragmeter.metrics.claim_reading import require
from ragmeter.metrics.kinds import JudgedContext, JudgedSpec
from ragmeter.metrics.spec_table import register

__all__ = ["BUILTIN", "RubricCriterion", "RubricJointSpec", "RubricSpec", "load_rubric_criteria", "rubric",
           "rubric_joint"]
# The former names (the action criteria had the same ones), kept for code that imported them from here.
Criterion, load_criteria = RubricCriterion, load_rubric_criteria


def rubric(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    return _scaled(ev.rubric, measure, context)


def rubric_joint(ev: Evidence, sample: Sample, measure: Measure, context: JudgedContext) -> float:
    return _scaled(ev.rubric_joint, measure, context)


def _scaled(scores: dict[str, Any], measure: Measure, context: JudgedContext) -> float:
    name = measure.params["criterion"]
    got = require(scores.get(name), "no rubric judgment")
    crit = context.criteria[name]
    score = got["weighted"] if got["weighted"] is not None else got["score"]
    return (score - crit.low) / (crit.high - crit.low) if measure.params["scale"] == "unit" else float(score)


@dataclass(frozen=True, kw_only=True)
class RubricSpec(JudgedSpec):
    """One judge call per (sample, criterion); the criterion must be known before any call,
    and the provenance records it and how the score was read."""

    def needs(self, measure: Measure) -> frozenset[str]:
        return frozenset({with_argument(RUBRIC, measure.params["criterion"])})

    def check(self, measure: Measure, context: JudgedContext) -> None:
        if measure.params["criterion"] not in context.criteria:
            raise InvalidParameterError(f"{measure.name}: no criterion named {measure.params['criterion']!r}; known: "
                                        f"{', '.join(sorted(context.criteria))} (add yours with --criteria FILE)")

    def judge_details(self, measure: Measure, context: JudgedContext) -> dict[str, Any]:
        crit = context.criteria[measure.params["criterion"]]
        return {"criterion": {"description": crit.description, "scale": [crit.low, crit.high],
                              "examples": len(crit.examples)},
                "rubric_scoring": ("probability-weighted over the scale (token log-probabilities)"
                                   if context.logprobs else "plain score")}


@dataclass(frozen=True, kw_only=True)
class RubricJointSpec(RubricSpec):
    """Every ``rubric_joint`` criterion of a sample in one call."""

    def needs(self, measure: Measure) -> frozenset[str]:
        return frozenset({with_argument(RUBRIC_JOINT, measure.params["criterion"])})

    def judge_details(self, measure: Measure, context: JudgedContext) -> dict[str, Any]:
        return {**super().judge_details(measure, context),
                "rubric_call": "one call for every rubric_joint criterion of the run"}


PARAMS = {"criterion": Param(str, "relevance", doc="a built-in or --criteria name"),
          "scale": Param(str, "unit", choices=("unit", "raw"), doc="map to [0, 1] or keep the criterion's scale")}

register(RubricSpec(
    name="rubric", version=1, family="generation", display=Display("rubric", "rubric"),
    definition="the judge's score on a criterion's scale: probability-weighted where log-probabilities exist",
    source="Liu et al. 2023, G-Eval (EMNLP)", aliases=("g_eval", "geval"),
    params=PARAMS, undefined="the sample has no answer", compute=rubric))

register(RubricJointSpec(
    name="rubric_joint", version=1, family="generation", display=Display("rubric (joint)", "rubric (joint)"),
    definition="the judge's score on a criterion's scale, every rubric_joint criterion of the run in one JSON call",
    source="the rubric judge of the RAG metric reference (all dimensions in one JSON call); Liu et al. 2023, G-Eval",
    aliases=("rubric_one_call",), params=PARAMS, undefined="the sample has no answer", compute=rubric_joint))
