"""Normalised discounted cumulative gain, with the published gains and discounts by name.

nDCG@k = DCG@k / IDCG@k, DCG@k = sum(gain(g_i) * discount(i), i <= k); the ideal ranking
sorts every labeled chunk by grade (retrieved or not), cut at k (no cut-off: all labels,
as trec_eval ``ndcg``).

- gain: ``'linear'`` gain(g) = g (trec_eval), ``'exp'`` gain(g) = 2^g - 1 (Burges et al. 2005);
  grades <= 0 give 0.
- discount: ``'log2'`` 1 / log2(i + 1) (textbook, trec_eval), ``'jk2002'`` 1 for i < base,
  1 / log_base(i) from rank base on (Jarvelin & Kekalainen 2002, ACM TOIS 20(4)).

The q1 of the article "RAG Evaluation Metrics: Formulas and a Worked Example" (binary, relevant at
2 and 4, R = 3, k = 5):

>>> import math
>>> log2_value = (1/math.log2(3) + 1/math.log2(5)) / (1 + 1/math.log2(3) + 1/math.log2(4))
>>> jk_value = (1 + 1/math.log2(4)) / (1 + 1 + 1/math.log2(3))
>>> round(log2_value, 3), round(jk_value, 3)
(0.498, 0.57)
>>> from ragmeter.metrics.batch import RankedBatch
>>> from ragmeter.metrics import parse_measure
>>> b = RankedBatch.from_lists([["a", "r1", "b", "r2", "c"]], [{"r1": 1, "r2": 1, "r3": 1}])
>>> measures = map(parse_measure, ["ndcg@5", "ndcg(discount='jk2002')@5"])
>>> [round(float(m.spec.compute(b, m).values[0]), 3) for m in measures]
[0.498, 0.57]
"""

from __future__ import annotations

import numpy as np

from ragmeter.core.measure import Display, Measure, Param
from ragmeter.metrics.batch import Computed, RankedBatch
from ragmeter.metrics.kinds import LabelSpec
from ragmeter.metrics.retrieval import kernels
from ragmeter.metrics.retrieval.common import VIEW
from ragmeter.metrics.spec_table import register


def ndcg(batch: RankedBatch, measure: Measure) -> Computed:
    p = measure.params
    ideal = kernels.ideal_gains(batch.label_grades, p["gain"])
    values = kernels.ndcg(kernels.gains(batch.cut(measure.k), p["gain"]), ideal, measure.k, p["discount"], p["base"])
    no_gain = ideal[:, 0] <= 0 if ideal.shape[1] else np.ones(batch.n, bool)
    return Computed(values, no_gain, "no relevant chunk labeled (ideal DCG = 0)")


register(LabelSpec(
    name="ndcg", version=1, family="retrieval", display=Display("nDCG@{k}", "nDCG@{k}"),
    definition="sum(gain(g_i) * discount(i), i <= k) / ideal DCG@k",
    source="Jarvelin & Kekalainen 2002; Burges et al. 2005 (exp gain); trec_eval ndcg, ndcg_cut.k",
    aliases=("ndcg_cut", "n_dcg"),
    params={
        "gain": Param(str, "linear", choices=("linear", "exp"), doc="gain of grade g: g, or 2^g - 1"),
        "discount": Param(str, "log2", choices=("log2", "jk2002"),
                          doc="1/log2(i+1), or JK-2002 log_base(i) from rank base"),
        "base": Param(float, 2.0, ge=1.0000001, doc="log base of the jk2002 discount"),
        "view": VIEW,
    },
    undefined="no relevant chunk labeled (ideal DCG = 0)", compute=ndcg))
