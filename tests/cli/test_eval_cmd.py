"""``ragmeter eval --judge`` end to end over the OpenAI wire protocol (test server on 127.0.0.1)."""

from __future__ import annotations

import json
import re
import socket
import sys
from pathlib import Path

import pytest

from ragmeter.judges.cost import usd
from ragmeter.runs import list_runs
from tests import judge_server
from tests.installed import need
from tests.records_servers import documents, start_records_server

METRICS = "faithfulness,context_recall,factual_correctness,answer_relevancy,context_relevance,recall@5"


@pytest.fixture
def server(seed_server):
    return seed_server


def test_eval_with_an_openai_compatible_judge(cli, warranty, server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-xyz")
    args = ["eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--only", "q1",
            "--metrics", METRICS, "--judge", "openai:judge-model", "--judge-base-url", server.url + "/v1",
            "--ledger", tmp_path / "ledger.sqlite"]
    out = cli(*args, "--format", "json")
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    means = {k: round(v["mean"], 2) for k, v in doc["metrics"].items()}
    assert means == {"faithfulness": 0.6, "context_recall": 0.8, "factual_correctness": 0.6,
                     "answer_relevancy": 1.0, "context_relevance": 0.5, "recall@5": 0.67}
    assert doc["judge"]["calls"] == server.count == 6  # extract + 4 verifications + sentences
    assert doc["metrics"]["faithfulness"]["provenance"]["judge"]["model"] == "judge-model"
    assert "sk-secret-xyz" not in out.stdout
    again = cli(*args)  # the table, from the ledger: no new call
    assert again.exit_code == 0 and server.count == 6
    assert "judge openai:judge-model: 0 calls (0.0 per sample)" in again.stdout


def test_dry_run_calls_nothing(cli, warranty, server, tmp_path):
    out = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--metrics", "faithfulness",
              "--judge", "openai:m", "--judge-base-url", server.url + "/v1", "--ledger", tmp_path / "l.sqlite",
              "--dry-run", "--format", "json")
    plan = json.loads(out.stdout)
    assert plan["calls"] == 2 and server.count == 0  # q1: extract + verify; q2-q6 have no answer: nothing


def test_auth_failure_stops_with_one_line(cli, warranty, server, tmp_path):
    server.queue({"status": 401})
    out = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--only", "q1",
              "--metrics", "faithfulness", "--judge", "openai:m", "--judge-base-url", server.url + "/v1",
              "--ledger", tmp_path / "l.sqlite")
    assert out.exit_code == 2 and "refused the credentials" in out.output and "Traceback" not in out.output


def test_cost_and_dollar_budget(cli, warranty, server, tmp_path):
    base = ["eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--only", "q1", "--metrics",
            "faithfulness", "--judge", "openai:m", "--judge-base-url", server.url + "/v1", "--ledger",
            tmp_path / "l.sqlite"]
    out = cli(*base, "--price-in", "1.0", "--price-out", "2.0")
    assert out.exit_code == 0 and ", about $0.00" in out.stdout
    assert cli(*base, "--budget-usd", "1").exit_code == 2  # prices are needed for a dollar budget
    # a model the bundled price snapshot holds needs no flag: at gpt-4o-mini's $0.60 per million output
    # tokens, the first call's reserved 2048 output tokens alone cost 2048 * 0.6 / 1e6 > $1e-9
    priced = [*base[:9], "openai:gpt-4o-mini", *base[10:13], tmp_path / "l3.sqlite"]
    assert cli(*priced, "--budget-usd", "0.000000001").exit_code == 2
    assert ", about $" in cli(*priced).stdout  # and the judge line prints dollars
    tiny = cli(*base[:-1], tmp_path / "l2.sqlite", "--price-in", "1000", "--price-out", "1000", "--budget-usd", "0.001")
    assert tiny.exit_code == 2 and "budget of $0.00" in tiny.output


S, C, N = "supported", "contradicted", "not_found"


def _claims_of(text: str) -> list[str]:
    return [c.strip().rstrip(".") + "." for c in re.split(r"(?<=\.)\s+", text.strip()) if c.strip()]


def _listing(user_text: str, head: str) -> list[tuple[int, str]]:
    part = user_text.split(head, 1)[1].split("\n\n", 1)[0]
    return [(int(m.group(1)), m.group(2)) for m in re.finditer(r"^(\d+)\. (.*)$", part, re.MULTILINE)]


# the facts a careful judge reads from each claim the test answers make
FACTS = {
    "costs $89": [("R2", "replacement_price", "$89", None)],
    "24-month warranty": [("R2", "warranty", "24", "months")],
    "R1 replacement costs $59": [("R1", "replacement_price", "59", "USD")],
    "ORD-9999 has shipped": [("ORD-9999", "status", "shipped", None)],
}


def respond(user_text: str, payload: dict) -> dict:
    """The warranty judge: claims are the answer's sentences; context verdicts follow the stale
    price list; the never-claim check finds the surge promise only where the answer makes it."""
    rf = payload.get("response_format", {})
    name = rf.get("json_schema", {}).get("name") if rf.get("type") == "json_schema" else payload["tools"][0]["name"]
    if name == "claims":
        answer = user_text.split("ANSWER:\n", 1)[1].split("\n\nREFERENCE ANSWER:", 1)[0]
        claims = [] if answer == "(not needed)" else _claims_of(answer)
        return {"claims": [{"id": i, "text": t, "addresses_question": True, "cites": []}
                           for i, t in enumerate(claims, start=1)], "declines": False, "reference_claims": []}
    if name == "verdicts":
        evidence = user_text.split("CLAIMS:\n", 1)[0]
        out = []
        for i, text in _listing(user_text, "CLAIMS:\n"):
            if re.search(r"\[claim-\d+\]", evidence):  # a never-claim statement against the answer's claims
                verdict, sources = (C, ["claim-1"]) if "does not cover" in evidence else (N, [])
            elif "$89" in text:
                verdict, sources = S, ["price-list-2025"]
            else:
                verdict, sources = N, []
            out.append({"id": i, "verdict": verdict, "sources": sources, "combined": False,
                        "quote": "the R2 costs $89" if sources == ["price-list-2025"] else ""})
        return {"verdicts": out}
    if name == "facts":
        facts = []
        for i, text in _listing(user_text, "ANSWER CLAIMS:\n"):
            for key, found in FACTS.items():
                if key in text:
                    facts += [{"claim_id": i, "entity": e, "attribute": a, "value": v, "unit": u}
                              for e, a, v, u in found]
        return {"facts": facts}
    raise ValueError(name)


@pytest.fixture
def judge():
    srv, state = judge_server.start(respond)
    yield state
    srv.shutdown()


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _stale_rows(warranty: Path) -> list[dict]:
    """s1 as shipped but without its given facts (the judge extracts them), and s2: two facts the
    records confirm and one about an order they do not hold."""
    s1 = json.loads((warranty / "stale_fact.jsonl").read_text())
    s1["metadata"].pop("facts")
    s2 = {"id": "s2", "question": "What about the R1 and my order?", "retrieved": ["warranty-r2", "warranty-r1"],
          "relevant": ["warranty-r2"],
          "answer": "The R2 has a 24-month warranty. An R1 replacement costs $59. Order ORD-9999 has shipped."}
    return [s1, s2]


def _doc(out) -> dict:
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def _values(doc: dict, metric: str) -> dict[str, object]:
    return {r["id"]: (r["metrics"][metric].get("value") if r["metrics"][metric]["status"] == "scored"
                      else r["metrics"][metric]["status"]) for r in doc["samples"]}


def test_stale_fact_through_the_judge_and_the_table(cli, warranty, judge, tmp_path, runs_dir):
    data = _write(tmp_path / "stale.jsonl", _stale_rows(warranty))
    args = ["eval", data, "--corpus", warranty / "corpus.jsonl", "-m", "faithfulness,record_accuracy,record_coverage",
            "--records", warranty / "records.jsonl", "--judge", "openai:m", "--judge-base-url", judge.url + "/v1",
            "--ledger", tmp_path / "ledger.sqlite"]
    doc = _doc(cli(*args, "--format", "json"))
    # s1: $89 stated, 99 USD on record: 0 / (0 + 1); s2: 24 months and 59 USD pass, ORD-9999 has no record
    assert _values(doc, "record_accuracy") == {"s1": 0 / (0 + 1), "s2": 2 / (2 + 0)}
    assert _values(doc, "record_coverage") == {"s1": 1 / 1, "s2": 2 / 3}
    assert doc["metrics"]["record_accuracy"]["mean"] == (0.0 + 1.0) / 2
    assert doc["metrics"]["record_coverage"]["mean"] == pytest.approx((1 + 2 / 3) / 2)
    assert _values(doc, "faithfulness") == {"s1": 1 / 1, "s2": 0 / 3}  # the stale answer is faithful
    facts = {r["id"]: r["evidence"]["facts"] for r in doc["samples"]}
    assert [f["verdict"] for f in facts["s2"]] == ["pass", "pass", "cannot_verify"]
    assert facts["s1"][0]["reason"] == "stated $89; the record holds 99 USD"
    prov = doc["metrics"]["record_accuracy"]["provenance"]["judge"]
    assert set(prov["prompts"]) == {"claims.extract", "facts.extract"} and prov["records"].startswith("table:")
    # s2: extract, verify (faithfulness), facts = 3 calls; s1 gives its answer's claims, so no extract
    # (issue 37: given claims are used as given): verify and facts = 2; a rerun asks nothing
    assert judge.count == 5
    again = _doc(cli(*args, "--format", "json"))["samples"]
    assert [(r["metrics"], r["evidence"]["facts"]) for r in again] == \
        [(r["metrics"], r["evidence"]["facts"]) for r in doc["samples"]] and judge.count == 5

    (run, *_) = list_runs(runs_dir)
    text = cli("diagnose", run.path).stdout
    assert 's1: stale_chunk\n    stale_chunk: claim 1 "An out-of-warranty replacement R2 costs $89." is supported by ' \
           'price-list-2025 ("the R2 costs $89"), but the record says replacement_price of R2 is 99 USD' in text
    assert "s2: stale_chunk" not in text  # its facts pass or cannot be verified: nothing stale
    html = tmp_path / "r.html"
    assert cli("report", run.path, "--html", html).exit_code == 0
    page = html.read_text()
    assert "record_accuracy" in page and "Facts against the records" in page
    assert "stated $89; the record holds 99 USD" in page
    # a floor on the new metric gates the run (mean 0.5 < 0.9), against itself as the baseline
    assert cli("gate", run.path, "--baseline", run.path, "--min", "record_accuracy=0.9").exit_code == 1
    assert cli("gate", run.path, "--baseline", run.path, "--min", "record_accuracy=0.5").exit_code == 0


def test_the_same_verdicts_through_an_http_records_server(cli, warranty, judge, tmp_path):
    server, state = start_records_server(documents(warranty / "records.jsonl"))
    try:
        data = _write(tmp_path / "stale.jsonl", _stale_rows(warranty))
        doc = _doc(cli("eval", data, "-m", "record_accuracy,record_coverage", "--records",
                       state.url + "/orders/{entity}", "--judge", "openai:m", "--judge-base-url", judge.url + "/v1",
                       "--ledger", tmp_path / "ledger.sqlite", "--format", "json",
                       "--corpus", warranty / "corpus.jsonl"))
    finally:
        server.shutdown()
    assert _values(doc, "record_accuracy") == {"s1": 0.0, "s2": 1.0}
    assert _values(doc, "record_coverage") == {"s1": 1.0, "s2": 2 / 3}
    assert state.violations == [] and {r["method"] for r in state.requests} == {"GET"}
    assert sorted({r["path"] for r in state.requests}) == ["/orders/ORD-9999", "/orders/R1", "/orders/R2"]


def test_no_records_source_is_not_computed_with_the_reason(cli, warranty, judge, tmp_path):
    data = _write(tmp_path / "stale.jsonl", _stale_rows(warranty))
    doc = _doc(cli("eval", data, "-m", "record_accuracy", "--judge", "openai:m", "--judge-base-url",
                   judge.url + "/v1", "--ledger", tmp_path / "l.sqlite", "--format", "json",
                   "--corpus", warranty / "corpus.jsonl"))
    cell = doc["samples"][0]["metrics"]["record_accuracy"]
    assert cell["status"] == "not_computed" and "needs a record source" in cell["reason"]
    assert judge.count == 0  # nothing is extracted for facts that cannot be checked


RECORDS_MODULE = '''
import time

def lookup(entity, attribute):
    if entity == "SLOW":
        time.sleep(5)
    if entity == "BOOM":
        raise RuntimeError("the records database is down")
    return {("R2", "replacement_price"): (99, "USD")}.get((entity, attribute))
'''


def test_a_callable_source_that_times_out_or_errors_fails_one_item(cli, tmp_path, monkeypatch):
    """Given facts, no judge, a Python callable: no network call at all; a lookup past
    --records-timeout or one that raises fails its sample, with the reason, and the run goes on."""
    (tmp_path / "myrecords.py").write_text(RECORDS_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("myrecords", None)

    def no_network(*args, **kwargs):
        raise AssertionError(f"network call: {args}")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)

    def row(sid, entity):
        return {"id": sid, "question": "q", "answer": "a", "retrieved": ["c"], "relevant": ["c"],
                "metadata": {"facts": [{"entity": entity, "attribute": "replacement_price", "value": "99 dollars"}]}}

    data = _write(tmp_path / "d.jsonl", [row("t1", "R2"), row("t2", "SLOW"), row("t3", "BOOM"), row("t4", "R9")])
    out = cli("eval", data, "-m", "record_accuracy,record_coverage", "--records", "python:myrecords:lookup",
              "--records-timeout", "0.5", "--judge", "none", "--format", "json", "--no-save")
    doc = _doc(out)
    acc = {r["id"]: r["metrics"]["record_accuracy"] for r in doc["samples"]}
    assert acc["t1"] == {**acc["t1"], "status": "scored", "value": 1.0}
    assert acc["t2"]["status"] == "failed" and "within 0.5 s" in acc["t2"]["error"]
    assert acc["t3"]["status"] == "failed" and "raised RuntimeError" in acc["t3"]["error"]
    assert acc["t4"]["status"] == "not_computed" and "no fact could be verified" in acc["t4"]["reason"]
    assert _values(doc, "record_coverage") == {"t1": 1.0, "t2": 0.0, "t3": 0.0, "t4": 0.0}
    summary = doc["metrics"]["record_accuracy"]
    assert (summary["mean"], summary["scored"], summary["failed"], summary["not_computed"]) == (1.0, 1, 2, 1)


def test_action_criteria_on_the_agent_runs(cli, warranty, judge, tmp_path, runs_dir):
    base = ["eval", warranty / "agent_runs.jsonl", "--action-criteria", warranty / "criteria.yaml", "--records",
            warranty / "records.jsonl", "-m",
            "action_pass_rate,action_pass_rate(criterion='no-order-for-excluded-damage')",
            "--format", "json"]
    # without a judge: a1 fails, a3 passes, a2 (never-claim needs the answer's claims) and a4 (no calls) unverified
    doc = _doc(cli(*base, "--judge", "none", "--no-save"))
    assert _values(doc, "action_pass_rate") == {"a1": 0.0, "a2": "not_computed", "a3": 1.0, "a4": "not_computed"}
    assert doc["metrics"]["action_pass_rate"]["mean"] == 1 / (1 + 1)  # pass rate over verified cases
    assert doc["metrics"]["action_pass_rate"]["scored"] / 4 == 2 / 4  # verification coverage
    one = "action_pass_rate(criterion='no-order-for-excluded-damage')"
    assert _values(doc, one) == {"a1": 0.0, "a2": 1.0, "a3": "not_computed", "a4": "not_computed"}
    # with a judge: a2's answer denies surge cover, so its never-claim criterion passes and a2 passes
    doc = _doc(cli(*base, "--judge", "openai:m", "--judge-base-url", judge.url + "/v1", "--ledger",
                   tmp_path / "l.sqlite"))
    assert _values(doc, "action_pass_rate") == {"a1": 0.0, "a2": 1.0, "a3": 1.0, "a4": "not_computed"}
    assert doc["metrics"]["action_pass_rate"]["mean"] == 2 / (2 + 1)
    grade = {r["id"]: r["evidence"]["actions"] for r in doc["samples"]}
    a1 = {c["id"]: c for c in grade["a1"]["criteria"]}
    assert a1["no-order-for-excluded-damage"]["verdict"] == "fail"
    assert "create_replacement_order" in a1["no-order-for-excluded-damage"]["evidence"]
    assert a1["order-on-record"]["verdict"] == "fail"  # ORD-1043 is not on record
    # only the answers whose criteria read claims are split: a1 and a2 (surge questions), then
    # one never-claim check each
    assert judge.count == 4
    (run,) = list_runs(runs_dir)
    html = tmp_path / "a.html"
    assert cli("report", run.path, "--html", html).exit_code == 0
    page = html.read_text()
    assert "Action criteria: fail" in page and "no-order-for-excluded-damage" in page
    assert cli("gate", run.path, "--baseline", run.path, "--min", "action_pass_rate=0.7").exit_code == 1
    assert cli("gate", run.path, "--baseline", run.path, "--min", "action_pass_rate=0.6").exit_code == 0


def test_diagnose_names_the_failed_action_criteria(cli, warranty, runs_dir):
    """a1 placed an order for an excluded power surge, and the order is not on record: diagnose
    names both criteria with their evidence (it said "no failure point found")."""
    out = cli("eval", warranty / "agent_runs.jsonl", "--action-criteria", warranty / "criteria.yaml", "--records",
              warranty / "records.jsonl", "-m", "action_pass_rate", "--judge", "none")
    assert out.exit_code == 0, out.output
    (run,) = list_runs(runs_dir)
    text = cli("diagnose", run.path).stdout
    a1 = text.split("a1: ", 1)[1].split("\na2: ", 1)[0]
    assert a1.startswith("failed_action\n    failed_action: no-order-for-excluded-damage (")
    assert "create_replacement_order(serial='R2-88213'" in a1 and "order-on-record (" in a1
    # a2's surge criterion needs a judge: unverified, not passed; a3 passed every criterion
    assert "a2: unable to verify: failed_action (nothing failed in what could be checked)" in text
    assert "a3: no failure point found" in text
    assert "not checked" not in text  # an agent run has no ranked list nor context: no retrieval check to miss
    assert "queries per failure point: failed_action 1" in text


def test_diagnose_says_none_when_no_query_has_a_failure_point():
    from ragmeter.analysis.diagnosis import QueryDiagnosis
    from ragmeter.report.terminal import diagnosis_text

    assert diagnosis_text([QueryDiagnosis("q1")]).splitlines()[-1] == "queries per failure point: none"


def test_report_escapes_what_the_records_and_calls_hold(cli, tmp_path, runs_dir):
    payload = "<script>alert(1)</script>"
    rows = [{"id": "x1", "question": "q", "answer": "a", "retrieved": ["c"], "relevant": ["c"],
             "tool_calls": [{"name": payload, "arguments": {}}], "tools": ["lookup"],
             "metadata": {"facts": [{"entity": payload, "attribute": "status", "value": payload}]}}]
    data = _write(tmp_path / "d.jsonl", rows)
    records = _write(tmp_path / "r.jsonl", [{"entity": payload, "attribute": "status", "value": "ok"}])
    out = cli("eval", data, "-m", "record_accuracy,action_pass_rate", "--records", records, "--judge", "none")
    assert out.exit_code == 0, out.output
    (run,) = list_runs(runs_dir)
    html = tmp_path / "x.html"
    assert cli("report", run.path, "--html", html).exit_code == 0
    page = html.read_text()
    assert payload not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_readme_second_commands_print_what_the_readme_says(cli, runs_dir):
    """The quickstart's two commands after the first one, from the repository root: the actions one as
    written (no judge), the records one without the local judge (faithfulness is then not
    computed; the HTTP judge test above gives it)."""
    from tests import manual
    from tests.conftest import ROOT

    readme = manual.text()
    shown = "    .venv/bin/ragmeter eval examples/warranty/"
    lines = list(dict.fromkeys(ln.strip() for ln in readme.splitlines() if ln.startswith(shown)))
    stale, actions = (ln.split()[1:] for ln in lines)
    assert stale[:2] == ["eval", "examples/warranty/stale_fact.jsonl"] and "--records" in stale
    assert actions[:2] == ["eval", "examples/warranty/agent_runs.jsonl"] and actions[-2:] == ["--judge", "none"]
    at_root = [str(ROOT / a) if a.startswith("examples/") else a for a in actions]
    out = cli(*at_root)
    assert out.exit_code == 0, out.output
    assert "mean   action pass rate 0.500" in out.stdout and "action pass rate 0.500 over the 2 cases" in readme
    out = cli(*[str(ROOT / a) if a.startswith("examples/") else a for a in stale], "--judge", "none")
    assert out.exit_code == 0, out.output
    assert "record accuracy 0.000 | record coverage 1.000" in out.stdout
    assert "faithfulness 1.000 and record accuracy 0.000" in readme


def test_block_streaming_and_dry_run(cli, warranty, judge, tmp_path):
    """--block gives the in-memory numbers (the source is reopened per block); --dry-run counts
    one facts.extract call per answered sample that has no given facts, an extraction call only
    where the answer's claims are not given, and calls nothing."""
    base = ["eval", warranty / "agent_runs.jsonl", "--action-criteria", warranty / "criteria.yaml", "--records",
            warranty / "records.jsonl", "-m", "action_pass_rate", "--judge", "none", "--format", "json"]
    whole = _doc(cli(*base, "--no-save"))
    streamed = _doc(cli(*base, "--block", "1"))
    assert streamed["metrics"]["action_pass_rate"]["mean"] == whole["metrics"]["action_pass_rate"]["mean"] == 0.5
    data = _write(tmp_path / "stale.jsonl", _stale_rows(warranty))
    out = cli("eval", data, "--corpus", warranty / "corpus.jsonl", "-m", "record_accuracy", "--records",
              warranty / "records.jsonl", "--judge", "openai:m", "--judge-base-url", judge.url + "/v1", "--ledger",
              tmp_path / "l.sqlite", "--dry-run", "--format", "json")
    assert out.exit_code == 0, out.output
    # facts x 2 samples, and extract for s2 only (s1 gives its answer's claims: no extraction call)
    assert json.loads(out.stdout)["calls"] == 2 + 1 and judge.count == 0


@pytest.mark.slow
def test_the_same_verdicts_through_an_mcp_records_tool(cli, warranty, judge, tmp_path):
    """`--records mcp:COMMAND#TOOL`: a stdio MCP server started for the run, only the named tool
    called (the server logs every tool call)."""
    import shlex

    need("mcp", "MCP sources need: pip install 'ragmeter[records]'")
    server = Path(__file__).parent.parent / "records_mcp_server.py"
    log = tmp_path / "calls.log"
    spec = "mcp:" + shlex.join([sys.executable, str(server), str(warranty / "records.jsonl"), str(log)]) + "#get_order"
    data = _write(tmp_path / "stale.jsonl", _stale_rows(warranty))
    doc = _doc(cli("eval", data, "-m", "record_accuracy,record_coverage", "--records", spec, "--judge", "openai:m",
                   "--judge-base-url", judge.url + "/v1", "--ledger", tmp_path / "l.sqlite", "--format", "json",
                   "--corpus", warranty / "corpus.jsonl", "--records-timeout", "20"))
    assert _values(doc, "record_accuracy") == {"s1": 0.0, "s2": 1.0}
    assert _values(doc, "record_coverage") == {"s1": 1.0, "s2": 2 / 3}
    assert set(log.read_text().split()) == {"get_order"}


def test_the_table_of_agent_runs_has_no_rank_columns(cli, warranty):
    out = cli("eval", warranty / "agent_runs.jsonl", "--action-criteria", warranty / "criteria.yaml", "-m",
              "action_pass_rate", "--judge", "none", "--no-save")
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines()[:2] == ["query  actions", "a1     0"]


def test_a_judge_that_refuses_fact_extraction_still_checks_given_facts(warranty, tmp_path):
    """A backend that refuses facts.extract (the local judge: not measured) leaves the samples
    whose facts are given scored, the others NotComputed with its reason, and asks nothing."""
    import ragmeter
    from ragmeter.judges import Judge, ScriptedBackend
    from ragmeter.records import RecordLookup, parse_source

    class Refusing(ScriptedBackend):
        def refuses(self, prompt_id: str) -> str | None:
            return "facts.extract has not been measured" if prompt_id == "facts.extract" else None

    rows = _stale_rows(warranty)
    given = json.loads((warranty / "stale_fact.jsonl").read_text())
    data = ragmeter.load_dataset(_write(tmp_path / "d.jsonl", [given, rows[1]]))
    judge = Judge(Refusing(lambda prompt_id, inputs, messages: pytest.fail(f"asked {prompt_id}")))
    r = ragmeter.evaluate(data, ["record_accuracy"], judge=judge,
                          records=RecordLookup(parse_source(str(warranty / "records.jsonl"))))
    assert r.outcome("record_accuracy", "s1").value == 0 / (0 + 1)
    s2 = r.outcome("record_accuracy", "s2")
    assert s2.status == "not_computed" and s2.reason == "facts.extract has not been measured"
    assert judge.stats.as_dict()["calls"] == 0


def test_dry_run_needs_no_api_key_and_writes_nothing(cli, warranty, runs_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    out = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "-m", "faithfulness",
              "--judge", "openai:gpt-4o-mini", "--dry-run", "--price-in", "0.15", "--price-out", "0.6",
              "--format", "json")
    assert out.exit_code == 0, out.output
    plan = json.loads(out.stdout)
    assert plan["calls"] == 2 and plan["calls_by_prompt"] == {"claims.extract": 1, "claims.verify": 1}
    assert plan["estimated_usd_at_most"] == round(usd(plan["estimated_input_tokens"], plan["max_output_tokens"],
                                                      0.15, 0.6), 6)
    assert not runs_dir.exists() and list(tmp_path.iterdir()) == []  # no ledger, no run directory
    table = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "-m", "faithfulness",
                "--judge", "anthropic:claude-x", "--dry-run", "--price-in", "1", "--price-out", "2")
    assert table.exit_code == 0, table.output
    assert table.stdout.startswith("dry run: 2 judge calls needed (none made)")
    assert "cost at most about $" in table.stdout and not runs_dir.exists()
    unpriced = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "-m", "faithfulness",
                   "--judge", "openai:my-own-model", "--dry-run")  # a model the price snapshot does not hold
    assert "cost: give --price-in and --price-out" in unpriced.stdout and not runs_dir.exists()


def test_dry_run_prices_a_known_model_without_price_flags(cli, warranty, runs_dir, monkeypatch):
    """Issue 40: `--dry-run --judge openai:gpt-4o-mini` prints dollars with no price flag, at the
    bundled snapshot's prices (gpt-4o-mini: $0.15 in, $0.60 out per million tokens, LiteLLM's map)."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    base = ["eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "-m", "faithfulness",
            "--judge", "openai:gpt-4o-mini", "--dry-run"]
    table = cli(*base)
    assert table.exit_code == 0, table.output
    assert "cost at most about $" in table.stdout and "give --price-in" not in table.stdout
    assert "$0.15 in / $0.6 out per million tokens (gpt-4o-mini, LiteLLM price map 2026-11-04)" in table.stdout
    plan = json.loads(cli(*base, "--format", "json").stdout)
    assert plan["estimated_usd_at_most"] == round((plan["estimated_input_tokens"] * 0.15
                                                   + plan["max_output_tokens"] * 0.6) / 1e6, 6) > 0
    flagged = json.loads(cli(*base, "--format", "json", "--price-out", "6").stdout)  # a flag overrides its side
    assert flagged["estimated_usd_at_most"] == round((plan["estimated_input_tokens"] * 0.15
                                                      + plan["max_output_tokens"] * 6) / 1e6, 6)
    assert "overridden by --price-in/--price-out" in flagged["prices"] and not runs_dir.exists()


def test_dry_run_still_skips_what_the_ledger_holds(cli, warranty, seed_server, tmp_path, monkeypatch):
    """The planning judge has the real judge's ledger keys: after a real run, nothing is left to plan."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    base = ["eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "-m", "faithfulness",
            "--judge", "openai:m", "--ledger", tmp_path / "l.sqlite"]
    assert cli(*base, "--judge-base-url", seed_server.url + "/v1").exit_code == 0
    monkeypatch.delenv("OPENAI_API_KEY")
    plan = json.loads(cli(*base, "--dry-run", "--format", "json").stdout)
    # the extraction is stored, and the verification is planned on its claims: stored too
    assert plan["calls_by_prompt"] == {} and plan["calls"] == 0 and seed_server.count == 2


@pytest.mark.parametrize("value", ["0", "-1"])
def test_block_below_one_is_a_usage_error(cli, warranty, value):
    out = cli("eval", warranty / "dataset.jsonl", "--block", value, "--no-save", "--judge", "none")
    assert out.exit_code == 2, out.output
    assert "--block" in out.output and "1 or more" in out.output


def test_k_of_ten_to_the_thirty_is_handled(cli, warranty):
    r = cli("eval", warranty / "dataset.jsonl", "--k", str(10 ** 30), "--no-save", "--judge", "none",
            "-m", "ndcg,precision,mrr")
    assert r.exit_code == 0, r.output
    assert "ranks 1-5 " in r.output and f"nDCG@{10 ** 30}" in r.output


def test_cli_embedder_option(cli, warranty):
    out = cli("eval", warranty / "dataset.jsonl", "-m", "semantic_similarity", "--no-save", "--format", "json")
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["samples"][0]["metrics"]["semantic_similarity"]["status"] == "scored"
    assert doc["metrics"]["semantic_similarity"]["provenance"]["embedder"]["backend"] == "onnx"
    bad = cli("eval", warranty / "dataset.jsonl", "-m", "semantic_similarity", "--no-save", "--embedder", "glove")
    assert bad.exit_code == 2 and "unknown embedder" in bad.output
