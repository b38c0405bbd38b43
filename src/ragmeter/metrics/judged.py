"""Shared helpers of the judged metrics: each is a pure function of one sample's evidence.

A metric returns a float, or raises ``Stop`` with the reason it cannot score the sample:
``Stop(Unavailable(reason))`` becomes ``NotComputed(reason)``, ``Stop(Unavailable(error,
failed=True))`` becomes ``Failed(error)``.
"""

from __future__ import annotations

from typing import Any, Iterable

from ragmeter.claims.matrix import Claim, Unavailable, Verdict


class Stop(Exception):
    def __init__(self, why: Unavailable) -> None:
        super().__init__(why.reason)
        self.why = why


def need(value: Any, missing: str = "not available") -> Any:
    """The value, or stop with its reason."""
    if isinstance(value, Unavailable):
        raise Stop(value)
    if value is None:
        raise Stop(Unavailable(missing))
    return value


def undefined(reason: str) -> Stop:
    return Stop(Unavailable(reason))


def claims_or_stop(claims: Any, what: str) -> tuple[Claim, ...]:
    claims = need(claims, f"no {what}")
    if not claims:
        raise undefined(f"the {what} has no claims")
    return claims


def by_claim(verdicts: Iterable[Verdict]) -> dict[int, Verdict]:
    return {v.claim: v for v in verdicts}


def supported(verdicts: dict[int, Verdict], claim: int) -> bool:
    v = verdicts.get(claim)
    return v is not None and v.verdict == "supported"
