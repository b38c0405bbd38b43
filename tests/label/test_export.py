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
