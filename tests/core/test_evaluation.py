"""``EvaluationResult.log_to_mlflow`` reaches MLflow logging (a layer above core) through the
``ragmeter.result_hooks`` entry point, not through an import of ``ragmeter.runs``."""

from __future__ import annotations

import pytest

from ragmeter.core.errors import RagmeterError
from ragmeter.core.evaluation import result_hook


def test_the_mlflow_hook_is_the_runs_layers_logger():
    from ragmeter.runs.mlflow_log import log_result

    assert result_hook("log_to_mlflow") is log_result


def test_a_hook_the_metadata_lacks_says_to_reinstall():
    with pytest.raises(RagmeterError, match=r"reinstall ragmeter \(in a checkout: pip install -e \.\)"):
        result_hook("no_such_hook")
