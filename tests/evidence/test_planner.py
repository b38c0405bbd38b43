"""The planner is the generic two-stage loop: a kind of evidence it has never heard of runs
through it once its provider is registered, with no change to the planner or the engine."""

from __future__ import annotations

import asyncio
import sys
import types

import pytest

from ragmeter.core.sample import Sample
from ragmeter.evidence import provider
from ragmeter.evidence.matrix import Evidence
from ragmeter.evidence.planner import agather_evidence, plan_calls, providers_for
from ragmeter.evidence.provider import EXTRACTION, ProviderBase, unavailable, value
from ragmeter.evidence.sources import Sources
from ragmeter.judges import Judge, JudgeRequest, ScriptedBackend, load_prompt, schemas

ECHO = "echo"


class Echo(ProviderBase):
    """Stage 1 asks whether the turn stands alone; stage 2 asks again only where it did not, and
    reads what stage 1 wrote (into the rubric's open dict, for the test's sake)."""

    prompts = {ECHO: ("turn.standalone",)}

    def __init__(self, needs, sources):
        super().__init__(needs, sources)
        self.prompt = load_prompt("turn.standalone")

    def requests(self, stage, sample, ev, wanted):
        if stage == EXTRACTION:
            return {"first": self._ask(sample, "first")}
        if ev.rubric.get("first") is False:
            return {"second": self._ask(sample, "second")}
        return {}

    def _ask(self, sample, which):
        return JudgeRequest(self.prompt, {"history": which, "question": sample.question or ""},
                            schemas.STANDALONE, "standalone")

    def read(self, ev, name, judgment):
        ev.rubric[name] = unavailable(judgment) or value(judgment)["standalone"]

    def finishes(self):
        return True

    async def finish(self, samples, evidence, judge):
        for ev in evidence:
            ev.rubric["finished"] = judge is not None


@pytest.fixture
def echo_registered(monkeypatch):
    module = types.ModuleType("ragmeter.evidence._echo")
    module.PROVIDER = Echo
    monkeypatch.setitem(sys.modules, "ragmeter.evidence._echo", module)
    monkeypatch.setitem(provider.PROVIDERS, ECHO, "_echo")


def _judge():
    return Judge(ScriptedBackend(lambda prompt_id, inputs, messages: {
        "standalone": inputs["question"].startswith("Is")}))


def test_a_new_kind_runs_through_the_two_stages(echo_registered):
    samples = [Sample("a", question="Is it?"), Sample("b", question="Why?")]
    sources = Sources(judge=_judge())
    evidence = asyncio.run(agather_evidence(samples, {ECHO}, sources))
    assert [ev.rubric for ev in evidence] == [{"first": True, "finished": True},
                                              {"first": False, "second": False, "finished": True}]
    assert [ev.calls for ev in evidence] == [1, 2]  # counted by the planner, per sample
    assert [h for _, h in sorted((p, i["history"]) for p, i in sources.judge.backend.seen)] == [
        "first", "first", "second"]
    plan = plan_calls(samples, {ECHO}, Sources(judge=_judge()))
    assert plan["calls_by_prompt"] == {"turn.standalone": 2}  # stage 2 of a dry run reads stand-ins only


def test_without_a_judge_nothing_is_asked_and_the_work_after_it_still_runs(echo_registered):
    sources = Sources()
    [echo] = providers_for({ECHO}, sources)
    assert isinstance(echo, Echo)
    evidence = asyncio.run(agather_evidence([Sample("a", question="Why?")], {ECHO}, sources))
    assert evidence == [Evidence(rubric={"finished": False})]


def test_a_dry_run_asks_no_fact_extraction_where_the_sample_gives_its_facts():
    """Facts written in ``metadata.facts`` are used as given (the run makes no call for them):
    the dry run counted a ``facts.extract`` call for them all the same."""
    from ragmeter.evidence.matrix import FACTS
    from ragmeter.records import RecordLookup, parse_source

    lookup = RecordLookup(parse_source("examples/warranty/records.jsonl"))
    given = Sample("given", question="Price?", answer="The R2 costs $89.", answer_claims=("The R2 costs $89.",),
                   metadata={"facts": [{"entity": "R2", "attribute": "replacement_price", "value": "$89"}]})
    extracted = Sample("extracted", question="Price?", answer="The R2 costs $89.",
                       answer_claims=("The R2 costs $89.",))
    judge = Judge(ScriptedBackend(lambda prompt_id, inputs, messages: {"facts": []}))
    plan = plan_calls([given, extracted], {FACTS}, Sources(judge=judge, records=lookup))
    assert plan["calls_by_prompt"]["facts.extract"] == 1  # the second sample's only


def _one_claim(prompt_id, inputs, messages):
    """A judge that extracts one claim, worded unlike the answer's sentences, and supports it."""
    if prompt_id == "claims.extract":
        return {"claims": [{"id": 1, "text": "The R2 warranty is 24 months", "addresses_question": True,
                            "cites": []}], "declines": False, "reference_claims": []}
    return {"verdicts": [{"id": 1, "verdict": "supported", "sources": ["c1"], "combined": False,
                          "quote": "24 months"}]}


def _judged_once(tmp_path):
    """A sample, and the ledger of a faithfulness run on it through :func:`_one_claim`."""
    import ragmeter
    from ragmeter.core.sample import Chunk
    from ragmeter.ledger import Ledger

    sample = Sample("q1", question="How long?", retrieved=(Chunk("c1", text="The R2 has 24 months."),),
                    answer="It is covered for two years. Ask us.")
    ledger = str(tmp_path / "ledger.sqlite")
    ran = ragmeter.evaluate([sample], ["faithfulness"], judge=Judge(ScriptedBackend(_one_claim), ledger=Ledger(ledger)))
    assert ran.outcome("faithfulness", "q1").value == 1.0
    return sample, ledger


def _needs(*metrics: str) -> set[str]:
    from ragmeter.engine.evaluate import resolve_measures

    return set().union(*(m.spec.needs(m) for m in resolve_measures(list(metrics), 5)))


def test_a_dry_run_after_a_run_plans_verification_on_the_stored_claims(tmp_path):
    """The trial: after a judged run, the dry run still counted a ``claims.verify`` call (its
    stand-in claims, the answer's sentences, are not what extraction gave); the run made none."""
    from ragmeter.ledger import Ledger

    sample, ledger = _judged_once(tmp_path)
    planning = Judge(ScriptedBackend(_one_claim), ledger=Ledger(ledger))
    stored = plan_calls([sample], _needs("faithfulness"), Sources(judge=planning))
    assert stored["calls_by_prompt"] == {} and "stand-in" not in stored["note"]  # nothing estimated on stand-ins
    fresh = Judge(ScriptedBackend(_one_claim), ledger=Ledger(str(tmp_path / "new.sqlite")))
    fresh_plan = plan_calls([sample], _needs("faithfulness"), Sources(judge=fresh))
    assert fresh_plan["calls_by_prompt"] == {"claims.extract": 1, "claims.verify": 1}
    assert fresh_plan["note"].startswith("verification calls are estimated with the answer's and reference's "
                                         "sentences as stand-in claims")


def test_a_dry_run_adding_context_relevance_still_finds_the_stored_claims(tmp_path):
    """The trial: after a faithfulness run, a dry run adding context_relevance listed the stored
    claims.verify as needed again (the extraction stage held context.relevance, not stored, so
    the claims were taken as not extracted); the run itself asked only context.relevance."""
    from ragmeter.ledger import Ledger

    sample, ledger = _judged_once(tmp_path)
    planning = Judge(ScriptedBackend(_one_claim), ledger=Ledger(ledger))
    plan = plan_calls([sample], _needs("faithfulness", "context_relevance"), Sources(judge=planning))
    assert plan["calls_by_prompt"] == {"context.relevance": 1}
    assert "stand-in" not in plan["note"]


def test_given_claims_make_no_extraction_call_and_the_dry_run_counts_none():
    """The trial: a sample giving both its answer's and its reference's claims still made a
    ``claims.extract`` call (11 s of an 18 s run), and the dry run counted it."""
    import ragmeter
    from ragmeter.core.sample import Chunk
    from ragmeter.engine.evaluate import resolve_measures

    def respond(prompt_id, inputs, messages):
        assert prompt_id == "claims.verify", prompt_id  # an extraction call fails the test
        n = inputs["claims"].count("\n") + 1
        return {"verdicts": [{"id": i, "verdict": "supported", "sources": ["c1"], "combined": False, "quote": ""}
                             for i in range(1, n + 1)]}

    sample = Sample("q1", question="How long?", retrieved=(Chunk("c1", text="The R2 has 24 months."),),
                    answer="It is covered for two years.", reference="24 months.",
                    answer_claims=("The R2 is covered for two years.",), reference_claims=("The R2 has 24 months.",))
    measures = resolve_measures(["faithfulness", "context_recall", "false_refusal"], 5)
    needs = set().union(*(m.spec.needs(m) for m in measures))
    plan = plan_calls([sample], needs, Sources(judge=Judge(ScriptedBackend(respond))))
    assert "claims.extract" not in plan["calls_by_prompt"]
    ran = ragmeter.evaluate([sample], ["faithfulness", "context_recall", "false_refusal"],
                            judge=Judge(ScriptedBackend(respond)))
    assert ran.outcome("faithfulness", "q1").value == 1.0 and ran.outcome("context_recall", "q1").value == 1.0
    refusal = ran.outcome("false_refusal", "q1")  # no call read the answer, so nothing marks a refusal
    assert refusal.status == "not_computed" and "claims were given" in refusal.reason


def test_the_progress_line_says_what_the_stage_asks():
    """A context-relevance-only run was labelled "extracting claims" (issue 37's trial)."""
    from ragmeter.evidence.planner import stage_label

    assert stage_label("extracting claims", ["context.relevance"] * 3) == "rating context sentences"
    both = stage_label("extracting claims", ["claims.extract", "rubric.score:tone"])
    assert both == "extracting claims, scoring rubrics"
    assert stage_label("verifying claims", ["claims.verify"]) == "verifying claims"
    assert stage_label("verifying claims", ["a.prompt.of.a.plugin"]) == "verifying claims"
