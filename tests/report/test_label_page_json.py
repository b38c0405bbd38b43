"""``ragmeter.report.label_page_json``: a label-only run's pages put together from the columns are,
byte for byte, msgspec's encoding of the records (hostile strings, escapes, unscored cells, a
results file in another order than the samples), and the report written from them is the one
written from the records."""

from __future__ import annotations

import json
import random

import msgspec
import pytest

from ragmeter.report import html_pages, label_page_json
from ragmeter.report.label_page_json import PageJson, _spans, page_json
from ragmeter.report.label_pages import label_pages
from ragmeter.runs import list_runs, load_run
from tests.report.test_html import EVIL

ODD = ['a"b', "back\\slash", "<i>", "caf\u00e9", "tab\there", "nl\nx", "\u2028", "\U0001f600", "x\x01y"]


def _hostile(tmp_path, n: int, seed: int):
    rnd = random.Random(seed)
    names = [f"c{i}" for i in range(30)] + [f"c{i}{o}" for i, o in enumerate(ODD)]
    path = tmp_path / "hostile.jsonl"
    with open(path, "w") as f:
        for i in range(n):
            ranked = rnd.sample(names, rnd.randint(0, 8))
            labels = {c: rnd.choice([0, 1, 1, 2, 0.5]) for c in rnd.sample(names, rnd.randint(0, 4))}
            row = {"id": f"q{i}" + (ODD[i % len(ODD)] if i % 5 == 0 else ""), "retrieved": ranked, "relevant": labels,
                   "question": None if i % 13 == 0 else f"question {i} " + ("word " * rnd.randint(0, 30))
                   + (EVIL if i % 7 == 3 else ODD[i % len(ODD)])}
            if i % 3:
                row["answer"] = "answer " + ODD[(i + 1) % len(ODD)]
            if i % 4:
                row["reference"] = None if i % 8 == 1 else "ref " + EVIL
            f.write(json.dumps(row, ensure_ascii=i % 2 == 0) + "\n")
    return path


@pytest.mark.parametrize("k,metrics", [(5, "precision,recall,hit_rate,reciprocal_rank,ndcg"), (0, "hit_rate,ndcg"),
                                       (3, "recall,reciprocal_rank"), (2, "precision,average_precision")])
def test_each_page_is_msgspecs_encoding_of_its_records(cli, tmp_path, runs_dir, k, metrics):
    assert cli("eval", _hostile(tmp_path, 2_100, k), "-m", metrics, "-k", k).exit_code == 0
    (run,) = list_runs(runs_dir)
    pages = label_pages(run, list(run.summary), run.columns)
    assert pages is not None
    state = PageJson(pages)
    assert (~state.scored).any()  # rows with a cell not scored are among them
    for start, stop in [(0, 1_000), (1_000, 2_000), (2_000, 2_100), (5, 6), (17, 530)]:
        assert page_json(state, start, stop) == msgspec.json.encode(pages.records(start, stop))


def test_ids_encoded_page_by_page_where_there_are_many(cli, tmp_path, runs_dir, monkeypatch):
    assert cli("eval", _hostile(tmp_path, 1_100, 6), "-m", "recall,hit_rate,ndcg", "-k", "3").exit_code == 0
    (run,) = list_runs(runs_dir)
    pages = label_pages(run, list(run.summary), run.columns)
    assert pages is not None
    monkeypatch.setattr(label_page_json, "ENCODED_ONCE", 0)
    state = PageJson(pages)
    assert state.ids is None
    for start, stop in [(0, 1_000), (1_000, 1_100)]:
        assert page_json(state, start, stop) == msgspec.json.encode(pages.records(start, stop))


def test_results_in_another_order_than_the_samples(cli, tmp_path, runs_dir):
    """Rows of results.jsonl shuffled: each row's record is still its own sample's."""
    assert cli("eval", _hostile(tmp_path, 1_500, 9), "-m", "recall,hit_rate,ndcg", "-k", "4").exit_code == 0
    (run,) = list_runs(runs_dir)
    results = run.path / "results.jsonl"
    lines = results.read_bytes().split(b"\n")[:-1]
    random.Random(1).shuffle(lines)
    results.write_bytes(b"".join(line + b"\n" for line in lines))
    run = load_run(run.path)
    pages = label_pages(run, list(run.summary), run.columns)
    assert pages is not None and pages.order.tolist() != list(range(1_500))
    state = PageJson(pages)
    for start, stop in [(0, 1_000), (1_000, 1_500)]:
        assert page_json(state, start, stop) == msgspec.json.encode(pages.records(start, stop))
    fast, slow = tmp_path / "fast.html", tmp_path / "slow.html"
    html_pages.write_paged(run, str(fast))
    html_pages.write_paged(run, str(slow), from_columns=False)
    pairs = zip(sorted(html_pages.pages_folder(fast).iterdir()), sorted(html_pages.pages_folder(slow).iterdir()))
    assert all(a.read_bytes() == b.read_bytes() for a, b in pairs)


def test_the_written_pages_are_the_records_pages_byte_for_byte(cli, tmp_path, runs_dir, monkeypatch):
    assert cli("eval", _hostile(tmp_path, 2_100, 4), "-m", "hit_rate,reciprocal_rank,recall", "-k", "3").exit_code == 0
    (run,) = list_runs(runs_dir)
    fast, slow = tmp_path / "fast.html", tmp_path / "slow.html"
    html_pages.write_paged(load_run(run.path), str(fast))
    monkeypatch.setattr(html_pages, "page_json", lambda state, start, stop: None)  # every page from its records
    html_pages.write_paged(load_run(run.path), str(slow))
    pairs = list(zip(sorted(html_pages.pages_folder(fast).iterdir()), sorted(html_pages.pages_folder(slow).iterdir())))
    assert len(pairs) == 3 and all(a.read_bytes() == b.read_bytes() for a, b in pairs)
    assert fast.read_text() == slow.read_text().replace("slow.html.pages", "fast.html.pages")
    assert b"<" not in b"".join(a.read_bytes() for a, _ in pairs)  # written \u003c


def test_spans_of_rows_end_to_end_or_not():
    import numpy as np

    starts = np.array([0, 2, 2, 5, 9])
    at, local = _spans(starts, np.array([1, 2, 3]))
    assert at.tolist() == [2, 3, 4, 5, 6, 7, 8] and local.tolist() == [0, 0, 3, 7]
    at, local = _spans(starts, np.array([3, 0, 2]))
    assert at.tolist() == [5, 6, 7, 8, 0, 1, 2, 3, 4] and local.tolist() == [0, 4, 6, 9]


def test_a_run_with_no_label_at_all(cli, tmp_path, runs_dir):
    """Every sample without labels: every cell not computed, no mark, no finding; the same pages."""
    data = tmp_path / "bare.jsonl"
    data.write_text("".join(json.dumps({"id": f"q{i}", "question": f"q {i}", "retrieved": [f"c{i % 7}", "c9"],
                                        "relevant": {}}) + "\n" for i in range(1_200)))
    assert cli("eval", data, "-m", "hit_rate,ndcg", "-k", "2").exit_code == 0
    (run,) = list_runs(runs_dir)
    pages = label_pages(run, list(run.summary), run.columns)
    assert pages is not None and not (pages.marks == 3).any()
    state = PageJson(pages)
    assert page_json(state, 0, 1_000) == msgspec.json.encode(pages.records(0, 1_000))
    fast, slow = tmp_path / "fast.html", tmp_path / "slow.html"
    html_pages.write_paged(load_run(run.path), str(fast))
    html_pages.write_paged(load_run(run.path), str(slow), from_columns=False)
    pairs = list(zip(sorted(html_pages.pages_folder(fast).iterdir()), sorted(html_pages.pages_folder(slow).iterdir())))
    assert len(pairs) == 2 and all(a.read_bytes() == b.read_bytes() for a, b in pairs)
