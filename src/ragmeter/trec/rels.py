"""One topic's ranking against its judgments, as trec_eval's ``form_res_rels.c`` forms it.

The run's documents are sorted by score descending, ties by docno descending (byte order),
cut at ``max_docs`` (-M) and labelled: the qrels grade (>= 0), -1 for a document not in the
qrels (``RELVALUE_NONPOOL``), -2 for one judged with a negative grade
(``RELVALUE_UNJUDGED``). ``judged_only`` (-J) keeps only the documents with a grade >= 0.
Counts as there: ``num_rel`` = qrels grades >= max(level, 0) (level 0 counts grade 0, as a
level <= 0 does), ``num_rel_ret`` = retrieved judged documents with a grade >= level.

``rel_levels`` (documents per grade 0..max) feeds the gain measures (``gain_init.c``): for a
topic without any grade >= 0, trec_eval keeps the previous topic's (its buffer is not
cleared), and so does :func:`level_counts` when given the previous topic's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

NONPOOL, UNJUDGED = -1, -2


@dataclass(frozen=True)
class TopicRels:
    """trec_eval's RES_RELS for one topic."""

    labels: list[int]  # results_rel_list: the label at each rank
    num_rel: int
    num_rel_ret: int
    num_nonpool: int
    num_unjudged_in_pool: int
    rel_levels: Mapping[int, int]  # judged documents per grade >= 0 (possibly the previous topic's), ascending

    @property
    def num_ret(self) -> int:
        return len(self.labels)

    @property
    def num_rel_levels(self) -> int:
        """One more than the highest grade with a judged document (0 when there is none)."""
        return max(self.rel_levels, default=-1) + 1


def level_counts(grades: Iterable[int], previous: Mapping[int, int] | None = None) -> dict[int, int]:
    """Judged documents per grade >= 0, ascending by grade; ``previous`` when no grade is >= 0
    (trec_eval keeps its stale buffer then)."""
    counts: dict[int, int] = {}
    for g in grades:
        if g >= 0:
            counts[g] = counts.get(g, 0) + 1
    if not counts:
        return dict(previous or {})
    return dict(sorted(counts.items()))


def ranked(scored: Sequence[tuple[str, float]]) -> list[tuple[str, float]]:
    """(docno, score) sorted as trec_eval sorts them: score descending, docno descending."""
    out = sorted(scored, key=lambda d: d[0], reverse=True)
    out.sort(key=lambda d: d[1], reverse=True)  # stable: ties keep docno descending
    return out


def twice(docnos: Sequence[str]) -> str | None:
    """A document listed twice (trec_eval refuses a topic with one), or None."""
    if len(set(docnos)) == len(docnos):
        return None
    seen: set[str] = set()
    for d in docnos:
        if d in seen:
            return d
        seen.add(d)
    return None


def form_res_rels(docnos: Sequence[str], judged: Mapping[str, int], rel_levels: Mapping[int, int], *, level: int,
                  judged_only: bool = False, fresh: bool = True) -> TopicRels:
    """The labels of ``docnos`` (already ranked and cut at -M) against ``judged`` ({docno: grade});
    ``fresh=False``: ``rel_levels`` are a previous topic's (this one has no grade >= 0)."""
    labels = []
    nonpool = unjudged = rel_ret = 0
    for d in docnos:
        g = judged.get(d)
        if g is None:
            if judged_only:
                continue
            labels.append(NONPOOL)
            nonpool += 1
        elif g < 0:
            if judged_only:
                continue
            labels.append(UNJUDGED)
            unjudged += 1
        else:
            labels.append(g)
            rel_ret += g >= level
    num_rel = sum(c for g, c in rel_levels.items() if g >= level) if fresh else 0
    return TopicRels(labels, num_rel, rel_ret, nonpool, unjudged, rel_levels)
