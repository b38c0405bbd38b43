"""``ragmeter.cli.label_cmd``: ``ragmeter label``: a local page where people grade relevance;
agreement; export to labels."""

from __future__ import annotations

import json

import pytest

from tests.label.test_agreement import _labeled


def test_label_export_into_a_folder_that_cannot_be_created_isone_error_line(blocked, tmp_path, cli):
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "q1", "question": "first?", "retrieved": ["c1", "c2", "c3"]}\n'
                    '{"id": "q2", "question": "second?", "retrieved": ["c3", "c4"]}\n')
    _labeled(tmp_path).close()
    r = cli("label", data, "--labels", tmp_path / "l.jsonl", "--export", blocked / "labeled.jsonl")
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert f"error: {blocked / 'labeled.jsonl'}: cannot create or write the labeled dataset" in r.output
    assert "choose another with --export" in r.output
    r = cli("label", data, "--labels", tmp_path / "l.jsonl", "--qrels", blocked / "l.qrels")
    assert r.exit_code == 2 and "choose another with --qrels" in r.output


@pytest.mark.slow
def test_cli_export_writes_a_new_dataset_and_qrels(tmp_path, cli):
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "q1", "question": "first?", "retrieved": ["c1", "c2", "c3"], "relevant": ["c9"]}\n'
                    '{"id": "q2", "question": "second?", "retrieved": ["c3", "c4"]}\n'
                    '{"id": "q3", "question": "nobody labeled me", "retrieved": ["c1"], "relevant": ["c1"]}\n')
    store = _labeled(tmp_path)
    store.close()
    out, qrels = tmp_path / "labeled.jsonl", tmp_path / "labels.qrels"
    r = cli("label", data, "--labels", tmp_path / "l.jsonl", "--export", out, "--qrels", qrels)
    assert r.exit_code == 0, r.output
    assert "1 adjudicated, 3 agreed, 1 median" in r.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    # q1's label for c9 (a chunk the page never showed) is kept: the page's labels are merged in
    assert [r["relevant"] for r in rows] == [{"c9": 1.0, "c1": 2.0, "c2": 1.0, "c3": 3.0}, {"c3": 1.0, "c4": 0.0},
                                             {"c1": 1.0}]
    assert "labels: 0 changed, 5 added, 1 kept from the dataset (not graded on the page), in 2 samples" in r.output
    assert "q1: added c1 2, c2 1, c3 3; kept c9 1 (not graded on the page)" in r.output
    assert rows[0]["metadata"]["labeling"]["labelers"] == ["alice", "bob"]
    assert qrels.read_text().splitlines() == ["q1 0 c1 2", "q1 0 c2 1", "q1 0 c3 3", "q2 0 c3 1", "q2 0 c4 0"]
    r = cli("label", data, "--labels", tmp_path / "l.jsonl", "--agreement")
    assert "alice / bob" in r.output and "0.500" in r.output and "c4: alice 0, bob 2 -> open" in r.output
    assert cli("label", data, "--labels", tmp_path / "l.jsonl", "--export", data).exit_code == 2  # never overwrites
