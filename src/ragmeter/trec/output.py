"""trec_eval's text output: ``%-22s\\t%s\\t%6.4f`` per line, topics first (with -q), then ``all``.

Values print as C's printf prints them: a NaN (trec_eval's 0.0 / 0.0, sign bit set on x86-64)
as ``  -nan``, an infinity as ``   inf``; counts as integers; relstring as ``'...'`` (per topic
only). With z-scores (``-Z``) every number prints as a float and its line starts with ``Z``
(not runid's nor relstring's).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from ragmeter.trec.result import TrecResult

SUMMARY_ONLY = ("runid", "num_q", "gm")


def _number(value) -> str:
    if math.isnan(value):  # trec_eval's NaNs come from 0.0 / 0.0: always -nan on x86-64
        return "  -nan"
    return f"{value:6.4f}"


def _line(name: str, topic: str, kind: str, value, zscores: bool) -> str:
    if kind == "runid":
        return f"{name:<22}\t{topic}\t{value}"
    if kind == "relstring":
        return f"{name:<22}\t{topic}\t'{value}'"
    if zscores:
        return f"Z{name:<22}\t{topic}\t{_number(value)}"
    if kind in ("count", "num_q"):
        return f"{name:<22}\t{topic}\t{int(value)}"
    return f"{name:<22}\t{topic}\t{_number(value)}"


def lines(result: TrecResult, *, per_query: bool = False, summary: bool = True) -> Iterator[str]:
    """``per_query``: -q; ``summary=False``: -n (no ``all`` lines)."""
    z = result.zscores
    if per_query:
        columns = [(name, kind, result.per_topic[name]) for name, kind in result.kinds.items()
                   if kind not in SUMMARY_ONLY]
        columns = [(name, kind, values.tolist() if hasattr(values, "tolist") else values)
                   for name, kind, values in columns]
        for i, topic in enumerate(result.topics):
            for name, kind, values in columns:
                yield _line(name, topic, kind, values[i], z)
    if summary:
        for name, kind in result.kinds.items():
            if kind != "relstring":
                yield _line(name, "all", kind, result.mean(name), z)


def json_ready(value):
    """``value`` with every NaN or infinity (trec_eval's ``-nan`` and ``inf``) as None: JSON has
    no such numbers, and strict parsers refuse Python's ``NaN`` token."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_ready(v) for v in value]
    return value
