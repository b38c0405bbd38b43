"""``EvaluationResult.log_to_mlflow`` reaches MLflow logging (a layer above core) through the
``ragmeter.result_hooks`` entry point, not through an import of ``ragmeter.runs``."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

import ragmeter
from ragmeter.core.errors import RagmeterError
from ragmeter.core.evaluation import result_hook
from tests.io.test_label_file import odd_label_file


def test_the_mlflow_hook_is_the_runs_layers_logger():
    from ragmeter.runs.mlflow_log import log_result

    assert result_hook("log_to_mlflow") is log_result


def test_a_hook_the_metadata_lacks_says_to_reinstall():
    with pytest.raises(RagmeterError, match=r"reinstall ragmeter \(in a checkout: pip install -e \.\)"):
        result_hook("no_such_hook")


def test_a_result_pickles(tmp_path: Path) -> None:
    """pickle (multiprocessing, joblib, a notebook's cache) failed: 'cannot pickle mappingproxy'."""
    for data in (odd_label_file(tmp_path), [{"id": "q1", "question": "?", "retrieved": ["a", "b"],
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
