"""A judge for live-traffic tests: every answer has one claim, supported when the answer
says "ok", contradicted otherwise; every statement addresses the question."""

from __future__ import annotations


def respond_text(user_text: str) -> dict:
    if "EVIDENCE" in user_text:
        ok = "CLAIMS:\n1. ok" in user_text
        return {"verdicts": [{"id": 1, "verdict": "supported" if ok else "contradicted", "sources": [],
                              "combined": False, "quote": ""}]}
    answer = user_text.split("ANSWER:\n", 1)[1].split("\n\nREFERENCE ANSWER:", 1)[0]
    return {"claims": [{"id": 1, "text": answer, "addresses_question": True, "cites": []}], "declines": False,
            "reference_claims": []}


def scripted(prompt_id, inputs, messages):
    return respond_text(messages[1]["content"])


def over_http(user_text, payload):
    return respond_text(user_text)


def request_line(i: int, answer: str = "ok") -> str:
    import json

    return json.dumps({"request_id": f"r{i}", "ts": 1e9 + i, "question": f"question {i}?",
                       "retrieved": [{"id": "c1", "text": "Some evidence."}], "answer": answer}) + "\n"
