"""Reading datasets larger than memory: samples in blocks, and a first pass that checks ids
and computes the fingerprints before anything is scored.

JSONL only (one sample per line; conversations and CSV need the in-memory reader). Memory
is bounded by the block size plus 8 bytes per sample for the duplicate-id check.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.sample import Sample
from ragmeter.io.corpus import attach_texts
from ragmeter.io.dataset import Fingerprints
from ragmeter.io.json_text import BOM, decode_json
from ragmeter.io.rows import RowReader


def _records(path: str) -> Iterator[tuple[int, Any]]:
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
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


def iter_blocks(path: str | Path, block: int, *, corpus: dict | None = None) -> Iterator[list[Sample]]:
    path = str(path)
    reader = RowReader(path, track_ids=False)
    out: list[Sample] = []
    for line, rec in _records(path):
        out.append(reader.sample(rec, line))
        if len(out) >= block:
            yield attach_texts(out, corpus) if corpus else out
            out = []
    if out:
        yield attach_texts(out, corpus) if corpus else out


def scan(path: str | Path, *, corpus: dict | None = None) -> tuple[str, str, int]:
    """(fingerprint, test-set fingerprint, samples) of the whole file, after checking ids are unique.

    Equal to ``load_dataset(path).fingerprint`` and ``.testset_fingerprint``."""
    path = str(path)
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
