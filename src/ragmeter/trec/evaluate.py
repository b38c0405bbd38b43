"""Evaluate a TREC run against qrels (or preference judgments, or judgment groups) with trec_eval
10.0's semantics: small files in plain Python (:mod:`ragmeter.trec.lean`), large ones on Arrow
and numpy in memory (:mod:`ragmeter.trec.in_memory`) or, under a memory limit, in topic
partitions (:mod:`ragmeter.trec.partitioned`); the same numbers either way.

>>> r = evaluate_trec({"q1": {"d1": 1, "d2": 0}}, {"q1": {"d1": 0.5, "d2": 0.9}}, ["map", "P.1"])
>>> r.mean("map"), r.mean("P_1")
(0.5, 0.0)
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ragmeter.core.errors import InvalidParameterError
from ragmeter.trec.catalog import REL_FORMATS
from ragmeter.trec.errors import EXIT_FILE, TrecMeasureError
from ragmeter.trec.needs_arrow import arrow_installed, require_arrow
from ragmeter.trec.refusals import check_options
from ragmeter.trec.result import TrecResult

__all__ = ["TrecResult", "evaluate", "evaluate_trec"]

ENGINES = ("auto", "python", "arrow")


def evaluate_trec(qrels: Any, run: Any, measures: Iterable[str] = ("official",), *, level: int = 1,
                  complete: bool = False, max_docs: int | None = None, judged_only: bool = False,
                  iprec_rule: str = "v10", memory_limit_mb: float | None = None,
                  skip_missing: bool = False, rel_format: str = "qrels", zscores: str | Path | None = None,
                  num_docs: int = 0, engine: str = "auto") -> TrecResult:
    """trec_eval's numbers for ``run`` against ``qrels``, exactly (trec_eval 10.0 semantics).

    Parameters
    ----------
    qrels : str, Path, dict or DataFrame
        A qrels file (``qid 0 docno rel``), ``{qid: {docno: rel}}``, or a DataFrame with
        query, document and relevance columns; with ``rel_format`` other than ``'qrels'``, a
        file in that format.
    run : str, Path, dict or DataFrame
        A run file (``qid Q0 docno rank score runid``), ``{qid: {docno: score}}``, or a
        DataFrame. Documents are ranked by score, ties broken as trec_eval breaks them.
    measures : iterable of str, default ("official",)
        trec_eval measure names (``map``, ``P.5``, ``ndcg_cut.10``, ``relstring.20``,
        ``official``, ``all_trec``, ``all_prefs``, ``qrels_jg``); names with ``@`` or ``(`` are
        ragmeter measures (e.g. ``mrr@10``), printed with a ``ragmeter:`` prefix.
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
    rel_format : {'qrels', 'prefs', 'qrels_prefs', 'qrels_jg'}, default 'qrels'
        ``-R``: preference judgments (``qid jg jsg docno level``), a qrels file read as
        preferences, or a qrels file whose second column names the judgment group.
    zscores : str or Path, optional
        ``-Z``: a file of ``qid measure mean stddev``; every per-topic value becomes its z-score.
    num_docs : int, default 0
        ``-N``: documents in the collection (utility's fourth coefficient counts on it).
    engine : {'auto', 'python', 'arrow'}, default 'auto'
        ``'python'``: read and score topic by topic in plain Python (files only); ``'arrow'``:
        read with Arrow and score blocks of topics with numpy (``pip install 'ragmeter[trec]'``);
        ``'auto'``: Python for files up to a few megabytes (without a memory limit) or where
        pyarrow is not installed, Arrow beyond. The numbers are the same.

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
    result = evaluate(qrels, run, measures, level=level, complete=complete, max_docs=max_docs,
                      judged_only=judged_only, iprec_rule=iprec_rule, memory_limit_mb=memory_limit_mb,
                      skip_missing=skip_missing, rel_format=rel_format, zscores=zscores, num_docs=num_docs,
                      engine=engine)
    return with_arrays(result)


def evaluate(qrels: Any, run: Any, measures: Iterable[str] = ("official",), *, level: int = 1, complete: bool = False,
             max_docs: int | None = None, judged_only: bool = False, iprec_rule: str = "v10",
             memory_limit_mb: float | None = None, skip_missing: bool = False, rel_format: str = "qrels",
             zscores: str | Path | None = None, num_docs: int = 0, engine: str = "auto") -> TrecResult:
    """:func:`evaluate_trec`, with per-topic values as lists where the small-file path ran (the
    command line's entry: numpy is not imported for small files)."""
    check_options(max_docs, iprec_rule, memory_limit_mb)
    measures = list(measures)
    if rel_format not in REL_FORMATS:
        raise TrecMeasureError(f"unknown rel_info format {rel_format!r}: one of {', '.join(REL_FORMATS)} "
                               "(trec_eval: Illegal rel_format)", exit_code=EXIT_FILE)
    if engine not in ENGINES:
        raise InvalidParameterError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    files = isinstance(qrels, (str, Path)) and isinstance(run, (str, Path))
    ours = any("@" in m or "(" in m for m in measures)
    if engine == "python" and not files:
        raise InvalidParameterError("engine='python' reads files: give the qrels and the run as paths")
    if engine == "python" and ours:
        raise InvalidParameterError("engine='python' computes trec_eval's measures only (ragmeter's, such as mrr@10, "
                                    "run on the arrow engine)")
    table = None
    if zscores is not None:  # read first: a file it cannot read fails before a long evaluation
        from ragmeter.trec.zscores import read_zscores, to_zscores

        table = read_zscores(str(zscores))
    if rel_format != "qrels":
        if ours:
            raise InvalidParameterError(f"-R {rel_format} computes trec_eval's measures only (ragmeter's, such as "
                                        "mrr@10, need a qrels file)")
        if not files:
            raise InvalidParameterError(f"rel_format={rel_format!r} reads files: give the judgments and the run as "
                                        "paths")
        result = _by_format(str(qrels), str(run), measures, rel_format, level=level, complete=complete,
                            max_docs=max_docs, judged_only=judged_only, skip_missing=skip_missing)
    elif engine == "python" or (engine == "auto" and files and not ours and memory_limit_mb is None
                                and (_small(str(run), str(qrels)) or not arrow_installed())):
        from ragmeter.trec.lean import evaluate_lean

        result = evaluate_lean(str(qrels), str(run), measures, level=level, complete=complete, max_docs=max_docs,
                               judged_only=judged_only, iprec_rule=iprec_rule, skip_missing=skip_missing,
                               num_docs=num_docs)
    else:
        result = _vectorised(qrels, run, measures, level=level, complete=complete, max_docs=max_docs,
                             judged_only=judged_only, iprec_rule=iprec_rule, memory_limit_mb=memory_limit_mb,
                             skip_missing=skip_missing, num_docs=num_docs)
    return result if table is None else to_zscores(result, table)


def _small(run: str, qrels: str) -> bool:
    from ragmeter.trec.lean import is_small

    return is_small(run, qrels)


def _by_format(qrels: str, run: str, measures: list[str], rel_format: str, **options: Any) -> TrecResult:
    if rel_format == "qrels_jg":
        from ragmeter.trec.judgment_groups import evaluate_groups

        return evaluate_groups(qrels, run, measures, **options)
    from ragmeter.trec.prefs_measures import evaluate_prefs

    options = {k: v for k, v in options.items() if k in ("complete", "max_docs", "skip_missing")}
    return evaluate_prefs(qrels, run, measures, qrels_layout=rel_format == "qrels_prefs", **options)


def _vectorised(qrels: Any, run: Any, measures: list[str], *, memory_limit_mb: float | None,
                **options: Any) -> TrecResult:
    require_arrow("ragmeter's measures, such as mrr@10" if any("@" in m or "(" in m for m in measures) else
                  "a memory limit" if memory_limit_mb is not None else
                  "qrels and runs given as objects" if not isinstance(run, (str, Path)) else "the arrow engine")
    from ragmeter.trec.in_memory import evaluate_in_memory

    if memory_limit_mb is not None and isinstance(run, (str, Path)):
        from ragmeter.trec.partitioned import evaluate_trec_streaming, fits_in_memory

        if not fits_in_memory(run, memory_limit_mb):
            return evaluate_trec_streaming(qrels, run, measures, memory_limit_mb=memory_limit_mb, **options)
    return evaluate_in_memory(qrels, run, measures, **options)


def with_arrays(result: TrecResult) -> TrecResult:
    """``result`` with its per-topic values as numpy arrays (relstring's as an object array)."""
    import numpy as np

    per_topic = {n: v if isinstance(v, np.ndarray) else
                 np.array(v, dtype=object if result.kinds[n] == "relstring" else np.float64)
                 for n, v in result.per_topic.items()}
    result.per_topic = per_topic
    return result
