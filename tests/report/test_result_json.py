"""``eval --format json`` written in pieces (report/result_json.py): any number of rows a piece,
the characters of json.dumps(indent=2), a value's text made once per distinct value (minus zero
apart from zero), and cells that are not a finite score written whole."""

from __future__ import annotations

import json
from unittest.mock import patch

import numpy as np
import pytest

import ragmeter.report.result_json as result_json
from ragmeter.core.evaluation import EvaluationResult
from ragmeter.core.results import Provenance
from ragmeter.core.score_column import ScoreColumn
from ragmeter.metrics import parse_measure
from ragmeter.report.result_json import result_chunks, result_text


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
    with patch.object(result_json, "ROWS", rows):
        pieces = list(result_chunks(r))
        assert "".join(pieces) == expected == result_text(r)
    if rows == 1:
        assert len(pieces) == 2 + 5  # the head, a piece a row, the tail
