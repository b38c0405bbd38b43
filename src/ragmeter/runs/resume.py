"""``--resume RUN``: finish a run with the settings it was started with.

A run directory records the settings that decide its numbers (:data:`ragmeter.core.settings.STORED`:
dataset, metrics, k, view, judge, ledger, ...). Resuming takes those from the run, so the
finished run is the one that was started; the judgments it already made are in its ledger
and are not asked again. The budget (``--budget``, ``--budget-usd``) is stored too and holds
across resumes: the tokens the run spent before (``spent`` in its setup) count against it.
What only shapes this invocation (``--block``, ``--engine``, ``--address``, ``--dry-run``)
comes from the caller. One process at a time resumes a run (:mod:`ragmeter.runs.lock`).

A stored setting given again with the same value is fine. Settings that cannot change a
number (:data:`HONOURED`: the judge server's URL, the timeout, the concurrency, the prices,
the budget) are taken from the command line when given, so a run can be finished against a
server that moved, or with a larger budget. Any other stored setting given with another
value is refused, with the stored and the given value, rather than silently ignored. Asking
for no run directory or another run name is refused too: the run directory is the one resumed.

Paths are stored absolute (:func:`absolute_options`), so a run resumes from any folder, and
the dataset's fingerprint is checked (:func:`check_fingerprint`): a dataset that changed
since the run started is refused, since its judgments would be mixed with the new data's.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.secrets import MASK, has_userinfo
from ragmeter.core.settings import STORED, InvalidSettingError, Settings
from ragmeter.runs.store import Run

PATHS = ("dataset", "corpus", "criteria", "ledger", "action_criteria")
#: A ``--records`` source that is a file (not ``http(s):``, ``mcp:`` or ``python:``) is a path too.
SOURCE_SCHEMES = ("http:", "https:", "mcp:", "python:")
#: Stored settings that change no number: given with --resume, the new value is used (a budget
#: too: the run's spending so far, in its setup, counts against it).
HONOURED = ("judge_base_url", "timeout", "concurrency", "price_in", "price_out", "budget_tokens", "budget_usd")


def absolute_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Stored options with every path made absolute (a resume from another folder finds them).

    >>> absolute_options({"dataset": "/d/x.jsonl", "k": 5})["dataset"]
    '/d/x.jsonl'
    >>> absolute_options({"records": "http://crm/orders/{entity}"})["records"]
    'http://crm/orders/{entity}'
    """
    return {name: os.path.abspath(value) if _is_path(name, value) else value for name, value in options.items()}


def _is_path(name: str, value: Any) -> bool:
    if not isinstance(value, str) or value == ":memory:":
        return False
    return name in PATHS or (name == "records" and not value.startswith(SOURCE_SCHEMES))


def locked_again(run: Run) -> dict:
    """The run's setup as it is now that this process holds its lock: another process may have
    finished it since it was read (then there is nothing left to resume)."""
    from ragmeter.runs.store import load_run

    current = load_run(run.path).setup
    if current.get("status") == "complete" and run.setup.get("status") != "complete":
        raise InvalidSettingError("resume", f"the run {run.path} was completed by another process while this "
                                            f"one waited: there is nothing left to resume (`ragmeter show "
                                            f"{run.path}`)")
    return current


def check_fingerprint(run: Run, fingerprint: str) -> None:
    """Refuse to resume ``run`` on a dataset whose content changed since it started."""
    dataset = run.setup.get("dataset")
    if not isinstance(dataset, dict):
        return
    stored = dataset.get("fingerprint")
    if isinstance(stored, str) and stored and stored != fingerprint:
        raise InvalidInputError(f"the dataset changed since the run started (fingerprint {stored[:12]}... then, "
                                f"{fingerprint[:12]}... now)", file=str(dataset.get("path") or "the dataset"),
                                fix=f"restore the dataset the run {run.path} was started on, or start a new run "
                                    f"without --resume")
#: Settings of a new run directory that a resumed run cannot take (it keeps its own).
RUN_DIRECTORY = ("name", "save")


def _same(name: str, a: Any, b: Any) -> bool:
    if _is_path(name, a) and _is_path(name, b):
        return bool(os.path.abspath(a) == os.path.abspath(b))
    return bool(a == b)


def resume_settings(run: Run, options: Mapping[str, Any], given: Collection[str] = ()) -> Settings:
    """The settings to finish ``run`` with.

    ``options``: this invocation's settings by :class:`Settings` field name (its parsed
    options, defaults included); ``given``: the names the caller set explicitly. Stored
    settings come from the run; the others from ``options``. Raises
    :class:`~ragmeter.core.settings.InvalidSettingError` when a given stored setting differs
    from the run's, or when ``name`` or ``save=False`` is given.

    >>> from pathlib import Path
    >>> run = Run(Path("runs/x"), {"options": {"dataset": "d.jsonl", "k": 5, "judge": None}}, [], {})
    >>> s = resume_settings(run, {"k": 5, "engine": "local", "budget_tokens": 1000}, given={"k", "budget_tokens"})
    >>> s.dataset, s.k, s.judge, s.budget_tokens
    ('d.jsonl', 5, 'none', 1000)
    >>> resume_settings(run, {"k": 10}, given={"k"})
    Traceback (most recent call last):
    ...
    ragmeter.core.settings.InvalidSettingError: k: the run runs/x was started with k=5; resuming it with k=10 would ...
    """
    if run.status == "failed":
        raise InvalidSettingError("resume", f"the run {run.path} failed on its input "
                                            f"({str(run.setup.get('stopped_by', ''))[:300]}): fix the data and start "
                                            f"a new run without --resume (the judgments it made are in the ledger)")
    options_stored = run.setup.get("options")
    if not isinstance(options_stored, dict) or not options_stored.get("dataset"):
        raise InvalidInputError("the run's setup holds no options to resume it with (no dataset among them)",
                                file=str(run.path / "setup.json"), field="options.dataset",
                                fix="only a run that `ragmeter eval` started can be resumed: start a new run "
                                    "without --resume")
    try:
        stored = Settings.from_stored(options_stored)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, InvalidSettingError):
            raise InvalidInputError(f"the stored option {exc.setting} cannot be used: {exc.message}",
                                    file=str(run.path / "setup.json"), field=f"options.{exc.setting}") from None
        raise InvalidInputError(f"the stored options cannot be read ({exc})", file=str(run.path / "setup.json"),
                                field="options") from None
    honoured = {name: options[name] for name in HONOURED if name in given}
    conflicts = [(name, getattr(stored, name), options[name]) for name in STORED
                 if name in given and name not in honoured and not _same(name, options[name], getattr(stored, name))]
    if conflicts:
        what = ", ".join(f"{n}={a!r}" for n, a, _ in conflicts)
        asked = ", ".join(f"{n}={b!r}" for n, _, b in conflicts)
        raise InvalidSettingError(conflicts[0][0], f"the run {run.path} was started with {what}; resuming it with "
                                                   f"{asked} would change its numbers: drop that option to finish "
                                                   f"the run as it started, or start a new run without --resume")
    for name in RUN_DIRECTORY:
        if name in given and options[name] != getattr(Settings(), name):
            raise InvalidSettingError(name, f"--resume finishes the run directory {run.path} as it is: "
                                            f"{name}={options[name]!r} does not apply to it")
    invocation = {name: value for name, value in options.items() if name not in STORED and name not in RUN_DIRECTORY}
    settings = stored.replace(**invocation, **honoured)
    url = settings.judge_base_url
    if url is not None and has_userinfo(url) and f"//{MASK}@" in url:
        raise InvalidSettingError("judge_base_url", f"the run {run.path} was started with a judge URL holding "
                                                    f"credentials, which were not stored ({url}): give "
                                                    f"--judge-base-url again to resume it")
    return settings
