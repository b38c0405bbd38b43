"""MS MARCO's TSV files (Bajaj et al. 2016; microsoft/MSMARCO-Passage-Ranking):

- collection: ``pid<TAB>passage`` (passage ranking) or ``docid<TAB>url<TAB>title<TAB>body``
  (document ranking; the text is title and body joined by one space), told apart by the
  shape of the file's first lines (:func:`is_documents`), so a passage holding tabs keeps
  its text;
- queries: ``qid<TAB>query``;
- qrels: ``qid 0 pid 1`` (TREC format, tab- or space-separated);
- run (optional): ``qid<TAB>pid<TAB>rank`` (the format ``msmarco_eval.py`` reads), ordered by
  rank, or a 6-column TREC run, ordered as trec_eval orders it.

The collection is streamed from disk when the corpus is written (8.8M passages are never
held in memory); only judged queries become samples.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from ragmeter.core.errors import InvalidInputError
from ragmeter.io.collections.collection import Collection, iter_lines
from ragmeter.io.collections.trec import read_qrels, read_trec_run
from ragmeter.io.numbers import whole_number


def is_documents(path: str | Path) -> bool:
    """Whether the file is the document collection (``docid<TAB>url<TAB>title<TAB>body``): its
    first line has four fields or more with a URL second (then every line must). Otherwise it
    is the passage collection, ``pid<TAB>passage``, whose passage may itself hold tabs: the
    file's shape decides, never each line's number of fields (a passage with three tabs is not a
    document, and its text is kept whole)."""
    for _, text in iter_lines(path):
        fields = text.split("\t")
        return len(fields) >= 4 and fields[1].strip().lower().startswith(("http://", "https://"))
    return False


def iter_collection(path: str | Path) -> Iterator[tuple[str, str, int | None]]:
    documents = is_documents(path)
    for line, text in iter_lines(path):
        if documents:
            fields = text.split("\t")
            if len(fields) < 4:
                raise InvalidInputError(f"expected docid<TAB>url<TAB>title<TAB>body (the shape of the file's first "
                                        f"line), got {len(fields)} fields", file=str(path), line=line)
            body = "\t".join(fields[3:])
            pid, passage = fields[0], f"{fields[2]} {body}".strip()
        else:
            pid, sep, passage = text.partition("\t")
            if not sep:
                raise InvalidInputError("expected pid<TAB>passage (no tab on this line)", file=str(path), line=line)
        if not pid.strip():
            raise InvalidInputError("empty passage id", file=str(path), line=line)
        yield pid.strip(), passage, line


def read_queries(path: str | Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line, text in iter_lines(path):
        qid, sep, query = text.partition("\t")
        if not sep or not qid.strip():
            raise InvalidInputError("expected qid<TAB>query", file=str(path), line=line)
        qid = qid.strip()
        if qid in out:
            raise InvalidInputError("query id appears twice", file=str(path), line=line, record=qid)
        out[qid] = query.strip()
    return out


def read_msmarco_run(path: str | Path) -> Mapping[str, Sequence[tuple[str, float | None]]]:
    """``qid<TAB>pid<TAB>rank`` lines, by rank; a 6-column file is read as a TREC run."""
    first = next(iter_lines(path), None)
    if first is not None and len(first[1].split()) >= 5:
        return read_trec_run(path)
    rows: dict[str, list[tuple[int, str]]] = {}
    seen: dict[tuple[str, str], int] = {}
    for line, text in iter_lines(path):
        fields = text.split()
        if len(fields) != 3:
            raise InvalidInputError(f"expected qid<TAB>pid<TAB>rank, got {len(fields)} fields", file=str(path),
                                    line=line)
        qid, pid, rank = fields
        parsed = whole_number(rank)
        if parsed is None:
            raise InvalidInputError(f"rank {rank[:40]!r} is not an integer of at most 64 bits", file=str(path),
                                    line=line, record=qid, field="rank") from None
        r = parsed
        if (qid, pid) in seen:
            raise InvalidInputError(f"passage {pid} appears twice for query {qid} (first on line {seen[(qid, pid)]})",
                                    file=str(path), line=line, record=qid)
        seen[(qid, pid)] = line
        rows.setdefault(qid, []).append((r, pid))
    return {qid: [(pid, None) for _, pid in sorted(r, key=lambda x: x[0])] for qid, r in rows.items()}


def load_msmarco(collection: str | Path, queries: str | Path, qrels: str | Path, *,
                 run: str | Path | None = None) -> Collection:
    return Collection(name=f"MS MARCO {Path(queries).name}", queries=read_queries(queries), qrels=read_qrels(qrels),
                      corpus=lambda: iter_collection(collection),
                      run=read_msmarco_run(run) if run is not None else None, corpus_file=str(collection))
