"""``ragmeter.metrics.conversation.standalone``: standalone_question: 1 when a turn's question is
understandable without the earlier turns (MTRAG's non-standalone questions, Katsis et al. 2025), 0
when it is not."""

from __future__ import annotations

import json

import ragmeter
from ragmeter.judges import Judge, ScriptedBackend
from tests.io.formats.test_turns import NATIVE, write


def test_extraction_sees_the_history_and_standalone_costs_calls_only_when_needed(tmp_path):
    seen = []

    def respond(pid, inputs, messages):
        seen.append((pid, inputs))
        if pid == "turn.standalone":
            return {"standalone": False}
        return {"claims": [{"id": 1, "text": "x", "addresses_question": True, "cites": []}],
                "declines": "know" in inputs["answer"], "reference_claims": []}
    conv = json.loads(json.dumps(NATIVE))
    del conv["turns"][1]["standalone"]
    data = ragmeter.load_dataset(write(tmp_path, conv))
    r = ragmeter.evaluate(data, ["standalone_question", "answer_relevancy", "negative_rejection"],
                          judge=Judge(ScriptedBackend(respond)))
    assert r.values("standalone_question") == [1.0, 0.0, 0.0]
    standalone_calls = [i for p, i in seen if p == "turn.standalone"]
    assert len(standalone_calls) == 2  # turn 1 needs none
    extract = [i for p, i in seen if p == "claims.extract"]
    assert extract[1]["history"].startswith("User: How long is the R2 warranty?")
    assert r.values("negative_rejection") == [None, None, 1.0]  # the unanswerable turn declined
