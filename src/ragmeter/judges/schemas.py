"""JSON Schemas of the judge's answers to the shipped prompts (strict: every property required, nothing extra).

They live with the prompts (``ragmeter/prompts/``): the planner that builds requests and the
local judge that answers them both read them here.
"""

from __future__ import annotations

VERDICTS = ("supported", "contradicted", "not_found")
NOT_NEEDED = "(not needed)"  # what claims.extract receives for a text whose claims are not wanted

EXTRACT = {
    "type": "object",
    "properties": {
        "claims": {"type": "array", "items": {
            "type": "object",
            "properties": {"id": {"type": "integer"}, "text": {"type": "string"},
                           "addresses_question": {"type": "boolean"},
                           "cites": {"type": "array", "items": {"type": "string"}}},
            "required": ["id", "text", "addresses_question", "cites"], "additionalProperties": False}},
        "declines": {"type": "boolean"},
        "reference_claims": {"type": "array", "items": {
            "type": "object",
            "properties": {"id": {"type": "integer"}, "text": {"type": "string"}},
            "required": ["id", "text"], "additionalProperties": False}},
    },
    "required": ["claims", "declines", "reference_claims"],
    "additionalProperties": False,
}

VERIFY = {
    "type": "object",
    "properties": {"verdicts": {"type": "array", "items": {
        "type": "object",
        "properties": {"id": {"type": "integer"}, "verdict": {"type": "string", "enum": list(VERDICTS)},
                       "sources": {"type": "array", "items": {"type": "string"}},
                       "combined": {"type": "boolean"}, "quote": {"type": "string"}},
        "required": ["id", "verdict", "sources", "combined", "quote"], "additionalProperties": False}}},
    "required": ["verdicts"],
    "additionalProperties": False,
}

NEEDED_SENTENCES = {
    "type": "object",
    "properties": {"needed": {"type": "array", "items": {"type": "integer"}}},
    "required": ["needed"],
    "additionalProperties": False,
}

QUESTIONS = {
    "type": "object",
    "properties": {"questions": {"type": "array", "items": {"type": "string"}}, "noncommittal": {"type": "boolean"}},
    "required": ["questions", "noncommittal"],
    "additionalProperties": False,
}

RUBRIC = {  # the score's bounds are checked against the criterion's scale after validation
    "type": "object",
    "properties": {"score": {"type": "integer"}, "reason": {"type": "string"}},
    "required": ["score", "reason"],
    "additionalProperties": False,
}

STANDALONE = {
    "type": "object",
    "properties": {"standalone": {"type": "boolean"}},
    "required": ["standalone"],
    "additionalProperties": False,
}

RATING = {  # Ragas's Response Groundedness: one rating on its 0-2 scale
    "type": "object",
    "properties": {"rating": {"type": "integer", "enum": [0, 1, 2]}},
    "required": ["rating"],
    "additionalProperties": False,
}
