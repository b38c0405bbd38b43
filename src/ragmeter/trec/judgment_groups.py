"""Judgment groups (``-R qrels_jg``): a qrels file whose second column names the judge (the
judgment group, JG), each topic scored against every JG's judgments and averaged over its JGs.

As trec_eval's ``get_qrels_jg.c``, ``form_res_rels_jg.c`` and ``m_*_avgjg.c``: the JGs of a
topic in byte order, each one's ranking labelled by its own judgments (a document judged twice
in one JG is refused when the file is read: exit 2), and

- map_avgjg: the sum over JGs of AP (map's formula) / the number of JGs (when more than one);
- P_avgjg.k: the same for P at k; Rprec_mult_avgjg.x: for Rprec_mult at x.
"""

from __future__ import annotations

from collections.abc import Iterable

from ragmeter.trec.catalog import MeasureRequest, check_format, parse_requests
from ragmeter.trec.errors import TrecInputError
from ragmeter.trec.lean import kinds_of, plan, read_run_topics
from ragmeter.trec.lean_measures import QRELS_MEASURES, Options
from ragmeter.trec.lines import existing, qrels_rows
from ragmeter.trec.rels import TopicRels, form_res_rels, level_counts, ranked
from ragmeter.trec.result import TrecResult

PER_GROUP = {"map_avgjg": QRELS_MEASURES["map"], "P_avgjg": QRELS_MEASURES["P"],
             "Rprec_mult_avgjg": QRELS_MEASURES["Rprec_mult"]}


def read_groups(path: str) -> dict[str, dict[bytes, dict[str, int]]]:
    """{qid: {jg: {docno: grade}}}, topics and JGs in byte order."""
    path = existing(path)
    qids, jgs, docs, rels = qrels_rows(path, iters=True)
    if not qids:
        raise TrecInputError("the qrels file has no judgments", file=path)
    topics: dict[str, dict[bytes, dict[str, int]]] = {}
    for q, jg, d, r in zip(qids, jgs, docs, rels):
        judged = topics.setdefault(q, {}).setdefault(jg, {})
        if d in judged:
            raise TrecInputError(f"document {d!r} is judged twice for topic {q!r} in judgment group "
                                 f"{jg.decode('utf-8', 'replace')!r} (trec_eval: duplicate docs)", file=path,
                                 fix="keep one judgment per (topic, judgment group, document)")
        judged[d] = r
    return {q: dict(sorted(topics[q].items())) for q in sorted(topics)}


def averaged(values: list[list[float]]) -> list[float]:
    """Each value summed over the JGs in order, then divided by their number when more than one."""
    out = [0.0] * len(values[0])
    for per_group in values:
        out = [a + b for a, b in zip(out, per_group)]
    return [v / len(values) for v in out] if len(values) > 1 else out


def evaluate_groups(qrels_path: str, run_path: str, measures: Iterable[str] = ("qrels_jg",), *, level: int = 1,
                    complete: bool = False, max_docs: int | None = None, judged_only: bool = False,
                    skip_missing: bool = False) -> TrecResult:
    """trec_eval ``-R qrels_jg`` for a run file."""
    requests: list[MeasureRequest] = parse_requests(list(measures))
    check_format(requests, "qrels_jg")
    groups, run = read_groups(str(qrels_path)), read_run_topics(str(run_path))
    check = any(r.measure.kind not in ("runid", "num_q") for r in requests)
    todo = plan(list(groups), run, lambda docs: [d for d, _ in ranked(docs)][:max_docs], check=check,
                complete=complete, skip_missing=skip_missing)
    options = Options(level=level)
    kinds = kinds_of(requests)
    per_topic: dict[str, list] = {n: [] for n, k in kinds.items() if k not in ("runid", "num_q")}
    for topic in todo.evaluated if check else []:
        docnos = todo.ranking(topic, max_docs)
        rels: list[TopicRels] = [form_res_rels(docnos, judged, level_counts(judged.values()), level=level,
                                               judged_only=judged_only) for judged in groups[topic].values()]
        for r in requests:
            if r.name in PER_GROUP:
                values = averaged([PER_GROUP[r.name](rel, r, options) for rel in rels])
                for name, value in zip(r.names, values):
                    per_topic[name].append(value)
    return TrecResult(todo.evaluated, per_topic, kinds, run.runid, missing=todo.missing)
