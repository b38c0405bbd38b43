"""Run directories: write, list, load (names imported on first use: see :mod:`ragmeter.core.lazy_names`)."""

from typing import TYPE_CHECKING

from ragmeter.core.lazy_names import lazy_names

__all__ = ["Run", "start_run", "finish_run", "load_run", "list_runs", "new_run_path"]
__getattr__, __dir__ = lazy_names(__name__, dict.fromkeys(__all__, "ragmeter.runs.store"), globals())

if TYPE_CHECKING:
    from ragmeter.runs.store import Run, finish_run, list_runs, load_run, new_run_path, start_run
