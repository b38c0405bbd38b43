"""A judge that answers like the seed article's hand-worked q1 (its claims and verdicts).

Used through the scripted backend and through the HTTP test server, so the same numbers
prove both the claim metrics and the wire protocol.
"""

from __future__ import annotations

import re

ANSWER_CLAIMS = [
    "The R2 carries a 24-month limited hardware warranty.",
    "A failure at 14 months falls inside the warranty period.",
    "To claim, open a case with the serial number and proof of purchase.",
    "A replacement ships within 2 business days.",
    "Shipping is free.",
]
S, C, N = "supported", "contradicted", "not_found"
# (list, source) -> [(verdict, sources)] per claim, as the seed works them by hand
VERDICTS = {
    ("answer", "context"): [(S, ["warranty-r2"]), (S, ["warranty-r2"]), (S, ["claim-steps"]), (C, ["claim-steps"]),
                            (N, [])],
    ("reference", "context"): [(S, ["warranty-r2"]), (S, ["warranty-r2"]), (S, ["claim-steps"]), (S, ["claim-steps"]),
                               (N, [])],
    ("answer", "reference"): [(S, ["reference"]), (S, ["reference"]), (S, ["reference"]), (C, ["reference"]), (N, [])],
    ("reference", "answer"): [(S, ["answer"]), (S, ["answer"]), (S, ["answer"]), (C, ["answer"]), (N, [])],
}
NEEDED_SENTENCES = [2, 4, 5]  # warranty-r2, and both sentences of claim-steps


def respond(schema_name: str, user_text: str) -> dict:
    if schema_name == "claims":
        answer = user_text.split("ANSWER:\n", 1)[1].split("\n\nREFERENCE ANSWER:", 1)[0]
        claims = [] if answer == "(not needed)" else [
            {"id": i, "text": t, "addresses_question": True, "cites": []} for i, t in enumerate(ANSWER_CLAIMS, start=1)]
        return {"claims": claims, "declines": False, "reference_claims": []}
    if schema_name == "verdicts":
        evidence = user_text.split("EVIDENCE", 1)[1]
        source = "reference" if "[reference]" in evidence else "answer" if "[answer]" in evidence else "context"
        listing = user_text.split("CLAIMS:\n", 1)[1]
        listed = "answer" if "2 business days" in listing else "reference"
        wanted = re.findall(r"for id ([\d, ]+) \(the other", user_text)
        ids = [int(x) for x in wanted[-1].split(",")] if wanted else range(1, 6)
        return {"verdicts": [{"id": i, "verdict": VERDICTS[(listed, source)][i - 1][0],
                              "sources": VERDICTS[(listed, source)][i - 1][1], "combined": False, "quote": ""}
                             for i in ids]}
    if schema_name == "needed_sentences":
        return {"needed": NEEDED_SENTENCES}
    if schema_name == "questions":
        return {"questions": ["Is my R2 under warranty?", "How do I get a replacement?", "How long is the warranty?"],
                "noncommittal": False}
    raise ValueError(schema_name)


def scripted(prompt_id, inputs, messages):
    names = {"claims.extract": "claims", "claims.verify": "verdicts", "context.relevance": "needed_sentences",
             "answer.questions": "questions"}
    return respond(names[prompt_id], messages[1]["content"])


def over_http(user_text: str, payload: dict) -> dict:
    rf = payload.get("response_format", {})
    name = rf.get("json_schema", {}).get("name") if rf.get("type") == "json_schema" else None
    if name is None and "tools" in payload:
        name = payload["tools"][0]["name"]
    return respond(name, user_text)
