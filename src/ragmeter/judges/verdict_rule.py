"""From typed-verdict probabilities to one verdict per claim: the local judge's decision rule.

Two questions are asked per (claim, passage) (``local_llm.THREE_WAY``, ``local_llm.YES_NO``).
Pooled over the passages as the strongest evidence either way,
s = max P(supported), c = max P(contradicted), n = min P(unmentioned), y = max P(yes):

    not_found     if log n + b_n > max(log s, log c)      (every passage leaves the claim out)
    supported     else if y >= t
    contradicted  otherwise

The three-way question separates "mentioned" from "not mentioned" well but confuses supported
with contradicted more often on a 1.5B model; the yes/no question separates those two a
little better (AUC of supported over contradicted, per chunk: 0.76 / 0.88 on the tune /
held-out split, against 0.74 / 0.78 for the three-way s / (s + c)). ``b_n`` and ``t`` were
fitted by grid search on the ``tune`` half of the bundled agreement set (36 claims), and the
accuracy is reported on the other half (``ragmeter judge-check``; README "Offline judge").
``sources`` are the passages with the winning probability: the model's strongest passage,
not a checked citation.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

_EPS = 1e-9


@dataclass(frozen=True)
class VerdictRule:
    bias_unmentioned: float = 0.0
    yes_threshold: float = 0.5
    fitted_on: str = "not fitted"

    def as_dict(self) -> dict:
        return asdict(self)

    def decide(self, rows: list[dict]) -> tuple[str, list[str]]:
        s = max(r["supported"] for r in rows)
        c = max(r["contradicted"] for r in rows)
        n = min(r["unmentioned"] for r in rows)
        if math.log(n + _EPS) + self.bias_unmentioned > max(math.log(s + _EPS), math.log(c + _EPS)):
            return "not_found", []
        y = max(r["yes"] for r in rows)
        if y >= self.yes_threshold:
            return "supported", [r["passage"] for r in rows if r["yes"] == y]
        return "contradicted", [r["passage"] for r in rows if r["contradicted"] == c]

    def verdicts(self, probs: list[dict], claim_ids: list[int]) -> dict:
        """The claims.verify reply built from stored (claim, passage) probabilities."""
        out = []
        for cid in claim_ids:
            verdict, sources = self.decide([r for r in probs if r["claim"] == cid])
            out.append({"id": cid, "verdict": verdict, "sources": sources, "combined": False, "quote": ""})
        return {"verdicts": out}


_FIT = "grid search on the tune split of the bundled agreement set (36 claims, 6 domains)"
RULES = {
    "per_chunk": VerdictRule(bias_unmentioned=0.3, yes_threshold=0.40, fitted_on=_FIT),
    "joined": VerdictRule(bias_unmentioned=-0.1, yes_threshold=0.50, fitted_on=_FIT),
}

# Measured with the bundled model (ragmeter judge-check --judge local --split heldout [--mode joined]):
# accuracy on the held-out half, and its confusion (rows: label; columns: supported, contradicted,
# not_found). Per chunk is the default: the joined rule fitted to 0.81 on the tune half falls to 0.42.
MEASURED = {
    "per_chunk": {"split": "heldout", "n": 36, "accuracy": 0.75,
                  "confusion": {"supported": [9, 3, 0], "contradicted": [1, 10, 1], "not_found": [0, 4, 8]}},
    "joined": {"split": "heldout", "n": 36, "accuracy": 0.417,
               "confusion": {"supported": [2, 10, 0], "contradicted": [2, 9, 1], "not_found": [0, 8, 4]}},
}
