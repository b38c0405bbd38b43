"""What a judge's tokens cost without ``--price-in`` / ``--price-out``: a dated snapshot of
LiteLLM's price map (MIT) for the chat models of the providers the judge strings reach, in US
dollars per million tokens (``price_data/``: the data, its NOTICE and LICENSE;
``bench/price_snapshot.py`` writes it).

A spec's model is looked up as written and, for ``litellm:<provider>/<model>``, also without the
provider (the map keys Bedrock's and Vertex's models that way); ``ollama:<model>`` is
``ollama/<model>`` (a local server: 0). A price flag overrides the snapshot's for its side.

>>> p = judge_price("openai:gpt-4o-mini")
>>> p.input, p.output, p.model
(0.15, 0.6, 'gpt-4o-mini')
>>> judge_price("openai:gpt-4o-mini", price_out=2.0).output, judge_price("openai:my-own-model") is None
(2.0, True)
>>> judge_price("openai:my-own-model", price_in=1.0, price_out=3.0).source
'--price-in/--price-out'
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

#: how the price flags are named where a price came from them
FLAGS = "--price-in/--price-out"


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens, the model they were found for, and where from."""

    input: float
    output: float
    model: str | None
    source: str

    def text(self) -> str:
        """``$0.15 in / $0.6 out per million tokens (gpt-4o-mini, LiteLLM price map 2026-11-04)``."""
        where = f"{self.model}, {self.source}" if self.model else self.source
        return f"${self.input:g} in / ${self.output:g} out per million tokens ({where})"


@lru_cache(maxsize=1)
def snapshot() -> dict[str, Any]:
    """The bundled snapshot: ``source``, ``licence``, ``date``, ``unit`` and ``models``
    (name -> [input, output, provider])."""
    text = resources.files("ragmeter.core").joinpath("price_data/model_prices.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def snapshot_label() -> str:
    return f"LiteLLM price map {snapshot()['date']}"


def _candidates(spec: str) -> list[str]:
    prefix, _, model = spec.partition(":")
    if not model:
        return []
    if prefix == "ollama":
        return [f"ollama/{model}"]
    if prefix == "litellm":
        provider, _, bare = model.partition("/")
        return [model, bare] if bare and provider != "ollama" else [model]
    if prefix in ("openai", "anthropic"):
        return [model]
    return []


def snapshot_price(spec: str | None) -> Price | None:
    """The snapshot's price for a judge spec's model, or None when it holds none."""
    if not spec:
        return None
    models = snapshot()["models"]
    for name in _candidates(spec):
        entry = models.get(name)
        if entry is not None:
            return Price(float(entry[0]), float(entry[1]), name, snapshot_label())
    return None


def judge_price(spec: str | None, price_in: float | None = None, price_out: float | None = None) -> Price | None:
    """The prices a run uses: each flag given, else the snapshot's for ``spec``; None when
    neither side has a price (a side the flags leave open and the snapshot lacks counts 0,
    as :func:`ragmeter.judges.cost.usd` counts a missing price)."""
    found = snapshot_price(spec)
    if price_in is None and price_out is None:
        return found
    if found is None or (price_in is not None and price_out is not None):
        return Price(price_in or 0.0, price_out or 0.0, None, FLAGS)
    return Price(found.input if price_in is None else price_in, found.output if price_out is None else price_out,
                 found.model, f"{found.source}, overridden by {FLAGS}")


def has_both(spec: str | None, price_in: float | None, price_out: float | None) -> bool:
    """Whether both sides have a price (the flags', or the snapshot's for ``spec``)."""
    if price_in is not None and price_out is not None:
        return True
    return snapshot_price(spec) is not None
