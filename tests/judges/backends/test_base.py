"""``judges/backends/base.py``: what a backend that overrides nothing but ``complete`` gets."""

from __future__ import annotations

import asyncio

import pytest

from ragmeter.judges import Backend, Decoding


def test_the_defaults_change_nothing_and_refuse_nothing():
    backend = Backend()
    assert backend.key_extra is None and backend.description == {} and backend.refuses("claims.verify") is None
    assert backend.rescore(None, {"a": 1}, None) == {"a": 1} and backend.supports_logprobs is False
    assert asyncio.run(backend.aclose()) is None
    with pytest.raises(NotImplementedError):
        asyncio.run(backend.complete([], {}, "s", Decoding()))


def test_tokens_generated_go_to_the_sink_when_there_is_one():
    backend, seen = Backend(), []
    backend.tokens_generated(3)  # no sink: nothing happens
    backend.token_sink = seen.append
    backend.tokens_generated(5)
    assert seen == [5]


def test_every_decoding_setting_is_in_the_ledger_key():
    assert Decoding().as_dict() == {"temperature": 0.0, "seed": 0, "max_tokens": 2048}
    assert Decoding(temperature=0.5, seed=None, max_tokens=10).as_dict() == {"temperature": 0.5, "seed": None,
                                                                             "max_tokens": 10}
