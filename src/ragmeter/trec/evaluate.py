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
    """trec_eval's numbers for ``run`` against ``qrels`` (files, dicts or DataFrames).

    ``level`` (-l), ``complete`` (-c), ``max_docs`` (-M), ``judged_only`` (-J);
    ``iprec_rule='v9'`` uses trec_eval 9's interpolation cut-off rounding. A qrels topic the
    run does not answer is refused, as trec_eval 10.0 refuses it, unless ``complete`` or
    ``skip_missing`` (trec_eval 9: left out of the averages, listed in ``missing``).
    Measures with ``@`` or ``(`` are ragmeter measures (e.g. ``mrr@10``), printed with a
    ``ragmeter:`` prefix. ``memory_limit_mb``: the run file is evaluated in topic partitions
    (:mod:`ragmeter.trec.partitioned`) so that peak memory stays under that, with the same numbers.
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
