"""TREC files read line by line, exactly as trec_eval 10.0 reads them, without Arrow or numpy.

The exact readers behind :mod:`ragmeter.trec.reader` (which adds Arrow's CSV fast path for
large clean files), and the whole reader of the small-file path (:mod:`ragmeter.trec.lean`):

- judgments (``get_qrels.c``, ``get_prefs.c``, ``get_qrels_prefs.c``, ``get_qrels_jg.c``): a
  fixed number of whitespace-separated fields (``qid iter docno rel``; prefs ``qid jg jsg
  docno rel``); a line that *starts* with ``#`` is a comment, but the line right after a comment
  is always read as a judgment (trec_eval skips one line per ``#``); a blank line is malformed.
- run (``get_trec_results.c``): ``qid Q0 docno rank score runid``; blank lines and lines whose
  first non-blank character is ``#`` are skipped; the run id is the last line's.

Whitespace is C's ``isspace`` (space, tab, CR, LF, VT, FF): ``bytes.split()``'s. ragmeter
refuses, where trec_eval reads a number's leading digits (``atol``/``atof``), a grade that is
not a number and a score that is not a number (or is NaN): a silent 0 is no score.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from ragmeter.io.numbers import INT64_MIN, whole_number
from ragmeter.io.text import read_text
from ragmeter.trec.errors import EXIT_TOPIC, TrecInputError

INTEGER = re.compile(rb"[+-]?[0-9]+")
NUMBER = re.compile(rb"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity)", re.IGNORECASE)
QRELS_LAYOUT = "qid iter docno rel"
# text the fast readers below split as C does: ASCII, no separators str.split() alone breaks on
_NOT_PLAIN = re.compile(r"[^\x00-\x1b\x20-\x7f]")
_SCORE = re.compile(NUMBER.pattern.decode(), re.IGNORECASE)


def existing(path: str | Path) -> str:
    """``path`` as a string, once it is known to be a non-empty file (else the clear error)."""
    if not Path(path).is_file():
        read_text(path)  # raises the clear "file not found" / "is a directory" error
    if os.path.getsize(path) == 0:
        raise TrecInputError("the file is empty", file=str(path))
    return str(path)


def text(field: bytes, path: str, number: int, name: str) -> str:
    try:
        return field.decode("utf-8")
    except UnicodeDecodeError:
        raise TrecInputError(f"{name} {field!r} is not valid UTF-8", file=path, line=number, field=name,
                             fix="save the file as UTF-8") from None


def parse_score(field: bytes, path: str, number: int) -> float:
    """A run score: a decimal number or inf (what C's ``atof`` reads whole); never NaN."""
    if not NUMBER.fullmatch(field):
        shown = field.decode("utf-8", "replace")
        what = "score is NaN" if shown.lower().lstrip("+-").startswith("nan") else f"score {shown!r} is not a number"
        raise TrecInputError(what, file=path, line=number, field="score",
                             fix="give every document a real score (trec_eval would read it as "
                                 f"{_atof_reading(field)})")
    return float(field)


def parse_level(field: bytes, path: str, number: int, name: str = "rel_level") -> float:
    """A preference file's relevance level: a decimal number (trec_eval's ``atof``), never NaN."""
    if not NUMBER.fullmatch(field):
        raise TrecInputError(f"{name} {field.decode('utf-8', 'replace')!r} is not a number", file=path, line=number,
                             field=name, fix="write the level as a number (trec_eval would read it as "
                                             f"{_atof_reading(field)})")
    return float(field)


def _atof_reading(field: bytes) -> str:
    head = re.match(rb"[+-]?[0-9]*\.?[0-9]*", field)
    try:
        return repr(float(head.group(0))) if head and head.group(0).strip(b"+-.") else "0.0"
    except ValueError:
        return "0.0"


def judgment_lines(path: str, fields: int = 4, layout: str = QRELS_LAYOUT) -> Iterator[tuple[int, list[bytes]]]:
    """(line number, ``fields`` fields) for every judgment, with trec_eval 10's comment rule."""
    data = Path(path).read_bytes()
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    after_comment = False
    for number, line in enumerate(lines, start=1):
        if line.startswith(b"#") and not after_comment:
            after_comment = True
            continue
        parts = line.split()
        if len(parts) != fields:
            if not parts:
                problem = "a blank line (trec_eval stops at it: Malformed line)"
            else:
                problem = f"expected {fields} fields ({layout}), got {len(parts)}"
                if len(parts) >= 6 and fields == 4:
                    problem += " (is this a run file?)"
            if after_comment and line.startswith(b"#"):
                problem += "; trec_eval 10 reads the line after a comment as a judgment, so two comment " \
                           "lines in a row are malformed"
            fix = f"one judgment per line, '{layout}' (trec_eval refuses it too)"
            if len(parts) == 3 and layout == QRELS_LAYOUT:  # BEIR's qrels/<split>.tsv: query-id corpus-id score
                header = [p.lower() for p in parts] == [b"query-id", b"corpus-id", b"score"]
                problem += (" (a BEIR qrels file: query-id, corpus-id, score, after a header line)" if header
                            else " (qid docno rel without the iter column, as BEIR's qrels .tsv files write it?)")
                fix = (f"add the iter column trec_eval reads (and drop BEIR's header): "
                       f"awk 'NR > 1 {{print $1, 0, $2, $3}}' {path} > qrels.txt (or `ragmeter import beir` "
                       "for the whole collection)")
            raise TrecInputError(problem, file=path, line=number, fix=fix)
        after_comment = False
        yield number, parts


def qrels_lines(path: str) -> Iterator[tuple[int, list[bytes]]]:
    """(line number, four fields) for every judgment of a qrels file."""
    return judgment_lines(path)


def _plain_lines(data: bytes) -> list[str] | None:
    """The file's lines as text when it is plain ASCII without comment lines (what the fast
    readers handle), else None."""
    if data.startswith(b"#") or b"\n#" in data or not data.isascii():
        return None
    text = data.decode("ascii")
    if _NOT_PLAIN.search(text):
        return None
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def _qrels_fast(data: bytes) -> tuple[list[str], list[bytes], list[str], list[int]] | None:
    """A plain qrels file's columns in one pass, or None for the exact reader to take over (and
    name the line of any problem)."""
    lines = _plain_lines(data)
    if lines is None:
        return None
    qids: list[str] = []
    docs: list[str] = []
    rels: list[int] = []
    for line in lines:
        parts = line.split()
        if len(parts) != 4:
            return None
        rel = parts[3]
        digits = rel[1:] if rel[:1] in "+-" else rel
        if not digits.isdigit() or len(digits) > 18:
            return None
        qids.append(parts[0])
        docs.append(parts[2])
        rels.append(int(rel))
    return qids, [], docs, rels


def qrels_rows(path: str, iters: bool = False) -> tuple[list[str], list[bytes], list[str], list[int]]:
    """A qrels file's columns: qid, iter (``iters=True``; as bytes: trec_eval compares it byte by
    byte, where it reads it at all), docno, rel (an integer grade, else an error)."""
    if not iters and (fast := _qrels_fast(Path(path).read_bytes())) is not None:
        return fast
    qids: list[str] = []
    iter_column: list[bytes] = []
    docs: list[str] = []
    rels: list[int] = []
    for number, parts in qrels_lines(path):
        if not INTEGER.fullmatch(parts[3]):
            raise TrecInputError(f"relevance {parts[3].decode('utf-8', 'replace')!r} is not an integer",
                                 file=path, line=number, field="rel",
                                 fix="write whole-number grades (trec_eval would read the leading digits)")
        qids.append(text(parts[0], path, number, "qid"))
        if iters:
            iter_column.append(parts[1])
        docs.append(text(parts[2], path, number, "docno"))
        rels.append(grade(parts[3], path, number))
    return qids, iter_column, docs, rels


def grade(field: bytes, path: str, number: int) -> int:
    """A qrels grade as trec_eval's ``atol`` keeps it in a ``long``: one below the 64-bit range
    saturates (still a judged non-relevant document); one above it trec_eval cannot evaluate
    (``Can't calculate measure``, exit 4), and neither can ragmeter."""
    value = whole_number(field)
    if value is not None:
        return value
    if field.startswith(b"-"):
        return INT64_MIN
    raise TrecInputError(f"relevance grade of {len(field.lstrip(b'+0'))} digits does not fit 64 bits",
                         exit_code=EXIT_TOPIC, file=path, line=number, field="rel",
                         fix="write grades as small whole numbers (0, 1, 2, 3)")


def run_lines(path: str) -> Iterator[tuple[int, list[bytes]]]:
    """(line number, fields) for every result line, streamed (no whole-file copy)."""
    with open(path, "rb") as f:
        for number, line in enumerate(f, start=1):
            parts = line.split()
            if not parts or parts[0].startswith(b"#"):
                continue
            if len(parts) < 6:
                raise TrecInputError(f"expected 6 fields (qid Q0 docno rank score runid), got {len(parts)}",
                                     file=path, line=number, fix="trec_eval refuses this line too")
            yield number, parts


def run_rows_fast(path: str) -> tuple[list[tuple[str, str, float]], str] | None:
    """A plain run file's (qid, docno, score) rows and run id in one pass, or None for the exact
    reader to take over."""
    lines = _plain_lines(Path(path).read_bytes())
    if lines is None:
        return None
    rows = []
    runid = ""
    score = _SCORE.fullmatch
    for line in lines:
        parts = line.split()
        if not parts or parts[0][0] == "#":
            continue
        if len(parts) < 6 or not score(parts[4]):
            return None
        rows.append((parts[0], parts[2], float(parts[4])))
        runid = parts[5]
    return rows, runid


def run_rows(lines: Iterable[tuple[int, list[bytes]]], path: str) -> Iterator[tuple[str, str, float, bytes]]:
    for number, parts in lines:
        yield (text(parts[0], path, number, "qid"), text(parts[2], path, number, "docno"),
               parse_score(parts[4], path, number), parts[5])


def last_runid(path: str) -> str:
    """The sixth field of the file's last result line (trec_eval's run id)."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        tail = 1 << 16
        while True:
            f.seek(max(0, size - tail))
            chunk = f.read()
            lines = chunk.split(b"\n")
            if size > tail:
                lines = lines[1:]  # the first piece may be a partial line
            for line in reversed(lines):
                parts = line.split()
                if len(parts) >= 6 and not parts[0].startswith(b"#"):
                    return parts[5].decode("utf-8", "replace")
            if tail >= size:
                return ""
            tail *= 4
