"""TREC test collections: topics, qrels and (optionally) a run, into a :class:`Collection`.

- Topics, three layouts, recognised by their first tag:
  - classic SGML (TREC ad hoc, Robust04): ``<top> <num> Number: 301 <title> ... <desc>
    Description: ... <narr> Narrative: ... </top>`` (closing tags optional, but a file that closes
    its topics must close the last one too: one that does not is taken as cut short);
  - XML (TREC Web 2009-14, Deep Learning): ``<topic number="1"> <query>...</query>
    <description>...</description> </topic>``;
  - tab-separated ``qid<TAB>text`` (what ir_datasets and MS MARCO write).
  ``field`` picks the text: ``title`` (``<title>`` / ``<query>``, the default), ``desc`` or
  ``narr``. XML is read with a regular expression, never an XML parser, so an entity in a
  topics file cannot expand.
- qrels: ``qid iter docno rel``, whitespace-separated (trec_eval's format).
- run: ``qid Q0 docno rank score [runid]``; ranked as trec_eval ranks (score descending,
  ties by docno descending, rank column ignored). A document listed twice for one topic is
  an error, as in trec_eval.
- corpus (optional): a ``{"id", "text"}`` JSONL/CSV file, or a TREC ``<DOC> <DOCNO>
  ... </DOCNO> <TEXT> ... </TEXT> </DOC>`` file, streamed, its structure checked
  (:mod:`ragmeter.io.trec_docs`); without one, an empty corpus is written.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterator
from pathlib import Path

from ragmeter.core.errors import InvalidInputError
from ragmeter.io.collections.collection import Collection, iter_lines, trec_order
from ragmeter.io.collections.trec_docs import iter_sgml_docs
from ragmeter.io.numbers import whole_number
from ragmeter.io.text import read_text

FIELDS = ("title", "desc", "narr")
_SGML_FIELD = re.compile(r"<(num|title|desc|narr)>", re.IGNORECASE)
_XML_TOPIC = re.compile(r"<topic\b([^>]*)>(.*?)</topic\s*>", re.IGNORECASE | re.DOTALL)
_XML_NUMBER = re.compile(r"""\bnumber\s*=\s*["']([^"']+)["']""", re.IGNORECASE)
_XML_TAGS = {"title": ("query", "title"), "desc": ("description", "question", "desc"), "narr": ("narrative", "narr")}
_PREFIX = {"num": "number:", "desc": "description:", "narr": "narrative:", "title": "topic:"}


def read_topics(path: str | Path, field: str = "title") -> dict[str, str]:
    """Topic id -> text of ``field``, in file order."""
    if field not in FIELDS:
        raise InvalidInputError(f"unknown topic field {field!r}", fix=f"use one of {', '.join(FIELDS)}")
    text = read_text(path)
    head = text.lstrip()[:200].lower()
    if "<top>" in head or head.startswith("<top"):
        topics = _sgml(text, field, str(path))
    elif "<topic" in text[:2000].lower():
        topics = _xml(text, field, str(path))
    else:
        topics = _tsv(path)
    if not topics:
        raise InvalidInputError("no topics found", file=str(path),
                                fix="give <top> (SGML), <topic> (XML) or qid<TAB>text")
    return topics


def _sgml(text: str, field: str, file: str) -> dict[str, str]:
    out: dict[str, str] = {}
    blocks = re.split(r"<top>", text, flags=re.IGNORECASE)[1:]
    closed = [re.search(r"</top>", b, flags=re.IGNORECASE) is not None for b in blocks]
    if any(closed) and not closed[-1]:  # the file closes its topics, and the last is not: cut short?
        raise InvalidInputError(f"the last <top> (topic {len(blocks)} of the file) is not closed by </top>, where "
                                f"the others are: the file may be cut short", file=file,
                                fix="restore the whole topics file, or close the last topic with </top>")
    for block in blocks:
        block = re.split(r"</top>", block, flags=re.IGNORECASE)[0]
        block = re.sub(r"</(num|title|desc|narr)>", " ", block, flags=re.IGNORECASE)
        parts = _SGML_FIELD.split(block)
        values = {parts[i].lower(): _clean(parts[i + 1], parts[i].lower()) for i in range(1, len(parts) - 1, 2)}
        num = values.get("num")
        if not num:
            raise InvalidInputError(f"a <top> block has no <num>: {block.strip()[:60]!r}", file=file)
        if num in out:
            raise InvalidInputError(f"topic {num} appears twice", file=file, record=num)
        if not values.get(field):
            raise InvalidInputError(f"topic {num} has no <{field}>", file=file, record=num,
                                    fix="choose another --field (title, desc or narr)")
        out[num] = values[field]
    return out


def _xml(text: str, field: str, file: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for attrs, body in _XML_TOPIC.findall(text):
        number = _XML_NUMBER.search(attrs)
        if number is None:
            raise InvalidInputError(f"a <topic> has no number attribute: <topic{attrs}>", file=file)
        num = number.group(1).strip()
        value = None
        for tag in _XML_TAGS[field]:
            m = re.search(rf"<{tag}\b[^>]*>(.*?)</{tag}\s*>", body, re.IGNORECASE | re.DOTALL)
            if m:
                value = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", m.group(1))).split())
                break
        if not value:
            raise InvalidInputError(f"topic {num} has no {' or '.join(f'<{t}>' for t in _XML_TAGS[field])}",
                                    file=file, record=num, fix="choose another --field (title, desc or narr)")
        if num in out:
            raise InvalidInputError(f"topic {num} appears twice", file=file, record=num)
        out[num] = value
    return out


def _tsv(path: str | Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line, text in iter_lines(path):
        qid, sep, query = text.partition("\t")
        if not sep or not qid.strip() or not query.strip():
            raise InvalidInputError("expected qid<TAB>text", file=str(path), line=line)
        qid = qid.strip()
        if qid in out:
            raise InvalidInputError(f"query {qid} appears twice", file=str(path), line=line, record=qid)
        out[qid] = query.strip()
    return out


def _clean(value: str, name: str) -> str:
    value = " ".join(value.split())
    prefix = _PREFIX.get(name)
    if prefix and value.lower().startswith(prefix):
        value = value[len(prefix):].strip()
    return value


def read_qrels(path: str | Path) -> dict[str, dict[str, float]]:
    """``qid iter docno rel`` lines -> {qid: {docno: grade}}; a document judged twice is an error."""
    out: dict[str, dict[str, float]] = {}
    for line, text in iter_lines(path):
        if text.lstrip().startswith("#"):
            continue
        fields = text.split()
        if len(fields) != 4:
            raise InvalidInputError(f"expected 4 fields (qid iter docno rel), got {len(fields)}", file=str(path),
                                    line=line)
        qid, _, doc, rel = fields
        grade = whole_number(rel)
        if grade is None:
            raise InvalidInputError(f"relevance {rel[:40]!r} is not an integer of at most 64 bits", file=str(path),
                                    line=line, record=qid, field="rel") from None
        judged = out.setdefault(qid, {})
        if doc in judged:
            raise InvalidInputError(f"document {doc} is judged twice for topic {qid}", file=str(path), line=line,
                                    record=qid, fix="keep one judgment per topic and document")
        judged[doc] = float(grade)
    return out


def read_trec_run(path: str | Path) -> dict[str, list[tuple[str, float]]]:
    """``qid Q0 docno rank score [runid]`` lines -> {qid: [(docno, score)]} in trec_eval's order."""
    rows: dict[str, list[tuple[str, float]]] = {}
    seen: dict[tuple[str, str], int] = {}
    for line, text in iter_lines(path):
        if text.lstrip().startswith("#"):
            continue
        fields = text.split()
        if len(fields) < 5:
            raise InvalidInputError(f"expected 6 fields (qid Q0 docno rank score runid), got {len(fields)}",
                                    file=str(path), line=line)
        qid, doc = fields[0], fields[2]
        try:
            score = float(fields[4])
        except ValueError:
            raise InvalidInputError(f"score {fields[4]!r} is not a number", file=str(path), line=line,
                                    record=qid) from None
        if not math.isfinite(score):
            raise InvalidInputError(f"score {fields[4]!r} is not finite", file=str(path), line=line, record=qid)
        if (qid, doc) in seen:
            raise InvalidInputError(f"document {doc} appears twice for topic {qid} (first on line "
                                    f"{seen[(qid, doc)]})", file=str(path), line=line, record=qid,
                                    fix="list each document once per topic")
        seen[(qid, doc)] = line
        rows.setdefault(qid, []).append((doc, score))
    return {qid: trec_order(r) for qid, r in rows.items()}


def iter_trec_docs(path: str | Path) -> Iterator[tuple[str, str, int | None]]:
    """``<DOC><DOCNO>id</DOCNO> ... <TEXT>...</TEXT></DOC>`` (TREC SGML documents, streamed:
    :mod:`ragmeter.io.trec_docs`), or a ragmeter corpus (JSONL / CSV ``id,text``): ``(id,
    text, line)``."""
    name = str(path).lower()
    if name.endswith((".jsonl", ".ndjson", ".csv")):
        from ragmeter.io.corpus import load_corpus

        for doc, text in load_corpus(path).items():  # its reader refuses a repeated id, naming both lines
            yield doc, text, None
        return
    yield from iter_sgml_docs(path)


def load_trec(topics: str | Path, qrels: str | Path, *, run: str | Path | None = None,
              docs: str | Path | None = None, field: str = "title") -> Collection:
    """A TREC collection; ``docs`` is optional (without it the corpus is empty)."""
    return Collection(name=f"TREC topics {Path(topics).name}", queries=read_topics(topics, field),
                      qrels=read_qrels(qrels), run=read_trec_run(run) if run is not None else None,
                      corpus=(lambda: iter_trec_docs(docs)) if docs is not None else (lambda: iter(())),
                      corpus_file=str(docs) if docs is not None else None,
                      notes=[] if docs is not None else [("no documents given: corpus.jsonl is empty (chunk texts are "
                                                         "needed only by judged metrics and labeling)")])
