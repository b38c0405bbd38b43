"""``trust/mtrag_set.py``: MTRAG's rated responses bundled for ``judge-check --set mtrag-dev``:
the development half with its licence, and a limited draw that keeps the ratings' mix."""

from __future__ import annotations

from collections import Counter

import pytest

from ragmeter.trust import mtrag_set


def test_the_bundled_set_is_the_development_half_with_its_licence():
    items = mtrag_set.load_set()
    assert len(items) == 234 and len({i.task for i in items}) == 78
    assert Counter(i.collection for i in items) == {"clapnq": 123, "govt": 111}
    assert Counter(i.model for i in items) == {"reference": 78, "llama-3.1-405b-instruct": 78, "gpt-4o": 78}
    assert sum(not i.passages for i in items) == 18
    assert Counter(i.human("faithfulness") for i in items) == {4: 133, 3: 42, 2: 34, 1: 24, 3.5: 1}
    folder = mtrag_set.SET_PATH.parent
    assert "Apache License" in (folder / "LICENSE").read_text() and "MTRAG" in (folder / "NOTICE").read_text()
    follow_up = next(i for i in items if i.history)
    assert follow_up.sample().metadata["history"].startswith("user: ")


def test_a_limited_sample_keeps_the_sets_mix_of_ratings():
    items = mtrag_set.load_set()
    drawn = mtrag_set.stratified(items, 40)
    assert len(drawn) == 40 and drawn == mtrag_set.stratified(items, 40)  # fixed seed
    mix = Counter(i.human("faithfulness") for i in drawn)
    # 40 * (133, 42, 34, 24, 1) / 234 = 22.7, 7.2, 5.8, 4.1, 0.2: largest remainders first
    assert mix == {4: 23, 3: 7, 2: 6, 1: 4}
    assert mtrag_set.stratified(items, 500) == items
    with pytest.raises(Exception, match="positive"):
        mtrag_set.stratified(items, 0)
