"""Corpus files: chunk id -> text, as JSONL (``{"id": ..., "text": ...}``) or CSV (``id,text``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.sample import Sample
from ragmeter.io.csv_table import iter_csv
from ragmeter.io.jsonl import iter_jsonl


def load_corpus(path: str | Path) -> dict[str, str]:
    """Read a corpus; a missing id or text, or a repeated id, is an error naming the line."""
    path = str(path)
    rows = iter_csv(path, required=("id", "text")) if path.lower().endswith(".csv") else iter_jsonl(path)
    corpus: dict[str, str] = {}
    first_line: dict[str, int] = {}
    for line, row in rows:
        if not isinstance(row, dict):
            raise InvalidInputError("each record must be an object with id and text", file=path, line=line)
        cid, text = row.get("id"), row.get("text")
        if isinstance(cid, int) and not isinstance(cid, bool):
            cid = str(cid)
        if not isinstance(cid, str) or not cid:
            raise InvalidInputError("missing or non-string chunk id", file=path, line=line, field="id",
                                    fix='write {"id": "chunk-1", "text": "..."}')
        if not isinstance(text, str):
            raise InvalidInputError("missing or non-string text", file=path, line=line, record=cid, field="text")
        if cid in corpus:
            raise InvalidInputError(f"duplicate chunk id (first on line {first_line[cid]})", file=path,
                                    line=line, record=cid, field="id")
        corpus[cid] = text
        first_line[cid] = line
    return corpus


def attach_texts(samples: list[Sample], corpus: Mapping[str, str]) -> list[Sample]:
    """Return new samples whose retrieved chunks take their text from the corpus when they have none."""
    out = []
    for s in samples:
        chunks = tuple(c if c.text is not None or c.id not in corpus else dataclasses.replace(c, text=corpus[c.id])
                       for c in s.retrieved)
        out.append(dataclasses.replace(s, retrieved=chunks))
    return out
