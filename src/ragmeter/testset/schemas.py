"""JSON Schemas of the generation and checking prompts (strict: every property required, nothing extra)."""

from __future__ import annotations


def _object(**properties: dict) -> dict:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


STRING = {"type": "string"}
BOOLEAN = {"type": "boolean"}
CLAIMS = {"type": "array", "items": STRING}
NUMBERS = {"type": "array", "items": {"type": "integer"}}

QUESTION = _object(question=STRING, answer=STRING, reference_claims=CLAIMS)  # testset.single, testset.multi
UNANSWERABLE = _object(question=STRING, missing=STRING)  # testset.unanswerable
CONVERSATION = _object(first_question=STRING, first_answer=STRING, follow_up=STRING, answer=STRING,
                       reference_claims=CLAIMS)  # testset.conversation
VERIFY = _object(answerable=BOOLEAN, needed_passages=NUMBERS, answer_supported=BOOLEAN,
                 answerable_without_passages=BOOLEAN)  # testset.verify
ANSWERABLE = _object(answerable=BOOLEAN, passages=NUMBERS)  # testset.answerable
