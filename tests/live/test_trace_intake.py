"""The watcher over the OTLP receiver's spool: each acknowledged trace scored exactly once across
kill -9 and restart, malformed spans quarantined, memory bounded with traces that never finish."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ragmeter.io.otlp import Rejected
from ragmeter.live.source import Feedback, LoggedRequest, Skipped
from ragmeter.live.spool import Spool
from ragmeter.live.trace_intake import TraceIntake
from ragmeter.live.watch import Watcher
from tests.otel_traces import free_port, listening, rag_trace, recorded

A = [("a", "Refunds take 5 days.", 0.9), ("b", "Shipping is free.", 0.5)]


def _spool_with(tmp_path: Path, exporter) -> Spool:
    from ragmeter.io.otlp import protobuf_spans
    from tests.otel_traces import protobuf_request

    spool = Spool(tmp_path / "spool.sqlite", settle=0.0)
    spool.add(list(protobuf_spans(protobuf_request(exporter.get_finished_spans()))),
              [Rejected("traceId is not a 16-byte id", {"name": "x"})])
    spool.add_feedback([{"request_id": "t", "value": "thumbs_down"}, {"request_id": "t", "value": "meh"}])
    return spool


def test_items_come_parsed_and_leave_the_spool_only_when_saved(tmp_path):
    tracer, exporter = recorded()
    one = rag_trace(tracer, "q?", [A], "a")
    two = rag_trace(tracer, "q2?", [A, A], "b")
    plain = rag_trace(tracer, "hello", [], "hi")
    intake = TraceIntake(_spool_with(tmp_path, exporter))
    items = intake.read()
    kinds = [type(i.parsed).__name__ for i in items]
    assert kinds == ["Rejected", "Feedback", "Rejected", "LoggedRequest", "LoggedRequest", "Skipped"]
    assert items[1].parsed == Feedback("t", -1.0, items[1].parsed.ts)
    assert 'feedback field "feedback"' in items[2].parsed.reason
    reqs = {i.parsed.id: i.parsed for i in items if isinstance(i.parsed, LoggedRequest)}
    assert len(reqs[one].all_samples) == 1 and len(reqs[two].all_samples) == 2
    assert reqs[two].root_span_id == reqs[two].samples[0].metadata["root_span_id"]
    assert isinstance(items[-1].parsed, Skipped) and plain
    for i in items[:3]:
        intake.advance(i)
    intake.save()
    assert [type(i.parsed).__name__ for i in intake.read()] == ["LoggedRequest", "LoggedRequest", "Skipped"]


def test_the_watcher_scores_a_request_per_trace_with_its_retrievals(tmp_path):
    tracer, exporter = recorded()
    two = rag_trace(tracer, "q2?", [A, A], "b c d")
    w = Watcher("", None, tmp_path / "state", metrics=("hit_rate@2",), intake=TraceIntake(_spool_with(tmp_path,
                                                                                                        exporter)))
    assert w.poll() == 1
    (rec,) = [json.loads(line) for line in (tmp_path / "state" / "scored.jsonl").read_text().splitlines()]
    assert rec["id"] == two and [r["id"] for r in rec["retrievals"]] == [f"{two}#1", f"{two}#2"]
    assert rec["root_span_id"] and rec["metrics"]["hit_rate@2"]["status"] == "not_computed"  # no labels live
    bad = [json.loads(line) for line in (tmp_path / "state" / "quarantine.jsonl").read_text().splitlines()]
    assert [b["reason"] for b in bad] == ["span refused: traceId is not a 16-byte id",
                                          'feedback field "feedback": must be a number (1 good, -1 bad, or a score), '
                                          "true/false or up/down, got 'meh'"]
    assert w.counts["feedback"] == 1 and w.ops.last == {"retrieved_count": 4.0, "avg_relevance": 0.7,
                                                        "answer_length": 3.0, "user_feedback": -1.0}
    w.close()
    again = Watcher("", None, tmp_path / "state", metrics=("hit_rate@2",),
                    intake=TraceIntake(Spool(tmp_path / "spool.sqlite")))
    assert again.poll() == 0 and again.seen == {two}  # nothing left, nothing twice



def _feedback_lines(state: Path) -> list[dict]:
    return [json.loads(line) for line in (state / "feedback.jsonl").read_text().splitlines()]


def test_feedback_before_its_trace_is_scored_is_joined_when_it_is(tmp_path):
    """Feedback POSTed right after the trace, read while the trace still settles: written at once
    with joined false, then again joined (late) when the trace is scored, and on its record."""
    from ragmeter.io.otlp import protobuf_spans
    from tests.otel_traces import protobuf_request

    tracer, exporter = recorded()
    trace = rag_trace(tracer, "q?", [A], "a")
    spool = Spool(tmp_path / "spool.sqlite", settle=3600.0)  # the trace is not ready yet
    spool.add(list(protobuf_spans(protobuf_request(exporter.get_finished_spans()))), [])
    spool.add_feedback([{"request_id": trace, "value": -1}])
    state = tmp_path / "state"
    w = Watcher("", None, state, metrics=("hit_rate@2",), intake=TraceIntake(spool))
    assert w.poll() == 0
    (early,) = _feedback_lines(state)
    assert (early["id"], early["joined"]) == (trace, False)
    spool.settle = 0.0  # the trace settles
    assert w.poll() == 1
    assert [(f["id"], f["joined"], f.get("late")) for f in _feedback_lines(state)] == [(trace, False, None),
                                                                                     (trace, True, True)]
    assert (_feedback_lines(state)[1]["file"], _feedback_lines(state)[1]["offset"]) == (early["file"], early["offset"])
    assert w.recent[-1]["id"] == trace and w.recent[-1]["feedback"] == -1.0
    w.close()
    again = Watcher("", None, state, metrics=("hit_rate@2",), intake=TraceIntake(Spool(tmp_path / "spool.sqlite")))
    assert again.recent[-1]["feedback"] == -1.0 and len(again.waiting) == 0 and len(_feedback_lines(state)) == 2


def test_feedback_read_in_the_poll_that_scores_its_trace_is_joined(tmp_path):
    """The spool hands out feedback before traces: the trace scored in the same poll joins it."""
    from ragmeter.io.otlp import protobuf_spans
    from tests.otel_traces import protobuf_request

    tracer, exporter = recorded()
    trace = rag_trace(tracer, "q?", [A], "a")
    spool = Spool(tmp_path / "spool.sqlite", settle=0.0)
    spool.add(list(protobuf_spans(protobuf_request(exporter.get_finished_spans()))), [])
    spool.add_feedback([{"request_id": trace, "value": 1}])
    w = Watcher("", None, tmp_path / "state", metrics=("hit_rate@2",), intake=TraceIntake(spool))
    assert w.poll() == 1
    assert [(f["id"], f["joined"]) for f in _feedback_lines(tmp_path / "state")] == [(trace, True)]
    assert w.recent[-1]["feedback"] == 1.0


def test_waiting_feedback_survives_a_restart(tmp_path):
    """Killed while feedback waits: the restarted watcher waits for the trace again, and joins it."""
    from ragmeter.io.otlp import protobuf_spans
    from tests.otel_traces import protobuf_request

    tracer, exporter = recorded()
    trace = rag_trace(tracer, "q?", [A], "a")
    spool = Spool(tmp_path / "spool.sqlite", settle=3600.0)
    spool.add(list(protobuf_spans(protobuf_request(exporter.get_finished_spans()))), [])
    spool.add_feedback([{"request_id": trace, "value": "thumbs_up"}])
    state = tmp_path / "state"
    w = Watcher("", None, state, metrics=("hit_rate@2",), intake=TraceIntake(spool))
    assert w.poll() == 0
    w.close()
    again = Watcher("", None, state, metrics=("hit_rate@2",),
                    intake=TraceIntake(Spool(tmp_path / "spool.sqlite", settle=0.0)))
    assert len(again.waiting) == 1 and again.poll() == 1
    assert [f["joined"] for f in _feedback_lines(state)] == [False, True]
    assert again.recent[-1]["feedback"] == 1.0


def _watch(port: int, state: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ragmeter", "watch", "--otlp", f"127.0.0.1:{port}", "--judge",
                             "none", "-m", "hit_rate@3", "--state", str(state), "--port", "0", "--interval", "0.2",
                             "--settle", "0.3", *extra], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "NO_PROXY": "127.0.0.1"})


def _scored_ids(state: Path) -> list[str]:
    path = state / "scored.jsonl"
    if not path.exists():
        return []
    return [json.loads(line)["id"] for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.slow
def test_1000_traces_at_a_steady_rate_through_two_kill_9s_each_acknowledged_one_scored_once(tmp_path):
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExportResult

    port, state = free_port(), tmp_path / "state"
    spans_of: dict[str, int] = {}  # trace -> spans acknowledged
    lock = threading.Lock()

    class Tracking(OTLPSpanExporter):
        def export(self, spans):
            result = super().export(spans)
            if result is SpanExportResult.SUCCESS:
                with lock:
                    for s in spans:
                        t = format(s.context.trace_id, "032x")
                        spans_of[t] = spans_of.get(t, 0) + 1
            return result

    proc = _watch(port, state)
    listening(port)
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Tracking(endpoint=f"http://127.0.0.1:{port}/v1/traces",
                                                            timeout=30), schedule_delay_millis=100))
    tracer = provider.get_tracer("load")
    sent, kills = [], 0
    start = time.monotonic()
    for i in range(1000):
        sent.append(rag_trace(tracer, f"question {i}?", [A], f"answer {i}"))
        if i in (300, 650):  # kill -9 mid-stream, then restart on the same state and port
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills += 1
            time.sleep(0.5)
            proc = _watch(port, state)
        time.sleep(max(0.0, start + (i + 1) * 0.01 - time.monotonic()))  # a steady 100 traces/s
    provider.shutdown()
    acked = {t for t, n in spans_of.items() if n == 3}  # every span of the trace acknowledged
    deadline = time.monotonic() + 120
    while not acked <= set(_scored_ids(state)) and time.monotonic() < deadline:
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    scored = _scored_ids(state)
    print(f"{len(sent)} traces sent at 100/s, watcher killed -9 twice: {len(acked)} acknowledged whole, "
          f"{len(scored)} scored, {len(set(scored))} distinct, {len(acked - set(scored))} acknowledged not scored")
    assert kills == 2 and len(acked) >= 900, len(acked)
    assert len(scored) == len(set(scored)), "a trace was scored twice"
    assert acked <= set(scored), f"{len(acked - set(scored))} acknowledged trace(s) never scored"
    assert set(scored) <= set(sent)


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.mark.slow
def test_memory_is_bounded_with_10000_traces_that_never_finish(tmp_path):
    """10,000 traces whose root never ends (only their children arrive), then 2,000 more: the
    watcher keeps at most --max-open of them (on disk, not in memory; the oldest past it are read
    as they are), and its memory stays flat."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    port, state = free_port(), tmp_path / "state"
    proc = _watch(port, state, "--quiet", "3600", "--max-open", "10000")
    try:
        listening(port)

        def send(n: int, first: int) -> None:
            provider = TracerProvider()
            provider.add_span_processor(BatchSpanProcessor(
                OTLPSpanExporter(endpoint=f"http://127.0.0.1:{port}/v1/traces", timeout=60),
                max_queue_size=50_000, max_export_batch_size=1000))
            tracer = provider.get_tracer("open")
            for i in range(first, first + n):
                rag_trace(tracer, f"q{i}?", [A], f"a{i}", finish=False)
            provider.shutdown()

        send(200, 0)
        time.sleep(1.0)
        base = _rss_kib(proc.pid)
        send(10_000, 200)
        time.sleep(2.0)
        at_10k = _rss_kib(proc.pid)
        spool = Spool(state / "spool.sqlite")
        open_now, read_then = spool.open_traces(), len(_scored_ids(state))
        send(2_000, 10_200)
        deadline = time.monotonic() + 240
        while spool.open_traces() > 10_000 and time.monotonic() < deadline:
            time.sleep(0.5)
        at_20k = _rss_kib(proc.pid)
        evicted = len(_scored_ids(state))
        print(f"RSS {base} KiB with 200 open traces, {at_10k} KiB with {open_now}, {at_20k} KiB after 12,200 "
              f"sent ({spool.open_traces()} open, {evicted} read as they were)")
        assert open_now + read_then == 10_200 and open_now >= 10_000
        assert spool.open_traces() == 10_000 and evicted == 2_200  # the 2,200 oldest, each once
        assert at_20k - base < 64 * 1024, "memory grew with unfinished traces"
        spool.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
