"""Evaluate a TREC run against qrels with trec_eval 10.0's semantics, in memory or, under a
memory limit, in topic partitions.

>>> r = evaluate_trec({"q1": {"d1": 1, "d2": 0}}, {"q1": {"d1": 0.5, "d2": 0.9}}, ["map", "P.1"])
>>> r.mean("map"), r.mean("P_1")
(0.5, 0.0)
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ragmeter.trec.in_memory import check_options, evaluate_in_memory
from ragmeter.trec.result import TrecResult

__all__ = ["TrecResult", "evaluate_trec"]


def evaluate_trec(qrels: Any, run: Any, measures: Iterable[str] = ("official",), *, level: int = 1,
                  complete: bool = False, max_docs: int | None = None, judged_only: bool = False,
                  iprec_rule: str = "v10", memory_limit_mb: float | None = None,
                  skip_missing: bool = False) -> TrecResult:
    """trec_eval's numbers for ``run`` against ``qrels``, exactly (trec_eval 10.0 semantics).

    Parameters
    ----------
    qrels : str, Path, dict or DataFrame
        A qrels file (``qid 0 docno rel``), ``{qid: {docno: rel}}``, or a DataFrame with
        query, document and relevance columns.
    run : str, Path, dict or DataFrame
        A run file (``qid Q0 docno rank score runid``), ``{qid: {docno: score}}``, or a
        DataFrame. Documents are ranked by score, ties broken as trec_eval breaks them.
    measures : iterable of str, default ("official",)
        trec_eval measure names (``map``, ``P.5``, ``ndcg_cut.10``, ``official``, ``all_trec``);
        names with ``@`` or ``(`` are ragmeter measures (e.g. ``mrr@10``), printed with a
        ``ragmeter:`` prefix.
    level : int, default 1
        ``-l``: the lowest relevance grade that counts as relevant.
    complete : bool, default False
        ``-c``: average over every qrels topic, a topic the run misses scoring 0.
    max_docs : int, optional
        ``-M``: read at most this many documents per topic.
    judged_only : bool, default False
        ``-J``: score only the judged documents.
    iprec_rule : {'v10', 'v9'}, default 'v10'
        ``'v9'``: trec_eval 9's rounding of the interpolated-precision cut-offs.
    memory_limit_mb : float, optional
        Evaluate the run file in topic partitions (:mod:`ragmeter.trec.partitioned`) so that
        peak memory stays under this, with the same numbers.
    skip_missing : bool, default False
        A qrels topic the run does not answer is refused, as trec_eval 10.0 refuses it, unless
        ``complete`` or this (trec_eval 9: left out of the averages, listed in ``missing``).

    Returns
    -------
    TrecResult
        ``mean(name)`` (the ``all`` line), ``query(name)`` (per topic), ``names``, ``to_dict()``.

    Raises
    ------
    InvalidInputError
        Empty or malformed qrels or run, a duplicate line, a NaN score, a topic the run misses.
    InvalidParameterError
        An unknown measure, a bad cut-off, a negative ``max_docs``, an unknown ``iprec_rule``.

    Examples
    --------
    >>> qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 1}}
    >>> run = {"q1": {"d1": 0.5, "d2": 0.9}, "q2": {"d3": 1.0}}
    >>> r = evaluate_trec(qrels, run, ["map", "P.1"])
    >>> r.mean("map"), r.query("map")
    (0.75, {'q1': 0.5, 'q2': 1.0})
    >>> r.mean("P_1")
    0.5
    """
    check_options(max_docs, iprec_rule, memory_limit_mb)
    measures = list(measures)
    if memory_limit_mb is not None and isinstance(run, (str, Path)):
        from ragmeter.trec.partitioned import evaluate_trec_streaming, fits_in_memory

        if not fits_in_memory(run, memory_limit_mb):
            return evaluate_trec_streaming(qrels, run, measures, memory_limit_mb=memory_limit_mb, level=level,
                                           complete=complete, max_docs=max_docs, judged_only=judged_only,
                                           iprec_rule=iprec_rule, skip_missing=skip_missing)
    return evaluate_in_memory(qrels, run, measures, level=level, complete=complete, max_docs=max_docs,
                              judged_only=judged_only, iprec_rule=iprec_rule, skip_missing=skip_missing)
