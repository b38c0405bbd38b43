"""trec_eval's measures, computed on blocks of topics at once (numpy, no per-topic loop).

Notation per topic: rel_i = 1 when the document at rank i has grade >= level (-l), R =
judged documents with grade >= level, N = judged documents with 0 <= grade < level,
P@i = precision at rank i. Definitions follow trec_eval 10.0 (m_*.c), checked against its
own test outputs in tests/test_trec_reference.py:

- map: sum(P@i * rel_i) / R; map_cut.k the same over i <= k; gm_map: geometric mean.
- P.k: sum(rel_i, i <= k) / k; recall.k: / R; relative_P.k: / min(k, R); success.k: any.
- Rprec: sum(rel_i, i <= R) / R; Rprec_mult.x: precision at rank c = int(x * R + 0.9).
- recip_rank: 1 / rank of the first relevant document.
- bpref: (1/R) sum over retrieved relevant r of (1 - min(n_r, R) / min(N, R)), n_r = judged
  non-relevant documents above r (1 when n_r = 0); unjudged documents are skipped.
- iprec_at_recall.x: max(P@j, j >= rank of the c-th relevant), c = lround(x * R)
  (9.0.8: int(x * R + 0.9), ``iprec_rule='v9'``); 0 when fewer than c were retrieved.
  11pt_avg: their mean.
- ndcg: sum(g_i / log2(i + 1)) / ideal, gains = grades (remappable: ndcg.1=3,2=9), the
  ideal over every judged document; ndcg_cut.k cuts both at k. -l does not apply to nDCG.
- set_P = num_rel_ret / num_ret, set_recall = num_rel_ret / R, set_relative_P / min(num_ret, R),
  set_map = set_P * set_recall, set_F = 2 P R / (P + R).
- unj.k: (unjudged in top k) / k. Counts: num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ragmeter.core.errors import InvalidParameterError
from ragmeter.metrics.batch import ranks, row_sum, safe_divide
from ragmeter.metrics.retrieval.ndcg import dcg
from ragmeter.metrics.retrieval.rank_based import precision_sum

STANDARD_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
RECALL_LEVELS = tuple(i / 10 for i in range(11))


@dataclass
class Block:
    """Topics [a, b): grades at each rank (NaN: unjudged or past the end), judged grades."""

    grades: np.ndarray  # (n, L)
    lengths: np.ndarray  # (n,)
    judged: np.ndarray  # (n, M) grades >= 0, descending, -inf padded
    level: float
    iprec_rule: str = "v10"

    def __post_init__(self) -> None:
        self.rel = self.grades >= self.level
        self.R = (self.judged >= self.level).sum(axis=1)
        self.num_rel_ret = self.rel.sum(axis=1)

    def top(self, k: int) -> np.ndarray:
        """rel_i for i <= k, padded with False past the list's end."""
        if k <= self.rel.shape[1]:
            return self.rel[:, :k]
        return np.pad(self.rel, ((0, 0), (0, k - self.rel.shape[1])))


@dataclass(frozen=True)
class TrecMeasure:
    name: str
    kind: str  # float | count | gm | runid | num_q
    params: str  # none | int_cuts | float_cuts | float_list | gains
    default: tuple = ()
    compute: Callable[[Block, tuple], list[np.ndarray]] | None = None
    per_topic: bool = True


def _map(b: Block, _):
    return [safe_divide(precision_sum(b.rel), b.R)]


def _rprec(b: Block, _):
    in_top_r = ranks(b.rel.shape[1]) <= b.R[:, None]
    return [safe_divide((b.rel & in_top_r).sum(axis=1), b.R)]


def _bpref(b: Block, _):
    judged_nonrel = ~np.isnan(b.grades) & (b.grades < b.level)
    above = np.cumsum(judged_nonrel, axis=1)
    n = ((b.judged >= 0) & (b.judged < b.level)).sum(axis=1)
    r = b.R[:, None].astype(np.float64)
    penalty = safe_divide(np.minimum(above, r), np.minimum(n[:, None], r))
    terms = np.where(b.rel, np.where(above > 0, 1.0 - penalty, 1.0), 0.0)
    return [safe_divide(row_sum(terms), b.R)]


def _recip_rank(b: Block, _):
    if b.rel.shape[1] == 0:
        return [np.zeros(b.rel.shape[0])]
    first = b.rel.argmax(axis=1)  # the first relevant rank (0 when none: checked below)
    found = b.rel[np.arange(len(first)), first]
    return [np.where(found, 1.0 / (first + 1), 0.0)]


def _iprec_values(b: Block, levels: tuple) -> list[np.ndarray]:
    cum = np.cumsum(b.rel, axis=1)
    prec = np.where(b.rel, cum / ranks(b.rel.shape[1]), 0.0)
    best_after = np.maximum.accumulate(prec[:, ::-1], axis=1)[:, ::-1] if prec.shape[1] else prec
    out = []
    for x in levels:
        if b.iprec_rule == "v9":
            c = np.floor(x * b.R + 0.9).astype(np.int64)
        else:
            c = np.floor(x * b.R + 0.5).astype(np.int64)  # lround, x * R >= 0
        nth = np.maximum(c, 1)
        ok = (c <= b.num_rel_ret) & (b.num_rel_ret > 0)
        if prec.shape[1]:
            pos = np.argmax(cum >= nth[:, None], axis=1)
            value = best_after[np.arange(len(pos)), pos]
        else:
            value = np.zeros(len(nth))
        out.append(np.where(ok, value, 0.0))
    return out


def _P(b: Block, cuts):
    return [b.top(k).sum(axis=1) / k for k in cuts]


def _recall(b: Block, cuts):
    return [safe_divide(b.top(k).sum(axis=1), b.R) for k in cuts]


def _relative_P(b: Block, cuts):
    return [safe_divide(b.top(k).sum(axis=1), np.minimum(k, b.R)) for k in cuts]


def _success(b: Block, cuts):
    return [(b.top(k).sum(axis=1) > 0).astype(np.float64) for k in cuts]


def _map_cut(b: Block, cuts):
    return [safe_divide(precision_sum(b.top(k)), b.R) for k in cuts]


def _rprec_mult(b: Block, mults):
    cum = np.cumsum(b.rel, axis=1)
    width = cum.shape[1]
    out = []
    for x in mults:
        c = np.floor(x * b.R + 0.9).astype(np.int64)  # C: (long)(x * R + 0.9)
        found = cum[np.arange(len(c)), np.clip(c, 1, width) - 1] if width else np.zeros(len(c))
        out.append(safe_divide(np.where(c >= 1, found, 0), c))
    return out


def _gains(grades: np.ndarray, gain_map: dict[float, float] | None) -> np.ndarray:
    g = np.where(np.isfinite(grades) & (grades > 0), grades, 0.0)
    if gain_map:
        mapped = g.copy()
        for level, gain in gain_map.items():
            mapped[np.isfinite(grades) & (grades == level)] = gain
        g = mapped
    return g


def _ndcg_values(b: Block, k: int | None, gain_map: dict | None = None) -> np.ndarray:
    gains = _gains(b.grades, gain_map)
    ideal = np.sort(_gains(b.judged, gain_map), axis=1)[:, ::-1]
    if k is not None:
        gains = gains[:, :k]
        ideal = ideal[:, :k]
    return safe_divide(dcg(gains, "log2", 2.0), dcg(ideal, "log2", 2.0))


def _ndcg(b: Block, gains):
    return [_ndcg_values(b, None, dict(gains) if gains else None)]


def _ndcg_cut(b: Block, cuts):
    return [_ndcg_values(b, k) for k in cuts]


def _set(b: Block, _):
    p = safe_divide(b.num_rel_ret, b.lengths)
    r = safe_divide(b.num_rel_ret, b.R)
    return [p, safe_divide(b.num_rel_ret, np.minimum(b.lengths, b.R)), r, p * r, safe_divide(2 * p * r, p + r)]


def _unj(b: Block, cuts):
    present = ranks(b.grades.shape[1]) <= b.lengths[:, None]
    unjudged = np.isnan(b.grades) & present
    out = []
    for k in cuts:
        top = unjudged[:, :k]
        out.append(top.sum(axis=1) / k)
    return out


def _count(attr: str):
    def compute(b: Block, _):
        if attr == "num_nonrel_judged_ret":
            return [(~np.isnan(b.grades) & (b.grades < b.level)).sum(axis=1).astype(np.float64)]
        return [np.asarray(getattr(b, attr), dtype=np.float64)]
    return compute


def _avg11(b: Block, levels):
    values = _iprec_values(b, levels)
    total = np.zeros(b.grades.shape[0])
    for v in reversed(values):  # trec_eval adds from the last cut-off down; elementwise: block-independent
        total = total + v
    return [total / len(levels)]


MEASURES: dict[str, TrecMeasure] = {m.name: m for m in [
    TrecMeasure("runid", "runid", "none", per_topic=False),
    TrecMeasure("num_q", "num_q", "none", per_topic=False),
    TrecMeasure("num_ret", "count", "none", compute=_count("lengths")),
    TrecMeasure("num_rel", "count", "none", compute=_count("R")),
    TrecMeasure("num_rel_ret", "count", "none", compute=_count("num_rel_ret")),
    TrecMeasure("map", "float", "none", compute=_map),
    TrecMeasure("gm_map", "gm", "none", compute=_map, per_topic=False),
    TrecMeasure("Rprec", "float", "none", compute=_rprec),
    TrecMeasure("bpref", "float", "none", compute=_bpref),
    TrecMeasure("recip_rank", "float", "none", compute=_recip_rank),
    TrecMeasure("iprec_at_recall", "float", "float_cuts", RECALL_LEVELS, compute=_iprec_values),
    TrecMeasure("P", "float", "int_cuts", STANDARD_CUTS, compute=_P),
    TrecMeasure("recall", "float", "int_cuts", STANDARD_CUTS, compute=_recall),
    TrecMeasure("gm_bpref", "gm", "none", compute=_bpref, per_topic=False),
    TrecMeasure("Rprec_mult", "float", "float_cuts", tuple(i / 5 for i in range(1, 11)), compute=_rprec_mult),
    TrecMeasure("11pt_avg", "float", "float_list", RECALL_LEVELS, compute=_avg11),
    TrecMeasure("ndcg", "float", "gains", (), compute=_ndcg),
    TrecMeasure("ndcg_cut", "float", "int_cuts", STANDARD_CUTS, compute=_ndcg_cut),
    TrecMeasure("map_cut", "float", "int_cuts", STANDARD_CUTS, compute=_map_cut),
    TrecMeasure("relative_P", "float", "int_cuts", STANDARD_CUTS, compute=_relative_P),
    TrecMeasure("success", "float", "int_cuts", (1, 5, 10), compute=_success),
    TrecMeasure("set", "float", "none", compute=_set),  # expands to the five set_* measures
    TrecMeasure("num_nonrel_judged_ret", "count", "none", compute=_count("num_nonrel_judged_ret")),
    TrecMeasure("unj", "float", "int_cuts", (5, 10, 20), compute=_unj),
]}
SET_NAMES = ("set_P", "set_relative_P", "set_recall", "set_map", "set_F")

# trec_eval 10.0's measure order (the order it prints in), and the measures it has that
# ragmeter does not compute (reported, never silently dropped).
ORDER = ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
         "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg",
         "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P",
         "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj"]
UNSUPPORTED = {"relstring", "infAP", "utility", "binG", "G", "ndcg_rel", "Rndcg", "rbp", "rbp_resid"}
OFFICIAL = ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
            "iprec_at_recall", "P"]


@dataclass(frozen=True)
class MeasureRequest:
    """One requested trec_eval measure with its parameters and printed names."""

    measure: TrecMeasure
    values: tuple  # cut-offs, levels or gain pairs
    raw: str | None  # the parameter text as given, for names that echo it

    @property
    def names(self) -> list[str]:
        m = self.measure
        if m.name == "set":
            return list(SET_NAMES)
        if m.params == "int_cuts":
            return [f"{m.name}_{k}" for k in self.values]
        if m.params == "float_cuts":
            return [f"{m.name}_{x:3.2f}" for x in self.values]
        if m.params in ("float_list", "gains") and self.raw is not None:
            return [f"{m.name}_{self.raw}"]
        return [m.name]

    @property
    def order_key(self) -> int:
        return ORDER.index(SET_NAMES[0] if self.measure.name == "set" else self.measure.name)


def parse_request(text: str) -> list[MeasureRequest]:
    """``P``, ``P.5,10``, ``iprec_at_recall..1,.5``, ``ndcg.1=3,2=9``, ``official``, ``all_trec``."""
    if text in ("official", "all_trec"):
        names = OFFICIAL if text == "official" else [n for n in ORDER if n not in UNSUPPORTED]
        seen: list[MeasureRequest] = []
        for n in names:
            if n in SET_NAMES:
                if n == SET_NAMES[0]:
                    seen.append(MeasureRequest(MEASURES["set"], (), None))
                continue
            seen.append(MeasureRequest(MEASURES[n], MEASURES[n].default, None))
        return seen
    name, _, raw = text.partition(".")
    if name in SET_NAMES:
        return [MeasureRequest(MEASURES["set"], (), None)]
    if name not in MEASURES:
        hint = " (trec_eval has it; ragmeter does not compute it yet)" if name in UNSUPPORTED else ""
        raise InvalidParameterError(f"unknown trec_eval measure {name!r}{hint}")
    m = MEASURES[name]
    if not raw:
        return [MeasureRequest(m, m.default, None)]
    try:
        if m.params == "int_cuts":
            values = tuple(sorted({int(float(v)) for v in raw.split(",")}))
            if any(v < 1 for v in values):
                raise ValueError
        elif m.params in ("float_cuts", "float_list"):
            values = tuple(sorted({float(v) for v in raw.split(",")})) if m.params == "float_cuts" else tuple(
                float(v) for v in raw.split(","))
        elif m.params == "gains":
            values = tuple((float(a), float(b)) for a, b in (pair.split("=") for pair in raw.split(",")))
        else:
            raise InvalidParameterError(f"trec_eval measure {name!r} takes no parameters")
    except ValueError:
        raise InvalidParameterError(f"cannot read the parameters of {text!r}") from None
    return [MeasureRequest(m, values, raw)]
