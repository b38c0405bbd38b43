"""The seed's four operational gauges, on a Prometheus /metrics endpoint and on a statsd listener
the test starts (UDP on 127.0.0.1), with user feedback joined later by request id."""

from __future__ import annotations

import json
import socket
import time

import httpx
import pytest

from ragmeter.core.sample import Chunk, Sample
from ragmeter.live.gauges import Gauges, feedback_value, request_values, statsd_client
from ragmeter.live.logger import RequestLogger
from ragmeter.live.prometheus import serve
from ragmeter.live.watch import Watcher
from tests.installed import need


def test_request_values_are_the_seeds_formulas():
    chunks = (Chunk("a", 0.9), Chunk("b", 0.3))
    samples = [Sample("r#1", retrieved=chunks), Sample("r#2", retrieved=(Chunk("c", 0.6),), answer="a b  c")]
    assert request_values(samples) == {"retrieved_count": float(len(chunks) + 1),  # len(retrieved_docs)
                                       "avg_relevance": (0.9 + 0.3 + 0.6) / 3,  # np.mean(doc['score'])
                                       "answer_length": float(len("a b  c".split()))}  # len(answer.split())
    assert request_values([Sample("r", retrieved=(Chunk("a"),))]) == {"retrieved_count": 1.0}  # no score, no answer


def test_feedback_values():
    assert [feedback_value(v) for v in (1, -1, True, False, "up", "DOWN", 4.5)] == [1, -1, 1, -1, 1, -1, 4.5]
    assert [feedback_value(v) for v in (None, "maybe", float("inf"), [1])] == [None] * 4


def test_gauges_keep_last_and_window_mean():
    g = Gauges(2)
    for v in (1.0, -1.0, -1.0):
        g.observe({"user_feedback": v})
    assert g.last["user_feedback"] == -1.0 and g.mean("user_feedback") == -1.0  # the window is the last 2


def _listener() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(5.0)
    return sock


def _received(sock: socket.socket, n: int) -> list[str]:
    lines: list[str] = []
    while len(lines) < n:
        data, _ = sock.recvfrom(65536)
        lines += data.decode().split("\n")
    return lines


def test_the_four_gauges_on_metrics_and_statsd_with_feedback_joined_later(tmp_path):
    need("prometheus_client")
    need("statsd")
    from prometheus_client import CollectorRegistry

    log = tmp_path / "requests.jsonl"
    app = RequestLogger(str(log))
    app.log("How long is the warranty?", [{"id": "a", "text": "12 months.", "score": 0.8},
                                          {"id": "b", "text": "Free shipping.", "score": 0.4}],
            "The warranty is 12 months.", request_id="r1")
    assert app.flush()
    sock = _listener()
    registry = CollectorRegistry()
    w = Watcher(str(log), None, tmp_path / "state", metrics=("hit_rate@5",), registry=registry,
                statsd=statsd_client(f"127.0.0.1:{sock.getsockname()[1]}"))
    w.poll()
    first = _received(sock, 3)
    assert first == ["rag.retrieved_count:2.0|g", "rag.avg_relevance:0.6000000000000001|g", "rag.answer_length:5.0|g"]
    app.feedback("r1", "thumbs_down")  # the user's verdict comes later, by request id
    assert app.flush()
    w.poll()
    # a negative gauge: a reset to 0, then the value (a signed value alone is a change in statsd)
    assert _received(sock, 2) == ["rag.user_feedback:0|g", "rag.user_feedback:-1.0|g"]
    server = serve(registry, "127.0.0.1", 0)
    try:
        text = httpx.get(f"http://127.0.0.1:{server.server_port}/metrics").text
    finally:
        server.shutdown()
    for line in ('ragmeter_retrieved_count{window="last"} 2.0', 'ragmeter_retriever_score{window="last_n"} 0.6',
                 'ragmeter_answer_length_tokens{window="last"} 5.0', 'ragmeter_user_feedback{window="last"} -1.0'):
        assert line in text
    (joined,) = [json.loads(x) for x in (tmp_path / "state" / "feedback.jsonl").read_text().splitlines()]
    assert (joined["id"], joined["value"], joined["joined"]) == ("r1", -1.0, True)
    assert w.recent[-1]["feedback"] == -1.0  # on its request's record in the window
    w.close()
    again = Watcher(str(log), None, tmp_path / "state", metrics=("hit_rate@5",))
    assert again.poll() == 0 and again.recent[-1]["feedback"] == -1.0  # joined again after a restart
    assert again.counts["feedback"] == 0
    sock.close()


@pytest.mark.parametrize("address", ["nohost", "host:port", ":8125"])
def test_a_statsd_address_must_be_host_port(address):
    from ragmeter.core.settings import InvalidSettingError

    with pytest.raises(InvalidSettingError, match="HOST:PORT"):
        statsd_client(address)


def test_sending_to_nobody_never_raises():
    need("statsd")
    client = statsd_client("127.0.0.1:9")  # the discard port: nothing listens
    Gauges(3, statsd=client).observe({"retrieved_count": 1.0})
    time.sleep(0)
