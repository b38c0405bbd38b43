"""``ragmeter.core.score_column``: ``ScoreColumn``: one measure's outcomes over all samples, held as arrays."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.results import NotComputed, Provenance, Score
from ragmeter.core.sample import Sample
from ragmeter.core.score_column import ScoreColumn
from ragmeter.metrics import parse_measure


def column(values: list[float], codes: list[int] | None = None) -> ScoreColumn:
    prov = Provenance("m@5", "m", 1, {}, 5, "retrieved", "0", "fp")
    return ScoreColumn(np.array(values), prov, None if codes is None else np.array(codes), ("why", "other"))


@pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning",
                                        "ignore::ragmeter.core.errors.NothingRetrievedWarning")
def test_a_column_is_the_tuple_it_stands_for() -> None:
    col = column([0.25, 9.0, 1.0, -0.0], [-1, 1, -1, 0])
    prov = col.provenance
    tup = (Score(0.25, prov), NotComputed("other", prov), Score(1.0, prov), NotComputed("why", prov))
    assert col == tup and tup == col and not (col != tup) and col == column([0.25, 5.0, 1.0, 7.0], [-1, 1, -1, 0])
    assert col != tup[:3] and col != list(tup) and col != column([0.5, 9.0, 1.0, 0.0], [-1, 1, -1, 0])
    assert len(col) == 4 and tuple(col) == tup and list(reversed(col)) == list(reversed(tup))
    assert col[2] is col[2] and col[-4] is next(iter(col)) and list(col)[3] is col[3]  # built once, kept
    assert col[-1] == tup[-1] and col[1:3] == tup[1:3] and col[::-1] == tup[::-1] and col[np.int64(2)] == tup[2]
    with pytest.raises(IndexError):
        col[4]
    with pytest.raises(IndexError):
        col[-5]
    assert type(col[0].value) is float and col.value_list() == [0.25, None, 1.0, None]
    assert col.not_scored_reasons() == ["other", "why"] and col.scored_values().tolist() == [0.25, 1.0]
    assert col.index(tup[2]) == 2 and tup[3] in col and col.count(tup[0]) == 1
    assert pickle.loads(pickle.dumps(col)) == col
    assert repr(col).startswith("ScoreColumn(Score(value=0.25), NotComputed(reason='other'), Score(value=1.0), ...")
    with pytest.raises(ValueError):
        col.values[0] = 1.0  # immutable, as a tuple is
    with pytest.raises(ValueError):
        column([1.0], [2])


@pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning",
                                        "ignore::ragmeter.core.errors.NothingRetrievedWarning")
def test_a_result_keeps_the_column_and_reads_it() -> None:
    col = column([0.5, 0.0, 1.0], [-1, 0, -1])
    samples = tuple(Sample(f"q{i}") for i in range(3))
    m = parse_measure("mrr@5")
    r = EvaluationResult(samples, (m,), {m: col}, "fp")
    assert r.outcomes[m] is col and r["mrr"] is col
    assert r.summary(m).mean == 0.75 and r.summary(m).reasons == {"why": 1} and r.means() == {str(m): 0.75}
    assert r.outcome("mrr", "q2") == Score(1.0, col.provenance)
    frame = r.to_dataframe()
    assert frame.index.tolist() == ["q0", "q1", "q2"] and math.isnan(frame[str(m)].iloc[1])
    long = r.to_dataframe(long=True)
    assert long["status"].tolist() == ["scored", "not_computed", "scored"] and long["reason"].iloc[1] == "why"


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_mean_whose_sum_passes_the_largest_float_is_still_the_mean() -> None:
    """fsum raises "intermediate overflow" on two scores of 1e308 (a hypothesis example of the
    result-JSON test found it); the mean itself, 1e308, is a float, in a column and a summary alike."""
    from ragmeter.core.summary import summarize

    col = column([1e308, 1e308, 0.0], [-1, -1, 0])
    assert col.mean() == 1e308
    assert summarize("m", tuple(col)).mean == 1e308 == summarize("m", col).mean
