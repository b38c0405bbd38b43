"""How far a judged metric's judge can be trusted: its measured agreement with hand labels.

A judged mean is only as good as the judgments under it. Where the judge's agreement with
humans on a labeled set is known (the bundled model judge's provenance carries it:
``judge.agreement``, see :mod:`ragmeter.judges.local.agreement`; the offline judge's, its rule's
cross-validated figures: ``judge.rule.measured``), reports show it beside the metric, e.g.
``judge agreement 0.57 [0.51-0.64] on 216 claims``.

Which measurement applies depends on the prompt the metric reads: the claim verdicts
(``claims.verify``: faithfulness, context recall, factual correctness, ...), "addresses the
question" (statement answer relevancy), "declines to answer" (negative rejection, false
refusal), or the context-relevance sentences. A measurement stored with an interval keeps
it; one stored as accuracy on n items gets the Wilson score interval (Wilson 1927):
(p + z^2/2n +/- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n), z = 1.96.

To correct a judged mean with human labels on part of the run, see
:func:`ragmeter.trust.judge_agreement.ppi_mean` (``ragmeter agreement RUN --labels F``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Z95 = 1.959963984540054

#: metric name -> (the prompt part whose measured agreement applies, what its items are)
PROMPT_PARTS: dict[str, tuple[str, str]] = {
    "answer_relevancy": ("claims.extract:addresses_question", "statements"),
    "negative_rejection": ("claims.extract:declines", "answers"),
    "false_refusal": ("claims.extract:declines", "answers"),
    "context_relevance": ("context.relevance", "sentences"),
}


@dataclass(frozen=True)
class JudgeAgreement:
    """A judge's measured agreement with hand labels: accuracy, its 95% interval, on n items."""

    accuracy: float
    interval95: tuple[float, float]
    n: int
    items: str
    labeled_set: str = ""
    method: str = ""

    def text(self) -> str:
        """``judge agreement 0.71 [0.67-0.75] on 216 claims``."""
        lo, hi = self.interval95
        return f"judge agreement {self.accuracy:.2f} [{lo:.2f}-{hi:.2f}] on {self.n} {self.items}"

    def as_dict(self) -> dict[str, Any]:
        return {"accuracy": self.accuracy, "interval95": list(self.interval95), "n": self.n, "items": self.items,
                "set": self.labeled_set, "method": self.method}


def wilson_interval(correct: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion ``correct / n``.

    >>> [round(x, 4) for x in wilson_interval(45, 60)]
    [0.6277, 0.8422]
    """
    if n <= 0:
        raise ValueError("wilson_interval needs n >= 1")
    p = correct / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    denom = 1 + z * z / n
    return (centre - half) / denom, (centre + half) / denom


def _from_measurement(m: Mapping[str, Any], items: str) -> JudgeAgreement | None:
    acc, n = m.get("accuracy"), m.get("n")
    if not isinstance(acc, (int, float)) or not isinstance(n, int) or n <= 0:
        return None
    stored = m.get("interval95")
    if isinstance(stored, (list, tuple)) and len(stored) == 2:
        interval = (float(stored[0]), float(stored[1]))
        method = str(m.get("method", ""))
    else:
        interval = wilson_interval(float(acc) * n, n)
        method = "accuracy on the labeled set, Wilson 95% interval"
    return JudgeAgreement(float(acc), interval, n, items, str(m.get("set", "")), method)


def judge_agreement(provenance: Mapping[str, Any] | None) -> JudgeAgreement | None:
    """The measured agreement behind a judged metric's values, from its provenance; ``None``
    when the metric is not judged or its judge's agreement was never measured."""
    if not provenance:
        return None
    judge = provenance.get("judge")
    if not isinstance(judge, Mapping):
        return None
    measured = judge.get("agreement")
    if not isinstance(measured, Mapping):
        return _offline_rule_agreement(provenance, judge)
    part = PROMPT_PARTS.get(str(provenance.get("metric_name", "")))
    if part is not None:
        prompts = measured.get("prompts")
        found = prompts.get(part[0]) if isinstance(prompts, Mapping) else None
        return _from_measurement(found, part[1]) if isinstance(found, Mapping) else None
    if "claims.verify" not in (judge.get("prompts") or {}):
        return None
    return _from_measurement(measured, "claims")


def _offline_rule_agreement(provenance: Mapping[str, Any], judge: Mapping[str, Any]) -> JudgeAgreement | None:
    """The offline judge's claim verdicts: the cross-validated accuracy that its provenance
    carries (``rule.measured``, from ``rule.json``: each of the agreement set's contexts judged by
    constants fitted without it), the evidence rule's (``stages: ["evidence"]``) or, with the
    bundled model's stage (``--judge local:model``), the stage's (``measured.model_stage``).
    Nothing for a model file of the user's (not measured) nor for the other prompt parts."""
    from ragmeter.judges.local.model import BUNDLED_SHA256

    stages = list(judge.get("stages") or [])
    bundled_stage = stages == ["evidence", "model"] and judge.get("model_sha256") == BUNDLED_SHA256
    if (stages != ["evidence"] and not bundled_stage) or provenance.get("metric_name") in PROMPT_PARTS:
        return None
    if "claims.verify" not in (judge.get("prompts") or {}):
        return None
    rule = judge.get("rule")
    measured = rule.get("measured") if isinstance(rule, Mapping) else None
    if bundled_stage and isinstance(measured, Mapping):
        measured = measured.get("model_stage")
    cv = measured.get("agreement_leave_one_context_out") if isinstance(measured, Mapping) else None
    if not isinstance(cv, Mapping):
        return None
    acc, n = cv.get("accuracy"), cv.get("n")
    if not isinstance(acc, (int, float)) or not isinstance(n, int) or n <= 0:
        return None
    return JudgeAgreement(float(acc), wilson_interval(float(acc) * n, n), n, "claims", "agreement/claims.jsonl",
                          "leave-one-context-out cross-validated accuracy of the offline rule"
                          + (" with the bundled model's stage" if bundled_stage else "") + ", Wilson 95% interval")


__all__ = ["JudgeAgreement", "judge_agreement", "wilson_interval"]
