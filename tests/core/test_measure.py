"""``-m ndcg@0``: the message says how to score the whole list (it said "leave @k out", which
gives @5)."""

from __future__ import annotations

import pytest

import ragmeter
from ragmeter.core.errors import InvalidParameterError
from ragmeter.core.measure import split_measure_text


def test_k_0_names_the_way_to_the_whole_list(warranty):
    with pytest.raises(InvalidParameterError) as info:
        split_measure_text("ndcg@0")
    assert str(info.value) == ("ndcg: k must be >= 1, got 0 (without @k a measure is cut at the run's k, 5 by "
                               "default; for the whole list give --k 0, or k=None in Python)")
    # both halves of the message hold
    assert list(ragmeter.evaluate(warranty / "dataset.jsonl", "ndcg").means()) == ["ndcg@5"]
    assert list(ragmeter.evaluate(warranty / "dataset.jsonl", "ndcg", k=None).means()) == ["ndcg"]


def test_the_cli_k_0_scores_the_whole_list(cli, warranty):
    out = cli("eval", warranty / "dataset.jsonl", "-m", "ndcg", "--k", "0", "--no-save", "--format", "json")
    assert out.exit_code == 0 and '"ndcg"' in out.stdout and '"ndcg@5"' not in out.stdout
