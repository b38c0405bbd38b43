"""Score the judged metrics: gather the shared evidence once, then read every metric from it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ragmeter._version import __version__
from ragmeter.claims.evidence import PAIRS, QUESTIONS, SENTENCES, Evidence, gather
from ragmeter.core.results import Failed, NotComputed, Outcome, Provenance, Score
from ragmeter.core.sample import Sample
from ragmeter.metrics.judged import Stop
from ragmeter.metrics.spec import Measure

NO_JUDGE = ("needs a judge: pass --judge openai:<model> (with --judge-base-url for a local server) "
            "or anthropic:<model>")


@dataclass(frozen=True)
class Env:
    """What a judged metric may use besides the evidence."""

    embedder: Callable[[list[str]], Any] | None = None


def prompts_for(needs: frozenset, hashes: dict[str, str]) -> dict[str, str]:
    ids = set()
    if needs & {"answer_claims", "reference_claims"} or needs & set(PAIRS):
        ids.add("claims.extract")
    if needs & set(PAIRS):
        ids.add("claims.verify")
    if SENTENCES in needs:
        ids.add("context.relevance")
    if QUESTIONS in needs:
        ids.add("answer.questions")
    return {i: hashes[i] for i in sorted(ids)}


def score_judged(measures: Sequence[Measure], samples: Sequence[Sample], fingerprint: str, judge,
                 *, embedder=None, on_done=None) -> tuple[dict[str, tuple[Outcome, ...]], list[Evidence] | None]:
    if not measures:
        return {}, None
    if judge is None:
        out = {}
        for m in measures:
            prov = _provenance(m, fingerprint, None)
            out[str(m)] = tuple(NotComputed(NO_JUDGE, prov) for _ in samples)
        return out, None
    needs = frozenset().union(*(m.needs for m in measures))
    questions = max((m.params.get("n", 3) for m in measures if "answer_questions" in m.needs), default=3)
    evidence, planner = gather(samples, set(needs), judge, questions=questions, on_done=on_done)
    env = Env(embedder=embedder)
    out = {}
    for m in measures:
        judge_info = {**judge.identity, "prompts": prompts_for(m.needs, planner.prompt_hashes)}
        prov = _provenance(m, fingerprint, judge_info)
        outcomes: list[Outcome] = []
        for s, ev in zip(samples, evidence):
            try:
                outcomes.append(Score(float(m.spec.compute(ev, s, m, env)), prov))
            except Stop as stop:
                outcomes.append(Failed(stop.why.reason, prov) if stop.why.failed else NotComputed(stop.why.reason, prov))
        out[str(m)] = tuple(outcomes)
    return out, evidence


def _provenance(m: Measure, fingerprint: str, judge_info: dict | None) -> Provenance:
    return Provenance(metric=str(m), metric_name=m.name, metric_version=m.spec.version, params=dict(m.params),
                      k=None, view="context", ragmeter_version=__version__, dataset_fingerprint=fingerprint,
                      judge=judge_info)
