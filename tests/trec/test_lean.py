"""The plain-Python path (small files) and the Arrow/numpy path print the same bytes, for every
trec_eval measure and option, on generated qrels and runs (no trec_eval binary needed: the
binary checks both in tests/acceptance/test_trec_eval_binary.py); and the small-file path
imports neither numpy nor pyarrow."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.trec.errors import TrecInputError
from ragmeter.trec.evaluate import evaluate
from ragmeter.trec.lean import is_small
from ragmeter.trec.output import lines
from tests.conftest import TREC_REF

MEASURES = ["all_trec", "dcg", "ideal_dcg", "yaap", "relstring.4", "G.1=3,2=0.5", "ndcg_rel.0=1", "Rndcg.3=1,1=3",
            "rbp.p=0.6,2=5", "rbp_resid.p=0.3", "utility.1,-2,0.5,0.25", "ndcg.1=0.5", "unj.1,2"]


@st.composite
def files(draw):
    topics = draw(st.lists(st.sampled_from(["1", "2", "10", "b", "caf\u00e9"]), min_size=1, max_size=4, unique=True))
    qrels, run = [], []
    for t in topics:
        docs = [f"d{i}" for i in range(draw(st.integers(1, 12)))]
        for d in docs:
            if draw(st.integers(0, 3)):
                qrels.append(f"{t} 0 {d} {draw(st.sampled_from([-1, 0, 0, 1, 1, 2, 3]))}")
        if not any(line.startswith(f"{t} ") for line in qrels):
            qrels.append(f"{t} 0 {docs[0]} 1")
        for d in draw(st.lists(st.sampled_from(docs + ["u1", "u2"]), max_size=14, unique=True)):
            run.append(f"{t} Q0 {d} 0 {draw(st.sampled_from([0.5, 1.0, 2.0, 3.25]))} r")
    options = draw(st.fixed_dictionaries({
        "level": st.sampled_from([1, 1, 2, 0, -1]), "complete": st.booleans(), "judged_only": st.booleans(),
        "max_docs": st.sampled_from([None, None, 0, 1, 3]), "num_docs": st.sampled_from([0, 50])}))
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n", options


@pytest.mark.slow
@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(files())
def test_both_engines_print_the_same_bytes(tmp_path, case):
    qrels, run, options = case
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "r").write_text(run)
    printed = []
    for engine in ("python", "arrow"):
        try:
            result = evaluate(tmp_path / "q", tmp_path / "r", MEASURES, engine=engine, skip_missing=True, **options)
            printed.append("\n".join(lines(result, per_query=True)))
        except TrecInputError as exc:
            printed.append(f"exit {exc.exit_code}: {exc}")
    assert printed[0] == printed[1]


def test_small_files_take_the_plain_python_path(tmp_path):
    assert is_small(str(TREC_REF / "results.test"), str(TREC_REF / "qrels.test"))
    big = tmp_path / "big"
    with open(big, "wb") as f:
        f.truncate(3 << 20)
    assert not is_small(str(big), str(TREC_REF / "qrels.test"))


@pytest.mark.slow
def test_the_command_on_small_files_imports_neither_numpy_nor_pyarrow():
    code = ("import json, sys; sys.argv = ['ragmeter', 'trec', '-q', '-m', 'all_trec', sys.argv[1], sys.argv[2]]\n"
            "from ragmeter.cli.main import run\n"
            "try:\n    run()\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code, str(TREC_REF / "qrels.test"), str(TREC_REF / "results.test")],
                          capture_output=True, text=True, timeout=120, check=False)
    modules = json.loads(done.stderr)
    assert done.stdout.startswith("num_ret") and not [m for m in modules if m.split(".")[0] in ("numpy", "pyarrow")]
