"""The HTML report in a real headless browser (Debian's chromium): it renders without script
errors, sorts, shows the drill-down, and escapes everything that comes from the data."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from ragmeter.runs import list_runs

from . import judge_server, seed_judge

EVIL = '<script>document.body.dataset.pwned="script"</script><img src=x onerror="document.body.dataset.pwned=1">'


def browser() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail("chromium is not installed: .ci/run installs Debian's chromium for this test")
    pytest.skip("chromium not installed (apt-get install chromium); CI always runs this test")


def chromium(*args, tmp_path) -> subprocess.CompletedProcess:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-default-apps",
             f"--user-data-dir={tmp_path / 'profile'}"]
    return subprocess.run([browser(), *flags, *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def report(cli, warranty, runs_dir, tmp_path):
    data = tmp_path / "data.jsonl"
    rows = [json.loads(line) for line in (warranty / "dataset.jsonl").read_text().splitlines()]
    rows[1]["question"] = "Return an unopened R1? " + EVIL
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    corpus = tmp_path / "corpus.jsonl"
    lines = (warranty / "corpus.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["text"] += " " + EVIL
    corpus.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    srv, state = judge_server.start(seed_judge.over_http)
    try:
        out = cli("eval", data, "--corpus", corpus, "--metrics",
                  "precision,recall,hit_rate,reciprocal_rank,ndcg,faithfulness,context_recall",
                  "--judge", "openai:m", "--judge-base-url", state.url + "/v1")
        assert out.exit_code == 0, out.output
    finally:
        srv.shutdown()
    (run,) = list_runs(runs_dir)
    path = tmp_path / "report.html"
    assert cli("report", run.path, "--html", path).exit_code == 0
    return path


def test_report_is_self_contained_and_escaped(report):
    text = report.read_text()
    assert "http://" not in text and "https://" not in text  # no CDN, no network
    assert EVIL not in text and "&lt;script&gt;document.body.dataset.pwned" in text
    assert "0.628" in text and "not_extracted" in text and "2 business days" in text


def test_report_renders_in_a_headless_browser(report, tmp_path):
    dom = chromium("--dump-dom", report.as_uri(), tmp_path=tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert 'data-ready="1"' in html, "the report's script did not finish"
    assert "data-errors" not in html and "data-pwned" not in html
    assert "&lt;img src=x onerror=" in html  # shown as text, not run


def test_screenshot_shows_a_rendered_page(report, tmp_path):
    shot = tmp_path / "report.png"
    out = chromium(f"--screenshot={shot}", "--window-size=1280,1600", report.as_uri(), tmp_path=tmp_path)
    assert out.returncode == 0 and shot.exists(), out.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 30_000  # a real page, not a blank canvas
