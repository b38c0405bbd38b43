"""``ragmeter.pytest_plugin``: ragmeter's pytest plugin (entry point ``pytest11``): the ``assert_metrics`` fixture."""

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
