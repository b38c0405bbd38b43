"""Rank-aware label metrics: reciprocal rank, average precision, rank-weighted precision.

Let rel_i = 1 when the chunk at rank i has grade >= rel, P@i the precision at rank i,
R the labeled relevant chunks, and F = sum(rel_i, i <= k) the relevant chunks found.

- reciprocal_rank@k = 1 / (rank of the first relevant chunk within k), 0 if none
  (mean over queries: MRR). Without @k: the whole list (trec_eval recip_rank).
  ``granular=True``: mean of 1 / rank over all relevant chunks found (LlamaIndex
  ``use_granular_mrr``; not MRR).
- average_precision@k = sum(P@i * rel_i, i <= k) / R (trec_eval map_cut.k; divides by ALL
  relevant chunks, so a missing chunk lowers it).
- rank_weighted_precision@k = sum(P@i * rel_i, i <= k) / F, 0 when F = 0: the label form of
  Ragas "context precision" and DeepEval "contextual precision". It scores order only: a
  missing chunk leaves it unchanged, and finding it late *lowers* the score (top 3 holding
  one relevant chunk at rank 1 scores 1.0; pulling a second one into rank 3 gives 0.833).

The q1 of the article "RAG Evaluation Metrics: Formulas and a Worked Example" (relevant at ranks 2
and 4, R = 3): RR = 1/2, granular RR = (1/2 + 1/4) / 2,
AP = (1/2 + 2/4) / 3, rank-weighted = (1/2 + 2/4) / 2.

>>> from ragmeter.metrics.batch import RankedBatch
>>> from ragmeter.metrics import make_measure as m
>>> b = RankedBatch.from_lists([["a", "r1", "b", "r2", "c"]], [{"r1": 1, "r2": 1, "r3": 1}])
>>> [round(float(x.spec.compute(b, x).values[0]), 3) for x in (m("reciprocal_rank", 5),
...     m("reciprocal_rank", 5, granular=True), m("average_precision", 5), m("rank_weighted_precision", 5))]
[0.5, 0.375, 0.333, 0.5]
"""

from __future__ import annotations

from ragmeter.core.measure import Display, Measure, Param
from ragmeter.metrics.batch import Computed, RankedBatch, ranks, row_sum, safe_divide
from ragmeter.metrics.kinds import LabelSpec
from ragmeter.metrics.retrieval import kernels
from ragmeter.metrics.retrieval.common import REL, VIEW, relevant
from ragmeter.metrics.spec_table import register


def reciprocal_rank(batch: RankedBatch, measure: Measure) -> Computed:
    rel = relevant(batch, measure)
    r = batch.num_relevant(measure.params["rel"])
    if measure.params["granular"]:
        values = safe_divide(row_sum(rel / ranks(rel.shape[1])), kernels.found(rel))
    else:
        values = kernels.reciprocal_rank(rel)
    return Computed(values, r == 0)


def average_precision(batch: RankedBatch, measure: Measure) -> Computed:
    r = batch.num_relevant(measure.params["rel"])
    return Computed(kernels.average_precision(relevant(batch, measure), r), r == 0)


def rank_weighted_precision(batch: RankedBatch, measure: Measure) -> Computed:
    rel = relevant(batch, measure)
    r = batch.num_relevant(measure.params["rel"])
    return Computed(safe_divide(kernels.precision_sum(rel), kernels.found(rel)), r == 0)


COMMON = {"rel": REL, "view": VIEW}

register(LabelSpec(
    name="reciprocal_rank", version=1, family="retrieval", display=Display("RR", "MRR"),
    definition="1 / rank of the first relevant chunk within k, 0 if none; "
               "granular=True: mean of 1/rank over relevant found",
    source="Voorhees 1999 (TREC-8 QA); trec_eval recip_rank; LlamaIndex MRR(use_granular_mrr)",
    aliases=("mrr", "rr", "recip_rank"),
    params={**COMMON, "granular": Param(bool, False, doc="average 1/rank over every relevant chunk found")},
    undefined="no relevant chunk labeled (R = 0)", compute=reciprocal_rank))

register(LabelSpec(
    name="average_precision", version=1, family="retrieval", display=Display("AP", "MAP@{k}"),
    definition="sum(P@i * rel_i, i <= k) / R", source="Buckley & Voorhees 2000; trec_eval map, map_cut.k",
    aliases=("ap", "map"), params=COMMON, undefined="no relevant chunk labeled (R = 0)",
    compute=average_precision))

register(LabelSpec(
    name="rank_weighted_precision", version=1, family="retrieval",
    display=Display("rank-weighted precision", "rank-weighted precision@{k}"),
    definition="sum(P@i * rel_i, i <= k) / sum(rel_i, i <= k); 0 when no relevant chunk is found",
    source="Ragas 0.4 context precision; DeepEval 4.2.8 contextual precision (applied to labels)",
    aliases=("context_precision", "contextual_precision"), params=COMMON,
    undefined="no relevant chunk labeled (R = 0)", compute=rank_weighted_precision))
