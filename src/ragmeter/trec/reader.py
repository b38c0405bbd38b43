"""TREC qrels and run files, read into columns exactly as trec_eval 10.0 reads them.

- qrels (``get_qrels.c``): ``qid iter docno rel``, exactly four whitespace-separated fields
  (a fifth field, or a blank line, is a malformed line: trec_eval exits 2). A line that
  *starts* with ``#`` is a comment, but the line right after a comment is always read as a
  judgment (trec_eval skips one line per ``#``): two comment lines in a row are malformed.
  ``rel`` is an integer; < 0 means "in the pool but unjudged".
- run (``get_trec_results.c``): ``qid Q0 docno rank score runid``; ``Q0`` and ``rank`` are
  ignored, fields past the sixth too; blank lines and lines whose first non-blank character
  is ``#`` are skipped. The run id is the *last* line's (trec_eval keeps overwriting it).

Whitespace is C's ``isspace`` (space, tab, CR, LF, VT, FF), never Unicode's. ragmeter
refuses, where trec_eval reads a number's leading digits (``atol``/``atof``), a relevance that
is not an integer and a score that is not a number (or is NaN): a silent 0 is no score.
Clean files take a multi-threaded Arrow CSV fast path; anything else takes an exact
line-by-line path, and every malformed line is an error naming the file, line and field.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass
from pathlib import Path

from ragmeter.trec.needs_arrow import require_arrow

require_arrow("read_qrels and read_run read with Arrow")

import pyarrow as pa  # noqa: E402 - after the check that names the extra
import pyarrow.compute as pc  # noqa: E402
import pyarrow.csv as pcsv  # noqa: E402

from ragmeter.trec.errors import TrecInputError  # noqa: E402
from ragmeter.trec.lines import existing, last_runid, qrels_rows, run_lines, run_rows  # noqa: E402

__all__ = ["Qrels", "TrecRun", "last_runid", "read_qrels", "read_run", "run_lines", "run_rows"]

_BLOCK = 1 << 22  # 4 MB: measured faster than 1, 2, 8 and 16 MB on a 350 MB run (less fresh memory in flight)
# bytes the fast path must not see: comment lines, and whitespace trec_eval splits on but a
# one-separator CSV reader does not (CR alone is a line break to Arrow, a blank to trec_eval)
_AWKWARD = (b"\t", b"\n#", b"\r", b"\x0b", b"\x0c")


@dataclass(frozen=True)
class Qrels:
    """Judgments as columns: qid, docno (strings), rel (int64). A document judged twice for
    one topic is refused when the qrels are aligned with a run (it costs nothing there)."""

    table: pa.Table
    source: str = "qrels"

    @property
    def topic_array(self) -> pa.Array:
        """Qrels topics in byte order (trec_eval's output order; Arrow compares strings as bytes)."""
        unique = pc.unique(self.table["qid"])
        return unique.take(pc.array_sort_indices(unique))

    @property
    def topics(self) -> list[str]:
        return self.topic_array.to_pylist()


@dataclass(frozen=True)
class TrecRun:
    """A ranking as columns: qid, docno (strings), score (float64), plus the run id."""

    table: pa.Table
    runid: str
    source: str = "run"


def file_contains(path: str, needles: tuple[bytes, ...]) -> dict[bytes, bool]:
    """Which of ``needles`` the file holds, scanning memory-mapped windows. A needle's rare
    byte is looked for first: a one-byte search is a memchr scan (~0.03 s for 350 MB), ten
    times faster than a two-byte one."""
    found = dict.fromkeys(needles, False)
    size = os.path.getsize(path)
    overlap = max(len(n) for n in needles) - 1  # a needle across a window boundary is still seen
    with open(path, "rb") as f:
        for start in range(0, size, _WINDOW):
            length = min(_WINDOW + overlap, size - start)
            with mmap.mmap(f.fileno(), length, access=mmap.ACCESS_READ, offset=start) as mm:
                for needle in needles:
                    if not found[needle]:
                        rare = needle[-1:] if needle.startswith(b"\n") else needle[:1]
                        found[needle] = mm.find(rare) >= 0 and (len(needle) == 1 or mm.find(needle) >= 0)
            if all(found.values()):
                break
    return found


_WINDOW = 1 << 24  # bytes mapped at a time: the scan adds at most this much to resident memory


def _lone_cr(path: str) -> bool:
    """Whether some CR is not the first half of a CRLF (Arrow breaks the line there), counted
    window by window (a CRLF file has one CR per line: no per-CR Python loop)."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        for start in range(0, size, _WINDOW):
            f.seek(start)
            block = f.read(_WINDOW + 1)  # one byte more: a CRLF across the boundary
            if block.count(b"\r", 0, _WINDOW) != block.count(b"\r\n"):
                return True
    return False


def clean_delimiter(path: str) -> str | None:
    """The single separator of a file the fast path can read as trec_eval does: tab when the
    first line has one (spaces inside fields are checked after reading), space when the file
    has no tab; None for comments, a byte-order mark, vertical tabs or form feeds, or a CR that
    is not part of a CRLF."""
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    if not head.strip() or head.startswith((b"\xef\xbb\xbf", b"#")):
        return None
    first = head.split(b"\n", 1)[0].rstrip(b"\r")
    found = file_contains(path, _AWKWARD)
    if found[b"\n#"] or found[b"\x0b"] or found[b"\x0c"] or (found[b"\r"] and _lone_cr(path)):
        return None
    if b"\t" in first:
        return "\t"  # spaces inside the fields are checked after reading (trec_eval splits on them)
    return " " if not found[b"\t"] else None


RUN_NAMES = ["qid", "q0", "docno", "rank", "score", "runid"]
RUN_TYPES = {"qid": pa.string(), "q0": pa.string(), "docno": pa.string(), "rank": pa.string(),
             "score": pa.float64(), "runid": pa.string()}
RUN_KEEP = ["qid", "docno", "score"]


def parse_clean(source, delim: str, names: list[str], keep: list[str], types: dict, *, blank_lines_ok: bool,
                block_size: int = _BLOCK, use_threads: bool = True) -> pa.Table | None:
    """``keep`` columns of clean CSV text (a path or a buffer) with one separator, or None when
    Arrow cannot read it as trec_eval would. With tabs, every text field before the last one
    kept is checked for spaces: trec_eval would split there."""
    last = max(names.index(k) for k in keep)
    spaced = [n for n in names[:last] if types[n] == pa.string()] if delim == "\t" else []
    try:
        table = pcsv.read_csv(
            source,
            read_options=pcsv.ReadOptions(column_names=names, block_size=block_size, use_threads=use_threads),
            parse_options=pcsv.ParseOptions(delimiter=delim, quote_char=False, escape_char=False,
                                            newlines_in_values=False, ignore_empty_lines=blank_lines_ok),
            convert_options=pcsv.ConvertOptions(column_types=types, include_columns=sorted(set(keep) | set(spaced),
                                                                                           key=names.index),
                                                strings_can_be_null=False, quoted_strings_can_be_null=False,
                                                null_values=[]),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, UnicodeDecodeError):
        return None  # not a clean file: the exact path reports the precise line
    for name in spaced:
        if pc.any(pc.match_substring(table[name], " ")).as_py():
            return None
    return table.select(keep)


def _fast(path: str, names: list[str], keep: list[str], types: dict, *, blank_lines_ok: bool) -> pa.Table | None:
    delim = clean_delimiter(path)
    if delim is None:
        return None
    return parse_clean(path, delim, names, keep, types, blank_lines_ok=blank_lines_ok)


def read_qrels(path: str | Path) -> Qrels:
    """Read a qrels file (``qid iter docno rel``)."""
    path = existing(path)
    table = _fast(path, ["qid", "iter", "docno", "rel"], ["qid", "docno", "rel"],
                  {"qid": pa.string(), "iter": pa.string(), "docno": pa.string(), "rel": pa.int64()},
                  blank_lines_ok=False)
    if table is None:
        qids, _, docs, rels = qrels_rows(path)
        table = pa.table({"qid": pa.array(qids, pa.string()), "docno": pa.array(docs, pa.string()),
                          "rel": pa.array(rels, pa.int64())})
    if table.num_rows == 0:
        raise TrecInputError("the qrels file has no judgments", file=path)
    return Qrels(table, path)


def read_run(path: str | Path) -> TrecRun:
    """Read a run file (``qid Q0 docno rank score runid``)."""
    path = existing(path)
    table = _fast(path, RUN_NAMES, RUN_KEEP, RUN_TYPES, blank_lines_ok=True)
    if table is not None and not pc.any(pc.is_nan(table["score"])).as_py():
        runid = last_runid(path)
    else:
        table, runid = _slow_run(path)  # also the path that names the line of a NaN score
    if table.num_rows == 0:
        raise TrecInputError("the run file has no results", file=path)
    return TrecRun(table, runid, path)


def _slow_run(path: str) -> tuple[pa.Table, str]:
    """The exact line-by-line reader: any whitespace, comments, fields past the sixth."""
    qids: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    runid = b""
    for qid, doc, score, runid in run_rows(run_lines(path), path):  # noqa: B007 (the last row's run id is returned)
        qids.append(qid)
        docs.append(doc)
        scores.append(score)
    table = pa.table({"qid": pa.array(qids, pa.string()), "docno": pa.array(docs, pa.string()),
                      "score": pa.array(scores, pa.float64())})
    return table, runid.decode("utf-8", "replace")
