"""Generate a test set from a corpus through a judge.

``generate_testset(corpus, judge, n)`` works in rounds until every kind has its count (see
``kinds.allocate``) or ``max_rounds`` is spent:

1. draft: for each kind still short, ``ceil(short * overgenerate)`` new attempts (twice the
   shortfall in later rounds), their source chunks chosen by :class:`SourcePicker`, and one
   generation call each (all concurrent, through the judge and its ledger);
2. de-duplicate: a draft whose question has cosine >= ``dedupe`` with a kept question (earlier
   rounds, or earlier in this round) is removed, before any check is paid for (conversations,
   judged on both user turns, are compared with conversations only);
3. check: the calls in ``drafts.py``; for unanswerable drafts the corpus is first searched for
   the question's top ``check_k`` chunks;
4. keep the passing drafts in attempt order, up to the count; passing drafts past it are surplus.

Nothing is ever padded: a kind that stays short is reported as short. Every call goes through
the judge's ledger, so a rerun with the same corpus, seed, embedder and judge makes no call.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragmeter.embeddings.base import Embedder
from ragmeter.embeddings.search import DenseIndex
from ragmeter.judges.judge import Judge, JudgeRequest
from ragmeter.testset.chunk_sampling import SourcePicker
from ragmeter.testset.drafts import Draft, Prompts, read_checks, read_generation
from ragmeter.testset.question_kinds import DEFAULT, KINDS, allocate, parse_kinds

PREFIX = {"single": "single", "multi": "multi", "unanswerable": "unanswerable", "conversational": "conversation"}


@dataclass(frozen=True)
class TestSet:
    rows: list[dict]  # dataset records (conversations as native conversation records)
    report: dict


def generate_testset(corpus: Mapping[str, str], judge: Judge, n: int, *, kinds: str | Mapping[str, float] = DEFAULT,
                     embedder: Embedder | None = None, seed: int = 0, dedupe: float = 0.9, check_k: int = 5,
                     max_rounds: int = 4, overgenerate: float = 1.25,
                     on_progress: Callable[[str], None] | None = None) -> TestSet:
    shares = parse_kinds(kinds) if isinstance(kinds, str) else dict(kinds)
    plan = allocate(n, shares)
    if embedder is None:
        from ragmeter.embeddings.minilm import bundled

        embedder = bundled()
    say = on_progress or (lambda _: None)
    say(f"embedding {len(corpus)} chunks")
    index = DenseIndex(corpus, embedder)
    picker = SourcePicker(index.ids, index.vectors, seed=seed)
    prompts = Prompts()
    accepted: dict[str, list[Draft]] = {k: [] for k in plan}
    attempts = {k: 0 for k in plan}
    kept: list[tuple[np.ndarray, str, str]] = []  # (vector, text, group) of every draft not found a duplicate
    rejected: list[Draft] = []
    duplicates: list[dict] = []
    surplus = drafted = rounds = 0
    for rounds in range(1, max_rounds + 1):
        short = {k: plan[k] - len(accepted[k]) for k in plan if plan[k] > len(accepted[k])}
        if not short:
            rounds -= 1
            break
        drafts = []
        for k, deficit in short.items():
            for _ in range(math.ceil(deficit * overgenerate) if rounds == 1 else 2 * deficit):
                sources, variant, cos = picker.pick(k, attempts[k])
                drafts.append(Draft(k, attempts[k], sources, variant, cos))
                attempts[k] += 1
        drafted += len(drafts)
        say(f"round {rounds}: writing {len(drafts)} drafts")
        for d, j in zip(drafts, judge.run([prompts.generation(d, corpus) for d in drafts])):
            read_generation(d, j)
        live = [d for d in drafts if d.reject is None]
        if live:
            vectors = np.asarray(embedder.encode([d.key_text for d in live]), dtype=np.float64)
            for d, v in zip(live, vectors):
                group = _group(d.kind)
                pool = [(vec, text) for vec, text, g in kept if g == group]
                if pool:
                    sims = np.asarray([vec for vec, _ in pool]) @ v
                    best = int(np.argmax(sims))
                    if sims[best] >= dedupe:
                        d.reject = "duplicate"
                        duplicates.append({"kind": d.kind, "question": d.key_text, "duplicate_of": pool[best][1],
                                           "cosine": round(float(sims[best]), 4)})
                        continue
                kept.append((v, d.key_text, group))
        to_check = [d for d in drafts if d.reject is None]
        unanswerable = [d for d in to_check if d.kind == "unanswerable"]
        if unanswerable:
            for d, hits in zip(unanswerable, index.search([d.question for d in unanswerable], check_k)):
                d.checked_against = tuple(cid for cid, _ in hits)
        jobs: list[tuple[Draft, str, JudgeRequest]] = [(d, name, req) for d in to_check
                                                       for name, req in prompts.checks(d, corpus).items()]
        say(f"round {rounds}: checking {len(to_check)} drafts ({len(jobs)} calls)")
        replies: dict[int, dict[str, Any]] = {}
        for (d, name, _), j in zip(jobs, judge.run([req for _, _, req in jobs])):
            replies.setdefault(id(d), {})[name] = j
        for d in to_check:
            read_checks(d, replies[id(d)])
        for d in drafts:
            if d.reject is None:
                if len(accepted[d.kind]) < plan[d.kind]:
                    accepted[d.kind].append(d)
                else:
                    surplus += 1
            elif d.reject != "duplicate":
                rejected.append(d)
    rows = _rows(accepted, judge)
    reasons: dict[str, int] = {}
    for d in rejected:
        reasons[d.reject or ""] = reasons.get(d.reject or "", 0) + 1
    produced = {k: len(v) for k, v in accepted.items()}
    report = {
        "requested": plan, "produced": produced,
        "shortfall": {k: plan[k] - produced[k] for k in plan if produced[k] < plan[k]},
        "drafts": drafted, "rounds": rounds, "duplicates_removed": len(duplicates), "rejected": sum(reasons.values()),
        "rejected_by_reason": dict(sorted(reasons.items())), "surplus": surplus,
        "judge": {**judge.identity, **judge.stats.as_dict()}, "embedder": embedder.identity, "seed": seed,
        "dedupe": dedupe, "check_k": check_k, "prompts": prompts.hashes,
        "rejects": [{"kind": d.kind, "reason": d.reject, "sources": list(d.sources), "question": d.question,
                     **({"answer": d.answer} if d.answer else {}), **({"checks": d.checks} if d.checks else {})}
                    for d in rejected],
        "duplicates": duplicates,
    }
    return TestSet(rows, report)


def _group(kind: str) -> str:
    """Near-duplicates are looked for among questions (single, multi, unanswerable) and, apart,
    among conversations (whose first turn may well repeat a single question on purpose)."""
    return "conversation" if kind == "conversational" else "question"


def _rows(accepted: Mapping[str, list[Draft]], judge: Judge) -> list[dict]:
    rows: list[dict[str, Any]] = []
    for kind in KINDS:
        for i, d in enumerate(accepted.get(kind, []), start=1):
            rid = f"{PREFIX[kind]}-{i:03d}"
            meta: dict[str, Any] = {"generated": {"kind": kind, "sources": list(d.sources), "variant": d.variant,
                                                  "judge": judge.backend.model}}
            if d.pair_cosine is not None:
                meta["generated"]["pair_cosine"] = round(d.pair_cosine, 4)
            if kind == "unanswerable":
                meta["generated"]["missing"] = d.missing
                meta["generated"]["checked_against"] = list(d.checked_against)
                rows.append({"id": rid, "question": d.question, "answerable": False, "metadata": meta})
            elif kind == "conversational":
                follow_up: dict[str, Any] = {"question": d.question, "reference": d.answer, "relevant": [d.sources[-1]],
                                             "standalone": False, "metadata": meta}
                if d.claims:
                    follow_up["reference_claims"] = list(d.claims)
                rows.append({"id": rid, "turns": [{"question": d.first_question, "reference": d.first_answer,
                                                   "relevant": [d.sources[0]], "standalone": True, "metadata": meta},
                                                  follow_up]})
            else:
                row = {"id": rid, "question": d.question, "relevant": list(dict.fromkeys(d.sources)),
                       "reference": d.answer, "metadata": meta}
                if d.claims:
                    row["reference_claims"] = list(d.claims)
                rows.append(row)
    return rows
