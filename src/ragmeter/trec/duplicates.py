"""Refuse a document listed twice for one topic, as trec_eval does, without hashing 10M strings.

Each docno gets a 32-bit fingerprint from its first eight bytes (masked to its length) and,
when longer, its last eight, read straight from Arrow's string buffers (a docno of up to 16
bytes is covered whole).
Fingerprints are sorted within each topic (rows of a padded block; numpy's SIMD sort is
fast on short rows) and two equal neighbours make that topic a *candidate*. Only
candidates are checked exactly, on the strings, so a fingerprint collision costs a little
time and never a wrong answer.

Measured on 10,000 topics x 1,000 documents (2 cores): 0.11 s, where Arrow's exact
``count_distinct`` per topic took 0.37 s and a hash of the whole column 2 s.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragmeter.trec.blocks import padded_groups
from ragmeter.trec.errors import EXIT_TOPIC, TrecInputError

CHUNK_CELLS = 1 << 14  # fingerprints sorted at once; measured on 10M rows: 2^12 0.25 s, 2^13 0.13, 2^14 0.11, 2^15 0.18
_ALL = np.uint64(2**64 - 1)
_PAD = np.uint32(2**32 - 1)  # padding of short topics; real fingerprints are clamped below it
_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F))


def refuse_duplicates(docno: pa.Array | pa.ChunkedArray, starts: np.ndarray, counts: np.ndarray,
                      block_topic: np.ndarray, topics: list[str], run_name: str) -> None:
    """Raise naming the first document that appears twice within one topic's span
    ``docno[starts[i]:starts[i] + counts[i]]`` (spans in storage order, any row order inside)."""
    if pa.types.is_large_string(docno.type) or len(docno) == 0:
        words = None  # 64-bit offsets: only from the Python API, small; check exactly
    else:
        words = _Words(docno)
    chunks = padded_groups(counts, CHUNK_CELLS)
    half = len(chunks) // 2

    def candidates(part: list[tuple[int, int]]) -> list[int]:
        found: list[int] = []
        for a, b in part:
            if words is None:
                found.extend(range(a, b))
            else:
                found.extend(a + int(i) for i in _colliding(words, starts[a:b], counts[a:b]))
        return found

    with ThreadPoolExecutor(max_workers=2) as pool:  # numpy releases the GIL in the sorts and gathers
        suspects = [i for part in pool.map(candidates, [chunks[:half], chunks[half:]]) for i in part]
    for i in suspects:
        span = docno.slice(int(starts[i]), int(counts[i]))
        if pc.count_distinct(span).as_py() != counts[i]:
            values = pc.value_counts(span)
            dup = next(v["values"].as_py() for v in values if v["counts"].as_py() > 1)
            raise TrecInputError(f"document {dup!r} appears twice for topic {topics[block_topic[i]]!r}",
                                 file=run_name, exit_code=EXIT_TOPIC,
                                 fix="give each document one line per topic (trec_eval refuses duplicates too)")


class _Words:
    """Fingerprints of a string column, read from each chunk's own buffers (no concatenation)."""

    def __init__(self, docno: pa.Array | pa.ChunkedArray) -> None:
        chunks = docno.chunks if isinstance(docno, pa.ChunkedArray) else [docno]
        self.parts = [_Buffer(c) for c in chunks]
        self.bounds = np.cumsum([0] + [len(c) for c in chunks])

    def fingerprints(self, first: int, last: int) -> np.ndarray:
        out = [np.zeros(0, np.uint32)]
        i = int(np.searchsorted(self.bounds, first, side="right")) - 1
        while first < last:
            stop = min(last, int(self.bounds[i + 1]))
            out.append(self.parts[i].fingerprints(first - int(self.bounds[i]), stop - int(self.bounds[i])))
            first, i = stop, i + 1
        return out[1] if len(out) == 2 else np.concatenate(out)


class _Buffer:
    """Unaligned little-endian 8-byte reads from one string array's data buffer, zero-copy."""

    def __init__(self, docno: pa.StringArray) -> None:
        _, offsets, data = docno.buffers()
        self.offsets = np.frombuffer(offsets, dtype=np.int32)[docno.offset:docno.offset + len(docno) + 1]
        self.raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
        if len(self.raw) < 8:
            self.raw = np.concatenate([self.raw, np.zeros(8, np.uint8)])
        self.view = np.ndarray(shape=(len(self.raw) - 7,), dtype="<u8", buffer=self.raw, strides=(1,))

    def fingerprints(self, first: int, last: int) -> np.ndarray:
        """32-bit fingerprints of strings first..last-1: a docno's first eight bytes (masked
        to its length) and, when longer, its last eight. Equal strings always get equal
        fingerprints; unequal ones rarely do."""
        start, end = self.offsets[first:last], self.offsets[first + 1:last + 1]
        length = end - start
        edge = start > len(self.view) - 1  # in the buffer's last seven bytes: read below, one by one
        safe_start = np.minimum(start, len(self.view) - 1) if edge.any() else start
        head = self.view[safe_start]
        head &= _ALL >> ((8 - np.minimum(length, 8)) * 8).astype(np.uint64)  # shift 64 gives 0 in numpy
        tail = self.view[np.maximum(end - 8, 0)]
        tail *= length > 8  # a docno of up to 8 bytes is all in its head
        if edge.any():
            for i in np.flatnonzero(edge).tolist():
                text = self.raw[start[i]:end[i]].tobytes()
                head[i] = int.from_bytes(text[:8], "little")
                tail[i] = int.from_bytes(text[-8:], "little") if len(text) > 8 else 0
        head *= _MIX[0]
        tail *= _MIX[1]
        head ^= tail
        return (head >> np.uint64(32)).astype(np.uint32)


def _colliding(words: _Words, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Indices (into ``starts``) of topics with two equal fingerprints. Spans are consecutive.
    Padding sorts last and is never compared with itself (a clamped real fingerprint can
    only make one more candidate)."""
    first, last = int(starts[0]), int(starts[-1] + counts[-1])
    fp = words.fingerprints(first, last)
    width = int(counts.max(initial=0))
    if width == 0:
        return np.zeros(0, np.int64)
    if (counts == width).all():
        block = fp.reshape(len(counts), width)
    else:
        block = np.full((len(counts), width), _PAD)
        block[np.arange(width)[None, :] < counts[:, None]] = np.minimum(fp, _PAD - 1)
    block.sort(axis=1)
    same = (block[:, 1:] == block[:, :-1]) & (block[:, 1:] != _PAD)
    return np.flatnonzero(same.any(axis=1))
