"""Pairwise preference between two systems' answers, asked in both orders.

For each question both runs answered, the judge is asked which answer is better with A
first, then with B first. The two verdicts combine: the same winner both times is a win
for that system; a verdict that flips with the order is recorded as a tie and counted as
position bias (Zheng et al. 2023, "Judging LLM-as-a-judge", section 3.3); a tie in either
order is a tie.

Reported: B's wins / ties / losses against A, B's win rate (win 1, tie 0.5) with a seeded
95% bootstrap interval, the position-bias rate, and a length-bias check: among decisive
pairs whose answers differ in length, how often the longer one won, with a two-sided exact
binomial p-value against 1/2.

Calibration: ``examples``, pairs people judged (:mod:`ragmeter.analysis.pair_examples`), go into
every request's prompt as few-shot examples, as the metric reference asks of every judge.
Without them the prompt reads as it did before examples existed (``pairwise.compare`` v2
renders the v1 text).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from ragmeter.analysis.pair_examples import PairExample, examples_text
from ragmeter.core.bootstrap import bootstrap_ci
from ragmeter.core.errors import InvalidInputError
from ragmeter.core.progress import Progress
from ragmeter.core.sample import Sample
from ragmeter.judges.judge import Judge, JudgeRequest
from ragmeter.judges.prompts import load_prompt

SCHEMA = {"type": "object",
          "properties": {"winner": {"type": "string", "enum": ["1", "2", "tie"]}, "reason": {"type": "string"}},
          "required": ["winner", "reason"], "additionalProperties": False}


def binomial_two_sided(k: int, n: int) -> float:
    """P(X as or more extreme than k) for X ~ Binomial(n, 1/2), two-sided."""
    if n == 0:
        return 1.0
    pk = math.comb(n, k) / 2 ** n
    return min(1.0, sum(math.comb(n, i) / 2 ** n for i in range(n + 1) if math.comb(n, i) / 2 ** n <= pk + 1e-15))


@dataclass
class PairOutcome:
    id: str
    outcome: str  # win (B better) | loss | tie | failed
    first: str | None  # verdict with A as answer 1: "A", "B" or "tie"
    second: str | None
    flipped: bool
    longer: str | None  # "A", "B" or None when equal


@dataclass
class PairwiseResult:
    outcomes: list[PairOutcome] = field(default_factory=list)
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    examples: int = 0  # human-judged pairs shown to the judge

    def count(self, what: str) -> int:
        return sum(o.outcome == what for o in self.outcomes)

    @property
    def judged(self) -> list[PairOutcome]:
        return [o for o in self.outcomes if o.outcome != "failed"]

    @property
    def win_rate(self) -> float | None:
        scores = [{"win": 1.0, "tie": 0.5, "loss": 0.0}[o.outcome] for o in self.judged]
        return sum(scores) / len(scores) if scores else None

    @property
    def win_rate_ci95(self):
        return bootstrap_ci(sorted({"win": 1.0, "tie": 0.5, "loss": 0.0}[o.outcome] for o in self.judged))

    @property
    def position_bias_rate(self) -> float | None:
        judged = self.judged
        return sum(o.flipped for o in judged) / len(judged) if judged else None

    @property
    def length_bias(self) -> dict:
        decisive = [o for o in self.judged if o.outcome in ("win", "loss") and o.longer]
        longer_won = sum((o.outcome == "win") == (o.longer == "B") for o in decisive)
        return {"decisive_with_length_difference": len(decisive), "longer_won": longer_won,
                "p": binomial_two_sided(longer_won, len(decisive))}

    def as_dict(self) -> dict:
        return {"wins": self.count("win"), "ties": self.count("tie"), "losses": self.count("loss"),
                "failed": self.count("failed"), "win_rate": self.win_rate,
                "win_rate_ci95": list(self.win_rate_ci95) if self.win_rate_ci95 else None,
                "position_bias_rate": self.position_bias_rate, "length_bias": self.length_bias,
                "only_in_a": self.only_a, "only_in_b": self.only_b, "human_examples": self.examples,
                "pairs": [o.__dict__ for o in self.outcomes]}


def _context(s: Sample) -> str:
    texts = {c.id: c.text for c in s.retrieved}
    return "\n".join(f"[{cid}] {texts.get(cid) or ''}" for cid in s.context_ids) or "(none)"


def pairwise(samples_a: Sequence[Sample], samples_b: Sequence[Sample], judge: Judge, *,
             examples: Sequence[PairExample] = (), progress: Progress | None = None) -> PairwiseResult:
    prompt = load_prompt("pairwise.compare")
    shots = examples_text(examples)
    a = {s.id: s for s in samples_a if s.answer}
    b = {s.id: s for s in samples_b if s.answer}
    ids = [i for i in a if i in b]
    if not ids:
        raise InvalidInputError(f"no sample id has an answer in both A ({len(a)} answered) and B ({len(b)} answered)",
                                fix="compare two runs or datasets of the same questions (the same sample ids), "
                                    "or give --b-field")
    requests = []
    for i in ids:
        sa, sb = a[i], b[i]
        base = {"question": sa.question or "", "context": _context(sa), "examples": shots}
        for one, two in ((sa, sb), (sb, sa)):
            requests.append(JudgeRequest(prompt, {**base, "answer_1": one.answer, "answer_2": two.answer}, SCHEMA,
                                         "preference"))
    if progress is not None:
        progress.start("comparing answers (both orders)", len(requests))
    replies = judge.run(requests, progress=progress)
    result = PairwiseResult(only_a=sorted(set(a) - set(b)), only_b=sorted(set(b) - set(a)), examples=len(examples))
    for n, i in enumerate(ids):
        first, second = replies[2 * n], replies[2 * n + 1]
        la, lb = len(a[i].answer or ""), len(b[i].answer or "")
        longer = None if la == lb else ("A" if la > lb else "B")
        if isinstance(first, Exception) or isinstance(second, Exception) or not first.ok or not second.ok:
            result.outcomes.append(PairOutcome(i, "failed", None, None, False, longer))
            continue
        v1 = {"1": "A", "2": "B", "tie": "tie"}[first.value["winner"]]
        v2 = {"1": "B", "2": "A", "tie": "tie"}[second.value["winner"]]
        flipped = "tie" not in (v1, v2) and v1 != v2
        if v1 == v2 and v1 != "tie":
            outcome = "win" if v1 == "B" else "loss"
        else:
            outcome = "tie"
        result.outcomes.append(PairOutcome(i, outcome, v1, v2, flipped, longer))
    return result
