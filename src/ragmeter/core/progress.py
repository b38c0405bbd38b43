"""The one progress protocol: how a long step reports how far it has come.

A stage calls ``start(label, total)`` once, then each item done calls ``advance(index)``
(``index``: the item's position in the stage, in whatever order items finish). The judged
engine passes the caller's progress object down to the judge; ``ragmeter.report.progress``
draws one as a terminal bar.
"""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    def start(self, label: str, total: int) -> None: ...

    def advance(self, index: int) -> None: ...
