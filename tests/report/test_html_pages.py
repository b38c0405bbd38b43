"""``ragmeter.report.html_pages``: a large run's report is a page that stays a page (headline,
distributions, diagnosis counts, the worst samples) and its table's pages beside it, every string
escaped, and in a browser the same drill-down as the one-file report."""

from __future__ import annotations

import json
import random
import re

import pytest

from ragmeter.report import html_pages
from ragmeter.report.html import render_html
from ragmeter.report.html_pages import write_report as write_html
from ragmeter.runs import list_runs, load_run
from tests.report.test_html import EVIL, chromium, webdriver_for  # noqa: F401  (a fixture)

PAGE_CALL = re.compile(r"ragmeterPage\((\d+),(.*)\);\n\Z", re.S)


def _dataset(tmp_path, n: int, seed: int = 1):
    rnd = random.Random(seed)
    path = tmp_path / "big.jsonl"
    with open(path, "w") as f:
        for i in range(n):
            ranked = rnd.sample(range(40), 8)
            labels = {f"c{c}": rnd.choice([1, 1, 2]) for c in rnd.sample(range(40), rnd.randint(0, 3))}
            question = f"question {i}?" + (" " + EVIL if i % 7 == 3 else "")
            f.write(json.dumps({"id": f"q{i}" + ("<b>" if i % 11 == 5 else ""), "question": question,
                                "retrieved": [f"c{c}" for c in ranked], "relevant": labels}) + "\n")
    return path


@pytest.fixture
def big_run(cli, tmp_path, runs_dir):
    data = _dataset(tmp_path, 2_500)
    assert cli("eval", data, "-m", "precision,recall,hit_rate,reciprocal_rank,ndcg", "-k", "5").exit_code == 0
    (run,) = list_runs(runs_dir)
    return run


def _pages(folder):
    out = {}
    for f in sorted(folder.iterdir()):
        m = PAGE_CALL.match(f.read_text(encoding="utf-8"))
        assert m is not None, f
        out[int(m[1])] = json.loads(m[2])
    return out


def test_a_large_run_is_a_page_and_its_pages(cli, big_run, tmp_path):
    path = tmp_path / "report.html"
    out = cli("report", big_run.path, "--html", path)
    assert out.exit_code == 0, out.output
    page = path.read_text()
    assert len(page) < 200_000  # a page at any n: 2,500 samples here
    assert "http://" not in page and "https://" not in page  # no CDN, no network
    assert EVIL not in page and "&lt;script&gt;document.body.dataset.pwned" in page  # the worst samples, escaped
    for section in ("<h2>Headline</h2>", "<h2>Distributions</h2>", "<h2>Diagnosis</h2>", "<h2>Worst samples</h2>",
                    'id="queries" data-pages="3"'):
        assert section in page
    assert f"n = {big_run.summary['ndcg@5']['scored']}" in page  # every value in the distribution
    pages = _pages(html_pages.pages_folder(path))
    assert sorted(pages) == [0, 1, 2] and [len(p) for p in pages.values()] == [1000, 1000, 500]
    records = [r for i in sorted(pages) for r in pages[i]]
    assert [r[0] for r in records] == [row["id"] for row in big_run.results]  # every sample, in the run's order
    for f in html_pages.pages_folder(path).iterdir():
        text = f.read_text(encoding="utf-8")
        assert "<" not in text and EVIL not in text  # data only, markup written as \u003c
    by_id = {r[0]: r for r in records}
    row = next(r for i, r in enumerate(big_run.results) if i % 7 == 3 and r["metrics"]["ndcg@5"]["status"] == "scored")
    record = by_id[row["id"]]
    assert record[1].endswith(EVIL) and record[3] == [row["metrics"][m]["value"] for m in big_run.summary]
    unlabeled = next(r for r in big_run.results if r["metrics"]["ndcg@5"]["status"] != "scored")
    assert by_id[unlabeled["id"]][3][0] == ["n/c", unlabeled["metrics"]["precision@5"]["reason"]]


def test_the_diagnosis_counts_cover_every_sample(big_run, tmp_path):
    from ragmeter.analysis.diagnosis import count_labels, diagnose

    path = tmp_path / "r.html"
    write_html(big_run, str(path))
    counts = count_labels(diagnose(big_run.samples(), list(big_run.results)))
    page = path.read_text()
    for label, n in counts.items():
        assert (f'<span class="tag">{label}: {n}</span>' in page) == bool(n), label
    records = [r for p in _pages(html_pages.pages_folder(path)).values() for r in p]
    assert sum(len(r[4]) for r in records) == sum(counts.values())


def test_the_worst_samples_are_in_the_page(big_run, tmp_path):
    path = tmp_path / "r.html"
    write_html(big_run, str(path))
    page = path.read_text()
    values = big_run.values("ndcg@5")
    worst = sorted((v, i) for i, (sid, v) in enumerate(values.items()) if v is not None)[: html_pages.WORST]
    ids = list(values)
    for _, i in worst:
        assert f'<details id="q-{ids[i].replace("<", "&lt;").replace(">", "&gt;")}">' in page


def test_a_report_written_again_replaces_its_pages(big_run, tmp_path):
    path = tmp_path / "r.html"
    write_html(big_run, str(path))
    stale = html_pages.pages_folder(path) / "9999.js"
    stale.write_text("x")
    write_html(big_run, str(path))
    assert not stale.exists() and len(list(html_pages.pages_folder(path).iterdir())) == 3


def test_a_folder_that_does_not_exist_is_an_error(big_run, tmp_path, cli):
    out = cli("report", big_run.path, "--html", tmp_path / "no" / "r.html")
    assert out.exit_code != 0 and "--html" in out.output and "Traceback" not in out.output


DRILL_TEXT = """
const out = {};
document.querySelectorAll('details').forEach(function (d) { d.open = true; out[d.id] = d.innerText; });
return out;
"""


def _browser_drill_downs(d, one, paged) -> tuple[dict, dict]:
    """Each sample's drill-down text in the one-file report, and in the paged one opened from the
    table, page by page."""
    from selenium.webdriver.support.ui import WebDriverWait

    d.get(one.as_uri())
    want = d.execute_script(DRILL_TEXT)
    d.get(paged.as_uri())
    wait = WebDriverWait(d, 20)
    wait.until(lambda drv: drv.execute_script("return document.body.dataset.ready") == "1")
    got: dict = {}
    pages = int(d.find_element("id", "queries").get_attribute("data-pages"))
    for page in range(1, pages + 1):
        if page > 1:
            d.find_element("id", "next").click()
        wait.until(lambda drv, page=page: drv.execute_script("return document.body.dataset.page") == str(page))
        for i in range(len(d.find_elements("css selector", "#queries tbody tr"))):
            d.find_elements("css selector", "#queries tbody tr a")[i].click()
            got.update(d.execute_script("const o = {}; document.querySelectorAll('#drill-here details')"
                                        ".forEach(function (x) { x.open = true; o[x.id] = x.innerText; }); return o;"))
    assert d.execute_script("return document.body.dataset.errors || ''") == ""
    assert d.execute_script("return document.body.dataset.pwned || ''") == ""
    return want, got


@pytest.mark.slow
def test_in_a_browser_the_pages_show_and_the_drill_down_is_the_one_file_reports(cli, warranty, runs_dir, tmp_path,
                                                                                webdriver_for, monkeypatch):  # noqa: F811
    """The bundled sample with a hostile question and chunk text, judged (claims, verdicts), and a
    label-only run of hostile ids, questions, chunk texts and answers: each written as one file and,
    with the inline limit set to 0, as a page and its pages of 4. In Chromium, each sample's
    drill-down opened from the table reads exactly as the one-file report's, the pager works with
    no script error, and nothing from the data runs."""
    from tests import judge_server, seed_judge

    rows = [json.loads(line) for line in (warranty / "dataset.jsonl").read_text().splitlines()]
    rows[1]["question"] = "Return an unopened R1? " + EVIL
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    srv, state = judge_server.start(seed_judge.over_http)
    try:
        done = cli("eval", data, "--corpus", warranty / "corpus.jsonl", "--metrics",
                   "precision,recall,hit_rate,reciprocal_rank,ndcg,faithfulness,context_recall",
                   "--judge", "openai:m", "--judge-base-url", state.url + "/v1", "--name", "judged")
        assert done.exit_code == 0, done.output
    finally:
        srv.shutdown()
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": "q<i>1", "question": EVIL, "retrieved": [{"id": "a", "text": EVIL}, {"id": "b<script>"}],
         "relevant": ["b<script>", "zz&amp;"], "answer": EVIL, "reference": "r & <u>"},
        {"id": "q2", "question": "plain?", "retrieved": ["a", "b", "c"], "relevant": {"c": 2}},
        {"id": "q3", "question": None, "retrieved": [], "relevant": []},
        {"id": "q4", "question": "none relevant", "retrieved": ["a"], "relevant": {"a": 0}},
        {"id": "q5", "question": "missed", "retrieved": ["a", "b"], "relevant": ["x"], "context": ["b"]},
    ]))
    done = cli("eval", labels, "-m", "precision,recall,hit_rate,reciprocal_rank,ndcg", "-k", "2", "--name", "labels")
    assert done.exit_code == 0, done.output
    d = webdriver_for(1280)
    for run in list_runs(runs_dir):
        one, paged = tmp_path / f"{run.name}-one.html", tmp_path / f"{run.name}-paged.html"
        one.write_text(render_html(load_run(run.path)))
        with monkeypatch.context() as m:
            m.setattr(html_pages, "INLINE_LIMIT", 0)
            m.setattr(html_pages, "PAGE_ROWS", 4)
            write_html(load_run(run.path), str(paged))
        want, got = _browser_drill_downs(d, one, paged)
        assert got == want and len(got) == len(run.results), run.name
    text = d.find_element("tag name", "main").text
    assert EVIL in text  # shown as text, not run


@pytest.mark.slow
def test_the_page_renders_headless(big_run, tmp_path):
    path = tmp_path / "r.html"
    write_html(big_run, str(path))
    dom = chromium("--virtual-time-budget=5000", "--dump-dom", path.as_uri(), tmp_path=tmp_path)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'data-ready="1"' in dom.stdout and "data-errors" not in dom.stdout and "data-pwned" not in dom.stdout
    table = dom.stdout[dom.stdout.index('<table id="queries"'):]
    table = table[:table.index("</table>")]
    assert table.count("<tr>") == 1 + 1000  # the header, and page 1: 1,000 samples
