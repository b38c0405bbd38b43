"""Every user regex in action criteria (``when.question_matches``, ``answer_matches``,
``claims_match``, ``matches`` / ``not_matches`` on arguments) is searched with a time limit,
as ``expected_format`` regexes are: a catastrophic pattern leaves its criterion
unable-to-verify with the reason, never a hang. Each eval runs in a child process so that a
hang fails the test (its timeout) rather than hanging the suite."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from ragmeter.actions import criteria_from_dict
from ragmeter.core.errors import InvalidInputError

QUESTION = "a" * 41 + "!"
EVIL = "(a|aa)+$"  # exponential in re and in regex alike
NESTED = "^(a+)+$"  # exponential in re (the trial's hang); regex answers it at once


def graded(tmp_path, suite: list[dict], run: dict) -> dict:
    data = tmp_path / "runs.jsonl"
    data.write_text(json.dumps(run) + "\n")
    crit = tmp_path / "criteria.json"
    crit.write_text(json.dumps({"version": 1, "suite": suite}))
    code = textwrap.dedent(f"""
        import json
        from ragmeter.core.settings import Settings
        from ragmeter.runs.driver import run_evaluation
        out = run_evaluation(Settings(dataset={str(data)!r}, metrics=("action_pass_rate",), judge="none",
                                      action_criteria={str(crit)!r}, save=False,
                                      ledger={str(tmp_path / "ledger.sqlite")!r}))
        ev = out.result.evidence[0]
        print(json.dumps(ev.actions.as_dict()))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


CALLS = [{"name": "create_order", "arguments": {"reason": "a" * 41 + "!"}, "result": {"id": "O-1"}}]


@pytest.mark.slow
def test_a_catastrophic_when_pattern_is_unable_to_verify_not_a_hang(tmp_path):
    suite = [{"id": "evil", "must_not_call": "create_order", "when": {"question_matches": EVIL}},
             {"id": "nested", "must_not_call": "create_order", "when": {"question_matches": NESTED}},
             {"id": "answer", "must_not_call": "create_order", "when": {"answer_matches": EVIL}},
             {"id": "args", "must_call": "create_order", "arguments": {"reason": {"not_matches": EVIL}}}]
    grade = graded(tmp_path, suite, {"id": "a1", "question": QUESTION, "answer": QUESTION, "tool_calls": CALLS})
    verdicts = {c["id"]: (c["verdict"], c["evidence"]) for c in grade["criteria"]}
    for cid in ("evil", "answer", "args"):
        verdict, evidence = verdicts[cid]
        assert verdict == "unable_to_verify" and "did not finish within" in evidence, (cid, evidence)
    assert verdicts["nested"][0] == "not_applicable"  # answered at once: the question does not match


def test_a_pattern_that_does_not_compile_is_a_located_error():
    with pytest.raises(InvalidInputError, match=r"criterion 1.*when.question_matches needs a regular expression"):
        criteria_from_dict([{"must_call": "t", "when": {"question_matches": "(unclosed"}}], where="c.json")
    with pytest.raises(InvalidInputError, match=r"matches needs a regular expression"):
        criteria_from_dict([{"must_call": "t", "arguments": {"x": {"matches": "[z-a]"}}}], where="c.json")
    with pytest.raises(InvalidInputError, match=r"must be a string"):
        criteria_from_dict([{"must_call": "t", "when": {"question_matches": 5}}], where="c.json")
