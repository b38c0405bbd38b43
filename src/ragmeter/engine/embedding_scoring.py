"""Score the embedding metrics: one embedder (the bundled MiniLM unless the caller gives one),
every text encoded once, the embedder's identity in each score's provenance."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragmeter._version import __version__
from ragmeter.core.errors import RagmeterError
from ragmeter.core.measure import Measure
from ragmeter.core.progress import Progress
from ragmeter.core.results import Failed, NotComputed, Outcome, Provenance, Score
from ragmeter.core.sample import Sample
from ragmeter.embeddings.base import Embedder, EmbedderLike, Memo, as_embedder
from ragmeter.embeddings.minilm import bundled
from ragmeter.metrics.kinds import EmbeddingSpec, Unscorable

BATCH = 256  # texts per encode call: progress between calls, and one call for a small set


def resolve_embedder(embedder: EmbedderLike | None) -> Embedder | str:
    """The caller's embedder, else the bundled one; a string says why none could be loaded."""
    if embedder is not None:
        given = as_embedder(embedder)
        if given is not None:
            return given
    try:
        return bundled().load()  # now, so a missing package is one reason, not one error per sample
    except RagmeterError as exc:
        return f"no embedding model: {exc}"


def score_embedded(measures: Sequence[Measure], samples: Sequence[Sample], fingerprint: str,
                   embedder: EmbedderLike | None = None, *,
                   progress: Progress | None = None) -> dict[Measure, tuple[Outcome, ...]]:
    """Every embedding measure's outcomes (NotComputed with the reason when no embedder loads).
    ``progress`` advances once per text embedded (in batches of :data:`BATCH`)."""
    if not measures:
        return {}
    resolved = resolve_embedder(embedder)
    out: dict[Measure, tuple[Outcome, ...]] = {}
    if isinstance(resolved, str):
        for m in measures:
            if not _embeds(m):  # reads no embedding: computed all the same
                out[m] = _scored(m, samples, NoEmbedder(resolved), _provenance(m, fingerprint, None))
            else:
                out[m] = tuple(NotComputed(resolved, _provenance(m, fingerprint, None)) for _ in samples)
        return out
    memo = Memo(resolved)
    texts = list(dict.fromkeys(t for s in samples for t in (s.answer, s.reference) if t and t.strip()))
    if progress is not None and texts:
        progress.start("embedding answers and references", len(texts))
    for start in range(0, len(texts), BATCH):
        memo.warm(texts[start:start + BATCH])
        if progress is not None:
            for index in range(start, min(start + BATCH, len(texts))):
                progress.advance(index)
    for m in measures:
        out[m] = _scored(m, samples, memo, _provenance(m, fingerprint, resolved.identity if _embeds(m) else None))
    return out


def _embeds(m: Measure) -> bool:
    if not isinstance(m.spec, EmbeddingSpec):
        raise TypeError(f"{m} is not an embedding metric")
    return m.spec.needs_embedder(m)


def _scored(m: Measure, samples: Sequence[Sample], embedder: Embedder, prov: Provenance) -> tuple[Outcome, ...]:
    assert isinstance(m.spec, EmbeddingSpec)
    outcomes: list[Outcome] = []
    for s in samples:
        try:
            outcomes.append(Score(float(m.spec.compute(s, m, embedder)), prov))
        except Unscorable as stop:
            outcomes.append(NotComputed(stop.why.reason, prov))
        except RagmeterError as exc:
            outcomes.append(Failed(f"{type(exc).__name__}: {exc}", prov))
    return tuple(outcomes)


class NoEmbedder(Embedder):
    """Handed to a measure that reads no embedding when none could be loaded: encoding fails with the reason."""

    def __init__(self, reason: str) -> None:
        self.reason, self.identity = reason, {}

    def encode(self, texts: Sequence[str]) -> Any:
        raise RagmeterError(self.reason)


def _provenance(m: Measure, fingerprint: str, identity: dict[str, Any] | None) -> Provenance:
    return Provenance(metric=str(m), metric_name=m.name, metric_version=m.spec.version, params=dict(m.params),
                      k=None, view="context", ragmeter_version=__version__, dataset_fingerprint=fingerprint,
                      embedder=identity, metric_origin=m.spec.origin)
