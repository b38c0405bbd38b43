"""Run directories (write, list, load, resume) and the run driver that fills them from settings
(``runs.driver.run_evaluation``: ``ragmeter eval`` without the rendering)."""

from ragmeter.runs.store import Run, finish_run, list_runs, load_run, new_run_path, start_run

__all__ = ["Run", "start_run", "finish_run", "load_run", "list_runs", "new_run_path"]
