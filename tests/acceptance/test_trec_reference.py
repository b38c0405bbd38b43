"""trec_eval's own test suite: every value of every measure, byte for byte, by both engines.

The files in shared/reference/trec_eval/ are trec_eval's `test/` inputs and the outputs its
`make quicktest` diffs against (10.0; 9.0.8 in v9.0.8/), evaluated through the library by the
plain-Python engine and by the Arrow one (tests/acceptance/test_trec_eval_quicktest.py runs the
command line). trec_eval 9.0.8's all_trec has no rbp, rbp_resid nor unj (added in 10.0).
"""

from __future__ import annotations

import pytest

from ragmeter.trec import evaluate_trec
from ragmeter.trec.output import lines
from tests.conftest import TREC_REF

MEAS_PARAMS = ["iprec_at_recall..10,.20,.25,.75,.50", "P.5,7,3", "recall.20,2000", "Rprec_mult.5.0,0.2,0.35",
               "utility.2,-1,0,0", "11pt_avg..25,.5,.75", "ndcg.1=3,2=9,4=4.5", "ndcg_cut.10,20,23.4",
               "success.2,5,20"]

# (expected file, qrels, results, measures, options) as in trec_eval's Makefile quicktest
CASES = [
    ("out.test", "qrels.test", "results.test", ["official"], {}),
    ("out.test", "qrels.test.with-comments", "results.test", ["official"], {}),
    ("out.test.a", "qrels.test", "results.test", ["all_trec"], {}),
    ("out.test.aq", "qrels.test", "results.test", ["all_trec"], {"q": True}),
    ("out.test.aqc", "qrels.test", "results.trunc", ["all_trec"], {"q": True, "complete": True}),
    ("out.test.aqcM", "qrels.test", "results.trunc", ["all_trec"], {"q": True, "complete": True, "max_docs": 100}),
    ("out.test.aql", "qrels.rel_level", "results.test", ["all_trec", "relstring.20"], {"q": True, "level": 2}),
    ("out.test.meas_params", "qrels.test", "results.test", MEAS_PARAMS, {"q": True}),
]
V9_CASES = [(f"v9.0.8/{c[0]}", *c[1:]) for c in CASES if c[0] in ("out.test", "out.test.a", "out.test.aq",
                                                                     "out.test.aql", "out.test.meas_params")]


ADDED_IN_10 = ("rbp", "rbp_resid", "unj_")


def run_case(expected, qrels, results, measures, opts, rule, engine="auto"):
    q = opts.get("q", False)
    kw = {k: v for k, v in opts.items() if k != "q"}
    result = evaluate_trec(TREC_REF / qrels, TREC_REF / results, measures, iprec_rule=rule, engine=engine, **kw)
    got = list(lines(result, per_query=q))
    if rule == "v9":
        got = [line for line in got if not line.split()[0].startswith(ADDED_IN_10)]
    return got, (TREC_REF / expected).read_text().splitlines()


@pytest.mark.parametrize("engine", ["python", "arrow"])
@pytest.mark.parametrize("case", CASES + V9_CASES, ids=lambda c: f"{c[0]}:{c[1]}:{c[2]}")
def test_matches_trec_eval_output_exactly(case, engine):
    rule = "v9" if case[0].startswith("v9") else "v10"
    got, want = run_case(*case, rule, engine=engine)
    assert got == want
    assert len(want) >= 29  # a real comparison, not an empty one


def test_302_single_topic_iprec_rounding():
    """qrels-302/results-302 were added to trec_eval with the lround fix: v9 and v10 differ here."""
    v10 = evaluate_trec(TREC_REF / "qrels-302.test", TREC_REF / "results-302.test", ["iprec_at_recall"])
    v9 = evaluate_trec(TREC_REF / "qrels-302.test", TREC_REF / "results-302.test", ["iprec_at_recall"],
                       iprec_rule="v9")
    assert any(v10.mean(n) != v9.mean(n) for n in v10.names)


def test_the_vendored_files_are_the_shared_reference_byte_for_byte():
    """tests/data/trec_eval is a copy; the shared folder stays the source (and its README lists
    every file's SHA-256)."""
    import hashlib

    from tests.conftest import SHARED

    readme = (TREC_REF / "README.md").read_text()
    copied = [p for p in TREC_REF.rglob("*") if p.is_file() and p.name not in ("README.md", "SUBSET.md")]
    assert len(copied) >= 19
    for path in copied:
        name = path.relative_to(TREC_REF).as_posix()
        assert f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {name}" in readme, name
        source = SHARED / "reference" / "trec_eval" / name
        if source.exists():
            assert source.read_bytes() == path.read_bytes(), name
