"""Evaluating a TREC run held in memory: align it with the qrels as trec_eval 10.0 does, refuse
what it refuses, then compute every measure on blocks of topics (numpy, no per-topic loop),
ragmeter's label measures included.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from ragmeter.core.errors import InvalidInputError, InvalidParameterError
from ragmeter.trec.arrow import to_numpy
from ragmeter.trec.catalog import CLEARED_FOR_STAND_IN, MeasureRequest, check_format, parse_requests
from ragmeter.trec.gain_measures import GAIN_COMPUTE
from ragmeter.trec.judged_measures import JUDGED_COMPUTE
from ragmeter.trec.measures import COMPUTE, Block
from ragmeter.trec.ranking import NONPOOL, Rankings, align, output_order, positions_in
from ragmeter.trec.reader import Qrels, TrecRun, read_qrels, read_run
from ragmeter.trec.refusals import check_options, no_topic, refuse_missing, refuse_unscorable_topics
from ragmeter.trec.result import TrecResult

if TYPE_CHECKING:
    from ragmeter.core.measure import Measure

BLOCK_CELLS = 1 << 20  # at most ~1M ranked cells per block: 8 MB arrays stay in cache and reuse freed memory
RAGMETER_PREFIX = "ragmeter:"
ALL_COMPUTE = {**COMPUTE, **GAIN_COMPUTE, **JUDGED_COMPUTE}


def _as_qrels(qrels: Any) -> Qrels:
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, (str, Path)):
        return read_qrels(qrels)
    if isinstance(qrels, Mapping):
        rows = [(str(q), str(d), int(r)) for q, docs in qrels.items() for d, r in docs.items()]
    else:  # a pandas DataFrame with query_id/doc_id/relevance (or qid/docno/rel)
        df = qrels
        rows = list(zip(_col(df, "query_id", "qid").astype(str), _col(df, "doc_id", "docno").astype(str),
                        _col(df, "relevance", "rel").astype(int)))
    if not rows:
        raise InvalidInputError("the qrels are empty")
    q, d, r = zip(*rows)
    return Qrels(pa.table({"qid": pa.array(q, pa.string()), "docno": pa.array(d, pa.string()),
                           "rel": pa.array(r, pa.int64())}), "qrels")


def _as_run(run: Any) -> TrecRun:
    if isinstance(run, TrecRun):
        return run
    if isinstance(run, (str, Path)):
        return read_run(run)
    if isinstance(run, Mapping):
        rows = [(str(q), str(d), float(s)) for q, docs in run.items() for d, s in docs.items()]
    else:
        df = run
        rows = list(zip(_col(df, "query_id", "qid").astype(str), _col(df, "doc_id", "docno").astype(str),
                        _col(df, "score", "score").astype(float)))
    if not rows:
        raise InvalidInputError("the run is empty")
    q, d, s = zip(*rows)
    if any(math.isnan(x) for x in s):
        raise InvalidInputError("the run has a NaN score", field="score")
    return TrecRun(pa.table({"qid": pa.array(q, pa.string()), "docno": pa.array(d, pa.string()),
                         "score": pa.array(s, pa.float64())}), runid="run")


def _col(df, *names):
    for n in names:
        if n in df.columns:
            return df[n]
    raise InvalidInputError(f"the DataFrame needs a column named one of {names}")


def split_measures(measures: Iterable[str]) -> tuple[list[MeasureRequest], list[Measure]]:
    trec: list[str] = []
    ours: list[Measure] = []
    for text in measures:
        if "@" in text or "(" in text:
            from ragmeter.metrics.kinds import LabelSpec
            from ragmeter.metrics.registry import parse_measure

            measure = parse_measure(text)
            if not isinstance(measure.spec, LabelSpec):
                raise InvalidParameterError(f"{text}: a TREC run has relevance labels only; {measure.name} needs "
                                            f"answers and a judge or an embedder (use ragmeter eval)")
            ours.append(measure)
            continue
        trec.append(text)
    requests = parse_requests(trec)
    check_format(requests, "qrels")
    return requests, ours


def refuse_unscorable(qrels: Qrels, evaluated: np.ndarray | None = None) -> None:
    """trec_eval 10.0 cannot evaluate a topic whose judgments are all negative: its per-topic
    count buffer (``form_res_rels.c``) is allocated at the first topic with a grade >= 0, so
    such a topic before any other exits 4, and one with every grade <= -2 after one crashes.
    A topic whose grades are all -1 after one is evaluated with R = 0 (as here). ``evaluated``:
    which topics (in byte order) are evaluated; all by default."""
    universe = qrels.topic_array
    topic = positions_in(qrels.table["qid"], universe).astype(np.int64)
    best = np.full(len(universe), -np.inf)
    np.maximum.at(best, topic, to_numpy(qrels.table["rel"]).astype(np.float64))
    if evaluated is not None:
        best = best[evaluated]
        names = [t for t, e in zip(universe.to_pylist(), evaluated.tolist()) if e]
    else:
        names = universe.to_pylist()
    refuse_unscorable_topics(names, best.tolist(), qrels.source)


def needs_rankings(requests: list[MeasureRequest], ours: list[Measure]) -> bool:
    """Whether anything but runid and num_q is asked for (trec_eval's checks run only then)."""
    return bool(ours) or any(r.measure.kind not in ("runid", "num_q") for r in requests)


def evaluate_in_memory(qrels: Any, run: Any, measures: Iterable[str] = ("official",), *, level: int = 1,
                       complete: bool = False, max_docs: int | None = None, judged_only: bool = False,
                       iprec_rule: str = "v10", skip_missing: bool = False, num_docs: int = 0) -> TrecResult:
    """:func:`ragmeter.trec.evaluate_trec` with the whole run in memory."""
    check_options(max_docs, iprec_rule, None)
    requests, ours = split_measures(measures)
    q, r = _as_qrels(qrels), _as_run(run)
    check = needs_rankings(requests, ours)
    rankings = align(q, r, max_docs=max_docs, judged_only=judged_only, complete=complete, run_name=r.source,
                     check=check)
    if not complete and not skip_missing:
        refuse_missing(rankings.missing, r.source)
    if check:
        evaluated = None if complete or not rankings.missing else ~np.isin(q.topic_array.to_pylist(),
                                                                           rankings.missing)
        refuse_unscorable(q, evaluated)
    stale = stale_levels(q, evaluated_topics(q, rankings.missing, complete)) if check else {}
    return measure(rankings, requests, ours, level=level, iprec_rule=iprec_rule, runid=r.runid,
                   num_rel_all=int((to_numpy(q.table["rel"]) > 0).sum()) if complete else None, num_docs=num_docs,
                   stale=stale)


def evaluated_topics(qrels: Qrels, missing: list[str], complete: bool) -> list[str]:
    """The qrels topics trec_eval evaluates, in its (byte) order."""
    skipped = set() if complete else set(missing)
    return [t for t in qrels.topics if t not in skipped]


def measure(rankings: Rankings, requests: list[MeasureRequest], ours: list[Measure], *, level: int, iprec_rule: str,
            runid: str, num_rel_all: int | None, num_docs: int = 0,
            stale: dict[str, np.ndarray] | None = None) -> TrecResult:
    """The requested measures on aligned rankings, per topic in trec_eval's order. ``stale``:
    the judged grades a topic without any grade >= 0 takes its gain levels from (see
    :func:`stale_levels`)."""
    if not rankings.topics:
        raise no_topic()
    if ours:
        from ragmeter.metrics.batch import RankedBatch
        from ragmeter.metrics.kinds import label_kernel
        from ragmeter.metrics.registry import make_measure
    ours = [m if m.params.get("rel", 1.0) != 1.0 or "rel" not in m.params or level == 1
            else make_measure(m.name, m.k, **{**m.params, "rel": float(level)}) for m in ours]
    kinds: dict[str, str] = {}
    for req in requests:
        for name in req.names:
            kinds[name] = req.measure.kind
    for m in ours:
        kinds[RAGMETER_PREFIX + str(m)] = "float"
    chunks: dict[str, list[np.ndarray]] = {n: [] for n, kind in kinds.items() if kind not in ("runid", "num_q")}
    for block in _blocks(rankings, float(level), iprec_rule, num_docs, stale or {}):
        done: dict[tuple, list] = {}  # gm_map is map's values, gm_bpref bpref's: computed once
        for req in requests:
            compute = ALL_COMPUTE.get(req.name)
            if compute is None:
                continue
            key = (compute, req.values)
            if key not in done:
                with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # C's inf and NaN, silently
                    done[key] = compute(block, req.values)
            dtype = object if req.measure.kind == "relstring" else np.float64
            for name, values in zip(req.names, done[key]):
                chunks[name].append(np.asarray(values, dtype=dtype))
        if ours:
            labels = np.where(block.grades >= 0, block.grades, np.nan)
            batch = RankedBatch(labels, block.lengths, block.judged, np.ones(len(block.lengths), bool))
            for m in ours:
                chunks[RAGMETER_PREFIX + str(m)].append(label_kernel(m)(batch, m).values)
    order = output_order(rankings.topics)
    per_topic = {n: (np.concatenate(v) if v else np.zeros(0)) for n, v in chunks.items()}
    if rankings.bogus.any():  # trec_eval.c resets these after evaluating a -c topic's stand-in ranking
        per_topic = {name: np.where(rankings.bogus, CLEARED_FOR_STAND_IN.get(name, 0.0), values)  # type: ignore[call-overload]
                     if name in CLEARED_FOR_STAND_IN or name.startswith("unj") else values
                     for name, values in per_topic.items()}
    per_topic = {n: v[order] for n, v in per_topic.items()}
    topics = [rankings.topics[i] for i in order.tolist()]
    return TrecResult(topics, per_topic, kinds, runid, missing=rankings.missing, num_rel_all=num_rel_all)


def stale_levels(qrels: Qrels, evaluated: list[str]) -> dict[str, np.ndarray]:
    """For each evaluated topic without any grade >= 0, the judged grades (descending) of the
    last evaluated topic before it (byte order) that has one: trec_eval's gain measures count
    their levels from that topic's buffer (form_res_rels.c clears none for such a topic)."""
    universe = qrels.topic_array
    topic = positions_in(qrels.table["qid"], universe).astype(np.int64)
    rel = to_numpy(qrels.table["rel"]).astype(np.float64)
    best = np.full(len(universe), -np.inf)
    np.maximum.at(best, topic, rel)
    index = {t: i for i, t in enumerate(universe.to_pylist())}
    out: dict[str, np.ndarray] = {}
    source = -1
    for name in evaluated:
        i = index[name]
        if best[i] >= 0:
            source = i
        elif source >= 0:
            grades = rel[(topic == source) & (rel >= 0)]
            out[name] = -np.sort(-grades)
    return out


def _blocks(rk: Rankings, level: float, iprec_rule: str, num_docs: int = 0, stale: dict | None = None):
    lengths = rk.lengths
    jlengths = np.diff(rk.judged_offsets)
    n = len(rk.topics)
    start = 0
    while start < n:
        stop, widest = start, 0
        while stop < n:
            widest_next = max(widest, int(lengths[stop]), int(jlengths[stop]), 1)
            if stop > start and widest_next * (stop - start + 1) > BLOCK_CELLS:
                break
            widest, stop = widest_next, stop + 1
        rows = {i - start: stale[rk.topics[i]] for i in range(start, stop) if rk.topics[i] in stale} if stale else {}
        yield Block(_labelled(rk, start, stop), lengths[start:stop],
                    _padded(rk.judged, rk.judged_offsets, start, stop, -np.inf), level, iprec_rule, rows, num_docs)
        start = stop


def _labelled(rk: Rankings, a: int, b: int) -> np.ndarray:
    """Topics [a, b) as a (topics x longest) label matrix: the grade, -1 or -2 for unjudged
    documents (see :mod:`ragmeter.trec.ranking`), NaN past each list's end."""
    lo, hi = rk.offsets[a], rk.offsets[b]
    lengths = np.diff(rk.offsets[a:b + 1])
    out = np.full((b - a, int(lengths.max(initial=0))), np.nan)
    out[np.arange(out.shape[1])[None, :] < lengths[:, None]] = NONPOOL
    first, last = np.searchsorted(rk.graded_at, [lo, hi])
    at = rk.graded_at[first:last]
    row = np.searchsorted(rk.offsets[a:b + 1], at, side="right") - 1
    out[row, at - rk.offsets[a:b][row]] = rk.grades[first:last]
    return out


def _padded(flat: np.ndarray, offsets: np.ndarray, a: int, b: int, fill: float) -> np.ndarray:
    lens = np.diff(offsets[a:b + 1])
    out = np.full((b - a, int(lens.max(initial=0))), fill)
    out[np.arange(out.shape[1])[None, :] < lens[:, None]] = flat[offsets[a]:offsets[b]]
    return out
