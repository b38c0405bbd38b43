"""A run parses its measure strings once and passes the measures down (the run driver, ``auto``,
the dry run and the engine used to parse each string two or three times)."""

from __future__ import annotations

import importlib

import pytest

from ragmeter.core.settings import Settings
from ragmeter.runs.driver import run_evaluation


@pytest.fixture
def parses(monkeypatch):
    engine_evaluate = importlib.import_module("ragmeter.engine.evaluate")  # the package names a function so
    seen: list[str] = []
    real = engine_evaluate.parse_measure

    def counted(text):
        seen.append(text)
        return real(text)

    monkeypatch.setattr(engine_evaluate, "parse_measure", counted)
    return seen


@pytest.mark.parametrize("extra", [{}, {"dry_run": True, "judge": "openai:m"}, {"block": 2}])
def test_each_measure_string_is_parsed_once_per_run(parses, warranty, tmp_path, extra):
    settings = Settings(dataset=str(warranty / "dataset.jsonl"), corpus=str(warranty / "corpus.jsonl"),
                        metrics=("ndcg@5", "faithfulness", "mrr"), save=False, ledger=str(tmp_path / "l.sqlite"),
                        **extra)
    done = run_evaluation(settings)
    assert sorted(parses) == ["faithfulness", "mrr", "ndcg@5"]
    assert done.plan is not None or done.result is not None or done.streamed is not None
