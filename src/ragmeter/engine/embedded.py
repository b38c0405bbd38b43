"""Score the embedding metrics: one embedder (the bundled MiniLM unless the caller gives one),
every text encoded once, the embedder's identity in each score's provenance."""

from __future__ import annotations

from typing import Any, Sequence

from ragmeter._version import __version__
from ragmeter.core.errors import RagmeterError
from ragmeter.core.results import Failed, NotComputed, Outcome, Provenance, Score
from ragmeter.core.sample import Sample
from ragmeter.embeddings.base import Embedder, Memo, as_embedder
from ragmeter.metrics.judged import Stop
from ragmeter.metrics.spec import Measure


def resolve_embedder(embedder: Any) -> Embedder | str:
    """The caller's embedder, else the bundled one; a string says why none could be loaded."""
    if embedder is not None:
        return as_embedder(embedder)
    from ragmeter.embeddings.minilm import bundled

    try:
        return bundled().load()  # now, so a missing package is one reason, not one error per sample
    except RagmeterError as exc:
        return f"no embedding model: {exc}"


def score_embedded(measures: Sequence[Measure], samples: Sequence[Sample], fingerprint: str,
                   embedder: Any = None) -> dict[str, tuple[Outcome, ...]]:
    if not measures:
        return {}
    resolved = resolve_embedder(embedder)
    out: dict[str, tuple[Outcome, ...]] = {}
    if isinstance(resolved, str):
        for m in measures:
            out[str(m)] = tuple(NotComputed(resolved, _provenance(m, fingerprint, None)) for _ in samples)
        return out
    memo = Memo(resolved)
    memo.warm([t for s in samples for t in (s.answer, s.reference) if t and t.strip()])
    for m in measures:
        prov = _provenance(m, fingerprint, resolved.identity)
        outcomes: list[Outcome] = []
        for s in samples:
            try:
                outcomes.append(Score(float(m.spec.compute(s, m, memo)), prov))
            except Stop as stop:
                outcomes.append(NotComputed(stop.why.reason, prov))
            except RagmeterError as exc:
                outcomes.append(Failed(f"{type(exc).__name__}: {exc}", prov))
        out[str(m)] = tuple(outcomes)
    return out


def _provenance(m: Measure, fingerprint: str, identity: dict | None) -> Provenance:
    return Provenance(metric=str(m), metric_name=m.name, metric_version=m.spec.version, params=dict(m.params),
                      k=None, view="context", ragmeter_version=__version__, dataset_fingerprint=fingerprint,
                      embedder=identity)
