"""New-user trial of the columnar label path (2026-12-01): what tripped a first-time user."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from types import MappingProxyType

import numpy as np

import ragmeter

RECORDS = [
    {"id": "q1", "retrieved": ["a", "b", "c", "d"], "relevant": ["b", "d"]},
    {"id": "q2", "retrieved": ["x", "y"], "relevant": {"y": 2, "z": 1}},
    {"id": "q3", "retrieved": ["α", "β"], "relevant": {"α": 1.0}},
]


def _label_file(tmp_path: Path) -> Path:
    """The records with a BOM, CRLF line ends, raw UTF-8 ids and blank lines: odd but valid."""
    path = tmp_path / "odd.jsonl"
    body = "\r\n".join(json.dumps(r, ensure_ascii=False) for r in RECORDS)
    path.write_bytes(("\ufeff" + body + "\r\n\r\n").encode("utf-8"))
    return path


def test_odd_file_scores_as_computed_by_hand(tmp_path: Path) -> None:
    result = ragmeter.evaluate(_label_file(tmp_path), "ndcg@10,mrr")
    ndcg = [(1 / np.log2(3) + 1 / np.log2(5)) / (1 + 1 / np.log2(3)),  # b, d at ranks 2, 4
            (2 / np.log2(3)) / (2 + 1 / np.log2(3)),  # y (grade 2) at rank 2; ideal y, z
            1.0]
    assert result.values("ndcg@10") == ndcg
    assert result.values("reciprocal_rank@5") == [1 / 2, 1 / 2, 1.0]
    assert result["mrr"][0].value == 1 / 2


def test_a_result_pickles(tmp_path: Path) -> None:
    """pickle (multiprocessing, joblib, a notebook's cache) failed: 'cannot pickle mappingproxy'."""
    for data in (_label_file(tmp_path), [{"id": "q1", "question": "?", "retrieved": ["a", "b"],
                                          "relevant": ["b"], "metadata": {"t": 1}}]):
        result = ragmeter.evaluate(data, "ndcg@10,mrr")
        again = pickle.loads(pickle.dumps(result))
        assert again.means() == result.means()
        assert again.measures == result.measures
        assert [m.params for m in again.measures] == [m.params for m in result.measures]
        dataset = ragmeter.load_dataset(data)
        samples = pickle.loads(pickle.dumps(list(dataset.samples)))
        assert samples == list(dataset.samples)
        assert all(type(s.relevance) is type(t.relevance) for s, t in zip(samples, dataset.samples))


def test_an_agent_run_pickles() -> None:
    from ragmeter.actions.calls import AgentRun

    run = AgentRun(id="a1", question="?", metadata=MappingProxyType({"k": 1}))
    assert pickle.loads(pickle.dumps(run)) == run


def test_evaluate_retriever_takes_a_path_as_evaluate_does(tmp_path: Path) -> None:
    """evaluate(path) works; evaluate_retriever(f, path) raised AttributeError: 'str' object has
    no attribute 'question'."""
    path = tmp_path / "q.jsonl"
    rows = [{"id": "q1", "question": "R2 warranty?", "retrieved": [], "relevant": ["b", "d"]},
            {"id": "q2", "question": "R1 warranty?", "retrieved": [], "relevant": {"d": 2}}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")

    def retriever(question: str) -> list[str]:
        return ["a", "b", "c", "d"]

    expected = [1 / 2, 1 / 4]  # first relevant at rank 2 (b), at rank 4 (d)
    for data in (path, str(path), ragmeter.load_dataset(path), rows, iter(ragmeter.load_dataset(path).samples)):
        result = ragmeter.evaluate_retriever(retriever, data, k=None, metrics=["mrr"])
        assert result.values("reciprocal_rank") == expected


def test_a_table_with_several_cutoffs_names_each_cutoff() -> None:
    """``-m ndcg@10,mrr`` shows ranks 1-10 and scored RR at the default --k 5: the first relevant
    chunk at rank 7 read as 'RR 0.000' under 'ranks 1-10', and the mean line said 'MRR 0.000'."""
    from ragmeter.report.table import render_table

    rows = [{"id": "q1", "retrieved": list("abcdefg"), "relevant": ["g"]}]
    result = ragmeter.evaluate(rows, "ndcg@10,mrr,hit_rate")  # k=5 for the two without @k
    header, _row, _blank, means = render_table(result).splitlines()[:4]
    assert header.split()[-3:] == ["nDCG@10", "RR@5", "hit@5"]
    assert means.split("|")[1].strip() == "MRR@5 0.000"
    assert result.values("ndcg@10") == [1 / np.log2(8)]  # one relevant at rank 7: 1/log2(8) over 1
    same_k = render_table(ragmeter.evaluate(rows, "ndcg@10,mrr@10")).splitlines()
    assert same_k[0].split()[-2:] == ["nDCG@10", "RR"]  # one cut-off: the ranks shown are its
    assert same_k[1].split()[-1] == f"{1 / 7:.3f}"


def test_watch_once_with_nothing_new_says_so(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A second ``watch --once`` on the same log printed nothing at all and exited 0."""
    log = tmp_path / "requests.jsonl"
    log.write_text(json.dumps({"request_id": "r1", "question": "How long is the R1 warranty?",
                               "answer": "12 months.", "retrieved": [{"id": "c1", "text": "12 months."}]}) + "\n",
                   encoding="utf-8")
    args = ("watch", log, "--once", "--judge", "none", "--metrics", "ndcg@10", "--state", tmp_path / "state")
    first = cli(*args)
    # ndcg needs labels the log has none of: "scored 1 new" said otherwise before (issue 31)
    assert first.exit_code == 0 and "read 1 new, nothing computed" in first.output and "no new line" not in first.output
    again = cli(*args)
    assert again.exit_code == 0
    state = tmp_path / "state"
    assert again.output.strip() == f"no new line in {log} since the last pass (its offset is kept in {state})"


def test_a_bad_chunk_id_names_its_fix_in_words(tmp_path: Path) -> None:
    """The fix read 'give each record a string item 1 chunk id'."""
    import pytest

    from ragmeter.core.errors import InvalidInputError

    for item, problem in (("true", "item 2 chunk id must be a string, got a boolean"),
                          ("null", "missing item 2 chunk id")):
        path = tmp_path / "bad.jsonl"
        path.write_text('{"id": "q1", "retrieved": ["a"], "relevant": ["a"]}\n'
                        f'{{"id": "q2", "retrieved": ["b", {item}], "relevant": ["b"]}}\n', encoding="utf-8")
        with pytest.raises(InvalidInputError) as caught:
            ragmeter.load_dataset(path)
        assert str(caught.value) == (f'{path}, line 2 (id "q2"), field "retrieved": {problem}. '
                                     "Fix: write the item 2 chunk id as a non-empty string")
