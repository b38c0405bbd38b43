"""``ragmeter.report.label_pages``: a label-only run's report pages built from its columns are the
pages the sample-by-sample path writes (findings and their evidence, marks, cells and their
reasons), and the runs it cannot take are left to that path."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragmeter.report import html_pages
from ragmeter.report.label_pages import _matches, label_of_ranked, label_pages
from ragmeter.runs import list_runs, load_run
from tests.report.test_html_pages import _dataset, _pages


@pytest.mark.parametrize("k,metrics", [(5, "precision,recall,hit_rate,reciprocal_rank,ndcg"), (3, "hit_rate,ndcg"),
                                       (2, "recall,reciprocal_rank"), (0, "hit_rate,reciprocal_rank,ndcg,recall"),
                                       (4, "precision,average_precision")])
def test_a_label_runs_pages_from_columns_are_the_sample_by_sample_ones(cli, tmp_path, runs_dir, k, metrics):
    """The columnar path (label_pages) writes the very records the sample-by-sample path writes:
    findings and their evidence, marks, cells with their reasons, missing chunks, every sample."""
    data = _dataset(tmp_path, 1_300, seed=k)
    lines = data.read_text().splitlines()
    lines[7] = json.dumps({"id": "odd", "question": None, "retrieved": [], "relevant": {"c1": 0}})
    lines[8] = json.dumps({"id": "grades", "question": "g", "retrieved": ["c1", "c2", "c3"], "relevant": {"c3": 0.5,
                                                                                                         "c2": 2}})
    data.write_text("\n".join(lines) + "\n")
    assert cli("eval", data, "-m", metrics, "-k", k).exit_code == 0
    (run,) = list_runs(runs_dir)
    fast, slow = tmp_path / "fast.html", tmp_path / "slow.html"
    html_pages.write_paged(load_run(run.path), str(fast))
    html_pages.write_paged(load_run(run.path), str(slow), from_columns=False)
    assert label_pages(run, list(run.summary), run.columns) is not None  # the columns were taken
    assert _pages(html_pages.pages_folder(fast)) == _pages(html_pages.pages_folder(slow))
    assert fast.read_text() == slow.read_text().replace("slow.html.pages", "fast.html.pages")


def test_matching_by_sorting_finds_each_keys_index():
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 50, 200), rng.permutation(50)[:30]
    got = _matches(a, b)
    assert got.tolist() == [b.tolist().index(x) if x in b else -1 for x in a.tolist()]
    assert (_matches(a, b[:0]) == -1).all()


@pytest.mark.parametrize("slots", [0, 3, 16])
def test_ranked_chunks_find_their_records_label_slot_by_slot_or_sorted(slots):
    """Each ranked code's own record's label of that code (never another record's), by either way."""
    rng = np.random.default_rng(slots)
    counts, lengths = rng.integers(0, 6, 300), rng.integers(0, 9, 300)
    labels = np.concatenate([rng.permutation(12)[:c] for c in counts]).astype(np.int32)
    ranked = np.concatenate([rng.permutation(12)[:n] for n in lengths]).astype(np.int32)
    label_starts = np.concatenate(([0], np.cumsum(counts)))
    of_rank = np.repeat(np.arange(300), lengths)
    got = label_of_ranked(ranked, of_rank, labels, label_starts, 12, slots)
    want = [next((int(label_starts[r]) + i for i, c in enumerate(labels[label_starts[r]:label_starts[r + 1]].tolist())
                  if c == x), -1) for x, r in zip(ranked.tolist(), of_rank.tolist())]
    assert got.tolist() == want and (got >= 0).any() and (got == -1).any()


def test_a_judged_run_or_one_without_its_samples_takes_the_sample_by_sample_path(cli, tmp_path, runs_dir, warranty):
    assert cli("eval", warranty / "dataset.jsonl", "-m", "ndcg,faithfulness", "--judge", "none").exit_code == 0
    (run,) = list_runs(runs_dir)
    assert label_pages(run, list(run.summary), run.columns) is None  # a judged measure
    data = _dataset(tmp_path, 20)
    assert cli("eval", data, "-m", "ndcg", "--runs-dir", tmp_path / "r2").exit_code == 0
    (labels,) = list_runs(tmp_path / "r2")
    assert label_pages(labels, list(labels.summary), labels.columns) is not None
    (labels.path / "samples.jsonl").unlink()
    assert label_pages(labels, list(labels.summary), labels.columns) is None


def test_the_buried_rule_at_its_edge_and_without_ndcg(cli, tmp_path, runs_dir):
    """RR 0.5 exactly is buried (``rr <= 0.5``), RR 1 is not, no relevant chunk retrieved is missed;
    a run without nDCG writes no nDCG in the evidence. Both paths write the same pages."""
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": "a", "retrieved": ["x", "y", "z"], "relevant": ["y"]},  # RR 0.5: buried
        {"id": "b", "retrieved": ["x", "y", "z"], "relevant": ["x"]},  # RR 1: not buried
        {"id": "c", "retrieved": ["x", "y", "z"], "relevant": ["q"]},  # missed
    ] * 400))
    lines = data.read_text().splitlines()
    data.write_text("".join(json.dumps({**json.loads(line), "id": f"s{i}"}) + "\n" for i, line in enumerate(lines)))
    assert cli("eval", data, "-m", "hit_rate,reciprocal_rank", "-k", "3").exit_code == 0
    (run,) = list_runs(runs_dir)
    pages = label_pages(run, list(run.summary), run.columns)
    assert pages is not None and pages.labels[:3] == [["buried"], [], ["missed_top_ranked"]]
    fast, slow = tmp_path / "fast.html", tmp_path / "slow.html"
    html_pages.write_paged(load_run(run.path), str(fast))
    html_pages.write_paged(load_run(run.path), str(slow), from_columns=False)
    assert _pages(html_pages.pages_folder(fast)) == _pages(html_pages.pages_folder(slow))
    (record,) = [r for r in _pages(html_pages.pages_folder(fast))[0] if r[0] == "s0"]
    assert record[5][7] == [["buried", "first relevant chunk at rank 2", "rerank; nothing else has to change"]]
