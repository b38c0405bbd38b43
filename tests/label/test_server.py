"""Issue 29, item 15: the label server answers every body within bounds, in JSON, quietly.

Deep-nested JSON and a ``Content-Length`` that is not a number closed the connection with a
traceback on stderr; ``-1`` (and a body shorter than its length) held the handler forever. Each
is now a 4xx with a JSON error, and no handler prints a traceback. The hypothesis fuzz sends
arbitrary bodies and lengths: every answer is one of the statuses below, in JSON."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.io import load_dataset
from ragmeter.label.agreement import (
    cohen_kappa,
)
from ragmeter.label.server import LabelApp, LabelServer
from ragmeter.label.store import LabelStore
from ragmeter.label.tasks import Candidate, Task, build_tasks


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    store = LabelStore(tmp_path_factory.mktemp("label") / "l.jsonl")
    tasks = [Task(0, "q1", "q?", "", (Candidate("c1", "t", "retrieved"),))]
    srv = LabelServer(LabelApp(tasks, store), port=0).start()
    srv.httpd.RequestHandlerClass.timeout = 1.0  # type: ignore[attr-defined]  # the 408 case, quickly
    yield srv
    srv.shutdown()
    store.close()


def _post(srv: LabelServer, headers: list[tuple[str, str]], body: bytes = b"", *, token: str | None = None,
          method: str = "POST", path: str = "/api/event") -> tuple[int, dict]:
    """One raw request; (status, JSON body). A handler that does not answer within 15 s fails."""
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=15)
    head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\nX-Ragmeter-Token: {token or srv.token}\r\n"
            "Content-Type: application/json\r\nConnection: close\r\n")
    try:
        s.sendall((head + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n").encode("latin-1") + body)
        data = b""
        while True:
            try:
                more = s.recv(65536)
            except ConnectionResetError:
                break
            if not more:
                break
            data += more
    finally:
        s.close()
    assert data, "the server closed the connection without an answer"
    status = int(data.split(b" ", 2)[1])
    return status, json.loads(data.split(b"\r\n\r\n", 1)[1])


GOOD = json.dumps({"kind": "grade", "labeler": "alice", "sample": "q1", "chunk": "c1", "grade": 2}).encode()
DEEP = b"[" * 30_000 + b"]" * 30_000


@pytest.mark.parametrize(("headers", "body", "status", "words"), [
    ([("Content-Length", str(len(DEEP)))], DEEP, 400, "nested too deeply"),
    ([("Content-Length", "abc")], b"{}", 400, "whole number"),
    ([("Content-Length", "-1")], b"{}", 400, "whole number"),
    ([("Content-Length", "1e3")], b"{}", 400, "whole number"),
    ([("Content-Length", "99999999999999999999999")], b"{}", 413, "over 65536 bytes"),
    ([("Content-Length", "70000")], b"{}", 413, "over 65536 bytes"),
    ([], b"", 411, "Content-Length"),
    ([("Content-Length", "2"), ("Content-Length", "3")], b"{}", 400, "twice"),
    ([("Content-Length", "100")], b'{"kind":', 408, "did not arrive"),
    ([("Content-Length", "4")], b"\xff\xfe\x00\x01", 400, "not JSON"),
    ([("Content-Length", str(len(GOOD)))], GOOD, 200, ""),
])
def test_a_bad_body_is_a_json_error_and_no_traceback(server, capfd, headers, body, status, words):
    got, doc = _post(server, headers, body)
    assert got == status, doc
    assert words in json.dumps(doc)
    assert "Traceback" not in capfd.readouterr().err


def test_a_non_ascii_token_is_refused_not_a_traceback(server, capfd):
    got, doc = _post(server, [("Content-Length", "2")], b"{}", token="\xe9" * 32)
    assert got == 403 and "token" in doc["error"]
    assert "Traceback" not in capfd.readouterr().err


def test_a_token_from_an_earlier_start_says_it_is_stale(server):
    got, doc = _post(server, [("Content-Length", "2")], b"{}", token="0" * 32)
    assert got == 403 and doc["code"] == "stale_token" and "reload" in doc["error"]
    got, doc = _post(server, [("Content-Length", "2")], b"{}", token="nonsense")
    assert got == 403 and "code" not in doc


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.one_of(st.binary(max_size=300), st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                                                            lambda c: st.lists(c) | st.dictionaries(st.text(), c),
                                                            max_leaves=30).map(lambda v: json.dumps(v).encode())),
       length=st.one_of(st.none(), st.integers(-5, 70_000).map(str), st.text(max_size=8)))
def test_fuzzed_bodies_get_a_bounded_json_answer(server, capfd, body, length):
    headers = [] if length is None else [("Content-Length", length.replace("\r", "").replace("\n", ""))]
    whole = length is not None and length.strip().isascii() and length.strip().isdigit()  # "¹" is a digit, not int
    if whole and len(body) < int(length) <= 65536:
        body = body + b" " * (int(length) - len(body))  # a short body is the 408 case, tested once above
    try:
        headers[0][1].encode("latin-1") if headers else None
    except UnicodeEncodeError:
        headers = [("Content-Length", "x")]
    got, doc = _post(server, headers, body)
    assert got in (200, 400, 408, 411, 413), (got, doc)
    assert isinstance(doc, dict) and ("ok" in doc or "error" in doc)
    assert "Traceback" not in capfd.readouterr().err


SCRIPT = "<script>window.__pwned = 1</script> The R2 carries a 24-month warranty."


IMG = '"><img src=x onerror="window.__pwned = 2"> Claims need a serial number.'


QUESTION = "Is my R2 still covered? <script>window.__pwned = 3</script>"


ODD_ID = 'x"><b>c3</b>'  # an id that would be markup if it were ever parsed


def _tools() -> tuple[str, str]:
    why = None
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    try:
        import selenium  # noqa: F401
    except ImportError:
        why = "selenium is not installed (pip install -e '.[test]')"
    if browser is None or driver is None:
        why = "chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"
    if why:
        if os.environ.get("RAGMETER_CI") == "1":
            pytest.fail(f"{why}: CI runs this test")
        pytest.skip(f"{why}; CI always runs this test")
    assert browser is not None and driver is not None
    return browser, driver


@pytest.fixture
def driver(tmp_path):
    browser, chromedriver = _tools()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1200,1400", f"--user-data-dir={tmp_path / 'profile'}"):
        opts.add_argument(flag)
    d = webdriver.Chrome(service=Service(executable_path=chromedriver), options=opts)
    d.set_page_load_timeout(30)
    d.set_script_timeout(30)
    yield d
    d.quit()


@pytest.fixture
def site(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": "c1", "text": SCRIPT}, {"id": "c2", "text": IMG}, {"id": ODD_ID, "text": "Returns within 30 days."},
        {"id": "c4", "text": "The R1 carries a 12-month warranty."}]))
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": "q1", "question": QUESTION, "retrieved": ["c1", "c2", ODD_ID]},
        {"id": "q2", "question": "How long can I return it?", "retrieved": [ODD_ID, "c4"]},
        {"id": "q3", "question": "Is there a loyalty discount?", "retrieved": ["c4", "c1"]}]))
    labels = tmp_path / "d.labels.jsonl"
    samples = load_dataset(data, corpus=corpus).samples
    store = LabelStore(labels)
    server = LabelServer(LabelApp(build_tasks(samples, k=10), store, title="d.jsonl"), port=0).start()
    yield {"url": server.url, "data": data, "labels": labels, "tmp": tmp_path}
    server.shutdown()
    store.close()


def _wait(d, condition, what: str, timeout: float = 15):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(d, timeout, poll_frequency=0.05).until(lambda _: condition(), message=what)


def _open(d, url: str) -> None:
    d.get(url)
    _wait(d, lambda: d.find_element("tag name", "body").get_attribute("data-ready") == "1", "the page to start")


def _saved(d) -> None:
    _wait(d, lambda: d.find_element("tag name", "body").get_attribute("data-pending") == "0"
          and "saved" in d.find_element("id", "status").text, "every click to be saved")


def _js(d, script: str):
    """Read the page in one script call: an element re-rendered between a find and a read is never stale."""
    return d.execute_script(script)


def _question(d) -> str | None:
    return _js(d, "const q = document.getElementById('question'); return q ? q.textContent : null")


def _keys(d, *keys: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    for k in keys:
        ActionChains(d).send_keys(k).perform()


def _pressed(d, pos: int) -> str | None:
    return _js(d, f"const b = document.querySelector('section.cand[data-pos=\"{pos}\"] .grades "
                  f"button[aria-pressed=\"true\"]'); return b ? b.getAttribute('data-grade') : null")


def _inert(d) -> None:
    assert d.execute_script("return window.__pwned === undefined"), "a payload from the data ran"
    assert d.find_elements("tag name", "img") == []
    assert len(d.find_elements("tag name", "script")) == 1  # the page's own
    assert d.find_elements("css selector", "main b") == []


@pytest.mark.slow
def test_two_labelers_reload_adjudication_and_export(driver, site, cli):
    from selenium.webdriver.common.keys import Keys

    d, url = driver, site["url"]
    # --- alice: keyboard, mouse, a note ---
    _open(d, url + "?labeler=alice")
    _wait(d, lambda: _question(d) == QUESTION, "q1")
    cards = d.find_elements("css selector", "section.cand")
    assert [c.find_element("css selector", ".text").text for c in cards] == [SCRIPT, IMG, "Returns within 30 days."]
    assert cards[2].find_element("css selector", ".cid").text == ODD_ID
    _inert(d)
    _keys(d, "2", "0")  # c1 = 2, then the focus moves down: c2 = 0
    d.find_element("css selector", 'section.cand[data-pos="2"] button[data-grade="3"]').click()  # mouse: c3 = 3
    note = d.find_element("id", "note")
    note.click()
    note.send_keys("chunk 1 holds markup")
    note.send_keys(Keys.ESCAPE)  # leaving the box saves the note
    _saved(d)
    assert [_pressed(d, j) for j in range(3)] == ["2", "0", "3"]
    _keys(d, Keys.ARROW_RIGHT)
    _wait(d, lambda: _question(d) == "How long can I return it?", "q2")
    _keys(d, "1")
    _saved(d)
    # --- reload in the middle: the page comes back at q2 with its grade, focus on the open chunk ---
    d.refresh()
    _wait(d, lambda: d.find_element("tag name", "body").get_attribute("data-ready") == "1", "the reload")
    _wait(d, lambda: _question(d) == "How long can I return it?", "resume at q2")
    assert _pressed(d, 0) == "1" and _pressed(d, 1) is None
    assert "focused" in d.find_element("css selector", 'section.cand[data-pos="1"]').get_attribute("class")
    _keys(d, "0", Keys.ARROW_RIGHT)
    _wait(d, lambda: _question(d) == "Is there a loyalty discount?", "q3")
    _keys(d, "x")  # cannot be answered from these
    _saved(d)
    assert d.find_element("id", "unanswerable").is_selected()
    _keys(d, Keys.ARROW_LEFT, Keys.ARROW_LEFT)
    _wait(d, lambda: _question(d) == QUESTION, "back to q1")
    assert d.find_element("id", "note").get_attribute("value") == "chunk 1 holds markup"
    # --- bob, in the same browser (the name comes from the URL) ---
    _open(d, url + "?labeler=bob")
    _wait(d, lambda: _question(d) == QUESTION, "bob starts at q1")
    assert [_pressed(d, j) for j in range(3)] == [None, None, None]  # alice's labels are hers
    _keys(d, "2", "1", "3", Keys.ARROW_RIGHT)
    _wait(d, lambda: _question(d) == "How long can I return it?", "bob q2")
    _keys(d, "1", "2", Keys.ARROW_RIGHT)
    _wait(d, lambda: _question(d) == "Is there a loyalty discount?", "bob q3")
    _keys(d, "0", "0")
    _saved(d)
    # --- agreement view: kappa as the library computes it from the clicks ---
    d.find_element("id", "tab-agreement").click()
    _wait(d, lambda: d.find_elements("css selector", "#pairs tr.pair"), "the agreement table")
    row = [td.text for td in d.find_elements("css selector", "#pairs tr.pair td")]
    alice, bob = [2, 0, 3, 1, 0], [2, 1, 3, 1, 2]  # q1 c1 c2 c3, q2 c3 c4: graded by both
    assert row[:2] == ["alice · bob", "5"]
    assert row[3] == f"{cohen_kappa(alice, bob):.3f}" == "0.500"
    items = d.find_elements("css selector", "#disagreements > li")
    assert len(items) == 3  # q1 (c2), q2 (c4), q3 (unanswerable: alice yes, bob no)
    _inert(d)
    # --- carol adjudicates q1's c2 with the mouse; q2's c4 stays open (median rule) ---
    _open(d, url + "?labeler=carol&view=agreement")
    _wait(d, lambda: d.find_elements("css selector", "button.adjudicate"), "the adjudicate buttons")
    d.find_element("css selector", 'button.adjudicate[data-index="0"]').click()
    _wait(d, lambda: "Adjudicating question 1" in d.find_element("id", "position").text, "the adjudication view")
    chips = [c.text for c in d.find_elements("css selector", 'section.cand[data-pos="1"] .chip')]
    assert chips == ["alice: 0", "bob: 1"]
    d.find_element("css selector", 'section.cand[data-pos="1"] .final button[data-grade="1"]').click()
    _saved(d)
    _wait(d, lambda: d.find_elements("css selector", 'section.cand[data-pos="1"] .final button[aria-pressed="true"]'),
          "the final grade to show")
    _inert(d)
    # --- export: the qrels are what was clicked ---
    qrels = site["tmp"] / "labels.qrels"
    r = cli("label", site["data"], "--labels", site["labels"], "--qrels", qrels)
    assert r.exit_code == 0, r.output
    assert "1 adjudicated" in r.output and "1 median" in r.output
    assert qrels.read_text().splitlines() == [
        "q1 0 c1 2", "q1 0 c2 1", f"q1 0 {ODD_ID} 3",  # agreed, adjudicated by carol, agreed (a mouse click)
        f"q2 0 {ODD_ID} 1", "q2 0 c4 0",  # agreed (before and after the reload); alice 0 / bob 2 -> lower median
        "q3 0 c4 0", "q3 0 c1 0"]  # bob alone
    events = [json.loads(x) for x in site["labels"].read_text().splitlines()]
    assert {"labeler": "alice", "kind": "unanswerable", "value": True, "sample": "q3"}.items() <= {
        k: v for e in events if e["kind"] == "unanswerable" for k, v in e.items()}.items()
    assert any(e["kind"] == "note" and e["text"] == "chunk 1 holds markup" for e in events)


ROOT = Path(__file__).resolve().parents[2]


def _start(args: list[str], env: dict) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "ragmeter", "label", *args, "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)
    deadline = time.monotonic() + 60
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith("open "):
            return proc, line.split()[1].split("?")[0]
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError("the label server did not start")


def _call(url: str, token: str, body: dict | None = None, host: str | None = None) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(),
                                 headers={"X-Ragmeter-Token": token, "Content-Type": "application/json",
                                          **({"Host": host} if host else {})})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


@pytest.mark.slow
def test_a_killed_server_loses_no_acknowledged_click(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "q1", "question": "one?", '
                    '"retrieved": [{"id": "c1", "text": "x"}, {"id": "c2", "text": "y"}]}\n'
                    '{"id": "q2", "question": "two?", "retrieved": [{"id": "c1", "text": "x"}]}\n')
    labels = tmp_path / "d.labels.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc, url = _start([str(data)], env)
    try:
        page = urllib.request.urlopen(url, timeout=10).read().decode()
        token = page.split('name="ragmeter-token" content="')[1].split('"')[0]
        assert _call(url + "api/event", "wrong", {"kind": "grade"})[0] == 403
        assert _call(url + "api/meta", token, host="attacker.example:80")[0] == 403  # DNS rebinding
        for chunk, grade in (("c1", 2), ("c2", 0)):
            status, doc = _call(url + "api/event", token, {"kind": "grade", "labeler": "alice", "sample": "q1",
                                                           "chunk": chunk, "grade": grade})
            assert status == 200 and doc["ok"]
        assert _call(url + "api/event", token, {"kind": "grade", "labeler": "alice", "sample": "q1",
                                                "chunk": "not-a-candidate", "grade": 1})[0] == 400
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    proc, url = _start([str(data)], env)
    try:
        page = urllib.request.urlopen(url, timeout=10).read().decode()
        token = page.split('name="ragmeter-token" content="')[1].split('"')[0]
        status, progress = _call(url + "api/progress?labeler=alice", token)
        assert progress == {"total": 2, "done": [0], "resume": 1}  # q1 was finished: resume at q2
        status, task = _call(url + "api/task?i=0&labeler=alice", token)
        assert task["labels"] == {"c1": 2, "c2": 0}
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert len(labels.read_text().splitlines()) == 2
