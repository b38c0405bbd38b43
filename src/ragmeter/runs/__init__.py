"""Run directories (write, list, load, resume) and the run driver that fills them from settings
(``runs.driver.run_evaluation``: ``ragmeter eval`` without the rendering). Names are imported on
first use: see :mod:`ragmeter._lazy`."""

from typing import TYPE_CHECKING

from ragmeter._lazy import lazy_facade

__getattr__, __dir__, __all__ = lazy_facade(__name__)

if TYPE_CHECKING:  # the public names, each imported from its home on first use
    from ragmeter.runs.store import Run, finish_run, list_runs, load_run, new_run_path, start_run
