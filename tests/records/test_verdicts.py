"""``records/verdicts.py``: counts of verdicts, the pass rate and the verification coverage."""

from __future__ import annotations

import pytest

from ragmeter.records.verdicts import VerdictCounts, count


def test_rate_and_coverage_as_formulas():
    """rate = pass / (pass + fail); coverage = (pass + fail) / (pass + fail + unverified);
    not applicable counts in neither."""
    c = count(["pass", "pass", "fail", "cannot_verify", "unable_to_verify", "not_applicable"])
    assert (c.passed, c.failed, c.unverified, c.not_applicable) == (2, 1, 2, 1)
    assert c.rate == 2 / (2 + 1) and c.coverage == (2 + 1) / (2 + 1 + 2)
    assert c.as_dict() == {"pass": 2, "fail": 1, "unverified": 2, "not_applicable": 1, "rate": 2 / 3, "coverage": 3 / 5}


def test_nothing_verified_has_no_rate_and_counts_add():
    assert count(["cannot_verify"]).rate is None and count([]).coverage is None
    assert count(["pass"]) + count(["fail", "not_applicable"]) == VerdictCounts(1, 1, 0, 1)
    with pytest.raises(ValueError, match="unknown verdict 'maybe'"):
        count(["maybe"])
