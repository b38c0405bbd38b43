"""The offline judge's decision rule: from a claim's evidence rows to one verdict.

Each row is one (claim, passage) of :func:`~ragmeter.judges.offline.signals.signals`. The
passage that decides is the one the claim lines up with best,

    align = w_words * words + w_tokens * tokens + w_sentence * sentence,

and then, with the constants of ``rule.json`` (fitted on data the file names, with the
cross-validated figures beside them):

    not_found     if align < t_found                  (no passage speaks of the claim)
    contradicted  else if the aligned sentence states another amount of the same kind
                  (3 days / 5 days, $40 / $45, 1998 / 1999), or (``negation``) flips a negation
    supported     else if align >= t_supported (and, with ``require_complete``, every amount
                  and name of the claim is in the passage), and the model stage (where it ran)
                  does not say otherwise
    not_found     otherwise (too uncertain to call either way)

``require_complete`` and ``negation`` are switches the fit chooses: measured on both sets, the
names-and-amounts requirement lost more supported claims than it caught (``rule.json``).

The model stage (``[local]``) asks the bundled model's three-way question only for the
claims this leaves uncertain (t_found <= align < t_sure, no conflict); its probabilities join
the row of the deciding passage (``model``: P supported, P contradicted, P unmentioned), and
its log-ratio log s - log c decides those claims: supported at or above m_supported,
contradicted below m_contradicted, else not found. A row without ``model`` is decided on the
evidence alone. ``sources``: the deciding passage, and only for a verdict it decided (a
not-found claim cites nothing).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

RULE_PATH = Path(__file__).parent / "rule.json"
_EPS = 1e-9


@dataclass(frozen=True)
class EvidenceRule:
    w_words: float = 0.5
    w_tokens: float = 0.0
    w_sentence: float = 0.5
    t_found: float = 0.6
    t_supported: float = 0.6
    t_sure: float = 0.9  # at or above: no model question (the evidence is decisive)
    require_complete: bool = False
    negation: bool = True
    model_stage: bool = False  # ask the bundled model about uncertain claims by default (where installed)
    m_supported: float = 0.0
    m_contradicted: float = 0.0
    fitted_on: str = "not fitted"
    measured: dict = field(default_factory=dict, compare=False)

    def as_dict(self) -> dict:
        return asdict(self)

    def align(self, row: dict) -> float:
        return self.w_words * row["words"] + self.w_tokens * row["tokens"] + self.w_sentence * row["sentence"]

    def deciding(self, rows: Sequence[dict]) -> dict | None:
        """The row of the passage the claim lines up with best (the first on a tie)."""
        return max(rows, key=self.align) if rows else None

    def uncertain(self, rows: Sequence[dict]) -> bool:
        """Does the model stage get asked about this claim?"""
        best = self.deciding(rows)
        return best is not None and self.t_found <= self.align(best) < self.t_sure and not self.conflict(best)

    def conflict(self, row: dict) -> bool:
        return conflict(row, negation=self.negation)

    def decide(self, rows: Sequence[dict]) -> tuple[str, list[str]]:
        best = self.deciding(rows)
        if best is None or self.align(best) < self.t_found:
            return "not_found", []
        if self.conflict(best):
            return "contradicted", [best["passage"]]
        model = best.get("model")
        if model is not None:
            ratio = math.log(model["supported"] + _EPS) - math.log(model["contradicted"] + _EPS)
            if ratio < self.m_contradicted:
                return "contradicted", [best["passage"]]
            if ratio < self.m_supported:
                return "not_found", []
        if self.align(best) >= self.t_supported and (complete(best) or not self.require_complete):
            return "supported", [best["passage"]]
        return "not_found", []

    def verdicts(self, rows: list[dict], claim_ids: list[int]) -> dict:
        """The claims.verify reply from stored rows (no call)."""
        out = []
        for cid in claim_ids:
            verdict, sources = self.decide([r for r in rows if r["claim"] == cid])
            out.append({"id": cid, "verdict": verdict, "sources": sources, "combined": False, "quote": ""})
        return {"verdicts": out}


def conflict(row: dict, *, negation: bool = True) -> bool:
    """The aligned sentence states another amount of the claim's kind, or flips its negation
    (where it shares at least half of the claim's words, so it speaks of the same thing)."""
    flipped = negation and bool(row["negation_flip"]) and row["aligned_words"] >= 0.5
    return bool(row["amounts_conflict"]) or flipped


def complete(row: dict) -> bool:
    """Every amount and every distinctive name of the claim is in the passage."""
    return row["amounts_found"] == row["amounts"] and row["names_missing"] == 0


def load_rule(path: Path = RULE_PATH) -> EvidenceRule:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    c: dict[str, Any] = {k: v if isinstance(v, bool) else float(v) for k, v in data["constants"].items()}
    return EvidenceRule(**c, fitted_on=data["fitted_on"], measured=data.get("measured", {}))
