"""Actions: criteria graded from the tool calls a run made.

Proof: the same calls written in three formats (OpenAI messages, OpenInference spans, a plain
list) read to the same calls and get the same verdicts; a case with no calls recorded is
unable to verify and leaves the pass rate unchanged (the arithmetic written out); a call to
an undeclared tool fails; never-claim statements are checked through a scripted judge."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from ragmeter.actions import (
    AgentRun,
    CriteriaSet,
    ToolCall,
    criteria_from_dict,
    grade_case,
    grade_cases,
    load_action_criteria,
    load_runs,
    parse_criteria,
    read_run,
    read_spans_file,
    read_tool_calls,
    summarise,
    verifier,
)
from ragmeter.core.errors import InvalidInputError
from ragmeter.evidence.matrix import Claim
from ragmeter.judges import Judge, ScriptedBackend
from ragmeter.records import CallableSource, RecordLookup, TableSource

ROOT = Path(__file__).resolve().parents[2]
WARRANTY = ROOT / "examples" / "warranty"

PLAIN = [
    {"name": "lookup_warranty", "arguments": {"serial": "R2-40077"}, "result": {"product": "R2", "in_warranty": True}},
    {"name": "create_replacement_order", "arguments": {"serial": "R2-40077", "product": "R2", "reason": "power surge",
                                                       "quantity": 1},
     "result": {"order_id": "ORD-1042"}},
    {"name": "get_order", "arguments": "{not json", "result": "ok"},
]


def as_openai(calls: list[dict]) -> list[dict]:
    out: list[dict] = [{"role": "user", "content": "help"}]
    for i, c in enumerate(calls):
        args = c["arguments"] if isinstance(c["arguments"], str) else json.dumps(c["arguments"])
        out.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{i}", "type": "function", "function": {"name": c["name"], "arguments": args}}]})
        out.append({"role": "tool", "tool_call_id": f"call_{i}",
                    "content": c["result"] if isinstance(c["result"], str) else json.dumps(c["result"])})
    out.append({"role": "assistant", "content": "done"})
    return out


def as_tool_spans(calls: list[dict], otlp: bool = False) -> list[dict]:
    spans = []
    for i, c in enumerate(calls):
        attrs = {"openinference.span.kind": "TOOL", "tool.name": c["name"],
                 "input.value": c["arguments"] if isinstance(c["arguments"], str) else json.dumps(c["arguments"]),
                 "output.value": c["result"] if isinstance(c["result"], str) else json.dumps(c["result"])}
        if otlp:
            attrs = [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()]
        spans.append({"name": c["name"], "context": {"trace_id": "t1", "span_id": f"s{i}"},
                      "startTimeUnixNano": str(1_700_000_000_000_000_000 + (len(calls) - i) * 0 + i * 1000),
                      "attributes": attrs})
    return spans[::-1]  # written out of order: start time decides


def as_llm_spans(calls: list[dict]) -> list[dict]:
    """Tool calls inside LLM spans (no TOOL spans); results in the next LLM span's input messages."""
    spans = []
    for i, c in enumerate(calls):
        attrs = {"openinference.span.kind": "LLM",
                 "llm.output_messages.0.message.role": "assistant",
                 "llm.output_messages.0.message.tool_calls.0.tool_call.id": f"call_{i}",
                 "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": c["name"],
                 "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments":
                     c["arguments"] if isinstance(c["arguments"], str) else json.dumps(c["arguments"])}
        for j in range(i):  # the history so far, with each earlier call's result
            attrs[f"llm.input_messages.{j}.message.role"] = "tool"
            attrs[f"llm.input_messages.{j}.message.tool_call_id"] = f"call_{j}"
            r = calls[j]["result"]
            attrs[f"llm.input_messages.{j}.message.content"] = r if isinstance(r, str) else json.dumps(r)
        spans.append({"name": "llm", "start_time": f"2026-10-05T10:00:0{i}+00:00", "attributes": attrs})
    last = {"openinference.span.kind": "LLM"}
    for j, c in enumerate(calls):
        last[f"llm.input_messages.{j}.message.role"] = "tool"
        last[f"llm.input_messages.{j}.message.tool_call_id"] = f"call_{j}"
        last[f"llm.input_messages.{j}.message.content"] = (c["result"] if isinstance(c["result"], str)
                                                           else json.dumps(c["result"]))
    spans.append({"name": "llm", "start_time": "2026-10-05T10:00:09+00:00", "attributes": last})
    return spans


CRITERIA = criteria_from_dict({"suite": [
    {"id": "no-surge-order", "must_not_call": "create_replacement_order",
     "arguments": {"reason": {"matches": "surge"}}},
    {"id": "order-r2", "must_call": "create_replacement_order", "arguments": {"product": "R2"}},
    {"id": "qty", "check_arguments": "create_replacement_order",
     "arguments": {"quantity": {"max": 1}, "serial": {"matches": "^R2-"}, "/product": {"one_of": ["R1", "R2"]}}},
    {"id": "get-order-args", "check_arguments": "get_order", "arguments": {"order_id": {"exists": True}}},
    {"id": "order", "order": ["lookup_warranty", "create_replacement_order", "get_order"]},
    {"id": "max", "max_calls": 2},
    {"id": "on-record", "record": {"entity": {"from_call": "create_replacement_order", "result": "/order_id"},
                                   "attribute": "product",
                                   "equals": {"from_call": "create_replacement_order", "argument": "/product"}}},
]})
EXPECTED = {"no-surge-order": "fail", "order-r2": "pass", "qty": "pass", "get-order-args": "unable_to_verify",
            "order": "pass", "max": "fail", "on-record": "pass"}


def records() -> RecordLookup:
    return RecordLookup(TableSource(WARRANTY / "records.jsonl"))


def grade(run: AgentRun, criteria: CriteriaSet = CRITERIA, **kw):
    return asyncio.run(grade_case(run, criteria.for_case(run.id), records=kw.pop("records", records()), **kw))


def test_three_formats_read_the_same_calls():
    formats = {
        "plain": PLAIN, "openai": as_openai(PLAIN), "tool spans": as_tool_spans(PLAIN),
        "tool spans (OTLP attributes)": as_tool_spans(PLAIN, otlp=True), "llm spans": as_llm_spans(PLAIN),
        "openai wrapped": {"messages": as_openai(PLAIN)}, "spans wrapped": {"spans": as_tool_spans(PLAIN)},
    }
    read = {name: read_tool_calls(value)[0] for name, value in formats.items()}
    for name, calls in read.items():
        assert [(c.name, c.arguments, c.result, c.raw_arguments, c.index, c.has_result) for c in calls] == [
            ("lookup_warranty", {"serial": "R2-40077"}, {"product": "R2", "in_warranty": True}, None, 0, True),
            ("create_replacement_order", {"serial": "R2-40077", "product": "R2", "reason": "power surge",
                                          "quantity": 1}, {"order_id": "ORD-1042"}, None, 1, True),
            ("get_order", None, "ok", "{not json", 2, True),
        ], name


def test_three_formats_give_the_same_verdicts():
    verdicts = {}
    for name, value in {"plain": PLAIN, "openai": as_openai(PLAIN), "spans": as_tool_spans(PLAIN),
                        "llm spans": as_llm_spans(PLAIN)}.items():
        run = read_run({"id": "c1", "tool_calls": value})
        verdicts[name] = {r.id: r.verdict for r in grade(run).results}
    assert all(v == EXPECTED for v in verdicts.values()), verdicts


def test_evidence_names_the_calls():
    run = read_run({"id": "c1", "tool_calls": PLAIN})
    by = {r.id: r for r in grade(run).results}
    assert by["no-surge-order"].calls == (1,)
    assert "reason='power surge'" in by["no-surge-order"].evidence
    assert by["max"].evidence.startswith("3 call(s), at most 2 allowed")
    assert "not JSON" in by["get-order-args"].evidence
    assert by["on-record"].evidence == "the record of ORD-1042 has product = R2, as expected"


def test_no_calls_recorded_is_unable_to_verify():
    for value in (None, []):
        run = read_run({"id": "c1", "tool_calls": value})
        results = grade(run).results
        assert {r.verdict for r in results} == {"unable_to_verify"}
        assert "no tool calls" in results[0].evidence
    complete = read_run({"id": "c1", "tool_calls": [], "calls_complete": True})
    by = {r.id: r.verdict for r in grade(complete).results}
    assert by == {"no-surge-order": "pass", "order-r2": "fail", "qty": "not_applicable",
                  "get-order-args": "not_applicable", "order": "not_applicable", "max": "pass",
                  "on-record": "unable_to_verify"}


def test_a_call_to_an_undeclared_tool_fails():
    run = read_run({"id": "c1", "tools": ["lookup_warranty", {"name": "get_order"}],
                    "tool_calls": [{"name": "lookup_warranty", "arguments": {}}, {"name": "wipe_device"}]})
    results = grade(run, CriteriaSet()).results
    assert [(r.id, r.verdict) for r in results] == [("declared_tools", "fail")]
    assert "wipe_device" in results[0].evidence and results[0].calls == (1,)
    ok = replace(run, calls=run.calls[:1])
    assert grade(ok, CriteriaSet()).results[0].verdict == "pass"
    undeclared = replace(run, tools=None)
    assert grade(undeclared, CriteriaSet()).results == ()  # nothing declared: nothing to compare with


def test_order_violation():
    run = read_run({"id": "c1", "tool_calls": [{"name": "create_replacement_order"}, {"name": "lookup_warranty"}]})
    order = parse_criteria([{"order": ["lookup_warranty", "create_replacement_order"]}])
    r = grade(run, CriteriaSet(tuple(order))).results[0]
    assert r.verdict == "fail" and r.evidence.startswith("#1 create_replacement_order") and r.calls == (0,)


def test_record_post_condition_outcomes():
    crit = CriteriaSet(tuple(parse_criteria([{"id": "rec", "record": {
        "entity": {"from_call": "create_replacement_order", "result": "/order_id"}, "attribute": "product",
        "equals": "R2"}}])))

    def run_with(order_id):
        return read_run({"id": "c", "tool_calls": [{"name": "create_replacement_order", "arguments": {},
                                                    "result": {"order_id": order_id}}]})

    assert grade(run_with("ORD-1042"), crit).results[0].verdict == "pass"
    missing = grade(run_with("ORD-9999"), crit).results[0]
    assert missing.verdict == "fail" and "holds no product for ORD-9999" in missing.evidence
    assert grade(run_with("ORD-1042"), crit, records=None).results[0].evidence == "no record source was given"

    def slow(entity, attribute):
        import time
        time.sleep(1)
        return "R2"

    timed = grade(run_with("ORD-1042"), crit, records=RecordLookup(CallableSource(slow), timeout_s=0.1)).results[0]
    assert timed.verdict == "unable_to_verify" and "within 0.1 s" in timed.evidence
    other = grade(run_with("ORD-1042"), crit, records=RecordLookup(CallableSource(lambda e, a: "R1"))).results[0]
    assert other.verdict == "fail" and "expected R2" in other.evidence
    no_result = read_run({"id": "c", "tool_calls": [{"name": "create_replacement_order", "arguments": {}}]})
    assert "no result" in grade(no_result, crit).results[0].evidence


@dataclass(frozen=True)
class V:
    verdict: str
    sources: tuple[str, ...] = ()
    quote: str = ""


def scripted_verify(made: dict[str, str]):
    """A verify callback: a statement is made when a claim contains its key phrase."""
    calls = []

    async def verify(statements, claims):
        calls.append((list(statements), [c.text for c in claims]))
        out = []
        for s in statements:
            hit = next((c for c in claims for phrase, st in made.items() if st == s and phrase in c.text), None)
            out.append(V("supported", (f"claim-{hit.id}",), hit.text) if hit else V("not_found"))
        return out

    verify.calls = calls
    return verify


def test_example_runs_known_verdicts():
    runs = load_runs(WARRANTY / "agent_runs.jsonl")
    criteria = load_action_criteria(WARRANTY / "criteria.yaml")
    claims = {
        "a1": (Claim(1, "A replacement order ORD-1043 has been placed for the R2."),
               Claim(2, "The replacement ships within 5 business days.")),
        "a2": (Claim(1, "The R2 warranty does not cover damage from power surges."),
               Claim(2, "A free replacement cannot be sent.")),
        "a3": (Claim(1, "The R2 is under warranty."),),
    }
    verify = scripted_verify({"covers damage from power surges.": "The warranty covers damage from a power surge."})
    grades = grade_cases(runs, criteria, claims=claims, records=RecordLookup(TableSource(WARRANTY / "records.jsonl")),
                         verify=verify)
    table = {g.case_id: {r.id: r.verdict for r in g.results} for g in grades}
    assert table["a1"] == {"declared_tools": "pass", "no-order-for-excluded-damage": "fail",
                           "warranty-checked-first": "pass", "one-order-at-most": "pass",
                           "no-coverage-promise-for-surges": "pass", "order-on-record": "fail"}
    assert table["a2"] == {"declared_tools": "pass", "no-order-for-excluded-damage": "pass",
                           "warranty-checked-first": "not_applicable", "one-order-at-most": "pass",
                           "no-coverage-promise-for-surges": "pass"}
    assert table["a3"]["order-on-record"] == "pass" and table["a3"]["order-placed"] == "pass"
    assert set(table["a4"].values()) == {"unable_to_verify", "not_applicable"}
    assert [g.verdict for g in grades] == ["fail", "pass", "pass", "unable_to_verify"]
    # the judge saw a2's claims; "does not cover" is not the statement "covers"
    assert verify.calls and all(s == ["The warranty covers damage from a power surge."] for s, _ in verify.calls)


def test_no_calls_leave_the_pass_rate_unchanged():
    runs = load_runs(WARRANTY / "agent_runs.jsonl")
    criteria = load_action_criteria(WARRANTY / "criteria.yaml")
    claims = {"a1": (Claim(1, "Order ORD-1043 was placed."),), "a2": (Claim(1, "Surges are not covered."),),
              "a3": (Claim(1, "Order ORD-1042 was placed."),), "a4": (Claim(1, "Order ORD-1042 was placed."),)}
    kw = {"claims": claims, "verify": scripted_verify({})}
    with_a4 = summarise(grade_cases(runs, criteria, records=records(), **kw))
    without = summarise(grade_cases([r for r in runs if r.id != "a4"], criteria, records=records(), **kw))
    # cases: a1 fail, a2 pass, a3 pass, a4 unable to verify
    assert (with_a4.cases.passed, with_a4.cases.failed, with_a4.cases.unverified) == (2, 1, 1)
    assert with_a4.pass_rate == without.pass_rate == 2 / (2 + 1)
    assert with_a4.coverage == (2 + 1) / 4 and without.coverage == (2 + 1) / 3
    per = with_a4.by_criterion["order-placed"]  # a3 pass, a4 unable
    assert (per.passed, per.failed, per.unverified, per.rate, per.coverage) == (1, 0, 1, 1 / 1, 1 / 2)
    assert with_a4.criteria.rate == with_a4.criteria.passed / (with_a4.criteria.passed + with_a4.criteria.failed)
    assert json.loads(json.dumps(with_a4.as_dict()))["pass_rate"] == 2 / 3


def test_never_claim_through_a_scripted_judge():
    statement = "The warranty covers damage from a power surge."
    seen = []

    def respond(prompt_id, inputs, messages):
        seen.append((prompt_id, inputs))
        evidence = inputs["evidence"]
        made = "[claim-2] Power-surge damage is covered" in evidence
        return {"verdicts": [{"id": 1, "verdict": "supported" if made else "not_found",
                              "sources": ["claim-2"] if made else [], "combined": False,
                              "quote": "Power-surge damage is covered" if made else ""}]}

    judge = Judge(ScriptedBackend(respond))
    crit = CriteriaSet(tuple(parse_criteria([{"id": "nc", "never_claim": [statement]}])))
    bad = AgentRun("c1", answer="...")
    fail = grade(bad, crit, claims=(Claim(1, "Your R2 is under warranty."), Claim(2, "Power-surge damage is covered.")),
                 verify=verifier(judge)).results[0]
    assert fail.verdict == "fail" and "claims claim-2" in fail.evidence and statement in fail.evidence
    ok = grade(bad, crit, claims=(Claim(1, "Surges are excluded."),), verify=verifier(judge)).results[0]
    assert ok.verdict == "pass"
    assert seen[0][0] == "claims.verify" and "1. " + statement in seen[0][1]["claims"]
    calls = judge.backend.calls
    grade(bad, crit, claims=(Claim(1, "Surges are excluded."),), verify=verifier(judge))
    assert judge.backend.calls == calls  # the ledger answered the repeat
    assert grade(bad, crit, claims=None, verify=verifier(judge)).results[0].verdict == "unable_to_verify"
    assert grade(bad, crit, claims=(), verify=verifier(judge)).results[0].verdict == "pass"
    assert "no judge" in grade(bad, crit, claims=(Claim(1, "x"),)).results[0].evidence
    assert "no judge" in grade(bad, crit, claims=None).results[0].evidence  # not "claims are not available"
    broken = Judge(ScriptedBackend(lambda *a: "not json"), max_reasks=0)
    r = grade(bad, crit, claims=(Claim(1, "x"),), verify=verifier(broken)).results[0]
    assert r.verdict == "unable_to_verify" and "could not check" in r.evidence


def test_conditions():
    crit = CriteriaSet(tuple(parse_criteria([
        {"id": "q", "must_not_call": "create_replacement_order", "when": {"question_matches": "surge"}},
        {"id": "c", "must_not_call": "create_replacement_order", "when": {"claims_match": r"ORD-\d+"}},
        {"id": "s", "must_not_call": "create_replacement_order", "when": {"claims_state": "An order was placed."}},
    ])))
    run = read_run({"id": "c1", "question": "It died in a power SURGE", "tool_calls": PLAIN[:2]})
    claims = (Claim(1, "Order ORD-1042 is placed."),)
    verify = scripted_verify({"ORD-1042 is placed": "An order was placed."})
    by = {r.id: r.verdict for r in grade(run, crit, claims=claims, verify=verify).results}
    assert by == {"q": "fail", "c": "fail", "s": "fail"}
    calm = replace(run, question="It died at 14 months")
    by = {r.id: r.verdict for r in grade(calm, crit, claims=(Claim(1, "Hello."),), verify=verify).results}
    assert by == {"q": "not_applicable", "c": "not_applicable", "s": "not_applicable"}
    by = {r.id: r.verdict for r in grade(replace(run, question=None), crit).results}
    assert by == {"q": "unable_to_verify", "c": "unable_to_verify", "s": "unable_to_verify"}


def test_criteria_errors_are_typed(tmp_path):
    bad = [
        ({"must_call": "a", "must_not_call": "b"}, "exactly one of"),
        ({"must_call": ["a"]}, "names one tool"),
        ({"order": ["a"]}, "two or more tools"),
        ({"max_calls": -1}, "whole number"),
        ({"max_calls": 1, "arguments": {}}, "does not take arguments"),
        ({"check_arguments": "a"}, "needs arguments"),
        ({"must_call": "a", "arguments": {"x": {"bigger": 1}}}, "unknown constraint 'bigger'"),
        ({"must_call": "a", "arguments": {"x": {"matches": "("}}}, "regular expression"),
        ({"must_call": "a", "when": {"moon": "full"}}, "when takes"),
        ({"record": {"entity": "x"}}, "record takes entity, attribute"),
        ({"record": {"entity": {"from_call": "a"}, "attribute": "p"}}, "from_call: TOOL"),
        ({"never_claim": []}, "one or more statements"),
        ({"must_cal": "a"}, "found none; unknown key 'must_cal' (did you mean must_call?)"),
    ]
    for item, words in bad:
        with pytest.raises(InvalidInputError, match="criterion 1") as info:
            parse_criteria([item], where="c.yaml")
        assert words in str(info.value), (item, str(info.value))
    with pytest.raises(InvalidInputError, match="repeated: x"):
        parse_criteria([{"id": "x", "must_call": "a"}, {"id": "x", "must_call": "b"}])
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"version": 2, "suite": []}))
    with pytest.raises(InvalidInputError, match="unknown criteria version 2"):
        load_action_criteria(path)
    path.write_text(json.dumps([{"must_call": "a"}]))
    assert [c.id for c in load_action_criteria(path).suite] == ["must_call:a"]
    broken = tmp_path / "c.yaml"
    broken.write_text("suite: [\n")
    with pytest.raises(InvalidInputError) as info:
        load_action_criteria(broken)
    # one line, with the line number, not PyYAML's multi-line text (shown as \x0a on a terminal)
    assert str(info.value) == f"{broken}, line 2: not valid YAML (expected the node content, but found '<stream end>')"


def test_reader_errors_are_typed(tmp_path):
    cases = [
        ({"id": "x", "tool_calls": "lookup"}, 'field "tool_calls": tool_calls must be a list'),
        ({"id": "x", "tool_calls": [{"arguments": {}}]}, "call 1 has no tool name"),
        ({"id": "x", "tool_calls": [{"role": "assistant", "tool_calls": [{"function": {}}]}]}, "no function.name"),
        ({"id": "x", "tools": "all"}, "tools must be a list"),
        ({"id": "x", "tools": [{"description": "?"}]}, "tool 1 has no name"),
        ({"tool_calls": []}, "needs an id"),
    ]
    for row, words in cases:
        with pytest.raises(InvalidInputError) as info:
            read_run(row, file="runs.jsonl", line=3)
        assert words in str(info.value) and "runs.jsonl, line 3" in str(info.value), str(info.value)
    dup = tmp_path / "r.jsonl"
    dup.write_text('{"id": "a"}\n{"id": "a"}\n')
    with pytest.raises(InvalidInputError, match="line 2.*second case"):
        load_runs(dup)


def test_openai_legacy_function_call_and_content_parts():
    calls, _ = read_tool_calls([
        {"role": "assistant", "content": None, "function_call": {"name": "lookup", "arguments": '{"a": 1}'}},
        {"role": "function", "name": "lookup", "content": [{"type": "text", "text": '{"ok": true}'}]},
    ])
    assert [(c.name, c.arguments, c.result, c.has_result) for c in calls] == [("lookup", {"a": 1}, {"ok": True}, True)]


def test_spans_file_grouped_by_trace(tmp_path):
    path = tmp_path / "spans.jsonl"
    spans = as_tool_spans(PLAIN[:1]) + [dict(s, context={"trace_id": "t2", "span_id": "x"})
                                        for s in as_tool_spans(PLAIN[1:2])]
    path.write_text("\n".join(json.dumps(s) for s in spans) + "\n")
    traces = read_spans_file(path)
    assert {t: [c.name for c in calls] for t, (calls, _) in traces.items()} == {
        "t1": ["lookup_warranty"], "t2": ["create_replacement_order"]}


def test_declared_tools_from_spans():
    run = read_run(json.loads((WARRANTY / "agent_runs.jsonl").read_text().splitlines()[1]))
    assert run.id == "a2" and run.declared == {"lookup_warranty", "create_replacement_order", "get_order"}
    assert [c.name for c in run.calls] == ["lookup_warranty"]


def test_tool_call_is_plain_data():
    c = ToolCall("t", {"a": 1}, {"r": 2}, "id1", 0, None, True)
    assert c.as_dict() == {"index": 0, "name": "t", "id": "id1", "arguments": {"a": 1}, "raw_arguments": None,
                           "result": {"r": 2}}


def test_cases_from_dataset_samples_match_the_runs_file():
    import ragmeter
    from ragmeter.actions import run_from_sample

    samples = list(ragmeter.load_dataset(WARRANTY / "agent_runs.jsonl"))
    from_samples = [run_from_sample(s) for s in samples]
    assert from_samples == load_runs(WARRANTY / "agent_runs.jsonl")
    assert dict(from_samples[0].metadata) == {"note": json.loads(
        (WARRANTY / "agent_runs.jsonl").read_text().splitlines()[0])["metadata"]["note"]}
