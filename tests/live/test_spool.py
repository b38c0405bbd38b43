"""The span spool: kept on disk from the commit, handed on when ready, forgotten when recorded."""

from __future__ import annotations

import pytest

from ragmeter.io.otlp import Rejected, Span
from ragmeter.live.spool import Spool


def _span(trace: str, span: str, parent: str | None = None) -> Span:
    return Span(trace.rjust(32, "0"), span.rjust(16, "0"), parent.rjust(16, "0") if parent else None, "s", 1, 2,
                {"k": "v"})


def test_what_was_added_survives_a_new_process_and_is_ready_after_settle(tmp_path):
    spool = Spool(tmp_path / "s.sqlite", settle=2.0, quiet=30.0)
    spool.add([_span("1", "2", "1"), _span("1", "1")], [Rejected("bad id", {"x": 1})], now=100.0)
    spool.add([_span("1", "2", "1")], now=100.5)  # an exporter's retry: kept once
    spool.close()  # what a kill leaves: only the file
    again = Spool(tmp_path / "s.sqlite", settle=2.0, quiet=30.0)
    assert again.ready(10, now=101.0) == []  # the root came, a child from elsewhere may still come
    (t,) = again.ready(10, now=102.5)
    assert (t.trace_id, t.why, len(t.spans)) == ("1".rjust(32, "0"), "root", 2)
    assert {s.span_id for s in t.spans} == {"1".rjust(16, "0"), "2".rjust(16, "0")}
    (r,) = again.rejected(10)
    assert r.reason == "bad id" and r.body["span"] == {"x": 1}
    again.forget([t], [r.row])
    assert again.ready(10, now=1e9) == [] and again.rejected(10) == [] and again.open_traces() == 0


def test_a_trace_without_root_is_ready_after_quiet_and_the_oldest_are_evicted_past_max_open(tmp_path):
    spool = Spool(tmp_path / "s.sqlite", settle=0.0, quiet=30.0, max_open=3)
    for i in range(5):
        spool.add([_span(str(i + 1), "2", "9")], now=100.0 + i)  # no root: unfinished
    ready = spool.ready(10, now=105.0)
    assert [(int(t.trace_id), t.why) for t in ready] == [(1, "evicted"), (2, "evicted")]
    assert [int(t.trace_id) for t in spool.ready(10, now=131.5)] == [1, 2]  # not forgotten yet: handed on again
    spool.forget(ready)
    assert [(int(t.trace_id), t.why) for t in spool.ready(10, now=132.5)] == [(3, "quiet")]


def test_row_ids_are_never_reused(tmp_path):
    spool = Spool(tmp_path / "s.sqlite")
    spool.add([], [Rejected("a", 1)])
    (first,) = spool.rejected(1)
    spool.forget(rejected=[first.row])
    spool.add([], [Rejected("b", 2)])
    (second,) = spool.rejected(1)
    assert second.row > first.row  # a quarantined item is named once across restarts


def test_a_span_that_arrives_while_its_trace_is_read_is_kept(tmp_path):
    """Between ``ready`` and ``forget`` the receiver may store one more span of the trace (a child
    from another process, a batch posted out of order): it was acknowledged, so it is not deleted
    with the spans read; it is handed on later, on its own."""
    spool = Spool(tmp_path / "s.sqlite", settle=0.0, quiet=30.0)
    spool.add([_span("1", "1")], now=100.0)
    (t,) = spool.ready(10, now=100.0)
    spool.add([_span("1", "3", "1")], now=100.5)  # acknowledged while the watcher scores the trace
    spool.forget([t])
    assert spool.ready(10, now=101.0) == []  # no root now: it waits for quiet
    (late,) = spool.ready(10, now=131.0)
    assert [s.span_id for s in late.spans] == ["3".rjust(16, "0")] and late.why == "quiet"
    spool.forget([late])
    assert spool.open_traces() == 0


def test_a_write_that_fails_midway_leaves_nothing_and_the_spool_usable(tmp_path):
    spool = Spool(tmp_path / "s.sqlite", settle=0.0)
    unstorable = Span("3".rjust(32, "0"), "3".rjust(16, "0"), None, "s", 1, 2, {"k": object()})
    with pytest.raises(TypeError):
        spool.add([_span("1", "1"), unstorable], now=1.0)  # the first trace written, then the error
    assert spool.open_traces() == 0  # rolled back whole
    spool.add([_span("1", "1")], now=1.0)
    assert [t.trace_id for t in spool.ready(10, now=2.0)] == ["1".rjust(32, "0")]
