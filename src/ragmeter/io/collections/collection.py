"""Standard test collections turned into a ragmeter dataset and corpus.

A collection is queries, a corpus, relevance judgments and, optionally, a run. The readers
(``beir.py``, ``trec.py``, ``msmarco.py`` beside this module) each build a
:class:`Collection`; :func:`write_collection` writes ``dataset.jsonl`` (one sample per
query: ``question``, ``relevant`` as chunk id -> grade, ``retrieved`` from the run in
trec_eval's order) and ``corpus.jsonl`` (``{"id", "text"}``), each atomically.

Which queries become samples (the same choice as trec_eval's, so ``ragmeter eval`` on the
result equals ``ragmeter trec`` on the files):

- without a run: every judged query (one with at least one qrels line);
- with a run: the judged queries the run answers; ``complete=True`` adds the judged queries
  the run misses, with an empty ranking (trec_eval ``-c``). Run queries with no judgments
  are left out, as trec_eval leaves them out.

Grades below 0 ("judged but unjudged", trec_eval's RELVALUE_UNJUDGED, used only by bpref)
are not written: ragmeter's metrics treat a chunk with no label as not relevant, as
trec_eval treats those documents in every measure ``ragmeter eval`` computes.

A refused file is never written: an ``--out`` folder that already holds ``dataset.jsonl`` or
``corpus.jsonl`` is refused (``force=True``, ``--force``, replaces them); both files are
written to temporary files and renamed into place only when both are complete and good, so
an error anywhere (a bad corpus line, a document id that appears twice, which ``ragmeter
eval`` would refuse) leaves the folder as it was. Duplicate ids are found while the corpus
streams, from 8 bytes a document (a hash), then named with both lines.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ragmeter.core.errors import InvalidInputError
from ragmeter.io.writer import commit, stage_text, writing


@dataclass
class Collection:
    """What a reader found; ``corpus`` is re-iterable (large corpora are streamed, not held):
    ``(doc id, text, line)`` with the line the document starts on (None where unknown), from
    ``corpus_file``."""

    name: str
    queries: dict[str, str]  # query id -> text, in file order
    qrels: dict[str, dict[str, float]]  # query id -> {doc id -> grade}
    corpus: Callable[[], Iterator[tuple[str, str, int | None]]]
    run: Mapping[str, Sequence[tuple[str, float | None]]] | None = None  # query id -> [(doc id, score)], ranked
    notes: list[str] = field(default_factory=list)
    corpus_file: str | None = None


@dataclass(frozen=True)
class Written:
    dataset: Path
    corpus: Path
    samples: int
    documents: int
    judged_without_results: int
    notes: tuple[str, ...]


def iter_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of a UTF-8 file, streamed; blank lines skipped; a bad byte names its line."""
    p = Path(path)
    if not p.is_file():
        raise InvalidInputError("file not found", file=str(path), fix="check the path")
    with open(p, "rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InvalidInputError(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})",
                                        file=str(path), line=number, fix="save the file as UTF-8") from None
            if number == 1 and line.startswith("\ufeff"):
                line = line[1:]
            line = line.rstrip("\r\n")
            if line.strip():
                yield number, line


def trec_order(rows: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """trec_eval's ranking: score descending, ties by doc id descending (byte order); the rank
    column of a run file is ignored (trec_eval 10.0, ``form_res_rels.c``)."""
    return sorted(rows, key=lambda r: (r[1], r[0].encode("utf-8")), reverse=True)


def sample_rows(c: Collection, *, complete: bool = False) -> tuple[list[dict], int]:
    """The dataset records, and how many judged queries the run left without results."""
    judged = [q for q in c.queries if c.qrels.get(q)]
    unknown = sorted(set(c.qrels) - set(c.queries))
    if unknown:
        raise InvalidInputError(f"{len(unknown)} judged query id(s) have no query text, e.g. {unknown[0]!r}",
                                fix="give the queries file that goes with these judgments")
    missing = 0
    rows = []
    for qid in judged:
        labels = {doc: grade for doc, grade in c.qrels[qid].items() if grade >= 0}
        row: dict = {"id": qid, "question": c.queries[qid], "relevant": labels}
        if c.run is not None:
            ranked = c.run.get(qid)
            if ranked is None:
                missing += 1
                if not complete:
                    continue
                ranked = ()
            row["retrieved"] = [{"id": doc, "score": score} if score is not None else doc for doc, score in ranked]
        rows.append(row)
    return rows, missing


def write_collection(c: Collection, out_dir: str | Path, *, complete: bool = False, force: bool = False) -> Written:
    """Write ``out_dir/dataset.jsonl`` and ``out_dir/corpus.jsonl``, both or neither (see the
    module docstring); files already there are refused unless ``force``."""
    out = Path(out_dir)
    dataset, corpus = out / "dataset.jsonl", out / "corpus.jsonl"
    if not force:
        for path in (dataset, corpus):
            if path.exists() or path.is_symlink():
                raise InvalidInputError(f"the output folder already holds {path.name}; it is not overwritten",
                                        file=str(path), fix="give another --out, or add --force to replace it")
    rows, missing = sample_rows(c, complete=complete)
    if not rows:
        raise InvalidInputError(f"{c.name}: no judged query to write" + (" that the run answers" if c.run else ""),
                                fix="check that the query ids of the queries, judgments and run files match")
    with writing(out, what="output folder", option="--out"):
        out.mkdir(parents=True, exist_ok=True)
    ids = _IdHashes()
    staged: list[tuple[Path, Path]] = []
    try:
        with writing(dataset, what="dataset", option="--out"):
            staged.append((stage_text(dataset, (json.dumps(r, ensure_ascii=False) + "\n" for r in rows)), dataset))
        with writing(corpus, what="corpus", option="--out"):
            staged.append((stage_text(corpus, (json.dumps({"id": doc, "text": text}, ensure_ascii=False) + "\n"
                                               for doc, text, _ in ids.seen(c.corpus()))), corpus))
        if not ids.count and c.corpus_file is not None:  # a collection file given, and nothing in it
            raise InvalidInputError("no document found", file=c.corpus_file,
                                    fix="give the collection's documents (ragmeter eval refuses an empty corpus)")
        ids.refuse_duplicates(c)
        with writing(out, what="output folder", option="--out"):
            commit(staged)
    finally:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
    notes = list(c.notes)
    if missing:
        notes.append(f"{missing} judged quer{'y has' if missing == 1 else 'ies have'} no results in the run: "
                     + ("written with an empty ranking (as trec_eval -c)" if complete
                        else "left out (as trec_eval without -c; --complete keeps them)"))
    return Written(dataset, corpus, len(rows), ids.count, missing, tuple(notes))


class _IdHashes:
    """The documents' ids as 64-bit hashes while the corpus streams (8 bytes each, where a set of
    8.8M strings holds most of a GB); a repeated hash is then checked by a second pass, which
    names both lines (a hash collision of two different ids is no error)."""

    def __init__(self) -> None:
        self.hashes = array("q")

    @property
    def count(self) -> int:
        return len(self.hashes)

    def seen(self, docs: Iterator[tuple[str, str, int | None]]) -> Iterator[tuple[str, str, int | None]]:
        for doc in docs:
            self.hashes.append(hash(doc[0]))
            yield doc

    def refuse_duplicates(self, c: Collection) -> None:
        import numpy as np

        values = np.frombuffer(self.hashes, dtype=np.int64) if self.hashes else np.zeros(0, dtype=np.int64)
        ordered = np.sort(values)
        repeated = set(ordered[1:][ordered[1:] == ordered[:-1]].tolist())
        if not repeated:
            return
        first: dict[str, int] = {}
        for number, (doc, _, line) in enumerate(c.corpus(), start=1):
            if hash(doc) not in repeated:
                continue
            if doc in first:
                where = f"lines {first[doc]} and {line}" if line is not None else \
                    f"documents {first[doc]} and {number} of the file"
                raise InvalidInputError(f"document id {doc!r} appears twice ({where}); ragmeter eval would refuse "
                                        f"the corpus, so nothing was written", file=c.corpus_file, line=line,
                                        record=doc, fix="keep one document per id")
            first[doc] = line if line is not None else number
