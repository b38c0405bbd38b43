"""One rule for every value read from outside (core.finite): NaN and infinity are not values.
A record that holds one, through every source (table JSONL and CSV, HTTP, a Python function),
makes its fact cannot-verify, never a failed fact, and is never cached; a tool call whose
arguments or result hold one makes its criteria unable-to-verify, never a fail; a judge reply
holding one is not JSON and is asked again; a criteria file's min/max must be finite."""

from __future__ import annotations

import asyncio
import math

import pytest

from ragmeter.actions import criteria_from_dict, grade_case, read_run
from ragmeter.core.errors import InvalidInputError
from ragmeter.core.finite import non_finite, strict_loads
from ragmeter.judges import Judge, JudgeRequest, ScriptedBackend, load_prompt
from ragmeter.ledger import Ledger
from ragmeter.records import (
    CallableSource,
    Fact,
    HttpSource,
    MemoryLookupCache,
    RecordLookup,
    RecordValue,
    TableSource,
    check_facts_sync,
    compare,
)

from ..records_servers import start_records_server

FACT = Fact("R2", "price", "$89")


def verdict(source, cache=None) -> tuple[str, str]:
    check = check_facts_sync([FACT], RecordLookup(source, cache=cache))[0]
    return check.verdict, check.reason


@pytest.mark.parametrize("line", ['{"entity": "R2", "attribute": "price", "value": NaN, "unit": "USD"}',
                                  '{"entity": "R2", "attribute": "price", "value": Infinity}',
                                  '{"entity": "R2", "price": {"value": -Infinity, "unit": "USD"}}'])
def test_a_table_line_holding_nan_or_infinity_is_cannot_verify(tmp_path, line):
    path = tmp_path / "records.jsonl"
    path.write_text(line + "\n")
    cache = MemoryLookupCache()
    said, reason = verdict(TableSource(path), cache)
    assert said == "cannot_verify" and "not a finite number" in reason, reason
    assert len(cache) == 0  # asked again next time, like any failure


@pytest.mark.parametrize("cell", ["nan", "NaN", "inf", "-Infinity"])
def test_a_csv_cell_spelling_nan_or_infinity_is_cannot_verify(tmp_path, cell):
    path = tmp_path / "records.csv"
    path.write_text(f"entity,attribute,value\nR2,price,{cell}\n")
    said, reason = verdict(TableSource(path))
    assert said == "cannot_verify" and "not a finite number" in reason, reason


def test_an_http_reply_holding_nan_is_cannot_verify(monkeypatch):
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    server, state = start_records_server({"R2": {"price": math.nan, "status": "shipped"}})
    try:
        source = HttpSource(state.url + "/orders/{entity}")
        said, reason = verdict(source)
        ok = check_facts_sync([Fact("R2", "status", "shipped")],
                              RecordLookup(HttpSource(state.url + "/orders/{entity}")))
    finally:
        server.shutdown()
        server.server_close()
    assert said == "cannot_verify" and "not a finite number" in reason, reason
    assert ok[0].verdict == "pass"  # the other values of the same reply are read


def test_a_source_returning_nan_directly_is_cannot_verify():
    class Nan:
        identity = "test:nan"

        async def lookup(self, entity, attribute):
            return RecordValue(math.nan, "USD")

        async def aclose(self):
            return None

    assert verdict(Nan())[0] == "cannot_verify"
    assert verdict(CallableSource(lambda e, a: "inf"))[0] == "cannot_verify"


def test_compare_never_passes_or_fails_on_nan():
    for stated, recorded in ((math.nan, 99), ("$89", math.nan), ("$89", "NaN"), (math.inf, math.inf)):
        assert compare(stated, None, recorded).outcome == "undecidable", (stated, recorded)
    assert compare("Infinity Pro", None, "infinity pro").outcome == "equal"  # text that only starts so is text


def run(arguments, result=None):
    return read_run({"id": "a1", "question": "q", "tool_calls": [
        {"name": "create_order", "arguments": arguments, "result": result if result is not None else {"id": "O-1"}}]})


def test_call_arguments_holding_nan_are_unreadable_not_a_fail():
    crit = criteria_from_dict([{"id": "small", "check_arguments": "create_order",
                                "arguments": {"quantity": {"max": 1}}},
                               {"id": "made", "must_call": "create_order", "arguments": {"quantity": 1}}])
    for arguments in ({"quantity": math.nan}, '{"quantity": Infinity}'):
        grade = asyncio.run(grade_case(run(arguments), crit.suite))
        assert [r.verdict for r in grade.results] == ["unable_to_verify", "unable_to_verify"], grade.as_dict()


def test_a_record_criterion_reading_nan_from_a_call_is_unable_to_verify():
    equals = {"from_call": "create_order", "result": "/price"}
    crit = criteria_from_dict([{"id": "price", "record": {"entity": "R2", "attribute": "price", "equals": equals}}])
    records = RecordLookup(CallableSource(lambda e, a: 99))
    grade = asyncio.run(grade_case(run({"quantity": 1}, {"price": math.nan}), crit.suite, records=records))
    assert grade.results[0].verdict == "unable_to_verify" and "not a finite number" in grade.results[0].evidence


def test_criteria_min_max_must_be_finite():
    with pytest.raises(InvalidInputError, match="finite number"):
        criteria_from_dict([{"check_arguments": "t", "arguments": {"q": {"max": math.inf}}}])


SCORE = {"type": "object", "properties": {"score": {"type": "number"}}, "required": ["score"]}


@pytest.mark.parametrize("bad", ['{"score": NaN}', '{"score": Infinity}', '```json\n{"score": -Infinity}\n```'])
def test_a_judge_reply_holding_nan_is_asked_again(bad):
    replies = iter([bad, '{"score": 0.5}'])
    backend = ScriptedBackend(lambda prompt_id, inputs, messages: next(replies))
    request = JudgeRequest(load_prompt("context.relevance"), {"question": "q", "sentences": "1. a"}, SCORE, "score")
    j = Judge(backend, ledger=Ledger(":memory:")).run([request])[0]
    assert j.ok and j.value == {"score": 0.5} and j.reasks == 1 and backend.calls == 2


def test_the_rule_itself():
    assert [non_finite(v) for v in (math.nan, -math.inf, "nan ", "+Inf", 1.0, "99", "Info", None, True)] == \
        [True, True, True, True, False, False, False, False, False]
    with pytest.raises(ValueError, match="NaN is not JSON"):
        strict_loads('{"a": NaN}')


def test_a_nan_an_older_run_cached_is_not_compared(tmp_path):
    from ragmeter.records import SqliteLookupCache, lookup_key

    source = CallableSource(lambda e, a: 99, identity="python:prices")
    cache = SqliteLookupCache(tmp_path / "ledger.sqlite")
    cache._db.execute("INSERT INTO record_lookups VALUES (?,?,?,?,?,?,?,?,?)",
                      (lookup_key("python:prices", "R2", "price"), "python:prices", "R2", "price", "value", "NaN",
                       None, None, 0.0))  # as an earlier version stored it
    said, reason = verdict(source, cache)
    assert said == "cannot_verify" and "not a finite number" in reason, reason
