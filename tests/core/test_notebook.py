"""Issue 18, proof: a notebook executed in a real Jupyter kernel (nbclient + ipykernel).

It loads a Ragas-style DataFrame (contexts as texts, no ids), runs a judged evaluate against
the HTTP test judge (the seed article's q1 verdicts) in a kernel whose event loop is running,
awaits ``aevaluate`` at the top level, and displays the result and the dataset. Before issue
18 the judged cell raised "asyncio.run() cannot be called from a running event loop", and the
DataFrame ended in AttributeError.
"""

from __future__ import annotations

import json
import sys

import pytest

from tests.conftest import WARRANTY
from tests.installed import need

nbformat = need("nbformat")
nbclient = need("nbclient")
need("ipykernel")

CELLS = [
    # 1: a Ragas-style DataFrame, the way a Ragas user has one
    """import json, pandas as pd, ragmeter
root = __import__("pathlib").Path(WARRANTY)
texts = {r["id"]: r["text"] for r in map(json.loads, (root / "corpus.jsonl").read_text().splitlines())}
rows = []
for r in map(json.loads, (root / "dataset.jsonl").read_text().splitlines()):
    rows.append({"user_input": r["question"], "retrieved_contexts": [texts[c] for c in r["retrieved"]],
                 "reference_contexts": [texts[c] for c in r["relevant"]], "response": r.get("answer")})
df = pd.DataFrame(rows)
len(df)""",
    # 2: a judged evaluate in a running event loop, displayed
    """result = ragmeter.evaluate(df, "faithfulness,precision@5,mrr", judge="openai:judge-model")
result""",
    # 3: the async API, awaited at the top level (the ledger answers: no new call)
    """again = await ragmeter.aevaluate(df, ["faithfulness"], judge="openai:judge-model")
print(json.dumps({"faithfulness": again.means()["faithfulness"], "calls": again.judge_stats["calls"],
                  "means": result.means()}))""",
    # 4: the dataset, displayed
    """ragmeter.load_dataset(df)""",
]


@pytest.fixture
def kernel_name(tmp_path, monkeypatch):
    """A kernel spec for this interpreter (so the kernel imports the ragmeter under test)."""
    spec = tmp_path / "jupyter" / "kernels" / "ragmeter-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "ragmeter test", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    return "ragmeter-test"


@pytest.mark.slow
def test_a_notebook_runs_a_judged_evaluation_on_a_ragas_dataframe(seed_server, kernel_name, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", seed_server.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("RAGMETER_RUNS_DIR", str(tmp_path / "runs"))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"WARRANTY = {str(WARRANTY)!r}")] + [nbformat.v4.new_code_cell(c)
                                                                               for c in CELLS]
    nbclient.NotebookClient(nb, timeout=180, kernel_name=kernel_name,
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [cell.outputs for cell in nb.cells]
    errors = [o for out in outputs for o in out if o.output_type == "error"]
    assert not errors, errors

    def data(cell: int, kind: str) -> list[str]:
        return [o.data[kind] for o in outputs[cell] if kind in o.get("data", {})]

    # the result cell: the short repr and the HTML table (means, intervals, coverage)
    (plain,) = [t for t in data(2, "text/plain") if t.startswith("EvaluationResult(")]
    assert plain.startswith("EvaluationResult(6 samples; faithfulness 0.600, precision@5 0.300") and len(plain) < 200
    (page,) = [h for h in data(2, "text/html") if "ragmeter:" in h]
    assert "95% interval" in page and "faithfulness" in page and "0.617" in page
    # progress showed in the notebook, one line per judge stage
    progress = " ".join(t for o in outputs[2] for t in [o.get("data", {}).get("text/plain", "")])
    assert "extracting claims: 1/1 (100%)" in progress and "verifying claims:" in progress, outputs[2]
    # the awaited call: the same number, every judgment from the ledger
    printed = json.loads("".join(o.text for o in outputs[3] if o.output_type == "stream" and o.name == "stdout"))
    assert printed["faithfulness"] == pytest.approx(3 / 5) and printed["calls"] == 0
    assert printed["means"]["precision@5"] == pytest.approx(0.3)
    assert printed["means"]["reciprocal_rank@5"] == pytest.approx(0.617, abs=5e-4)
    # the dataset cell: a short repr and an HTML table
    assert any("Dataset(6 samples" in t for t in data(4, "text/plain")) and data(4, "text/html")


def test_notebook_progress_updates_one_line_per_stage():
    from ragmeter.core.notebook import NotebookProgress, in_notebook

    shown: list[str] = []

    class Handle:
        def update(self, obj):
            shown.append(repr(obj))

    def display(obj, display_id):
        assert display_id is True
        shown.append(repr(obj))
        return Handle()

    now = iter(range(100))
    p = NotebookProgress(display, clock=lambda: float(next(now)))
    p.start("verifying claims", 2)
    p.advance(0)
    p.advance(1)
    assert shown[0].startswith("verifying claims: 0/2 (0%)") and shown[-1].startswith("verifying claims: 2/2 (100%)")
    assert not in_notebook()  # pytest is not a Jupyter kernel: no display is attempted here
