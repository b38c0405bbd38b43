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
    labels: list[list[str]]  # each result row's findings' labels, in diagnose_sample's order
    counts: dict[str, int]
    roles: dict[str, np.ndarray]  # the values the findings read (NaN where not scored)
    k: int | None
    marks: np.ndarray  # per ranked chunk of the file: 1 relevant, +2 in the prompt (always: no context)
    missing: np.ndarray  # per label of the file: relevant and not retrieved
    first: np.ndarray  # per record of the file: rank of its first relevant chunk in the top k (0: none)
    _said: tuple[dict[str, list[float]], list[int]] | None = None  # roles and first as lists, for the text

    def sample(self, i: int):
        """Result row ``i``'s sample (built, for the few the page shows whole)."""
        return self.file.samples()[int(self.order[i])]

    def pages(self, rows: int) -> Iterator[list[list[Any]]]:
        """The records, ``rows`` at a time, in the order of results.jsonl."""
        cols, f, lc = self.cols, self.file, self.file.columns
        vocabulary = list(lc.vocabulary)
        ranked_starts, label_starts = lc.ranked_starts.tolist(), lc.label_starts.tolist()
        ranked_names = [vocabulary[c] for c in lc.ranked.tolist()]
        label_names = [vocabulary[c] for c in lc.labels.tolist()]
        grades = lc.grades.tolist()
        marks = (self.marks + 48).astype(np.uint8).tobytes().decode("ascii")
        missing = self.missing.tolist()
        values = [cols.column(m).values.tolist() for m in self.metrics]
        status = np.stack([cols.column(m).status for m in self.metrics]) if self.metrics else np.zeros((0, len(cols)))
        unscored = np.flatnonzero((status != 0).any(axis=0)).tolist() if len(status) else []
        statuses = status.T.tolist() if len(status) else [[] for _ in cols.ids]
        answers = f.answers or [None] * len(lc)
        references = f.references or [None] * len(lc)
        order = self.order.tolist()
        page: list[list[Any]] = []
        lost = set(unscored)
        for i, sid in enumerate(cols.ids):
            j = order[i]
            a, b = ranked_starts[j], ranked_starts[j + 1]
            la, lb = label_starts[j], label_starts[j + 1]
            if i in lost:
                row = self.run.results[i]["metrics"]
                cells = [values[m][i] if st == 0 else [STATUS_WORD.get(st, "n/c"), _why(row.get(name))]
                         for m, (st, name) in enumerate(zip(statuses[i], self.metrics))]
            else:
                cells = [v[i] for v in values]
            question = f.questions[j]
            findings = self._findings(i, j, label_names[la:lb], grades[la:lb], ranked_names[a:b]) if self.labels[i] \
                else []
            drill = [ranked_names[a:b], marks[a:b], None, [n for n, gone in zip(label_names[la:lb], missing[la:lb])
                                                          if gone], None, answers[j], references[j], findings]
            page.append([sid, question, shorten(question or ""), cells, self.labels[i], drill])
            if len(page) == rows:
                yield page
                page = []
        if page or not len(cols):
            yield page

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
    at = {sid: j for j, sid in enumerate(lc.ids)}
    found = [at.get(sid) for sid in cols.ids]
    if any(j is None for j in found):
        return None
    order = np.array(found, dtype=np.int64)
    m = len(lc)
    ranked_lengths, label_counts = lc.ranked_lengths(), lc.label_counts()
    of_rank = np.repeat(np.arange(m, dtype=np.int64), ranked_lengths)
    of_label = np.repeat(np.arange(m, dtype=np.int64), label_counts)
    width = max(1, len(lc.vocabulary))
    rank_keys = of_rank * width + lc.ranked.astype(np.int64)
    relevant = lc.grades >= 1
    label_keys = of_label * width + lc.labels.astype(np.int64)
    marks = _within(rank_keys, label_keys[relevant]).astype(np.int64) + 2
    missing = relevant & ~_within(label_keys, rank_keys)
    position = np.arange(len(rank_keys), dtype=np.int64) - lc.ranked_starts[:-1][of_rank] + 1
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
    labels = [[name for name, on in zip(names, row) if on] for row in np.stack(named).T.tolist()] if named else \
        [[] for _ in cols.ids]
    from ragmeter.analysis.diagnosis import LABELS

    counts = {label: int(flags[label].sum()) if label in flags else 0 for label in LABELS}
    return LabelPages(run, metrics, cols, file, order, labels, counts, roles, k, marks, missing, first)


def _within(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.isin(a, b)`` for integers, by sorting ``b`` and searching it (no hash table)."""
    if not len(b):
        return np.zeros(len(a), dtype=bool)
    b = np.sort(b)
    at = np.minimum(np.searchsorted(b, a), len(b) - 1)
    return b[at] == a


def _values(cols: ResultColumns, key: str | None) -> np.ndarray:
    """A measure's values where scored, NaN elsewhere (and for a measure the run lacks)."""
    if key is None:
        return np.full(len(cols), np.nan)
    col = cols.column(key)
    return np.where(col.status == 0, col.values, np.nan)
