"""The ``ragmeter`` Typer app and what every command shares: its error policy and list parsing.

Command modules (``*_cmd.py``) register on :data:`app` and import only from here and from
the library, never from each other; :mod:`ragmeter.cli.main` imports them all.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, List, Optional, TypeVar

import typer

from ragmeter.core.errors import RagmeterError
from ragmeter.core.settings import InvalidSettingError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Measure every stage of a RAG pipeline: retrieval, context and answers.")

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
    any other of ragmeter's own errors becomes one line on stderr (exit status 2)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except InvalidSettingError as exc:
            raise typer.BadParameter(exc.message, param_hint=flag(exc.setting)) from None
        except RagmeterError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]


def split_metrics(values: Optional[List[str]]) -> Optional[List[str]]:
    """``--metrics a,b --metrics c`` -> [a, b, c]; commas inside parentheses are kept.

    >>> split_metrics(["ndcg(discount='jk2002', base=2.0)@5,mrr", "recall"])
    ["ndcg(discount='jk2002', base=2.0)@5", 'mrr', 'recall']
    """
    if not values:
        return None
    out: list[str] = []
    for value in values:
        depth, start = 0, 0
        for i, ch in enumerate(value):
            depth += ch == "("
            depth -= ch == ")"
            if ch == "," and depth == 0:
                out.append(value[start:i])
                start = i + 1
        out.append(value[start:])
    return [m.strip() for m in out if m.strip()]


def echo_err(message: str) -> None:
    """One line on stderr."""
    typer.echo(message, err=True)
