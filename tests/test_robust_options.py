"""Issue 17, item 11 (input half): options and inputs that meant silent nonsense are refused.

- ``gate --min m=nan``, ``--alpha`` outside (0, 1), ``--max-drop nan`` are usage errors (exit 2);
- ``pairwise`` with no common ids and ``agreement`` with ids the run does not have are errors;
- a corpus given as the dataset is refused with a hint; a CSV with an unclosed quote is a
  located error; a valid CSV cell over 128 KB is read;
- ``--block 0`` and ``--block -1`` are usage errors that state the allowed range.
(``--alert-command``'s environment and a missing command: tests/test_robust_watch.py.)
"""

from __future__ import annotations

import json

import pytest

from ragmeter import InvalidInputError, load_dataset
from ragmeter.analysis.pairwise import pairwise
from ragmeter.io.rows import make_samples

from .test_compare_gate import make_run


@pytest.fixture
def two_runs(tmp_path):
    a = make_run(tmp_path / "a", {"recall@5": [0.5, 0.7, 0.9]})
    b = make_run(tmp_path / "b", {"recall@5": [0.5, 0.7, 0.9]})
    return a.path, b.path


@pytest.mark.parametrize("args,flag", [
    (["--min", "recall@5=nan"], "--min"),
    (["--min", "recall@5=inf"], "--min"),
    (["--min", "recall@5=high"], "--min"),
    (["--alpha", "5"], "--alpha"),
    (["--alpha", "0"], "--alpha"),
    (["--alpha", "nan"], "--alpha"),
    (["--max-drop", "nan"], "--max-drop"),
    (["--max-drop", "-0.1"], "--max-drop"),
])
def test_gate_refuses_numbers_that_cannot_be_thresholds(cli, two_runs, args, flag):
    new, base = two_runs
    out = cli("gate", new, "--baseline", base, *args)
    assert out.exit_code == 2, out.output
    assert flag in out.output and "Usage" in out.output
    assert cli("gate", new, "--baseline", base, "--min", "recall@5=0.5").exit_code == 0


def test_pairwise_without_common_ids_is_an_error(cli, tmp_path):
    a = tmp_path / "a.jsonl"
    b = tmp_path / "b.jsonl"
    a.write_text(json.dumps({"id": "q1", "question": "Q?", "answer": "x"}) + "\n")
    b.write_text(json.dumps({"id": "other", "question": "Q?", "answer": "y"}) + "\n")
    out = cli("pairwise", a, b, "--judge", "openai:m", "--judge-base-url", "http://127.0.0.1:9/v1",
              "--ledger", tmp_path / "l.sqlite")
    assert out.exit_code == 2 and "no sample id has an answer in both A" in out.output, out.output
    with pytest.raises(InvalidInputError):
        pairwise(make_samples([(1, {"id": "q1", "answer": "x"})], "a"), [], judge=None)  # no call is made


def test_agreement_with_unknown_ids_is_an_error(cli, warranty, runs_dir, tmp_path):
    assert cli("eval", warranty / "dataset.jsonl", "--metrics", "hit_rate").exit_code == 0
    from ragmeter.runs import list_runs

    (run,) = list_runs(runs_dir)
    labels = tmp_path / "labels.csv"
    labels.write_text("id,hit_rate@5\nq1,1\nnope,1\n")
    out = cli("agreement", run.path, "--labels", labels)
    assert out.exit_code == 2 and "1 labeled id(s) are not samples of the run: 'nope'" in out.output, out.output


def test_a_corpus_given_as_the_dataset_is_refused_with_a_hint(cli, warranty):
    with pytest.raises(InvalidInputError, match=r"corpus.jsonl, line 1.*looks like a corpus.*--corpus"):
        load_dataset(warranty / "corpus.jsonl")
    out = cli("eval", warranty / "corpus.jsonl", "--no-save", "--judge", "none")
    assert out.exit_code == 2 and "--corpus" in out.output


def test_csv_unclosed_quote_is_located(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text('id,question\nq1,fine\nq2,"never closed\nq3,swallowed\n')
    with pytest.raises(InvalidInputError, match=r"d.csv, line 3: a quoted cell is never closed"):
        load_dataset(p)


def test_csv_cell_over_128_kb_is_read(tmp_path):
    p = tmp_path / "d.csv"
    long_answer = "word " * 60_000  # 300 KB, past the csv module's 131072 default
    p.write_text(f'id,question,answer\nq1,Q?,"{long_answer}"\n')
    (sample,) = load_dataset(p).samples
    assert sample.answer == long_answer


@pytest.mark.parametrize("value", ["0", "-1"])
def test_block_below_one_is_a_usage_error(cli, warranty, value):
    out = cli("eval", warranty / "dataset.jsonl", "--block", value, "--no-save", "--judge", "none")
    assert out.exit_code == 2, out.output
    assert "--block" in out.output and "1 or more" in out.output
