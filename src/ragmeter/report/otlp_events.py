"""``--format otlp``: a run's scores as OpenTelemetry evaluation events, for any OTLP backend.

One OTLP/JSON ``ExportLogsServiceRequest`` (``{"resourceLogs": [...]}``) holding, per sample and
metric, a log record with ``eventName`` ``gen_ai.evaluation.result`` and the GenAI semantic
conventions' attributes: ``gen_ai.evaluation.name`` (the metric), ``gen_ai.evaluation.score.value``
(when scored), ``gen_ai.evaluation.score.label`` (``scored``, ``not_computed`` or ``failed``),
``gen_ai.evaluation.explanation`` (why there is no score), ``error.type`` (a failure's kind), and
``ragmeter.sample.id``. The conventions ask the event to be parented to the span evaluated: a
sample read from a trace carries its trace id and its span id, the root span's for a metric of the
answer, its retriever span's for a metric of a retrieval; any other sample has none. Post the
document to a Collector's ``/v1/logs`` as it is.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from ragmeter._version import __version__
from ragmeter.core.errors import InvalidParameterError
from ragmeter.core.sample import Sample
from ragmeter.metrics import parse_measure

EVENT = "gen_ai.evaluation.result"


def _value(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    return {"stringValue": str(v)}


def _attributes(pairs: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _value(v)} for k, v in pairs.items() if v is not None]


def _of_answer(metric: str) -> bool:
    """Whether the metric reads the answer (its event goes on the request's root span)."""
    try:
        return parse_measure(metric).spec.family in ("generation", "embedding", "records", "actions", "conversation")
    except InvalidParameterError:
        return False


def evaluation_events(samples: Sequence[Sample], rows: Sequence[Mapping[str, Any]], *,
                      when_ns: int | None = None) -> dict[str, Any]:
    """The OTLP/JSON document of ``rows`` (``{"id", "metrics": {name: cell}}``) for ``samples``."""
    when = str(time.time_ns() if when_ns is None else when_ns)
    by_id = {s.id: s for s in samples}
    records = []
    for row in rows:
        s = by_id.get(row["id"])
        meta = s.metadata if s is not None else {}
        for metric, cell in row["metrics"].items():
            record: dict[str, Any] = {"timeUnixNano": when, "observedTimeUnixNano": when, "eventName": EVENT,
                                      "severityNumber": 9, "severityText": "INFO"}
            trace, span = meta.get("trace_id"), meta.get("root_span_id") if _of_answer(metric) else meta.get("span_id")
            if isinstance(trace, str) and isinstance(span, str):
                record["traceId"], record["spanId"] = trace, span
            why = cell.get("reason") or cell.get("error")
            record["attributes"] = _attributes({
                "gen_ai.evaluation.name": metric,
                "gen_ai.evaluation.score.value": float(cell["value"]) if cell["status"] == "scored" else None,
                "gen_ai.evaluation.score.label": cell["status"],
                "gen_ai.evaluation.explanation": str(why) if why else None,
                "error.type": str(cell.get("error")).split(":", 1)[0] if cell["status"] == "failed" else None,
                "ragmeter.sample.id": row["id"],
                "ragmeter.request.id": meta.get("request"),
            })
            records.append(record)
    return {"resourceLogs": [{
        "resource": {"attributes": _attributes({"service.name": "ragmeter", "service.version": __version__})},
        "scopeLogs": [{"scope": {"name": "ragmeter", "version": __version__}, "logRecords": records}]}]}
