"""Align a run with qrels the way trec_eval does, into per-topic ranked label arrays.

For every evaluated topic: the run's documents sorted by score descending, ties broken by
docno descending (byte order; the rank column is ignored), cut at ``max_docs`` (-M), each
replaced by its label: the qrels grade, or NaN for a document not in the qrels or judged
with a negative grade (trec_eval's RELVALUE_NONPOOL / RELVALUE_UNJUDGED). ``judged_only``
(-J) drops those NaN documents and ranks the rest. A duplicate document within a topic is
an error, as in trec_eval.

Topics: the qrels topics that the run answers, or with ``complete`` (-c) every qrels topic
(a topic the run misses gets an empty ranking). Run topics without qrels are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragmeter.core.errors import InvalidInputError
from ragmeter.trec.reader import Qrels, Run


@dataclass(frozen=True)
class Rankings:
    """Flat per-topic arrays: ``labels[offsets[t]:offsets[t+1]]`` is topic t's ranking."""

    topics: list[str]
    labels: np.ndarray  # float64, NaN = not judged (non-pool or negative grade)
    offsets: np.ndarray  # int64, len(topics) + 1
    judged: np.ndarray  # float64 qrels grades >= 0, each topic's sorted descending
    judged_offsets: np.ndarray
    missing: list[str]  # qrels topics the run does not answer

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)


def _indices(values: pa.ChunkedArray | pa.Array, universe: pa.Array) -> np.ndarray:
    """Position of each value in ``universe`` (-1 when absent)."""
    idx = pc.index_in(values, value_set=universe)
    return pc.fill_null(idx, -1).to_numpy(zero_copy_only=False).astype(np.int64)


def align(qrels: Qrels, run: Run, *, max_docs: int | None = None, judged_only: bool = False,
          complete: bool = False, run_name: str = "run") -> Rankings:
    topics = qrels.topics
    universe = pa.array(topics, pa.string())
    qt = qrels.table
    q_topic = _indices(qt["qid"], universe)
    q_docs = pc.unique(qt["docno"])
    q_doc = _indices(qt["docno"], q_docs)
    q_rel = qt["rel"].to_numpy(zero_copy_only=False).astype(np.float64)
    width = max(len(q_docs), 1)
    q_key = q_topic * width + q_doc
    key_order = np.argsort(q_key, kind="stable")
    q_key, q_rel_sorted = q_key[key_order], q_rel[key_order]

    rt = run.table
    r_topic = _indices(rt["qid"], universe)
    keep = r_topic >= 0
    if not keep.any():
        raise InvalidInputError("the run and the qrels have no topic in common", file=run_name,
                                fix="check that both files use the same topic ids")
    if not keep.all():
        rt = rt.filter(pa.array(keep))
        r_topic = r_topic[keep]
    score = rt["score"].to_numpy(zero_copy_only=False)
    docno = rt["docno"]

    order = _trec_order(r_topic, score, docno)
    if order is not None:
        r_topic, score = r_topic[order], score[order]
        docno = pc.take(docno, pa.array(order))

    starts = np.flatnonzero(np.r_[True, r_topic[1:] != r_topic[:-1]])
    counts = np.diff(np.r_[starts, len(r_topic)])
    if max_docs is not None:
        rank = np.arange(len(r_topic)) - np.repeat(starts, counts)
        cut = rank < max_docs
        if not cut.all():
            r_topic, docno = r_topic[cut], docno.filter(pa.array(cut))
            starts = np.flatnonzero(np.r_[True, r_topic[1:] != r_topic[:-1]])
            counts = np.diff(np.r_[starts, len(r_topic)])
    _refuse_duplicates(docno, starts, counts, r_topic, topics, run_name)

    r_doc = _indices(docno, q_docs)
    labels = np.full(len(r_topic), np.nan)
    judged_doc = r_doc >= 0
    if judged_doc.any():
        keys = r_topic[judged_doc] * width + r_doc[judged_doc]
        pos = np.searchsorted(q_key, keys)
        pos = np.minimum(pos, len(q_key) - 1)
        hit = q_key[pos] == keys
        found = np.where(hit, q_rel_sorted[pos], np.nan)
        labels[judged_doc] = np.where(found >= 0, found, np.nan)  # negative grade: in pool, unjudged
    answered = np.zeros(len(topics), dtype=bool)
    answered[r_topic] = True  # before -J: a topic whose documents are all unjudged still counts
    if judged_only:
        judged = ~np.isnan(labels)
        labels, r_topic = labels[judged], r_topic[judged]
    chosen = np.ones(len(topics), dtype=bool) if complete else answered
    per_topic = np.bincount(r_topic, minlength=len(topics))[chosen]
    labels = labels[chosen[r_topic]]

    j_rel = np.where(q_rel >= 0, q_rel, -np.inf)
    j_order = np.lexsort((-j_rel, q_topic))
    j_topic, j_rel = q_topic[j_order], j_rel[j_order]
    valid = np.isfinite(j_rel) & chosen[j_topic]
    j_counts = np.bincount(j_topic[valid], minlength=len(topics))[chosen]
    return Rankings(
        topics=[t for t, c in zip(topics, chosen) if c],
        labels=labels, offsets=np.r_[0, np.cumsum(per_topic)],
        judged=j_rel[valid], judged_offsets=np.r_[0, np.cumsum(j_counts)],
        missing=[t for t, a in zip(topics, answered) if not a],
    )


def _trec_order(topic: np.ndarray, score: np.ndarray, docno: pa.ChunkedArray) -> np.ndarray | None:
    """Row order (topic asc, score desc, docno desc), or None when the rows already are in it."""
    n = len(topic)
    if n < 2:
        return None
    same_topic = topic[1:] == topic[:-1]
    grouped = np.all(topic[1:] >= topic[:-1])
    sorted_scores = grouped and not np.any(same_topic & (score[1:] > score[:-1]))
    order = None if sorted_scores else np.lexsort((-score, topic))
    t = topic if order is None else topic[order]
    s = score if order is None else score[order]
    tied = (t[1:] == t[:-1]) & (s[1:] == s[:-1])
    if not tied.any():
        return order
    # Break score ties by docno descending, sorting only the tied rows.
    in_tie = np.zeros(n, dtype=bool)
    in_tie[1:] |= tied
    in_tie[:-1] |= tied
    rows = np.flatnonzero(in_tie)
    group = np.cumsum(np.r_[True, ~tied[rows[:-1]] | (np.diff(rows) != 1)])
    base = np.arange(n) if order is None else order
    sub = pa.table({"g": group, "d": pc.take(docno, pa.array(base[rows]))})
    within = pc.sort_indices(sub, sort_keys=[("g", "ascending"), ("d", "descending")]).to_numpy()
    base = base.copy()
    base[rows] = base[rows][within]
    return base


def _refuse_duplicates(docno, starts, counts, topic, topics, run_name) -> None:
    docno = docno.combine_chunks() if isinstance(docno, pa.ChunkedArray) else docno
    for start, count in zip(starts.tolist(), counts.tolist()):
        part = docno.slice(start, count)
        if pc.count_distinct(part).as_py() != count:
            values = pc.value_counts(part)
            dup = next(v["values"].as_py() for v in values if v["counts"].as_py() > 1)
            raise InvalidInputError(f"document {dup!r} appears twice for topic {topics[topic[start]]!r}",
                                    file=run_name, fix="give each document one line per topic (trec_eval refuses duplicates too)")
