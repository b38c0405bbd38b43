"""Z-scores (-Z): the conversion rules of convert_zscores.c, its binary search (one step past each
topic's measures), the summaries over z-scores, and trec_eval's expected output."""

from __future__ import annotations

import pytest

from ragmeter.trec.errors import TrecInputError
from ragmeter.trec.evaluate import evaluate
from ragmeter.trec.output import lines
from ragmeter.trec.result import TrecResult
from ragmeter.trec.zscores import MISSING, read_zscores, to_zscores, z
from tests.conftest import TREC_REF


def test_the_rules():
    assert z(0.7, (0.5, 0.1)) == (0.7 - 0.5) / 0.1
    assert z(0.5, (0.5, 0.0)) == 0.0 and z(0.6, (0.5, 0.0)) == MISSING and z(0.6, None) == MISSING


def test_the_search_reads_one_past_a_topics_measures(tmp_path):
    """convert_zscores.c searches [0, count] inclusive: a measure sorting after all of topic a's
    finds topic b's first line when it has that name."""
    (tmp_path / "z").write_text("b zz 0.9 1\na map 0.1 1\nb ndcg 0.3 1\n")
    table = read_zscores(str(tmp_path / "z"))
    assert table.find("a", "map") == (0.1, 1.0) and table.find("b", "zz") == (0.9, 1.0)
    assert table.find("a", "ndcg") == (0.3, 1.0)  # not a's: b's first line, one past a's only one
    assert table.find("a", "zz") is None and table.find("b", "zzz") is None and table.find("c", "map") is None


def test_summaries_are_taken_over_the_zscores(tmp_path):
    (tmp_path / "z").write_text("t1 map 0.5 0.25\nt2 map 0.5 0.25\nt1 num_ret 2 1\n")
    raw = TrecResult(["t1", "t2"], {"map": [0.75, 0.5], "num_ret": [3.0, 4.0], "gm_map": [0.5, 0.5]},
                     {"map": "float", "num_ret": "count", "gm_map": "gm", "num_q": "num_q"}, "r")
    converted = to_zscores(raw, read_zscores(str(tmp_path / "z")))
    assert converted.values("map") == [1.0, 0.0] and converted.mean("map") == 0.5
    assert converted.values("num_ret") == [1.0, MISSING] and converted.mean("num_ret") == 1.0 + MISSING
    assert converted.mean("num_q") == 2  # trec_eval keeps the count of topics
    assert list(lines(converted))[0:2] == ["Zmap                   \tall\t0.5000",
                                           "Znum_ret               \tall\t-999999.0000"]


def test_trec_evals_expected_output():
    r = evaluate(TREC_REF / "qrels.test", TREC_REF / "results.test", ["all_trec"], zscores=TREC_REF / "zscores_file")
    assert "".join(line + "\n" for line in lines(r, per_query=True)) == (TREC_REF / "out.test.aqZ").read_text()
    assert r.to_dict()["zscores"] is True and "zscores" not in evaluate(TREC_REF / "qrels.test",
                                                                        TREC_REF / "results.test").to_dict()


def test_a_file_it_cannot_read(tmp_path):
    with pytest.raises(TrecInputError) as refused:
        read_zscores(str(tmp_path / "missing"))
    assert refused.value.exit_code == 255  # trec_eval returns UNDEF from main
    (tmp_path / "z").write_text("t1 map x 1\n")
    with pytest.raises(TrecInputError, match="line 1.*mean 'x' is not a number"):
        read_zscores(str(tmp_path / "z"))
