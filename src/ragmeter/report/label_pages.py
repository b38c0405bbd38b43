"""The table's pages of a large label-only run, from its columns.

Each record :mod:`ragmeter.report.html_pages` writes for a sample, built from the arrays of
``results.jsonl`` (:mod:`ragmeter.core.result_columns`) and of ``samples.jsonl`` read in columns
(:mod:`ragmeter.io.label_file`, no fingerprints), without a ``Sample`` or a row per sample: the
relevance marks of every ranked chunk found at once by comparing (sample, chunk) codes, and the
retrieval findings of :func:`ragmeter.analysis.diagnosis.diagnose_sample` (``missing_content``,
``missed_top_ranked``, ``missing_chunk``, ``buried``; ``not_in_context`` needs a context, which
these samples do not give) decided for every sample at once from the metric columns, by the
same rules, with the same quirks (a reciprocal rank or nDCG of exactly 0 counts as absent, as
``rr not in (False, None)`` has it); their evidence text is written for the samples they flag.

:func:`label_pages` returns None, and the page takes the sample-by-sample path, unless every
measure is a label measure held by every row, at one cut-off, and ``samples.jsonl`` holds plain
label records with every result's id. The two paths give the same records (a test holds them
equal).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter.analysis.diagnosis import LEVERS, Thresholds, retrieval_keys
from ragmeter.core.errors import RagmeterError
from ragmeter.core.result_columns import ABSENT, ResultColumns
from ragmeter.io.label_file import LabelFile, read_label_file
from ragmeter.metrics import parse_measure
from ragmeter.metrics.kinds import LabelSpec
from ragmeter.report.html import shorten

TH = Thresholds()
STATUS_WORD = {1: "n/c", 2: "failed"}


@dataclass
class LabelPages:
    """What the pages of a label-only run are built from (see :func:`label_pages`)."""

    run: Any
    metrics: list[str]
    cols: ResultColumns
    file: LabelFile
    order: np.ndarray  # each result row's record in samples.jsonl
    flags: np.ndarray  # per result row, its findings: bit b set for the label names[b]
    names: list[str]  # the labels these rows can have, in diagnose_sample's order
    counts: dict[str, int]
    roles: dict[str, np.ndarray]  # the values the findings read (NaN where not scored)
    k: int | None
    marks: np.ndarray  # per ranked chunk of the file: 1 relevant, +2 in the prompt (always: no context)
    missing: np.ndarray  # per label of the file: relevant and not retrieved
    first: np.ndarray  # per record of the file: rank of its first relevant chunk in the top k (0: none)
    gone: np.ndarray  # per label of the file: relevant and not in the top k (the whole list without k)
    _said: tuple[dict[str, list[float]], list[int]] | None = None  # roles and first as lists, for the text
    _labels: list[list[str]] | None = None

    @property
    def labels(self) -> list[list[str]]:
        """Each result row's findings' labels, in diagnose_sample's order."""
        if self._labels is None:
            of_flags = [[name for b, name in enumerate(self.names) if f >> b & 1] for f in range(1 << len(self.names))]
            self._labels = [of_flags[f] for f in self.flags.tolist()]
        return self._labels

    def sample(self, i: int):
        """Result row ``i``'s sample (built, for the few the page shows whole)."""
        return self.file.samples()[int(self.order[i])]

    def pages(self, rows: int) -> Iterator[list[list[Any]]]:
        """The records, ``rows`` at a time, in the order of results.jsonl."""
        n = len(self.cols)
        for start in range(0, max(n, 1), rows):
            yield self.records(start, min(n, start + rows))

    def records(self, start: int, stop: int) -> list[list[Any]]:
        """The records of result rows ``start:stop``, as the page holds them."""
        cols, f, lc = self.cols, self.file, self.file.columns
        vocabulary = lc.vocabulary
        values = [cols.column(m).values[start:stop].tolist() for m in self.metrics]
        status = np.stack([cols.column(m).status[start:stop] for m in self.metrics]) if self.metrics else \
            np.zeros((0, stop - start))
        lost = set((np.flatnonzero((status != 0).any(axis=0)) + start).tolist()) if len(status) else set()
        labels = self.labels
        page: list[list[Any]] = []
        for n, i in enumerate(range(start, stop)):
            sid, j = cols.ids[i], int(self.order[i])
            a, b = int(lc.ranked_starts[j]), int(lc.ranked_starts[j + 1])
            la, lb = int(lc.label_starts[j]), int(lc.label_starts[j + 1])
            ranked = [vocabulary[c] for c in lc.ranked[a:b].tolist()]
            names = [vocabulary[c] for c in lc.labels[la:lb].tolist()]
            cells = self.cells(i) if i in lost else [v[n] for v in values]
            question = f.questions[j]
            findings = self._findings(i, j, names, lc.grades[la:lb].tolist(), ranked) if labels[i] else []
            marks = (self.marks[a:b] + 48).astype(np.uint8).tobytes().decode("ascii")
            drill = [ranked, marks, None, [c for c, gone in zip(names, self.missing[la:lb].tolist()) if gone], None,
                     None if f.answers is None else f.answers[j], None if f.references is None else f.references[j],
                     findings]
            page.append([sid, question, shorten(question or ""), cells, labels[i], drill])
        return page

    def cells(self, i: int) -> list[Any]:
        """Result row ``i``'s cells: each value, or why there is none (from the row's cell)."""
        row: dict | None = None
        out: list[Any] = []
        for name in self.metrics:
            col = self.cols.column(name)
            status = int(col.status[i])
            if status == 0:
                out.append(float(col.values[i]))
                continue
            row = self.run.results[i]["metrics"] if row is None else row
            out.append([STATUS_WORD.get(status, "n/c"), _why(row.get(name))])
        return out

    def _findings(self, i: int, j: int, names: list[str], grades: list[float], ranked: list[str]) -> list[list[str]]:
        """Sample ``i``'s findings as [label, evidence, lever], as :func:`diagnose_sample` writes them."""
        if self._said is None:
            self._said = ({name: v.tolist() for name, v in self.roles.items()}, self.first.tolist())
        roles, first = self._said
        out = []
        k = self.k
        relevant = [c for c, g in zip(names, grades) if g >= 1]
        for label in self.labels[i]:
            if label == "missing_content":
                text = "no relevant chunk exists for this question; refusal not judged"
            elif label == "missed_top_ranked":
                text = f"no relevant chunk in the top {k}; relevant: {', '.join(relevant)}"
            elif label == "missing_chunk":
                top = set(ranked[:k] if k else ranked)
                gone = [c for c in relevant if c not in top]
                text = f"recall@{k} {roles['recall'][i]:.3f}: {', '.join(gone)} not retrieved"
            else:  # buried
                ndcg = roles["ndcg"][i]
                text = f"first relevant chunk at rank {first[j]}" + (f"; nDCG@{k} {ndcg:.3f}" if ndcg == ndcg
                                                                     and ndcg != 0 else "")
            out.append([label, text, LEVERS[label]])
        return out


def _why(cell: dict | None) -> str:
    return "" if cell is None else (cell.get("reason") or cell.get("error") or "")


def label_pages(run, metrics: list[str], cols: ResultColumns) -> LabelPages | None:
    """The columns the pages are built from, or None when the run needs the sample-by-sample path
    (see the module)."""
    keys = list(cols.measures)
    try:
        measures = [parse_measure(key) for key in keys]
    except RagmeterError:
        return None
    if not keys or sorted(keys) != sorted(metrics) or not all(isinstance(m.spec, LabelSpec) for m in measures):
        return None
    if any((cols.column(key).status == ABSENT).any() for key in keys):
        return None
    hit, rr, ndcg, recall, k = retrieval_keys(keys)
    if any(key is not None and parse_measure(key).k != k for key in (hit, rr, ndcg, recall)):
        return None  # the findings read values at one cut-off and the ranked list at another
    path = Path(getattr(run, "path", "")) / "samples.jsonl"
    file = read_label_file(path, fingerprints=False) if path.is_file() else None
    if file is None:
        return None
    lc = file.columns
    if list(lc.ids) == list(cols.ids):  # the usual run: both files in one order
        order = np.arange(len(lc), dtype=np.int64)
    else:
        at = {sid: j for j, sid in enumerate(lc.ids)}
        found = [at.get(sid) for sid in cols.ids]
        if any(j is None for j in found):
            return None
        order = np.array(found, dtype=np.int64)
    m = len(lc)
    ranked_lengths, label_counts = lc.ranked_lengths(), lc.label_counts()
    index = np.int32 if max(len(lc.ranked), len(lc.labels)) < 2**31 else np.int64  # (half the memory)
    of_rank = np.repeat(np.arange(m, dtype=index), ranked_lengths)
    of_label = np.repeat(np.arange(m, dtype=index), label_counts)
    width = max(1, len(lc.vocabulary))
    relevant = lc.grades >= 1
    label_of_rank = label_of_ranked(lc.ranked, of_rank, lc.labels, lc.label_starts, width)
    matched = label_of_rank >= 0
    marks = (matched & relevant[label_of_rank] if len(relevant) else matched).astype(np.int8) + np.int8(2)
    position = np.arange(len(of_rank), dtype=index) - lc.ranked_starts[:-1].astype(index)[of_rank] + 1
    rank_of_label = np.zeros(len(of_label), dtype=index)  # 0: not retrieved
    rank_of_label[label_of_rank[matched]] = position[matched]
    del label_of_rank, matched
    missing = relevant & (rank_of_label == 0)
    gone = relevant & ((rank_of_label == 0) | ((rank_of_label > k) if k else False))
    del rank_of_label
    hits = np.flatnonzero((marks == 3) & ((position <= k) if k else True))
    first = np.zeros(m, dtype=np.int64)
    if len(hits):
        where, at_first = np.unique(of_rank[hits], return_index=True)
        first[where] = position[hits[at_first]]
    n_relevant = np.bincount(of_label[relevant], minlength=m)[order]
    roles = {name: _values(cols, key) for name, key in (("hit", hit), ("rr", rr), ("ndcg", ndcg), ("recall", recall))}
    flags: dict[str, np.ndarray] = {"missing_content": ((label_counts > 0) & (np.bincount(of_label[relevant],
                                                                                          minlength=m) == 0))[order]}
    if hit is not None:
        h = roles["hit"]
        flags["missed_top_ranked"] = (h == 0) & (n_relevant > 0)
        if recall is not None:
            flags["missing_chunk"] = (h == 1) & (roles["recall"] < 1)
        if rr is not None or ndcg is not None:
            r, d = roles["rr"], roles["ndcg"]
            flags["buried"] = (h == 1) & (((r != 0) & (r <= TH.buried_rr)) | ((d != 0) & (d < TH.buried_ndcg)))
    order_of = ("missing_content", "missed_top_ranked", "missing_chunk", "buried")
    named = [flags[name] for name in order_of if name in flags]
    names = [name for name in order_of if name in flags]
    bits = np.zeros(len(cols), dtype=np.int64)
    for b, on in enumerate(named):
        bits |= on.astype(np.int64) << b
    from ragmeter.analysis.diagnosis import LABELS

    counts = {label: int(flags[label].sum()) if label in flags else 0 for label in LABELS}
    return LabelPages(run, metrics, cols, file, order, bits, names, counts, roles, k, marks, missing, first,
                      gone)


SLOTS = 16  # records with at most this many labels are matched label slot by label slot


def label_of_ranked(ranked: np.ndarray, of_rank: np.ndarray, labels: np.ndarray, label_starts: np.ndarray,
                    width: int, slots: int = SLOTS) -> np.ndarray:
    """For each ranked chunk code (of record ``of_rank``), the index in ``labels`` of its record's
    label of the same code, -1 where it has none (a record's labels are distinct). Where no record
    has more than ``slots`` labels: per slot s, each ranked code compared with its record's s-th
    label (a pass over the ranked codes per slot, no sort); else the (record, code) keys matched by
    sorting (:func:`_matches`)."""
    counts = np.diff(label_starts)
    most = int(counts.max()) if len(counts) else 0
    if most > slots:
        of_label = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
        return _matches(of_rank * width + ranked.astype(np.int64), of_label * width + labels.astype(np.int64))
    out = np.full(len(ranked), -1, dtype=np.int32 if len(labels) < 2**31 else np.int64)
    lengths = np.bincount(of_rank, minlength=len(counts)) if len(of_rank) else np.zeros(len(counts), dtype=np.int64)
    for slot in range(most):
        has = counts > slot
        at = np.where(has, label_starts[:-1] + slot, 0)
        code = np.where(has, labels[at] if len(labels) else 0, -1)  # each record's slot-th label, -1: none
        hit = np.flatnonzero(np.repeat(code, lengths) == ranked)
        out[hit] = at[of_rank[hit]]
    return out


def _matches(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For each key of ``a``, the index in ``b`` of the same key (``b``'s keys distinct), -1 where
    ``b`` lacks it: ``b`` sorted and searched (no hash table; ``a``, the larger, left unsorted)."""
    if not len(b):
        return np.full(len(a), -1, dtype=np.int64)
    by = np.argsort(b, kind="stable")
    ordered = b[by]
    at = np.minimum(np.searchsorted(ordered, a), len(b) - 1)
    return np.where(ordered[at] == a, by[at], -1)


def _values(cols: ResultColumns, key: str | None) -> np.ndarray:
    """A measure's values where scored, NaN elsewhere (and for a measure the run lacks)."""
    if key is None:
        return np.full(len(cols), np.nan)
    col = cols.column(key)
    return np.where(col.status == 0, col.values, np.nan)
