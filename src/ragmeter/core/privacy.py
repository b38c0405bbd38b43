"""Third-party telemetry turned off before the library that sends it is imported (README,
"Private"). Each switch is an environment variable the library reads at import or start-up;
one the user set already is left as it is.

- onnxruntime (the bundled embedder): its Linux build (1.32) writes a ``ProcessInfo`` event
  (a device id, the OS, CPU and Python path) to
  ``~/.cache/Microsoft/DeveloperTools/.onnxruntime/onnxruntime.db`` as it is imported, and
  uploads it when it can reach its endpoint. ``ORT_DISABLE_TELEMETRY=1`` before the import
  stops both (no file is made); ``onnxruntime.disable_telemetry_events()`` stops the events of
  a module imported before ragmeter's first session.
- Ray (``--engine ray``): usage stats are on by default for a cluster that ``ray.init`` starts;
  ``RAY_USAGE_STATS_ENABLED=0`` (a cluster started elsewhere keeps its own setting).
- MLflow (``mlflow-log``): 3.x sends usage events and writes an installation id to
  ``~/.config/mlflow/telemetry.json`` on import; ``MLFLOW_DISABLE_TELEMETRY=true``.
- LiteLLM (``litellm:<provider>/<model>``): as it is imported it downloads its price map from
  GitHub (three tries, then its bundled copy); ``LITELLM_LOCAL_MODEL_COST_MAP=True`` reads the
  bundled copy only. Its SDK sends no usage telemetry; its callbacks are emptied per call
  (:mod:`ragmeter.judges.backends.litellm`).
"""

from __future__ import annotations

import os

OFF = {
    "onnxruntime": {"ORT_DISABLE_TELEMETRY": "1"},
    "ray": {"RAY_USAGE_STATS_ENABLED": "0"},
    "mlflow": {"MLFLOW_DISABLE_TELEMETRY": "true"},
    "litellm": {"LITELLM_LOCAL_MODEL_COST_MAP": "True"},
}


def telemetry_off(library: str) -> None:
    """Set ``library``'s switches (:data:`OFF`) unless the environment already has them."""
    for name, value in OFF[library].items():
        os.environ.setdefault(name, value)
