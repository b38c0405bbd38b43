"""How the local judge verifies a claim list against passages: which (claim, passage) pairs it
asks about, which questions, in which order. The verdict itself is ``verdict_rule``'s.

1. Preselection (``preselect``, ``top_k`` > 0): each claim is checked only against the
   passages that can bear on it; the others get a row ``{"skipped": "preselection", "cosine": x}``.
2. The three-way question for every kept (claim, passage), passage by passage, so the KV cache
   of (system prompt, passage) is evaluated once per passage and reused (or shared by the claims'
   sequences of one llama.cpp batch, ``LocalLLM.parallel``).
3. Where the question set has one and the rule reads it (``VerdictRule.score == "yes"``), the
   yes/no question, only for claims that the three-way answers place in some passage: for a
   claim every checked passage leaves out (the rule's first test, with ``SKIP_MARGIN`` of
   slack so that a re-fitted bias down to ``b - SKIP_MARGIN`` re-scores exactly), the answer could
   not change the verdict, and its rows get ``"yes": None``.

``mode='joined'`` reads all passages as one (``+``-joined ids).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ragmeter.judges.local.llm import QUESTION_SETS, LocalLLM, Usage
from ragmeter.judges.local.preselect import preselect
from ragmeter.judges.local.verdict_rule import VerdictRule

SKIP_MARGIN = 0.5


@dataclass(frozen=True)
class VerifySettings:
    mode: str = "per_chunk"  # or "joined"
    questions: str = "long"  # a key of llm.QUESTION_SETS
    top_k: int = 0  # passages kept per claim by similarity (0: all), plus exact number/name overlaps
    skip_second: bool = False  # no yes/no question where the three-way answers already give not_found

    def as_dict(self) -> dict:
        return asdict(self)


def verdict_rows(llm: LocalLLM, passages: Sequence[tuple[str, str]], claims: Sequence[tuple[int, str]],
                 settings: VerifySettings, rule: VerdictRule, usage: Usage, embedder: Any = None) -> list[dict]:
    """One row per (claim, passage): P(supported), P(contradicted), P(unmentioned), P(yes)
    (None where not asked), or the reason the passage was skipped."""
    three, *second = QUESTION_SETS[settings.questions]
    yes_no = second[0] if second and rule.uses_yes else None
    if settings.mode == "joined":
        passages = [("+".join(pid for pid, _ in passages), "\n\n".join(text for _, text in passages))]
    texts = [t for _, t in claims]
    selections = preselect(texts, [t for _, t in passages], top_k=settings.top_k if settings.mode != "joined" else 0,
                           embedder=embedder)
    rows: dict[tuple[int, int], dict] = {}
    skipped = [{"claim": cid, "passage": passages[j][0], "skipped": "preselection", "cosine": cos}
               for (cid, _), sel in zip(claims, selections) for j, cos in sel.skipped]
    # One question over every passage, then the other: consecutive prompts share the system prompt too.
    for j, (pid, text) in enumerate(passages):
        wanted = [i for i, sel in enumerate(selections) if j in sel.keep]
        if not wanted:
            continue
        for i, p in zip(wanted, llm.ask(three, text, [texts[i] for i in wanted], usage)):
            rows[(i, j)] = {"claim": claims[i][0], "passage": pid, **{k: round(v, 6) for k, v in p.items()},
                            **({"yes": None} if yes_no is not None else {})}
    if yes_no is None:
        return [rows[key] for key in sorted(rows, key=lambda k: (k[1], k[0]))] + skipped
    loose = VerdictRule(bias_unmentioned=rule.bias_unmentioned - SKIP_MARGIN)
    ask_yes = {i for i in range(len(claims))
               if not settings.skip_second or loose.mentioned([r for (ci, _), r in rows.items() if ci == i])}
    for j, (_, text) in enumerate(passages):
        wanted = [i for i, sel in enumerate(selections) if j in sel.keep and i in ask_yes]
        if not wanted:
            continue
        for i, p in zip(wanted, llm.ask(yes_no, text, [texts[i] for i in wanted], usage)):
            rows[(i, j)]["yes"] = round(p["yes"], 6)
    ordered = [rows[key] for key in sorted(rows, key=lambda k: (k[1], k[0]))]
    return ordered + skipped
