"""trec_eval's preference measures (``m_prefs_*.c``) for one topic's
:class:`~ragmeter.trec.prefs.TopicPrefs`, with its arithmetic and in its order.

Per judgment group (JG): ful = fulfilled_ret + fulfilled_imp, poss = possible_ret +
possible_imp + possible_notoccur (``_ret``: the retrieved ones only; ``_imp``: without
notoccur).

- prefs_num_prefs_poss / _ful / _ful_ret: those counts summed over the JGs (summed over topics).
- prefs_simp(_ret, _imp): sum(ful) / sum(poss).
- prefs_pair(_ret, _imp): the mean over document pairs i < j (by docid rank) with a
  preference either way of counts[i, j] / (counts[i, j] + counts[j, i]); pairs of two
  unretrieved documents count 0 (``_imp``, ``_ret``: left out).
- prefs_avgjg(_ret, _imp): the mean over JGs of ful / poss (0 for a JG with none possible).
- prefs_avgjg_Rnonrel(_ret): as prefs_avgjg, with each JG's non-relevant documents cut or
  padded to its R relevant ones (R = num_rel; ``_ret``: num_rel_ret): when R >= N, R * (R - N)
  fulfilled preferences are added to ful and num_rel * (R - N) to poss; otherwise the counts
  are recalculated with the first R non-relevant documents only.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ragmeter.trec.catalog import check_format, parse_requests
from ragmeter.trec.lean import kinds_of, plan, read_run_topics
from ragmeter.trec.lean_measures import c_div
from ragmeter.trec.prefs import JudgmentGroup, TopicPrefs, form_prefs_counts, ranking_for_prefs, read_prefs
from ragmeter.trec.result import TrecResult


def _ful(g: JudgmentGroup, part: str) -> tuple[int, int]:
    if part == "ret":
        return g.fulfilled_ret, g.possible_ret
    if part == "imp":
        return g.fulfilled_ret + g.fulfilled_imp, g.possible_ret + g.possible_imp
    return g.fulfilled_ret + g.fulfilled_imp, g.possible_ret + g.possible_imp + g.possible_notoccur


def num_prefs(t: TopicPrefs, which: str) -> float:
    if which == "poss":
        return float(sum(_ful(g, "all")[1] for g in t.groups))
    return float(sum(_ful(g, "ret" if which == "ful_ret" else "all")[0] for g in t.groups))


def simp(t: TopicPrefs, part: str) -> float:
    ful = poss = 0
    for g in t.groups:
        f, p = _ful(g, part)
        ful, poss = ful + f, poss + p
    return ful / poss if poss else 0.0


def pair(t: TopicPrefs, part: str) -> float:
    c = t.counts.astype(np.float64)
    njr, nj = t.num_judged_ret, t.num_judged
    total, pairs = 0.0, 0
    blocks = [(slice(0, njr), slice(0, njr), True)]
    if part != "ret":
        blocks.append((slice(0, njr), slice(njr, nj), False))
    for rows, cols, upper in blocks:
        ij, ji = c[rows, cols], c[cols, rows].T
        keep = (ij > 0) | (ji > 0)
        if upper:
            keep &= np.triu(np.ones(keep.shape, bool), 1)
        ratios = ij[keep] / (ij[keep] + ji[keep])  # row by row, as trec_eval's loops visit them
        for v in ratios.tolist():
            total += v
        pairs += int(keep.sum())
    if part == "all":
        tail = (c[njr:, njr:] > 0) | (c[njr:, njr:].T > 0)
        pairs += int(np.triu(tail, 1).sum())
    return total / pairs if pairs else 0.0


def avgjg(t: TopicPrefs, part: str) -> float:
    total = 0.0
    for g in t.groups:
        f, p = _ful(g, part)
        if p:
            total += f / p
    return total / len(t.groups) if total > 0.0 else 0.0


def avgjg_rnonrel(t: TopicPrefs, ret: bool) -> float:
    total = 0.0
    for g in t.groups:
        big_r, n = (g.num_rel_ret, g.num_nonrel_ret) if ret else (g.num_rel, g.num_nonrel)
        if big_r >= n:
            ful, poss = _ful(g, "ret" if ret else "all")
            ful += g.num_rel_ret * (big_r - n)
            poss += g.num_rel * (big_r - n)
        else:
            ful, poss = _recalculate(t, g, ret)
        total += c_div(ful, poss)
    return total / len(t.groups) if total > 0.0 else 0.0


def _retrieved_prefix(ranks: np.ndarray, njr: int) -> np.ndarray:
    beyond = np.flatnonzero(ranks >= njr)
    return ranks[:beyond[0]] if len(beyond) else ranks


def _recalculate(t: TopicPrefs, g: JudgmentGroup, ret: bool) -> tuple[int, int]:
    """m_prefs_avgjg_Rnonrel(_ret).c's recalculate(): the counts with the first R non-relevant docs."""
    njr = t.num_judged_ret
    ful = poss = 0
    if g.ecs:
        keep = g.num_rel_ret if ret else g.num_rel
        start = g.pool_offset + sum(len(r) for _, r in g.ecs[:-1])
        new_nonrel = t.pool[start:start + keep]  # the last EC's first R ranks (C reads on past it)
        last = len(g.ecs) - 1

        def count(r1: np.ndarray, r2: np.ndarray) -> tuple[int, int]:
            if ret:  # the loops stop at the first unretrieved rank
                r1, r2 = _retrieved_prefix(r1, njr), _retrieved_prefix(r2, njr)
                good = r1[:, None] < r2[None, :]
            else:
                good = (r1[:, None] < r2[None, :]) & (r1[:, None] < njr)
            return int(good.sum()), good.size - int(good.sum())

        for a in range(len(g.ecs)):
            pairs = [r2 for _, r2 in g.ecs[a + 1:last]] + [new_nonrel]
            for r2 in pairs:
                f, p = count(g.ecs[a][1], r2)
                ful, poss = ful + f, poss + p
        return ful, poss + ful
    assert g.prefers is not None and g.levels is not None
    matrix, levels, nj = g.prefers, g.levels, t.num_judged
    seen, first_discarded = 0, (njr if ret else nj)
    for i in range(njr if ret else nj):
        if levels[i] == 0.0:
            seen += 1
            if seen == g.num_rel + 1:
                first_discarded = i
                break
    kept = ~((np.arange(nj) >= first_discarded) & (levels == 0.0))
    ok = matrix & kept[:, None] & kept[None, :]
    r = np.arange(nj) < njr
    upper = np.triu(np.ones((nj, nj), bool), 1)
    ful = int((ok & upper & r[:, None] & r[None, :]).sum())
    poss = int((ok & ~upper & r[:, None] & r[None, :]).sum())
    if not ret:
        ful += int((ok & r[:, None] & ~r[None, :]).sum())
        poss += int((ok & ~r[:, None]).sum())
    return ful, poss + ful


PREFS_MEASURES = {
    "prefs_num_prefs_poss": lambda t: num_prefs(t, "poss"),
    "prefs_num_prefs_ful": lambda t: num_prefs(t, "ful"),
    "prefs_num_prefs_ful_ret": lambda t: num_prefs(t, "ful_ret"),
    "prefs_simp": lambda t: simp(t, "all"),
    "prefs_pair": lambda t: pair(t, "all"),
    "prefs_avgjg": lambda t: avgjg(t, "all"),
    "prefs_avgjg_Rnonrel": lambda t: avgjg_rnonrel(t, False),
    "prefs_simp_ret": lambda t: simp(t, "ret"),
    "prefs_pair_ret": lambda t: pair(t, "ret"),
    "prefs_avgjg_ret": lambda t: avgjg(t, "ret"),
    "prefs_avgjg_Rnonrel_ret": lambda t: avgjg_rnonrel(t, True),
    "prefs_simp_imp": lambda t: simp(t, "imp"),
    "prefs_pair_imp": lambda t: pair(t, "imp"),
    "prefs_avgjg_imp": lambda t: avgjg(t, "imp"),
}


def evaluate_prefs(prefs_path: str, run_path: str, measures: Iterable[str] = ("prefs",), *, qrels_layout: bool = False,
                   complete: bool = False, max_docs: int | None = None, skip_missing: bool = False) -> TrecResult:
    """trec_eval ``-R prefs`` (``qrels_layout``: ``-R qrels_prefs``) for a run file."""
    requests = parse_requests(list(measures))
    check_format(requests, "qrels_prefs" if qrels_layout else "prefs")
    judgments, run = read_prefs(str(prefs_path), qrels_layout=qrels_layout), read_run_topics(str(run_path))
    check = any(r.measure.kind not in ("runid", "num_q") for r in requests)
    todo = plan(list(judgments), run, lambda docs: ranking_for_prefs(docs, max_docs), check=check, complete=complete,
                skip_missing=skip_missing)
    kinds = kinds_of(requests)
    per_topic: dict[str, list] = {n: [] for n, k in kinds.items() if k not in ("runid", "num_q")}
    for topic in todo.evaluated if check else []:
        counts = form_prefs_counts(judgments[topic], todo.ranking(topic, max_docs), topic, str(prefs_path))
        for r in requests:
            if r.name in PREFS_MEASURES:
                per_topic[r.name].append(PREFS_MEASURES[r.name](counts))
    return TrecResult(todo.evaluated, per_topic, kinds, run.runid, missing=todo.missing)
