"""``judges/local/extract.py``: the local judge's claims.extract reply, from a scripted model: claims
split (repeats dropped, a cut-off reply reported), each asked whether it addresses the question,
the answer asked whether it declines, citation markers taken from the claim's sentence."""

from __future__ import annotations

import json

from ragmeter.judges.local.extract import ADDRESSES_SHORT, DECLINES_SHORT, cites_for, extract, sentence_claims
from ragmeter.judges.local.llm import Usage
from ragmeter.judges.schemas import NOT_NEEDED


class _Scripted:
    """A stand-in for LocalLLM: fixed claims per text, 'yes' for claims naming the warranty."""

    def __init__(self, claims: dict[str, list[str]], cut: bool = False) -> None:
        self.claims, self.cut, self.asked = claims, cut, []

    def generate_json(self, messages, schema, *, max_tokens, seed, usage):
        text = messages[-1]["content"].split("TEXT: ", 1)[1].split("\n\nReply", 1)[0]
        return json.dumps({"claims": self.claims[text]}), self.cut

    def ask(self, question, context, claims, usage):
        self.asked.append(question.name)
        if question is DECLINES_SHORT:
            return [{"yes": 0.1, "no": 0.9} for _ in claims]
        return [{"yes": 0.9 if "warranty" in c else 0.2, "no": 0.1} for c in claims]


ANSWER = "The R2 has a 24-month warranty [w2]. Shipping is free [s1][w2]."


def test_the_reply_has_the_claims_their_answers_and_citations():
    llm = _Scripted({ANSWER: ["The R2 has a 24-month warranty.", "Shipping is free.", "Shipping is free.", " "],
                     "24 months.": ["The warranty lasts 24 months."]})
    reply, cut = extract(llm, {"question": "How long is the warranty?", "answer": ANSWER, "reference": "24 months."},
                         max_tokens=64, seed=0, usage=Usage())
    assert not cut and reply == {
        "claims": [{"id": 1, "text": "The R2 has a 24-month warranty.", "addresses_question": True, "cites": ["w2"]},
                   {"id": 2, "text": "Shipping is free.", "addresses_question": False, "cites": ["s1", "w2"]}],
        "declines": False,
        "reference_claims": [{"id": 1, "text": "The warranty lasts 24 months."}]}
    assert llm.asked == [ADDRESSES_SHORT.name, DECLINES_SHORT.name]


def test_a_cut_off_split_is_reported_and_what_is_not_needed_is_not_asked():
    llm = _Scripted({ANSWER: ["x"]}, cut=True)
    assert extract(llm, {"answer": ANSWER, "reference": NOT_NEEDED}, max_tokens=4, seed=0, usage=Usage()) \
        == (None, True)
    idle = _Scripted({})
    reply, _ = extract(idle, {"answer": NOT_NEEDED, "reference": NOT_NEEDED}, max_tokens=4, seed=0, usage=Usage())
    assert reply == {"claims": [], "declines": False, "reference_claims": []} and idle.asked == []


def test_sentences_as_claims_need_no_generation():
    llm = _Scripted({})  # generate_json would fail: no claims scripted
    reply, cut = extract(llm, {"answer": ANSWER, "reference": NOT_NEEDED}, max_tokens=4, seed=0, usage=Usage(),
                         claims="sentences")
    assert not cut and [c["text"] for c in reply["claims"]] == ["The R2 has a 24-month warranty [w2].",
                                                                "Shipping is free [s1][w2]."]
    assert sentence_claims("One. One. Two.") == ["One.", "Two."]
    assert sentence_claims("It ships in 5 days. Anything else? Let me know if you need more help!") == [
        "It ships in 5 days."]


def test_citations_come_from_the_sentence_sharing_most_words_with_the_claim():
    assert cites_for("Shipping costs nothing", ANSWER) == ["s1", "w2"]
    assert cites_for("warranty of 24 months", ANSWER) == ["w2"]
    assert cites_for("anything", "No markers here.") == []
