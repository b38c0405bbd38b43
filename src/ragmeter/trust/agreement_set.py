"""How often a judge agrees with people on claim verification: a bundled, hand-labeled set.

``agreement/claims.jsonl``: 24 contexts in 24 domains and styles (policies, manuals, a patient
leaflet, a contract, encyclopedic prose, tables written as text), each a list of passages with
chunk ids; 216 claims written by hand, each with its label and why, balanced over supported /
contradicted / not_found within every context. The claims are hard on purpose: changed
numbers, dates and units, negations, swapped entities, claims that need two passages or a
small deduction (8 am + 40 minutes, six 200 mg tablets = 1,200 mg), and facts that are true in
the world but absent from the context. ``split`` (tune / heldout, by context) is kept for
``judge-check --split``; the local judge's rule is fitted and scored by leave-one-context-out
cross-validation (``cross_validated``), so every context is held out once.
Any judge can be checked: ``ragmeter judge-check --judge ...``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ragmeter.core.progress import Progress
from ragmeter.judges import schemas
from ragmeter.judges.judge import Judge, JudgeRequest
from ragmeter.judges.local.verdict_rule import Claims, CrossValidation, cluster_interval, cross_validate
from ragmeter.judges.prompts import load_prompt
from ragmeter.judges.replies import Keyed

SET_PATH = Path(__file__).parent / "agreement" / "claims.jsonl"
LABELS = schemas.VERDICTS  # supported, contradicted, not_found


@dataclass(frozen=True)
class Case:
    id: str
    split: str
    domain: str
    passages: tuple[tuple[str, str], ...]
    claims: tuple[str, ...]
    labels: tuple[str, ...]


@dataclass
class AgreementReport:
    n: int
    correct: int
    confusion: dict = field(default_factory=dict)  # confusion[label][predicted] = count
    failed: int = 0
    rows: list = field(default_factory=list)
    probs: dict = field(default_factory=dict)  # case id -> the judgment's stored probabilities (local judge)

    @property
    def answered(self) -> int:
        """Claims the judge gave a verdict for (a failed call is not a wrong answer)."""
        return self.n - self.failed

    @property
    def accuracy(self) -> float | None:
        """correct / answered; None (not computed) when the judge answered nothing, never 0."""
        return self.correct / self.answered if self.answered else None

    def interval(self) -> tuple[float, float] | None:
        """95% percentile bootstrap over contexts (the claims of one context move together),
        over the claims the judge answered (None when it answered none)."""
        import numpy as np

        rows = [r for r in self.rows if r["predicted"] is not None]
        correct = np.array([r["predicted"] == r["label"] for r in rows])
        groups = np.array([r["case"] for r in rows])
        return cluster_interval(correct, groups) if len(correct) else None

    def as_dict(self) -> dict:
        interval = self.interval()
        return {"n": self.n, "answered": self.answered, "correct": self.correct,
                "accuracy": None if self.accuracy is None else round(self.accuracy, 4),
                "interval95": None if interval is None else [round(interval[0], 4), round(interval[1], 4)],
                "failed": self.failed,
                "confusion": self.confusion, "labels": list(LABELS)}


def load_set(split: str = "all", path: Path = SET_PATH) -> list[Case]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if split not in ("all", row["split"]):
            continue
        passages = tuple(_passage(row["id"], i, p) for i, p in enumerate(row["context"], start=1))
        out.append(Case(row["id"], row["split"], row["domain"], passages, tuple(c["claim"] for c in row["claims"]),
                        tuple(c["label"] for c in row["claims"])))
    return out


def _passage(case_id: str, i: int, p: str | dict) -> tuple[str, str]:
    """A passage is ``{"id": ..., "text": ...}`` (or a bare text, numbered ``<case>-<i>``)."""
    return (p["id"], p["text"]) if isinstance(p, dict) else (f"{case_id}-{i}", p)


def verify_request(case: Case) -> JudgeRequest:
    """The same request the claim metrics send (prompt, schema, parts)."""
    evidence = "\n".join(f"[{pid}] {text}" for pid, text in case.passages)
    listing = "\n".join(f"{i}. {c}" for i, c in enumerate(case.claims, start=1))
    ids = tuple(range(1, len(case.claims) + 1))
    return JudgeRequest(load_prompt("claims.verify"), {"evidence": evidence, "claims": listing}, schemas.VERIFY,
                        "verdicts", Keyed("verdicts", "id", ids),
                        parts={"passages": list(case.passages), "claims": list(zip(ids, case.claims))})


def check(judge: Judge, cases: list[Case], *, progress: Progress | None = None) -> AgreementReport:
    """The judge's verdicts on ``cases`` against their labels (``progress``: one step per case)."""
    report = AgreementReport(0, 0, {a: {b: 0 for b in LABELS} for a in LABELS})
    if progress is not None:
        progress.start("judging the agreement set", len(cases))
    for case, j in zip(cases, judge.run([verify_request(c) for c in cases], progress=progress)):
        got = {} if isinstance(j, Exception) or not j.ok else {v["id"]: v["verdict"] for v in j.value["verdicts"]}
        for i, (claim, label) in enumerate(zip(case.claims, case.labels), start=1):
            predicted = got.get(i)
            report.n += 1
            if predicted is None:
                report.failed += 1
            else:
                report.confusion[label][predicted] += 1
                report.correct += predicted == label
            report.rows.append({"case": case.id, "claim": claim, "label": label, "predicted": predicted})
        if not isinstance(j, Exception) and j.ok and j.logprobs:
            report.probs[case.id] = j.logprobs
    return report


def cross_validated(report: AgreementReport, cases: list[Case], *, score: str = "yes") -> CrossValidation | None:
    """For a judge that stores per-passage probabilities (the local judge): the accuracy of its
    rule re-fitted leave-one-context-out on those probabilities (no model call). None when the
    judge gave none, or fewer than two contexts were checked."""
    per_claim = []
    for case in cases:
        rows = report.probs.get(case.id)
        if rows is None:
            return None
        for i, label in enumerate(case.labels, start=1):
            per_claim.append((case.id, label, [r for r in rows if r.get("claim") == i]))
    if len({c for c, _, _ in per_claim}) < 2:
        return None
    return cross_validate(Claims.from_rows(per_claim), score=score)
