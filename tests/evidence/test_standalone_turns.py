"""``evidence/standalone_turns.py``: a turn's question is asked about only when the data does not say."""

from __future__ import annotations

from ragmeter.core.sample import Sample
from ragmeter.evidence.matrix import Unavailable
from tests.evidence.gathering import gather


def test_only_a_later_turn_the_data_says_nothing_of_is_asked_about():
    samples = [Sample(id="c#1", question="How long?", metadata={"turn": 1}),
               Sample(id="c#2", question="And the other one?", metadata={"turn": 2, "history": "User: How long?"}),
               Sample(id="c#3", question="Shipping?", metadata={"turn": 3, "standalone": True}),
               Sample(id="x", question="Alone")]
    evidence, seen = gather(samples, {"turn_standalone"}, lambda *_: {"standalone": False})
    assert [ev.standalone for ev in evidence] == [True, False, True, Unavailable("not a conversation turn")]
    assert seen == [("turn.standalone", {"history": "User: How long?", "question": "And the other one?"})]
