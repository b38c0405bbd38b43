"""Issue 29, item 3: the labeling page in real chromium across a kill -9 and a restart of its
server on the same port.

Before: page open, 4 grades saved, the server killed and restarted, 3 more grades: the page
showed ``saved ✓`` and ``data-pending=0`` while the server had answered 403 (its token changed)
and the labels file still held 4 lines. Now every grade the page shows as saved is in the file;
the stale page says so plainly, keeps the unsaved grades in the browser, and a reload saves
each of them exactly once (a click re-sent is never written twice)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragmeter.label.store import load_state

ROOT = Path(__file__).resolve().parents[2]


def _tools() -> tuple[str, str]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    why = None
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
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1200,1400",
                 f"--user-data-dir={tmp_path / 'profile'}"):
        opts.add_argument(flag)
    d = webdriver.Chrome(service=Service(executable_path=chromedriver), options=opts)
    d.set_page_load_timeout(30)
    d.set_script_timeout(30)
    yield d
    d.quit()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(data: Path, labels: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "ragmeter", "label", str(data), "--labels", str(labels),
                             "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    assert proc.stdout is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith("open "):
            return proc
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError("the label server did not start")


def _kill(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    if proc.stdout:
        proc.stdout.close()


def _wait(d, condition, what: str, timeout: float = 20):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(d, timeout, poll_frequency=0.05).until(lambda _: condition(), message=what)


def _body(d, name: str) -> str | None:
    return d.execute_script(f"return document.body.getAttribute('{name}')")


def _status(d) -> str:
    return d.execute_script("return document.getElementById('status').textContent")


def _question(d) -> str | None:
    return d.execute_script("const q = document.getElementById('question'); return q ? q.textContent : null")


def _keys(d, *keys: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    for k in keys:
        ActionChains(d).send_keys(k).perform()


def _shown(d) -> dict[str, int]:
    """The grades the page shows pressed on the current question."""
    return d.execute_script("""
        const out = {};
        for (const card of document.querySelectorAll('section.cand')) {
          const b = card.querySelector('.grades button[aria-pressed="true"]');
          if (b) out[card.getAttribute('data-chunk')] = Number(b.getAttribute('data-grade'));
        }
        return out;""")


def _saved_shown(d) -> bool:
    return _body(d, "data-pending") == "0" and _body(d, "data-stale") != "1" and "saved" in _status(d) \
        and "NOT SAVED" not in _status(d)


def _nothing_waiting(d) -> bool:
    return _body(d, "data-pending") == "0" and _body(d, "data-stale") == "0" and "NOT SAVED" not in _status(d)


def _file_grades(labels: Path, sample: str) -> dict[str, int]:
    return load_state(labels).grades.get("alice", {}).get(sample, {})


def _lines(labels: Path) -> list[dict]:
    return [json.loads(x) for x in labels.read_text().splitlines()] if labels.exists() else []


@pytest.mark.slow
def test_grades_shown_saved_are_in_the_file_across_a_kill_and_restart(driver, tmp_path):
    from selenium.webdriver.common.keys import Keys

    d = driver
    data, labels = tmp_path / "d.jsonl", tmp_path / "d.labels.jsonl"
    chunks = [{"id": f"c{i}", "text": f"passage {i}"} for i in range(1, 5)]
    data.write_text("".join(json.dumps({"id": q, "question": f"question {q}?", "retrieved": chunks}) + "\n"
                            for q in ("q1", "q2", "q3")))
    port = _free_port()
    url = f"http://127.0.0.1:{port}/?labeler=alice"
    proc = _serve(data, labels, port)
    try:
        d.get(url)
        _wait(d, lambda: _body(d, "data-ready") == "1", "the page to start")
        _wait(d, lambda: _question(d) == "question q1?", "q1")
        _keys(d, "2", "0", "3", "1")  # 4 grades, saved
        _wait(d, lambda: _saved_shown(d), "4 grades saved")
        assert _file_grades(labels, "q1") == _shown(d) == {"c1": 2, "c2": 0, "c3": 3, "c4": 1}
        # --- kill -9, restart on the same port: the page's token is now stale ---
        _kill(proc)
        proc = _serve(data, labels, port)
        _keys(d, Keys.ARROW_RIGHT)  # the next question needs the server: the stale token is seen at once
        _wait(d, lambda: _body(d, "data-stale") == "1", "the page to see its token is stale")
        assert "NOT SAVED" in _status(d) and "reload" in _status(d) and _question(d) == "question q1?"
        _keys(d, Keys.ARROW_UP, Keys.ARROW_UP, Keys.ARROW_UP, "1", "1", "1")  # 3 more grades: c1, c2, c3
        _wait(d, lambda: _body(d, "data-stale") == "1", "the page to see its token is stale")
        _wait(d, lambda: _body(d, "data-pending") == "3", "3 grades kept unsaved")
        assert "NOT SAVED" in _status(d) and "reload" in _status(d) and "saved \u2713" not in _status(d)
        assert len(_lines(labels)) == 4, "nothing was written with the stale token"
        # --- killed again while a grade is on its way: the page retries, then meets the new server ---
        _kill(proc)
        _keys(d, "2")  # the page is stale: kept at once, not sent
        _wait(d, lambda: _body(d, "data-pending") == "4", "4 grades kept")
        proc = _serve(data, labels, port)
        # --- the reload saves what was kept, once ---
        d.refresh()
        _wait(d, lambda: _body(d, "data-ready") == "1", "the reloaded page")
        _wait(d, lambda: _saved_shown(d), "the kept grades saved after the reload")
        events = _lines(labels)
        assert len(events) == 8 and len({e["eid"] for e in events}) == 8, events
        assert _file_grades(labels, "q1") == {"c1": 1, "c2": 1, "c3": 1, "c4": 2}  # every grade, as clicked
        _wait(d, lambda: _question(d) == "question q2?", "the reload resumes at q2 (q1 is done)")
        _keys(d, Keys.ARROW_LEFT)
        _wait(d, lambda: _question(d) == "question q1?" and _shown(d) == _file_grades(labels, "q1"),
              "the page shows what the file holds")
        # --- a second reload, and a second tab: nothing is sent twice ---
        d.refresh()
        _wait(d, lambda: _body(d, "data-ready") == "1" and _nothing_waiting(d), "the second reload")
        d.switch_to.new_window("tab")
        d.get(url)
        _wait(d, lambda: _body(d, "data-ready") == "1" and _nothing_waiting(d), "a second tab")
        assert len(_lines(labels)) == 8
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=10)
