"""TREC evaluation within a memory limit: topic buckets on disk, evaluated a few at a time.

1. The run is read once, in chunks sized to the budget (Arrow's CSV parser on each chunk for a
   clean file, the exact line reader otherwise), and each row is written to one of B bucket
   files (Arrow IPC) by its topic: topic index mod B.
2. Buckets are evaluated in parts (consecutive buckets), each by the in-memory path with the
   qrels of its topics. The first part is sized from an estimate (``GUESS``: the in-memory
   path's peak per run-file byte) at half the budget; after every part the process's
   high-water mark (``getrusage``) gives that part's peak exactly (or a bound, when an earlier
   step set the mark), the cost per row is updated, and the next part is sized to the budget.
   A bucket larger than a part may be is split again by a finer topic hash (index mod B*S).

Budget = ``HEADROOM`` x the limit - the memory the process holds when it starts. Every topic is
in exactly one part, so per-topic values are the in-memory ones, and the summaries are taken
over all topics in trec_eval's order: the same numbers, bit for bit. The refusals that need the
whole run (a qrels topic it misses, a topic trec_eval cannot evaluate) are made before the
first part is evaluated.
"""

from __future__ import annotations

import math
import os
import resource
import sys
import tempfile
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragmeter.core.errors import InvalidParameterError
from ragmeter.trec.arrow import from_numpy, to_numpy
from ragmeter.trec.errors import EXIT_NO_TOPIC, TrecInputError
from ragmeter.trec.in_memory import (
    check_options,
    evaluated_topics,
    measure,
    needs_rankings,
    refuse_unscorable,
    split_measures,
    stale_levels,
)
from ragmeter.trec.ranking import align, positions_in
from ragmeter.trec.reader import (
    RUN_KEEP,
    RUN_NAMES,
    RUN_TYPES,
    Qrels,
    TrecRun,
    clean_delimiter,
    last_runid,
    parse_clean,
    read_qrels,
    read_run,
    run_lines,
    run_rows,
)
from ragmeter.trec.refusals import refuse_missing
from ragmeter.trec.result import TrecResult

GUESS = 3.0  # peak bytes of the in-memory path per run-file byte, until a part is measured: measured 1.4 for a
# run written topic by topic in rank order, 1.9 sorted as text, 2.7 shuffled (10M lines; process included)
HEADROOM = 0.9  # the share of the limit planned for; the rest absorbs what a part's estimate misses
MAX_BUCKETS = 256  # files open at once while partitioning
SCHEMA = pa.schema([("qid", pa.string()), ("docno", pa.string()), ("score", pa.float64())])
MB = 2**20


def rss_mb() -> float:
    """Resident memory now (Linux ``/proc/self/statm``; elsewhere the high-water mark)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MB
    except OSError:
        return peak_mb()


def peak_mb() -> float:
    """The process's resident high-water mark (what ``/usr/bin/time`` and ``wait4`` report)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / MB if sys.platform == "darwin" else peak / 1024


def fits_in_memory(run_path: str | Path, memory_limit_mb: float) -> bool:
    """Whether the in-memory path's estimated peak stays within the limit."""
    return rss_mb() + GUESS * os.path.getsize(run_path) / MB <= HEADROOM * memory_limit_mb


@dataclass(frozen=True)
class Bucket:
    """Run rows of the topics whose index i has i % modulus == remainder."""

    path: Path
    modulus: int
    remainder: int
    rows: int


def _chunks(path: str, size: int) -> Iterator[bytes]:
    """The file in pieces of about ``size`` bytes, each ending at a line end."""
    carry = b""
    with open(path, "rb") as f:
        while True:
            data = f.read(size)
            if not data:
                if carry:
                    yield carry
                return
            data = carry + data
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                carry = data
                continue
            yield data[:cut]
            carry = data[cut:]


def _fast_tables(path: str, chunk: int) -> Iterator[pa.Table]:
    """Arrow's parser on each chunk of a clean file; raises ``pa.ArrowInvalid`` at the first
    chunk it cannot read as trec_eval would (the caller then starts again, exactly). On one
    thread: memory the parser's pool threads keep is not handed back (measured: 40 MB more after
    10M lines, for no gain in time on two cores). A chunk costs up to about 13 times its size at
    the peak (measured), so chunks are a 24th of the budget."""
    delim = clean_delimiter(path)
    if delim is None:
        raise pa.ArrowInvalid("not a clean file")  # comments, odd whitespace, or tabs among spaces
    for data in _chunks(path, chunk):
        table = parse_clean(pa.py_buffer(data), delim, RUN_NAMES, RUN_KEEP, RUN_TYPES, blank_lines_ok=True,
                            block_size=max(1 << 16, min(1 << 20, chunk // 4)), use_threads=False)
        if table is None or pc.any(pc.is_nan(table["score"])).as_py():
            raise pa.ArrowInvalid("not clean here")  # the exact reader names the line
        yield table


def _exact_tables(path: str, chunk: int) -> Iterator[pa.Table]:
    """The line-by-line reader: any whitespace, comments, fields past the sixth."""
    rows: list[tuple[str, str, float]] = []
    per_table = max(1000, chunk // 100)  # ~100 bytes of Python objects per row
    for qid, docno, score, _ in run_rows(run_lines(path), path):
        rows.append((qid, docno, score))
        if len(rows) >= per_table:
            yield pa.Table.from_arrays([pa.array(c) for c in zip(*rows)], schema=SCHEMA)
            rows = []
    if rows:
        yield pa.Table.from_arrays([pa.array(c) for c in zip(*rows)], schema=SCHEMA)


def _partition(run_path: str, folder: Path, universe: pa.Array, count: int, chunk: int) -> tuple[list[Bucket],
                                                                                                   np.ndarray]:
    """Write each run row to bucket (topic index mod ``count``); return the buckets and which
    qrels topics the run has. A file that turns out not to be clean part-way through is
    partitioned again from the start by the exact reader (the files are rewritten)."""
    for tables in (_fast_tables, _exact_tables):
        paths = [folder / f"bucket-{i}.arrow" for i in range(count)]
        writers = [pa.ipc.new_file(str(p), SCHEMA) for p in paths]
        rows = np.zeros(count, np.int64)
        present = np.zeros(len(universe), bool)
        try:
            for table in tables(run_path, chunk):
                index = to_numpy(pc.index_in(table["qid"], value_set=universe), null=-1).astype(np.int64)
                known = index >= 0
                present[index[known]] = True
                bucket = np.where(known, index % count, count)  # rows of other topics sort last, unwritten
                order = np.argsort(bucket, kind="stable")
                ranked = table.take(from_numpy(order))
                bounds = np.searchsorted(bucket[order], np.arange(count + 1))
                for i in np.flatnonzero(np.diff(bounds)).tolist():
                    writers[i].write_table(ranked.slice(int(bounds[i]), int(bounds[i + 1] - bounds[i])))
                rows += np.diff(bounds)
            return [Bucket(p, count, i, int(n)) for i, (p, n) in enumerate(zip(paths, rows))], present
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            if tables is _exact_tables:
                raise
            # not clean after all: again, with the exact reader
        finally:
            for w in writers:
                w.close()
    raise AssertionError("unreachable")


def _split_bucket(bucket: Bucket, ways: int, universe: pa.Array) -> list[Bucket]:
    """The bucket's rows in ``ways`` finer buckets (index mod modulus*ways), one batch at a time."""
    modulus = bucket.modulus * ways
    remainders = [bucket.remainder + bucket.modulus * s for s in range(ways)]
    paths = [bucket.path.with_name(f"{bucket.path.stem}-{s}.arrow") for s in range(ways)]
    writers = [pa.ipc.new_file(str(p), SCHEMA) for p in paths]
    rows = [0] * ways
    with pa.memory_map(str(bucket.path)) as source:
        reader = pa.ipc.open_file(source)
        for b in range(reader.num_record_batches):
            batch = reader.get_batch(b)
            index = positions_in(batch.column(0), universe).astype(np.int64)
            part = (index // bucket.modulus) % ways
            for s in range(ways):
                mask = part == s
                if mask.any():
                    writers[s].write_batch(batch.filter(from_numpy(mask)))
                    rows[s] += int(mask.sum())
    for w in writers:
        w.close()
    bucket.path.unlink()
    return [Bucket(p, modulus, r, n) for p, r, n in zip(paths, remainders, rows)]


def _read(buckets: list[Bucket]) -> pa.Table:
    """The buckets' rows, each bucket's chunks combined (many small chunks slow the alignment)."""
    tables = []
    for b in buckets:
        with pa.memory_map(str(b.path)) as source:
            tables.append(pa.ipc.open_file(source).read_all().combine_chunks())
    return pa.concat_tables(tables) if tables else SCHEMA.empty_table()


def evaluate_trec_streaming(qrels, run_path: str | Path, measures=("official",), *,
                            memory_limit_mb: float | None = None, max_part_rows: int | None = None,
                            chunk_bytes: int | None = None, tmpdir: str | None = None, level: int = 1,
                            complete: bool = False,
                            max_docs: int | None = None, judged_only: bool = False, iprec_rule: str = "v10",
                            skip_missing: bool = False, num_docs: int = 0) -> TrecResult:
    """``evaluate_trec`` with the process's peak memory at or under ``memory_limit_mb``.
    ``max_part_rows`` (at most that many run rows per part) and ``chunk_bytes`` (the size of
    the pieces the file is read in) are for tests and tuning."""
    check_options(max_docs, iprec_rule, memory_limit_mb)
    requests, ours = split_measures(measures)
    run_path = str(run_path)
    q = qrels if isinstance(qrels, Qrels) else read_qrels(qrels)
    if not Path(run_path).is_file() or os.path.getsize(run_path) == 0:
        read_run(run_path)  # the reader's own error for a missing or empty file
    universe = q.topic_array
    size_mb = os.path.getsize(run_path) / MB
    room = math.inf if memory_limit_mb is None else HEADROOM * memory_limit_mb - rss_mb()
    if room < 16:
        raise InvalidParameterError(f"a memory limit of {memory_limit_mb:g} MB leaves nothing to work with: this "
                                    f"process already holds {rss_mb():.0f} MB (give at least "
                                    f"{math.ceil((rss_mb() + 16) / HEADROOM)} MB)")
    if max_part_rows is not None:
        count = max(2, math.ceil(_lines_estimate(run_path) / max_part_rows))
    else:
        count = math.ceil(GUESS * size_mb / (room / 8))
    count = int(min(max(count, 1), MAX_BUCKETS, len(universe)))
    chunk = chunk_bytes or (int(min(max(room * MB / 24, 1 << 18), 16 << 20)) if math.isfinite(room) else 8 << 20)
    check = needs_rankings(requests, ours)
    with tempfile.TemporaryDirectory(dir=tmpdir, prefix="ragmeter-trec-") as tmp:
        buckets, present = _partition(run_path, Path(tmp), universe, count, chunk)
        runid = last_runid(run_path)
        topics = universe.to_pylist()
        missing = [t for t, p in zip(topics, present.tolist()) if not p]
        if not complete and not skip_missing:
            refuse_missing(missing, run_path)
        if check:
            refuse_unscorable(q, None if complete or not missing else present)
        stale = stale_levels(q, evaluated_topics(q, missing, complete)) if check else {}
        pa.default_memory_pool().release_unused()  # hand the reader's freed blocks back before the parts
        q_index = positions_in(q.table["qid"], universe).astype(np.int64)
        total_rows = max(1, sum(b.rows for b in buckets))
        per_row = GUESS * size_mb / total_rows  # MB of peak per run row, until a part is measured
        measured = False
        pending = deque(buckets)
        results: list[TrecResult] = []
        while pending:
            before, mark = rss_mb(), peak_mb()
            target = (HEADROOM * memory_limit_mb - before) / per_row if memory_limit_mb is not None else math.inf
            target = min(target if measured else target / 2, max_part_rows or math.inf)
            part: list[Bucket] = []
            while pending and (not part or sum(b.rows for b in part) + pending[0].rows <= target):
                part.append(pending.popleft())
            rows = sum(b.rows for b in part)
            if len(part) == 1 and rows > max(target, 1) and _topic_count(part[0], len(universe)) > 1:
                ways = min(64, max(2, math.ceil(2 * rows / max(target, 1))))
                pending.extendleft(reversed(_split_bucket(part[0], ways, universe)))
                continue
            keep = np.zeros(len(q_index), bool)
            for b in part:
                keep |= q_index % b.modulus == b.remainder
            part_qrels = Qrels(q.table.filter(from_numpy(keep)), q.source)
            if part_qrels.table.num_rows == 0 or (rows == 0 and not complete):
                continue
            table = _read(part)
            rankings = align(part_qrels, TrecRun(table, runid, run_path), max_docs=max_docs, judged_only=judged_only,
                             complete=complete, run_name=run_path, check=check)
            del table
            if rankings.topics:
                results.append(measure(rankings, requests, ours, level=level, iprec_rule=iprec_rule, runid=runid,
                                       num_rel_all=None, num_docs=num_docs, stale=stale))
            del rankings
            pa.default_memory_pool().release_unused()
            if rows:
                after = peak_mb()
                if after > mark:  # this part set the high-water mark: its peak, exactly
                    per_row = max(per_row if measured else 0.0, (after - before) / rows)
                    measured = True
                elif not measured:  # its peak was at most the earlier mark: a bound
                    per_row = min(per_row, max(mark - before, 0.0) / rows)
    if not results:
        raise TrecInputError("no topic has both results and judgments (trec_eval: exit 7)", file=run_path,
                             exit_code=EXIT_NO_TOPIC, fix="check that both files use the same topic ids")
    num_rel_all = int((to_numpy(q.table["rel"]) > 0).sum()) if complete else None
    return merge(results, runid, missing, num_rel_all)


def _lines_estimate(path: str) -> int:
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    per_line = max(1, len(head) // max(1, head.count(b"\n")))
    return max(1, os.path.getsize(path) // per_line)


def _topic_count(bucket: Bucket, universe_size: int) -> int:
    """Qrels topics that can fall in the bucket (an upper bound on those it holds)."""
    return len(range(bucket.remainder, universe_size, bucket.modulus))


def merge(results: list[TrecResult], runid: str, missing: list[str], num_rel_all: int | None) -> TrecResult:
    """One result from parts that hold disjoint topics, in trec_eval's topic order."""
    topics = [t for r in results for t in r.topics]
    order = np.array(sorted(range(len(topics)), key=lambda i: topics[i].encode()), dtype=np.int64)
    kinds = results[0].kinds
    per_topic = {n: np.concatenate([r.per_topic[n] for r in results])[order] for n in results[0].per_topic}
    return TrecResult([topics[i] for i in order], per_topic, kinds, runid, missing=missing, num_rel_all=num_rel_all)
