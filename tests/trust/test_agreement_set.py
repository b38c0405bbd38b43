"""The agreement set's report: an accuracy over no answered claim is not computed (None), never 0."""

from __future__ import annotations

from ragmeter.trust.agreement_set import AgreementReport


def test_a_judge_that_answered_nothing_has_no_accuracy():
    report = AgreementReport(n=3, correct=0, failed=3,
                             rows=[{"case": "c1", "label": "supported", "predicted": None}] * 3)
    assert report.answered == 0 and report.accuracy is None and report.interval() is None
    assert report.as_dict()["accuracy"] is None and report.as_dict()["interval95"] is None


def test_an_answered_claim_counts():
    rows = [{"case": "c1", "label": "supported", "predicted": "supported"},
            {"case": "c2", "label": "supported", "predicted": "not_found"},
            {"case": "c2", "label": "contradicted", "predicted": None}]
    report = AgreementReport(n=3, correct=1, failed=1, rows=rows)
    assert report.accuracy == 0.5
    assert report.as_dict()["accuracy"] == 0.5 and len(report.as_dict()["interval95"]) == 2
