"""Claim extraction for the local judge, shaped for a small model.

A 1.5B model given the shared ``claims.extract`` prompt copies whole sentences as claims (so a
sentence with one true and one changed fact is judged as one) and invents citation markers.
So the local judge splits in small steps, each checkable:

1. claims: greedy generation of a JSON list of strings, one text at a time (answer, then
   reference), with a worked example of atomic splitting in the system prompt;
2. ``addresses_question``: a typed yes/no question per claim (question first, so its KV
   cache is reused);
3. ``declines``: a typed yes/no question on the whole answer;
4. ``cites``: read from the text, not generated: the ``[marker]``s of the answer sentence
   that shares the most words with the claim.

The reply has the shape of ``schemas.EXTRACT``, so the rest of ragmeter cannot tell it apart.
"""

from __future__ import annotations

import json
import re

from ragmeter.judges.local.llm import YES_NO_WORDS, LocalLLM, TypedQuestion, Usage
from ragmeter.judges.schemas import NOT_NEEDED
from ragmeter.judges.sentences import is_courtesy, is_question, split_sentences

SPLIT_SYSTEM = (
    "You split a text into short atomic claims for fact checking. Each claim states one fact and stands alone: "
    "replace pronouns with the names they stand for, keep numbers, units, dates and negations exactly as written, "
    "and split sentences that state several facts. Do not add facts and do not drop any.\n\n"
    "Example:\nTEXT: The museum opens at 9:00 and it is free on Sundays, so you can visit without paying.\n"
    'CLAIMS: ["The museum opens at 9:00.", "The museum is free on Sundays.", '
    '"You can visit the museum without paying on Sundays."]')
SPLIT_USER = "TEXT: {text}\n\nReply with the JSON list of claims."
CLAIM_LIST = {"type": "object", "properties": {"claims": {"type": "array", "items": {"type": "string"}}},
              "required": ["claims"], "additionalProperties": False}

ADDRESSES = TypedQuestion(
    "addresses", "You judge whether a statement helps answer a question.",
    "QUESTION: {context}\n\nSTATEMENT: {claim}\n\nDoes the statement help answer the question? Answer yes or no.",
    YES_NO_WORDS)
DECLINES = TypedQuestion(
    "declines", "You judge whether an answer declines to answer.",
    "QUESTION: {context}\n\nANSWER: {claim}\n\nDoes the answer decline to answer, saying it does not know, cannot "
    "answer, or that the information is not available? Answer yes or no.",
    YES_NO_WORDS)
# The same two questions with the instruction in the system prompt, so that only the statement
# (or the answer) follows the cached (system, question) prefix; the refusal one says that a
# "no" that gives the information is not a refusal (the long one called 12 of 20 answers refusals).
ADDRESSES_SHORT = TypedQuestion(
    "addresses_short", "You judge whether a statement helps answer a question. Reply yes if the statement helps "
    "answer the question, no if it is off topic or filler.",
    "QUESTION: {context}\n\nSTATEMENT: {claim}", YES_NO_WORDS)
DECLINES_SHORT = TypedQuestion(
    "declines_short", "You judge whether an answer declines to answer the question: it says it does not know, "
    "cannot answer, or that the information is not available. An answer that gives the information asked for, "
    "even a no, does not decline. Reply yes if the answer declines, else no.",
    "QUESTION: {context}\n\nANSWER: {claim}", YES_NO_WORDS)

RECIPE = {"split": [SPLIT_SYSTEM, SPLIT_USER], "addresses": [ADDRESSES_SHORT.system, ADDRESSES_SHORT.template],
          "declines": [DECLINES_SHORT.system, DECLINES_SHORT.template]}

_MARKER = re.compile(r"\[([^\[\]\s][^\[\]]*)\]")
_WORD = re.compile(r"\w+")


def split_claims(llm: LocalLLM, text: str, *, max_tokens: int, seed: int | None,
                 usage: Usage) -> tuple[list[str], bool]:
    messages = [{"role": "system", "content": SPLIT_SYSTEM}, {"role": "user", "content": SPLIT_USER.format(text=text)}]
    reply, cut = llm.generate_json(messages, CLAIM_LIST, max_tokens=max_tokens, seed=seed, usage=usage)
    if cut:
        return [], True
    claims = [c.strip() for c in json.loads(reply)["claims"] if c.strip()]
    return list(dict.fromkeys(claims)), False  # a small model sometimes repeats a claim


def cites_for(claim: str, answer: str) -> list[str]:
    """The citation markers of the answer sentence that shares the most words with the claim."""
    sentences = split_sentences(answer) or [answer]
    words = set(w.lower() for w in _WORD.findall(claim))
    best = max(sentences, key=lambda s: len(words & set(w.lower() for w in _WORD.findall(s))))
    return list(dict.fromkeys(m.strip() for m in _MARKER.findall(best)))


def sentence_claims(text: str) -> list[str]:
    """``claims='sentences'``: the text's sentences, as written (no model call), but for
    questions and offers of help, which state nothing to check."""
    return list(dict.fromkeys(s.strip() for s in split_sentences(text)
                              if s.strip() and not is_question(s) and not is_courtesy(s)))


def extract(llm: LocalLLM, inputs: dict, *, max_tokens: int, seed: int | None, usage: Usage,
            claims: str = "extracted") -> tuple[dict | None, bool]:
    """The ``schemas.EXTRACT`` reply for the inputs of a ``claims.extract`` request; None if cut off.
    ``claims='sentences'`` takes each sentence as a claim instead of generating atomic claims."""
    question, answer, reference = inputs.get("question") or "", inputs["answer"], inputs["reference"]
    answer_claims: list[str] = []
    addresses: list[bool] = []
    declines = False
    if answer != NOT_NEEDED:
        if claims == "sentences":
            answer_claims = sentence_claims(answer)
        else:
            answer_claims, cut = split_claims(llm, answer, max_tokens=max_tokens, seed=seed, usage=usage)
            if cut:
                return None, True
        addresses = [p["yes"] >= 0.5 for p in llm.ask(ADDRESSES_SHORT, question, answer_claims, usage)]
        declines = llm.ask(DECLINES_SHORT, question, [answer], usage)[0]["yes"] >= 0.5
    reference_claims: list[str] = []
    if reference != NOT_NEEDED:
        if claims == "sentences":
            reference_claims = sentence_claims(reference)
        else:
            reference_claims, cut = split_claims(llm, reference, max_tokens=max_tokens, seed=seed, usage=usage)
            if cut:
                return None, True
    value = {"claims": [{"id": i, "text": c, "addresses_question": a, "cites": cites_for(c, answer)}
                        for i, (c, a) in enumerate(zip(answer_claims, addresses), start=1)],
             "declines": declines,
             "reference_claims": [{"id": i, "text": c} for i, c in enumerate(reference_claims, start=1)]}
    return value, False
