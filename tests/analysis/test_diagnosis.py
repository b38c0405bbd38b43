"""Diagnosis finds a run's metrics through the registry: a key that names the metric another
way (an alias, a spelled-out default) counts, one with other parameters does not."""

from __future__ import annotations

from ragmeter.analysis.diagnosis import diagnose_sample
from ragmeter.core.sample import Chunk, Sample


def _row(**values: float) -> dict:
    return {"id": "q", "metrics": {k: {"status": "scored", "value": v} for k, v in values.items()}}


SAMPLE = Sample("q", question="?", retrieved=[Chunk("a"), Chunk("b"), Chunk("c")], relevance={"c": 1})


def test_aliases_and_spelled_out_defaults_are_the_metric():
    d = diagnose_sample(SAMPLE, _row(**{"hit_rate@3": 1.0, "mrr@3": 1 / 3, "ndcg(gain='linear')@3": 0.5}))
    assert d.labels == ["buried"] and "nDCG@3 0.500" in d.findings[0].evidence
    assert "buried" not in d.not_checked


def test_a_variant_with_other_parameters_is_not_the_metric():
    d = diagnose_sample(SAMPLE, _row(**{"hit_rate@3": 1.0, "reciprocal_rank(granular=True)@3": 0.1}))
    assert d.not_checked["buried"] == "needs hit_rate@k and reciprocal_rank@k or ndcg@k"
    judged = diagnose_sample(SAMPLE, _row(**{"faithfulness(unsupported='pass')": 0.9, "context_recall": 0.9}))
    assert judged.not_checked["not_extracted"] == "needs faithfulness and context_recall"
