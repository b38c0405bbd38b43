"""Preference judgments (``-R prefs``, ``-R qrels_prefs``): the preferences a ranking fulfils, as
trec_eval's ``form_prefs_counts.c`` counts them.

Judgments (``get_prefs.c``): ``qid jg jsg docno rel_level``; ``-R qrels_prefs`` reads a qrels
file as ``qid jg docno rel_level`` with one sub-group per judgment group (JG). Within a
judgment sub-group (JSG), a document with a higher level is preferred to one with a lower
level; a JG's preferences are the transitive closure of its JSGs'. Documents are numbered
(docid ranks): the retrieved judged ones 0..njr-1 in rank order (here the ranking breaks
score ties by docno *ascending*), the rest from njr on in docno order. A preference A > B is
*fulfilled* when A ranks above B; *retrieved* when both are retrieved, *implied* when one is,
*not occurring* when neither is. ``possible_ret`` and ``possible_imp`` include the fulfilled
ones. For each JG: those five counts, and its relevant (level > 0) and non-relevant documents,
retrieved and in all; for the topic: ``counts[i, j]``, the number of JGs preferring i to j.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ragmeter.trec.errors import EXIT_TOPIC, TrecInputError
from ragmeter.trec.lines import existing, judgment_lines, parse_level, text


@dataclass(frozen=True)
class Pref:
    """One judgment line: (jg, jsg) as bytes (compared as C compares them), the docno, the level."""

    jg: bytes
    jsg: bytes
    docno: str
    level: float


def read_prefs(path: str, *, qrels_layout: bool = False) -> dict[str, list[Pref]]:
    """{qid: lines sorted by docno (file order among equal ones)}, topics in byte order."""
    path = existing(path)
    fields, layout = (4, "qid jg docno rel_level") if qrels_layout else (5, "qid jg jsg docno rel_level")
    topics: dict[str, list[Pref]] = {}
    for number, parts in judgment_lines(path, fields, layout):
        jsg = b"0" if qrels_layout else parts[2]
        pref = Pref(parts[1], jsg, text(parts[fields - 2], path, number, "docno"),
                    parse_level(parts[fields - 1], path, number))
        topics.setdefault(text(parts[0], path, number, "qid"), []).append(pref)
    if not topics:
        raise TrecInputError("the preference file has no judgments", file=path)
    return {q: sorted(topics[q], key=lambda p: p.docno) for q in sorted(topics)}


@dataclass
class JudgmentGroup:
    fulfilled_ret: int = 0
    possible_ret: int = 0
    fulfilled_imp: int = 0
    possible_imp: int = 0
    possible_notoccur: int = 0
    num_rel: int = 0
    num_rel_ret: int = 0
    num_nonrel: int = 0
    num_nonrel_ret: int = 0
    ecs: list[tuple[float, np.ndarray]] = field(default_factory=list)  # (level, docid ranks ascending), or
    prefers: np.ndarray | None = None  # the preference matrix (several JSGs)
    levels: np.ndarray | None = None  # with the matrix: each docid's level in this JG (-1: not in it)
    pool_offset: int = 0  # where its ECs start in the topic's rank pool (m_prefs_avgjg_Rnonrel.c reads past them)


@dataclass
class TopicPrefs:
    """trec_eval's RESULTS_PREFS for one topic."""

    groups: list[JudgmentGroup]
    num_judged: int
    num_judged_ret: int
    counts: np.ndarray  # uint16 (num_judged, num_judged)
    pool: np.ndarray  # the EC groups' docid ranks, one after another


def docid_ranks(prefs: Sequence[Pref], ranking: Sequence[str]) -> tuple[list[int], int, int]:
    """Each line's docid rank, num_judged and num_judged_ret (form_prefs_and_ranks)."""
    judged = {p.docno for p in prefs}
    retrieved = [d for d in ranking if d in judged]
    rank = {d: i for i, d in enumerate(retrieved)}
    for d in sorted(judged - rank.keys()):
        rank[d] = len(rank)
    return [rank[p.docno] for p in prefs], len(rank), len(retrieved)


def ranking_for_prefs(scored: Sequence[tuple[str, float]], max_docs: int | None) -> list[str]:
    """Score descending, ties by docno ascending (form_prefs_counts.c's comparator), cut at -M."""
    docs = sorted(scored, key=lambda d: d[0])
    docs.sort(key=lambda d: d[1], reverse=True)
    return [d for d, _ in docs[:max_docs]]


def form_prefs_counts(prefs: Sequence[Pref], ranking: Sequence[str], topic: str, source: str) -> TopicPrefs:
    ranks, nj, njr = docid_ranks(prefs, ranking)
    rows = sorted(zip(prefs, ranks), key=lambda pr: (pr[0].jg, pr[0].jsg, -pr[0].level, pr[1]))
    counts = np.zeros((nj, nj), np.uint16)
    groups: list[JudgmentGroup] = []
    pool: list[int] = []
    start = 0
    while start < len(rows):
        stop = start
        while stop < len(rows) and rows[stop][0].jg == rows[start][0].jg:
            stop += 1
        part = rows[start:stop]
        if len({p.jsg for p, _ in part}) > 1:
            groups.append(_matrix_group(part, nj, njr, counts, topic, source))
        else:
            groups.append(_ec_group(part, njr, counts, topic, source, len(pool)))
            pool += [r for _, r in part]
        start = stop
    return TopicPrefs(groups, nj, njr, counts, np.array(pool, np.int64))


def _inconsistent(topic: str, source: str, what: str) -> TrecInputError:
    return TrecInputError(f"topic {topic!r}: {what}", file=source, exit_code=EXIT_TOPIC,
                          fix="keep each judgment group consistent (put conflicting judgments in different groups)")


def _ec_group(part: list[tuple[Pref, int]], njr: int, counts: np.ndarray, topic: str, source: str,
              offset: int) -> JudgmentGroup:
    """One sub-group: equivalence classes by level (descending), every pair across classes."""
    g = JudgmentGroup(pool_offset=offset)
    i = 0
    while i < len(part):
        j = i
        while j < len(part) and part[j][0].level == part[i][0].level:
            j += 1
        g.ecs.append((part[i][0].level, np.array([r for _, r in part[i:j]], np.int64)))
        i = j
    for a, (level, r1) in enumerate(g.ecs):
        retrieved = int((r1 < njr).sum())
        if level > 0.0:
            g.num_rel_ret, g.num_rel = g.num_rel_ret + retrieved, g.num_rel + len(r1)
        else:
            g.num_nonrel_ret, g.num_nonrel = g.num_nonrel_ret + retrieved, g.num_nonrel + len(r1)
        for _, r2 in g.ecs[a + 1:]:
            x, y = r1[:, None], r2[None, :]
            np.add.at(counts, (np.broadcast_to(x, (len(r1), len(r2))), np.broadcast_to(y, (len(r1), len(r2)))), 1)
            if (x == y).any():
                raise _inconsistent(topic, source, "a document has two different levels in one judgment sub-group "
                                                   "(trec_eval: occurs with different rel_level in same jsg)")
            ahead = x < y
            g.fulfilled_ret += int((ahead & (y < njr)).sum())
            g.fulfilled_imp += int((ahead & (y >= njr) & (x < njr)).sum())
            g.possible_notoccur += int((ahead & (x >= njr)).sum() + (~ahead & (x >= njr) & (y >= njr)).sum())
            g.possible_ret += int((~ahead & (x < njr)).sum())
            g.possible_imp += int((~ahead & (x >= njr) & (y < njr)).sum())
    g.possible_ret += g.fulfilled_ret
    g.possible_imp += g.fulfilled_imp
    return g


def _matrix_group(part: list[tuple[Pref, int]], nj: int, njr: int, counts: np.ndarray, topic: str,
                  source: str) -> JudgmentGroup:
    """Several sub-groups: a preference matrix, closed under transitivity."""
    g = JudgmentGroup()
    levels = np.full(nj, -1.0)
    a = np.zeros((nj, nj), bool)
    for i, (p, r) in enumerate(part):
        old = levels[r]
        if (old > 0.0 and p.level == 0.0) or (old == 0.0 and p.level > 0.0):
            raise _inconsistent(topic, source, f"document {p.docno!r} has both level 0 and a level above 0 in one "
                                               "judgment group (trec_eval: both 0 and non-0 rel_level)")
        levels[r] = p.level
        for q, r2 in part[i + 1:]:
            if q.jsg != p.jsg:
                break
            if q.level != p.level:
                a[r, r2] = True
    np.fill_diagonal(a, True)
    while True:  # reflexive transitive closure (trec_eval multiplies until nothing changes)
        closed = (a.astype(np.float32) @ a.astype(np.float32)) > 0
        if (closed == a).all():
            break
        a = closed
    np.fill_diagonal(a, False)
    if (a & a.T).any():
        i, j = np.argwhere(a & a.T)[0]
        raise _inconsistent(topic, source, f"judged documents {int(i)} and {int(j)} are each preferred to the other "
                                           "in one judgment group (trec_eval: Pref inconsistency, it aborts)")
    g.prefers, g.levels = a, levels
    g.num_rel_ret, g.num_nonrel_ret = int((levels[:njr] > 0).sum()), int((levels[:njr] == 0).sum())
    g.num_rel, g.num_nonrel = int((levels > 0).sum()), int((levels == 0).sum())
    ret = np.arange(nj) < njr
    upper = np.triu(np.ones((nj, nj), bool), 1)
    g.possible_ret = int((a & ~upper & ret[:, None] & ret[None, :]).sum())
    g.fulfilled_ret = int((a & upper & ret[:, None] & ret[None, :]).sum())
    g.fulfilled_imp = int((a & ret[:, None] & ~ret[None, :]).sum())
    g.possible_imp = int((a & ~ret[:, None] & ret[None, :]).sum())
    g.possible_notoccur = int((a & ~ret[:, None] & ~ret[None, :]).sum())
    counts += a.astype(np.uint16)
    g.possible_ret += g.fulfilled_ret
    g.possible_imp += g.fulfilled_imp
    return g
