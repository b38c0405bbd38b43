"""The provider of claims and their verdicts: decompose once, verify once.

Per sample, at most five judge calls cover every claim metric:

1. ``claims.extract`` (extraction stage): the answer and the reference split into claims in
   one call, with, for the answer, whether each statement addresses the question and whether
   the whole answer declines. Given claims are used as given, with no call: a sample giving
   both its answer's and its reference's claims makes none (and its statements carry no
   relevance or refusal mark, so the metrics reading those are not computed, with the reason);
2. ``claims.verify`` (verification stage), one call per (claim list, source) that some
   requested metric needs: answer claims against the context and against the reference,
   reference claims against the context and against the answer. Each claim gets supported /
   contradicted / not_found with the ids of the passages behind the verdict and a short quote.

What a sample lacks (no answer, no reference, empty context) is recorded as ``Unavailable``
without a call; a judgment that never validated is ``Unavailable(failed=True)``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragmeter.core.history import plain
from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import ANSWER_CLAIMS, PAIRS, REFERENCE_CLAIMS, Claim, Evidence, Unavailable, Verdict
from ragmeter.evidence.provider import (
    EXTRACTION,
    ProviderBase,
    Wanted,
    check_context_texts,
    context_passages,
    unavailable,
    value,
)
from ragmeter.evidence.sources import Sources
from ragmeter.judges import schemas
from ragmeter.judges.judge import JudgeRequest, Judgment
from ragmeter.judges.prompts import Prompt, load_prompt
from ragmeter.judges.replies import Keyed
from ragmeter.judges.schemas import NOT_NEEDED
from ragmeter.judges.sentences import split_sentences

EXTRACT = "extract"  # the name of the extraction request (the pairs are named as their needs)
GIVEN = ("the answer's claims were given, so no extraction call was made to mark a refusal; "
         "leave answer_claims out to have the judge split the answer")


def passages_for(sample: Sample, source: str, *, answer: bool = False) -> list[tuple[str, str]] | Unavailable:
    """What claims are verified against: the context's passages (with ``answer``, for the
    answer's claims: what the answer was written from, ``Sample.answer_context``), or the
    reference answer or the answer as one passage named ``reference`` / ``answer``."""
    if source == "context":
        passages = [(cid, text or "") for cid, text in context_passages(sample, answer=answer)]
        return passages if passages else Unavailable("the context is empty")
    text = sample.reference if source == "reference" else sample.answer
    if text is None or not text.strip():
        return Unavailable(f"the sample has no {'reference answer' if source == 'reference' else 'answer'}")
    return [(source, text)]


def given_verdicts(s: Sample, pair: str, claims: tuple[Claim, ...]) -> tuple[Verdict, ...] | Unavailable:
    """The verdicts ``s`` carries for ``pair`` (``metadata["verdicts"]``, one per claim, in order)."""
    listed = (s.metadata.get("verdicts") or {}).get(pair)
    if not listed:
        return Unavailable(f"the data gives no verdicts for {pair}")
    if len(listed) != len(claims):
        return Unavailable(f"the data gives {len(listed)} verdicts for {pair}, for {len(claims)} claims")
    return tuple(Verdict(c.id, v["verdict"], tuple(v.get("sources") or ()), False, "") for c, v in zip(claims, listed))


def verify_request(prompt: Prompt, passages: Sequence[tuple[str, str]], claims: Sequence[Claim]) -> JudgeRequest:
    """The ``claims.verify`` request of ``claims`` against ``passages`` ((id, text) pairs)."""
    evidence = "\n".join(f"[{pid}] {text}" for pid, text in passages)
    listing = "\n".join(f"{c.id}. {c.text}" for c in claims)
    return JudgeRequest(prompt, {"evidence": evidence, "claims": listing}, schemas.VERIFY, "verdicts",
                        Keyed("verdicts", "id", tuple(c.id for c in claims)),
                        parts={"passages": list(passages), "claims": [(c.id, c.text) for c in claims]})


def read_verdicts(judgment: Judgment | Exception) -> tuple[Verdict, ...] | Unavailable:
    """The verdicts of a ``claims.verify`` judgment, or why there are none."""
    return unavailable(judgment) or tuple(
        Verdict(v["id"], v["verdict"], tuple(v["sources"]), v["combined"], v["quote"], v.get("support"),
                v.get("model"))
        for v in value(judgment)["verdicts"])


class Claims(ProviderBase):
    """The answer's and the reference's claims, and their verdicts against each source."""

    prompts = {ANSWER_CLAIMS: ("claims.extract",), REFERENCE_CLAIMS: ("claims.extract",),
               **{pair: ("claims.extract", "claims.verify") for pair in PAIRS}}

    def __init__(self, needs: frozenset[str], sources: Sources) -> None:
        super().__init__(needs, sources)
        self.extract = load_prompt("claims.extract")
        self.verify = load_prompt("claims.verify")

    def check(self, samples: Sequence[Sample]) -> None:
        if self.needs & {"answer@context", "reference@context"}:
            check_context_texts(samples)

    def _wants_answer(self) -> bool:
        return bool(self.needs & {ANSWER_CLAIMS, "answer@context", "answer@reference", "reference@answer"})

    def _wants_reference(self) -> bool:
        return bool(self.needs & {REFERENCE_CLAIMS, "reference@context", "reference@answer", "answer@reference"})

    def requests(self, stage: str, sample: Sample, ev: Evidence, wanted: Wanted) -> dict[str, JudgeRequest]:
        if stage == EXTRACTION:
            extract = self._extract_request(sample, ev, wanted)
            return {EXTRACT: extract} if extract is not None else {}
        return self._verification_requests(sample, ev)

    def _extract_request(self, s: Sample, ev: Evidence, wanted: Wanted) -> JudgeRequest | None:
        answer_text = reference_text = NOT_NEEDED
        if self._wants_answer() or wanted(ANSWER_CLAIMS):
            if s.answer is None or not s.answer.strip():
                ev.answer_claims = ev.declines = Unavailable("the sample has no answer")
            elif s.answer_claims is not None:  # used as given: no call (none marks relevance or refusal)
                given = s.metadata.get("citations") or []
                ev.answer_claims = tuple(Claim(i, t, None, tuple(given[i - 1]) if i - 1 < len(given) else ())
                                         for i, t in enumerate(s.answer_claims, start=1))
                ev.declines = Unavailable(GIVEN)
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
                                           "history": plain(s.metadata.get("history", "(none)"))},
                            schemas.EXTRACT, "claims")

    def _verification_requests(self, s: Sample, ev: Evidence) -> dict[str, JudgeRequest]:
        if self.sources.judge is None:  # nothing to verify with
            return {}
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
            passages = passages_for(s, source, answer=listed == "answer")
            if isinstance(passages, Unavailable):
                ev.verdicts[pair] = passages
                continue
            if getattr(self.sources.judge.backend, "given", False):  # --judge given: the data's own verdicts
                ev.verdicts[pair] = given_verdicts(s, pair, claims)
                continue
            out[pair] = verify_request(self.verify, passages, claims)
        return out

    def read(self, ev: Evidence, name: str, judgment: Judgment | Exception) -> None:
        if name == EXTRACT:
            self._read_claims(ev, judgment, unavailable(judgment))
        else:  # a pair: ``"answer@context"``, ...
            ev.verdicts[name] = read_verdicts(judgment)

    @staticmethod
    def _read_claims(ev: Evidence, j: Judgment | Exception, bad: Unavailable | None) -> None:
        if bad:
            ev.answer_claims = ev.answer_claims if isinstance(ev.answer_claims, tuple) else bad
            ev.declines = bad if ev.declines is None else ev.declines
            if ev.reference_claims is None:
                ev.reference_claims = bad
            return
        v = value(j)
        if ev.declines is None:  # not when the answer's claims were given (the call did not read the answer)
            ev.declines = v["declines"]
        if ev.answer_claims is None:
            ev.answer_claims = tuple(Claim(i, c["text"], c["addresses_question"], tuple(c["cites"]))
                                     for i, c in enumerate(v["claims"], start=1))
        elif isinstance(ev.answer_claims, tuple) and len(v["claims"]) == len(ev.answer_claims):
            ev.answer_claims = tuple(Claim(c.id, c.text, x["addresses_question"], c.cites or tuple(x["cites"]))
                                     for c, x in zip(ev.answer_claims, v["claims"]))
        if ev.reference_claims is None:
            ev.reference_claims = tuple(Claim(i, c["text"]) for i, c in enumerate(v["reference_claims"], start=1))

    def stand_in(self, sample: Sample, ev: Evidence) -> None:
        """Claims for a dry run's estimate: the hand-written ones, else one per sentence."""
        def claims(given: Sequence[str] | None, text: str | None) -> tuple[Claim, ...] | None:
            listed = list(given) if given else split_sentences(text or "")
            return tuple(Claim(i, t) for i, t in enumerate(listed, start=1)) or None

        ev.answer_claims = claims(sample.answer_claims, sample.answer)
        ev.reference_claims = claims(sample.reference_claims, sample.reference)


PROVIDER = Claims
