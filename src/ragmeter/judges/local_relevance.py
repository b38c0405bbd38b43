"""Context relevance for the local judge: one typed yes/no question per context sentence.

A 1.5B model asked for the list of needed sentence numbers as generated JSON answers with a
list that has little to do with the question (measured in ``bench/local_judge_bench.py
prompts``). Asked about one sentence at a time ("is this sentence needed to answer the
question?", question first so its KV cache is shared by every sentence), the answer is the
next-token probability of yes; a sentence is needed when P(yes) >= 0.5.
"""

from __future__ import annotations

from ragmeter.judges.local_llm import YES_NO_WORDS, LocalLLM, TypedQuestion, Usage

NEEDED = TypedQuestion(
    "needed", "You judge whether a sentence from a retrieved context is needed to answer a question. A sentence is "
    "needed when the answer cannot be fully given without it; sentences about other products, other topics or "
    "padding are not needed.",
    "QUESTION: {context}\n\nSENTENCE: {claim}\n\nIs this sentence needed to answer the question? Answer yes or no.",
    YES_NO_WORDS)
RECIPE = [NEEDED.system, NEEDED.template]


def needed_sentences(llm: LocalLLM, question: str, sentences: list[str], usage: Usage) -> dict:
    """The ``schemas.NEEDED_SENTENCES`` reply: 1-based numbers of the needed sentences."""
    probs = llm.ask(NEEDED, question, sentences, usage)
    return {"needed": [i for i, p in enumerate(probs, start=1) if p["yes"] >= 0.5]}
