"""BEIR's dataset layout (Thakur et al. 2021; ``beir.datasets.data_loader.GenericDataLoader``):

    DIR/corpus.jsonl        {"_id": "doc1", "title": "...", "text": "...", "metadata": {...}}
    DIR/queries.jsonl       {"_id": "q1", "text": "...", "metadata": {...}}
    DIR/qrels/<split>.tsv   query-id<TAB>corpus-id<TAB>score, after one header line

As BEIR's loader does: the header line of a qrels file is skipped (only when it is not a
judgment: BEIR drops the first line whatever it holds), scores are integers, and
only queries with judgments in the split are kept. A document's text is its title and text
joined by one space, what BEIR's dense and lexical retrievers index
(``(doc["title"] + " " + doc["text"]).strip()``). A run, when given, is a TREC run file. A
line nested too deep to read is a located error; a document id that appears twice is refused
at import, naming both lines (:func:`ragmeter.io.collections.collection.write_collection`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from ragmeter.core.errors import InvalidInputError
from ragmeter.io.collections.collection import Collection, iter_lines
from ragmeter.io.collections.trec import read_trec_run
from ragmeter.io.numbers import whole_number


def _records(path: Path) -> Iterator[tuple[int, dict]]:
    for line, text in iter_lines(path):
        try:
            row = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"not valid JSON ({exc.msg} at column {exc.colno})", file=str(path),
                                    line=line) from None
        except RecursionError:
            raise InvalidInputError("not valid JSON (nested too deep to read)", file=str(path), line=line) from None
        if not isinstance(row, dict):
            raise InvalidInputError("each line must be a JSON object", file=str(path), line=line)
        rid = row.get("_id")
        if isinstance(rid, int) and not isinstance(rid, bool):
            rid = str(rid)
        if not isinstance(rid, str) or not rid:
            raise InvalidInputError('missing or non-string "_id"', file=str(path), line=line, field="_id")
        row["_id"] = rid
        yield line, row


def _corpus(path: Path) -> Iterator[tuple[str, str, int | None]]:
    for line, row in _records(path):
        title, text = row.get("title") or "", row.get("text")
        if not isinstance(text, str) or not isinstance(title, str):
            raise InvalidInputError('"title" and "text" must be strings', file=str(path), line=line,
                                    record=row["_id"], field="text")
        yield row["_id"], (title + " " + text).strip(), line


def read_beir_qrels(path: Path) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    first = True
    for line, text in iter_lines(path):
        fields = text.split("\t")
        if first:
            first = False
            if len(fields) != 3 or not fields[2].strip().lstrip("-").isdigit():
                continue  # the header line (BEIR's loader skips the first line; a file without one keeps it)
        if len(fields) != 3:
            raise InvalidInputError(f"expected query-id<TAB>corpus-id<TAB>score, got {len(fields)} fields",
                                    file=str(path), line=line)
        qid, doc, score = (f.strip() for f in fields)
        grade = whole_number(score)
        if grade is None:
            raise InvalidInputError(f"score {score[:40]!r} is not an integer of at most 64 bits", file=str(path),
                                    line=line, record=qid, field="score") from None
        judged = out.setdefault(qid, {})
        if doc in judged:
            raise InvalidInputError(f"document {doc} is judged twice for query {qid}", file=str(path), line=line,
                                    record=qid)
        judged[doc] = float(grade)
    return out


def load_beir(folder: str | Path, split: str = "test", *, run: str | Path | None = None) -> Collection:
    root = Path(folder)
    corpus, queries, qrels = root / "corpus.jsonl", root / "queries.jsonl", root / "qrels" / f"{split}.tsv"
    for p in (corpus, queries):
        if not p.is_file():
            raise InvalidInputError("not found", file=str(p), fix="give a folder in BEIR's layout (corpus.jsonl, "
                                                                  "queries.jsonl, qrels/<split>.tsv)")
    if not qrels.is_file():
        splits = sorted(p.stem for p in (root / "qrels").glob("*.tsv")) if (root / "qrels").is_dir() else []
        raise InvalidInputError(f"no judgments for split {split!r}", file=str(qrels),
                                fix=f"choose one of {', '.join(splits)}" if splits else "add qrels/<split>.tsv")
    texts: dict[str, str] = {}
    for line, row in _records(queries):
        if not isinstance(row.get("text"), str):
            raise InvalidInputError('"text" must be a string', file=str(queries), line=line, record=row["_id"])
        if row["_id"] in texts:
            raise InvalidInputError("query id appears twice", file=str(queries), line=line, record=row["_id"])
        texts[row["_id"]] = row["text"]
    return Collection(name=f"BEIR {root.name} ({split})", queries=texts, qrels=read_beir_qrels(qrels),
                      corpus=lambda: _corpus(corpus), run=read_trec_run(run) if run is not None else None,
                      corpus_file=str(corpus))
