"""TREC evaluation of runs larger than memory: hash-partition by topic, evaluate each part.

The run is read once in blocks (Arrow's streaming CSV reader for clean files, a line reader
otherwise) and each row is written to one of K temporary Arrow IPC files chosen by its
topic (topic index mod K), with K = ceil(expected peak / memory limit). Each part, with the
qrels of its topics only, is then evaluated by the in-memory path; every topic lives in
exactly one part, so per-topic values are the in-memory ones, and the summaries are taken
over all topics in trec_eval's order: the same numbers, bit for bit.
"""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path
from typing import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from ragmeter.core.errors import InvalidInputError
from ragmeter.trec.arrow import from_numpy, to_numpy
from ragmeter.trec.in_memory import evaluate_in_memory
from ragmeter.trec.reader import Qrels, TrecRun, clean_delimiter, fields_by_line, file_contains, read_qrels
from ragmeter.trec.result import TrecResult

EXPANSION = 1.5  # peak memory of the in-memory path / run file size, measured (358 MB -> 522 MB)
SCHEMA = pa.schema([("qid", pa.string()), ("docno", pa.string()), ("score", pa.float64())])


def parts_needed(run_path: str | Path, memory_limit_mb: float) -> int:
    return max(1, math.ceil(os.path.getsize(run_path) * EXPANSION / (memory_limit_mb * 2 ** 20)))


def _fast_batches(path: str, block_bytes: int) -> Iterable[pa.RecordBatch]:
    """Arrow's streaming reader on a clean file; raises ``pa.ArrowInvalid`` at the first
    block it cannot read as trec_eval would (the caller then starts again, exactly)."""
    found = file_contains(path, (b"\t", b"\n#"))
    delim = clean_delimiter(path, found)
    if delim is None or (delim == " " and found[b"\t"]):
        raise pa.ArrowInvalid("not a clean file")  # comments, or tabs among spaces
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
        yield batch


def _exact_batches(path: str, block_bytes: int) -> Iterable[pa.RecordBatch]:
    """The line-by-line reader: any whitespace, comments, fields past the sixth."""
    rows: list[tuple] = []
    for number, parts in fields_by_line(path):
        if len(parts) < 6:
            raise InvalidInputError(f"expected 6 fields (qid Q0 docno rank score runid), got {len(parts)}",
                                    file=path, line=number)
        try:
            rows.append((parts[0], parts[2], float(parts[4])))
        except ValueError:
            raise InvalidInputError(f"score {parts[4]!r} is not a number", file=path, line=number,
                                    field="score") from None
        if len(rows) >= 100_000:
            yield pa.RecordBatch.from_arrays([pa.array(c) for c in zip(*rows)], schema=SCHEMA)
            rows = []
    if rows:
        yield pa.RecordBatch.from_arrays([pa.array(c) for c in zip(*rows)], schema=SCHEMA)


def _partition(run_path: str, paths: list[Path], universe: pa.Array, block: int) -> None:
    """Write each run row to part (topic index mod K). A file that turns out not to be clean
    part-way through is partitioned again from the start by the exact reader (the parts are
    rewritten, so no row is written twice)."""
    k = len(paths)
    for batches in (_fast_batches, _exact_batches):
        writers = [pa.ipc.new_file(str(p), SCHEMA) for p in paths]
        try:
            for batch in batches(run_path, block):
                if pc.any(pc.is_nan(batch.column("score"))).as_py():
                    raise InvalidInputError("a score is NaN", file=run_path, field="score",
                                            fix="give every document a real score")
                index = to_numpy(pc.index_in(batch.column("qid"), value_set=universe), null=-1)
                for i in range(k):
                    mask = (index >= 0) & (index % k == i)
                    if mask.any():
                        writers[i].write_batch(batch.filter(from_numpy(mask)))
            return
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            if batches is _exact_batches:
                raise
            # not clean after all: again, with the exact reader
        finally:
            for w in writers:
                w.close()


def evaluate_trec_streaming(qrels, run_path: str | Path, measures=("official",), *, memory_limit_mb: float,
                            tmpdir: str | None = None, **options) -> TrecResult:
    """``evaluate_trec`` with peak memory bounded by about ``memory_limit_mb``; ``options``: those of
    :func:`~ragmeter.trec.in_memory.evaluate_in_memory`."""
    run_path = str(run_path)
    q = qrels if isinstance(qrels, Qrels) else read_qrels(qrels)
    universe = q.topic_array
    k = parts_needed(run_path, memory_limit_mb)
    block = max(1 << 16, min(1 << 22, int(memory_limit_mb * 2 ** 20 / (4 * EXPANSION))))
    with open(run_path, "rb") as f:
        first = f.readline().decode("utf-8", "replace").split()
    runid = first[5] if len(first) > 5 else ""
    with tempfile.TemporaryDirectory(dir=tmpdir, prefix="ragmeter-trec-") as tmp:
        paths = [Path(tmp) / f"part-{i}.arrow" for i in range(k)]
        _partition(str(run_path), paths, universe, block)
        pa.default_memory_pool().release_unused()  # hand the reader's freed blocks back before the parts
        q_index = to_numpy(pc.index_in(q.table["qid"], value_set=universe))
        results: list[TrecResult] = []
        for i, path in enumerate(paths):
            part_qrels = Qrels(q.table.filter(from_numpy(q_index % k == i)), q.source)
            if part_qrels.table.num_rows == 0:
                continue
            table = pa.ipc.open_file(str(path)).read_all()
            if table.num_rows == 0 and not options.get("complete"):
                continue
            results.append(evaluate_in_memory(part_qrels, TrecRun(table, runid), measures, **options))
            del table
            pa.default_memory_pool().release_unused()
    if not results:
        raise InvalidInputError("the run and the qrels have no topic in common", file=run_path,
                                fix="check that both files use the same topic ids")
    return merge(results, runid)


def merge(results: list[TrecResult], runid: str) -> TrecResult:
    """One result from parts that hold disjoint topics, in trec_eval's topic order."""
    topics = [t for r in results for t in r.topics]
    order = np.array(sorted(range(len(topics)), key=lambda i: topics[i].encode()), dtype=np.int64)
    kinds = results[0].kinds
    per_topic = {n: np.concatenate([r.per_topic[n] for r in results])[order] for n in results[0].per_topic}
    return TrecResult([topics[i] for i in order], per_topic, kinds, runid,
                      missing=sorted({m for r in results for m in r.missing}, key=str.encode))
