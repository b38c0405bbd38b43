"""``ragmeter.judges.offline.refusal``: an answer declines when its first sentence is a refusal."""

from __future__ import annotations

import json

import pytest

from ragmeter.judges.offline.refusal import declines, is_refusal
from ragmeter.trust.agreement_set import SET_PATH


@pytest.mark.parametrize("answer", [
    "I don't know.", "I'm not able to find who the CEO is. You may want to check the company website.",
    "The documents do not contain information about the 46% drop.", "Sorry, I have no details on that."])
def test_refusals(answer):
    assert declines(answer)


@pytest.mark.parametrize("answer", [
    "No, damage from power surges is not covered by the warranty.",
    "That is not true; toolchain is available in Sao Paulo.",
    "The R2 is covered for 24 months. I could not find its colour."])  # the fact first: not a refusal
def test_answers(answer):
    assert not declines(answer)


def test_the_labeled_set_as_measured():
    """40/40 on agreement/declines.jsonl (the pattern was written reading it: not a held-out figure)."""
    rows = [json.loads(x) for x in (SET_PATH.parent / "declines.jsonl").read_text().splitlines()]
    assert sum(declines(r["answer"]) == r["declines"] for r in rows) == len(rows) == 40
    assert not declines("") and not is_refusal("The R2 ships free.")
