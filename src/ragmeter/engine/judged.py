"""Score the judged metrics: gather the shared evidence once, then read every metric from it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from ragmeter._version import __version__
from ragmeter.claims.matrix import PAIRS, QUESTIONS, SENTENCES, Evidence
from ragmeter.core.results import Failed, NotComputed, Outcome, Provenance, Score
from ragmeter.core.sample import Sample
from ragmeter.metrics.generation.rubric import BUILTIN, check_criteria
from ragmeter.metrics.judged import Stop
from ragmeter.metrics.spec import Measure

NO_JUDGE = ("needs a judge: --judge local (offline, pip install 'ragmeter[local]'), openai:<model> "
            "(with --judge-base-url for a local server) or anthropic:<model>")


@dataclass(frozen=True)
class Env:
    """What a judged metric may use besides the evidence."""

    embedder: Any = None  # an Embedder, or a string saying why none could be loaded
    criteria: dict = field(default_factory=dict)


def prompts_for(needs: frozenset, hashes: dict[str, str]) -> dict[str, str]:
    return {i: hashes[i] for i in prompt_ids(needs)}


def refusal(backend, needs: frozenset) -> str | None:
    """Why the judge's backend does not serve a prompt (or prompt part) these needs read, if so."""
    refuses = getattr(backend, "refuses", None)
    parts = sorted(prompt_ids(needs)) + sorted(n for n in needs if n.startswith("claims.extract:"))
    return next((r for r in map(refuses, parts) if r), None) if refuses else None


def prompt_ids(needs: frozenset) -> list[str]:
    ids = set()
    if needs & {"answer_claims", "reference_claims"} or needs & set(PAIRS):
        ids.add("claims.extract")
    if needs & set(PAIRS):
        ids.add("claims.verify")
    if SENTENCES in needs:
        ids.add("context.relevance")
    if QUESTIONS in needs:
        ids.add("answer.questions")
    if any(n.startswith("rubric:") for n in needs):
        ids.add("rubric.score")
    if "turn_standalone" in needs:
        ids.add("turn.standalone")
    return sorted(ids)


def score_judged(measures: Sequence[Measure], samples: Sequence[Sample], fingerprint: str, judge,
                 *, embedder=None, criteria=None, on_done=None) -> tuple[dict[str, tuple[Outcome, ...]], list[Evidence] | None]:
    if not measures:
        return {}, None
    criteria = {**BUILTIN, **(criteria or {})}
    check_criteria(measures, criteria)
    if judge is None:
        out = {}
        for m in measures:
            prov = _provenance(m, fingerprint, None)
            out[str(m)] = tuple(NotComputed(NO_JUDGE, prov) for _ in samples)
        return out, None
    refused = {str(m): r for m in measures if (r := refusal(judge.backend, m.needs))}  # asked for nothing
    needs = frozenset().union(*(m.needs for m in measures if str(m) not in refused))
    questions = max((m.params.get("n", 3) for m in measures if "answer_questions" in m.needs), default=3)
    from ragmeter.claims.evidence import gather  # judges (httpx, jsonschema) load only when judging

    evidence, planner = gather(samples, set(needs), judge, questions=questions, criteria=criteria, on_done=on_done)
    if QUESTIONS in needs:
        from ragmeter.engine.embedded import resolve_embedder

        embedder = resolve_embedder(embedder)  # a string: why no embedding model could be loaded
    env = Env(embedder=embedder, criteria=criteria)
    out = {}
    for m in measures:
        judge_info = {**judge.identity, "prompts": prompts_for(m.needs, planner.prompt_hashes)}
        if m.name == "rubric":
            crit = criteria[m.params["criterion"]]
            judge_info["criterion"] = {"description": crit.description, "scale": [crit.low, crit.high],
                                       "examples": len(crit.examples)}
            judge_info["rubric_scoring"] = ("probability-weighted over the scale (token log-probabilities)"
                                            if judge.backend.supports_logprobs else "plain score")
        if QUESTIONS in m.needs and not isinstance(embedder, str) and str(m) not in refused:
            judge_info["embedder"] = embedder.identity
        prov = _provenance(m, fingerprint, judge_info)
        if str(m) in refused:
            out[str(m)] = tuple(NotComputed(refused[str(m)], prov) for _ in samples)
            continue
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
