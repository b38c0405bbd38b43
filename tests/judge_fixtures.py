"""A test prompt and schema, and a responder that answers them correctly."""

from __future__ import annotations

import re

from ragmeter.judges import Keyed, Prompt
from ragmeter.judges.judge import JudgeRequest

PROMPT = Prompt.from_text("id: test.grade\nversion: 1\n--- system\nYou grade items.\n--- user\n"
                          "ITEM: {{item}}\nCLAIMS: {{n}}\n")
SCHEMA = {
    "type": "object",
    "properties": {"verdicts": {"type": "array", "items": {
        "type": "object",
        "properties": {"id": {"type": "integer"},
                       "verdict": {"type": "string", "enum": ["supported", "contradicted", "not_found"]}},
        "required": ["id", "verdict"], "additionalProperties": False}}},
    "required": ["verdicts"], "additionalProperties": False,
}


def request(item: str, n: int = 3, keyed: bool = True) -> JudgeRequest:
    return JudgeRequest(PROMPT, {"item": item, "n": n}, SCHEMA, "verdicts",
                        Keyed("verdicts", "id", tuple(range(1, n + 1))) if keyed else None)


def answer(text: str, payload: dict | None = None) -> dict:
    n = int(re.search(r"CLAIMS: (\d+)", text).group(1))
    wanted = re.findall(r"for id ([\d, ]+) \(the other", text)
    ids = [int(x) for x in wanted[-1].split(",")] if wanted else range(1, n + 1)
    return {"verdicts": [{"id": i, "verdict": "supported"} for i in ids]}
