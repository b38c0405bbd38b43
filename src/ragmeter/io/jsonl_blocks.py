"""Reading datasets larger than memory: samples in blocks, and a first pass that checks ids
and computes the fingerprints before anything is scored.

JSONL only (one sample per line; conversations and CSV need the in-memory reader). Memory
is bounded by the block size plus 8 bytes per sample for the duplicate-id check. The file is
read ``CHUNK_BYTES`` of whole lines at a time; a chunk of plain label records goes through the
columnar reader (:mod:`ragmeter.io.label_file`: one msgspec call, fingerprints from columns),
any other chunk line by line, with the same samples and the same errors.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterable, Iterator
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.gc_pause import gc_paused
from ragmeter.core.sample import Sample
from ragmeter.io.corpus import attach_texts
from ragmeter.io.dataset import Dataset, Fingerprints
from ragmeter.io.json_text import BOM, decode_json
from ragmeter.io.label_file import LabelFile, decode_part
from ragmeter.io.rows import RowReader

#: About this many bytes of whole lines are read, decoded and checked at a time.
CHUNK_BYTES = 1 << 21


def _records(path: str) -> Iterator[tuple[int, Any]]:
    with open(path, "rb") as f:
        yield from _decoded(f, 1, path)


def _decoded(lines: Iterable[bytes], first: int, path: str) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of the lines numbered from ``first``; blank lines skipped."""
    for number, raw in enumerate(lines, start=first):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInputError(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})",
                                    file=path, line=number, fix="save the file as UTF-8") from None
        if number == 1 and line.startswith(BOM):
            line = line[1:]  # as read_text does for the in-memory reader
        if not line.strip():
            continue
        yield number, decode_json(line, file=path, line=number)


def _line_chunks(path: str) -> Iterator[tuple[int, bytes]]:
    """``(number of the first line, whole lines)`` of about ``CHUNK_BYTES`` each."""
    with open(path, "rb") as f:
        number = 1
        while lines := f.readlines(CHUNK_BYTES):
            yield number, b"".join(lines)
            number += len(lines)


def _plain_part(number: int, chunk: bytes) -> LabelFile | None:
    """The columnar reader's columns of a chunk, or None when some line is not a plain label record."""
    if number == 1 and chunk.startswith(BOM.encode()):
        chunk = chunk[3:]
    return decode_part(chunk)


def _samples(path: str, reader: RowReader) -> Iterator[Sample]:
    """Every sample of the file in order: a chunk of plain label records through the columnar
    reader, any other chunk line by line (the same samples, the same errors)."""
    for number, chunk in _line_chunks(path):
        part = _plain_part(number, chunk)
        if part is not None:
            yield from part.samples(reader.chunks)  # one Chunk per id for the whole file, as RowReader
        else:
            for line, rec in _decoded(io.BytesIO(chunk), number, path):
                yield reader.sample(rec, line)


def _parts(path: str, reader: RowReader) -> Iterator[LabelFile | list[Sample]]:
    """Each chunk of the file: its columns (plain label records), or its samples read line by line."""
    for number, chunk in _line_chunks(path):
        part = _plain_part(number, chunk)
        if part is not None:
            yield part
        else:
            yield [reader.sample(rec, line) for line, rec in _decoded(io.BytesIO(chunk), number, path)]


def iter_block_datasets(path: str | Path, block: int, *, corpus: dict | None = None) -> Iterator[Dataset]:
    """The file in datasets of ``block`` samples (the last one shorter), the samples
    :func:`iter_blocks` gives; a block made of plain label records only is held as columns
    (its samples built on access, sharing one ``Chunk`` per id with the whole file). The
    fingerprints are left empty (the caller has the file's, from :func:`scan`)."""
    path = str(path)
    if corpus:
        for samples in iter_blocks(path, block, corpus=corpus):
            yield Dataset(samples=tuple(samples), path=path, fingerprint="")
        return
    reader = RowReader(path, track_ids=False)
    pieces: list[LabelFile | list[Sample]] = []
    size = 0
    for part in _parts(path, reader):
        n = len(part.columns) if isinstance(part, LabelFile) else len(part)
        start = 0
        while start < n:
            stop = min(n, start + block - size)
            pieces.append(_cut(part, start, stop))
            size += stop - start
            start = stop
            if size >= block:
                yield _block_dataset(path, pieces, reader)
                pieces, size = [], 0
    if pieces:
        yield _block_dataset(path, pieces, reader)


def _cut(part: LabelFile | list[Sample], start: int, stop: int) -> LabelFile | list[Sample]:
    """Records ``start:stop`` of a part."""
    return part[start:stop] if not isinstance(part, LabelFile) else part.cut(start, stop)


def _block_dataset(path: str, pieces: list[LabelFile | list[Sample]], reader: RowReader) -> Dataset:
    """One block's dataset: columns when every piece is plain label records, else its samples."""
    files = [p for p in pieces if isinstance(p, LabelFile)]
    if len(files) == len(pieces):
        joined = LabelFile.joined(files)
        return Dataset(samples=joined.samples(reader.chunks), path=path, fingerprint="", columns=joined.columns)
    samples = tuple(chain.from_iterable(p.samples(reader.chunks) if isinstance(p, LabelFile) else p for p in pieces))
    return Dataset(samples=samples, path=path, fingerprint="")


def iter_blocks(path: str | Path, block: int, *, corpus: dict | None = None) -> Iterator[list[Sample]]:
    path = str(path)
    reader = RowReader(path, track_ids=False)
    out: list[Sample] = []
    for sample in _samples(path, reader):
        out.append(sample)
        if len(out) >= block:
            yield attach_texts(out, corpus) if corpus else out
            out = []
    if out:
        yield attach_texts(out, corpus) if corpus else out


def _scan_plain(path: str) -> tuple[str, str, int] | None:
    """:func:`scan` of a file of plain label records, from columns a chunk at a time; None for
    any other file, or two ids alike (a duplicate, or a hash collision the general scan sorts out)."""
    full, test = hashlib.sha256(), hashlib.sha256()
    hashes = []
    try:
        for number, chunk in _line_chunks(path):
            with gc_paused():
                part = _plain_part(number, chunk)
                if part is None:
                    return None
                part.hash_into(full, test)
            hashes.append(np.fromiter(map(hash, part.columns.ids), dtype=np.int64, count=len(part.columns)))
    except OSError:
        return None
    count = sum(map(len, hashes))
    if count == 0:
        return None
    ids = np.sort(np.concatenate(hashes))
    if bool((ids[1:] == ids[:-1]).any()):
        return None
    return full.hexdigest()[:16], test.hexdigest()[:16], count


def scan(path: str | Path, *, corpus: dict | None = None) -> tuple[str, str, int]:
    """(fingerprint, test-set fingerprint, samples) of the whole file, after checking ids are unique.

    Equal to ``load_dataset(path).fingerprint`` and ``.testset_fingerprint``."""
    path = str(path)
    if corpus is None:
        plain = _scan_plain(path)
        if plain is not None:
            return plain
    prints = Fingerprints()
    ids: list[int] = []
    count = 0
    for samples in iter_blocks(path, 10_000, corpus=corpus):
        for s in samples:
            prints.add(s)
            ids.append(int.from_bytes(hashlib.blake2b(s.id.encode(), digest_size=8).digest(), "big", signed=True))
            count += 1
    if count == 0:
        raise InvalidInputError("the file is empty", file=path, fix="give a file with at least one record")
    hashes = np.sort(np.array(ids, dtype=np.int64))
    dup = hashes[1:][hashes[1:] == hashes[:-1]]
    if len(dup):
        _name_duplicate(path, set(dup.tolist()))
    return (*prints.digests(), count)


def _name_duplicate(path: str, suspects: set[int]) -> None:
    first: dict[str, int] = {}
    for line, rec in _records(path):
        sid = str(rec.get("id")) if isinstance(rec, dict) else None
        if sid is None:
            continue
        if int.from_bytes(hashlib.blake2b(sid.encode(), digest_size=8).digest(), "big", signed=True) in suspects:
            if sid in first:
                raise InvalidInputError(f"duplicate sample id (first seen on line {first[sid]})", file=path, line=line,
                                        record=sid, field="id", fix="give every sample a unique id")
            first[sid] = line
