"""``ragmeter.label.export``: From the labels file to labels a dataset can use: the dataset's
``relevant`` field, TREC qrels."""

from __future__ import annotations

import pytest

from ragmeter.core.errors import InvalidInputError
from ragmeter.label.export import final_labels, qrels_lines
from ragmeter.label.tasks import Candidate, Task
from tests.label.test_agreement import _labeled


def _tasks() -> list[Task]:
    return [Task(0, "q1", "first?", "", tuple(Candidate(c, "t", "retrieved") for c in ("c1", "c2", "c3"))),
            Task(1, "q2", "second?", "", tuple(Candidate(c, "t", "retrieved") for c in ("c3", "c4")))]




def test_final_labels_adjudicated_then_agreed_then_the_rule(tmp_path):
    store = _labeled(tmp_path)
    final = final_labels(_tasks(), store.state)
    assert final.grades == {"q1": {"c1": 2, "c2": 1, "c3": 3}, "q2": {"c3": 1, "c4": 0}}
    assert final.how == {"adjudicated": 1, "agreed": 3, "median": 1}
    assert final_labels(_tasks(), store.state, resolve="max").grades["q2"]["c4"] == 2
    with pytest.raises(InvalidInputError, match="1 disagreement"):
        final_labels(_tasks(), store.state, resolve="adjudicated")
    assert final_labels(_tasks(), store.state, labelers=["bob"]).grades["q1"] == {"c1": 2, "c2": 1, "c3": 3}
    assert qrels_lines(final) == ["q1 0 c1 2", "q1 0 c2 1", "q1 0 c3 3", "q2 0 c3 1", "q2 0 c4 0"]
    store.close()


def test_the_export_keeps_a_label_the_page_never_showed_and_says_what_it_changed(tmp_path):
    """The issue-38 trial: q1 is labeled relevant for warranty-r2, claim-steps and exclusions; the page
    shows the five retrieved chunks (not exclusions) and a labeler grades two of them. The export
    keeps exclusions, so recall@5 stays 2/3 (it became 1.0 when exclusions was dropped)."""
    import ragmeter
    from ragmeter.label.export import export_dataset
    from ragmeter.label.store import LabelStore

    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "q1", "question": "R2 warranty?", "retrieved": ["warranty-r1", "warranty-r2", '
                    '"returns-30d", "claim-steps", "doa-exchange"], "relevant": ["warranty-r2", "claim-steps", '
                    '"exclusions"]}\n')
    store = LabelStore(tmp_path / "l.jsonl")
    for chunk, grade in (("warranty-r2", 2), ("claim-steps", 1), ("warranty-r1", 0)):
        store.append({"labeler": "ann", "sample": "q1", "kind": "grade", "chunk": chunk, "grade": grade})
    tasks = [Task(0, "q1", "R2 warranty?", "", tuple(Candidate(c, "t", "retrieved") for c in (
        "warranty-r1", "warranty-r2", "returns-30d", "claim-steps", "doa-exchange")))]
    out = tmp_path / "labeled.jsonl"
    counts = export_dataset(data, out, final_labels(tasks, store.state))
    store.close()
    (change,) = counts["changes"]
    assert change.text() == ("q1: warranty-r2 1 -> 2; added warranty-r1 0; kept exclusions 1 (not graded on the "
                             "page)")
    before = ragmeter.evaluate(str(data), ["recall@5"]).summary("recall@5").mean
    after = ragmeter.evaluate(str(out), ["recall@5"]).summary("recall@5").mean
    assert before == after == pytest.approx(2 / 3)
