"""``io/formats/turns.py``: ragmeter's conversations, one sample per turn with the history so far."""

from __future__ import annotations

import json

import ragmeter

NATIVE = {"id": "c1", "turns": [
    {"question": "How long is the R2 warranty?", "retrieved": ["w2", "w1"], "relevant": ["w2"],
     "answer": "24 months."},
    {"question": "And the other one?", "retrieved": ["w2", "w1"], "relevant": ["w1"], "answer": "12 months.",
     "standalone": False},
    {"question": "Can I get the R3 in blue?", "retrieved": ["x"], "relevant": {}, "answerable": False,
     "answer": "I don't know."},
]}


def write(tmp_path, *records):
    p = tmp_path / "conv.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records))
    return p


def test_turns_become_samples_with_history(tmp_path):
    data = ragmeter.load_dataset(write(tmp_path, NATIVE))
    assert [s.id for s in data] == ["c1#1", "c1#2", "c1#3"]
    second = data.samples[1]
    assert second.metadata["turn"] == 2 and second.metadata["standalone"] is False
    assert second.metadata["history"] == "User: How long is the R2 warranty?\nAssistant: 24 months."
    assert data.samples[2].answerable is False
    r = ragmeter.evaluate(data, ["reciprocal_rank"])
    assert r.values("reciprocal_rank@5") == [1.0, 0.5, None]
