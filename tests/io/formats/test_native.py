"""``io/formats/native.py``: ragmeter's own records, under its field names or the common other ones."""

from __future__ import annotations

import ragmeter


def test_the_common_other_names_are_read_as_ragmeters():
    rows = [{"qid": "q1", "query": "How long?", "retrieved_ids": ["a", "b"], "relevance": {"b": 2},
             "reference_answer": "24 months."}]
    s = ragmeter.load_dataset(rows).samples[0]
    assert (s.id, s.question, s.retrieved_ids, dict(s.relevance), s.reference) == (
        "q1", "How long?", ("a", "b"), {"b": 2.0}, "24 months.")
