"""CSV reader for datasets and corpora.

List cells (``retrieved``, ``relevant``, ``context``) hold either JSON (``["a", "b"]``,
``{"a": 2}``) or ids separated by ``|`` (``a|b``). Cells of text lists (Ragas'
``retrieved_contexts``, DeepEval's ``retrieval_context``, ...) hold JSON, or the Python list
literal pandas writes (``['first text', 'second text']``, read with ``ast.literal_eval``,
never ``eval``). Empty cells are missing values.
"""

from __future__ import annotations

import ast
import csv
import io
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.io.json_text import decode_json
from ragmeter.io.text import read_text

LIST_COLUMNS = {"retrieved", "relevant", "context", "retrieved_ids", "relevant_ids", "context_ids", "labels",
                "retrieved_context_ids", "reference_context_ids"}
TEXT_LIST_COLUMNS = {"retrieved_contexts", "reference_contexts", "contexts", "retrieval_context", "ground_truths",
                     "reference_claims", "answer_claims"}
JSON_COLUMNS = {"metadata"}
BOOL_COLUMNS = {"answerable"}
_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}


def iter_csv(path: str | Path, *, required: tuple[str, ...] = ("id",)) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, record)``, decoding list, boolean and JSON cells."""
    text = read_text(path)
    _allow_cells_up_to(len(text))
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader)
    except csv.Error as exc:
        raise InvalidInputError(f"not valid CSV ({exc})", file=str(path), line=1) from None
    header = [h.strip() for h in header]
    missing = [r for r in required if r not in header]
    if missing:
        raise InvalidInputError(f"the header has no {', '.join(repr(m) for m in missing)} column",
                                file=str(path), line=1, fix=f"name the columns, e.g. {','.join(required)}")
    dupes = {h for h in header if header.count(h) > 1}
    if dupes:
        raise InvalidInputError(f"duplicate column(s) {sorted(dupes)}", file=str(path), line=1)
    start = reader.line_num + 1
    try:
        for row in reader:
            line = start
            start = reader.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                raise InvalidInputError(f"has {len(row)} cells but the header has {len(header)}",
                                        file=str(path), line=line, fix="quote cells that contain commas")
            try:
                cells = {name: _cell(name, value, str(path), line) for name, value in zip(header, row)
                         if value.strip() != ""}
            except InvalidInputError as exc:  # the row's id, where it has one, names the record
                if exc.record is None and "id" in header and row[header.index("id")].strip():
                    raise InvalidInputError(exc.problem, file=exc.file, line=exc.line,
                                            record=row[header.index("id")].strip(), field=exc.field,
                                            fix=exc.fix) from None
                raise
            yield line, cells
    except csv.Error as exc:
        if "end of data" in str(exc):
            raise InvalidInputError("a quoted cell is never closed (the file ends inside quotes)", file=str(path),
                                    line=start, fix='close the quote; write a quote inside a quoted cell as ""') \
                from None
        raise InvalidInputError(f"not valid CSV ({exc})", file=str(path), line=reader.line_num,
                                fix='quote cells that hold commas, quotes or line breaks; double inner quotes ("")') \
            from None


def _allow_cells_up_to(size: int) -> None:
    """The csv module refuses cells over 128 KB (``field_size_limit``, one process-wide value).
    The whole file is in memory already, so a cell may be as long as the file: raise the limit
    to that, never lower it."""
    if size >= csv.field_size_limit():
        csv.field_size_limit(min(size + 1, sys.maxsize))


def _cell(name: str, value: str, file: str, line: int) -> Any:
    stripped = value.strip()
    if name in TEXT_LIST_COLUMNS:
        return _text_list(name, stripped, file, line)
    if name in LIST_COLUMNS or name in JSON_COLUMNS:
        if stripped[0] in "[{":
            try:
                return decode_json(stripped, file=file, line=line)
            except InvalidInputError as exc:
                raise InvalidInputError(f"the cell is {exc.problem}", file=file, line=line, field=name,
                                        fix='write a JSON list (["c1", "c2"]) or object ({"c1": 2}), or ids '
                                            'separated by | (c1|c2)') from None
        if name in JSON_COLUMNS:
            raise InvalidInputError("must be a JSON object", file=file, line=line, field=name)
        return [part.strip() for part in stripped.split("|") if part.strip()]
    if name in BOOL_COLUMNS:
        low = stripped.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise InvalidInputError(f"must be true or false, got {value!r}", file=file, line=line, field=name)
    return value


def _text_list(name: str, cell: str, file: str, line: int) -> list[Any]:
    """A list of texts: JSON, or a Python list literal; anything else is an error (a text
    may hold ``|`` and commas, so no separator is guessed)."""
    try:
        value = decode_json(cell, file=file, line=line)
    except InvalidInputError:
        try:
            value = ast.literal_eval(cell)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            value = None
    if not isinstance(value, list):
        raise InvalidInputError("must be a list of texts", file=file, line=line, field=name,
                                fix='write a JSON list, e.g. ["first passage", "second passage"]')
    return value
