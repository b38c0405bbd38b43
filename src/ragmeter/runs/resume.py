"""``--resume RUN``: finish a run with the settings it was started with.

A run directory records the settings that decide its numbers (:data:`ragmeter.core.settings.STORED`:
dataset, metrics, k, view, judge, ledger, ...). Resuming takes those from the run, so the
finished run is the one that was started; the judgments it already made are in its ledger
and are not asked again. What only shapes this invocation (budget caps, ``--block``,
``--engine``, ``--address``, ``--dry-run``) comes from the caller.

A stored setting given again with the same value is fine; with another value it is
refused, with the stored and the given value, rather than silently ignored. Asking for no
run directory or another run name is refused too: the run directory is the one resumed.
"""

from __future__ import annotations

import os
from typing import Any, Collection, Mapping

from ragmeter.core.settings import STORED, InvalidSettingError, Settings
from ragmeter.runs.store import Run

PATHS = ("dataset", "corpus", "criteria", "ledger", "action_criteria")
#: Settings of a new run directory that a resumed run cannot take (it keeps its own).
RUN_DIRECTORY = ("name", "save")


def _same(name: str, a: Any, b: Any) -> bool:
    if name in PATHS and a is not None and b is not None:
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
    stored = Settings.from_stored(run.setup.get("options", {}))
    conflicts = [(name, getattr(stored, name), options[name]) for name in STORED
                 if name in given and not _same(name, options[name], getattr(stored, name))]
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
    return stored.replace(**invocation)
