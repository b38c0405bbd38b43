"""Align a run with qrels the way trec_eval does, into per-topic ranked label arrays.

For every evaluated topic: the run's documents sorted by score descending, ties broken by
docno descending (byte order; the rank column is ignored), cut at ``max_docs`` (-M), each
replaced by its label as trec_eval's ``form_res_rels.c`` does: the qrels grade (>= 0), -1
for a document not in the qrels (RELVALUE_NONPOOL) or -2 for one judged with a negative
grade (RELVALUE_UNJUDGED). ``judged_only`` (-J) drops the -1 and -2 documents and ranks the
rest. A duplicate document within a topic's top ``max_docs`` is refused (exit 4), as in
trec_eval.

Topics: the qrels topics that the run answers; with ``complete`` (-c) also every other qrels
topic, ranked as trec_eval 10 ranks it: one document, ``ceci_nest_pas_un_docno``, score 1
(its num_ret and unj are set to 0 afterwards; see ``bogus``). Run topics without qrels are
ignored.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragmeter.trec.arrow import from_numpy, to_numpy
from ragmeter.trec.blocks import padded_groups
from ragmeter.trec.duplicates import refuse_duplicates
from ragmeter.trec.errors import EXIT_TOPIC, TrecInputError
from ragmeter.trec.reader import Qrels, TrecRun

BOGUS_DOCNO = "ceci_nest_pas_un_docno"  # trec_eval.c: the ranking of a topic the run misses, under -c
NONPOOL, UNJUDGED = -1.0, -2.0  # trec_eval's labels for a document not in the qrels / judged below 0


@dataclass(frozen=True)
class Rankings:
    """Flat per-topic arrays: ``labels[offsets[t]:offsets[t+1]]`` is ``topics[t]``'s ranking.

    Topics are stored in the order the run lists them (no reshuffling of millions of rows);
    :func:`output_order` gives trec_eval's printing order.
    """

    topics: list[str]
    offsets: np.ndarray  # int64, len(topics) + 1
    graded_at: np.ndarray  # int64, ascending: the ranked positions that are in the qrels
    grades: np.ndarray  # float64, their labels: the grade, or -2 for a negative one (every other position: -1)
    judged: np.ndarray  # float64 qrels grades >= 0, each topic's sorted descending
    judged_offsets: np.ndarray
    missing: list[str]  # qrels topics the run does not answer
    bogus: np.ndarray  # bool per topic: ranked with trec_eval's stand-in document (-c)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def labels(self) -> np.ndarray:
        """Every ranked position's grade, NaN when unjudged (dense; for inspection and tests)."""
        dense = np.full(int(self.offsets[-1]), np.nan)
        judged = self.grades >= 0
        dense[self.graded_at[judged]] = self.grades[judged]
        return dense


def output_order(topics: list[str]) -> np.ndarray:
    """trec_eval prints topics in byte order of their ids."""
    return np.array(sorted(range(len(topics)), key=lambda i: topics[i].encode()), dtype=np.int64)


_SPLIT = 1 << 20  # columns longer than this are looked up on two threads


def _halves(values: pa.ChunkedArray | pa.Array, lookup) -> list:
    """``lookup`` on each half of a long column at once (Arrow's kernels are single-threaded
    and release the GIL), or on the whole of a short one."""
    n = len(values)
    if n <= _SPLIT:
        return [lookup(values, 0)]
    half = n // 2
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lookup, [values.slice(0, half), values.slice(half)], [0, half]))


def positions_in(values: pa.ChunkedArray | pa.Array, universe: pa.Array) -> np.ndarray:
    """Position of each value in ``universe`` (-1 when absent), as int32."""

    def lookup(part, _):
        return to_numpy(pc.index_in(part, value_set=universe), null=-1).astype(np.int32, copy=False)

    return np.concatenate(_halves(values, lookup))


def _members(values: pa.ChunkedArray | pa.Array, universe: pa.Array) -> np.ndarray:
    """Rows whose value is in ``universe``, ascending (int64). Only a bitmap and the matching
    rows are allocated: most of a run's documents are not in the qrels."""

    def lookup(part, base):
        return to_numpy(pc.indices_nonzero(pc.is_in(part, value_set=universe))).astype(np.int64) + base

    return np.concatenate(_halves(values, lookup))


def _take(values: pa.ChunkedArray | pa.Array, rows: np.ndarray) -> pa.Array:
    """``values[rows]``, taken chunk by chunk: Arrow's take on a chunked column first copies
    the whole column into one (140 MB of fresh memory for 10M docnos, to take a few rows)."""
    if not isinstance(values, pa.ChunkedArray):
        return values.take(from_numpy(rows))
    back = None
    if len(rows) > 1 and (rows[1:] < rows[:-1]).any():
        back = np.argsort(rows, kind="stable")
        rows = rows[back]
    bounds = np.cumsum([0] + [len(c) for c in values.chunks])
    cuts = np.searchsorted(rows, bounds)
    parts = [chunk.take(from_numpy(rows[cuts[i]:cuts[i + 1]] - bounds[i]))
             for i, chunk in enumerate(values.chunks) if cuts[i + 1] > cuts[i]]
    taken = pa.concat_arrays(parts) if parts else values.slice(0, 0).combine_chunks()
    if back is None:
        return taken
    position = np.empty_like(back)
    position[back] = np.arange(len(back))
    return taken.take(from_numpy(position))


@dataclass(frozen=True)
class TopicRuns:
    """Maximal runs of consecutive rows with one topic: first row, length, topic index
    (-1: not a qrels topic). A run file written topic by topic has one run per topic."""

    starts: np.ndarray  # int64
    lengths: np.ndarray  # int64
    topic: np.ndarray  # int64
    rows: np.ndarray | None = None  # int32 per-row topics, kept instead of runs for an interleaved file

    @classmethod
    def interleaved(cls, per_row: np.ndarray) -> TopicRuns:
        """A file whose topics change almost every line: no run arrays (they would be as long
        as the file, three times over), only each row's topic."""
        empty = np.zeros(0, np.int64)
        return cls(empty, empty, empty, per_row)

    def without_unknown(self) -> tuple[TopicRuns, np.ndarray]:
        """Without the rows whose topic has no qrels (index -1), and the mask of rows kept."""
        if self.rows is not None:
            mask = self.rows >= 0
            return TopicRuns.interleaved(self.rows[mask]), mask
        keep = self.topic >= 0
        return TopicRuns.of(self.topic[keep], self.lengths[keep]), np.repeat(keep, self.lengths)

    def distinct(self) -> np.ndarray:
        """Each distinct topic index, ascending (-1 first when some rows have no qrels topic)."""
        return np.unique(self.rows if self.rows is not None else self.topic)

    @classmethod
    def of(cls, topic: np.ndarray, lengths: np.ndarray) -> TopicRuns:
        """Runs from (topic, length) pieces, merging neighbours with the same topic."""
        topic, lengths = np.asarray(topic, np.int64), np.asarray(lengths, np.int64)
        if len(topic) > 1:
            first = np.flatnonzero(np.r_[True, topic[1:] != topic[:-1]])
            if len(first) < len(topic):
                topic, lengths = topic[first], np.add.reduceat(lengths, first)
        return cls(np.r_[0, np.cumsum(lengths)[:-1]].astype(np.int64) if len(lengths) else lengths, lengths, topic)

    @property
    def grouped(self) -> bool:
        """Whether each topic's rows are all together (an interleaved file says no without looking)."""
        return self.rows is None and len(np.unique(self.topic)) == len(self.topic)

    def topic_of(self, rows: np.ndarray) -> np.ndarray:
        if self.rows is not None:
            return self.rows[rows].astype(np.int64)
        return self.topic[np.searchsorted(self.starts, rows, side="right") - 1]

    def per_row(self) -> np.ndarray:
        return self.rows if self.rows is not None else np.repeat(self.topic.astype(np.int32), self.lengths)

    def as_runs(self) -> TopicRuns:
        return TopicRuns.of(self.rows, np.ones(len(self.rows), np.int64)) if self.rows is not None else self

    def appended(self, topic: np.ndarray) -> TopicRuns:
        """With one more row for each of ``topic`` at the end of the file."""
        if self.rows is not None:
            return TopicRuns.interleaved(np.r_[self.rows, topic].astype(np.int32))
        return TopicRuns.of(np.r_[self.topic, topic], np.r_[self.lengths, np.ones(len(topic), np.int64)])


def _topic_runs(qid: pa.ChunkedArray | pa.Array, universe: pa.Array) -> TopicRuns:
    """The run's topic runs. The ids are run-length encoded (one pass of neighbour
    comparisons) and only the distinct runs are looked up: for a file written topic by
    topic, 10,000 hash look-ups instead of 10 million, and no per-row topic column."""
    encoded = pc.run_end_encode(qid)
    chunks = [c for c in (encoded.chunks if isinstance(encoded, pa.ChunkedArray) else [encoded]) if len(c)]
    if not chunks:
        return TopicRuns.of(np.zeros(0), np.zeros(0))
    if sum(len(c.values) for c in chunks) * 4 > len(qid):  # topics interleaved: look each row up
        del encoded, chunks
        return TopicRuns.interleaved(positions_in(qid, universe))
    lengths = np.concatenate([np.diff(to_numpy(c.run_ends), prepend=0) for c in chunks])
    topic = to_numpy(pc.index_in(pa.concat_arrays([c.values for c in chunks]), value_set=universe), null=-1)
    return TopicRuns.of(topic, lengths)


def align(qrels: Qrels, run: TrecRun, *, max_docs: int | None = None, judged_only: bool = False,
          complete: bool = False, run_name: str = "run", check: bool = True) -> Rankings:
    """``check``: refuse duplicate documents (trec_eval checks them in ``form_res_rels``, which
    every measure but runid and num_q calls)."""
    universe = qrels.topic_array  # an Arrow array, not pa.array(list): that imports pandas (0.3 s) when installed
    topics = universe.to_pylist()
    qt = qrels.table
    q_topic = positions_in(qt["qid"], universe).astype(np.int64)
    q_docs = pc.unique(qt["docno"])
    width = max(len(q_docs), 1)
    q_key = q_topic * width + positions_in(qt["docno"], q_docs)
    q_rel = to_numpy(qt["rel"]).astype(np.float64)
    key_order = np.argsort(q_key, kind="stable")
    q_key_sorted, q_rel_sorted = q_key[key_order], q_rel[key_order]
    twice = np.flatnonzero(q_key_sorted[1:] == q_key_sorted[:-1])
    if len(twice) and check:
        row = int(key_order[twice[0]])
        raise TrecInputError(f"document {qt['docno'][row].as_py()!r} is judged twice for topic "
                             f"{qt['qid'][row].as_py()!r}", file=qrels.source, exit_code=EXIT_TOPIC,
                             fix="keep one judgment per (topic, document); trec_eval refuses it too")

    rt = run.table
    runs = _topic_runs(rt["qid"], universe)
    present = runs.distinct()
    if len(present) and present[0] < 0:  # rows of topics without qrels: dropped, as trec_eval does
        runs, mask = runs.without_unknown()
        rt = rt.filter(from_numpy(mask))
        present = present[1:]
    missing_mask = np.ones(len(topics), dtype=bool)
    missing_mask[present] = False
    missing = np.flatnonzero(missing_mask)
    if complete and len(missing):  # -c: trec_eval ranks one stand-in document for each
        stand_in = pa.table({"qid": universe.take(from_numpy(missing)),
                             "docno": pa.array([BOGUS_DOCNO] * len(missing), pa.string()),
                             "score": from_numpy(np.ones(len(missing)))})
        rt = pa.concat_tables([rt, stand_in.cast(rt.schema)])
        runs = runs.appended(missing)
    docno = rt["docno"]
    n = rt.num_rows
    # Grades are looked up in file order and kept sparse (the few graded rows and where they
    # land in ranked order). A file written topic by topic in rank order, the usual case, is
    # checked chunk by chunk and only its tied rows move; topics together but out of rank
    # order are sorted within each topic; an interleaved file is sorted by topic first.
    rows, grades = _graded_rows(docno, runs, q_docs, width, q_key_sorted, q_rel_sorted)
    tie_left = _ties_if_descending(rt["score"], runs.starts) if runs.grouped else None
    if tie_left is not None:
        order, grouped = _break_ties(tie_left, None, docno), True
    elif runs.grouped:  # topics together, scores out of order within some: sort within each topic
        within, tied = _by_score_within(to_numpy(rt["score"]), runs.starts, runs.lengths)
        order, grouped = _break_ties(tied, within, docno), True
    else:
        order, grouped = _trec_order(runs.per_row(), to_numpy(rt["score"]), docno)
    at = rows if order is None else order.positions(rows)
    if order is not None and not grouped:  # sorted by topic index: one run per topic
        docno = pc.take(docno, from_numpy(order.full(n)))
        sizes = np.bincount(runs.per_row(), minlength=len(topics)).astype(np.int64)
        answered = np.flatnonzero(sizes)
        runs, order = TopicRuns.of(answered, sizes[answered]), None
    runs = runs.as_runs()  # an "interleaved" file that was grouped after all (one or two lines a topic)
    by_rank = np.argsort(at, kind="stable")
    at, grades = at[by_rank], grades[by_rank]
    starts, counts, stored = runs.starts, runs.lengths, runs.topic  # stored: each block's topic, in storage order
    if max_docs is not None and len(counts) and counts.max() > max_docs:
        cut = np.arange(n) - np.repeat(starts, counts) < max_docs  # by rank, in sorted order
        if order is not None:  # docno is still in file order within each topic block
            cut = order.unapply(cut)
        docno = docno.filter(from_numpy(cut))
        block = np.searchsorted(starts, at, side="right") - 1
        rank = at - starts[block]
        counts = np.minimum(counts, max_docs)
        starts = np.r_[0, np.cumsum(counts)[:-1]].astype(np.int64)
        within = rank < max_docs
        at, grades = (starts[block] + rank)[within], grades[within]
    if check:
        refuse_duplicates(docno, starts, counts, stored, topics, run_name)  # a set check: order-free

    if judged_only:  # -J: drop unjudged documents, keep the (possibly empty) topic
        judged = grades >= 0
        at, grades = at[judged], grades[judged]
        counts = np.bincount(np.searchsorted(starts, at, side="right") - 1, minlength=len(stored))
        at = np.arange(len(at))

    j_rel = np.where(q_rel >= 0, q_rel, -np.inf)
    j_order = np.lexsort((-j_rel, q_topic))
    j_topic, j_rel = q_topic[j_order], j_rel[j_order]
    valid = np.isfinite(j_rel)
    j_topic, j_rel = j_topic[valid], j_rel[valid]
    j_counts = np.bincount(j_topic, minlength=len(topics))
    j_starts = np.r_[0, np.cumsum(j_counts)[:-1]]
    sizes = j_counts[stored]
    gather = np.repeat(j_starts[stored] - np.r_[0, np.cumsum(sizes)[:-1]], sizes) + np.arange(sizes.sum())
    return Rankings(
        topics=[topics[i] for i in stored.tolist()],
        offsets=np.r_[0, np.cumsum(counts)].astype(np.int64), graded_at=at.astype(np.int64), grades=grades,
        judged=j_rel[gather], judged_offsets=np.r_[0, np.cumsum(sizes)],
        missing=[topics[i] for i in missing.tolist()],
        bogus=np.isin(stored, missing) if complete else np.zeros(len(stored), bool),
    )


def _graded_rows(docno, runs: TopicRuns, q_docs, width, q_key_sorted, q_rel_sorted) -> tuple[np.ndarray, np.ndarray]:
    """The file rows whose (topic, docno) is in the qrels (ascending), and their labels: the
    grade, or -2 (in the pool, unjudged) for a negative one. Every other row is -1."""
    candidates = _members(docno, q_docs)
    if not len(candidates):
        return candidates, np.zeros(0)
    keys = runs.topic_of(candidates) * width + positions_in(_take(docno, candidates), q_docs)
    pos = np.minimum(np.searchsorted(q_key_sorted, keys), len(q_key_sorted) - 1)
    found = q_key_sorted[pos] == keys
    grade = q_rel_sorted[pos][found]
    return candidates[found], np.where(grade >= 0, grade, UNJUDGED)


@dataclass(frozen=True)
class Reorder:
    """A row permutation ``sorted[rows] = file[source]`` (rows not listed stay in place)."""

    rows: np.ndarray | None  # None: every row, i.e. ``sorted = file[source]``
    source: np.ndarray

    def apply(self, values: np.ndarray, *, inplace: bool = False) -> np.ndarray:
        if self.rows is None:
            return values[self.source]
        out = values if inplace else values.copy()
        out[self.rows] = values[self.source]  # the right side is gathered first: safe in place
        return out

    def unapply(self, values: np.ndarray) -> np.ndarray:
        """The inverse: from sorted order back to file order."""
        out = values.copy() if self.rows is not None else np.empty_like(values)
        if self.rows is None:
            out[self.source] = values
        else:
            out[self.source] = values[self.rows]
        return out

    def full(self, n: int) -> np.ndarray:
        return self.apply(np.arange(n))

    def positions(self, file_rows: np.ndarray) -> np.ndarray:
        """Where each of ``file_rows`` lands in sorted order."""
        if self.rows is None:
            inverse = np.empty_like(self.source)
            inverse[self.source] = np.arange(len(self.source))
            return inverse[file_rows]
        out = file_rows.copy()
        if len(self.source):
            by_source = np.argsort(self.source)
            i = np.minimum(np.searchsorted(self.source[by_source], file_rows), len(self.source) - 1)
            moved = self.source[by_source[i]] == file_rows
            out[moved] = self.rows[by_source[i[moved]]]
        return out


def _trec_order(topic: np.ndarray, score: np.ndarray, docno: pa.ChunkedArray) -> tuple[Reorder | None, bool]:
    """The permutation that puts each topic's rows together, by score descending and ties by
    docno descending (None when the rows already are), and whether the file already had each
    topic's rows together (then topic blocks keep their place and only rows within one move).
    On per-row columns: the path for files not written topic by topic in rank order (see
    :func:`_ties_if_descending` for those).

    Topics first (a stable sort of small integers: radix), then scores within each topic
    (:func:`_by_score_within`): 1.1 s for 10M shuffled lines, where one ``np.lexsort`` on
    (topic, score) took 4.1 s."""
    n = len(topic)
    if n < 2:
        return None, True
    same = topic[1:] == topic[:-1]
    starts = np.flatnonzero(np.r_[True, ~same])
    grouped = len(np.unique(topic[starts])) == len(starts)
    if grouped and not np.any(same & (score[1:] > score[:-1])):
        return _break_ties(np.flatnonzero(same & (score[1:] == score[:-1])), None, docno), grouped
    if grouped:
        order, tied = _by_score_within(score, starts, np.diff(np.r_[starts, n]))
    else:
        small = topic.astype(np.int16) if topic.max(initial=0) < 2**15 else topic  # int16 sorts by radix
        by_topic = np.argsort(small, kind="stable")
        sizes = np.bincount(topic, minlength=int(topic.max(initial=0)) + 1)
        sizes = sizes[sizes > 0]
        within, tied = _by_score_within(score[by_topic], np.r_[0, np.cumsum(sizes)[:-1]], sizes)
        order = by_topic[within]
    return _break_ties(tied, order, docno), grouped


def _by_score_within(score: np.ndarray, starts: np.ndarray, counts: np.ndarray,
                     cells: int = 1 << 16) -> tuple[np.ndarray, np.ndarray]:
    """The permutation that sorts each block ``score[starts[i]:starts[i] + counts[i]]`` by
    score descending (blocks tile the array in order; ties in any order: they are broken by
    docno afterwards), and the sorted positions i whose score equals position i+1's in the
    same block. Blocks are sorted as rows of padded matrices of about ``cells`` entries (NaN
    padding sorts last and ties nothing), on two threads; 2^16 to 2^18 cells measured fastest
    (2^12: 2x, 2^20: 1.5x slower on 10M lines)."""
    out = np.empty(len(score), dtype=np.int64)
    groups = padded_groups(counts, cells)

    def sort(part) -> list[np.ndarray]:
        ties = []
        for a, b in part:
            first, last, width = int(starts[a]), int(starts[b - 1] + counts[b - 1]), int(counts[a:b].max())
            filled = np.arange(width)[None, :] < counts[a:b, None]
            matrix = np.full((b - a, width), np.nan)
            matrix[filled] = score[first:last]
            matrix *= -1  # descending; NaN stays NaN and sorts last
            ranked = np.argsort(matrix, axis=1)
            out[first:last] = (ranked + starts[a:b, None])[filled]
            values = np.take_along_axis(matrix, ranked, axis=1)
            row, col = np.nonzero(values[:, 1:] == values[:, :-1])
            ties.append(starts[a:b][row] + col)
        return ties

    half = len(groups) // 2
    with ThreadPoolExecutor(max_workers=2) as pool:  # numpy's sorts release the GIL
        ties = [t for part in pool.map(sort, [groups[:half], groups[half:]]) for t in part]
    return out, (np.concatenate(ties).astype(np.int64) if ties else np.zeros(0, np.int64))


def _ties_if_descending(score: pa.ChunkedArray | pa.Array, run_starts: np.ndarray) -> np.ndarray | None:
    """For a file whose topics are each together: the rows i whose score equals row i+1's in
    the same topic, or None when some topic is not in descending score order. Chunk by
    chunk (no 80 MB score column, no per-row topic column)."""
    ties, previous, lo = [], None, 0
    for chunk in (score.chunks if isinstance(score, pa.ChunkedArray) else [score]):
        s = to_numpy(chunk)
        if not len(s):
            continue
        if previous is not None:
            s = np.r_[previous, s]  # the pair across the chunk boundary
            lo -= 1
        rise, tie = s[1:] > s[:-1], s[1:] == s[:-1]  # pair j: rows lo + j, lo + j + 1
        new_topic = run_starts[np.searchsorted(run_starts, lo + 1):np.searchsorted(run_starts, lo + len(s))] - lo - 1
        rise[new_topic] = tie[new_topic] = False
        if rise.any():
            return None
        ties.append(np.flatnonzero(tie) + lo)
        previous, lo = s[-1], lo + len(s)
    return np.concatenate(ties) if ties else np.zeros(0, np.int64)


def _break_ties(tie_left: np.ndarray, order: np.ndarray | None, docno) -> Reorder | None:
    """Sort each stretch of tied rows by docno descending. ``tie_left``: the rows i (in
    ``order``, or file order) whose score ties with row i+1's in the same topic."""
    if not len(tie_left):
        return None if order is None else Reorder(None, order)
    rows = np.union1d(tie_left, tie_left + 1)
    linked = np.isin(rows[:-1], tie_left) & (np.diff(rows) == 1)
    group = np.cumsum(np.r_[True, ~linked])
    file_rows = rows if order is None else order[rows]
    sub = pa.Table.from_arrays([from_numpy(group), _take(docno, file_rows)], names=["g", "d"])
    within = to_numpy(pc.sort_indices(sub, sort_keys=[("g", "ascending"), ("d", "descending")]))
    if order is None:
        return Reorder(rows, rows[within])
    order[rows] = file_rows[within]
    return Reorder(None, order)
