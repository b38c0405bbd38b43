"""trec_eval's qrels measures for one topic, in plain Python: ports of its ``m_*.c`` loops.

Each function takes the topic's :class:`~ragmeter.trec.rels.TopicRels`, the request (its
parameters) and the evaluation options, and returns one value per printed name, computed with
trec_eval's arithmetic in trec_eval's order (a double is a Python float; ``log2``, ``log`` and
``lround`` are the C library's), so that every printed digit agrees. These are the small-file
path (:mod:`ragmeter.trec.lean`) and the reference the vectorised measures
(:mod:`ragmeter.trec.measures`, :mod:`ragmeter.trec.gain_measures`,
:mod:`ragmeter.trec.judged_measures`) are tested against. The formulas of the measures that
were there before are in :mod:`ragmeter.trec.measures`; dcg and ideal_dcg (``m_ndcg.c``) are
ndcg's numerator and denominator: sum(r_i / log2(i + 2)) over the ranking and over the ideal
ranking (:mod:`ragmeter.trec.gains`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ragmeter.trec.catalog import MeasureRequest
from ragmeter.trec.gains import gain_table
from ragmeter.trec.rels import NONPOOL, UNJUDGED, TopicRels

MIN_GEO_MEAN = 0.00001
INFAP_EPSILON = 0.00001


@dataclass(frozen=True)
class Options:
    level: int = 1  # -l
    num_docs: int = 0  # -N (trec_eval's default is 0)
    iprec_rule: str = "v10"


def lround(x: float) -> int:
    """C's lround: to nearest, halves away from zero."""
    a = abs(x)
    r = math.floor(a)
    if a - r >= 0.5:
        r += 1
    return int(math.copysign(r, x)) if r else 0


def c_div(a: float, b: float) -> float:
    """C's double division: x / 0 is +-inf, 0 / 0 is NaN (printed -nan)."""
    if b == 0:
        return -math.nan if a == 0 or a != a else math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _map(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    rel_so_far, total = 0, 0.0
    for i, lab in enumerate(t.labels):
        if lab >= o.level:
            rel_so_far += 1
            total += rel_so_far / (i + 1)
    return [c_div(total, t.num_rel) if rel_so_far else 0.0]


def _gm_map(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    return _map(t, r, o)  # the geometric mean is taken over topics (result.py)


def _rprec(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    look = min(t.num_ret, t.num_rel)
    if look == 0:
        return [0.0]
    return [sum(1 for lab in t.labels[:look] if lab >= o.level) / t.num_rel]


def _bpref(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    num_nonrel = sum(t.rel_levels.get(j, 0) for j in range(min(o.level, t.num_rel_levels)))
    nonrel_so_far, bpref = 0, 0.0
    for lab in t.labels:
        if lab < 0:  # not in the pool, or in it but unjudged: skipped
            continue
        if lab < o.level:
            nonrel_so_far += 1
        elif nonrel_so_far > 0:
            bpref += 1.0 - c_div(min(nonrel_so_far, t.num_rel), min(num_nonrel, t.num_rel))
        else:
            bpref += 1.0
    return [bpref / t.num_rel if t.num_rel else bpref]


def _recip_rank(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    for i, lab in enumerate(t.labels):
        if lab >= o.level:
            return [1.0 / (i + 1)]
    return [0.0]


def _interpolated(t: TopicRels, fractions: tuple, o: Options) -> list[float]:
    """m_iprec_at_recall.c / m_11pt_avg.c: the values in cut-off order (filled from the last)."""
    n = len(fractions)
    if o.iprec_rule == "v9":
        cutoffs = [int(x * t.num_rel + 0.9) for x in fractions]
    else:
        cutoffs = [lround(x * t.num_rel) for x in fractions]
    values = [0.0] * n
    cur = n - 1
    while cur >= 0 and cutoffs[cur] > t.num_rel_ret:
        cur -= 1
    int_precis = c_div(t.num_rel_ret, t.num_ret)
    rel_so_far = t.num_rel_ret
    i = t.num_ret
    while i > 0 and rel_so_far > 0:
        precis = rel_so_far / i
        if int_precis < precis:
            int_precis = precis
        if t.labels[i - 1] >= o.level:
            while cur >= 0 and rel_so_far == cutoffs[cur]:
                values[cur] = int_precis
                cur -= 1
            rel_so_far -= 1
        i -= 1
    while cur >= 0:
        values[cur] = int_precis
        cur -= 1
    return values


def _iprec(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    return _interpolated(t, r.values, o)


def _avg11(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    total = 0.0
    for v in reversed(_interpolated(t, r.values, o)):  # trec_eval adds them from the last cut-off down
        total += v
    return [total / len(r.values)]


def _at_cutoffs(t: TopicRels, cutoffs: tuple, value: Callable[[int, int], float], o: Options) -> list[float]:
    """The loop of m_P.c and its kin: ``value(rel_so_far, i)`` at each cut-off i."""
    out, k, rel_so_far = [], 0, 0
    for i, lab in enumerate(t.labels):
        if i == cutoffs[k]:
            out.append(value(rel_so_far, i))
            k += 1
            if k == len(cutoffs):
                return out
        if lab >= o.level:
            rel_so_far += 1
    return out + [value(rel_so_far, c) for c in cutoffs[k:]]


def _P(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    return _at_cutoffs(t, r.values, lambda n, i: n / i, o)


def _recall(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    if t.num_rel == 0:
        return [0.0] * len(r.values)
    return _at_cutoffs(t, r.values, lambda n, i: n / t.num_rel, o)


def _relative_P(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    if t.num_rel == 0:
        return [0.0] * len(r.values)
    return _at_cutoffs(t, r.values, lambda n, i: n / min(i, t.num_rel), o)


def _success(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    return _at_cutoffs(t, r.values, lambda n, i: 1.0 if n else 0.0, o)


def _map_cut(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    if t.num_rel == 0:
        return [0.0] * len(r.values)
    cutoffs, out, k, rel_so_far, total = r.values, [], 0, 0, 0.0
    for i, lab in enumerate(t.labels):
        if i == cutoffs[k]:
            out.append(total / t.num_rel)
            k += 1
            if k == len(cutoffs):
                return out
        if lab >= o.level:
            rel_so_far += 1
            total += rel_so_far / (i + 1)
    return out + [total / t.num_rel] * (len(cutoffs) - k)


def _ndcg_cut(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    cutoffs, values, k, total = r.values, [], 0, 0.0
    for i, lab in enumerate(t.labels):
        if i == cutoffs[k]:
            values.append(total)
            k += 1
            if k == len(cutoffs):
                break
        if lab > 0:
            total += lab / math.log2(i + 2)
    values += [total] * (len(cutoffs) - len(values))
    k, ideal, level, count = 0, 0.0, t.num_rel_levels - 1, 0
    i = 0
    while True:  # the ideal ranking: grades from the highest down, each as often as it is judged
        count += 1
        while level > 0 and count > t.rel_levels.get(level, 0):
            level -= 1
            count = 1
        if level == 0:
            break
        if i == cutoffs[k]:
            if ideal > 0.0:
                values[k] /= ideal
            k += 1
            if k == len(cutoffs):
                break
        ideal += level / math.log2(i + 2)
        i += 1
    while k < len(cutoffs):
        if ideal > 0.0:
            values[k] /= ideal
        k += 1
    return values


def _rprec_mult(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    cutoffs = [int(x * t.num_rel + 0.9) for x in r.values]
    values = [0.0] * len(cutoffs)
    cur = len(cutoffs) - 1
    while cur >= 0 and cutoffs[cur] > t.num_ret:
        values[cur] = c_div(t.num_rel_ret, cutoffs[cur])
        cur -= 1
    rel_so_far = t.num_rel_ret
    i = t.num_ret
    while i > 0 and rel_so_far > 0:
        precis = rel_so_far / i
        while cur >= 0 and i == cutoffs[cur]:
            values[cur] = precis
            cur -= 1
        if t.labels[i - 1] >= o.level:
            rel_so_far -= 1
        i -= 1
    return values


def _ndcg_family(t: TopicRels, r: MeasureRequest) -> tuple[float, float]:
    """(results DCG, ideal DCG) of m_ndcg.c, with the request's gains."""
    table = gain_table(r.gains, t.num_rel_levels)
    results = 0.0
    for i, lab in enumerate(t.labels):
        g = table.gain(lab)
        if g != 0:
            results += g / math.log2(i + 2)
    ideal = 0.0
    for i, g in enumerate(table.ideal(t.rel_levels)):
        ideal += g / math.log2(i + 2)
    return results, ideal


def _ndcg(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    results, ideal = _ndcg_family(t, r)
    return [results / ideal if ideal > 0.0 else 0.0]


def _dcg(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    return [_ndcg_family(t, r)[0]]


def _ideal_dcg(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    return [_ndcg_family(t, r)[1]]


def _set_P(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    return [t.num_rel_ret / t.num_ret if t.num_ret else 0.0]


def _set_recall(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    return [t.num_rel_ret / t.num_rel if t.num_rel else 0.0]


def _set_relative_P(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    return [t.num_rel_ret / min(t.num_ret, t.num_rel) if t.num_ret and t.num_rel else 0.0]


def _set_map(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    if not (t.num_ret and t.num_rel):
        return [0.0]
    return [(float(t.num_rel_ret) * float(t.num_rel_ret)) / (float(t.num_ret) * float(t.num_rel))]


def _set_F(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    if not t.num_rel_ret:
        return [0.0]
    p, rec, x = t.num_rel_ret / t.num_ret, c_div(t.num_rel_ret, t.num_rel), r.values[0]
    return [c_div((x + 1.0) * p * rec, x * p + rec)]


def _unj(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    out, k, unj = [], 0, 0
    cutoffs = r.values
    for i, lab in enumerate(t.labels):
        if i == cutoffs[k]:
            out.append(unj / i)
            k += 1
            if k == len(cutoffs):
                return out
        if lab in (NONPOOL, UNJUDGED):
            unj += 1
    return out + [unj / c for c in cutoffs[k:]]


def _count(attr: str):
    def compute(t: TopicRels, r: MeasureRequest, o: Options) -> list:
        if attr == "num_nonrel_judged_ret":
            return [float(t.num_ret - t.num_nonpool - t.num_unjudged_in_pool - t.num_rel_ret)]
        return [float(getattr(t, attr))]
    return compute


QRELS_MEASURES: dict[str, Callable[[TopicRels, MeasureRequest, Options], list]] = {
    "num_ret": _count("num_ret"), "num_rel": _count("num_rel"), "num_rel_ret": _count("num_rel_ret"),
    "map": _map, "gm_map": _gm_map, "Rprec": _rprec, "bpref": _bpref, "gm_bpref": _bpref,
    "recip_rank": _recip_rank, "iprec_at_recall": _iprec, "P": _P, "recall": _recall, "Rprec_mult": _rprec_mult,
    "11pt_avg": _avg11, "dcg": _dcg, "ideal_dcg": _ideal_dcg, "ndcg": _ndcg, "ndcg_cut": _ndcg_cut,
    "map_cut": _map_cut, "relative_P": _relative_P, "success": _success, "set_P": _set_P,
    "set_relative_P": _set_relative_P, "set_recall": _set_recall, "set_map": _set_map, "set_F": _set_F,
    "num_nonrel_judged_ret": _count("num_nonrel_judged_ret"), "unj": _unj,
}
