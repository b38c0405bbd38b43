"""MTRAG's files as the benchmark writes them (Katsis et al. 2025, IBM/mt-rag-benchmark), read
into ragmeter records (one per turn to score).

**Tasks** (``human/generation_tasks/*.jsonl``, the evaluation scripts' ``responses-*.jsonl``):
one task per line, ``{"conversation_id", "task_id", "turn", "input": [{"speaker": "user" |
"agent", "text", "enrichments"}, ...], "contexts": [{"document_id", "text", "score",
"feedback"}, ...], "targets": [{"text"}], "predictions": [{"text"}], "answerability":
["ANSWERABLE"], "Question Type", "Multi-Turn", ...}``:

- question: the last user turn of ``input``; the turns before it are the history (a turn-7
  task is turn 7, with turns 1-6 as its history, whatever else the file holds);
- retrieved: ``contexts`` in the order given (``document_id``, ``text``, ``score``);
- answer: ``predictions[].text`` (the model's response); reference: ``targets[].text`` (the
  benchmark's gold response; several are joined by newlines). A task without ``predictions``
  has no answer: its gold response is never scored as one;
- relevant: the annotators' ``feedback.relevant`` votes on each passage (grade 1 when more
  vote "yes" than "no", else 0); a ``relevant`` field on the row is used instead;
- answerable: ``answerability`` (a list, or one string): ANSWERABLE and PARTIAL (the passages
  hold part of the answer: the part they hold should be given) are answerable;
  UNANSWERABLE and UNDERSPECIFIED (the question cannot be answered as asked: MTRAG-UN expects
  a clarifying question, not an answer) are not;
- metadata: ``conversation``, ``turn``, ``history``, ``task_id`` and every other field of the
  row (``collection``, ``Question Type``, ``Multi-Turn``, ``answerability``, ...) but those
  above; a bare ``NaN`` (the benchmark's empty cell) is left out.

A row that names ragmeter's own fields (``relevant``, ``reference``, ``answer``, ...) keeps
them: ``relevant`` and ``id`` replace what MTRAG's fields give, any other is refused when it
says something else than the MTRAG field that gives it. Several predictions for one task (one
row with several, or one row per model) become one sample each, ``<task_id>@<model>`` (the
model named by the prediction or the row, else its position: ``@1``, ``@2``).

**Conversations** (``human/conversations/conversations.json``): one conversation per record,
``{"messages": [{"speaker": "user", "text", "enrichments": {"Answerability", ...}},
{"speaker": "agent", "text", "original_text", "contexts": [...]}, ...], "author", "domain",
...}``: each user message and the agent's reply is one turn. The agent's ``text`` (the reply
as the annotators left it, which the tasks give as ``targets``) is the reference; its
``original_text`` (the generator's reply before editing) is the answer; its ``contexts`` and
their feedback are the retrieved passages and labels, as for tasks.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ragmeter.core.errors import InvalidInputError
from ragmeter.core.history import TurnHistory
from ragmeter.io.formats.base import FIELDS, Conversation, Format, Tasks

USER, AGENT = ("user", "human"), ("agent", "assistant", "ai")
#: MTRAG's answerability labels -> ragmeter's ``answerable``.
ANSWERABILITY = {"ANSWERABLE": True, "PARTIAL": True, "UNANSWERABLE": False, "UNDERSPECIFIED": False}
#: Task fields read into the sample's own fields (all others go to its metadata).
TASK_FIELDS = frozenset({"conversation_id", "task_id", "turn", "input", "contexts", "targets", "predictions"})
#: ragmeter's own fields, which a row may give beside MTRAG's.
NATIVE = FIELDS
_REPLACES = frozenset({"id", "relevant"})  # given on the row, these win over what MTRAG's fields give
MODEL_KEYS = ("model", "model_id", "model_name")


def _speaker_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(m, Mapping) and "speaker" in m for m in value)


def is_task(record: Any) -> bool:
    """An MTRAG task: ``input`` is a list of speaker turns."""
    return isinstance(record, Mapping) and _speaker_list(record.get("input"))


def is_conversation(record: Any) -> bool:
    """An MTRAG conversation: ``messages`` is a list of speaker turns."""
    return isinstance(record, Mapping) and _speaker_list(record.get("messages"))


def conversation_id(record: Mapping[str, Any]) -> Any:
    return record.get("conversation_id", record.get("id"))


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _error(file: str, line: int, field: str, message: str, fix: str | None = None) -> InvalidInputError:
    return InvalidInputError(message, file=file, line=line, field=field, fix=fix)


def _text_of(item: Any, file: str, line: int, field: str, k: int) -> str | None:
    if not isinstance(item, Mapping):
        raise _error(file, line, field, f"item {k} must be an object with a \"text\", got {type(item).__name__}")
    text = item.get("text")
    if text is not None and not isinstance(text, str):
        raise _error(file, line, field, f"item {k} text must be a string, got {type(text).__name__}")
    return text


def answerable(value: Any, file: str, line: int, field: str = "answerability") -> bool | None:
    """``["UNANSWERABLE"]`` -> False (see :data:`ANSWERABILITY`); None when not given."""
    if not _present(value):
        return None
    labels = value if isinstance(value, list) else [value]
    known = []
    for label in labels:
        name = str(label).strip().upper()
        if name in ("N/A", ""):
            continue
        if name not in ANSWERABILITY:
            raise _error(file, line, field, f"unknown answerability {label!r}",
                         fix=f"use one of {', '.join(ANSWERABILITY)}")
        known.append(ANSWERABILITY[name])
    if not known:
        return None
    if len(set(known)) > 1:
        raise _error(file, line, field, f"the labels {labels} disagree on whether the question can be answered",
                     fix="keep one label")
    return known[0]


def passages(contexts: Any, file: str, line: int, field: str = "contexts") -> tuple[list[dict], dict[str, float]]:
    """The passages as ranked chunks, and the labels the annotators' feedback gives."""
    if not _present(contexts):
        return [], {}
    if not isinstance(contexts, list):
        raise _error(file, line, field, f"must be a list of passages, got {type(contexts).__name__}",
                     fix='write [{"document_id": "...", "text": "..."}]')
    chunks: list[dict] = []
    labels: dict[str, float] = {}
    seen: dict[str, int] = {}
    for k, c in enumerate(contexts, start=1):
        if not isinstance(c, Mapping):
            raise _error(file, line, field, f"item {k} must be an object, got {type(c).__name__}")
        cid = c.get("document_id", c.get("id"))
        if not isinstance(cid, (str, int)) or isinstance(cid, bool) or not str(cid).strip():
            raise _error(file, line, field, f"item {k} has no document_id", fix="give each passage its document_id")
        cid = str(cid)
        if cid in seen:
            raise _error(file, line, field, f'passage "{cid}" appears twice (items {seen[cid]} and {k})',
                         fix="list each passage once")
        seen[cid] = k
        chunk: dict[str, Any] = {"id": cid}
        text = _text_of(c, file, line, field, k)
        if text is not None:
            chunk["text"] = text
        if _present(c.get("score")):
            chunk["score"] = c["score"]
        chunks.append(chunk)
        votes = _votes(c.get("feedback"))
        if votes:
            labels[cid] = 1.0 if votes["yes"] > votes["no"] else 0.0
    return chunks, labels


def _votes(feedback: Any) -> Counter:
    """``{"relevant": {annotator: {"value": "yes"}}}`` -> Counter of "yes" / "no"."""
    out: Counter = Counter()
    relevant = feedback.get("relevant") if isinstance(feedback, Mapping) else None
    if isinstance(relevant, Mapping):
        for vote in relevant.values():
            value = vote.get("value") if isinstance(vote, Mapping) else vote
            if str(value).lower() in ("yes", "no"):
                out[str(value).lower()] += 1
    return out


def _line(who: str, text: str) -> str:
    return f"{'User' if who == 'user' else 'Assistant'}: {text}"


def _history(turns: list[tuple[str, str]]) -> str:
    return "\n".join(_line(who, text) for who, text in turns) or "(none)"


def _speaker(message: Mapping[str, Any], file: str, line: int, field: str) -> str:
    who = str(message.get("speaker", "")).lower()
    if who in USER:
        return "user"
    if who in AGENT:
        return "agent"
    raise _error(file, line, field, f"unknown speaker {message.get('speaker')!r}", fix='use "user" or "agent"')


def _metadata(record: Mapping[str, Any], skip: frozenset[str], aliases: Mapping[str, str]) -> dict[str, Any]:
    """The fields no reader takes: into the sample's metadata (a bare NaN left out)."""
    return {k: v for k, v in record.items()
            if k not in skip and k not in NATIVE and k not in aliases and _present(v)}


def _aliases(record: Mapping[str, Any], skip: frozenset[str], aliases: Mapping[str, str]) -> dict[str, Any]:
    """Other tools' names for ragmeter's fields (``response``, ``ground_truth``, ...), passed on
    to the row reader, which reads them or names the clash with what MTRAG's fields give."""
    return {k: v for k, v in record.items() if k in aliases and k not in skip and v is not None}


def _merge(derived: dict[str, Any], record: Mapping[str, Any], file: str, line: int) -> dict[str, Any]:
    """``derived`` with the row's own ragmeter fields: ``id`` and ``relevant`` replace, the
    others must agree with what MTRAG's fields say."""
    out = dict(derived)
    for name in NATIVE:
        if name not in record or record[name] is None:
            continue
        given = record[name]
        if name == "metadata":
            if not isinstance(given, Mapping):
                raise _error(file, line, name, f"must be an object, got {type(given).__name__}")
            out["metadata"] = {**out.get("metadata", {}), **given}
        elif name in _REPLACES or out.get(name) is None or out[name] == given:
            out[name] = given
        else:
            source = {"question": "input", "retrieved": "contexts", "answer": "predictions", "reference": "targets",
                      "answerable": "answerability"}.get(name, name)
            raise _error(file, line, name, f'says something else than MTRAG\'s "{source}"',
                         fix=f'remove "{name}" or "{source}"')
    return out


def _turn_number(turn: Any, users: int, file: str, line: int) -> int:
    """The task's ``turn`` when it is a whole number, else the user turns counted. Digits that are
    not 0-9 ("²") or too many of them (5,000) are located errors (``int`` raised on them)."""
    text = str(turn).strip() if isinstance(turn, (int, float, str)) else ""
    if not text.isdigit():
        return users
    if not text.isascii() or len(text) > 9:
        shown = text if len(text) <= 12 else f"{text[:12]}... ({len(text)} digits)"
        raise _error(file, line, "turn", f"the turn number {shown!r} is not a whole number of at most 9 digits 0-9",
                     fix="write turn as 1, 2, 3, ... (or leave it out: the user turns are counted)")
    return int(text)


def _task_core(rec: Mapping[str, Any], file: str, line: int, aliases: Mapping[str, str]) -> dict[str, Any]:
    """One task's question, history, passages, reference and answerability (no answer yet)."""
    spoken: list[tuple[str, str]] = []
    for k, m in enumerate(rec["input"], start=1):
        text = _text_of(m, file, line, "input", k)
        spoken.append((_speaker(m, file, line, "input"), text or ""))
    if spoken[-1][0] != "user":
        raise _error(file, line, "input", "the last turn is not the user's", fix="end input with the user's question")
    chunks, labels = passages(rec.get("contexts"), file, line)
    turn = rec.get("turn")
    users = sum(who == "user" for who, _ in spoken)
    meta = {"conversation": str(rec["conversation_id"]) if _present(rec.get("conversation_id")) else None,
            "turn": _turn_number(turn, users, file, line),
            "history": _history(spoken[:-1])}
    if _present(rec.get("task_id")):
        meta["task_id"] = str(rec["task_id"])
    meta.update(_metadata(rec, TASK_FIELDS, aliases))
    out: dict[str, Any] = {"question": spoken[-1][1], "retrieved": chunks,
                           "metadata": {k: v for k, v in meta.items() if v is not None}}
    if labels:
        out["relevant"] = labels
    targets = rec.get("targets")
    if _present(targets):
        if not isinstance(targets, list):
            raise _error(file, line, "targets", f"must be a list, got {type(targets).__name__}",
                         fix='write [{"text": "..."}]')
        texts = [t for k, x in enumerate(targets, start=1) if (t := _text_of(x, file, line, "targets", k))]
        if texts:
            out["reference"] = "\n".join(texts)
    flag = answerable(rec.get("answerability"), file, line)
    if flag is not None:
        out["answerable"] = flag
    return out


def _task_id(rec: Mapping[str, Any]) -> str | None:
    if _present(rec.get("task_id")):
        return str(rec["task_id"])
    if _present(rec.get("conversation_id")) and _present(rec.get("turn")):
        return f"{rec['conversation_id']}::{rec['turn']}"
    return None


def _predictions(rec: Mapping[str, Any], file: str, line: int) -> list[tuple[str | None, str | None]]:
    """(model, text) of each prediction; one (None, None) when the row has none."""
    preds = rec.get("predictions")
    if not _present(preds):
        return [(None, None)]
    if not isinstance(preds, list):
        raise _error(file, line, "predictions", f"must be a list, got {type(preds).__name__}",
                     fix='write [{"text": "..."}]')
    row_model = next((str(rec[k]) for k in MODEL_KEYS if _present(rec.get(k))), None)
    out = []
    for k, p in enumerate(preds, start=1):
        text = _text_of(p, file, line, "predictions", k)
        model = next((str(p[key]) for key in MODEL_KEYS if _present(p.get(key))), row_model)
        out.append((model, text))
    return out or [(None, None)]


def task_rows(records: list[tuple[int, Mapping[str, Any]]], file: str,
              aliases: Mapping[str, str]) -> list[tuple[int, dict]]:
    """One ragmeter record per (task, prediction), in file order."""
    cores = []
    per_task: Counter = Counter()
    for line, rec in records:
        preds = _predictions(rec, file, line)
        tid = _task_id(rec)
        per_task[tid] += len(preds)
        cores.append((line, rec, tid, preds))
    out: list[tuple[int, dict]] = []
    position: Counter = Counter()
    for line, rec, tid, preds in cores:
        core = _task_core(rec, file, line, aliases)
        models = [m for m, _ in preds]
        for model, text in preds:
            position[tid] += 1
            row = dict(core, metadata=dict(core["metadata"]))
            if tid is not None:
                row["id"] = tid
                if per_task[tid] > 1:
                    unique = model is not None and models.count(model) == 1
                    row["id"] = f"{tid}@{model if unique else position[tid]}"
            if model is not None:
                row["metadata"]["model"] = model
            if text is not None:
                row["answer"] = text
            out.append((line, {**_merge(row, rec, file, line), **_aliases(rec, TASK_FIELDS, aliases)}))
    return out


CONVERSATION_SKIP = frozenset({"messages", "conversation_id", "id", "retriever", "generator", "status_history"})


def conversation_turns(rec: Mapping[str, Any], cid: str, file: str, line: int,
                       aliases: Mapping[str, str]) -> list[dict]:
    """One ragmeter record per turn of an MTRAG conversation (ids ``<conversation>#<turn>``)."""
    shared = _metadata(rec, CONVERSATION_SKIP, aliases)
    generator = rec.get("generator")
    if isinstance(generator, Mapping) and _present(generator.get("name")):
        shared["generator"] = generator["name"]
    turns: list[tuple[Mapping[str, Any], Mapping[str, Any] | None]] = []
    for k, m in enumerate(rec["messages"], start=1):
        who = _speaker(m, file, line, "messages")
        if who == "user":
            if not _text_of(m, file, line, "messages", k):
                raise _error(file, line, "messages", f"message {k} (the user's) has no text")
            turns.append((m, None))
        elif not turns:
            raise _error(file, line, "messages", "the conversation starts with an agent message",
                         fix="start with the user's first question")
        elif turns[-1][1] is not None:
            raise _error(file, line, "messages", f"message {k} is a second agent reply in a row",
                         fix="give one agent message after each user message")
        else:
            turns[-1] = (turns[-1][0], m)
    out = []
    spoken: list[str] = []  # the conversation's history lines, one list shared by every turn
    for i, (user, agent) in enumerate(turns, start=1):
        given = user.get("enrichments")
        enrichments: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        meta = {"conversation": cid, "turn": i, "history": TurnHistory(spoken, len(spoken)), **shared,
                **{k: v for k, v in enrichments.items() if _present(v)}}
        row: dict[str, Any] = {"id": f"{cid}#{i}", "question": user.get("text") or "", "metadata": meta}
        flag = answerable(enrichments.get("Answerability", enrichments.get("answerability")), file, line,
                          "messages")
        if flag is not None:
            row["answerable"] = flag
        spoken.append(_line("user", user.get("text") or ""))
        if agent is not None:
            chunks, labels = passages(agent.get("contexts"), file, line, "messages")
            row["retrieved"] = chunks
            if labels:
                row["relevant"] = labels
            if _present(agent.get("text")):
                row["reference"] = agent["text"]
                spoken.append(_line("agent", agent["text"]))
            if _present(agent.get("original_text")):
                row["answer"] = agent["original_text"]
        out.append(row)
    return out


FORMAT = Format(
    name="mtrag",
    tried="MTRAG's tasks (input, contexts, targets, predictions) and conversations (messages)",
    conversations=(Conversation("messages", is_conversation, conversation_turns, conversation_id=conversation_id,
                                numbered=False, specificity=3),),
    tasks=Tasks(is_task, task_rows),
)
