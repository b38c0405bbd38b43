"""``ragmeter.engine.retriever``: Score a live retriever: call it on each question, then score its ranked ids."""

from __future__ import annotations

import json
from pathlib import Path

import ragmeter


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
