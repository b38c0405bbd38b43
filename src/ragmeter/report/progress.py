"""A rich progress bar for judged runs: requests done, calls, tokens and ETA, on stderr.

``JudgeProgress`` is a :class:`ragmeter.core.progress.Progress`: pass it as ``evaluate(progress=...)``.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn


class JudgeProgress:
    def __init__(self, judge: Any) -> None:
        self.judge = judge
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[stats]}"), TimeRemainingColumn(),
                                 console=Console(stderr=True), transient=False)
        self.task: TaskID | None = None

    def __enter__(self) -> JudgeProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.stop()

    def _stats(self) -> str:
        st = self.judge.stats
        return f"{st.calls} calls, {st.cached} cached, {st.input_tokens + st.output_tokens} tokens"

    def start(self, label: str, total: int) -> None:
        self.task = self.progress.add_task(label, total=total, stats=self._stats())

    def advance(self, index: int) -> None:
        if self.task is not None:
            self.progress.update(self.task, advance=1, stats=self._stats())
