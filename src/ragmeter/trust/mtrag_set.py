"""The bundled MTRAG development half: real answers rated by people, to check a judge against.

``trust/mtrag/dev.jsonl`` holds the ClapNQ and Govt tasks of the MTRAG benchmark's human
evaluations (Katsis et al. 2025, IBM, Apache-2.0: ``trust/mtrag/LICENSE`` and ``NOTICE``): 78
tasks, each with the conversation so far, the reference passages shown to the models, the
reference answer, and three responses (the reference, Llama 3.1 405B, GPT-4o), each rated 1-4
(No, Mostly No, Mostly Yes, Yes) for faithfulness and completeness by two or three annotators,
with the paper's RougeL, Bert-Rec and Bert-KPrec scores and ``rl_f``, the benchmark's own RAGAS-style
LLM faithfulness judge. Written by ``bench/mtrag_dev_trim.py``
from the shared reference file, records unchanged, other ratings dropped. The benchmark's other
two collections are not bundled (they are kept apart to check what was built on this half).

A response becomes a ``Sample``: the question is the last user turn, the earlier turns its
``history`` (the claim extraction prompt reads it to resolve "it" and "the other one"; the local
judge does not), the passages are its retrieved chunks, the response its answer, the
reference answer its reference. The human score of a response is the median of its annotators'
ratings (MTRAG's own aggregator).
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragmeter.core.errors import InvalidParameterError
from ragmeter.core.sample import Chunk, Sample

SET_PATH = Path(__file__).parent / "mtrag" / "dev.jsonl"
SET_NAME = "mtrag-dev"
BASELINES = ("Bert-KPrec", "RougeL", "Bert-Rec", "rl_f")


@dataclass(frozen=True)
class Rated:
    """One rated response."""

    id: str  # <task id>::<model>
    task: str
    model: str
    collection: str
    question: str
    history: str
    passages: tuple[tuple[str, str], ...]
    reference: str
    response: str
    faithfulness: tuple[int, ...]  # each annotator's rating, 1-4
    completeness: tuple[int, ...]
    baselines: dict  # RougeL, Bert-Rec, Bert-KPrec: the paper's algorithmic scores; rl_f: its LLM judge

    def human(self, rating: str) -> float:
        """The median of the annotators' ratings (``faithfulness`` or ``completeness``)."""
        return float(statistics.median(getattr(self, rating)))

    def sample(self) -> Sample:
        return Sample(id=self.id, question=self.question, retrieved=tuple(Chunk(pid, text=text)
                                                                            for pid, text in self.passages),
                      answer=self.response, reference=self.reference,
                      metadata={"history": self.history} if self.history else {})


def load_set(path: Path = SET_PATH) -> list[Rated]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        task = json.loads(line)
        turns = task["conversation"]
        last = max((i for i, (speaker, _) in enumerate(turns) if speaker == "user"), default=None)
        question = turns[last][1] if last is not None else ""
        history = "\n".join(f"{speaker}: {text}" for speaker, text in turns[:last or 0])
        passages = tuple((pid, text) for pid, text in task["passages"])
        for r in task["responses"]:
            out.append(Rated(f"{task['task']}::{r['model']}", task["task"], r["model"], task["collection"], question,
                             history, passages, task["reference"], r["response"], tuple(r["faithfulness"]),
                             tuple(r["completeness"]), {b: r.get(b) for b in BASELINES}))
    return out


def stratified(items: list[Rated], n: int, *, seed: int = 0) -> list[Rated]:
    """``n`` responses drawn in the set's own mix of median human faithfulness ratings
    (proportional allocation, largest remainder first; random within a rating, fixed seed),
    so a sample's figures estimate the whole set's, not a sample rich in bad answers."""
    if n < 1:
        raise InvalidParameterError(f"--limit must be a positive number of responses, got {n}")
    if n >= len(items):
        return list(items)
    strata: dict[float, list[Rated]] = {}
    for item in items:
        strata.setdefault(item.human("faithfulness"), []).append(item)
    keys = sorted(strata)
    quota = {k: n * len(strata[k]) / len(items) for k in keys}
    take = {k: int(quota[k]) for k in keys}
    for k in sorted(keys, key=lambda k: (-(quota[k] - take[k]), k))[: n - sum(take.values())]:
        take[k] += 1
    rng = np.random.default_rng(seed)
    chosen = {item.id for k in keys for item in
              (strata[k][i] for i in sorted(rng.choice(len(strata[k]), size=take[k], replace=False)))}
    return [item for item in items if item.id in chosen]  # in set order
