"""What judge tokens cost: prices are US dollars per million tokens, as providers list them."""

from __future__ import annotations

PER_TOKENS = 1_000_000


def usd(input_tokens: int, output_tokens: int, price_in: float | None, price_out: float | None) -> float:
    """``(input_tokens * price_in + output_tokens * price_out) / 1e6``; a missing price counts 0.

    >>> usd(3380, 626, 1.0, 2.0)
    0.004632
    """
    return ((price_in or 0.0) * input_tokens + (price_out or 0.0) * output_tokens) / PER_TOKENS
