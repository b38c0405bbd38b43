"""Evaluating a TREC run held in memory: align it with the qrels, then compute every measure on
blocks of topics (numpy, no per-topic loop), ragmeter's label measures included.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np
import pyarrow as pa

from ragmeter.core.errors import InvalidInputError, InvalidParameterError
from ragmeter.core.measure import Measure
from ragmeter.metrics.batch import RankedBatch
from ragmeter.metrics.kinds import LabelSpec, label_kernel
from ragmeter.metrics.registry import make_measure, parse_measure
from ragmeter.trec.measures import Block, MeasureRequest, parse_request
from ragmeter.trec.ranking import Rankings, align, output_order
from ragmeter.trec.reader import Qrels, TrecRun, read_qrels, read_run
from ragmeter.trec.result import TrecResult

BLOCK_CELLS = 1 << 20  # at most ~1M ranked cells per block: 8 MB arrays stay in cache and reuse freed memory
RAGMETER_PREFIX = "ragmeter:"


def check_options(iprec_rule: str, max_docs: int | None) -> None:
    """trec_eval's options that take only some values, checked before any file is read."""
    if iprec_rule not in ("v9", "v10"):
        raise InvalidParameterError("iprec_rule must be 'v9' or 'v10'")
    if max_docs is not None and max_docs < 1:
        raise InvalidParameterError("max_docs (-M) must be >= 1")


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


def _split(measures: Iterable[str]) -> tuple[list[MeasureRequest], list[Measure]]:
    trec: dict[str, MeasureRequest] = {}
    ours: list[Measure] = []
    for text in measures:
        if "@" in text or "(" in text:
            measure = parse_measure(text)
            if not isinstance(measure.spec, LabelSpec):
                raise InvalidParameterError(f"{text}: a TREC run has relevance labels only; {measure.name} needs "
                                            f"answers and a judge or an embedder (use ragmeter eval)")
            ours.append(measure)
            continue
        for req in parse_request(text):
            trec[req.measure.name] = req  # a later request for the same measure replaces its parameters
    return sorted(trec.values(), key=lambda r: r.order_key), ours


def evaluate_in_memory(qrels: Any, run: Any, measures: Iterable[str] = ("official",), *, level: int = 1,
                       complete: bool = False, max_docs: int | None = None, judged_only: bool = False,
                       iprec_rule: str = "v10") -> TrecResult:
    """:func:`ragmeter.trec.evaluate_trec` with the whole run in memory."""
    check_options(iprec_rule, max_docs)
    requests, ours = _split(measures)
    run_name = str(run) if isinstance(run, (str, Path)) else "run"
    q, r = _as_qrels(qrels), _as_run(run)
    rankings = align(q, r, max_docs=max_docs, judged_only=judged_only, complete=complete, run_name=run_name)
    ours = [m if m.params.get("rel", 1.0) != 1.0 or "rel" not in m.params or level == 1
            else make_measure(m.name, m.k, **{**m.params, "rel": float(level)}) for m in ours]

    kinds: dict[str, str] = {}
    for req in requests:
        for name in req.names:
            kinds[name] = req.measure.kind
    for m in ours:
        kinds[RAGMETER_PREFIX + str(m)] = "float"
    chunks: dict[str, list[np.ndarray]] = {n: [] for n, kind in kinds.items() if kind not in ("runid", "num_q")}
    for block in _blocks(rankings, float(level), iprec_rule):
        for req in requests:
            if req.measure.compute is None:
                continue
            for name, values in zip(req.names, req.measure.compute(block, req.values)):
                chunks[name].append(np.asarray(values, dtype=np.float64))
        if ours:
            batch = RankedBatch(block.grades, block.lengths, block.judged, np.ones(len(block.lengths), bool))
            for m in ours:
                chunks[RAGMETER_PREFIX + str(m)].append(label_kernel(m)(batch, m).values)
    order = output_order(rankings.topics)
    per_topic = {n: (np.concatenate(v) if v else np.zeros(0))[order] for n, v in chunks.items()}
    topics = [rankings.topics[i] for i in order.tolist()]
    return TrecResult(topics, per_topic, kinds, r.runid, missing=rankings.missing)


def _blocks(rk: Rankings, level: float, iprec_rule: str):
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
        yield Block(_graded(rk, start, stop), lengths[start:stop],
                    _padded(rk.judged, rk.judged_offsets, start, stop, -np.inf), level, iprec_rule)
        start = stop


def _graded(rk: Rankings, a: int, b: int) -> np.ndarray:
    """Topics [a, b) as a (topics x longest) grade matrix: NaN where unjudged or past the end."""
    lo, hi = rk.offsets[a], rk.offsets[b]
    out = np.full((b - a, int(np.diff(rk.offsets[a:b + 1]).max(initial=0))), np.nan)
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
