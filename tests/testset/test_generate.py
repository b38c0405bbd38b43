"""Test-set generation through the HTTP test judge (tests/judge_server.py): the kinds in their
proportions, labels that point at the source chunks, near-duplicates removed, rejects counted by
reason, unanswerable questions checked against the corpus' top k, and a rerun that makes no call."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from ragmeter.embeddings.minilm import bundled
from ragmeter.embeddings.search import DenseIndex
from ragmeter.io import load_dataset
from ragmeter.testset.question_kinds import allocate, parse_kinds
from tests import judge_server

# chunk id: (text, the question written from it, an unanswerable question near it, a follow-up about it)
CHUNKS = {
    "c01": ("The Falcon drone flies for 42 minutes on one battery.",
            "How long does the Falcon drone fly on one battery?",
            "Can the Falcon drone fly in the rain?", "And how far can it go in that time?"),
    "c02": ("The Falcon drone weighs 1.2 kilograms with its battery.", "How much does the Falcon drone weigh?",
            "Does the Falcon drone need a pilot licence?", "And how heavy is it?"),
    "c03": ("The Heron camera records video at 8K resolution.",
            "At what resolution does the Heron camera record video?",
            "Which lenses fit the Heron camera?", "What about its video resolution?"),
    "c04": ("The Heron camera is waterproof to a depth of 30 metres.", "How deep can the Heron camera go underwater?",
            "Does the Heron camera float?", "Can it go underwater?"),
    "c05": ("Orders over 50 euros ship for free within the EU.", "When is shipping free?",
            "Do you ship to Canada?", "Is shipping free for that?"),
    "c06": ("Returns are accepted within 30 days of delivery.", "How long do I have to return an item?",
            "Who pays for return postage?", "And can I return it later?"),
    "c07": ("The loyalty card gives 5 percent off every purchase.", "What discount does the loyalty card give?",
            "ANSWERABLE-TRAP what discount does the loyalty card give?", "And does that apply online?"),
    "c08": ("Gift cards never expire.", "Do gift cards expire?", "Can gift cards be refunded for cash?",
            "What about those?"),
    "c09": ("Support is open from 9 to 17 on weekdays.", "When is customer support open?",
            "Is support available in French?", "And on weekends?"),
    "c10": ("Firmware updates are released every three months.", "How often is new firmware released?",
            "Can firmware updates be rolled back?", "How often does that happen?"),
    "dup-a": ("The Falcon battery charges fully in 90 minutes.", "How long does the Falcon battery take to charge?",
              "Is a spare Falcon battery included?", "And how long does that take?"),
    "dup-b": ("A full charge of the Falcon battery takes an hour and a half.",
              "How long does the Falcon battery take to charge?", "Can the Falcon battery be charged by USB?",
              "And how long does it take?"),
    "bad": ("Warranty claims need the original receipt.", "REJECT what do warranty claims need?",
            "How long is the warranty on batteries?", "Do they need it?"),
}
BY_TEXT = {text: cid for cid, (text, *_rest) in CHUNKS.items()}


def _passages(user: str) -> list[str]:
    found = re.findall(r"PASSAGE(?: \d)?:\n(.*?)\n\n", user + "\n\n", re.DOTALL)
    return [p.strip() for p in found]


def responder(user: str, payload: dict):
    """The judge, scripted: generation from the passage texts, checks that reject marked drafts."""
    name = payload["response_format"]["json_schema"]["name"]
    if name in ("testset_single", "testset_unanswerable"):
        cid = BY_TEXT[_passages(user)[0]]
        if name == "testset_single":
            return {"question": CHUNKS[cid][1], "answer": CHUNKS[cid][0], "reference_claims": [CHUNKS[cid][0]]}
        return {"question": CHUNKS[cid][2], "missing": "not in the passage"}
    if name == "testset_multi":
        a, b = (BY_TEXT[p] for p in _passages(user))
        return {"question": f"{CHUNKS[a][1]} Also, {CHUNKS[b][1][0].lower()}{CHUNKS[b][1][1:]}",
                "answer": f"{CHUNKS[a][0]} {CHUNKS[b][0]}", "reference_claims": [CHUNKS[a][0], CHUNKS[b][0]]}
    if name == "testset_conversational":
        a, b = (BY_TEXT[p] for p in _passages(user))
        follow_up = "STANDALONE When is customer support open on weekdays?" if a == "c09" else CHUNKS[b][3]
        return {"first_question": CHUNKS[a][1], "first_answer": CHUNKS[a][0], "follow_up": follow_up,
                "answer": CHUNKS[b][0], "reference_claims": [CHUNKS[b][0]]}
    question = user.split("QUESTION:\n")[1].split("\n")[0]
    count = len(re.findall(r"^\[\d+\] ", user, re.MULTILINE))
    if name == "testset_verify":
        return {"answerable": "REJECT" not in question, "needed_passages": list(range(1, count + 1)),
                "answer_supported": True, "answerable_without_passages": False}
    if name == "testset_answerable":
        return {"answerable": "ANSWERABLE-TRAP" in question, "passages": []}
    if name == "standalone":
        return {"standalone": question.startswith("STANDALONE")}
    raise AssertionError(f"unexpected request {name}")


@pytest.fixture
def server():
    srv, state = judge_server.start(responder)
    yield state
    srv.shutdown()


@pytest.fixture
def corpus(tmp_path) -> Path:
    p = tmp_path / "corpus.jsonl"
    p.write_text("".join(json.dumps({"id": cid, "text": v[0]}) + "\n" for cid, v in CHUNKS.items()))
    return p


def _generate(cli, server, corpus, out, n=20, *extra):
    return cli("testset", "generate", "--corpus", corpus, "--judge", "openai:test-judge", "--judge-base-url",
               server.url + "/v1", "-n", str(n), "-o", out, "--ledger", out.parent / "ledger.sqlite", *extra)


def _by_kind(rows):
    out: dict[str, list] = {}
    for r in rows:
        kind = (r.get("metadata") or r["turns"][1]["metadata"])["generated"]["kind"]
        out.setdefault(kind, []).append(r)
    return out


@pytest.mark.slow
def test_generation_kinds_labels_duplicates_rejects_and_a_free_rerun(cli, server, corpus, tmp_path):
    out = tmp_path / "testset.jsonl"
    r = _generate(cli, server, corpus, out)
    assert r.exit_code == 0, r.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    report = json.loads((tmp_path / "testset.report.json").read_text())
    plan = allocate(20, parse_kinds("single=0.5,multi=0.2,unanswerable=0.2,conversational=0.1"))
    assert plan == {"single": 10, "multi": 4, "unanswerable": 4, "conversational": 2}
    kinds = _by_kind(rows)
    assert {k: len(v) for k, v in kinds.items()} == plan == report["produced"]
    assert report["shortfall"] == {}

    # labels point at the source chunks: each question is the one written from its labeled chunk
    for row in kinds["single"]:
        (cid,) = row["relevant"]
        assert row["question"] == CHUNKS[cid][1] and row["reference"] == CHUNKS[cid][0]
        assert row["reference_claims"] == [CHUNKS[cid][0]]
    embedder = bundled()
    index = DenseIndex({cid: v[0] for cid, v in CHUNKS.items()}, embedder)
    sims = index.vectors @ index.vectors.T
    ids = index.ids
    for row in kinds["multi"]:
        a, b = row["relevant"]
        assert row["question"].startswith(CHUNKS[a][1])
        others = [j for j in np.argsort(-sims[ids.index(a)], kind="stable") if ids[j] != a]
        assert b == ids[others[0]] or row["metadata"]["generated"]["variant"] > 1  # the nearest neighbour
        assert row["metadata"]["generated"]["pair_cosine"] == pytest.approx(sims[ids.index(a), ids.index(b)], abs=1e-4)
    for row in kinds["conversational"]:
        first, follow = row["turns"]
        assert first["question"] == CHUNKS[first["relevant"][0]][1] and first["standalone"] is True
        assert follow["question"] == CHUNKS[follow["relevant"][0]][3] and follow["standalone"] is False
    for row in kinds["unanswerable"]:
        assert row["answerable"] is False and "relevant" not in row
        checked = row["metadata"]["generated"]["checked_against"]
        assert checked == [cid for cid, _ in index.search([row["question"]], 5)[0]]

    # near-duplicates removed (dup-a and dup-b write the same question), and none left
    questions = [r["question"] for r in rows if "question" in r]
    assert len(questions) == len(set(questions))
    if any(set(r.get("relevant", [])) & {"dup-a", "dup-b"} for r in kinds["single"]):
        assert sum(1 for r in kinds["single"] if r["relevant"][0] in ("dup-a", "dup-b")) == 1
    assert report["duplicates_removed"] == len(report["duplicates"]) >= 1
    assert any(d["question"] == CHUNKS["dup-a"][1] and d["cosine"] == pytest.approx(1.0) for d in report["duplicates"])

    # rejects counted: exactly the drafts the judge failed, by reason, as the server saw them
    expected = _rejects_seen(server)
    assert expected.get("not_answerable_from_sources", 0) >= 1  # the 'bad' chunk was drafted
    assert report["rejected_by_reason"] == expected
    assert report["rejected"] == sum(expected.values()) == len(report["rejects"])
    assert not any("REJECT" in q or "TRAP" in q for q in questions)
    assert f"rejected by the checks: {report['rejected']}" in r.output

    # the output is an ordinary dataset that eval reads (conversations become one sample per turn)
    data = load_dataset(out)
    assert len(data) == 10 + 4 + 4 + 2 * 2
    calls = server.count
    assert report["judge"]["calls"] == calls

    # a rerun is free: same requests, answered by the ledger, and the same file
    before = out.read_bytes()
    r2 = _generate(cli, server, corpus, out)
    assert r2.exit_code == 0, r2.output
    assert server.count == calls
    assert out.read_bytes() == before
    assert json.loads((tmp_path / "testset.report.json").read_text())["judge"]["calls"] == 0


def _rejects_seen(server) -> dict[str, int]:
    """What the judge rejected, counted from the requests the server received."""
    seen: dict[str, int] = {}
    for q in server.requests:
        name = q["payload"]["response_format"]["json_schema"]["name"]
        text = judge_server._user_text(q["payload"])
        question = text.split("QUESTION:\n")[1].split("\n")[0] if "QUESTION:\n" in text else ""
        reason = {"testset_verify": "REJECT" in question and "not_answerable_from_sources",
                  "testset_answerable": "ANSWERABLE-TRAP" in question and "answerable_from_corpus",
                  "standalone": question.startswith("STANDALONE") and "follow_up_is_standalone"}.get(name)
        if reason:
            seen[reason] = seen.get(reason, 0) + 1
    return seen


def test_every_check_rejects_what_it_should(cli, server, corpus, tmp_path):
    """Enough drafts that every chunk is drawn: the trap questions reach their checks."""
    out = tmp_path / "t.jsonl"
    r = _generate(cli, server, corpus, out, 26, "--kinds", "unanswerable=1,conversational=1", "--max-rounds", "1")
    assert r.exit_code == 0, r.output
    report = json.loads((tmp_path / "t.report.json").read_text())
    assert report["drafts"] == 2 * 17  # ceil(13 * 1.25) per kind: every chunk drawn at least once
    assert report["rejected_by_reason"] == _rejects_seen(server) == {"answerable_from_corpus": 1,
                                                                    "follow_up_is_standalone": 1}
    # the second pass over the corpus asks for variant 2, which this judge answers like variant 1
    dups = report["duplicates"]
    assert sum(1 for d in dups if d["kind"] == "unanswerable" and d["question"] == d["duplicate_of"]) == 17 - 13
    vectors = bundled().encode([t for d in dups for t in (d["question"], d["duplicate_of"])])
    for d, a, b in zip(dups, vectors[0::2], vectors[1::2]):
        assert d["cosine"] == pytest.approx(float(a @ b), abs=1e-4) and d["cosine"] >= 0.9
    # every draft is accounted for: kept, surplus, rejected or a duplicate; nothing is padded
    produced = report["produced"]
    assert report["drafts"] == sum(produced.values()) + report["surplus"] + report["rejected"] + len(dups)
    assert report["shortfall"] == {k: 13 - v for k, v in produced.items() if v < 13}
    assert report["shortfall"] and "SHORT: " in r.output


def test_a_retriever_is_scored_on_the_generated_set(cli, server, corpus, tmp_path):
    import ragmeter

    out = tmp_path / "t.jsonl"
    assert _generate(cli, server, corpus, out, 6, "--kinds", "single=1").exit_code == 0
    data = ragmeter.load_dataset(out)
    index = DenseIndex({cid: v[0] for cid, v in CHUNKS.items()}, bundled())
    result = ragmeter.evaluate_retriever(index, data, k=3, metrics=["recall@3", "mrr@3"])
    # each question was written from one chunk: recall@3 is whether the embedder finds it in its top 3
    found = [s.retrieved_ids for s in ragmeter.load_dataset(out).samples]
    assert len(found) == 6
    expected = np.mean([next(iter(s.relevance)) in [c for c, _ in index.search([s.question], 3)[0]]
                        for s in data.samples])
    assert result.means()["recall@3"] == pytest.approx(expected)


def test_kind_shares_and_errors():
    from ragmeter.core.errors import InvalidParameterError

    assert allocate(8, parse_kinds("single=0.5,multi=0.2,unanswerable=0.2,conversational=0.1")) == {
        "single": 4, "multi": 2, "unanswerable": 1, "conversational": 1}  # 4, 1.6, 1.6, 0.8: remainders .8, .6, .6
    assert allocate(3, parse_kinds("single,multi")) == {"single": 2, "multi": 1}
    assert sum(allocate(97, parse_kinds("single=3,multi=1,unanswerable=1")).values()) == 97
    for bad in ("single=x", "sngle=1", "single=-1", "single=0", "single=1,single=2"):
        with pytest.raises(InvalidParameterError):
            parse_kinds(bad)


def test_a_judge_that_fails_leaves_the_set_short_not_padded(cli, corpus, tmp_path):
    srv, state = judge_server.start(lambda user, payload: "not json at all")
    try:
        out = tmp_path / "t.jsonl"
        r = cli("testset", "generate", "--corpus", corpus, "--judge", "openai:broken", "--judge-base-url",
                state.url + "/v1", "-n", "4", "-o", out, "--ledger", tmp_path / "l.sqlite", "--kinds", "single=1",
                "--max-rounds", "2", "--max-reasks", "0")
    finally:
        srv.shutdown()
    assert r.exit_code == 0, r.output
    assert out.read_text() == ""
    report = json.loads((tmp_path / "t.report.json").read_text())
    assert report["shortfall"] == {"single": 4}
    assert report["rejected_by_reason"] == {"generation_failed": report["drafts"]} and report["drafts"] == 5 + 8
    assert "SHORT: single 4" in r.output
