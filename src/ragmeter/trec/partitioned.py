"""TREC evaluation of runs larger than memory: hash-partition by topic, evaluate each part.

The run is read once in blocks (Arrow's streaming CSV reader for clean files, a line reader
otherwise) and each row is written to one of K temporary Arrow IPC files chosen by its
topic (topic index mod K), with K = ceil(expected peak / memory limit). Each part, with the
qrels of its topics only, is then evaluated by the in-memory path; every topic lives in
exactly one part, so per-topic values are the in-memory ones, and the summaries are taken
over all topics in trec_eval's order: the same numbers, bit for bit. The refusals that need
the whole run (a qrels topic it misses, a topic trec_eval cannot evaluate) are made before
the first part is evaluated.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from ragmeter.trec.arrow import from_numpy, to_numpy
from ragmeter.trec.errors import EXIT_NO_TOPIC, TrecInputError
from ragmeter.trec.evaluate import (
    TrecResult,
    _split,
    check_options,
    measure,
    needs_rankings,
    refuse_missing,
    refuse_unscorable,
)
from ragmeter.trec.ranking import align
from ragmeter.trec.reader import (
    Qrels,
    Run,
    clean_delimiter,
    last_runid,
    read_qrels,
    read_run,
    run_lines,
    run_rows,
)

EXPANSION = 1.5  # peak memory of the in-memory path / run file size, measured (358 MB -> 522 MB)
SCHEMA = pa.schema([("qid", pa.string()), ("docno", pa.string()), ("score", pa.float64())])


def parts_needed(run_path: str | Path, memory_limit_mb: float) -> int:
    return max(1, math.ceil(os.path.getsize(run_path) * EXPANSION / (memory_limit_mb * 2 ** 20)))


def fits_in_memory(run_path: str | Path, memory_limit_mb: float) -> bool:
    return parts_needed(run_path, memory_limit_mb) == 1


def _fast_batches(path: str, block_bytes: int) -> Iterable[pa.RecordBatch]:
    """Arrow's streaming reader on a clean file; raises ``pa.ArrowInvalid`` at the first
    block it cannot read as trec_eval would (the caller then starts again, exactly)."""
    delim = clean_delimiter(path)
    if delim is None:
        raise pa.ArrowInvalid("not a clean file")  # comments, odd whitespace, or tabs among spaces
    reader = pcsv.open_csv(
        path, read_options=pcsv.ReadOptions(column_names=["qid", "q0", "docno", "rank", "score", "runid"],
                                            block_size=block_bytes),
        parse_options=pcsv.ParseOptions(delimiter=delim, quote_char=False, escape_char=False),
        convert_options=pcsv.ConvertOptions(column_types={"qid": pa.string(), "docno": pa.string(),
                                                          "score": pa.float64()},
                                            include_columns=["qid", "docno", "score"]))
    for batch in reader:
        if delim == "\t" and any(pc.any(pc.match_substring(batch.column(c), " ")).as_py() for c in ("qid", "docno")):
            raise pa.ArrowInvalid("a field holds a space")  # trec_eval would split it
        if pc.any(pc.is_nan(batch.column("score"))).as_py():
            raise pa.ArrowInvalid("a NaN score")  # the exact reader names its line
        yield batch


def _exact_batches(path: str, block_bytes: int) -> Iterable[pa.RecordBatch]:
    """The line-by-line reader: any whitespace, comments, fields past the sixth."""
    rows: list[tuple[str, str, float]] = []
    for qid, docno, score, _ in run_rows(run_lines(path), path):
        rows.append((qid, docno, score))
        if len(rows) >= 100_000:
            yield pa.RecordBatch.from_arrays([pa.array(c) for c in zip(*rows)], schema=SCHEMA)
            rows = []
    if rows:
        yield pa.RecordBatch.from_arrays([pa.array(c) for c in zip(*rows)], schema=SCHEMA)


def _partition(run_path: str, paths: list[Path], universe: pa.Array, block: int) -> np.ndarray:
    """Write each run row to part (topic index mod K); return which qrels topics the run has.
    A file that turns out not to be clean part-way through is partitioned again from the
    start by the exact reader (the parts are rewritten, so no row is written twice)."""
    k = len(paths)
    for batches in (_fast_batches, _exact_batches):
        writers = [pa.ipc.new_file(str(p), SCHEMA) for p in paths]
        present = np.zeros(len(universe), bool)
        try:
            for batch in batches(run_path, block):
                index = to_numpy(pc.index_in(batch.column("qid"), value_set=universe), null=-1)
                present[index[index >= 0]] = True
                for i in range(k):
                    mask = (index >= 0) & (index % k == i)
                    if mask.any():
                        writers[i].write_batch(batch.filter(from_numpy(mask)))
            return present
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            if batches is _exact_batches:
                raise
            # not clean after all: again, with the exact reader
        finally:
            for w in writers:
                w.close()
    raise AssertionError("unreachable")


def evaluate_trec_streaming(qrels, run_path: str | Path, measures=("official",), *, memory_limit_mb: float,
                            tmpdir: str | None = None, level: int = 1, complete: bool = False,
                            max_docs: int | None = None, judged_only: bool = False, iprec_rule: str = "v10",
                            skip_missing: bool = False) -> TrecResult:
    """``evaluate_trec`` with peak memory bounded by about ``memory_limit_mb``."""
    check_options(max_docs, iprec_rule, memory_limit_mb)
    requests, ours = _split(measures)
    run_path = str(run_path)
    q = qrels if isinstance(qrels, Qrels) else read_qrels(qrels)
    if not Path(run_path).is_file() or os.path.getsize(run_path) == 0:
        read_run(run_path)  # the reader's own error for a missing or empty file
    universe = q.topic_array
    k = parts_needed(run_path, memory_limit_mb)
    block = max(1 << 16, min(1 << 22, int(memory_limit_mb * 2 ** 20 / (4 * EXPANSION))))
    check = needs_rankings(requests, ours)
    with tempfile.TemporaryDirectory(dir=tmpdir, prefix="ragmeter-trec-") as tmp:
        paths = [Path(tmp) / f"part-{i}.arrow" for i in range(k)]
        present = _partition(run_path, paths, universe, block)
        runid = last_runid(run_path)
        topics = universe.to_pylist()
        missing = [t for t, p in zip(topics, present.tolist()) if not p]
        if not complete and not skip_missing:
            refuse_missing(missing, run_path)
        if check:
            refuse_unscorable(q, None if complete or not missing else present)
        pa.default_memory_pool().release_unused()  # hand the reader's freed blocks back before the parts
        q_index = to_numpy(pc.index_in(q.table["qid"], value_set=universe))
        results: list[TrecResult] = []
        for i, path in enumerate(paths):
            part_qrels = Qrels(q.table.filter(from_numpy(q_index % k == i)), q.source)
            if part_qrels.table.num_rows == 0:
                continue
            table = pa.ipc.open_file(str(path)).read_all()
            if table.num_rows == 0 and not complete:
                continue
            rankings = align(part_qrels, Run(table, runid, run_path), max_docs=max_docs, judged_only=judged_only,
                             complete=complete, run_name=run_path, check=check)
            del table
            if rankings.topics:
                results.append(measure(rankings, requests, ours, level=level, iprec_rule=iprec_rule, runid=runid,
                                       num_rel_all=None))
            del rankings
            pa.default_memory_pool().release_unused()
    if not results:
        raise TrecInputError("no topic has both results and judgments (trec_eval: exit 7)", file=run_path,
                             exit_code=EXIT_NO_TOPIC, fix="check that both files use the same topic ids")
    num_rel_all = int((to_numpy(q.table["rel"]) > 0).sum()) if complete else None
    return merge(results, runid, missing, num_rel_all)


def merge(results: list[TrecResult], runid: str, missing: list[str], num_rel_all: int | None) -> TrecResult:
    """One result from parts that hold disjoint topics, in trec_eval's topic order."""
    topics = [t for r in results for t in r.topics]
    order = np.array(sorted(range(len(topics)), key=lambda i: topics[i].encode()), dtype=np.int64)
    kinds = results[0].kinds
    per_topic = {n: np.concatenate([r.per_topic[n] for r in results])[order] for n in results[0].per_topic}
    return TrecResult([topics[i] for i in order], per_topic, kinds, runid, missing=missing, num_rel_all=num_rel_all)
