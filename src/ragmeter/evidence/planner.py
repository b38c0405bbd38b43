"""The two-stage loop over the providers of evidence: ask once, read once.

Per run: which providers fill the needs (:data:`ragmeter.evidence.provider.PROVIDERS`, and
the kinds those providers read), their data checks before any call, then per stage every
sample's requests from every provider sent through the judge (and its ledger) in one batch,
each reply read back by the provider that asked, then what the providers do after the judge
(record lookups, gradings) with the sources opened. The needs come from the metrics
(``JudgedSpec.needs``); the planner knows providers, not metrics and not kinds of evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragmeter.core.progress import Progress
from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import Evidence, need_kind
from ragmeter.evidence.provider import (
    EXTRACTION,
    PROVIDERS,
    STAGES,
    VERIFICATION,
    Provider,
    ProviderBase,
    Wanted,
    provider_type,
)
from ragmeter.evidence.sources import Sources
from ragmeter.judges.judge import JudgeRequest


def providers_for(needs: set[str] | frozenset[str], sources: Sources) -> list[Provider]:
    """The providers of ``needs`` and of what they read, in :data:`PROVIDERS` order."""
    kinds = {need_kind(n) for n in needs}
    todo = list(kinds)
    while todo:
        for kind in provider_type(todo.pop()).reads - kinds:
            kinds.add(kind)
            todo.append(kind)
    chosen: dict[str, str] = {}  # provider module -> the first of its kinds needed
    for kind, module in PROVIDERS.items():
        if kind in kinds:
            chosen.setdefault(module, kind)
    return [provider_type(kind)(frozenset(needs), sources) for kind in chosen.values()]


def _verified_from(provider: Provider) -> bool:
    """Whether verification requests are written from what this provider extracts (it gives a
    dry run stand-ins for it: claims, their citations)."""
    own: Any = type(provider).stand_in
    return own is not ProviderBase.stand_in


def _wanted(providers: Sequence[Provider], asking: Provider, sample: Sample) -> Wanted:
    return lambda need: any(need in p.requires(sample) for p in providers if p is not asking)


def _requests(providers: Sequence[Provider], stage: str, sample: Sample,
              ev: Evidence) -> list[tuple[Provider, str, JudgeRequest]]:
    return [(p, name, request) for p in providers
            for name, request in p.requests(stage, sample, ev, _wanted(providers, p, sample)).items()]


async def agather_evidence(samples: Sequence[Sample], needs: set[str], sources: Sources, *,
                           progress: Progress | None = None) -> list[Evidence]:
    """Every sample's evidence for ``needs``: stage 1 then stage 2 through ``sources.judge``,
    then the providers' work after the judge (looking facts up, grading tool calls).

    Without a judge (only for needs a judge is optional to, ``JUDGE_OPTIONAL``): no call is
    made; given claims and facts are used, and what a judge would add is missing with the reason."""
    providers = providers_for(needs, sources)
    for p in providers:
        p.check(samples)
    evidence = [Evidence() for _ in samples]
    for s, ev in zip(samples, evidence):
        for p in providers:
            p.prepare(s, ev)
    judge = sources.judge
    for stage, label in STAGES:
        jobs = [(i, *job) for i, s in enumerate(samples) for job in _requests(providers, stage, s, evidence[i])]
        if judge is None or not jobs:  # without a judge nothing is asked; the providers said what is missing
            continue
        if progress is not None:
            progress.start(stage_label(label, [request.prompt.id for *_, request in jobs]), len(jobs))
        results = await judge.arun([request for *_, request in jobs], progress=progress)
        for (i, provider, name, _), j in zip(jobs, results):
            if not isinstance(j, Exception):
                evidence[i].calls += j.calls
            provider.read(evidence[i], name, j)
    finishing = [p for p in providers if p.finishes()]
    if finishing:
        async with sources.opened():
            for p in finishing:
                await p.finish(samples, evidence, judge)
    return evidence


#: What the progress line says while a prompt's calls run (a stage asking several says each).
DOING = {"claims.extract": "extracting claims", "claims.verify": "verifying claims",
         "context.relevance": "rating context sentences", "answer.questions": "asking questions of the answer",
         "rubric.score": "scoring rubrics", "rubric.joint": "scoring rubrics",
         "turn.standalone": "rewriting turns as standalone questions"}


def stage_label(default: str, prompt_ids: Sequence[str]) -> str:
    """The progress line's words for a stage's calls: what its prompts do, in order of first
    use (a context-relevance-only run is not "extracting claims"); ``default`` for others.

    >>> stage_label("extracting claims", ["context.relevance", "claims.extract", "context.relevance"])
    'rating context sentences, extracting claims'
    """
    said = list(dict.fromkeys(DOING.get(p.split(":")[0], "") for p in prompt_ids))
    return ", ".join(x for x in said if x) or default


def plan_calls(samples: Sequence[Sample], needs: set[str], sources: Sources) -> dict[str, Any]:
    """A dry run: calls still needed, and their estimated input tokens.

    Verification prompts cannot be written before extraction, so where a sample's extraction
    is not in the ledger yet each is estimated on the providers' stand-ins (claims: the given
    ``answer_claims`` / ``reference_claims``, else the sentences of the answer or reference,
    what extraction splits into claims), against the real passages; where it is, on the claims
    stored (so a verification stored too is not counted). Their tokens are counted like the
    others'. Record lookups and never-claim
    checks are not judge calls. ``sources.judge`` is the judge whose ledger is read (a
    planning one makes no call)."""
    judge = sources.judge
    if judge is None:
        raise ValueError("plan_calls needs the judge the calls would go to")
    providers = providers_for(needs, sources)
    for p in providers:
        p.check(samples)
    requests: list[JudgeRequest] = []
    evidence = [(Evidence(), Evidence()) for _ in samples]  # alive to the end: providers key by id(evidence)
    extraction: list[list[tuple[Provider, str, JudgeRequest]] | None] = []
    for s, (ev, stand_in) in zip(samples, evidence):
        for p in providers:  # what the data already gives (facts given in the sample) asks nothing
            p.prepare(s, ev)
            p.prepare(s, stand_in)
        asked = _requests(providers, EXTRACTION, s, ev)
        requests.extend(request for *_, request in asked)
        # stored, unless an extraction that verification is written from is not (context
        # relevance, say, is not: a dry run adding it still finds the stored claims)
        missing = [p for p, _, r in asked if not judge.is_stored(r) and _verified_from(p)]
        kept = [x for x in asked if judge.is_stored(x[2])]
        extraction.append(kept if kept and not missing else None)
    # where a sample's extraction is in the ledger, its verification is planned on the claims
    # stored there (the requests the run will send), not on stand-ins
    stored = [(i, p, name, r) for i, found in enumerate(extraction) if found for p, name, r in found]
    for (i, p, name, _), j in zip(stored, judge.run([r for *_, r in stored]) if stored else ()):
        p.read(evidence[i][0], name, j)
    estimated: list[JudgeRequest] = []  # verifications written on stand-in claims
    for s, (ev, stand_in), found in zip(samples, evidence, extraction):
        if found is None:
            for p in providers:
                p.stand_in(s, stand_in)
        verifying = [request for *_, request in _requests(providers, VERIFICATION, s, ev if found else stand_in)]
        requests.extend(verifying)
        if found is None:
            estimated.extend(verifying)
    plan = judge.plan(requests)
    pending = [r for r in requests if not judge.is_stored(r)]
    prompt_ids = sorted({r.prompt.id for r in pending})
    plan["calls_by_prompt"] = {p: sum(r.prompt.id == p for r in pending) for p in prompt_ids}
    stood_in = any(not judge.is_stored(r) for r in estimated)
    plan["note"] = ("verification calls are estimated with the answer's and reference's sentences as stand-in claims "
                    "where no extracted claims are stored yet; " if stood_in else "") + \
        "calls already stored in the ledger are not counted"
    return plan
