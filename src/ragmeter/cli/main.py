"""The ``ragmeter`` command: the app with every command registered, and its entry point.

Each ``*_cmd`` module registers its commands on :data:`ragmeter.cli.app.app` when imported;
:data:`app` here is that app with every command module imported (on first use: ``ragmeter
--version`` imports none of them, nor typer).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer

__all__ = ["run"]  # and ``app``, made on first use (module __getattr__)


def _registered() -> typer.Typer:
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
    return app


def __getattr__(name: str) -> Any:
    if name == "app":
        return _registered()
    raise AttributeError(f"module 'ragmeter.cli.main' has no attribute {name!r}")


def run() -> None:
    """Console-script entry point (``ragmeter``; ``python -m ragmeter`` runs the same).
    ``ragmeter --version`` alone prints the version without loading the command line."""
    if sys.argv[1:] == ["--version"]:
        from ragmeter._version import __version__

        sys.stdout.write(f"ragmeter {__version__}\n")
        return
    if sys.argv[1:2] == ["trec"]:  # the one command registered alone: its start-up is the run's (see docs/trec.md)
        from ragmeter.cli import trec_cmd

        trec_cmd.app()
        return
    _registered()()


if __name__ == "__main__":  # pragma: no cover - `python -m ragmeter` is the supported form
    run()
