"""One generated item from request to verdict: the generation request per kind, the reply read
into a :class:`Draft`, the checks it must pass, and why it was rejected.

Checks (one judge call each, all through the ledger):

- single and multi: ``testset.verify`` over the source passages: the passages answer the
  question (``not_answerable_from_sources``), the reference answer is supported by them
  (``answer_not_supported``), the question cannot be answered without them
  (``answerable_without_sources``: it states its own answer or is common knowledge), and for
  multi every source passage is needed (``not_all_sources_needed``);
- conversational: the same check of the follow-up, with the first turn as the conversation so
  far, plus ``turn.standalone``, which must say the follow-up is *not* understandable alone
  (``follow_up_is_standalone``);
- unanswerable: ``testset.answerable`` over the top-k corpus chunks by embedding similarity to
  the question must say none of them answers it (``answerable_from_corpus``).

A reply that never validated rejects the draft as ``generation_failed`` or ``check_failed``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.judges.judge import JudgeRequest, Judgment
from ragmeter.judges.prompts import Prompt, load_prompt
from ragmeter.judges.schemas import STANDALONE
from ragmeter.testset import schemas

GENERATE = {"single": "testset.single", "multi": "testset.multi", "unanswerable": "testset.unanswerable",
            "conversational": "testset.conversation"}
GENERATE_SCHEMA = {"single": schemas.QUESTION, "multi": schemas.QUESTION, "unanswerable": schemas.UNANSWERABLE,
                   "conversational": schemas.CONVERSATION}


@dataclass
class Draft:
    kind: str
    attempt: int
    sources: tuple[str, ...]
    variant: int
    pair_cosine: float | None = None
    question: str = ""
    answer: str = ""
    claims: tuple[str, ...] = ()
    first_question: str = ""
    first_answer: str = ""
    missing: str = ""
    checked_against: tuple[str, ...] = ()
    reject: str | None = None
    checks: dict[str, Any] = field(default_factory=dict)

    @property
    def history(self) -> str:
        if self.kind != "conversational":
            return "(none)"
        return f"User: {self.first_question}\nAssistant: {self.first_answer}"

    @property
    def key_text(self) -> str:
        """What near-duplicates are judged on."""
        return f"{self.first_question} {self.question}".strip() if self.kind == "conversational" else self.question


def numbered(texts: Sequence[str]) -> str:
    return "\n\n".join(f"[{i}] {t}" for i, t in enumerate(texts, start=1))


class Prompts:
    """The prompts used, loaded once; their hashes go into the report."""

    def __init__(self) -> None:
        ids = (*GENERATE.values(), "testset.verify", "testset.answerable", "turn.standalone")
        self.by_id: dict[str, Prompt] = {pid: load_prompt(pid) for pid in ids}

    @property
    def hashes(self) -> dict[str, str]:
        return {pid: p.hash for pid, p in self.by_id.items()}

    def generation(self, d: Draft, corpus: Mapping[str, str]) -> JudgeRequest:
        texts = [corpus[c] for c in d.sources]
        if d.kind in ("single", "unanswerable"):
            inputs: dict[str, Any] = {"passage": texts[0], "variant": d.variant}
        else:
            inputs = {"passage_1": texts[0], "passage_2": texts[1], "variant": d.variant}
        return JudgeRequest(self.by_id[GENERATE[d.kind]], inputs, GENERATE_SCHEMA[d.kind], f"testset_{d.kind}")

    def checks(self, d: Draft, corpus: Mapping[str, str]) -> dict[str, JudgeRequest]:
        if d.kind == "unanswerable":
            return {"answerable": JudgeRequest(self.by_id["testset.answerable"],
                                               {"passages": numbered([corpus[c] for c in d.checked_against]),
                                                "question": d.question}, schemas.ANSWERABLE, "testset_answerable")}
        passages = list(dict.fromkeys(d.sources))
        out = {"verify": JudgeRequest(self.by_id["testset.verify"],
                                      {"passages": numbered([corpus[c] for c in passages]), "history": d.history,
                                       "question": d.question, "answer": d.answer},
                                      schemas.VERIFY, "testset_verify")}
        if d.kind == "conversational":
            out["standalone"] = JudgeRequest(self.by_id["turn.standalone"],
                                             {"history": d.history, "question": d.question}, STANDALONE, "standalone")
        return out


def read_generation(d: Draft, j: Judgment | Exception) -> None:
    """Fill the draft from the generation reply, or mark it rejected."""
    if isinstance(j, Exception) or not j.ok:
        d.reject = "generation_failed"
        return
    v = j.value
    d.question = " ".join(str(v.get("follow_up" if d.kind == "conversational" else "question", "")).split())
    if d.kind == "unanswerable":
        d.missing = str(v.get("missing", "")).strip()
    else:
        d.answer = str(v.get("answer", "")).strip()
        d.claims = tuple(c.strip() for c in v.get("reference_claims", []) if str(c).strip())
    if d.kind == "conversational":
        d.first_question = " ".join(str(v.get("first_question", "")).split())
        d.first_answer = str(v.get("first_answer", "")).strip()
    if not d.question or (d.kind != "unanswerable" and not d.answer) or (d.kind == "conversational"
                                                                        and not d.first_question):
        d.reject = "empty_question_or_answer"


def read_checks(d: Draft, replies: Mapping[str, Judgment | Exception]) -> None:
    """Apply the checks' verdicts (in the order listed in the module docstring)."""
    values = {}
    for name, j in replies.items():
        if isinstance(j, Exception) or not j.ok:
            d.reject = "check_failed"
            return
        values[name] = j.value
    d.checks = values
    if d.kind == "unanswerable":
        if values["answerable"]["answerable"]:
            d.reject = "answerable_from_corpus"
        return
    v = values["verify"]
    sources = list(dict.fromkeys(d.sources))
    if not v["answerable"]:
        d.reject = "not_answerable_from_sources"
    elif not v["answer_supported"]:
        d.reject = "answer_not_supported"
    elif v["answerable_without_passages"]:
        d.reject = "answerable_without_sources"
    elif d.kind == "multi" and not set(range(1, len(sources) + 1)) <= set(v["needed_passages"]):
        d.reject = "not_all_sources_needed"
    elif d.kind == "conversational" and values["standalone"]["standalone"]:
        d.reject = "follow_up_is_standalone"
