"""trec_eval's relstring, infAP, utility, binG and yaap for one topic, in plain Python (ports of
``m_relstring.c``, ``m_infap.c``, ``m_utility.c``, ``m_binG.c`` and ``m_yaap.c``; each function
gives its formula). Labels as in :mod:`ragmeter.trec.rels`; rel_i = label_i >= l (-l), R =
num_rel."""

from __future__ import annotations

import math

from ragmeter.trec.catalog import MeasureRequest
from ragmeter.trec.errors import EXIT_TOPIC, TrecMeasureError
from ragmeter.trec.lean_measures import INFAP_EPSILON, Options, c_div
from ragmeter.trec.rels import NONPOOL, UNJUDGED, TopicRels


def relstring_char(label: int) -> str:
    """m_relstring.c: the grade 0-9, '>' above 9, '-' not in the pool, '.' in it but unjudged."""
    if label > 9:
        return ">"
    if label >= 0:
        return str(label)
    return "-" if label == NONPOOL else "." if label == UNJUDGED else "<"


def relstring_length(r: MeasureRequest) -> int:
    """How many ranks relstring shows: (long) of its first parameter, 10 by default."""
    x = r.values[0]
    return int(x) if math.isfinite(x) and abs(x) < 2 ** 62 else 0


def _relstring(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    """relstring (m_relstring.c): the labels of the first N (10, or the parameter) documents as
    characters (see :func:`relstring_char`); printed per topic only."""
    return ["".join(relstring_char(lab) for lab in t.labels[:max(0, relstring_length(r))])]


def _infAP(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    """infAP (m_infap.c, Yilmaz and Aslam 2006): over R, the sum at each judged relevant rank j + 1
    of 1 (j = 0) or 1/(j+1) + j/(j+1) ((r - 1 + n + u) / j) ((r - 1 + e) / (r - 1 + n + 2e)),
    r, n, u the judged relevant, judged non-relevant and pooled-unjudged documents up to it
    (documents not in the pool are skipped), e = 0.00001."""
    nonrel = rel = unjudged = 0
    inf_ap = 0.0
    for j, lab in enumerate(t.labels):
        if lab == NONPOOL:
            continue
        if lab == UNJUDGED:
            unjudged += 1
            continue
        if 0 <= lab < o.level:
            nonrel += 1
            continue
        rel += 1
        if j == 0:
            inf_ap += 1.0
        else:
            fj = float(j)
            inf_ap += (1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((rel - 1 + nonrel + unjudged) / fj)
                       * ((rel - 1 + INFAP_EPSILON) / (rel - 1 + nonrel + 2 * INFAP_EPSILON)))
    return [inf_ap / t.num_rel if t.num_rel else inf_ap]


def check_utility(r: MeasureRequest) -> None:
    """trec_eval computes utility from exactly four coefficients (else it cannot: exit 4)."""
    if len(r.values) != 4:
        raise TrecMeasureError(f"utility.{r.raw}: utility takes 4 coefficients (relevant retrieved, non-relevant "
                               f"retrieved, relevant missed, non-relevant missed), got {len(r.values)} "
                               "(trec_eval: improper number of coefficients)", exit_code=EXIT_TOPIC)


def _utility(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    """utility (m_utility.c): p1 a + p2 b + p3 c + p4 d, a = relevant retrieved, b = non-relevant
    retrieved, c = relevant not retrieved, d = N + a - retrieved - R (N = -N), p = 1,-1,0,0."""
    check_utility(r)
    a, b, c, d = r.values
    return [a * t.num_rel_ret + b * (t.num_ret - t.num_rel_ret) + c * (t.num_rel - t.num_rel_ret)
            + d * (o.num_docs + t.num_rel_ret - t.num_ret - t.num_rel)]


def _binG(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    """binG (m_binG.c): sum over relevant ranks of 1 / log2(2 + non-relevant above), over R."""
    rel_so_far, total = 0, 0.0
    for i, lab in enumerate(t.labels):
        if lab >= o.level:
            rel_so_far += 1
            total += 1.0 / math.log2(3 + i - rel_so_far)
    return [c_div(total, t.num_rel) if rel_so_far else 0.0]


def _yaap(t: TopicRels, r: MeasureRequest, o: Options) -> list:
    """yaap (m_yaap.c, Robertson 2012): log((1 + s) / (1 + R - s)), s = sum of P@i over the
    relevant ranks i (AP's numerator)."""
    rel_so_far, total = 0, 0.0
    for i, lab in enumerate(t.labels):
        if lab >= o.level:
            rel_so_far += 1
            total += rel_so_far / (i + 1)
    ratio = c_div(1.0 + total, 1.0 + t.num_rel - total)
    return [math.log(ratio) if ratio > 0 else (-math.inf if ratio == 0 else -math.nan)]


JUDGED_MEASURES = {"relstring": _relstring, "infAP": _infAP, "utility": _utility, "binG": _binG, "yaap": _yaap}
