"""Score the judged metrics: gather the shared evidence once, then read every metric from it.

What each measure reads, which prompts fill it, whether it embeds and what its provenance
adds are the spec's to say (:class:`~ragmeter.metrics.kinds.JudgedSpec`); nothing here names
a metric.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ragmeter._version import __version__
from ragmeter.core.judge_specs import judge_specs
from ragmeter.core.measure import Measure
from ragmeter.core.progress import Progress
from ragmeter.core.results import Failed, NotComputed, Outcome, Provenance, Score
from ragmeter.core.sample import Sample
from ragmeter.embeddings.base import Embedder
from ragmeter.engine.embedding_scoring import resolve_embedder
from ragmeter.evidence.matrix import JUDGE_OPTIONAL, Evidence
from ragmeter.evidence.rubric_criteria import with_builtin
from ragmeter.evidence.sources import Sources
from ragmeter.metrics.kinds import JudgedContext, JudgedSpec, Unscorable

if TYPE_CHECKING:  # the judges (httpx, jsonschema) and the records load only when something uses them
    from ragmeter.judges.judge import Judge
    from ragmeter.records.lookup import RecordLookup

# said to Python callers and the command line alike: one line naming both ways to give a judge
NO_JUDGE = ("needs a judge: judge='local' in Python or --judge local on the command line (offline, "
            "pip install 'ragmeter[local]'), " + judge_specs(
                remote=True, quoted=True,
                notes={"openai:<model>": "OPENAI_BASE_URL or --judge-base-url for a local server"}))


def _spec(m: Measure) -> JudgedSpec:
    if not isinstance(m.spec, JudgedSpec):
        raise TypeError(f"{m} is not a judged metric")
    return m.spec


def judge_optional(m: Measure) -> bool:
    """``m`` reads only evidence that can be had without a judge (facts given in the data, tool
    calls against criteria); what a judge would add is then missing with the reason."""
    needs = _spec(m).needs(m)
    return bool(needs) and needs <= JUDGE_OPTIONAL


def checked_context(measures: Sequence[Measure], sources: Sources) -> JudgedContext:
    """What judged ``measures`` are read with (the rubric criteria, built-in and given), each
    measure checked against it before any call (a rubric's criterion must be known): by a run
    and by its dry run alike."""
    context = JudgedContext(criteria=with_builtin(sources.criteria))
    for m in measures:
        _spec(m).check(m, context)
    return context


async def ascore_judged(measures: Sequence[Measure], samples: Sequence[Sample], fingerprint: str,
                        sources: Sources, *, progress: Progress | None = None,
                        ) -> tuple[dict[Measure, tuple[Outcome, ...]], list[Evidence] | None]:
    """Every judged measure's outcomes (NotComputed with the reason when there is no judge),
    and the per-sample evidence they were read from (gathered through ``sources``)."""
    if not measures:
        return {}, None
    judge, records = sources.judge, sources.records
    context = checked_context(measures, sources)
    if judge is None and not any(judge_optional(m) for m in measures):
        return {m: _not_computed(NO_JUDGE, _provenance(m, fingerprint, None), len(samples)) for m in measures}, None
    from ragmeter.evidence.planner import agather_evidence  # start-up: a label-only run loads no judge code

    out: dict[Measure, tuple[Outcome, ...]] = {}
    if judge is None:
        out.update({m: _not_computed(NO_JUDGE, _provenance(m, fingerprint, None), len(samples))
                    for m in measures if not judge_optional(m)})
        kept = [m for m in measures if judge_optional(m)]
        needs = frozenset().union(*(_spec(m).needs(m) for m in kept))
        evidence = await agather_evidence(samples, set(needs), sources)
        for m in kept:
            out[m] = _read(m, samples, evidence, context, _provenance(m, fingerprint, _beyond_info(m, records)))
        return {m: out[m] for m in measures}, evidence
    # a judge-optional measure is not refused as a whole: its samples with given facts are scored
    refused = {m: why for m in measures if not judge_optional(m) and (why := refusal(judge, m))}
    needs = frozenset().union(*(_spec(m).needs(m) for m in measures if m not in refused))
    evidence = await agather_evidence(samples, set(needs), sources, progress=progress)
    resolved: Embedder | str | None = None
    if any(_spec(m).needs_embedder(m) for m in measures if m not in refused):
        resolved = resolve_embedder(sources.embedder)  # a string: why no embedding model could be loaded
    context = JudgedContext(criteria=context.criteria, embedder=resolved, logprobs=judge.backend.supports_logprobs)
    hashes = prompt_hashes(p for m in measures for p in _spec(m).prompts(m))
    for m in measures:
        spec = _spec(m)
        judge_info = {**judge.identity, "prompts": {p: hashes[p] for p in spec.prompts(m)},
                      **spec.judge_details(m, context), **(_beyond_info(m, records) or {})}
        if spec.needs_embedder(m) and resolved is not None and not isinstance(resolved, str):
            judge_info["embedder"] = resolved.identity
        prov = _provenance(m, fingerprint, judge_info)
        if m in refused:
            out[m] = tuple(NotComputed(refused[m], prov) for _ in samples)
            continue
        out[m] = _read(m, samples, evidence, context, prov)
    return out, evidence


def _read(m: Measure, samples: Sequence[Sample], evidence: Sequence[Evidence], context: JudgedContext,
          prov: Provenance) -> tuple[Outcome, ...]:
    spec = _spec(m)
    outcomes: list[Outcome] = []
    for s, ev in zip(samples, evidence):
        try:
            outcomes.append(Score(float(spec.compute(ev, s, m, context)), prov))
        except Unscorable as stop:
            why = stop.why
            outcomes.append(Failed(why.reason, prov) if why.failed else NotComputed(why.reason, prov))
    return tuple(outcomes)


def prompt_hashes(prompt_ids: Iterable[str]) -> dict[str, str]:
    """Each prompt's hash, as its provenance records it."""
    from ragmeter.judges.prompts import load_prompt

    return {p: load_prompt(p).hash for p in sorted(set(prompt_ids))}


def _beyond_info(m: Measure, records: RecordLookup | None) -> dict[str, Any] | None:
    """The record source a facts or actions measure read (its identity: no credentials)."""
    if not judge_optional(m):
        return None
    return {"records": records.identity if records is not None else None}


def refusal(judge: Judge, m: Measure) -> str | None:
    """Why the judge's backend does not serve a prompt ``m`` reads (a backend may refuse prompts
    whose answers it has not been measured to give, see ``Backend.refuses``), if it does not."""
    refuses = getattr(judge.backend, "refuses", None)
    if refuses is None:
        return None
    return next((why for why in map(refuses, _spec(m).prompts(m)) if why), None)


def _not_computed(reason: str, prov: Provenance, n: int) -> tuple[Outcome, ...]:
    """``n`` samples not computed for one reason (one provenance, built once)."""
    return tuple(NotComputed(reason, prov) for _ in range(n))


def _provenance(m: Measure, fingerprint: str, judge_info: dict[str, Any] | None) -> Provenance:
    return Provenance(metric=str(m), metric_name=m.name, metric_version=m.spec.version, params=dict(m.params),
                      k=None, view="context", ragmeter_version=__version__, dataset_fingerprint=fingerprint,
                      judge=judge_info, metric_origin=m.spec.origin)
