"""The ``ragmeter`` Typer app and what every command shares: its error policy and list parsing.

Command modules (``*_cmd.py``) register on :data:`app` and import only from here and from
the library, never from each other; :mod:`ragmeter.cli.main` imports them all. At import they
load typer and the settings the options default to, nothing more (``ragmeter --help`` reads
no library code): each command imports what it runs when it runs.
"""

from __future__ import annotations

import functools
import logging
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeVar

import typer

from ragmeter.core.errors import RagmeterError
from ragmeter.core.settings import InvalidSettingError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Measure every stage of a RAG pipeline: retrieval, context and answers.")


def _usage_name(piece: str) -> str:
    """An argument in a usage line as click writes it: ``RUN``, ``[DATASET]`` (typer writes
    ``{run}`` and ``[dataset]``, which read as literal braces).

    >>> _usage_name("{run}"), _usage_name("[dataset]"), _usage_name("[RUNS_DIR]"), _usage_name("{files}...")
    ('RUN', '[DATASET]', '[RUNS_DIR]', 'FILES...')
    """
    dots = "..." if piece.endswith("...") else ""
    core = piece[:-3] if dots else piece
    if core.startswith("{") and core.endswith("}"):
        return core[1:-1].upper() + dots
    if core.startswith("[") and core.endswith("]"):
        return core.upper() + dots
    return piece


def _plain_usage() -> None:
    from typer.core import TyperArgument

    pieces = TyperArgument.get_usage_pieces

    def get_usage_pieces(self: TyperArgument, ctx: Any) -> list[str]:
        return [_usage_name(p) for p in pieces(self, ctx)]

    TyperArgument.get_usage_pieces = get_usage_pieces  # type: ignore[method-assign]


_plain_usage()


class _StderrHandler(logging.Handler):
    """Writes to the current ``sys.stderr`` (which a test runner may have swapped)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(f"ragmeter: {self.format(record)}\n")
        except Exception:  # noqa: BLE001 - logging must never break the command
            self.handleError(record)


def _say_judge_trouble() -> None:
    """The command line shows the judges' retries, throttling and give-ups on stderr (the
    library leaves ``ragmeter.*`` records to the caller's logging setup)."""
    logger = logging.getLogger("ragmeter.judges")
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        logger.addHandler(_StderrHandler(logging.WARNING))


_say_judge_trouble()

F = TypeVar("F", bound=Callable[..., Any])


def _print_version(value: bool) -> None:
    if value:
        from ragmeter._version import __version__

        typer.echo(f"ragmeter {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                       help="print ragmeter's version and exit")) -> None:
    """Measure every stage of a RAG pipeline: retrieval, context and answers."""

#: How a setting is spelled on the command line, where it is not ``--<name-with-dashes>``.
FLAGS = {"dataset": "DATASET", "budget_tokens": "--budget", "alerts": "--alert", "log": "LOG"}


def flag(setting: str) -> str:
    """The option a :class:`~ragmeter.core.settings.Settings` field comes from.

    >>> flag("max_reasks"), flag("budget_tokens")
    ('--max-reasks', '--budget')
    """
    return FLAGS.get(setting, "--" + setting.replace("_", "-"))


def friendly(fn: F) -> F:
    """A setting the library refuses becomes a usage error naming its option (exit status 2);
    any other of ragmeter's own errors becomes one line on stderr (exit status 2). Messages are
    redacted (URL userinfo, held API keys)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except InvalidSettingError as exc:
            from ragmeter.core.secrets import redact

            raise typer.BadParameter(redact(exc.message), param_hint=flag(exc.setting)) from None
        except RagmeterError as exc:
            from ragmeter.core.display import terminal_safe
            from ragmeter.core.secrets import redact

            typer.echo(f"error: {terminal_safe(redact(str(exc)), multiline=True)}", err=True)
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]


def split_metrics(values: list[str] | None) -> list[str] | None:
    """``--metrics a,b --metrics c`` -> [a, b, c]; commas inside parentheses are kept.

    >>> split_metrics(["ndcg(discount='jk2002', base=2.0)@5,mrr", "recall"])
    ["ndcg(discount='jk2002', base=2.0)@5", 'mrr', 'recall']
    """
    if not values:
        return None
    from ragmeter.core.measure import split_measure_list

    return [m for value in values for m in split_measure_list(value)]


RUN_HELP = "a run directory, or a run's name as `ragmeter runs` lists it"


def runs_dir_option(help_text: str = "where run names are looked up (default: $RAGMETER_RUNS_DIR, else runs)") -> Any:
    """The ``--runs-dir`` option of every command that reads a run by its name."""
    return typer.Option(None, "--runs-dir", help=help_text)


def format_option(*choices: str, what: str = "") -> Any:
    """The ``--format/-f`` option of a command: ``choices[0]`` by default, anything not in
    ``choices`` a usage error (exit 2) naming them, never silently the default output."""

    def check(value: str) -> str:
        if value not in choices:
            raise typer.BadParameter(f"use {', '.join(choices[:-1])} or {choices[-1]}, got {value!r}")
        return value

    listed = f"{', '.join(choices[:-1])} or {choices[-1]}"
    return typer.Option(choices[0], "--format", "-f", help=f"{what}: {listed}" if what else listed, callback=check)


def echo_text(text: str) -> None:
    """Text for a person on stdout, with escape sequences from data shown escaped (JSON output
    goes through ``typer.echo`` as it is)."""
    from ragmeter.core.display import terminal_safe

    typer.echo(terminal_safe(text, multiline=True))


def echo_err(message: str) -> None:
    """One line on stderr (escape sequences from data shown escaped)."""
    from ragmeter.core.display import terminal_safe

    typer.echo(terminal_safe(message, multiline=True), err=True)


PROGRESS_HELP = "auto (a bar on a terminal, plain lines otherwise), rich, plain or none; on stderr"


def progress_for(mode: str, judge: Any) -> AbstractContextManager[Any]:
    """The progress context ``--progress MODE`` asks for, fed by ``judge``'s stats (a null
    context for ``none``)."""
    from ragmeter.report.progress import progress_factory

    factory = progress_factory(mode)
    return factory(judge) if factory is not None else nullcontext()
