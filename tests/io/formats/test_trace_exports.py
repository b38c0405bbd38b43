"""``ragmeter eval`` on trace exports: OTLP/JSON as the Collector's file exporter writes it, and
Phoenix's span export; one sample per retrieval, judged metrics once per request."""

from __future__ import annotations

import json

import pytest

from ragmeter import evaluate
from ragmeter.core.errors import InvalidInputError
from ragmeter.core.history import TurnHistory
from ragmeter.io.dataset import load_dataset
from ragmeter.judges import Judge, ScriptedBackend
from tests.otel_traces import otlp_json, rag_trace, recorded

DOCS = {"a": "Refunds take 5 days.", "b": "Shipping is free.", "c": "Returns need a receipt.",
        "d": "The warranty is 12 months.", "e": "Support answers within a day."}


def _chunks(*ids: str) -> list[tuple[str, str, float]]:
    return [(i, DOCS[i], 1.0 - n / 10) for n, i in enumerate(ids)]


FIVE = [("How long do refunds take?", [_chunks("a", "b")], "Refunds take 5 days."),
        ("Do I need a receipt?", [_chunks("c")], "Yes, a receipt."),
        ("How long is the warranty?", [_chunks("d", "a")], "12 months."),
        ("Refund rules?", [_chunks("a", "b"), _chunks("c", "a")], "Five days, with a receipt."),  # two retrievals
        ("How fast is support?", [_chunks("e")], "Within a day.")]


def _export(tmp_path, per_line: bool = True):
    """The Collector's file exporter: one ExportTraceServiceRequest per line (here one per trace)."""
    path = tmp_path / "traces.jsonl"
    ids = []
    with open(path, "w") as f:
        for question, retrievals, answer in FIVE:
            tracer, exporter = recorded()
            ids.append(rag_trace(tracer, question, retrievals, answer, session="s1"))
            f.write(json.dumps(otlp_json(exporter.get_finished_spans())) + "\n")
    return path, ids


def test_five_traces_one_with_two_retrievals_read_six_retrievals(tmp_path):
    path, ids = _export(tmp_path)
    data = load_dataset(path)
    assert [s.id for s in data.samples] == [ids[0], ids[1], ids[2], f"{ids[3]}#1", f"{ids[3]}#2", ids[4]]
    expected = [(q, [c for c, _, _ in r], a) for q, rs, a in FIVE for r in rs]
    for s, (question, chunk_ids, _) in zip(data.samples, expected):
        assert s.question == question and list(s.retrieved_ids) == chunk_ids
        assert [c.text for c in s.retrieved] == [DOCS[c] for c in chunk_ids]
    assert [s.answer for s in data.samples] == ["Refunds take 5 days.", "Yes, a receipt.", "12 months.", None,
                                                "Five days, with a receipt.", "Within a day."]
    # one session: each request a turn, with the earlier ones as its history
    assert [s.metadata["turn"] for s in data.samples] == [1, 2, 3, 4, 4, 5]
    assert data.samples[1].metadata["history"] == "User: How long do refunds take?\nAssistant: Refunds take 5 days."
    histories = [s.metadata["history"] for s in data.samples]  # the session's lines held once, by every turn
    assert all(isinstance(h, TurnHistory) and h.lines is histories[0].lines for h in histories)
    assert [h.upto for h in histories] == [0, 2, 4, 6, 6, 8] and str(histories[0]) == "(none)"


def _judge(seen: list[str]):
    """Every answer one claim, supported; every context's first sentence needed."""
    def respond(prompt_id, inputs, messages):
        text = messages[1]["content"]
        seen.append(text)
        if prompt_id == "claims.extract":
            return {"claims": [{"id": 1, "text": "claim", "addresses_question": True, "cites": []}],
                    "declines": False, "reference_claims": []}
        if prompt_id == "claims.verify":
            return {"verdicts": [{"id": 1, "verdict": "supported", "sources": [], "combined": False, "quote": ""}]}
        return {"needed": [1]}
    return Judge(ScriptedBackend(respond))


def test_six_retrievals_scored_the_answer_once_against_both_retrievals(tmp_path):
    path, ids = _export(tmp_path)
    seen: list[str] = []
    result = evaluate(load_dataset(path), ["context_relevance", "faithfulness"], judge=_judge(seen))
    relevance = result.values("context_relevance")
    sentences = [len(r) for _, rs, _ in FIVE for r in rs]  # one sentence per chunk, the first needed
    assert relevance == [pytest.approx(1 / n) for n in sentences]  # 6 retrievals scored
    faith = dict(zip(result.sample_ids, result.values("faithfulness")))
    assert faith[f"{ids[3]}#1"] is None and sum(v == 1.0 for v in faith.values()) == 5  # once per request
    (verify,) = [t for t in seen if "EVIDENCE" in t and DOCS["c"] in t and DOCS["b"] in t]
    assert all(f"[{c}]" in verify for c in "abc")  # the answer judged against both retrievals' chunks


def test_the_cli_reads_the_export_and_groups_the_request(tmp_path):
    from typer.testing import CliRunner

    from ragmeter.cli.main import app

    path, ids = _export(tmp_path)
    runner = CliRunner()
    out = runner.invoke(app, ["eval", str(path), "--judge", "none", "--runs-dir", str(tmp_path / "runs")])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"{ids[3]} (2 retrievals)"))
    assert lines[at + 1].startswith(f"  {ids[3]}#1") and lines[at + 2].startswith(f"  {ids[3]}#2")
    run = str(next((tmp_path / "runs").iterdir()))
    diagnosed = runner.invoke(app, ["diagnose", run]).output.splitlines()
    at = diagnosed.index(f"request {ids[3]} (2 retrievals): no failure point found")
    assert diagnosed[at + 1].startswith(f"    {ids[3]}#1: ") and diagnosed[at + 2].startswith(f"    {ids[3]}#2: ")
    assert runner.invoke(app, ["report", run, "--html", str(tmp_path / "r.html")]).exit_code == 0
    html = (tmp_path / "r.html").read_text()
    assert "retrieval 1 of 2" in html and f'href="#q-{ids[3]}#2"' in html


def test_a_phoenix_span_export_reads_the_same_samples(tmp_path):
    """Phoenix's span export (its client's get_spans: context, span_kind, parent_id, ISO times,
    attributes nested), made here from the same SDK spans."""
    from ragmeter.io.otlp import json_spans

    tracer, exporter = recorded()
    for question, retrievals, answer in FIVE:
        rag_trace(tracer, question, retrievals, answer)
    otlp = tmp_path / "otlp.json"
    otlp.write_text(json.dumps(otlp_json(exporter.get_finished_spans())))
    phoenix = tmp_path / "phoenix.jsonl"
    with open(phoenix, "w") as f:
        for s in json_spans(otlp_json(exporter.get_finished_spans())):
            nested: dict = {}
            for key, value in s.attributes.items():
                if key == "openinference.span.kind":
                    continue
                *path, last = key.split(".")
                node = nested
                for part in path:
                    node = node.setdefault(part, {})
                node[last] = value
            from datetime import datetime, timezone

            f.write(json.dumps({"name": s.name, "context": {"trace_id": s.trace_id, "span_id": s.span_id},
                                "parent_id": s.parent_id, "span_kind": s.attributes["openinference.span.kind"],
                                "start_time": datetime.fromtimestamp(s.start_ns / 1e9, timezone.utc).isoformat(),
                                "end_time": datetime.fromtimestamp(s.end_ns / 1e9, timezone.utc).isoformat(),
                                "status_code": "OK", "attributes": nested}) + "\n")
    from_otlp, from_phoenix = load_dataset(otlp).samples, load_dataset(phoenix).samples
    assert [(s.id, s.question, s.retrieved, s.answer) for s in from_phoenix] == \
        [(s.id, s.question, s.retrieved, s.answer) for s in from_otlp]
    assert len(from_phoenix) == 6


def test_bad_exports_are_located_errors(tmp_path):
    tracer, exporter = recorded()
    rag_trace(tracer, "q?", [[(None, None, 0.5)]], "a")  # a document with neither id nor content
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(otlp_json(exporter.get_finished_spans())) + "\n")
    with pytest.raises(InvalidInputError, match="neither an id nor a content") as exc:
        load_dataset(bad)
    assert exc.value.file == str(bad) and exc.value.record
    tracer, exporter = recorded()
    rag_trace(tracer, "hello", [], "hi")
    plain = tmp_path / "plain.jsonl"
    plain.write_text(json.dumps(otlp_json(exporter.get_finished_spans())) + "\n")
    with pytest.raises(InvalidInputError, match="no RAG request among its 1 trace"):
        load_dataset(plain)
    doc = otlp_json(exporter.get_finished_spans())
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["spanId"] = "x"
    plain.write_text(json.dumps(doc) + "\n")
    with pytest.raises(InvalidInputError, match="spanId is not an 8-byte id") as exc:
        load_dataset(plain)
    assert exc.value.line == 1
