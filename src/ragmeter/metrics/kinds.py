"""The three kinds of metric, as types: what each computes from, and how it is called.

- :class:`LabelSpec`: a pure kernel over relevance labels for all queries at once,
  ``compute(batch, measure) -> Computed`` (no model).
- :class:`JudgedSpec`: a pure function of one sample's claim matrix,
  ``compute(evidence, sample, measure, context) -> float``. The spec declares the evidence
  it reads (:meth:`JudgedSpec.needs`), hence the prompts that fill it
  (:meth:`JudgedSpec.prompts`); the engine plans the judge calls from that and names no metric.
- :class:`EmbeddingSpec`: a function of one sample's texts through an embedding model,
  ``compute(sample, measure, embedder) -> float``.

A judged or embedding metric that cannot score a sample raises :class:`Unscorable` with the
reason: it becomes ``NotComputed(reason)``, or ``Failed(error)`` when the evidence it needed
is a judgment that never validated.

>>> from ragmeter.metrics import REGISTRY
>>> sorted({type(spec).__name__ for spec in REGISTRY.values()})
['AnswerRelevancySpec', 'EmbeddingSpec', 'JudgedSpec', 'LabelSpec', 'RubricJointSpec', 'RubricSpec']
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ragmeter.core.measure import Measure, MetricSpec
from ragmeter.core.sample import Sample
from ragmeter.metrics.batch import Computed, RankedBatch

if TYPE_CHECKING:  # the embedders load only where an embedding metric runs (``ragmeter trec`` never); the
    # claim matrix and the criteria where a judged one does (a label metric's spec needs neither)
    from ragmeter.embeddings.base import Embedder
    from ragmeter.evidence.matrix import Evidence, Unavailable
    from ragmeter.evidence.rubric_criteria import RubricCriterion


class Unscorable(Exception):
    """Raised by a metric that cannot score a sample; ``why`` says why (``failed``: a judgment
    it needed never validated, so the sample is Failed rather than NotComputed)."""

    def __init__(self, why: str | Unavailable) -> None:
        from ragmeter.evidence.matrix import Unavailable

        self.why = why if isinstance(why, Unavailable) else Unavailable(why)
        super().__init__(self.why.reason)


class LabelKernel(Protocol):
    def __call__(self, batch: RankedBatch, measure: Measure, /) -> Computed: ...


@dataclass(frozen=True)
class JudgedContext:
    """What a judged metric may use besides the evidence."""

    criteria: Mapping[str, RubricCriterion] = field(default_factory=dict)  # rubric criteria by name
    embedder: Embedder | str | None = None  # an embedder, or why none could be loaded
    logprobs: bool = False  # the judge's backend gives token log-probabilities


class JudgedScore(Protocol):
    def __call__(self, evidence: Evidence, sample: Sample, measure: Measure, context: JudgedContext, /) -> float: ...


class EmbeddingScore(Protocol):
    def __call__(self, sample: Sample, measure: Measure, embedder: Embedder, /) -> float: ...


@dataclass(frozen=True, kw_only=True)
class LabelSpec(MetricSpec):
    """A metric of relevance labels and ranks, vectorized over queries."""

    compute: LabelKernel = field(compare=False, repr=False)


@dataclass(frozen=True, kw_only=True)
class JudgedSpec(MetricSpec):
    """A metric read from the shared claim matrix. ``evidence``: the parts of the matrix every
    measure of the metric reads (``ragmeter.evidence.matrix`` names them); a subclass whose
    parameters change that overrides :meth:`needs`."""

    compute: JudgedScore = field(compare=False, repr=False)
    evidence: frozenset[str] = frozenset()
    accepts_k: bool = False
    rank_aware: bool = False

    def needs(self, measure: Measure) -> frozenset[str]:
        """The evidence ``measure`` reads."""
        return self.evidence

    def prompts(self, measure: Measure) -> tuple[str, ...]:
        """The ids of the prompts whose judgments ``measure`` reads (their hashes go into its provenance)."""
        from ragmeter.evidence.provider import prompts_for

        return prompts_for(self.needs(measure))

    def needs_embedder(self, measure: Measure) -> bool:
        """``measure`` also embeds texts (its provenance then names the embedder)."""
        return False

    def check(self, measure: Measure, context: JudgedContext) -> None:
        """Raise ``InvalidParameterError`` before any judge call if ``measure`` cannot run in ``context``."""

    def judge_details(self, measure: Measure, context: JudgedContext) -> dict[str, Any]:
        """What the provenance records about the judging besides the judge and the prompts."""
        return {}


@dataclass(frozen=True, kw_only=True)
class EmbeddingSpec(MetricSpec):
    """A metric of the answer's and the reference's texts through an embedding model.
    ``embedder_free``: (parameter, value) pairs whose measures read no embedding (computed even
    where no embedder loads, with one that refuses to encode)."""

    compute: EmbeddingScore = field(compare=False, repr=False)
    family: str = "embedding"
    accepts_k: bool = False
    rank_aware: bool = False
    embedder_free: frozenset[tuple[str, object]] = frozenset()

    def needs_embedder(self, measure: Measure) -> bool:
        return not any(measure.params.get(name) == value for name, value in self.embedder_free)


AnySpec = LabelSpec | JudgedSpec | EmbeddingSpec


def label_kernel(measure: Measure) -> LabelKernel:
    """The kernel of a label measure (``TypeError`` for a judged or embedding one)."""
    if not isinstance(measure.spec, LabelSpec):
        raise TypeError(f"{measure} is not a label metric")
    return measure.spec.compute
