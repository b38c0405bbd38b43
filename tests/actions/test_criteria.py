"""The action criteria reader: a folder, bytes that are not UTF-8 and 100,000 levels of nesting
are located errors (they were tracebacks); a ``result:`` or ``argument:`` that is not a JSON
Pointer is a located error (it was read as another pointer); a ``cases`` id that no sample
has is a warning naming it and the nearest id (it was silently never applied). Then a
hypothesis fuzz: whatever the file holds, the reader returns criteria or raises a typed
ragmeter error."""

from __future__ import annotations

import json
import os
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.actions import criteria_from_dict, load_action_criteria
from ragmeter.actions.criteria import CriteriaSet, UnknownCaseWarning, unknown_cases
from ragmeter.core.errors import InvalidInputError, RagmeterError
from ragmeter.core.settings import Settings
from ragmeter.runs.driver import run_evaluation

from ..installed import need


def test_a_folder_is_a_located_error(tmp_path):
    (tmp_path / "criteria").mkdir()
    with pytest.raises(InvalidInputError, match=r"criteria: is a folder, not a criteria file"):
        load_action_criteria(tmp_path / "criteria")


@pytest.mark.parametrize("name", ["c.yaml", "c.json"])
def test_bytes_that_are_not_utf8_are_a_located_error(tmp_path, name):
    need("yaml", "YAML criteria need pyyaml")
    p = tmp_path / name
    p.write_bytes(b'{"version": 1,\n "suite": [{"must_call": "x",\n "description": "caf\xe9"}]}\n')
    with pytest.raises(InvalidInputError, match=rf"{name}, line 3: not UTF-8 text \(byte 0xe9\)"):
        load_action_criteria(p)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["c.yaml", "c.json"])
def test_deep_nesting_is_a_located_error(tmp_path, name):
    need("yaml", "YAML criteria need pyyaml")
    p = tmp_path / name
    p.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InvalidInputError, match=rf"{name}: .*nested too deep"):
        load_action_criteria(p)


@pytest.mark.parametrize("pointer", ["order_id", "/order~id", "/a~2", 5, ["/x"], None])
def test_a_result_that_is_not_a_json_pointer_is_a_located_error(pointer):
    for pick in ("result", "argument"):
        item = {"record": {"entity": {"from_call": "create", pick: pointer}, "attribute": "product"}}
        with pytest.raises(InvalidInputError, match=rf'c.json, field "criterion 1": entity: {pick} .* is not a '
                                                    rf"JSON Pointer"):
            criteria_from_dict([item], where="c.json")


def test_valid_pointers_are_kept():
    crit = criteria_from_dict([{"record": {"entity": {"from_call": "c", "result": "/a~1b/~0c/0"}, "attribute": "p",
                                           "equals": {"from_call": "c", "argument": ""}}}])
    assert crit.suite[0].entity.result == "/a~1b/~0c/0" and crit.suite[0].expected.argument == ""


def test_unknown_case_ids_name_the_nearest_id():
    crit = criteria_from_dict({"cases": {"a1": [{"must_call": "x"}], "ordr-17": [{"must_call": "x"}]}})
    said = unknown_cases(crit, ["a1", "order-17", "order-71"])
    assert said == ["action criteria: cases names 'ordr-17', and no sample has that id (the nearest id is "
                    "'order-17'); its criteria never apply"]
    assert unknown_cases(CriteriaSet(), ["a1"]) == []


def test_eval_warns_about_a_case_id_no_sample_has(tmp_path):
    data = tmp_path / "runs.jsonl"
    data.write_text(json.dumps({"id": "run-1", "question": "q", "tool_calls": []}) + "\n")
    crit = tmp_path / "c.json"
    crit.write_text(json.dumps({"version": 1, "cases": {"run-l": [{"must_call": "x"}]}}))
    settings_ = Settings(dataset=str(data), metrics=("action_pass_rate",), judge="none", action_criteria=str(crit),
                         save=False, ledger=str(tmp_path / "l.sqlite"))
    told: list[str] = []
    run_evaluation(settings_, notify=told.append)
    assert told == ["warning: action criteria: cases names 'run-l', and no sample has that id (the nearest id is "
                    "'run-1'); its criteria never apply"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_evaluation(settings_)
    assert [w.category for w in caught if issubclass(w.category, UnknownCaseWarning)] == [UnknownCaseWarning]


def test_block_streaming_and_evaluate_warn_about_a_case_id_no_sample_has(tmp_path):
    """``--block`` (the file streamed) and the library's ``evaluate()`` warn as ``eval`` does."""
    import ragmeter
    from ragmeter.actions.criteria import load_action_criteria

    data = tmp_path / "runs.jsonl"
    data.write_text("".join(json.dumps({"id": i, "question": "q", "tool_calls": []}) + "\n"
                            for i in ("run-1", "job-2", "job-3")))  # two blocks of 2
    crit = tmp_path / "c.json"
    crit.write_text(json.dumps({"version": 1, "cases": {"run-l": [{"must_call": "x"}], "job-3": [{"must_call": "x"}]}}))
    told: list[str] = []
    run_evaluation(Settings(dataset=str(data), metrics=("action_pass_rate",), judge="none", action_criteria=str(crit),
                            save=False, ledger=str(tmp_path / "l.sqlite"), block=2), notify=told.append)
    assert told == ["warning: action criteria: cases names 'run-l', and no sample has that id (the nearest id is "
                    "'run-1'); its criteria never apply"]
    with pytest.warns(UnknownCaseWarning, match="cases names 'run-l'"):
        ragmeter.evaluate(ragmeter.load_dataset(str(data)), ["action_pass_rate"],
                          action_criteria=load_action_criteria(crit))


FUZZ = settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck), database=None)
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=12),
                   st.sampled_from(["", "/", "~", "/a~2", "(", "(a|aa)+$", "\ud800", "must_call", "order_id",
                                    "from_call", "\x00", "é"]))
KEYS = st.sampled_from(["version", "suite", "cases", "id", "description", "when", "must_call", "must_not_call",
                        "check_arguments", "order", "max_calls", "tool", "record", "never_claim", "arguments",
                        "entity", "attribute", "equals", "from_call", "result", "argument", "question_matches",
                        "answer_matches", "claims_match", "claims_state", "matches", "not_matches", "min", "max",
                        "one_of", "exists", "/quantity", "x"])
VALUE = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(KEYS, inner, max_size=5)), max_leaves=25)


@pytest.mark.slow
@FUZZ
@given(VALUE)
def test_fuzz_criteria_values(value):
    try:
        criteria_from_dict(value, where="fuzz.json")
    except RagmeterError:
        pass


@st.composite
def criteria_bytes(draw) -> bytes:
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return draw(st.binary(max_size=200))
    if kind == 1:
        return json.dumps(draw(VALUE), ensure_ascii=False).encode("utf-8", "surrogatepass")
    if kind == 2:
        depth = draw(st.sampled_from([5, 200]))  # 100,000: test_deep_nesting_is_a_located_error
        return ("[" * depth + "]" * draw(st.sampled_from([0, depth]))).encode()
    return draw(st.sampled_from([b"a: &x [*x]\n", b"suite: !!python/object:os.system ls\n", b"\xef\xbb\xbf[]",
                                 b"{version: 1, suite: [{must_call: [1]}]}", b"- when: {question_matches: '('}\n",
                                 b"cases: {1: [{max_calls: -1}]}", b"\t- x", b"version: 2\n"]))


@pytest.mark.slow
@FUZZ
@given(criteria_bytes(), st.sampled_from(["c.json", "c.yaml", "c.yml"]))
def test_fuzz_criteria_files(data, name):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / name
        p.write_bytes(data)
        try:
            load_action_criteria(os.fspath(p))
        except RagmeterError:
            pass


def test_the_former_names_still_read_and_are_not_listed():
    """``Criterion`` and ``load_criteria`` named both the action and the rubric criteria; each has
    one clear public name now, and code that imported the former ones still runs."""
    import ragmeter.actions as actions
    from ragmeter.metrics.generation import rubric

    assert actions.Criterion is actions.ActionCriterion and actions.load_criteria is actions.load_action_criteria
    assert rubric.Criterion is rubric.RubricCriterion and rubric.load_criteria is rubric.load_rubric_criteria
    assert {"Criterion", "load_criteria"}.isdisjoint({*actions.__all__, *rubric.__all__})
    assert {"ActionCriterion", "load_action_criteria"} <= set(actions.__all__)
