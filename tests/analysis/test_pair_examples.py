"""``ragmeter.analysis.pair_examples``: pairs people judged, read from a file with located errors."""

from __future__ import annotations

import json

import pytest

from ragmeter import InvalidInputError
from ragmeter.analysis.pair_examples import PairExample, examples_text, load_pair_examples


def _write(tmp_path, doc, name="pairs.json"):
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def test_examples_load_from_json_and_yaml(tmp_path):
    item = {"question": "Covered?", "answer_1": "Yes, 24 months.", "answer_2": "Yes.", "winner": "1",
            "reason": "more complete"}
    want = [PairExample("Covered?", "Yes, 24 months.", "Yes.", "1", "more complete")]
    assert load_pair_examples(_write(tmp_path, {"examples": [item]})) == want
    assert load_pair_examples(_write(tmp_path, [dict(item, winner=1)])) == want  # a bare list; 1 read as "1"
    pytest.importorskip("yaml")
    yaml_text = "examples:\n  - answer_1: a\n    answer_2: b\n    winner: tie\n"
    assert load_pair_examples(_write(tmp_path, yaml_text, "pairs.yaml")) == [PairExample("", "a", "b", "tie")]


@pytest.mark.parametrize(("doc", "message"), [
    ({"examples": []}, "non-empty list"),
    ({"examples": ["x"]}, "row 1: each example must be an object"),
    ({"examples": [{"answer_1": "a", "answer_2": "", "winner": "1"}]}, 'row 1, field "answer_2"'),
    ({"examples": [{"answer_1": "a", "answer_2": "b", "winner": "A"}]}, "winner 'A' is not one of"),
    ({"examples": [{"answer_1": "a", "answer_2": "b", "winner": "1", "score": 3}]}, "unknown field 'score'"),
])
def test_a_bad_file_names_the_example_and_the_field(tmp_path, doc, message):
    with pytest.raises(InvalidInputError, match="pairs.json") as err:
        load_pair_examples(_write(tmp_path, doc))
    assert message in str(err.value)


def test_no_examples_add_no_text():
    assert examples_text([]) == ""
    assert examples_text([PairExample("", "a", "b", "tie")]).endswith("| winner: tie\n\n")
