"""Metrics of one's own (metrics/custom.py): defined in process or by an installed package's entry
point, scored, provenance-stamped, listed, compared and reported like a built-in one. The label
metric here is recall written by hand, so the built-in recall@k is its independent reference."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import ragmeter
from ragmeter import Chunk, Sample
from ragmeter.core.errors import RagmeterWarning
from ragmeter.judges import Judge, ScriptedBackend
from ragmeter.ledger import Ledger
from ragmeter.metrics import REGISTRY, Param, get_spec, registry
from ragmeter.metrics.custom import CustomMetricError, embedding_metric, judged_metric, label_metric, unregister

from .. import seed_judge

DEMO = "demo_recall"
PLUGIN = textwrap.dedent('''
    """A separate package's metric: recall written by hand, offered through ragmeter.metrics."""
    import numpy as np
    from ragmeter.metrics import label_metric

    @label_metric(definition="relevant chunks in the top k / relevant chunks labeled",
                  source="ragmeter's entry-point test", undefined="no relevant chunk labeled")
    def demo_recall(grades, labels):
        relevant = int((labels > 0).sum())
        return None if relevant == 0 else float(np.sum(grades > 0)) / relevant
''')


@pytest.fixture
def clean_registry():
    """Whatever a test defines or loads is gone afterwards (the entry points are read again)."""
    before = set(dict.keys(REGISTRY))
    yield
    for name in set(dict.keys(REGISTRY)) - before:
        unregister(name)
    if registry.ENTRY_POINTS in registry._loaded:
        registry._loaded.remove(registry.ENTRY_POINTS)


def _hand_recall(grades, labels):
    relevant = int((labels > 0).sum())
    return None if relevant == 0 else float(np.sum(grades > 0)) / relevant


def test_a_label_metric_in_process_equals_the_builtin_it_rewrites(warranty, clean_registry):
    label_metric("my_recall", definition="relevant in the top k / relevant labeled", source="a notebook",
                 undefined="no relevant chunk labeled")(_hand_recall)
    data = ragmeter.load_dataset(warranty / "dataset.jsonl")
    result = ragmeter.evaluate(data, ["my_recall@5", "recall@5", "my_recall@2", "recall@2"])
    for k in (5, 2):
        mine, builtin = result[f"my_recall@{k}"], result[f"recall@{k}"]
        assert [o.status for o in mine] == [o.status for o in builtin]
        assert [getattr(o, "value", None) for o in mine] == [getattr(o, "value", None) for o in builtin]
    q1 = result.outcome("my_recall@5", "q1")
    assert q1.value == 2 / 3  # warranty-r2 and claim-steps of 3 relevant in the top 5
    prov = q1.provenance.as_dict()
    assert prov["metric_version"] == 1 and prov["metric_origin"].endswith("_hand_recall")
    assert "metric_origin" not in result.outcome("recall@5", "q1").provenance.as_dict()  # built-ins: unchanged
    assert get_spec("my_recall").params["view"].default == "retrieved"  # --view works as for the built-ins


def test_none_is_not_computed_and_a_bad_value_names_the_metric_and_sample(clean_registry):
    data = [Sample("a", retrieved=(Chunk("x"),), relevance={"x": 1}), Sample("b", retrieved=(Chunk("x"),))]
    label_metric("half_or_none", definition="0.5 where labeled", source="test",
                 undefined="nothing labeled")(lambda grades, labels: 0.5 if len(labels) else None)
    out = ragmeter.evaluate(data, ["half_or_none@5"])
    assert out.outcome("half_or_none@5", "a").value == 0.5
    assert out.outcome("half_or_none@5", "b").status == "not_computed"
    for bad in (float("nan"), 1.5, "high"):
        label_metric("broken", definition="d", source="s")(lambda grades, labels, v=bad: v)
        with pytest.raises(CustomMetricError, match=r"metric 'broken' .* for sample #1"):
            ragmeter.evaluate(data[:1], ["broken@5"])


def test_names_are_checked_and_a_notebook_cell_run_twice_replaces(clean_registry):
    with pytest.raises(CustomMetricError, match="taken by the built-in metric 'ndcg'"):
        label_metric("ndcg", definition="d", source="s")(lambda g, labels: 0.0)
    with pytest.raises(CustomMetricError, match="taken by the built-in metric 'reciprocal_rank'"):
        label_metric("mine", aliases=("mrr",), definition="d", source="s")(lambda g, labels: 0.0)
    with pytest.raises(CustomMetricError, match="definition"):
        label_metric("mine", definition="", source="s")(lambda g, labels: 0.0)

    def cell(value):
        def twice(grades, labels):
            return value
        return label_metric(definition="d", source="s")(twice)

    cell(0.25)
    cell(0.75)  # the same origin (module and name) defines it again: replaced, not refused
    assert ragmeter.evaluate([Sample("a", retrieved=(Chunk("x"),), relevance={"x": 1})],
                             ["twice@5"]).outcome("twice@5", "a").value == 0.75


def test_params_direction_and_range_travel_with_the_metric(clean_registry):
    @label_metric(definition="rank of the first chunk with grade >= rel", source="test", range=(1, 1000),
                  higher_is_better=False, params={"rel": Param(int, 1, ge=1)}, accepts_k=False)
    def first_rank(grades, labels, rel):
        hits = np.flatnonzero(grades >= rel)
        return None if len(hits) == 0 else float(hits[0] + 1)

    data = [Sample("a", retrieved=(Chunk("x"), Chunk("y")), relevance={"x": 1, "y": 2})]
    result = ragmeter.evaluate(data, ["first_rank", "first_rank(rel=2)"])
    assert result.outcome("first_rank", "a").value == 1 and result.outcome("first_rank(rel=2)", "a").value == 2
    assert get_spec("first_rank").higher_is_better is False and get_spec("first_rank").range == (1.0, 1000.0)


def test_an_embedding_metric_gets_the_runs_embedder(clean_registry):
    @embedding_metric(definition="cos(e(answer), e(question))", source="test", range=(-1, 1))
    def answer_on_topic(sample, embedder):
        if not sample.answer or not sample.question:
            return None
        a, q = embedder.encode([sample.answer, sample.question])
        return float(a @ q)

    def letters(texts):  # the HTTP test server's stand-in model: letter counts
        return [[t.lower().count(c) + 0.01 for c in "abcdefghijklmnopqrstuvwxyz"] for t in texts]

    data = [Sample("a", question="abc", answer="abd"), Sample("b", question="q")]
    out = ragmeter.evaluate(data, ["answer_on_topic"], embedder=letters)
    a, q = np.array(letters(["abd", "abc"]))
    assert out.outcome("answer_on_topic", "a").value == pytest.approx(a @ q / np.linalg.norm(a) / np.linalg.norm(q))
    assert out.outcome("answer_on_topic", "b").status == "not_computed"
    assert out.outcome("answer_on_topic", "a").provenance.embedder["backend"] == "callable"


def test_a_judged_metric_reads_the_shared_evidence_with_no_call_of_its_own(warranty, clean_registry):
    @judged_metric(evidence={"answer_claims", "answer@context"}, source="test",
                   definition="answer claims the context does not mention / answer claims")
    def unmentioned(evidence, sample):
        claims = evidence.answer_claims
        if not isinstance(claims, tuple) or not claims:
            return None
        verdicts = {v.claim: v.verdict for v in evidence.verdicts["answer@context"]}
        return sum(verdicts.get(c.id) == "not_found" for c in claims) / len(claims)

    data = [s for s in ragmeter.load_dataset(warranty / "dataset.jsonl", corpus=warranty / "corpus.jsonl").samples
            if s.id == "q1"]
    backend = ScriptedBackend(seed_judge.scripted)
    both = ragmeter.evaluate(data, ["faithfulness", "unmentioned"], judge=Judge(backend, ledger=Ledger(":memory:")))
    assert both.outcome("unmentioned", "q1").value == 1 / 5  # the seed's q1: "Shipping is free." not found
    assert both.outcome("faithfulness", "q1").value == 3 / 5
    alone = ScriptedBackend(seed_judge.scripted)
    ragmeter.evaluate(data, ["faithfulness"], judge=Judge(alone, ledger=Ledger(":memory:")))
    assert backend.calls == alone.calls == 2  # one extraction and one verification, shared
    judge = both.outcome("unmentioned", "q1").provenance.judge
    assert set(judge["prompts"]) == {"claims.extract", "claims.verify"}
    with pytest.raises(CustomMetricError, match="needs evidence among"):
        judged_metric(evidence={"vibes"}, definition="d", source="s")


def _plugin(root: Path) -> Path:
    """A separate package, installed the way pip leaves one: its module and a .dist-info with the
    ``ragmeter.metrics`` entry point, in a folder put on sys.path."""
    root.mkdir()
    (root / "ragmeter_demo_metrics.py").write_text(PLUGIN)
    info = root / "ragmeter_demo_metrics-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ragmeter-demo-metrics\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[ragmeter.metrics]\ndemo = ragmeter_demo_metrics\n")
    return root


def test_an_installed_package_metric_is_listed_scored_compared_and_reported(cli, warranty, runs_dir, tmp_path,
                                                                            monkeypatch, clean_registry):
    monkeypatch.syspath_prepend(str(_plugin(tmp_path / "site")))
    monkeypatch.delitem(sys.modules, "ragmeter_demo_metrics", raising=False)
    listed = cli("metrics")
    assert listed.exit_code == 0 and f"{DEMO} (v1, custom)" in listed.stdout
    assert "relevant chunks in the top k / relevant chunks labeled" in listed.stdout
    assert "from: ragmeter-demo-metrics 0.1.0" in listed.stdout
    paths = []
    for name in ("a", "b"):
        out = cli("eval", warranty / "dataset.jsonl", "-m", f"{DEMO},recall", "--judge", "none", "--name", name)
        assert out.exit_code == 0, out.output
        paths.append(out.stdout.strip().splitlines()[-1].removeprefix("run saved: "))
    results = [json.loads(line) for line in (Path(paths[0]) / "results.jsonl").read_text().splitlines()]
    q1 = next(r["metrics"] for r in results if r["id"] == "q1")
    assert q1[f"{DEMO}@5"]["value"] == q1["recall@5"]["value"] == 2 / 3
    setup = json.loads((Path(paths[0]) / "setup.json").read_text())
    assert setup["metrics"][f"{DEMO}@5"]["metric_origin"].startswith("ragmeter-demo-metrics 0.1.0")
    compared = cli("compare", paths[0], paths[1], "--format", "json")
    assert compared.exit_code == 0, compared.output
    assert {m["metric"] for m in json.loads(compared.stdout)["metrics"]} == {f"{DEMO}@5", "recall@5"}
    html = tmp_path / "r.html"
    assert cli("report", paths[0], "--html", html).exit_code == 0
    assert f"{DEMO}@5" in html.read_text()


def test_a_broken_plugin_warns_and_the_rest_runs(tmp_path, monkeypatch, clean_registry):
    site = _plugin(tmp_path / "site")
    (site / "ragmeter_demo_metrics.py").write_text("raise RuntimeError('boom')\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "ragmeter_demo_metrics", raising=False)
    with pytest.warns(RagmeterWarning, match=r"ragmeter-demo-metrics 0.1.0 .* did not load: RuntimeError: boom"):
        registry.load_all()
    assert "ndcg" in REGISTRY and DEMO not in dict.keys(REGISTRY)


def _wheel(folder: Path) -> Path:
    """The package as a wheel, written by hand (a zip with its .dist-info and a hashed RECORD), so
    pip installs it with nothing to build and nothing to download."""
    import base64
    import hashlib
    import zipfile

    files = {"ragmeter_demo_metrics.py": PLUGIN,
             "ragmeter_demo_metrics-0.1.0.dist-info/METADATA":
                 "Metadata-Version: 2.1\nName: ragmeter-demo-metrics\nVersion: 0.1.0\n",
             "ragmeter_demo_metrics-0.1.0.dist-info/WHEEL":
                 "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
             "ragmeter_demo_metrics-0.1.0.dist-info/entry_points.txt":
                 "[ragmeter.metrics]\ndemo = ragmeter_demo_metrics\n"}
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    record.append("ragmeter_demo_metrics-0.1.0.dist-info/RECORD,,")
    path = folder / "ragmeter_demo_metrics-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
        z.writestr("ragmeter_demo_metrics-0.1.0.dist-info/RECORD", "\n".join(record) + "\n")
    return path


@pytest.mark.slow
def test_a_pip_installed_package_through_the_command_line(tmp_path, warranty):
    """The same package installed by pip from a wheel (--target, --no-index: nothing is
    downloaded), then the real `ragmeter` command in a subprocess."""
    wheel = _wheel(tmp_path)
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target",
                    str(target), str(wheel)], check=True, timeout=300)
    env = {"PYTHONPATH": str(target), "PATH": str(Path(sys.executable).parent), "HOME": str(tmp_path)}
    ragmeter_cmd = str(Path(sys.executable).parent / "ragmeter")
    listed = subprocess.run([ragmeter_cmd, "metrics"], env=env, capture_output=True, text=True, timeout=120)
    assert f"{DEMO} (v1, custom)" in listed.stdout, listed.stderr
    scored = subprocess.run([ragmeter_cmd, "eval", str(warranty / "dataset.jsonl"), "-m", DEMO, "--judge", "none",
                             "--no-save", "--format", "json"], env=env, capture_output=True, text=True, timeout=120)
    assert scored.returncode == 0, scored.stderr
    rows = {r["id"]: r["metrics"] for r in json.loads(scored.stdout)["samples"]}
    assert rows["q1"][f"{DEMO}@5"]["value"] == 2 / 3


def test_an_entry_point_may_name_specs_or_functions(clean_registry):
    from ragmeter.metrics import LabelSpec
    from ragmeter.metrics.batch import Computed
    from ragmeter.metrics.custom import register_entry

    spec = LabelSpec(name="always_half", version=2, family="custom", definition="0.5", source="test",
                     compute=lambda batch, m: Computed(np.full(batch.n, 0.5), np.zeros(batch.n, bool)))
    assert register_entry([spec], "pkg 1.0") == ["always_half"]
    assert get_spec("always_half").origin == "pkg 1.0" and get_spec("always_half").version == 2
    with pytest.raises(ragmeter.InvalidParameterError, match="point it at a module"):
        register_entry(42, "pkg 1.0")
