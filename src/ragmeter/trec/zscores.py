"""Z-scores (``-Z FILE``): each per-topic value as its distance from a reference mean in standard
deviations, as trec_eval's ``get_zscores.c`` and ``convert_zscores.c`` compute it.

The file has lines ``qid measure mean stddev`` (no comments). For each topic and each value
trec_eval holds for it (a gm_* measure holds the log of max(value, 1e-5)): z = (value - mean)
/ stddev; 0 when stddev is 0 and the value is the mean; -1000000 when the topic or the measure
is not in the file, or stddev is 0 and the value differs. trec_eval finds them by binary
search over the lines sorted by (qid, measure), one step past each list's end (which can find
the next topic's first measure: so does this). The summaries are then taken over the z-scores
(the sum for counts, exp of the mean for gm_*); num_q, and num_rel under -c, keep their raw
summaries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

from ragmeter.core.errors import InvalidInputError
from ragmeter.trec.errors import TrecInputError
from ragmeter.trec.lines import existing, parse_level, text
from ragmeter.trec.result import MIN_GEO_MEAN, TrecResult

MISSING = -1000000.0
EXIT_ZSCORES = 255  # trec_eval returns UNDEF (-1) from main when it cannot read the file


@dataclass(frozen=True)
class ZTable:
    """The lines sorted by (qid, measure) as bytes, and each qid's [start, stop)."""

    lines: list[tuple[bytes, bytes, float, float]]
    groups: list[tuple[bytes, int, int]]

    def find(self, qid: str, measure: str) -> tuple[float, float] | None:
        q, m = qid.encode(), measure.encode()
        g = _search(len(self.groups), lambda i: self.groups[i][0] if i < len(self.groups) else None, q)
        if g is None:
            return None
        _, start, stop = self.groups[g]
        i = _search(stop - start, lambda i: self.lines[start + i][1] if start + i < len(self.lines) else None, m)
        return None if i is None else self.lines[start + i][2:]

    def has_topic(self, qid: str) -> bool:
        return _search(len(self.groups), lambda i: self.groups[i][0] if i < len(self.groups) else None,
                       qid.encode()) is not None


def _search(end: int, key_at, key: bytes) -> int | None:
    """convert_zscores.c's binary search: ``end`` is the count, not the last index."""
    start = 0
    while start <= end:
        current = (start + end) // 2
        found = key_at(current)
        if found is None:  # past the pool: memory that holds no such key
            return None
        if key < found:
            end = current - 1
        elif key > found:
            start = current + 1
        else:
            return current
    return None


def read_zscores(path: str) -> ZTable:
    try:
        path = existing(path)
    except TrecInputError as exc:
        exc.exit_code = EXIT_ZSCORES
        raise
    except InvalidInputError as exc:  # not found, a folder: trec_eval cannot read it either
        raise TrecInputError(exc.problem, file=str(path), exit_code=EXIT_ZSCORES, fix=exc.fix) from None
    lines = []
    data = Path(path).read_bytes()
    for number, line in enumerate(data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"), start=1):
        parts = line.split()
        if len(parts) != 4:
            raise TrecInputError(f"expected 4 fields (qid measure mean stddev), got {len(parts)}", file=path,
                                 line=number, exit_code=EXIT_ZSCORES,
                                 fix="one 'qid measure mean stddev' per line (trec_eval refuses it too)")
        text(parts[0], path, number, "qid")
        lines.append((parts[0], parts[1], parse_level(parts[2], path, number, "mean"),
                      parse_level(parts[3], path, number, "stddev")))
    lines.sort(key=lambda x: (x[0], x[1]))
    groups: list[tuple[bytes, int, int]] = []
    for i, (q, *_) in enumerate(lines):
        if not groups or groups[-1][0] != q:
            groups.append((q, i, i))
        groups[-1] = (q, groups[-1][1], i + 1)
    return ZTable(lines, groups)


def z(value: float, found: tuple[float, float] | None) -> float:
    if found is None:
        return MISSING
    mean, stddev = found
    if stddev:
        return (value - mean) / stddev
    return 0.0 if value == mean else MISSING


def to_zscores(result: TrecResult, table: ZTable) -> TrecResult:
    """``result`` with every per-topic number converted (gm_*: the log of the value first)."""
    per_topic: dict[str, list] = {}
    for name, values in result.per_topic.items():
        kind = result.kinds[name]
        raw = values.tolist() if hasattr(values, "tolist") else list(values)
        if kind == "relstring":
            per_topic[name] = raw
            continue
        if kind == "gm":
            raw = [math.log(max(v, MIN_GEO_MEAN)) for v in raw]
        per_topic[name] = [z(v, table.find(topic, name)) if table.has_topic(topic) else MISSING
                           for topic, v in zip(result.topics, raw)]
    return replace(result, per_topic=per_topic, zscores=True)
