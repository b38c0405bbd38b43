"""The HTML report in a real headless browser (Debian's chromium): it renders without script
errors, sorts, shows the drill-down, and escapes everything that comes from the data."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from ragmeter.runs import list_runs
from tests import judge_server, seed_judge

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


@pytest.mark.slow
def test_report_renders_in_a_headless_browser(report, tmp_path):
    dom = chromium("--dump-dom", report.as_uri(), tmp_path=tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert 'data-ready="1"' in html, "the report's script did not finish"
    assert "data-errors" not in html and "data-pwned" not in html
    assert "&lt;img src=x onerror=" in html  # shown as text, not run


@pytest.mark.slow
def test_screenshot_shows_a_rendered_page(report, tmp_path):
    shot = tmp_path / "report.png"
    out = chromium(f"--screenshot={shot}", "--window-size=1280,1600", report.as_uri(), tmp_path=tmp_path)
    assert out.returncode == 0 and shot.exists(), out.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 30_000  # a real page, not a blank canvas


# ---- the bundled sample at common laptop and desktop widths (issue 23) ------------------------

README_METRICS = ("precision,recall,hit_rate,mrr,ndcg,faithfulness,context_recall,factual_correctness,"
                  "answer_relevancy,semantic_similarity")


@pytest.fixture
def sample_report(cli, warranty, runs_dir, tmp_path):
    """The report of the bundled sample with README's first command's metrics (the seed judge over
    HTTP), its faithfulness provenance carrying the local judge's measured agreement."""
    from ragmeter.judges.local.agreement import DEFAULT_RULE, DEFAULT_SETTINGS, measured
    from ragmeter.judges.local.model import BUNDLED_SHA256

    srv, state = judge_server.start(seed_judge.over_http)
    try:
        out = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--metrics",
                  README_METRICS, "--judge", "openai:m", "--judge-base-url", state.url + "/v1")
        assert out.exit_code == 0, out.output
    finally:
        srv.shutdown()
    (run,) = list_runs(runs_dir)
    setup = json.loads((run.path / "setup.json").read_text())
    setup["metrics"]["faithfulness"]["judge"]["agreement"] = measured(BUNDLED_SHA256, DEFAULT_SETTINGS, DEFAULT_RULE)
    (run.path / "setup.json").write_text(json.dumps(setup))
    path = tmp_path / "report.html"
    assert cli("report", run.path, "--html", path).exit_code == 0
    return path


@pytest.fixture
def webdriver_for(tmp_path):
    from tests.label.test_server import _tools

    made = []

    def make(width: int):
        browser_path, chromedriver = _tools()
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        opts = webdriver.ChromeOptions()
        opts.binary_location = browser_path
        for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     f"--window-size={width},1000", f"--user-data-dir={tmp_path / f'profile{width}'}"):
            opts.add_argument(flag)
        d = webdriver.Chrome(service=Service(executable_path=chromedriver), options=opts)
        d.set_page_load_timeout(30)
        made.append(d)
        return d

    yield make
    for d in made:
        d.quit()


OVERFLOW = """
const doc = document.documentElement, out = [];
if (doc.scrollWidth > doc.clientWidth) out.push('page ' + doc.scrollWidth + ' > ' + doc.clientWidth);
document.querySelectorAll('main, table, .plots, header').forEach(function (el, i) {
  const r = el.getBoundingClientRect();
  if (el.offsetParent === null && el.tagName !== 'MAIN') return;  // inside a closed <details>
  const name = el.tagName + '#' + (el.id || i);
  if (el.scrollWidth > el.clientWidth + 1) out.push(name + ' scrolls ' + el.scrollWidth + ' > ' + el.clientWidth);
  if (r.right > doc.clientWidth + 1) out.push(name + ' ends at ' + r.right + ' > ' + doc.clientWidth);
});
return out;
"""


@pytest.mark.slow
@pytest.mark.parametrize("width", [1280, 1920])
def test_sample_report_fits_the_window_with_no_horizontal_overflow(sample_report, webdriver_for, width,
                                                                   tmp_path_factory):
    """At 1280 and 1920 px nothing scrolls sideways: the page (documentElement.scrollWidth <=
    clientWidth), the main column, the headline and query tables and the plots. The screenshots
    are kept (their folder is printed) for a person to look at."""
    d = webdriver_for(width)
    d.get(sample_report.as_uri())
    assert d.execute_script("return document.body.dataset.ready") == "1"
    assert d.execute_script("return document.body.dataset.errors || ''") == ""
    assert d.execute_script(OVERFLOW) == []
    for details in d.find_elements("css selector", "details"):
        d.execute_script("arguments[0].open = true", details)  # the drill-down too, opened
    assert d.execute_script(OVERFLOW) == []
    shots = tmp_path_factory.mktemp(f"report-{width}")
    assert d.save_screenshot(str(shots / f"report-{width}-top.png"))  # the first screen, as a reader sees it
    height = d.execute_script("return document.documentElement.scrollHeight")
    d.set_window_size(width, min(height + 140, 7000))
    shot = shots / f"report-{width}.png"
    assert d.save_screenshot(str(shot)) and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(f"screenshot: {shot}")
    text = d.find_element("tag name", "main").text
    assert "judge agreement 0.71 [0.67-0.75] on 216 claims" in text
    assert "n = 1: no interval" in text and "[0.600, 0.600]" not in text  # faithfulness: q1 alone, 3/5
    assert "n = 1 (value 0.600): no distribution" in text
    versions = [c.text for c in d.find_elements("css selector", "td.ver")]  # its own column, not "v1 1 / rank"
    assert len(versions) == 10 and all(v.startswith("v") and v[1:].isdigit() for v in versions)


def test_long_questions_are_cut_at_a_word_with_an_ellipsis():
    from ragmeter.report.html import shorten

    question = "Does the extended warranty for the R2 cover accidental damage from a power surge during a storm?"
    cut = shorten(question)
    assert cut.endswith("\u2026") and len(cut) <= 90
    assert question.startswith(cut[:-1]) and question[len(cut) - 1] == " "  # cut before a space, not mid-word
    assert shorten("Short question?") == "Short question?"


def test_histograms_show_their_counts():
    from ragmeter.report.html import _histogram

    svg = _histogram([0.05, 0.05, 0.95])
    assert ">2</text>" in svg and ">1</text>" in svg and "n = 3" in svg


def test_an_mtrag_task_shows_its_conversation_and_answerability(cli, runs_dir, tmp_path):
    """The report dropped the turns before a question and MTRAG's answerability label."""
    from tests.conftest import ROOT

    out = cli("eval", ROOT / "tests" / "data" / "mtrag" / "responses-3.jsonl", "-m", "recall", "--judge", "none")
    assert out.exit_code == 0, out.output
    (run,) = list_runs(runs_dir)
    path = tmp_path / "r.html"
    assert cli("report", run.path, "--html", path).exit_code == 0
    page = path.read_text()
    first, second = (page.split('<details id="q-dd6b6ffd177f2b311abe676261279d2f::', 3)[i] for i in (1, 2))
    assert "Conversation before this question" not in first  # turn 1: nothing came before it
    assert "<p><b>Answerability:</b> UNANSWERABLE <span class=\"muted\">(scored as unanswerable)</span></p>" in first
    assert "<h4>Conversation before this question (turn 2)</h4><p class=\"history\">User: where do the arizona " \
           "cardinals play this week\nAssistant: I&#x27;m sorry" in second
    assert "<b>Answerability:</b> ANSWERABLE <span class=\"muted\">(scored as answerable)</span>" in second


def test_a_single_turn_answerable_sample_shows_neither():
    from ragmeter.core.sample import Sample
    from ragmeter.report.html import _conversation

    assert _conversation(Sample("q1", question="Is it covered?")) == ""
    assert _conversation(Sample("q2", question="?", answerable=False)) == \
        "<p><b>Answerability:</b> unanswerable</p>"


def test_a_conversation_turn_shows_its_history_stored_once():
    """A conversation's turns hold their history as a TurnHistory (issue 38): shown as the text."""
    from ragmeter.core.history import TurnHistory
    from ragmeter.core.sample import Sample
    from ragmeter.report.html import _conversation

    lines = ["User: Which router has 24 months?", "Assistant: The R2."]
    shown = _conversation(Sample("c#2", question="And the R1?", metadata={"history": TurnHistory(lines, 2),
                                                                           "turn": 2}))
    assert shown == ('<h4>Conversation before this question (turn 2)</h4><p class="history">User: Which router has '
                     '24 months?\nAssistant: The R2.</p>')
    assert _conversation(Sample("c#1", question="Which?", metadata={"history": TurnHistory(lines, 0)})) == ""


def test_a_weighted_faithfulness_is_reconciled_on_the_page(cli, runs_dir, tmp_path, warranty):
    """The new-user trial: q1's 0.260 from the offline judge could not be traced to its claims.
    The page shows each claim's support and content words, and their sum is the run's score."""
    import re

    out = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--judge", "local",
              "-m", "faithfulness", "--only", "q1", "--ledger", tmp_path / "l.sqlite")
    assert out.exit_code == 0, out.output
    (run,) = list_runs(runs_dir)
    path = tmp_path / "r.html"
    assert cli("report", run.path, "--html", path).exit_code == 0
    page = path.read_text()
    score = json.loads((run.path / "results.jsonl").read_text().splitlines()[0])["metrics"]["faithfulness"]["value"]
    answer = page.split("<h4>Answer claims</h4>", 1)[1].split("</table>", 1)[0]
    rows = re.findall(r'<tr><td class="num">\d+</td><td>[^<]*</td><td class="num">(\d+)</td><td>(yes|no)</td>'
                      r'<td><span class="v-\w+">\w+</span> <span class="muted">support ([0-9.]+)</span>', answer)
    assert len(rows) == 4, answer  # the answer's four sentences, each weighed
    words, support = [int(w) for w, _, _ in rows], [float(s) for _, _, s in rows]
    on_topic = [t for _, t, _ in rows].count("yes")  # answer relevancy's statements, reconciled the same way
    assert f"answer relevancy (statements) = claims on topic / claims = {on_topic} / 4" in page
    assert words[0] == 3  # "your R2 is still under warranty.": r2, still, warranty
    assert abs(sum(w * s for w, s in zip(words, support)) / sum(words) - score) < 5e-4  # 3 decimals shown
    assert f"/ {sum(words)} = {score:.3f}" in page
    assert "Reference claims: none" in page  # faithfulness alone extracts none


def test_the_model_stages_answer_is_shown_beside_the_verdict_it_shaped():
    from ragmeter.report.html import _claims

    claims = [{"id": 1, "text": "The R2 has a 24-month warranty."}, {"id": 2, "text": "Shipping is free."}]
    verdicts = {"answer@context": [
        {"claim": 1, "verdict": "supported", "sources": ["r2"], "support": 0.607, "model": 1.7934},
        {"claim": 2, "verdict": "not_found", "sources": [], "support": 0.024}]}
    table = _claims("Answer claims", claims, verdicts, 0.3)
    assert '<span class="muted">support 0.607</span> <span class="muted">model +1.79</span>' in table
    assert table.count("model +") == 1 and "Model: the bundled model asked" in table
    assert "Model:" not in _claims("Answer claims", claims[1:], {"answer@context": verdicts["answer@context"][1:]})
