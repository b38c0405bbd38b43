"""Order-free label metrics over the top k: precision, recall, hit rate (success), R-precision.

Let rel_i = 1 when the chunk at rank i has grade >= rel, R = labeled chunks with grade >= rel.

- precision@k = sum(rel_i, i <= k) / k (a list shorter than k counts as padded with
  non-relevant chunks, as trec_eval P.k does); with no cut-off, / the list length.
- recall@k = sum(rel_i, i <= k) / R.
- hit_rate@k = 1 if any rel_i, i <= k, else 0 (trec_eval success.k);
  ``granular=True``: sum(rel_i, i <= k) / R (LlamaIndex ``use_granular_hit_rate``).
- r_precision = sum(rel_i, i <= R) / R (trec_eval Rprec); @k first cuts the list at k.

Worked example (q1 of the article "RAG Evaluation Metrics: Formulas and a Worked Example": relevant
at ranks 2 and 4 of 5, R = 3):

>>> from ragmeter.metrics.batch import RankedBatch
>>> b = RankedBatch.from_lists([["a", "r1", "b", "r2", "c"]], [{"r1": 1, "r2": 1, "r3": 1}])
>>> from ragmeter.metrics import make_measure as m
>>> [round(float(m(n, 5).spec.compute(b, m(n, 5)).values[0]), 3) for n in ("precision", "recall", "hit_rate")]
[0.4, 0.667, 1.0]
>>> round(float(m("hit_rate", 5, granular=True).spec.compute(b, m("hit_rate", 5, granular=True)).values[0]), 3)
0.667
"""

from __future__ import annotations

import numpy as np

from ragmeter.core.measure import Display, Measure, Param
from ragmeter.metrics.batch import Computed, RankedBatch
from ragmeter.metrics.kinds import LabelSpec
from ragmeter.metrics.retrieval import kernels
from ragmeter.metrics.retrieval.common import REL, VIEW, relevant
from ragmeter.metrics.spec_table import register


def _hits(batch: RankedBatch, measure: Measure) -> np.ndarray:
    return kernels.found(relevant(batch, measure))


def precision(batch: RankedBatch, measure: Measure) -> Computed:
    hits = _hits(batch, measure)
    if measure.k is not None:
        return Computed(kernels.precision(hits, measure.k), ~batch.has_labels, "no relevance labels")
    return Computed(kernels.precision(hits, batch.lengths), ~batch.has_labels | (batch.lengths == 0),
                    "no relevance labels, or an empty ranked list")


def recall(batch: RankedBatch, measure: Measure) -> Computed:
    r = batch.num_relevant(measure.params["rel"])
    return Computed(kernels.recall(_hits(batch, measure), r), r == 0)


def hit_rate(batch: RankedBatch, measure: Measure) -> Computed:
    r = batch.num_relevant(measure.params["rel"])
    hits = _hits(batch, measure)
    values = kernels.recall(hits, r) if measure.params["granular"] else kernels.success(hits)
    return Computed(values, r == 0)


def r_precision(batch: RankedBatch, measure: Measure) -> Computed:
    r = batch.num_relevant(measure.params["rel"])
    return Computed(kernels.r_precision(relevant(batch, measure), r), r == 0)


COMMON = {"rel": REL, "view": VIEW}

register(LabelSpec(
    name="precision", version=1, family="retrieval", display=Display("P@{k}", "precision@{k}"),
    definition="sum(rel_i, i <= k) / k; short lists count as padded with non-relevant chunks",
    source="Manning et al. 2008, Introduction to IR 8.3; trec_eval P.k", aliases=("p", "precision_at_k"),
    params=COMMON, undefined="no relevance labels for the sample", rank_aware=False, compute=precision))

register(LabelSpec(
    name="recall", version=1, family="retrieval", display=Display("R@{k}", "recall@{k}"),
    definition="sum(rel_i, i <= k) / R", source="Manning et al. 2008; trec_eval recall.k",
    aliases=("recall_at_k",), params=COMMON, undefined="no relevant chunk labeled (R = 0)",
    rank_aware=False, compute=recall))

register(LabelSpec(
    name="hit_rate", version=1, family="retrieval", display=Display("hit", "hit rate@{k}"), binary=True,
    definition="1 if any rel_i for i <= k else 0; granular=True: sum(rel_i, i <= k) / R",
    source="trec_eval success.k; LlamaIndex HitRate(use_granular_hit_rate)", aliases=("hit", "hits", "success"),
    params={**COMMON, "granular": Param(bool, False, doc="found / all relevant instead of 0/1")},
    undefined="no relevant chunk labeled (R = 0)", rank_aware=False, compute=hit_rate))

register(LabelSpec(
    name="r_precision", version=1, family="retrieval", display=Display("R-prec", "R-precision"),
    definition="sum(rel_i, i <= R) / R", source="trec_eval Rprec", aliases=("rprec", "r-precision"),
    params=COMMON, undefined="no relevant chunk labeled (R = 0)", compute=r_precision))
