"""The provider of ``rubric:<criterion>``: the judge's score of the answer on a criterion's scale.

One ``rubric.score`` call per (answered sample, criterion), in the extraction stage, with
the criterion's description, scale and examples (:mod:`ragmeter.evidence.rubric_criteria`,
the built-in ones and the run's), the question, the context and the answer. The reply's
score must lie on the scale (else the judgment is Failed). Where the backend returns token
log-probabilities the score is also read the G-Eval way, probability-weighted over the scale:

    weighted = sum(s * p(s)) / sum(p(s)) over the scale's values s,

from the top log-probabilities of the token that holds the score (Liu et al. 2023, G-Eval).

>>> weighted_score([{"token": '{"score": '}, {"token": "4", "top_logprobs": [
...     {"token": "4", "logprob": math.log(0.75)}, {"token": "5", "logprob": math.log(0.25)}]}], 1, 5)
4.25
"""

from __future__ import annotations

import math
import re
from typing import Any

from ragmeter.core.errors import JudgeOutputError
from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import RUBRIC, Evidence, Unavailable, need_argument, need_kind
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
from ragmeter.evidence.rubric_criteria import with_builtin
from ragmeter.evidence.sources import Sources
from ragmeter.judges import schemas
from ragmeter.judges.judge import JudgeRequest, Judgment
from ragmeter.judges.prompts import load_prompt


class RubricScores(ProviderBase):
    """The answer's score on each requested criterion, plain and probability-weighted."""

    prompts = {RUBRIC: ("rubric.score",)}

    def __init__(self, needs: frozenset[str], sources: Sources) -> None:
        super().__init__(needs, sources)
        self.criteria = with_builtin(sources.criteria)
        self.rubric = load_prompt("rubric.score")

    def requests(self, stage: str, sample: Sample, ev: Evidence, wanted: Wanted) -> dict[str, JudgeRequest]:
        if stage != EXTRACTION:
            return {}
        out: dict[str, JudgeRequest] = {}
        for need in sorted(n for n in self.needs if need_kind(n) == RUBRIC):
            name = need_argument(need)
            if not has_text(sample.answer):
                ev.rubric[name] = Unavailable("the sample has no answer")
                continue
            c = self.criteria[name]
            passages = context_passages(sample, answer=True)
            context = "\n".join(f"[{cid}] {text or ''}" for cid, text in passages) or "(none)"
            out[need] = JudgeRequest(self.rubric, {**c.prompt_inputs(), "question": sample.question or "",
                                                   "context": context, "answer": sample.answer},
                                     schemas.RUBRIC, "rubric_score", logprobs=True)
        return out

    def read(self, ev: Evidence, name: str, judgment: Judgment | Exception) -> None:
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


_SCORE_KEY = re.compile(r'"score"\s*:\s*$')


def weighted_score(logprobs: list[dict[str, Any]] | None, low: int, high: int) -> float | None:
    """G-Eval's score: sum(s * p(s)) / sum(p(s)) over the scale's values, read from the
    top log-probabilities of the token that holds the score (Liu et al. 2023). None when the
    backend gave no log-probabilities."""
    if not logprobs:
        return None
    text = ""
    for token in logprobs:
        if _SCORE_KEY.search(text):
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
