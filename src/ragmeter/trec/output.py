"""trec_eval's text output: ``%-22s\\t%s\\t%6.4f`` per line, topics first (with -q), then ``all``.

Values print as C's printf prints them: a NaN (trec_eval's 0.0 / 0.0, sign bit set on x86-64)
as ``  -nan``, an infinity as ``   inf``; counts as integers.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from ragmeter.trec.result import TrecResult

SUMMARY_ONLY = ("runid", "num_q", "gm")


def _value(kind: str, value) -> str:
    if kind == "runid":
        return str(value)
    if kind in ("count", "num_q"):
        return str(int(value))
    if math.isnan(value):  # trec_eval's NaNs come from 0.0 / 0.0: always -nan on x86-64
        return "  -nan"
    return f"{value:6.4f}"


def lines(result: TrecResult, *, per_query: bool = False, summary: bool = True) -> Iterator[str]:
    """``per_query``: -q; ``summary=False``: -n (no ``all`` lines)."""
    if per_query:
        for i, topic in enumerate(result.topics):
            for name, kind in result.kinds.items():
                if kind not in SUMMARY_ONLY:
                    yield f"{name:<22}\t{topic}\t{_value(kind, result.per_topic[name][i])}"
    if summary:
        for name, kind in result.kinds.items():
            yield f"{name:<22}\tall\t{_value(kind, result.mean(name))}"


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
