"""The provider of ``answer@cited``: each answer claim that cites passages, verified against
only the passages it cites.

Does the cited passage actually say what the answer claims it says? The claims'
verdicts against the whole context (``answer@context``) cannot tell it: a claim the context
supports through two chunks together, of which it cites one, has a supporting citation, yet the
chunk it cites does not say it alone. So the claims that cite are grouped by the passages they
cite (``[2]`` = the second chunk that reached the prompt, ``[doc-id]`` = that chunk) and each
group is one more ``claims.verify`` call, in the verification stage, with those passages as the only evidence
(ALCE's check of a citation, Gao et al. 2023, made by the judge instead of an NLI model):

- ``supported``: the cited passages say what the claim says;
- ``contradicted``: they say something else (a misattribution);
- ``not_found``: they do not say it; a claim whose every marker names no passage of the
  context gets this verdict without a call.

Claims that cite nothing are not verified here. The verdicts go to ``ev.verdicts["answer@cited"]``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragmeter.core.sample import Sample
from ragmeter.evidence.citation_markers import markers, resolve
from ragmeter.evidence.claims import read_verdicts, verify_request
from ragmeter.evidence.matrix import ANSWER_CLAIMS, CITED, Claim, Evidence, Unavailable, Verdict
from ragmeter.evidence.provider import VERIFICATION, ProviderBase, Wanted, check_context_texts, context_passages
from ragmeter.evidence.sources import Sources
from ragmeter.judges.judge import JudgeRequest, Judgment
from ragmeter.judges.prompts import load_prompt


class CitedPassages(ProviderBase):
    """The answer's citing claims, each against the passages it cites."""

    prompts = {CITED: ("claims.extract", "claims.verify")}
    reads = frozenset({ANSWER_CLAIMS})

    def __init__(self, needs: frozenset[str], sources: Sources) -> None:
        super().__init__(needs, sources)
        self.verify = load_prompt("claims.verify")

    def check(self, samples: Sequence[Sample]) -> None:
        check_context_texts(samples)

    def requires(self, sample: Sample) -> frozenset[str]:
        return frozenset({ANSWER_CLAIMS})

    def requests(self, stage: str, sample: Sample, ev: Evidence, wanted: Wanted) -> dict[str, JudgeRequest]:
        if stage != VERIFICATION or self.sources.judge is None:
            return {}
        claims = ev.answer_claims
        if isinstance(claims, Unavailable) or claims is None:
            ev.verdicts[CITED] = claims or Unavailable("no claims")
            return {}
        texts = dict(context_passages(sample, answer=True))  # the answer's markers number what it was written from
        ids = sample.answer_context_ids
        groups: dict[tuple[str, ...], list[Claim]] = {}
        nowhere: list[Verdict] = []  # claims whose markers name no passage of the context
        for c in claims:
            if not c.cites:
                continue
            cited = tuple(dict.fromkeys(cid for m in c.cites if (cid := resolve(m, ids)) is not None))
            if cited:
                groups.setdefault(cited, []).append(c)
            else:
                nowhere.append(Verdict(c.id, "not_found", (), False, ""))
        ev.verdicts[CITED] = tuple(nowhere)
        return {f"{CITED}#{n}": verify_request(self.verify, [(cid, texts.get(cid) or "") for cid in cited], group)
                for n, (cited, group) in enumerate(groups.items())}

    def read(self, ev: Evidence, name: str, judgment: Judgment | Exception) -> None:
        got, held = read_verdicts(judgment), ev.verdicts.get(CITED, ())
        if isinstance(held, Unavailable):
            return  # another group's judgment failed: the sample's attribution stays Failed
        ev.verdicts[CITED] = got if isinstance(got, Unavailable) else tuple(sorted((*held, *got),
                                                                                   key=lambda v: v.claim))

    def stand_in(self, sample: Sample, ev: Evidence) -> None:
        """For a dry run: the stand-in claims (the answer's sentences) cite what their sentences cite."""
        if isinstance(ev.answer_claims, tuple):
            ev.answer_claims = tuple(Claim(c.id, c.text, c.addresses_question, c.cites or markers(c.text))
                                     for c in ev.answer_claims)


PROVIDER = CitedPassages
