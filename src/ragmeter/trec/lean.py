"""The small-file path: trec_eval's evaluation in plain Python, topic by topic, as trec_eval does it.

No numpy and no Arrow are imported, so ``ragmeter trec`` on a file of a few thousand lines
starts and finishes in a small fraction of a second; the vectorised path
(:mod:`ragmeter.trec.in_memory`) takes over where the files are large (:func:`is_small`). The
files are read by the exact line readers (:mod:`ragmeter.trec.lines`), the same ones the
vectorised path falls back to, and every refusal is the vectorised path's
(:mod:`ragmeter.trec.refusals`). ``-R prefs``, ``-R qrels_prefs`` and ``-R qrels_jg`` are
evaluated here at every size (:mod:`ragmeter.trec.prefs`, :mod:`ragmeter.trec.judgment_groups`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ragmeter.trec.catalog import CLEARED_FOR_STAND_IN, MeasureRequest, check_format, parse_requests
from ragmeter.trec.errors import TrecInputError
from ragmeter.trec.lean_gains import GAIN_MEASURES
from ragmeter.trec.lean_judged import JUDGED_MEASURES
from ragmeter.trec.lean_measures import QRELS_MEASURES, Options
from ragmeter.trec.lines import existing, qrels_rows, run_lines, run_rows, run_rows_fast
from ragmeter.trec.refusals import (
    judged_twice,
    listed_twice,
    no_topic,
    refuse_missing,
    refuse_unscorable_topics,
)
from ragmeter.trec.rels import TopicRels, form_res_rels, level_counts, ranked, twice
from ragmeter.trec.result import TrecResult

SMALL_BYTES = 2 << 20  # a run file up to this size takes this path (measured: see docs/trec.md)
BOGUS_DOCNO = "ceci_nest_pas_un_docno"  # trec_eval.c: the ranking of a topic the run misses, under -c
MEASURES: dict[str, Callable[[TopicRels, MeasureRequest, Options], list]] = {
    **QRELS_MEASURES, **GAIN_MEASURES, **JUDGED_MEASURES}


def is_small(run_path: str, qrels_path: str) -> bool:
    """Whether the files are small enough that plain Python beats starting numpy and Arrow."""
    try:
        return os.path.getsize(run_path) + os.path.getsize(qrels_path) <= SMALL_BYTES
    except OSError:
        return True  # the readers say what is wrong with it


@dataclass
class Run:
    """A run file grouped by topic: (docno, score) in file order, and the last line's run id."""

    topics: dict[str, list[tuple[str, float]]]
    runid: str
    source: str


def read_run_topics(path: str) -> Run:
    path = existing(path)
    topics: dict[str, list[tuple[str, float]]] = {}
    fast = run_rows_fast(path)
    if fast is not None:
        for qid, docno, score in fast[0]:
            topics.setdefault(qid, []).append((docno, score))
        runid = fast[1]
    else:
        last = b""
        for qid, docno, score, last in run_rows(run_lines(path), path):  # noqa: B007 (the last row's run id is kept)
            topics.setdefault(qid, []).append((docno, score))
        runid = last.decode("utf-8", "replace")
    if not topics:
        raise TrecInputError("the run file has no results", file=path)
    return Run(topics, runid, path)


@dataclass
class Judgments:
    """A qrels file grouped by topic: {docno: grade} in file order, byte-ordered topic ids."""

    topics: dict[str, dict[str, int]]
    twice: dict[str, str]  # topic -> a document judged twice in it (the one the Arrow path names)
    positive: int  # lines with a grade > 0 (trec_eval's -c num_rel summary)
    source: str

    @property
    def order(self) -> list[str]:
        return sorted(self.topics)  # code-point order of str is the byte order of their UTF-8


def read_judgments(path: str) -> Judgments:
    path = existing(path)
    qids, _, docs, rels = qrels_rows(path)
    if not qids:
        raise TrecInputError("the qrels file has no judgments", file=path)
    topics: dict[str, dict[str, int]] = {}
    first_seen: dict[str, int] = {}
    doubled: dict[str, list[str]] = {}
    for q, d, r in zip(qids, docs, rels):
        first_seen.setdefault(d, len(first_seen))
        judged = topics.setdefault(q, {})
        if d in judged:
            doubled.setdefault(q, []).append(d)
        judged[d] = r
    twice_in = {q: min(ds, key=first_seen.__getitem__) for q, ds in doubled.items()}  # the vectorised path's pick
    return Judgments(topics, twice_in, sum(1 for r in rels if r > 0), path)


def kinds_of(requests: Iterable[MeasureRequest]) -> dict[str, str]:
    return {name: r.measure.kind for r in requests for name in r.names}


@dataclass
class Plan:
    """What trec_eval evaluates: each judged topic's ranking (docnos, best first), the topics in
    its order (a missing one with ``-c``: ranked as the stand-in document), the missing ones."""

    rankings: dict[str, list[str]]
    evaluated: list[str]
    missing: list[str]

    def ranking(self, topic: str, max_docs: int | None) -> list[str]:
        return self.rankings[topic] if topic in self.rankings else [BOGUS_DOCNO][:max_docs]


def plan(order: list[str], run: Run, rank: Callable[[list[tuple[str, float]]], list[str]], *, check: bool,
         complete: bool, skip_missing: bool, after_missing: Callable[[], None] = lambda: None) -> Plan:
    """The rankings of the judged topics (``rank`` sorts and cuts one), refusing as trec_eval
    does, in the vectorised path's order: a document listed twice (``check``), a topic the run
    misses (unless ``complete`` or ``skip_missing``), then ``after_missing``'s refusals, then
    no topic to evaluate."""
    judged = set(order)
    rankings = {t: rank(docs) for t, docs in run.topics.items() if t in judged}
    if check:
        for topic, docnos in rankings.items():
            if (dup := twice(docnos)) is not None:
                raise listed_twice(dup, topic, run.source)
    missing = [t for t in order if t not in rankings]
    if not complete and not skip_missing:
        refuse_missing(missing, run.source)
    after_missing()
    evaluated = order if complete else [t for t in order if t in rankings]
    if not evaluated:
        raise no_topic(run.source)
    return Plan(rankings, evaluated, missing)


def evaluate_lean(qrels_path: str, run_path: str, measures: Iterable[str] = ("official",), *, level: int = 1,
                  complete: bool = False, max_docs: int | None = None, judged_only: bool = False,
                  iprec_rule: str = "v10", skip_missing: bool = False, num_docs: int = 0) -> TrecResult:
    """trec_eval's numbers for a qrels file and a run file, topic by topic in plain Python."""
    requests = parse_requests(list(measures))
    check_format(requests, "qrels")
    qrels, run = read_judgments(str(qrels_path)), read_run_topics(str(run_path))
    check = any(r.measure.kind not in ("runid", "num_q") for r in requests)
    order = qrels.order
    if check:
        for topic in order:
            if topic in qrels.twice:
                raise judged_twice(qrels.twice[topic], topic, qrels.source)

    def unscorable() -> None:
        if check:
            evaluated = order if complete else [t for t in order if t in run.topics]
            refuse_unscorable_topics(evaluated, [max(qrels.topics[t].values()) for t in evaluated], qrels.source)

    todo = plan(order, run, lambda docs: [d for d, _ in ranked(docs)][:max_docs], check=check, complete=complete,
                skip_missing=skip_missing, after_missing=unscorable)
    options = Options(level=level, num_docs=num_docs, iprec_rule=iprec_rule)
    kinds = kinds_of(requests)
    per_topic: dict[str, list] = {n: [] for n, k in kinds.items() if k not in ("runid", "num_q")}
    previous: dict[int, int] = {}
    for topic in todo.evaluated:
        stand_in = topic not in todo.rankings
        docnos = todo.ranking(topic, max_docs)
        judged = qrels.topics[topic]
        levels = level_counts(judged.values(), previous)
        fresh = any(g >= 0 for g in judged.values())
        if fresh:
            previous = levels
        rels = form_res_rels(docnos, judged, levels, level=level, judged_only=judged_only, fresh=fresh)
        for r in requests:
            compute = MEASURES.get(r.name)
            if compute is None:
                continue
            for name, value in zip(r.names, compute(rels, r, options)):
                if stand_in and (name in CLEARED_FOR_STAND_IN or name.startswith("unj")):
                    value = CLEARED_FOR_STAND_IN.get(name, 0.0)
                per_topic[name].append(value)
    return TrecResult(todo.evaluated, per_topic, kinds, run.runid, missing=todo.missing,
                      num_rel_all=qrels.positive if complete else None)
