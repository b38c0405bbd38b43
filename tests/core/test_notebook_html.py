"""``ragmeter.core.notebook_html``: Small HTML tables for notebooks (``_repr_html_``) and short texts for ``repr``."""

from __future__ import annotations

from ragmeter import evaluate
from tests.conftest import WARRANTY


def test_a_result_repr_is_short_and_its_html_a_table():
    r = evaluate(WARRANTY / "dataset.jsonl", "precision,recall,hit_rate,mrr,ndcg")
    text = repr(r)
    assert len(text) < 200, text
    assert text.startswith("EvaluationResult(6 samples; precision@5 0.300, recall@5 0.778")
    page = r._repr_html_()
    assert page.count("<tr>") == 1 + 5 and "95% interval" in page and "0.617" in page
    ten = evaluate(WARRANTY / "dataset.jsonl", "precision@1,precision@2,precision@3,recall@1,recall@2,recall@3,mrr")
    assert "+1 more" in repr(ten)
