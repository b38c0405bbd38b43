"""``eval --format json`` written in pieces (report/result_json.py): any number of rows a piece,
the characters of json.dumps(indent=2), a value's text made once per distinct value (minus zero
apart from zero), and cells that are not a finite score written whole."""

from __future__ import annotations

import json
import math
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ragmeter.report.result_json as result_json_module
from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.results import Failed, NotComputed, Provenance, Score
from ragmeter.core.sample import Sample
from ragmeter.core.score_column import ScoreColumn
from ragmeter.engine.evaluate import evaluate
from ragmeter.io.dataset import load_dataset
from ragmeter.metrics import parse_measure
from ragmeter.report.result_json import result_chunks, result_json, result_text


def result(values: list[list[float]], codes: list[list[int]] | None = None) -> EvaluationResult:
    measures = tuple(parse_measure(m) for m in ("precision@3", "ndcg@3")[:len(values)])
    outcomes = {}
    for j, m in enumerate(measures):
        prov = Provenance(str(m), m.name, 1, {}, m.k, "retrieved", "0", "fp")
        c = None if codes is None else np.array(codes[j])
        outcomes[m] = ScoreColumn(np.array(values[j]), prov, c, ("why",) if c is not None else ())
    ids = [f"q{i}" for i in range(len(values[0]))]
    from ragmeter.core.sample import Sample

    return EvaluationResult(tuple(Sample(i) for i in ids), measures, outcomes, "fp", "d.jsonl")


@pytest.mark.parametrize("rows", [1, 2, 3, 1000])
@pytest.mark.parametrize("case", ["plain", "negative zero", "not finite", "not computed"])
def test_pieces_join_to_json_dumps(case: str, rows: int) -> None:
    values = [[0.5, 0.0, 1 / 3, 0.5, 1e-7], [0.0, -0.0, 0.25, 1.0, 0.0]]
    codes = None
    if case == "negative zero":
        values[0][1] = -0.0
    elif case == "not finite":
        values[1][2] = float("inf")
    elif case == "not computed":
        codes = [[-1, 0, -1, -1, 0], [-1, -1, -1, -1, -1]]
    r = result(values, codes)
    expected = json.dumps(r.to_dict(), indent=2, ensure_ascii=False)
    with patch.object(result_json_module, "ROWS", rows):
        pieces = list(result_chunks(r))
        assert "".join(pieces) == expected == result_text(r)
    if rows == 1:
        assert len(pieces) == 2 + 5  # the head, a piece a row, the tail


ids = st.text(alphabet=st.sampled_from("abc\\\"é\x00\u2028 "), min_size=1, max_size=4).filter(str.strip)


def _provenance(name: str) -> Provenance:
    return Provenance(metric=name, metric_name=name, metric_version=1, params={}, k=None, view="retrieved",
                      ragmeter_version="0")


values = st.one_of(st.floats(allow_infinity=False), st.integers(-2, 2))


outcomes = st.one_of(st.builds(Score, values, st.just(_provenance("m"))),
                     st.builds(NotComputed, st.text(max_size=4), st.just(_provenance("m"))),
                     st.builds(Failed, st.text(max_size=4), st.just(_provenance("m"))))


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning", "ignore::RuntimeWarning")
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(ids, outcomes, outcomes), min_size=0, max_size=5, unique_by=lambda t: t[0]))
def test_result_json_is_json_dumps_indented(rows):
    from ragmeter.metrics import parse_measure

    measures = (parse_measure("mrr@5"), parse_measure("ndcg@5"))
    result = EvaluationResult(tuple(Sample(i) for i, _, _ in rows), measures,
                              {measures[0]: tuple(a for _, a, _ in rows), measures[1]: tuple(b for _, _, b in rows)},
                              "f" * 16, None)
    expected = json.dumps(result.to_dict(), indent=2, ensure_ascii=False)
    assert result_text(result) == expected
    assert result_json(result.to_dict()) == expected


@pytest.mark.filterwarnings("ignore::ragmeter.core.errors.LowCoverageWarning", "ignore::RuntimeWarning")
def test_eval_format_json_prints_the_indented_document(cli, warranty):
    out = cli("eval", warranty / "dataset.jsonl", "--format", "json", "--no-save", "-m", "mrr,ndcg,faithfulness",
              "--judge", "none")
    assert out.exit_code == 0, out.output
    result = evaluate(load_dataset(warranty / "dataset.jsonl"), ["mrr", "ndcg", "faithfulness"])
    doc = result.to_dict()
    doc["dataset"]["path"] = str(warranty / "dataset.jsonl")
    assert out.output == json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    shown = json.loads(out.output)["metrics"]["reciprocal_rank@5"]["mean"]
    assert math.isclose(shown, result.means()["reciprocal_rank@5"])
