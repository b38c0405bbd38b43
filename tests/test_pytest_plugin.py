"""``ragmeter.pytest_plugin``: ragmeter's pytest plugin (entry point ``pytest11``): the ``assert_metrics``
and ``assert_sample`` fixtures, and one test per sample."""

from __future__ import annotations

import pytest

PLUGIN_TEST = """
def test_good(assert_metrics):
    assert_metrics(DATA, {"hit_rate@5": 0.8})

def test_bad(assert_metrics):
    assert_metrics(DATA, {"recall@5": 0.9, "ndcg@5": 0.5})
"""


@pytest.mark.slow
def test_pytest_plugin(pytester, warranty):
    pytester.makepyfile(f"DATA = {str(warranty / 'dataset.jsonl')!r}\n" + PLUGIN_TEST)
    result = pytester.runpytest()  # the plugin loads through its pytest11 entry point
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*recall@5: mean 0.778 < 0.9*", "*q5 * 0.000*", "*q1 * 0.667*"])


PER_SAMPLE_TEST = """
import pytest
import ragmeter
from ragmeter.testing import sample_ids

BARS = {"recall@5": 0.6, "hit_rate@5": 1}

@pytest.fixture(scope="session")
def result():
    global SCORED
    SCORED += 1
    return ragmeter.evaluate(ragmeter.load_dataset(DATA), list(BARS))

SCORED = 0

@pytest.mark.parametrize("sample_id", sample_ids(DATA))
def test_sample(result, sample_id, assert_sample):
    assert_sample(result, sample_id, BARS)

def test_scored_once():
    assert SCORED == 1
"""


@pytest.mark.slow
def test_one_test_per_sample(pytester, warranty):
    """Issue 40: a test per sample, parametrized from the dataset, on one evaluation; the warranty
    set's recall@5 is 2/3, 1, 1, 1, 0, 1 for q1..q6, so q5 alone misses the 0.6 floor."""
    pytester.makepyfile(f"DATA = {str(warranty / 'dataset.jsonl')!r}\n" + PER_SAMPLE_TEST)
    result = pytester.runpytest("-p", "no:randomly", "-v")
    result.assert_outcomes(passed=6, failed=1)
    result.stdout.fnmatch_lines(["*test_sample?q1? PASSED*", "*test_sample?q5? FAILED*",
                                 "*sample 'q5' missed its bar: recall@5 0.000 >= 0.600 FAILED; hit_rate@5 0.000 >= "
                                 "1.000 FAILED*"])


def test_a_sample_not_computed_skips_fails_or_passes_as_asked():
    import ragmeter
    from ragmeter import Chunk, Sample
    from ragmeter.testing import assert_sample

    r = ragmeter.evaluate([Sample("a", retrieved=(Chunk("x"),), relevance={"x": 1}), Sample("b")], ["recall@5"])
    assert_sample(r, "a", {"recall@5": 1.0})
    with pytest.raises(pytest.skip.Exception, match="sample 'b': recall@5 not computed"):
        assert_sample(r, "b", {"recall@5": 1.0})
    with pytest.raises(AssertionError, match="recall@5 not computed"):
        assert_sample(r, "b", {"recall@5": 1.0}, not_computed="fail")
    assert_sample(r, "b", {"recall@5": 1.0}, not_computed="pass")
