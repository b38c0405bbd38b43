"""The provider of every kind of evidence not yet in its own module (while they move out).

Planning the judge calls that fill each sample's claim matrix: decompose once, verify once.

Per sample, at most five judge calls cover every claim metric:

1. ``claims.extract``: the answer and the reference split into claims in one call (given
   claims are used as given), with, for the answer, whether each statement addresses the
   question and whether the whole answer declines;
2. ``claims.verify``, one call per (claim list, source) that some requested metric needs:
   answer claims against the context and against the reference, reference claims against
   the context and against the answer. Each claim gets supported / contradicted / not_found
   with the ids of the passages behind the verdict and a short quote.

Context relevance (``context.relevance``) and the question-generation form of answer
relevancy (``answer.questions``) add one call each when asked for. What a sample lacks
(no answer, no reference, empty context) is recorded as ``Unavailable`` without a call;
a judgment that never validated is ``Unavailable(failed=True)``.

The needs come from the metrics (``JudgedSpec.needs``); the planner knows evidence, not metrics.

>>> weighted_score([{"token": '{"score": '}, {"token": "4", "top_logprobs": [
...     {"token": "4", "logprob": math.log(0.75)}, {"token": "5", "logprob": math.log(0.25)}]}], 1, 5)
4.25
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Sequence
from typing import Any

from ragmeter.actions.calls import AgentRun
from ragmeter.actions.criteria import CriteriaSet, Criterion
from ragmeter.actions.grade import CaseGrade, VerifyFn, grade_case
from ragmeter.actions.judged import verifier
from ragmeter.actions.readers import run_from_sample
from ragmeter.core.errors import InvalidInputError, JudgeOutputError
from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import (
    ACTIONS,
    ANSWER_CLAIMS,
    PAIRS,
    QUESTIONS,
    REFERENCE_CLAIMS,
    RUBRIC,
    SENTENCES,
    STANDALONE,
    Claim,
    Evidence,
    Unavailable,
    Verdict,
    need_argument,
    need_kind,
)
from ragmeter.evidence.provider import EXTRACTION, ProviderBase, Wanted, failed, unavailable, value
from ragmeter.evidence.rubric_criteria import with_builtin
from ragmeter.evidence.sources import Sources
from ragmeter.judges import schemas
from ragmeter.judges.judge import Judge, JudgeRequest, Judgment
from ragmeter.judges.prompts import load_prompt
from ragmeter.judges.replies import Keyed
from ragmeter.judges.schemas import NOT_NEEDED
from ragmeter.judges.sentences import split_sentences

DEFAULT_QUESTIONS = 3


def context_passages(sample: Sample) -> list[tuple[str, str | None]]:
    """(chunk id, text) for each chunk that reached the prompt, in prompt order."""
    texts = {c.id: c.text for c in sample.retrieved}
    return [(cid, texts.get(cid)) for cid in sample.context_ids]


def passages_for(sample: Sample, source: str) -> list[tuple[str, str]] | Unavailable:
    """What claims are verified against: the context's passages, or the reference answer or the
    answer as one passage named ``reference`` / ``answer``."""
    if source == "context":
        passages = [(cid, text or "") for cid, text in context_passages(sample)]
        return passages if passages else Unavailable("the context is empty")
    text = sample.reference if source == "reference" else sample.answer
    if text is None or not text.strip():
        return Unavailable(f"the sample has no {'reference answer' if source == 'reference' else 'answer'}")
    return [(source, text)]


def check_texts(samples: Sequence[Sample], needs: set[str]) -> None:
    """Before any call: every context chunk a judge must read has a text."""
    if not needs & {"answer@context", "reference@context", SENTENCES}:
        return
    for s in samples:
        for cid, text in context_passages(s):
            if text is None:
                raise InvalidInputError(f'context chunk "{cid}" has no text for the judge to read', record=s.id,
                                        field="retrieved", fix="give chunk texts in the data or with --corpus")


def _has_text(text: str | None) -> bool:
    return text is not None and bool(text.strip())


class Legacy(ProviderBase):
    """Builds the judge requests a sample needs, and reads the judgments back into its evidence.

    Two stages: :meth:`extraction_requests` (what depends on the sample alone: claims,
    needed sentences, generated questions, standalone turns, rubric scores), then
    :meth:`verification_requests` (the claims of stage one against their sources).
    """

    prompts = {
        ANSWER_CLAIMS: ("claims.extract",), REFERENCE_CLAIMS: ("claims.extract",),
        **{pair: ("claims.extract", "claims.verify") for pair in PAIRS},
        SENTENCES: ("context.relevance",), QUESTIONS: ("answer.questions",), RUBRIC: ("rubric.score",),
        STANDALONE: ("turn.standalone",),
        ACTIONS: ("claims.extract", "claims.verify"),
    }

    def __init__(self, needs: frozenset[str], sources: Sources) -> None:
        super().__init__(needs, sources)
        self.beyond = _Actions(set(needs), sources)
        self.n_questions = max((int(need_argument(n)) for n in self.needs if need_kind(n) == QUESTIONS
                                and need_argument(n)), default=DEFAULT_QUESTIONS)
        self.criteria = with_builtin(sources.criteria)
        self.rubric = load_prompt("rubric.score")
        self.standalone = load_prompt("turn.standalone")
        self.extract = load_prompt("claims.extract")
        self.verify = load_prompt("claims.verify")
        self.relevance = load_prompt("context.relevance")
        self.generate = load_prompt("answer.questions")

    def check(self, samples: Sequence[Sample]) -> None:
        check_texts(samples, set(self.needs))

    def prepare(self, sample: Sample, ev: Evidence) -> None:
        self.beyond.prepare(sample, ev)

    def requests(self, stage: str, sample: Sample, ev: Evidence, wanted: Wanted) -> dict[str, JudgeRequest]:
        if stage == EXTRACTION:
            return self.extraction_requests(sample, ev, wanted)
        if self.sources.judge is None:
            return {}
        return self.verification_requests(sample, ev)

    def read(self, ev: Evidence, name: str, judgment: Judgment | Exception) -> None:
        if name in PAIRS:
            self.read_verification(ev, name, judgment)
        else:
            self.read_extraction(ev, name, judgment)

    def stand_in(self, sample: Sample, ev: Evidence) -> None:
        """Claims for a dry run's estimate: the hand-written ones, else one per sentence."""
        def claims(given: Sequence[str] | None, text: str | None) -> tuple[Claim, ...] | None:
            listed = list(given) if given else split_sentences(text or "")
            return tuple(Claim(i, t) for i, t in enumerate(listed, start=1)) or None

        ev.answer_claims = claims(sample.answer_claims, sample.answer)
        ev.reference_claims = claims(sample.reference_claims, sample.reference)

    def finishes(self) -> bool:
        return self.beyond.finishes()

    async def finish(self, samples: Sequence[Sample], evidence: Sequence[Evidence], judge: Judge | None) -> None:
        await self.beyond.finish(samples, evidence, judge)

    def _wants_answer(self) -> bool:
        return bool(self.needs & {ANSWER_CLAIMS, "answer@context", "answer@reference", "reference@answer"})

    def _wants_reference(self) -> bool:
        return bool(self.needs & {REFERENCE_CLAIMS, "reference@context", "reference@answer", "answer@reference"})

    # Stage 1: extraction, sentences, questions, standalone, rubric (independent of each other)
    def extraction_requests(self, s: Sample, ev: Evidence, wanted: Wanted) -> dict[str, JudgeRequest]:
        out: dict[str, JudgeRequest] = {}
        extract = self._extract_request(s, ev, wanted)
        if extract is not None:
            out["extract"] = extract
        if SENTENCES in self.kinds:
            ev.sentences = tuple(sent for _, text in context_passages(s) for sent in split_sentences(text or ""))
            if not ev.sentences:
                ev.needed_sentences = Unavailable("the context is empty")
            elif not s.question:
                ev.needed_sentences = Unavailable("the sample has no question")
            else:
                listing = "\n".join(f"{i}. {t}" for i, t in enumerate(ev.sentences, start=1))
                out["sentences"] = JudgeRequest(self.relevance, {"question": s.question, "sentences": listing},
                                                schemas.NEEDED_SENTENCES, "needed_sentences")
        if QUESTIONS in self.kinds:
            if not _has_text(s.answer):
                ev.questions = Unavailable("the sample has no answer")
            else:
                out["questions"] = JudgeRequest(self.generate, {"answer": s.answer, "n": self.n_questions},
                                                schemas.QUESTIONS, "questions")
        if STANDALONE in self.kinds:
            standalone = self._standalone_request(s, ev)
            if standalone is not None:
                out["standalone"] = standalone
        for need in sorted(n for n in self.needs if need_kind(n) == RUBRIC):
            name = need_argument(need)
            if not _has_text(s.answer):
                ev.rubric[name] = Unavailable("the sample has no answer")
                continue
            c = self.criteria[name]
            context = "\n".join(f"[{cid}] {text or ''}" for cid, text in context_passages(s)) or "(none)"
            out[need] = JudgeRequest(self.rubric, {**c.prompt_inputs(), "question": s.question or "",
                                                   "context": context, "answer": s.answer},
                                     schemas.RUBRIC, "rubric_score", logprobs=True)
        return out

    def _extract_request(self, s: Sample, ev: Evidence, wanted: Wanted) -> JudgeRequest | None:
        answer_text = reference_text = NOT_NEEDED
        if self._wants_answer() or wanted(ANSWER_CLAIMS) or self.beyond.wants_answer_claims(s):
            if s.answer is None or not s.answer.strip():
                ev.answer_claims = ev.declines = Unavailable("the sample has no answer")
            elif s.answer_claims is not None:
                given = s.metadata.get("citations") or []
                ev.answer_claims = tuple(Claim(i, t, None, tuple(given[i - 1]) if i - 1 < len(given) else ())
                                         for i, t in enumerate(s.answer_claims, start=1))
                answer_text = s.answer  # the call still marks relevance and refusal
            else:
                answer_text = s.answer
        if self._wants_reference():
            if s.reference_claims is not None:
                ev.reference_claims = tuple(Claim(i, t) for i, t in enumerate(s.reference_claims, start=1))
            elif s.reference is None or not s.reference.strip():
                ev.reference_claims = Unavailable("the sample has no reference answer")
            else:
                reference_text = s.reference
        if answer_text == NOT_NEEDED and reference_text == NOT_NEEDED:
            return None
        return JudgeRequest(self.extract, {"question": s.question or "", "answer": answer_text,
                                           "reference": reference_text,
                                           "history": s.metadata.get("history", "(none)")},
                            schemas.EXTRACT, "claims")

    def _standalone_request(self, s: Sample, ev: Evidence) -> JudgeRequest | None:
        turn = s.metadata.get("turn")
        if "standalone" in s.metadata:
            ev.standalone = bool(s.metadata["standalone"])  # the data says so: no call
        elif turn is None:
            ev.standalone = Unavailable("not a conversation turn")
        elif turn == 1:
            ev.standalone = True  # nothing came before it
        else:
            return JudgeRequest(self.standalone, {"history": s.metadata.get("history", ""),
                                                  "question": s.question or ""},
                                schemas.STANDALONE, "standalone")
        return None

    def read_extraction(self, ev: Evidence, name: str, j: Judgment | Exception) -> None:
        """Stage 1's judgment ``name`` (a key of :meth:`extraction_requests`) into ``ev``."""
        bad = unavailable(j)
        if name == "extract":
            self._read_claims(ev, j, bad)
        elif name == "sentences":
            ev.needed_sentences = bad or tuple(sorted({i for i in value(j)["needed"] if 1 <= i <= len(ev.sentences)}))
        elif name == "standalone":
            ev.standalone = bad or value(j)["standalone"]
        elif need_kind(name) == RUBRIC:
            crit = self.criteria[need_argument(name)]
            if bad:
                ev.rubric[crit.name] = bad
                return
            score = value(j)["score"]
            if not crit.low <= score <= crit.high:
                ev.rubric[crit.name] = failed(JudgeOutputError(f"score {score} is outside {crit.low}-{crit.high}"))
            else:
                logprobs = j.logprobs if isinstance(j, Judgment) else None
                ev.rubric[crit.name] = {"score": score, "reason": value(j)["reason"],
                                        "weighted": weighted_score(logprobs, crit.low, crit.high)}
        elif name == "questions":
            if bad:
                ev.questions = bad
            else:
                ev.questions = tuple(q for q in value(j)["questions"] if q.strip())[: self.n_questions]
                ev.noncommittal = value(j)["noncommittal"]

    @staticmethod
    def _read_claims(ev: Evidence, j: Judgment | Exception, bad: Unavailable | None) -> None:
        if bad:
            ev.answer_claims = ev.answer_claims if isinstance(ev.answer_claims, tuple) else bad
            ev.declines = bad
            if ev.reference_claims is None:
                ev.reference_claims = bad
            return
        v = value(j)
        ev.declines = v["declines"]
        if ev.answer_claims is None:
            ev.answer_claims = tuple(Claim(i, c["text"], c["addresses_question"], tuple(c["cites"]))
                                     for i, c in enumerate(v["claims"], start=1))
        elif isinstance(ev.answer_claims, tuple) and len(v["claims"]) == len(ev.answer_claims):
            ev.answer_claims = tuple(Claim(c.id, c.text, x["addresses_question"], c.cites or tuple(x["cites"]))
                                     for c, x in zip(ev.answer_claims, v["claims"]))
        if ev.reference_claims is None:
            ev.reference_claims = tuple(Claim(i, c["text"]) for i, c in enumerate(v["reference_claims"], start=1))

    # Stage 2: verification of each needed (claim list, source), and the answer's facts
    def verification_requests(self, s: Sample, ev: Evidence) -> dict[str, JudgeRequest]:
        out: dict[str, JudgeRequest] = {}
        for pair in PAIRS:
            if pair not in self.needs:
                continue
            listed, source = pair.split("@")
            claims = ev.answer_claims if listed == "answer" else ev.reference_claims
            if isinstance(claims, Unavailable) or claims is None:
                ev.verdicts[pair] = claims or Unavailable("no claims")
                continue
            if not claims:
                ev.verdicts[pair] = ()
                continue
            passages = passages_for(s, source)
            if isinstance(passages, Unavailable):
                ev.verdicts[pair] = passages
                continue
            evidence = "\n".join(f"[{pid}] {text}" for pid, text in passages)
            listing = "\n".join(f"{c.id}. {c.text}" for c in claims)
            out[pair] = JudgeRequest(self.verify, {"evidence": evidence, "claims": listing}, schemas.VERIFY,
                                     "verdicts", Keyed("verdicts", "id", tuple(c.id for c in claims)),
                                     parts={"passages": list(passages), "claims": [(c.id, c.text) for c in claims]})
        return out

    def read_verification(self, ev: Evidence, pair: str, j: Judgment | Exception) -> None:
        """Stage 2's judgment for ``pair`` (``"answer@context"``, ...) into ``ev``."""
        ev.verdicts[pair] = unavailable(j) or tuple(
            Verdict(v["id"], v["verdict"], tuple(v["sources"]), v["combined"], v["quote"])
            for v in value(j)["verdicts"])


_SCORE_KEY = re.compile(r'"score"\s*:\s*$')


def weighted_score(logprobs: list[dict[str, Any]] | None, low: int, high: int) -> float | None:
    """G-Eval's score: sum(s * p(s)) / sum(p(s)) over the scale's values, read from the
    top log-probabilities of the token that holds the score (Liu et al. 2023). None when the
    backend gave no log-probabilities."""
    if not logprobs:
        return None
    text = ""
    for token in logprobs:
        if _SCORE_KEY.search(text):
            weights: dict[int, float] = {}
            for alt in token.get("top_logprobs") or [token]:
                t = alt["token"].strip()
                if t.isdigit() and low <= int(t) <= high:
                    weights[int(t)] = weights.get(int(t), 0.0) + math.exp(alt["logprob"])
            total = sum(weights.values())
            return sum(s * p for s, p in weights.items()) / total if total else None
        text += token["token"]
    return None


def _needs_claims(criteria: Sequence[Criterion], run: AgentRun) -> bool:
    """Some criterion reads the answer's claims, and its question/answer condition (read
    without claims) does not already rule it out: only then is the answer split."""
    for c in criteria:
        when = c.when
        if c.kind != "never_claim" and (when is None or (when.claims_match is None and when.claims_state is None)):
            continue
        if when is not None and any(
                pattern is not None and text is not None and not re.search(pattern, text, re.IGNORECASE)
                for pattern, text in ((when.question_matches, run.question), (when.answer_matches, run.answer))):
            continue
        return True
    return False


class _Actions:
    """Plans and gathers the ``actions`` evidence of each sample."""

    def __init__(self, needs: set[str], sources: Sources) -> None:
        self.actions = ACTIONS in needs
        self.records = sources.records
        self.criteria = sources.action_criteria or CriteriaSet()

    def wants_answer_claims(self, s: Sample) -> bool:
        """Whether this sample's answer must be split into claims for these needs."""
        if self.actions:
            run = run_from_sample(s)
            return _needs_claims(self.criteria.for_case(run.id, run.criteria), run)
        return False

    def prepare(self, s: Sample, ev: Evidence) -> None:
        if self.actions:
            run_from_sample(s)  # bad tool calls or criteria stop the run before any call

    def finishes(self) -> bool:
        return self.actions

    async def finish(self, samples: Sequence[Sample], evidence: Sequence[Evidence], judge: Judge | None) -> None:
        verify = verifier(judge) if judge is not None else None
        grades = await asyncio.gather(*(self._grade(s, ev, verify) for s, ev in zip(samples, evidence)))
        for ev, grade in zip(evidence, grades):
            ev.actions = grade

    async def _grade(self, s: Sample, ev: Evidence, verify: VerifyFn | None) -> CaseGrade:
        run = run_from_sample(s)
        claims: tuple[Claim, ...] | None = ev.answer_claims if isinstance(ev.answer_claims, tuple) else None
        return await grade_case(run, self.criteria.for_case(run.id, run.criteria), claims=claims,
                                records=self.records, verify=verify)


PROVIDER = Legacy
