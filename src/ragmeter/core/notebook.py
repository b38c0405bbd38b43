"""Progress shown in a Jupyter notebook: one output line updated in place.

It uses IPython's ``display(..., display_id=True)`` handle (plain text, no widgets, so it
works in Jupyter, VS Code and Colab alike, and never needs ipywidgets); IPython is imported
only when a kernel is running. Outside a kernel, :func:`notebook_progress` gives None.
"""

from __future__ import annotations

import sys
import time
from typing import Any


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (IPython's kernel app is running)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    get = getattr(ipython, "get_ipython", None)
    shell = get() if get is not None else None
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


class NotebookProgress:
    """A :class:`~ragmeter.core.progress.Progress` drawn as one updating output line:
    ``verifying claims: 12/30 (40%), 3.1 s``. Updates are at most every 0.2 s."""

    def __init__(self, display: Any, clock: Any = time.monotonic) -> None:
        self._display, self._clock = display, clock
        self._handle: Any = None
        self._label, self._total, self._done = "", 0, 0
        self._started = self._shown = 0.0

    def _text(self) -> str:
        pct = f" ({100 * self._done // self._total}%)" if self._total else ""
        return f"{self._label}: {self._done}/{self._total}{pct}, {self._clock() - self._started:.1f} s"

    def _show(self, force: bool = False) -> None:
        now = self._clock()
        if not force and now - self._shown < 0.2 and self._done < self._total:
            return
        self._shown = now
        if self._handle is None:
            self._handle = self._display(_Text(self._text()), display_id=True)
        else:
            self._handle.update(_Text(self._text()))

    def start(self, label: str, total: int) -> None:
        self._label, self._total, self._done = label, total, 0
        self._started = self._clock()
        self._handle = None  # each stage gets its own line
        self._show(force=True)

    def advance(self, index: int) -> None:
        self._done += 1
        self._show()


class _Text:
    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def notebook_progress() -> NotebookProgress | None:
    """A progress line for this notebook, or None outside one."""
    if not in_notebook():
        return None
    from IPython.display import display

    return NotebookProgress(display)
