"""A judge's spending cap: tokens and/or US dollars, reserved per call before it is sent."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from ragmeter.core.errors import RagmeterError
from ragmeter.judges import cost
from ragmeter.judges.transport import LoopCondition


class BudgetExceeded(RagmeterError):
    """The next call would pass the configured budget; the run stops and can be resumed."""


@dataclass
class Budget:
    """Caps on tokens and/or US dollars (prices per million tokens).

    Each call reserves its worst case (prompt estimate + max output tokens) before it is
    sent. A call that does not fit waits for calls in flight to settle; when none is in
    flight and it still does not fit, the run stops (``BudgetExceeded``): nothing in flight
    is lost, and the ledger holds everything done so far.
    """

    max_tokens: int | None = None
    max_usd: float | None = None
    price_in: float | None = None
    price_out: float | None = None
    spent_in: int = 0
    spent_out: int = 0
    reserved_in: int = 0
    reserved_out: int = 0
    _loop_cond: LoopCondition = field(default_factory=LoopCondition, repr=False)

    def _condition(self) -> asyncio.Condition:
        return self._loop_cond.get()[0]

    def usd(self, tokens_in: int, tokens_out: int) -> float:
        return cost.usd(tokens_in, tokens_out, self.price_in, self.price_out)

    def _fits(self, est_in: int, est_out: int) -> bool:
        total_in, total_out = self.spent_in + self.reserved_in + est_in, self.spent_out + self.reserved_out + est_out
        if self.max_tokens is not None and total_in + total_out > self.max_tokens:
            return False
        return self.max_usd is None or self.usd(total_in, total_out) <= self.max_usd

    async def reserve(self, est_in: int, est_out: int) -> None:
        cond = self._condition()
        async with cond:
            while not self._fits(est_in, est_out):
                if self.reserved_in == 0 and self.reserved_out == 0:
                    cap = f"{self.max_tokens} tokens" if self.max_tokens is not None else f"${self.max_usd:.2f}"
                    raise BudgetExceeded(f"stopping before a call that could pass the budget of {cap} "
                                         f"({self.spent_in + self.spent_out} tokens spent); the judgments so far "
                                         f"are stored: rerun with a larger --budget to resume")
                await cond.wait()
            self.reserved_in += est_in
            self.reserved_out += est_out

    async def settle(self, est_in: int, est_out: int, used_in: int, used_out: int) -> None:
        cond = self._condition()
        async with cond:
            self.reserved_in -= est_in
            self.reserved_out -= est_out
            self.spent_in += used_in
            self.spent_out += used_out
            cond.notify_all()
