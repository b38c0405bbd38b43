"""``--to-phoenix``: scores as span annotations on each request's root span, read back through
Phoenix's own client from a real Phoenix server the test starts on 127.0.0.1."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from ragmeter.judges import Judge, ScriptedBackend
from ragmeter.live.phoenix import IDENTIFIER, PhoenixOutbox, annotator_kind, span_annotations
from ragmeter.live.receiver import Receiver
from ragmeter.live.spool import Spool
from ragmeter.live.trace_intake import TraceIntake
from ragmeter.live.watch import Watcher
from tests import live_judge
from tests.otel_traces import rag_trace

A = [("a", "Refunds take 5 days.", 0.9)]
B = [("b", "Returns need a receipt.", 0.7)]


def test_a_records_annotations():
    rec = {"id": "t", "root_span_id": "ab" * 8, "metrics": {
        "faithfulness": {"status": "scored", "value": 0.5},
        "hit_rate@3": {"status": "not_computed", "value": None, "reason": "no relevance labels"}},
        "retrievals": [{"id": "t#1", "metrics": {"faithfulness": {"status": "not_computed", "value": None}}},
                       {"id": "t#2", "metrics": {"faithfulness": {"status": "scored", "value": 0.5}}}]}
    faith, hit = span_annotations(rec)
    assert faith == {"span_id": "ab" * 8, "name": "faithfulness", "annotator_kind": "LLM", "identifier": IDENTIFIER,
                     "result": {"label": "scored", "score": 0.5,
                                "explanation": "per retrieval: t#1 not_computed, t#2 0.500"},
                     "metadata": faith["metadata"]}
    assert hit["annotator_kind"] == "CODE" and hit["result"] == {"label": "not_computed",
                                                                 "explanation": "no relevance labels"}
    assert annotator_kind("not a metric") == "CODE"


def test_an_unreachable_phoenix_is_said_once_and_nothing_is_lost(tmp_path):
    scored = tmp_path / "scored.jsonl"
    scored.write_text(json.dumps({"id": "t", "ts": time.time(), "root_span_id": "ab" * 8,
                                  "metrics": {"faithfulness": {"status": "scored", "value": 1.0}}}) + "\n")
    notes: list[str] = []
    outbox = PhoenixOutbox("http://127.0.0.1:9", scored, tmp_path / "phoenix.json", notes)
    outbox.pump()
    outbox.pump()
    assert len(notes) == 1 and "could not be reached" in notes[0] and outbox.offset == 0


def test_how_far_it_was_sent_survives_a_restart(tmp_path, monkeypatch):
    import ragmeter.live.phoenix as phoenix

    sent: list[list[dict]] = []
    monkeypatch.setattr(phoenix, "post", lambda url, items, **kw: sent.append(items))
    scored = tmp_path / "scored.jsonl"
    record = {"id": "t", "ts": time.time(), "root_span_id": "ab" * 8,
              "metrics": {"faithfulness": {"status": "scored", "value": 1.0}}}
    scored.write_text(json.dumps(record) + "\n")
    PhoenixOutbox("http://phoenix", scored, tmp_path / "phoenix.json", []).pump()
    assert json.loads((tmp_path / "phoenix.json").read_text()) == {"offset": scored.stat().st_size}
    again = PhoenixOutbox("http://phoenix", scored, tmp_path / "phoenix.json", [])
    again.pump()
    assert again.offset == scored.stat().st_size and len(sent) == 1  # nothing sent twice
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.slow
def test_scores_show_as_annotations_through_phoenixs_own_client_with_its_telemetry_off(tmp_path):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from tests.phoenix_server import Phoenix

    phoenix = Phoenix(tmp_path)
    receiver = Receiver(Spool(tmp_path / "spool.sqlite", settle=0.0), "127.0.0.1", 0)
    try:
        provider = TracerProvider()  # the app exports to Phoenix and to ragmeter, as a Collector would fan out
        for url in (f"{phoenix.url}/v1/traces", receiver.url):
            provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=url, timeout=30)))
        tracer = provider.get_tracer("app")
        good = rag_trace(tracer, "How long do refunds take?", [A], "ok")
        two = rag_trace(tracer, "Refund rules?", [A, B], "wrong")
        provider.shutdown()
        state = tmp_path / "state"
        w = Watcher("", Judge(ScriptedBackend(live_judge.scripted)), state, metrics=("faithfulness",),
                    intake=TraceIntake(receiver.spool))
        assert w.poll() == 2
        roots = {json.loads(x)["id"]: json.loads(x)["root_span_id"] for x in (state / "scored.jsonl").open()}
        outbox = PhoenixOutbox(phoenix.url, state / "scored.jsonl", state / "phoenix.json", w.notes, wait_s=60)
        deadline = time.monotonic() + 60
        while outbox.offset < (state / "scored.jsonl").stat().st_size and time.monotonic() < deadline:
            outbox.pump()  # Phoenix takes spans in asynchronously: a root it does not hold yet waits
            time.sleep(0.5)
        outbox.pump()  # sent again (a restart): Phoenix keeps one annotation per name, span and identifier
        read = phoenix.run_client(
            "out = [dict(a) for a in client.spans.get_span_annotations(span_ids=values['ids'], "
            "project_identifier='default')]", ids=sorted(roots.values()))
        by_span = {(a["span_id"], a["name"]): a for a in read}
        assert len(read) == 2  # one per request and metric, not doubled by the second send
        ok = by_span[(roots[good], "faithfulness")]
        assert ok["result"]["score"] == 1.0 and ok["result"]["label"] == "scored"
        assert ok["annotator_kind"] == "LLM" and ok["identifier"] == IDENTIFIER
        wrong = by_span[(roots[two], "faithfulness")]
        assert wrong["result"]["score"] == 0.0  # the answer's one claim contradicted
        assert wrong["result"]["explanation"] == f"per retrieval: {two}#1 not_computed, {two}#2 0.000"
        w.close()
        # Phoenix's span export, as its client gives it, read by ragmeter eval: the same requests
        exported = phoenix.run_client("out = [dict(s) for s in client.spans.get_spans(project_identifier='default', "
                                      "limit=1000)]")
        export = tmp_path / "phoenix-spans.jsonl"
        export.write_text("".join(json.dumps(s) + "\n" for s in exported))
        from ragmeter.io.dataset import load_dataset

        samples = {s.id: s for s in load_dataset(export).samples}
        assert sorted(samples) == sorted([good, f"{two}#1", f"{two}#2"])
        assert (samples[good].question, samples[good].retrieved_ids, samples[good].answer) == \
            ("How long do refunds take?", ("a",), "ok")
        assert samples[f"{two}#2"].retrieved[0].text == "Returns need a receipt."
        assert samples[f"{two}#2"].answer_context_ids == ("a", "b")
        # its telemetry is off: the switch read as Phoenix reads it, and no pixel in the page it serves
        settings = phoenix.run_client("from phoenix.config import get_env_telemetry_enabled, "
                                      "get_env_scarf_sh_pixel_id, get_env_fullstory_org\n"
                                      "out = [get_env_telemetry_enabled(), get_env_scarf_sh_pixel_id(), "
                                      "get_env_fullstory_org()]")
        assert settings == [False, None, None]
        page = httpx.get(phoenix.url + "/").text.lower()
        assert "scarf" not in page and "fullstory" not in page
    finally:
        receiver.close()
        phoenix.stop()
