"""The operational gauges of live traffic, as the RAG metric reference logs them per request.

For every request the watcher reads (sampled out or not: no judge is needed), and for every user
feedback that arrives later, joined to its request by id:

| gauge (statsd, prefix ``rag.``) | Prometheus | per request |
|---|---|---|
| ``retrieved_count`` | ``ragmeter_retrieved_count`` | ``len(retrieved_docs)``: chunks retrieved, every retrieval |
| ``avg_relevance`` | ``ragmeter_retriever_score`` | ``mean(doc['score'])`` over the chunks with a score |
| ``answer_length`` | ``ragmeter_answer_length_tokens`` | ``len(answer.split())`` |
| ``user_feedback`` | ``ragmeter_user_feedback`` | the feedback's value (1 good, -1 bad, or a score) |

Each Prometheus gauge has ``window="last"`` (the latest value) and ``window="last_n"`` (the mean
of the last N values). statsd gets each value as it comes (``statsd.gauge('rag.<name>', value)``,
the metric reference's call; a negative gauge is sent as a reset to 0 then the value, since a signed gauge
line is a change in statsd's protocol), through the ``statsd`` package (``ragmeter[live]``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

from ragmeter.core.sample import Sample

NAMES = ("retrieved_count", "avg_relevance", "answer_length", "user_feedback")
PROMETHEUS = {"retrieved_count": ("ragmeter_retrieved_count", "Chunks retrieved per request (every retrieval)"),
              "avg_relevance": ("ragmeter_retriever_score", "Mean retriever score of a request's chunks"),
              "answer_length": ("ragmeter_answer_length_tokens", "Answer length in whitespace tokens"),
              "user_feedback": ("ragmeter_user_feedback", "User feedback joined to its request (1 good, -1 bad)")}


def request_values(samples: Sequence[Sample]) -> dict[str, float]:
    """The gauges of one request (its samples: one, or one per retrieval).

    >>> from ragmeter.core.sample import Chunk
    >>> chunks = (Chunk("a", 0.9), Chunk("b", 0.5), Chunk("c"))
    >>> request_values([Sample("r", retrieved=chunks, answer="It is 12 months.")])
    {'retrieved_count': 3.0, 'avg_relevance': 0.7, 'answer_length': 4.0}
    """
    chunks = [c for s in samples for c in s.retrieved]
    out = {"retrieved_count": float(len(chunks))}
    scores = [c.score for c in chunks if c.score is not None]
    if scores:
        out["avg_relevance"] = sum(scores) / len(scores)
    answers = [s.answer for s in samples if s.answer is not None]
    if answers:
        out["answer_length"] = float(len(answers[-1].split()))
    return out


def feedback_value(value: Any) -> float | None:
    """A feedback's number: a number as it is, ``true``/``false``, ``"up"``/``"down"``
    (``thumbs_up`` / ``thumbs_down``, ``good`` / ``bad``) as 1 / -1; None for anything else.

    >>> [feedback_value(v) for v in (1, -1, 0.5, True, "thumbs_down", "meh", float("nan"))]
    [1.0, -1.0, 0.5, 1.0, -1.0, None, None]
    """
    if isinstance(value, bool):
        return 1.0 if value else -1.0
    if isinstance(value, (int, float)):
        number = float(value)
        return number if number == number and abs(number) != float("inf") else None
    if isinstance(value, str):
        return {"up": 1.0, "thumbs_up": 1.0, "good": 1.0, "down": -1.0, "thumbs_down": -1.0,
                "bad": -1.0}.get(value.strip().lower())
    return None


class Gauges:
    """The gauges' last values and rolling windows, sent to statsd and Prometheus as they change."""

    def __init__(self, window: int, *, registry: Any = None, statsd: Any = None) -> None:
        self.last: dict[str, float] = {}
        self.recent: dict[str, deque[float]] = {n: deque(maxlen=window) for n in NAMES}
        self.statsd = statsd
        self._prom = None
        if registry is not None:
            from prometheus_client import Gauge

            self._prom = {n: Gauge(name, text, ["window"], registry=registry) for n, (name, text) in PROMETHEUS.items()}

    def observe(self, values: dict[str, float]) -> None:
        for name, value in values.items():
            self.last[name] = value
            self.recent[name].append(value)
            if self.statsd is not None:
                self.statsd.gauge(name, value)
            if self._prom is not None:
                self._prom[name].labels("last").set(value)
                self._prom[name].labels("last_n").set(sum(self.recent[name]) / len(self.recent[name]))

    def mean(self, name: str) -> float | None:
        values = self.recent[name]
        return sum(values) / len(values) if values else None


def statsd_client(address: str, prefix: str = "rag") -> Any:
    """A statsd client for ``HOST:PORT`` (UDP; sending never blocks nor raises into the watcher)."""
    from ragmeter.core.settings import InvalidSettingError

    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise InvalidSettingError("statsd", f"write HOST:PORT, got {address!r}")
    try:
        from statsd import StatsClient
    except ImportError:
        raise InvalidSettingError("statsd", "statsd gauges need the statsd package: pip install 'ragmeter[live]'") \
            from None
    return StatsClient(host.strip("[]"), int(port), prefix=prefix)
