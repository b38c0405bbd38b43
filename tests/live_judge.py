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


def watcher(tmp_path, log, **kw):
    """A watcher of ``log`` judged by :func:`scripted`, its state under ``tmp_path / "state"``."""
    from ragmeter.judges import Judge, ScriptedBackend
    from ragmeter.live.watch import Watcher

    return Watcher(str(log), Judge(ScriptedBackend(scripted)), tmp_path / "state", **kw)


def append_requests(log, ids) -> None:
    """Append one :func:`request_line` per id to ``log``."""
    with open(log, "a") as f:
        f.write("".join(request_line(i) for i in ids))


def drain(w) -> None:
    """Poll the watcher until nothing read is left waiting."""
    w.poll()
    while w.pending:
        w.poll()


def scored_ids(tmp_path) -> list[str]:
    """The ids in the watcher's ``scored.jsonl`` (state under ``tmp_path / "state"``), in order."""
    import json

    path = tmp_path / "state" / "scored.jsonl"
    return [json.loads(line)["id"] for line in path.read_text().splitlines()] if path.exists() else []


def assert_each_once(ids: list[str], n: int) -> None:
    """Requests r0 .. r(n-1) were each scored exactly once."""
    assert len(ids) == len(set(ids)), "a request was scored twice"
    want = {f"r{i}" for i in range(n)}
    assert sorted(ids) == sorted(want), f"lost: {sorted(want - set(ids))}"
