"""Reading one sample's claim matrix inside a judged metric: take what is there, or stop with
the reason (:class:`~ragmeter.metrics.kinds.Unscorable`).

>>> from ragmeter.evidence.matrix import Unavailable
>>> require((1, 2), "no claims")
(1, 2)
>>> require(None, "no claims")
Traceback (most recent call last):
...
ragmeter.metrics.kinds.Unscorable: no claims
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from ragmeter.evidence.matrix import Claim, Unavailable, Verdict
from ragmeter.metrics.kinds import Unscorable

T = TypeVar("T")


def require(value: T | Unavailable | None, missing: str = "not available") -> T:
    """The value, or stop: with its reason when it is ``Unavailable``, with ``missing`` when absent."""
    if isinstance(value, Unavailable):
        raise Unscorable(value)
    if value is None:
        raise Unscorable(missing)
    return value


def require_claims(claims: tuple[Claim, ...] | Unavailable | None, what: str) -> tuple[Claim, ...]:
    """The claims of ``what`` (the answer, the reference answer); stop when there are none."""
    found = require(claims, f"no {what}")
    if not found:
        raise Unscorable(f"the {what} has no claims")
    return found


def by_claim(verdicts: Iterable[Verdict]) -> dict[int, Verdict]:
    return {v.claim: v for v in verdicts}


def supported(verdicts: dict[int, Verdict], claim: int) -> bool:
    v = verdicts.get(claim)
    return v is not None and v.verdict == "supported"
