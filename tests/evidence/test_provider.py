"""The providers of evidence: the registry is consistent, and a provider module (with what it
imports: records, actions) loads only when a run needs its kind of evidence."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import ragmeter
from ragmeter.evidence import provider
from ragmeter.evidence.matrix import need_kind
from ragmeter.judges.prompts import load_prompt
from ragmeter.metrics import REGISTRY, JudgedSpec, make_measure

ROOT = Path(ragmeter.__file__).parent.parent.parent

RUN = """
import json, sys
import ragmeter
from ragmeter.judges import Judge, ScriptedBackend
from tests import seed_judge
data = ragmeter.load_dataset("examples/warranty/dataset.jsonl", corpus="examples/warranty/corpus.jsonl")
judge = Judge(ScriptedBackend(seed_judge.scripted))
means = ragmeter.evaluate(data, sys.argv[1].split(","), judge=judge).means()
print(json.dumps({"means": means, "modules": sorted(m for m in sys.modules if m.startswith("ragmeter."))}))
"""


def _run(metrics: str) -> dict:
    done = subprocess.run([sys.executable, "-c", RUN, metrics], capture_output=True, text=True, cwd=ROOT,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("metrics,providers", [("ndcg@5,precision@5", []),
                                               ("faithfulness", ["ragmeter.evidence.claims"])])
def test_a_run_loads_only_the_providers_and_sources_it_uses(metrics, providers):
    """A label-only run loads no provider; a faithfulness run the claims provider alone. Neither
    loads a module of ragmeter.records or ragmeter.actions (before the registry, every run
    imported 9 to 12 records modules, and a judged one 6 actions modules)."""
    doc = _run(metrics)
    modules = doc["modules"]
    assert not [m for m in modules if m.startswith(("ragmeter.records", "ragmeter.actions"))]
    kinds = set(provider.PROVIDERS.values())
    assert [m for m in modules if m.rsplit(".", 1)[-1] in kinds and m.startswith("ragmeter.evidence.")] == providers
    if providers:
        assert doc["means"]["faithfulness"] == pytest.approx(0.6)


def test_every_need_kind_has_a_provider_that_names_its_prompts():
    for kind in provider.PROVIDERS:
        cls = provider.provider_type(kind)
        assert kind in cls.prompts, kind
        for prompt_id in cls.prompts[kind]:
            assert load_prompt(prompt_id).id == prompt_id
        assert cls.reads <= set(provider.PROVIDERS), kind  # what it reads, someone provides
    for kind, module in provider.PROVIDERS.items():  # a provider fills exactly the kinds registered to it
        filled = set(provider.provider_type(kind).prompts)
        assert filled == {k for k, m in provider.PROVIDERS.items() if m == module}, module


def test_every_judged_metric_reads_needs_that_have_a_provider():
    for spec in REGISTRY.values():
        if isinstance(spec, JudgedSpec):
            measure = make_measure(spec.name)
            assert {need_kind(n) for n in spec.needs(measure)} <= set(provider.PROVIDERS), spec.name
            assert spec.prompts(measure), spec.name


def test_the_answer_reads_every_retrievals_chunks_a_retrieval_its_own():
    from ragmeter.core.sample import Chunk, Sample
    from ragmeter.evidence.claims import passages_for
    from ragmeter.evidence.provider import context_passages

    own = (Chunk("c", None, "Returns need a receipt."),)
    both = (Chunk("a", None, "Refunds take 5 days."), *own)
    s = Sample("t#2", question="q", retrieved=own, answer="x", answer_context=both)
    assert context_passages(s) == [("c", "Returns need a receipt.")]  # context metrics: this retrieval
    assert context_passages(s, answer=True) == [(c.id, c.text) for c in both]  # the answer: what it read
    assert passages_for(s, "context", answer=True) == [(c.id, c.text) for c in both]
    assert passages_for(s, "context") == [("c", "Returns need a receipt.")]  # reference claims: this retrieval
    plain = Sample("p", retrieved=own, answer="x")
    assert context_passages(plain, answer=True) == context_passages(plain)
