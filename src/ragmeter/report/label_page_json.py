"""The table's pages of a large label-only run written as JSON straight from its columns.

:func:`page_json` gives, for result rows ``start:stop``, the very bytes
``msgspec.json.encode(pages.records(start, stop))`` gives (a test holds them equal, hostile
strings included), without the records: each chunk id of the file is encoded once, and a page
is its rows' pieces put together, a row a ``bytes`` format. The pieces:

- each id, question, short question, answer and reference: its own encoding (``null`` for None);
- the cells of a row scored in every measure: the encoding of its values (a row with a cell not
  scored: its record's cells, encoded);
- the labels: one encoding per set of labels (a row's findings as bits);
- the ranked ids and the missing ones: their encodings joined by ``,``; the marks: digits;
- the findings' evidence: text around the ids, the ids' encodings without their quotes.

Why the pieces are the encoding: msgspec escapes a string character by character (``"``, ``\\``
and control characters; everything else as UTF-8), so the encoding of ``a + b`` is the encoding
of ``a`` and of ``b`` without the quotes between them; and a list's encoding is its items'
encodings between brackets, joined by ``,``. A string msgspec cannot encode (a lone surrogate,
which msgspec's decoder never gives) makes :func:`page_json` return None: the caller then encodes
the records, as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np

from ragmeter.analysis.diagnosis import LEVERS
from ragmeter.report.html import shorten

if TYPE_CHECKING:
    from ragmeter.report.label_pages import LabelPages

_encode = msgspec.json.encode
_RECORD = b'[%b,%b,%b,%b,%b,[[%b],"%b",null,[%b],null,%b,%b,%b]]'


ENCODED_ONCE = 2_000_000  # distinct chunk ids encoded once for all pages; more are encoded page by page


class PageJson:
    """What :func:`page_json` reuses from page to page: each chunk id's encoding, each label set's,
    the values and statuses as lists."""

    def __init__(self, pages: LabelPages) -> None:
        self.pages = pages
        lc = pages.file.columns
        self.vocabulary = lc.vocabulary
        self.ids: Any = None  # each chunk id's encoding (and without its quotes), where there are few enough
        self.inner: Any = None
        if len(lc.vocabulary) <= ENCODED_ONCE:
            try:
                self.ids = np.array([_encode(v) for v in lc.vocabulary] or [b""], dtype=object)
            except (UnicodeEncodeError, TypeError, ValueError):
                self.ids = False  # a page is encoded from its records
        names = pages.names
        self.label_sets = [_encode([name for b, name in enumerate(names) if f >> b & 1])
                           for f in range(1 << len(names))]
        self.marks = (pages.marks + 48).astype(np.uint8)
        k = pages.k
        said = {"missing_content": ("no relevant chunk exists for this question; refusal not judged", ""),
                "missed_top_ranked": (f"no relevant chunk in the top {k}; relevant: ", ""),
                "missing_chunk": (f"recall@{k} ", " not retrieved"), "buried": ("first relevant chunk at rank ", "")}
        self.items = {}  # per label, its finding's encoding around the evidence that varies: before, after
        for name in names:
            before, after = said[name]
            head = b"[%b,%b" % (_encode(name), _encode(before)[:-1])
            self.items[name] = (head, _encode(after)[1:] + b",%b]" % _encode(LEVERS[name]))
        if "buried" in self.items:  # its rank, and its nDCG where it has one, as bytes formats
            head, tail = (piece.replace(b"%", b"%%") for piece in self.items["buried"])
            self.buried = (head + b"%d" + tail, head + b"%d" + _encode(f"; nDCG@{k} ")[1:-1].replace(b"%", b"%%")
                           + b"%.3f" + tail)
        metrics = pages.metrics
        cols = pages.cols
        self.values = np.stack([cols.column(m).values for m in metrics], axis=1) if metrics else None
        self.scored = (np.stack([cols.column(m).status for m in metrics]) == 0).all(axis=0) if metrics else None

    def tokens(self, codes: np.ndarray) -> np.ndarray:
        """The encodings of these chunk id codes (an object array)."""
        if self.ids is not None:
            return self.ids[codes]
        out = np.empty(len(codes), dtype=object)
        out[:] = [_encode(self.vocabulary[c]) for c in codes.tolist()]
        return out

    def inner_tokens(self, codes: np.ndarray) -> list[bytes]:
        """The encodings of these chunk id codes without their quotes."""
        if self.ids is None:
            return [t[1:-1] for t in self.tokens(codes).tolist()]
        if self.inner is None:
            self.inner = np.array([t[1:-1] for t in self.ids.tolist()], dtype=object)
        return self.inner[codes].tolist()


def page_json(state: PageJson, start: int, stop: int) -> bytes | None:
    """``msgspec.json.encode(records)`` of result rows ``start:stop`` (see the module), or None."""
    lp = state.pages
    if state.ids is False or stop <= start:
        return None
    f, lc = lp.file, lp.file.columns
    js = lp.order[start:stop]
    ranked_at, ranked_starts = _spans(lc.ranked_starts, js)
    label_at, label_starts = _spans(lc.label_starts, js)
    marks = state.marks[ranked_at].tobytes()
    label_codes = lc.labels[label_at]
    missing = lp.missing[label_at]
    try:
        ranked = state.tokens(lc.ranked[ranked_at]).tolist()
        missing_ids = state.tokens(label_codes[missing]).tolist()
    except (UnicodeEncodeError, TypeError, ValueError):
        return None
    missing_starts = np.concatenate(([0], np.cumsum(missing)))[label_starts].tolist()
    jl = js.tolist()
    first = jl[0]
    in_order = jl[-1] - first == len(jl) - 1 and (len(jl) == 1 or bool((np.diff(js) == 1).all()))

    def take(values: list) -> list:
        return values[first:first + len(jl)] if in_order else [values[j] for j in jl]

    try:
        sids = list(map(_encode, lp.cols.ids[start:stop]))
        questions = take(f.questions)
        questions_json = list(map(_encode, questions))
        shorts = [b'""' if q is None else qj if (cut := shorten(q)) is q else _encode(cut)
                  for q, qj in zip(questions, questions_json)]  # (shorten gives back a short text itself)
        answers = [b"null"] * len(jl) if f.answers is None else list(map(_encode, take(f.answers)))
        references = [b"null"] * len(jl) if f.references is None else list(map(_encode, take(f.references)))
        cells = _cells(state, start, stop)
    except (UnicodeEncodeError, TypeError, ValueError):
        return None
    flags = lp.flags[start:stop].tolist()
    findings = _findings(state, start, flags, js, label_at, label_starts, label_codes)
    label_sets = state.label_sets
    rs, ls = ranked_starts.tolist(), missing_starts
    out = [_RECORD % (sids[n], questions_json[n], shorts[n], cells[n], label_sets[flags[n]],
                      b",".join(ranked[rs[n]:rs[n + 1]]), marks[rs[n]:rs[n + 1]],
                      b",".join(missing_ids[ls[n]:ls[n + 1]]), answers[n], references[n], findings[n])
           for n in range(len(jl))]
    return b"[" + b",".join(out) + b"]"


def _spans(starts: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions of ``rows``' items (row r's are ``starts[r]:starts[r + 1]``), end to end, and
    where each row's begin among them (and the end of the last)."""
    a, b = starts[rows], starts[rows + 1]
    lengths = b - a
    local = np.concatenate(([0], np.cumsum(lengths)))
    if len(rows) and (a[1:] == b[:-1]).all():  # the rows lie end to end in the file: one slice
        return np.arange(a[0], b[-1], dtype=np.int64), local
    return np.repeat(a - local[:-1], lengths) + np.arange(local[-1], dtype=np.int64), local


def _cells(state: PageJson, start: int, stop: int) -> list[bytes]:
    """Each row's cells' encoding: its values where every cell is scored, else its record's cells."""
    if state.values is None or state.scored is None:
        return [b"[]"] * (stop - start)
    out = list(map(_encode, state.values[start:stop].tolist()))
    for n in np.flatnonzero(~state.scored[start:stop]).tolist():
        out[n] = _encode(state.pages.cells(start + n))
    return out


def _findings(state: PageJson, start: int, flags: list[int], js: np.ndarray, label_at: np.ndarray,
              label_starts: np.ndarray, label_codes: np.ndarray) -> list[bytes]:
    """Each row's findings' encoding, as :meth:`LabelPages._findings` words them: per set of labels
    its rows, per label their findings, joined row by row."""
    lp = state.pages
    out = [b"[]"] * len(flags)
    bits = lp.flags[start:start + len(flags)]
    combos = np.unique(bits[bits != 0]).tolist()
    if not combos:
        return out
    relevant = lp.file.columns.grades[label_at] >= 1
    ids = {"missed_top_ranked": (relevant, np.concatenate(([0], np.cumsum(relevant)))[label_starts].tolist()),
           "missing_chunk": (lp.gone[label_at], None)}
    spans: dict[str, tuple[list[bytes], list[int]]] = {}
    for name, (held, cum) in ids.items():
        if name in lp.names:
            cum = np.concatenate(([0], np.cumsum(held)))[label_starts].tolist() if cum is None else cum
            spans[name] = (state.inner_tokens(label_codes[held]), cum)
    recall, ndcg = lp.roles["recall"][start:start + len(flags)].tolist(), lp.roles["ndcg"][start:start + len(flags)]
    first = lp.first[js].tolist()
    ndcg_list = ndcg.tolist()
    for combo in combos:
        rows = np.flatnonzero(bits == combo).tolist()
        parts = []
        for b, name in enumerate(lp.names):
            if not combo >> b & 1:
                continue
            head, tail = state.items[name]
            if name == "missing_content":
                parts.append([head + tail] * len(rows))
            elif name == "buried":
                plain, with_ndcg = state.buried
                parts.append([with_ndcg % (first[n], d) if (d := ndcg_list[n]) == d and d != 0 else plain % first[n]
                              for n in rows])
            else:
                found, cum = spans[name]
                if name == "missing_chunk":
                    parts.append([b"%b%.3f: %b%b" % (head, recall[n], b", ".join(found[cum[n]:cum[n + 1]]), tail)
                                  for n in rows])
                else:
                    parts.append([head + b", ".join(found[cum[n]:cum[n + 1]]) + tail for n in rows])
        for n, made in zip(rows, parts[0] if len(parts) == 1 else map(b",".join, zip(*parts))):
            out[n] = b"[" + made + b"]"
    return out
