"""The provider of ``rubric:<criterion>`` and ``rubric_joint:<criterion>``: the judge's score of
the answer on a criterion's scale.

``rubric``: one ``rubric.score`` call per (answered sample, criterion), in the extraction
stage, with the criterion's description, scale and examples (:mod:`ragmeter.evidence.rubric_criteria`,
the built-in ones and the run's), the question, the context and the answer. ``rubric_joint``:
one ``rubric.joint`` call per answered sample for every joint criterion of the run, which
returns all the scores in one JSON object (the metric reference's rubric judge). A reply's
score must lie on its scale (else the judgment is Failed; in a joint reply, every criterion's).
Where the backend returns token log-probabilities the score is also read the G-Eval way,
probability-weighted over the scale:

    weighted = sum(s * p(s)) / sum(p(s)) over the scale's values s,

from the top log-probabilities of the token that holds the score (Liu et al. 2023, G-Eval).

>>> weighted_score([{"token": '{"score": '}, {"token": "4", "top_logprobs": [
...     {"token": "4", "logprob": math.log(0.75)}, {"token": "5", "logprob": math.log(0.25)}]}], 1, 5)
4.25
>>> weighted_score([{"token": '{"scores": {"tone": 2, "accuracy": '}, {"token": "3", "top_logprobs": [
...     {"token": "3", "logprob": math.log(0.5)}, {"token": "1", "logprob": math.log(0.5)}]}], 1, 5, key="accuracy")
2.0
"""

from __future__ import annotations

import math
import re
import textwrap
from typing import Any

from ragmeter.core.errors import JudgeOutputError
from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import RUBRIC, RUBRIC_JOINT, Evidence, Unavailable, need_argument, need_kind
from ragmeter.evidence.provider import (
    EXTRACTION,
    ProviderBase,
    Wanted,
    context_passages,
    failed,
    has_text,
    unavailable,
    value,
)
from ragmeter.evidence.rubric_criteria import RubricCriterion, with_builtin
from ragmeter.evidence.sources import Sources
from ragmeter.judges import schemas
from ragmeter.judges.judge import JudgeRequest, Judgment
from ragmeter.judges.prompts import load_prompt


class RubricScores(ProviderBase):
    """The answer's score on each requested criterion, plain and probability-weighted."""

    prompts = {RUBRIC: ("rubric.score",), RUBRIC_JOINT: ("rubric.joint",)}

    def __init__(self, needs: frozenset[str], sources: Sources) -> None:
        super().__init__(needs, sources)
        self.criteria = with_builtin(sources.criteria)
        self.rubric = load_prompt("rubric.score")
        self.joint = load_prompt("rubric.joint")
        self.together = [self.criteria[need_argument(n)] for n in sorted(needs) if need_kind(n) == RUBRIC_JOINT]

    def requests(self, stage: str, sample: Sample, ev: Evidence, wanted: Wanted) -> dict[str, JudgeRequest]:
        if stage != EXTRACTION:
            return {}
        out: dict[str, JudgeRequest] = {}
        passages = context_passages(sample, answer=True)  # what the answer was written from
        context = "\n".join(f"[{cid}] {text or ''}" for cid, text in passages) or "(none)"
        for need in sorted(n for n in self.needs if need_kind(n) == RUBRIC):
            name = need_argument(need)
            if not has_text(sample.answer):
                ev.rubric[name] = Unavailable("the sample has no answer")
                continue
            c = self.criteria[name]
            out[need] = JudgeRequest(self.rubric, {**c.prompt_inputs(), "question": sample.question or "",
                                                   "context": context, "answer": sample.answer},
                                     schemas.RUBRIC, "rubric_score", logprobs=True)
        if self.together and not has_text(sample.answer):
            ev.rubric_joint.update(dict.fromkeys((c.name for c in self.together),
                                                 Unavailable("the sample has no answer")))
        elif self.together:
            out[RUBRIC_JOINT] = JudgeRequest(self.joint, {"criteria": criteria_text(self.together),
                                                          "question": sample.question or "", "context": context,
                                                          "answer": sample.answer},
                                             joint_schema(self.together), "rubric_scores", logprobs=True)
        return out

    def read(self, ev: Evidence, name: str, judgment: Judgment | Exception) -> None:
        if name == RUBRIC_JOINT:
            self._read_joint(ev, judgment)
            return
        crit = self.criteria[need_argument(name)]
        bad = unavailable(judgment)
        if bad:
            ev.rubric[crit.name] = bad
            return
        score = value(judgment)["score"]
        if not crit.low <= score <= crit.high:
            ev.rubric[crit.name] = failed(JudgeOutputError(f"score {score} is outside {crit.low}-{crit.high}"))
        else:
            logprobs = judgment.logprobs if isinstance(judgment, Judgment) else None
            ev.rubric[crit.name] = {"score": score, "reason": value(judgment)["reason"],
                                    "weighted": weighted_score(logprobs, crit.low, crit.high)}

    def _read_joint(self, ev: Evidence, judgment: Judgment | Exception) -> None:
        bad = unavailable(judgment)
        if bad:
            ev.rubric_joint.update(dict.fromkeys((c.name for c in self.together), bad))
            return
        scores, reason = value(judgment)["scores"], value(judgment)["reason"]
        off = [f"{c.name} {scores[c.name]} is outside {c.low}-{c.high}" for c in self.together
               if not c.low <= scores[c.name] <= c.high]
        if off:  # one reply: a score off its scale puts the others in doubt too
            ev.rubric_joint.update(dict.fromkeys((c.name for c in self.together),
                                                 failed(JudgeOutputError("; ".join(off)))))
            return
        logprobs = judgment.logprobs if isinstance(judgment, Judgment) else None
        for c in self.together:
            ev.rubric_joint[c.name] = {"score": scores[c.name], "reason": reason,
                                       "weighted": weighted_score(logprobs, c.low, c.high, key=c.name)}


def criteria_text(criteria: list[RubricCriterion]) -> str:
    """The joint prompt's list of criteria: each name, description, scale and human-scored examples."""
    parts = []
    for c in criteria:
        shown = c.prompt_inputs()
        parts.append(f"- {c.name}: {c.description}\n  SCALE: {c.low} (worst) to {c.high} (best)"
                     + ("\n" + textwrap.indent(shown["examples"].rstrip(), "  ") if shown["examples"] else ""))
    return "\n".join(parts)


def joint_schema(criteria: list[RubricCriterion]) -> dict[str, Any]:
    """One integer per criterion, all required (their bounds are checked against the scales after)."""
    names = [c.name for c in criteria]
    return {"type": "object",
            "properties": {"scores": {"type": "object", "properties": {n: {"type": "integer"} for n in names},
                                      "required": names, "additionalProperties": False},
                           "reason": {"type": "string"}},
            "required": ["scores", "reason"], "additionalProperties": False}


def weighted_score(logprobs: list[dict[str, Any]] | None, low: int, high: int, *, key: str = "score") -> float | None:
    """G-Eval's score: sum(s * p(s)) / sum(p(s)) over the scale's values, read from the
    top log-probabilities of the token that holds the value of ``key`` (Liu et al. 2023). None
    when the backend gave no log-probabilities."""
    if not logprobs:
        return None
    wanted = re.compile(rf'"{re.escape(key)}"\s*:\s*$')
    text = ""
    for token in logprobs:
        if wanted.search(text):
            weights: dict[int, float] = {}
            for alt in token.get("top_logprobs") or [token]:
                t = alt["token"].strip()
                if t.isdigit() and low <= int(t) <= high:
                    weights[int(t)] = weights.get(int(t), 0.0) + math.exp(alt["logprob"])
            total = sum(weights.values())
            return sum(s * p for s, p in weights.items()) / total if total else None
        text += token["token"]
    return None


PROVIDER = RubricScores
