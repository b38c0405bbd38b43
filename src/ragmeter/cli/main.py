"""The ``ragmeter`` command: the app with every command registered, and its entry point.

Each ``*_cmd`` module registers its commands on :data:`ragmeter.cli.app.app` when imported;
this module imports them all (and nothing imports this one but the entry points).
"""

from __future__ import annotations

from ragmeter.cli.app import app

# Registration order is the order ``ragmeter --help`` lists the commands in: keep it.
# isort: off
from ragmeter.cli import eval_cmd  # noqa: F401
from ragmeter.cli import runs_cmd  # noqa: F401
from ragmeter.cli import analysis_cmd  # noqa: F401
from ragmeter.cli import judge_cmd  # noqa: F401
from ragmeter.cli import trec_cmd  # noqa: F401
from ragmeter.cli import watch_cmd  # noqa: F401
from ragmeter.cli import import_cmd  # noqa: F401
from ragmeter.cli import label_cmd  # noqa: F401
from ragmeter.cli import testset_cmd  # noqa: F401
from ragmeter.cli import mlflow_cmd  # noqa: F401
# isort: on

__all__ = ["app", "run"]


def run() -> None:
    """Console-script entry point (``ragmeter``; ``python -m ragmeter`` runs the same)."""
    app()


if __name__ == "__main__":  # pragma: no cover - `python -m ragmeter` is the supported form
    run()
