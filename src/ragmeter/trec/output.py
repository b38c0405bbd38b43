"""trec_eval's text output: ``%-22s\\t%s\\t%6.4f`` per line, topics first (with -q), then ``all``."""

from __future__ import annotations

from typing import Iterator

from ragmeter.trec.result import TrecResult

SUMMARY_ONLY = ("runid", "num_q", "gm")


def _value(kind: str, value) -> str:
    if kind == "runid":
        return str(value)
    if kind in ("count", "num_q"):
        return str(int(value))
    return f"{value:6.4f}"


def lines(result: TrecResult, *, per_query: bool = False) -> Iterator[str]:
    if per_query:
        for i, topic in enumerate(result.topics):
            for name, kind in result.kinds.items():
                if kind not in SUMMARY_ONLY:
                    yield f"{name:<22}\t{topic}\t{_value(kind, result.per_topic[name][i])}"
    for name, kind in result.kinds.items():
        yield f"{name:<22}\tall\t{_value(kind, result.mean(name))}"
