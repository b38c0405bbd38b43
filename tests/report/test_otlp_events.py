"""``--format otlp``: scores as OpenTelemetry evaluation events, read back by the OTLP messages."""

from __future__ import annotations

import base64
import json

from typer.testing import CliRunner

from ragmeter.cli.main import app
from ragmeter.core.sample import Chunk, Sample
from ragmeter.report.otlp_events import EVENT, evaluation_events
from tests.installed import need


def _parse(doc: dict):
    """The OTLP/JSON document as an ExportLogsServiceRequest (hex ids to protobuf's base64)."""
    need("opentelemetry.proto")
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

    for r in doc["resourceLogs"]:
        for s in r["scopeLogs"]:
            for rec in s["logRecords"]:
                for key in ("traceId", "spanId"):
                    if key in rec:
                        rec[key] = base64.b64encode(bytes.fromhex(rec[key])).decode()
    return ParseDict(doc, ExportLogsServiceRequest())


def _attrs(record) -> dict:
    return {kv.key: getattr(kv.value, kv.value.WhichOneof("value")) for kv in record.attributes}


def test_events_are_parented_to_the_span_evaluated():
    meta = {"trace_id": "ab" * 16, "root_span_id": "01" * 8, "span_id": "02" * 8, "request": "ab" * 16}
    s = Sample("r", question="q", retrieved=(Chunk("a", None, "t"),), answer="x", metadata=meta)
    rows = [{"id": "r", "metrics": {"faithfulness": {"status": "scored", "value": 0.5},
                                    "hit_rate@5": {"status": "not_computed", "value": None, "reason": "no labels"},
                                    "answer_relevancy": {"status": "failed", "value": None,
                                                         "error": "JudgeOutputError: no JSON"}}}]
    request = _parse(evaluation_events([s], rows, when_ns=5))
    faith, hit, relevancy = request.resource_logs[0].scope_logs[0].log_records
    assert {faith.event_name, hit.event_name} == {EVENT}
    assert faith.trace_id.hex() == "ab" * 16 and faith.span_id.hex() == "01" * 8  # the answer's: the root span
    assert hit.span_id.hex() == "02" * 8  # a retrieval's: its retriever span
    assert _attrs(faith) == {"gen_ai.evaluation.name": "faithfulness", "gen_ai.evaluation.score.value": 0.5,
                             "gen_ai.evaluation.score.label": "scored", "ragmeter.sample.id": "r",
                             "ragmeter.request.id": "ab" * 16}
    assert _attrs(hit)["gen_ai.evaluation.explanation"] == "no labels" and "gen_ai.evaluation.score.value" \
        not in _attrs(hit)
    assert _attrs(relevancy)["error.type"] == "JudgeOutputError"
    assert faith.time_unix_nano == 5


def test_eval_and_show_print_the_events(tmp_path):
    rows = [{"id": "q1", "question": "q?", "retrieved": ["a", "b"], "relevant": ["b"]}]
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    runner = CliRunner()
    out = runner.invoke(app, ["eval", str(data), "-m", "hit_rate@2,reciprocal_rank@2", "--format", "otlp",
                              "--runs-dir", str(tmp_path / "runs"), "--name", "t"])
    assert out.exit_code == 0, out.output
    records = _parse(json.loads(out.output.splitlines()[0])).resource_logs[0].scope_logs[0].log_records
    assert [(_attrs(r)["gen_ai.evaluation.name"], _attrs(r)["gen_ai.evaluation.score.value"]) for r in records] == \
        [("hit_rate@2", 1.0), ("reciprocal_rank@2", 1 / 2)]
    assert not records[0].trace_id  # not read from a trace: no span to parent to
    run = next((tmp_path / "runs").iterdir())
    shown = runner.invoke(app, ["show", str(run), "--format", "otlp"])
    assert shown.exit_code == 0, shown.output
    again = _parse(json.loads(shown.output)).resource_logs[0].scope_logs[0].log_records
    assert [_attrs(r) for r in again] == [_attrs(r) for r in records]
