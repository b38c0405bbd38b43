"""Hypothesis fuzzing of the judge-reply path (envelope bytes and reply content) and of the run
loader: nothing escapes but ragmeter's typed errors."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.core.errors import InvalidInputError, RagmeterError
from ragmeter.judges import Judge, ScriptedBackend, envelope
from ragmeter.judges.backends import Reply
from ragmeter.judges.transport import JudgeReplyError, JudgeTransportError
from ragmeter.report.terminal import runs_table, show_run
from ragmeter.runs import load_run
from ragmeter.runs.store import damaged_run, list_runs

from .judge_fixtures import request

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.none() | st.booleans() | st.integers(min_value=-2 ** 70, max_value=2 ** 70) | \
    st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)
good_verdicts = {"verdicts": [{"id": i, "verdict": "supported"} for i in (1, 2, 3)]}
content = st.one_of(json_values, st.just(json.dumps(good_verdicts)), st.text(max_size=60),
                    st.builds(lambda d: "[" * d + "]" * d, st.integers(0, 50_000)))
usage = st.one_of(st.none(), json_values, st.fixed_dictionaries(
    {}, optional={"prompt_tokens": json_values, "completion_tokens": json_values,
                  "input_tokens": json_values, "output_tokens": json_values}))
openai_envelopes = st.one_of(json_values, st.builds(
    lambda message, use, finish, lp: {"choices": [{"message": message, "finish_reason": finish, "logprobs": lp}],
                                      "usage": use},
    st.one_of(json_values, st.fixed_dictionaries({"role": st.just("assistant"), "content": content})),
    usage, json_values, json_values))
anthropic_envelopes = st.one_of(json_values, st.builds(
    lambda blocks, use, stop: {"content": blocks, "usage": use, "stop_reason": stop},
    st.one_of(json_values, st.lists(st.one_of(json_values, st.fixed_dictionaries(
        {"type": st.sampled_from(["tool_use", "text"]), "input": json_values, "text": content})), max_size=3)),
    usage, json_values))


def _body(doc) -> bytes:
    return doc.encode() if isinstance(doc, str) else json.dumps(doc, allow_nan=True).encode()


@FUZZ
@given(st.one_of(openai_envelopes.map(_body), st.binary(max_size=200)))
def test_openai_envelopes_read_or_fail_typed(body):
    try:
        env = envelope.openai(body)
    except JudgeReplyError:
        return
    assert isinstance(env.text, str) and env.input_tokens >= 0 and env.output_tokens >= 0


@FUZZ
@given(st.one_of(anthropic_envelopes.map(_body), st.binary(max_size=200)))
def test_anthropic_envelopes_read_or_fail_typed(body):
    try:
        env = envelope.anthropic(body)
    except JudgeReplyError:
        return
    assert isinstance(env.text, str) and env.input_tokens >= 0


@FUZZ
@given(st.one_of(content, json_values.map(lambda v: json.dumps(v, allow_nan=True))), st.booleans())
def test_reply_content_is_checked_without_escaping_errors(text, truncated):
    value, problem, _ = Judge._check(request("a"), Reply(str(text), 1, 1, 0.0, truncated), {})
    assert (problem is None) == (value is not None) or problem is None
    if problem is None:
        assert value == good_verdicts


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(content, json_values), min_size=1, max_size=3))
def test_the_judge_turns_any_reply_into_a_judgment_or_a_typed_failure(replies):
    answers = iter(replies * 10)
    judge = Judge(ScriptedBackend(lambda *a: next(answers)), max_reasks=1)
    for out in judge.run([request("a"), request("b")]):
        assert isinstance(out, (JudgeTransportError,)) or (out.ok in (True, False))


# --- the run loader --------------------------------------------------------------------------------

SETUP = {"status": "complete", "options": {"k": 5}, "started": 1.0,
         "dataset": {"path": "d.jsonl", "fingerprint": "f"}, "judge": None}
ROW = {"id": "q1", "metrics": {"recall@5": {"status": "scored", "value": 0.5}}}
SUMMARY = {"recall@5": {"mean": 0.5, "ci95": [0.1, 0.9], "scored": 1, "not_computed": 0, "failed": 0}}


def _mutate(doc: dict, path: list, value):
    """``doc`` with the value at ``path`` (keys chosen by index) replaced."""
    if not path or not isinstance(doc, dict) or not doc:
        return value
    key = sorted(doc)[path[0] % len(doc)]
    return {**doc, key: _mutate(doc[key], path[1:], value)}


texts = st.one_of(st.text(max_size=80), st.binary(max_size=80).map(lambda b: b.decode("latin-1")),
                  st.builds(lambda d: "{" * d, st.integers(0, 20_000)))
files = st.one_of(
    texts,
    st.builds(lambda p, v, doc: json.dumps(_mutate(doc, p, v), allow_nan=True),
              st.lists(st.integers(0, 10), max_size=3), json_values, st.sampled_from([SETUP, SUMMARY])),
    st.builds(lambda p, v, cut: (json.dumps(ROW) + "\n" + json.dumps(_mutate(ROW, p, v)) + "\n")[:cut],
              st.lists(st.integers(0, 10), max_size=4), json_values, st.integers(0, 400)),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setup=st.one_of(st.just(json.dumps(SETUP)), files), results=st.one_of(st.just(json.dumps(ROW)), files),
       summary=st.one_of(st.just(json.dumps(SUMMARY)), files))
def test_the_run_loader_reads_any_files_or_says_where(setup, results, summary):
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        run_dir.mkdir()
        for name, text in (("setup.json", setup), ("results.jsonl", results), ("summary.json", summary)):
            (run_dir / name).write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            run = load_run(run_dir)
        except InvalidInputError as exc:
            assert exc.file and Path(exc.file).name in ("setup.json", "results.jsonl", "summary.json")
            assert "damaged" in runs_table([damaged_run(run_dir, exc)])
            assert len(list_runs(tmp)) == 0 and len(list_runs(tmp, damaged=True)) == 1
            return
        try:
            show_run(run)
            runs_table([run])
        except RagmeterError:
            pass


def test_the_loader_fuzz_can_fail():
    """The fuzz above is not vacuous: a truncated results file is refused with its line."""
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp)
        (run_dir / "setup.json").write_text(json.dumps(SETUP))
        (run_dir / "results.jsonl").write_text(json.dumps(ROW) + "\n" + json.dumps(ROW)[:9])
        try:
            load_run(run_dir)
        except InvalidInputError as exc:
            assert exc.line == 2
        else:
            raise AssertionError("a torn complete run must be refused")


def test_deep_reply_content_is_one_failed_item():
    deep = "[" * 100_000 + "]" * 100_000
    judge = Judge(ScriptedBackend(lambda *a: deep), max_reasks=0)
    (j,) = asyncio.run(judge.ask_all([request("a")]))
    assert not j.ok and "JSON" in j.error
