"""MTRAG's files as IBM writes them (tests/data/mtrag: three unchanged lines of the benchmark's
responses-10.jsonl): the model's predictions scored against the gold targets, the history of a
later turn kept, enrichments in metadata, answerability mapped, and whole conversations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ragmeter
from ragmeter.core.errors import InvalidInputError
from ragmeter.io.formats.mtrag import ANSWERABILITY

DATA = Path(__file__).resolve().parents[2] / "data" / "mtrag"
TASKS = DATA / "responses-3.jsonl"
LINES = [json.loads(line) for line in TASKS.read_text().splitlines()]  # as published: bare NaN included


def write(tmp_path: Path, rows: list[dict], name: str = "tasks.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def test_the_published_file_has_what_the_reader_must_handle():
    text = TASKS.read_text()
    assert "NaN" in text and '"answerability": ["UNANSWERABLE"]' in text
    assert [r["turn"] for r in LINES] == [1, 2, 7]


def test_tasks_load_as_ibm_writes_them():
    """Refused before (unknown field "answerability"; did you mean "answerable"?)."""
    data = ragmeter.load_dataset(TASKS)
    first, second, seventh = data.samples
    assert [s.id for s in data] == [r["task_id"] for r in LINES]
    # the model's prediction is the answer, the gold target the reference
    assert second.answer == LINES[1]["predictions"][0]["text"]
    assert second.reference == LINES[1]["targets"][0]["text"]
    assert second.answer != second.reference
    assert second.question == LINES[1]["input"][-1]["text"]
    assert second.retrieved_ids == tuple(c["document_id"] for c in LINES[1]["contexts"])
    assert second.retrieved[0].text == LINES[1]["contexts"][0]["text"]
    assert second.retrieved[0].score == LINES[1]["contexts"][0]["score"]


def test_a_later_turn_keeps_its_number_and_history():
    """A turn-7 task became turn 1 with its history dropped."""
    seventh = ragmeter.load_dataset(TASKS).samples[2]
    meta = seventh.metadata
    assert meta["turn"] == 7 and meta["conversation"] == LINES[2]["conversation_id"]
    inputs = LINES[2]["input"]
    assert len(inputs) == 13
    lines = meta["history"].split("\n")
    assert len(lines) == 12  # six user turns and six agent replies before the question
    assert lines[0] == "User: " + inputs[0]["text"]
    assert lines[1] == "Assistant: " + inputs[1]["text"]
    assert seventh.question == inputs[12]["text"]
    assert ragmeter.load_dataset(TASKS).samples[0].metadata["history"] == "(none)"


def test_enrichments_in_metadata_and_nan_left_out():
    meta = ragmeter.load_dataset(TASKS).samples[1].metadata
    assert meta["Question Type"] == ["Explanation"] and meta["Multi-Turn"] == ["Clarification"]
    assert meta["answerability"] == ["ANSWERABLE"] and meta["collection"] == LINES[1]["collection"]
    assert meta["task_id"] == LINES[1]["task_id"] and meta["task_type"] == "rag"
    assert "Standalone Type" not in meta and "Validity" not in meta  # NaN in the file


def test_answerability_mapped():
    """["UNANSWERABLE"] read as answerable before."""
    first, second, _ = ragmeter.load_dataset(TASKS).samples
    assert first.answerable is False and second.answerable is True
    assert ANSWERABILITY == {"ANSWERABLE": True, "PARTIAL": True, "UNANSWERABLE": False, "UNDERSPECIFIED": False}
    rows = [dict(LINES[1], task_id=f"t{k}", answerability=[label]) for k, label in enumerate(ANSWERABILITY)]
    rows.append(dict(LINES[1], task_id="t9", answerability="UNDERSPECIFIED"))
    assert [s.answerable for s in ragmeter.load_dataset(rows)] == [True, True, False, False, False]


def test_unknown_answerability_is_refused(tmp_path):
    with pytest.raises(InvalidInputError, match=r'line 1, field "answerability": unknown answerability '
                                                r"'MAYBE'. Fix: use one of ANSWERABLE, PARTIAL"):
        ragmeter.load_dataset(write(tmp_path, [dict(LINES[1], answerability=["MAYBE"])]))


def test_relevance_from_the_annotators_feedback():
    second = ragmeter.load_dataset(TASKS).samples[1]
    assert dict(second.relevance) == {c["document_id"]: 1.0 for c in LINES[1]["contexts"]}
    row = json.loads(json.dumps(LINES[1]))
    row["contexts"][0]["feedback"] = {"relevant": {"a": {"value": "no"}, "b": {"value": "no"}, "c": {"value": "yes"}}}
    row["contexts"][1]["feedback"] = {"relevant": {"a": {"value": "yes"}, "b": {"value": "no"}}}  # a tie
    del row["contexts"][2]["feedback"]
    (s,) = ragmeter.load_dataset([row]).samples
    ids = [c["document_id"] for c in row["contexts"]]
    assert dict(s.relevance) == {ids[0]: 0.0, ids[1]: 0.0}


def test_relevant_and_reference_on_the_row_are_used_not_dropped(tmp_path):
    """Added to such rows, they were dropped with no warning."""
    row = dict(LINES[1], relevant=["822086267_6698-7277-0-579"])
    (s,) = ragmeter.load_dataset(write(tmp_path, [row])).samples
    assert dict(s.relevance) == {"822086267_6698-7277-0-579": 1.0}
    row = dict(LINES[0])
    del row["targets"]
    row["reference"] = "No answer in the passages."
    (s,) = ragmeter.load_dataset([row]).samples
    assert s.reference == "No answer in the passages."
    clash = dict(LINES[1], reference="something else")
    with pytest.raises(InvalidInputError, match=r'field "reference": says something else than MTRAG\'s "targets"'):
        ragmeter.load_dataset(write(tmp_path, [clash]))
    same = dict(LINES[1], reference=LINES[1]["targets"][0]["text"])
    assert ragmeter.load_dataset([same]).samples[0].reference == same["reference"]
    alias = dict(LINES[1], response="another answer")  # another tool's name for the answer
    with pytest.raises(InvalidInputError, match='"response" and another column both give "answer"'):
        ragmeter.load_dataset(write(tmp_path, [alias]))


def test_a_task_without_predictions_has_no_answer():
    """The gold targets[0] was scored as the answer."""
    row = {k: v for k, v in LINES[1].items() if k != "predictions"}
    (s,) = ragmeter.load_dataset([row]).samples
    assert s.answer is None and s.reference == LINES[1]["targets"][0]["text"]


def test_three_models_answers_to_one_task_stay_three_samples(tmp_path):
    """Merged into turns 1-3 of one conversation before."""
    rows = []
    for model in ("granite", "llama", "gpt"):
        row = json.loads(json.dumps(LINES[1]))
        row["predictions"] = [{"text": f"{model} says so.", "model_id": model}]
        rows.append(row)
    data = ragmeter.load_dataset(write(tmp_path, rows))
    tid = LINES[1]["task_id"]
    assert [s.id for s in data] == [f"{tid}@granite", f"{tid}@llama", f"{tid}@gpt"]
    assert {s.metadata["turn"] for s in data} == {2} and [s.metadata["model"] for s in data] == ["granite", "llama",
                                                                                                  "gpt"]
    assert [s.answer for s in data] == ["granite says so.", "llama says so.", "gpt says so."]
    # models not named: by position; one row holding several predictions likewise
    unnamed = [dict(LINES[1], predictions=[{"text": "a"}]), dict(LINES[1], predictions=[{"text": "b"}])]
    assert [s.id for s in ragmeter.load_dataset(unnamed)] == [f"{tid}@1", f"{tid}@2"]
    several = dict(LINES[1], predictions=[{"text": "a"}, {"text": "b"}, {"text": "c"}])
    assert [s.answer for s in ragmeter.load_dataset([several])] == ["a", "b", "c"]


def test_the_cli_scores_the_published_file(cli, tmp_path, runs_dir):
    out = cli("eval", TASKS, "--metrics", "precision,recall")
    assert out.exit_code == 0, out.output
    assert "dd6b6ffd177f2b311abe676261279d2f::7" in out.stdout
    assert "1 not computed" in out.output  # the turn-1 task has no passages


def conversation_from_tasks() -> dict:
    """The conversation of the three tasks, written as the benchmark's conversations.json writes
    one: user messages with enrichments, agent messages with the edited ``text``, the
    generator's ``original_text`` and the passages with their feedback."""
    full = LINES[2]["input"]
    messages = []
    for k, m in enumerate(full):
        msg = {"speaker": m["speaker"], "text": m["text"], "timestamp": m["metadata"]["created_at"]}
        if m["speaker"] == "user":
            e = m["enrichments"]
            msg["enrichments"] = {"Question Type": e["Question Type"], "Multi-Turn": e.get("Multi-Turn", ["N/A"]),
                                  "Answerability": e["answerability"]}
        else:
            task = {0: LINES[0], 2: LINES[1]}.get(k - 1)
            msg["contexts"] = task["contexts"] if task else []
            msg["original_text"] = task["predictions"][0]["text"] if task else m["text"] + " (unedited)"
        messages.append(msg)
    return {"author": "g1", "messages": messages, "status": "accepted", "domain": LINES[0]["collection"],
            "generator": {"id": "mistralai/mixtral-8x7b-instruct-v01", "name": "mixtral-8x7b-instruct-v01"}}


def test_a_whole_conversation_gives_the_tasks_turns(tmp_path):
    conv = conversation_from_tasks()
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([conv]))
    data = ragmeter.load_dataset(path)
    assert [s.id for s in data] == [f"1#{i}" for i in range(1, 8)]  # no id in the file: its position
    tasks = ragmeter.load_dataset(TASKS).samples
    for turn, task in ((1, tasks[0]), (2, tasks[1])):
        s = data.samples[turn - 1]
        assert (s.question, s.retrieved, dict(s.relevance), s.answer, s.answerable) == \
            (task.question, task.retrieved, dict(task.relevance), task.answer, task.answerable)
        assert s.metadata["history"] == task.metadata["history"]
    assert data.samples[1].reference == tasks[2].metadata["history"].split("\n")[3][len("Assistant: "):]
    seventh = data.samples[6]
    assert seventh.metadata["history"] == tasks[2].metadata["history"] and seventh.question == tasks[2].question
    assert seventh.answer is None and not seventh.retrieved  # the last user message has no reply yet
    assert data.samples[0].metadata["Answerability"] == ["UNANSWERABLE"] and data.samples[0].answerable is False
    assert data.samples[0].metadata["generator"] == "mixtral-8x7b-instruct-v01"
    assert data.samples[0].metadata["domain"] == LINES[0]["collection"]
    with_id = dict(conv, conversation_id="c9")
    assert ragmeter.load_dataset([with_id]).samples[0].id == "c9#1"


def test_conversation_errors_are_located(tmp_path):
    conv = conversation_from_tasks()
    conv["messages"] = [conv["messages"][1], *conv["messages"]]
    with pytest.raises(InvalidInputError, match=r'line 1, field "messages": the conversation starts with an agent'):
        ragmeter.load_dataset(write(tmp_path, [conv]))
    bad = json.loads(json.dumps(LINES[1]))
    bad["contexts"][1]["document_id"] = bad["contexts"][0]["document_id"]
    with pytest.raises(InvalidInputError, match=r'field "contexts": passage "822086267_7384-8758-0-1374" appears '
                                                r"twice \(items 1 and 2\)"):
        ragmeter.load_dataset(write(tmp_path, [bad]))


def test_the_streamed_reader_says_tasks_need_the_whole_file(cli):
    """--block read each task as one row and stopped at 'unknown field "answerability"'."""
    out = cli("eval", TASKS, "--block", "2", "--no-save")
    assert out.exit_code == 2
    assert "becomes one sample per turn only when the file is read whole. Fix: drop --block" in out.stderr


@pytest.mark.parametrize("turn,shown", [("²", "'²'"), ("5" * 5000, r"'555555555555\.\.\. \(5000 digits\)'"),
                                        (int("7" * 12), "'777777777777'")])
def test_a_turn_that_is_no_usable_whole_number_is_a_located_error(tmp_path, turn, shown):
    """The trial: "turn": "²" and a 5,000-digit turn were ValueError tracebacks (int() refused them)."""
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps({**LINES[0], "turn": turn}) + "\n")
    with pytest.raises(InvalidInputError, match=rf'tasks.jsonl, line 1, field "turn": the turn number {shown} is not'):
        ragmeter.load_dataset(path)
