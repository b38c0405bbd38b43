"""Every shape a dataset arrives in, read into ``(position, record dict)`` pairs.

Files (by extension): ``.jsonl`` / ``.ndjson`` (one object per line), ``.json`` (a JSON
array of objects, an object whose ``"results"`` holds them (RAGChecker's ``checking_inputs.json``),
one object, or JSON Lines), ``.csv``, ``.parquet``. In memory: a list (or any
iterable) of dicts, of Ragas or DeepEval sample objects (any object with their attribute
names), a pandas ``DataFrame``, a Hugging Face ``datasets.Dataset``, a Ragas
``EvaluationDataset`` (``.samples``) or a DeepEval ``EvaluationDataset`` (``.test_cases``).
pandas, pyarrow and ``datasets`` are never imported here unless the data is theirs.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmeter.core.errors import InvalidInputError, UnsupportedInputError
from ragmeter.io.csv_table import iter_csv
from ragmeter.io.formats.base import FIELDS
from ragmeter.io.formats.registry import ACCEPTED, ALIASES, CONTEXTS, HOLDERS
from ragmeter.io.jsonl import iter_jsonl
from ragmeter.io.text import read_text

FILE_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".parquet")
#: Attribute names read from a sample object (Ragas ``SingleTurnSample``, DeepEval ``LLMTestCase``, ...).
OBJECT_FIELDS = tuple(dict.fromkeys((*FIELDS, *ALIASES, *CONTEXTS)))
_QUESTION_NAMES = ("question", *(name for name, field in ALIASES.items() if field == "question"))


@dataclass(frozen=True)
class Records:
    """Decoded records of one source. ``label`` names it in errors (the file, or the kind of
    object); ``unit`` says what the numbers count (``line`` of a file, ``row`` of a table);
    ``path`` is the file read, if any."""

    rows: list[tuple[int, Any]]
    label: str
    unit: str
    path: str | None


def read_records(data: Any, *, argument: str = "data") -> Records:
    """The records in ``data`` (see the module docstring); anything else is an
    :class:`~ragmeter.core.errors.UnsupportedInputError` naming ``argument``."""
    if isinstance(data, (str, os.PathLike)):
        path = str(os.fspath(data))
        rows, unit = _file_rows(path)
        return Records(rows, path, unit, path)
    kind = _kind(data)
    if kind == "pandas":
        if not hasattr(data, "columns"):
            raise UnsupportedInputError(argument, data, ACCEPTED)
        rows = data.to_dict(orient="records")
        return Records(_numbered(_plain(r) for r in rows), "DataFrame", "row", None)
    if kind == "datasets":
        if not hasattr(data, "to_list"):  # a DatasetDict
            raise InvalidInputError(f"{argument}: a datasets.DatasetDict holds several splits",
                                    fix=f"pass one split, e.g. {argument}['test']")
        return Records(_numbered(_plain(r) for r in data.to_list()), "datasets.Dataset", "row", None)
    if isinstance(data, Mapping):
        raise InvalidInputError(f"{argument}: got one dict", fix="pass a list of dicts (one per sample), "
                                "or a DataFrame for a table of columns")
    for attr, label in HOLDERS.items():
        inner = getattr(data, attr, None)
        if isinstance(inner, (list, tuple)) and not isinstance(data, (list, tuple)):
            return Records(_numbered(_record(x, argument) for x in inner), label, "row", None)
    if isinstance(data, (bytes, bytearray)) or not isinstance(data, Iterable):
        raise UnsupportedInputError(argument, data, ACCEPTED)
    items = list(data)
    return Records(_numbered(_record(x, argument) for x in items), _list_label(items), "row", None)


def _kind(data: Any) -> str:
    return type(data).__module__.split(".")[0]


def _numbered(rows: Iterable[Any]) -> list[tuple[int, Any]]:
    return list(enumerate(rows, start=1))


def _list_label(items: list[Any]) -> str:
    if items and all(isinstance(x, Mapping) for x in items):
        return "list of dicts"
    return "list of test cases" if items else "empty list"


def _record(item: Any, argument: str) -> Any:
    """A dict, or the fields of a sample object read by their attribute names. A conversation
    object (DeepEval ``ConversationalTestCase``: ``turns``; Ragas ``MultiTurnSample``: a list
    ``user_input``) is read whole (pydantic's ``model_dump``, else its public attributes); a
    DeepEval conversation's ``name`` is its id."""
    if isinstance(item, Mapping):
        return _plain(dict(item), arrow=False)
    if isinstance(getattr(item, "turns", None), list) or isinstance(getattr(item, "user_input", None), list):
        dump = getattr(item, "model_dump", None)
        fields = dump() if callable(dump) else {k: v for k, v in vars(item).items() if not k.startswith("_")}
        if isinstance(getattr(item, "turns", None), list) and fields.get("id") is None \
                and fields.get("name") is not None:
            fields["id"] = fields.pop("name")
        return _plain(fields, arrow=False)
    if not any(getattr(item, n, None) is not None for n in _QUESTION_NAMES) \
            and not any(getattr(item, n, None) is not None for n in ("retrieved", "retrieved_contexts",
                                                                     "retrieval_context", "id")):
        raise UnsupportedInputError(f"{argument} item", item, ACCEPTED)
    out = {n: getattr(item, n) for n in OBJECT_FIELDS if getattr(item, n, None) is not None}
    extra = getattr(item, "additional_metadata", None)  # DeepEval
    if isinstance(extra, Mapping):
        out["metadata"] = {**dict(extra), **dict(out.get("metadata") or {})}
    return _plain(out, arrow=False)


def _plain(value: Any, *, arrow: bool = True, top: bool = True) -> Any:
    """Plain Python values: numpy arrays and scalars (from pandas, parquet, Arrow) to lists and
    numbers, tuples to lists. A missing cell (None, NaN, pandas NA) leaves its key out. Inside
    a cell, ``arrow``: a None in an object is a key Arrow added to unify the rows' objects
    (``{"a": 2}`` and ``{"b": 1}`` become one struct), so it is left out too; data that never
    went through Arrow (a list of dicts) keeps its inner values as written."""
    if isinstance(value, Mapping):
        drop = top or arrow
        return {str(k): _plain(v, arrow=arrow, top=False) for k, v in value.items() if not (drop and _missing(v))}
    if isinstance(value, (list, tuple)):
        return [_plain(v, arrow=arrow, top=False) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):  # a pydantic object (a Ragas message, a DeepEval turn)
        return _plain(dump(), arrow=arrow, top=True)
    tolist = getattr(value, "tolist", None)
    if tolist is not None and not isinstance(value, (str, bytes)):  # numpy arrays and scalars
        return _plain(tolist(), arrow=arrow, top=False)
    return value


def _missing(value: Any) -> bool:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    return type(value).__name__ in ("NAType", "NaTType")


def _file_rows(path: str) -> tuple[list[tuple[int, Any]], str]:
    """The records and what their numbers count: a line of a JSONL or CSV file, or a row
    (an object of a JSON array, a row of a parquet table)."""
    suffix = Path(path).suffix.lower()
    if Path(path).is_dir():  # not "unknown format '(no extension)'"
        raise InvalidInputError("is a folder, not a dataset file", file=path,
                                fix="give a .jsonl, .json, .csv or .parquet file (a BEIR or MS MARCO folder goes "
                                    "to `ragmeter import`)")
    if suffix in (".jsonl", ".ndjson"):
        return list(iter_jsonl(path)), "line"
    if suffix == ".json":
        text = read_text(path)
        if text.lstrip().startswith("["):
            return _json_array(path, text), "row"
        whole = _json_object(text)
        if isinstance(whole, dict) and isinstance(whole.get("results"), list):  # RAGChecker: {"results": [...]}
            if not whole["results"]:
                raise InvalidInputError('"results" is empty', file=path, fix="give at least one record")
            return _numbered(whole["results"]), "row"
        if isinstance(whole, dict) and "\n" in text.strip():  # one object written over several lines
            return [(1, whole)], "line"
        return list(iter_jsonl(path)), "line"
    if suffix == ".csv":
        return list(iter_csv(path, required=())), "line"
    if suffix == ".parquet":
        return _parquet(path), "row"
    raise InvalidInputError(f"unknown dataset format {suffix or '(no extension)'!r}", file=path,
                            fix="use .jsonl, .json, .csv or .parquet (TREC files go to `ragmeter trec QRELS RUN`)")


def _json_object(text: str) -> Any:
    """The file as one JSON document, or None when it is not one (JSON Lines, or broken: the
    line reader then names the line)."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError, ValueError):
        return None


def _json_array(path: str, text: str) -> list[tuple[int, Any]]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})", file=path,
                                line=exc.lineno, fix="write one JSON array of objects, or one object per line (.jsonl)"
                                ) from None
    except RecursionError:  # "[" x 100,000: a traceback before
        raise InvalidInputError("not valid JSON (nested too deep to read)", file=path,
                                fix="write one JSON array of objects, or one object per line (.jsonl)") from None
    if not isinstance(value, list):
        raise InvalidInputError("a .json dataset must be an array of objects", file=path)
    if not value:
        raise InvalidInputError("the file is empty", file=path, fix="give a file with at least one record")
    return _numbered(value)


def _parquet(path: str) -> list[tuple[int, Any]]:
    if not Path(path).is_file():
        raise InvalidInputError("file not found", file=path)
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InvalidInputError("reading .parquet needs pyarrow", file=path, fix="pip install pyarrow") from None
    try:
        table = pq.read_table(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises its own (ArrowInvalid, OSError) for a bad file
        raise InvalidInputError(f"not a readable parquet file ({exc})", file=path) from None
    rows = _numbered(_plain(r) for r in table.to_pylist())
    if not rows:
        raise InvalidInputError("the file is empty", file=path, fix="give a file with at least one record")
    return rows
