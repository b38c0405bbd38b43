"""The offline judge's decision rule: from a claim's evidence rows to one verdict and its support.

Each row is one (claim, passage) of :func:`~ragmeter.judges.offline.signals.signals`. A row's
support probability is a logistic model of four of its signals,

    p(row) = 1 / (1 + exp(-(bias + w_words * words + w_tokens * tokens + w_sentence * sentence
                            + w_aligned_words * aligned_words))),

the claim's support p is its best passage's (that passage decides), and then, with the constants
of ``rule.json`` (fitted on data the file names, with the cross-validated figures beside them):

    not_found     if p < t_found                      (no passage speaks of the claim)
    contradicted  else if the aligned sentence states another amount of the same kind
                  (3 days / 5 days, $40 / $45, 1998 / 1999), or (``negation``) the passage
                  says the claim with its negation flipped
    supported     else if p >= t_supported (and, with ``require_complete``, every amount and
                  name of the claim is in the passage), and the model stage (where it ran) does
                  not say otherwise
    not_found     otherwise (too uncertain to call either way)

``require_complete`` and ``negation`` are switches the fit chooses (``rule.json``).

Each verdict carries the claim's ``support``, the credit ``faithfulness`` gives it: 0 for a
contradicted claim, 1 for a supported one whose p reaches ``t_sure`` (the evidence is
decisive), else p itself (a claim the evidence leaves uncertain counts in part).

The model stage (``--judge local:model``) asks the bundled model's three-way question only for
the claims this leaves uncertain (t_found <= p < t_ask, no conflict); its probabilities join
the row of the deciding passage (``model``: P supported, P contradicted, P unmentioned), and
its log-ratio log s - log c decides those claims: contradicted below m_contradicted, not found
below m_supported, and at or above it supported (``model_decides``) or left to the evidence's
t_supported (the model then only demotes). A row without ``model``, or one whose claim the
evidence decides (p outside [t_found, t_ask), or a conflict), is decided on the evidence
alone. ``sources``: the deciding passage, and only for a verdict it decided (a not-found claim
cites nothing).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

RULE_PATH = Path(__file__).parent / "rule.json"
SIGNALS = ("words", "tokens", "sentence", "aligned_words")  # the signals the support model reads
_EPS = 1e-9


@dataclass(frozen=True)
class EvidenceRule:
    w_words: float = 4.0
    w_tokens: float = 4.0
    w_sentence: float = 4.0
    w_aligned_words: float = 0.0
    bias: float = -7.0
    t_found: float = 0.3
    t_supported: float = 0.6
    t_sure: float = 0.9  # at or above: full credit (the evidence is decisive)
    t_ask: float = 0.9  # the model stage asks about found claims below this (no conflict)
    require_complete: bool = False
    negation: bool = True
    model_stage: bool = False  # ask the bundled model about uncertain claims by default (where installed)
    m_supported: float = 0.0
    m_contradicted: float = 0.0
    model_decides: bool = False  # the model's "supported" stands (else only its doubts count)
    fitted_on: str = "not fitted"
    measured: dict = field(default_factory=dict, compare=False)

    def as_dict(self) -> dict:
        return asdict(self)

    def weights(self) -> tuple[float, ...]:
        return tuple(getattr(self, f"w_{s}") for s in SIGNALS)

    def support(self, row: dict) -> float:
        """The probability that this row's passage supports its claim."""
        z = self.bias + sum(w * float(row[s]) for w, s in zip(self.weights(), SIGNALS))
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    def deciding(self, rows: Sequence[dict]) -> dict | None:
        """The row of the passage that supports the claim best (the first on a tie)."""
        return max(rows, key=self.support) if rows else None

    def uncertain(self, rows: Sequence[dict]) -> bool:
        """Does the model stage get asked about this claim?"""
        best = self.deciding(rows)
        return best is not None and self.t_found <= self.support(best) < self.t_ask and not self.conflict(best)

    def conflict(self, row: dict) -> bool:
        return conflict(row, negation=self.negation)

    def decide(self, rows: Sequence[dict]) -> tuple[str, list[str]]:
        best = self.deciding(rows)
        if best is None or self.support(best) < self.t_found:
            return "not_found", []
        if self.conflict(best):
            return "contradicted", [best["passage"]]
        ratio = self.model_ratio(best)
        if ratio is not None:
            if ratio < self.m_contradicted:
                return "contradicted", [best["passage"]]
            if ratio < self.m_supported:
                return "not_found", []
            if self.model_decides:
                return "supported", [best["passage"]]
        if self.support(best) >= self.t_supported and (complete(best) or not self.require_complete):
            return "supported", [best["passage"]]
        return "not_found", []

    def model_ratio(self, row: dict) -> float | None:
        """The model stage's log P(supported) - log P(contradicted) on the deciding row, where it
        was asked and counts (the evidence left the claim below t_ask); else None."""
        model = row.get("model")
        if model is None or self.support(row) >= self.t_ask:
            return None
        return math.log(model["supported"] + _EPS) - math.log(model["contradicted"] + _EPS)

    def credit(self, verdict: str, p: float) -> float:
        """The support a verdict carries (see the module docstring)."""
        if verdict == "contradicted":
            return 0.0
        return 1.0 if verdict == "supported" and p >= self.t_sure else p

    def verdicts(self, rows: list[dict], claim_ids: list[int], *, support: bool = False) -> dict:
        """The claims.verify reply from stored rows (no call); ``support``: each verdict with its
        support, and where the model stage was asked its log-ratio (``model``; beyond the reply's
        schema: the backend adds them after the reply is checked)."""
        out = []
        for cid in claim_ids:
            mine = [r for r in rows if r["claim"] == cid]
            verdict, sources = self.decide(mine)
            v: dict[str, Any] = {"id": cid, "verdict": verdict, "sources": sources, "combined": False, "quote": ""}
            if support:
                best = self.deciding(mine)
                v["support"] = round(self.credit(verdict, self.support(best) if best else 0.0), 4)
                ratio = self.model_ratio(best) if best and not self.conflict(best) else None
                if ratio is not None:  # what the model stage answered, beside the verdict it shaped
                    v["model"] = round(ratio, 4)
            out.append(v)
        return {"verdicts": out}


def conflict(row: dict, *, negation: bool = True) -> bool:
    """The aligned sentence states another amount of the claim's kind, or the passage says the
    claim with its negation flipped (a sentence or clause matching it closely apart from that)."""
    return bool(row["amounts_conflict"]) or (negation and bool(row["negation_flip"]))


def complete(row: dict) -> bool:
    """Every amount and every distinctive name of the claim is in the passage."""
    return row["amounts_found"] == row["amounts"] and row["names_missing"] == 0


def load_rule(path: Path = RULE_PATH) -> EvidenceRule:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    c: dict[str, Any] = {k: v if isinstance(v, bool) else float(v) for k, v in data["constants"].items()}
    return EvidenceRule(**c, fitted_on=data["fitted_on"], measured=data.get("measured", {}))
