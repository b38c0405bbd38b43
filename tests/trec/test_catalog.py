"""trec_eval's measure table and -m options (measures.c, meas_init.c)."""

from __future__ import annotations

import re
import subprocess

import pytest

from ragmeter.trec.catalog import NICKNAMES, ORDER, SPECS, parse_requests
from ragmeter.trec.errors import TrecMeasureError
from tests.conftest import SHARED


def names(*texts: str) -> list[str]:
    return [n for r in parse_requests(list(texts)) for n in r.names]


def test_every_measure_of_trec_eval_10_is_in_the_table():
    """measures.c's te_trec_measures, in its order (the source ships in the shared folder)."""
    tarball = SHARED / "reference" / "trec_eval-src" / "trec_eval-10.0-f425365.tar.gz"
    if not tarball.exists():
        pytest.skip(f"the trec_eval source is not here: {tarball} (the shared reference folder)")
    source = subprocess.run(["tar", "xzOf", str(tarball), "--wildcards", "*/measures.c"], capture_output=True,
                            text=True, check=True).stdout
    table = source[source.index("te_trec_measures[] = {"):source.index("int te_num_trec_measures")]
    assert re.findall(r"&te_meas_(\w+)", table) == ORDER
    for nickname, listed in NICKNAMES.items():
        assert all(n in SPECS for n in listed), nickname


def test_names_follow_trec_evals_formats():
    assert names("P.10,5") == ["P_5", "P_10"]
    assert names("iprec_at_recall..1,.5") == ["iprec_at_recall_0.10", "iprec_at_recall_0.50"]
    assert names("ndcg.1=3,2=9", "relstring.20", "utility.2,-1,0,0") == ["relstring_20", "utility_2,-1,0,0",
                                                                        "ndcg_1=3,2=9"]
    assert names("Rprec_mult.123456.5") == ["Rprec_mult_123456.5"]  # snprintf into 10 more bytes: "_123456.50" cut


def test_the_first_parameters_given_win_and_nicknames_expand():
    assert names("P.5", "P.10") == ["P_5"]
    assert names("set") == names(*NICKNAMES["set"])
    assert names("runid", "all_prefs")[:4] == ["runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful"]


def test_pair_parameters_are_checked_as_get_param_pairs_checks_them():
    assert parse_requests(["G.=3"])[0].values == (("", 3.0),)  # accepted by trec_eval; no level: ignored
    assert parse_requests(["rbp.p=0.8,2=1"])[0].gains == ((2, 1.0),)
    for bad in ["ndcg.1=2,", "ndcg.,1=2", "ndcg.1=2=3", "ndcg.abc", "ndcg.1=2,,3=4"]:
        with pytest.raises(TrecMeasureError, match="malformed pair") as refused:
            parse_requests([bad])
        assert refused.value.exit_code == 2


def test_a_measure_written_as_trec_eval_prints_it_is_refused_with_the_m_spelling():
    """Trial 2: ``-m P_5`` was refused with no hint; trec_eval refuses it too (exit 1), so the
    refusal stays and says what to write."""
    for printed, spelled in [("P_5", "P.5"), ("ndcg_cut_10", "ndcg_cut.10"), ("recall_100", "recall.100")]:
        with pytest.raises(TrecMeasureError, match=re.escape(f"did you mean '{spelled}'?")) as refused:
            parse_requests([printed])
        assert refused.value.exit_code == 1 and "illegal measure" in str(refused.value)
        assert parse_requests([spelled])[0].raw == spelled.split(".")[1]  # the hint is a measure it takes
    with pytest.raises(TrecMeasureError) as unknown:
        parse_requests(["mapp_5"])
    assert "did you mean" not in str(unknown.value)


def test_refusals_and_their_exit_status():
    for text, words, code in [("mapp", "illegal measure", 1), ("P.", "improper measure", 1),
                              ("P.5,5", "duplicate cutoffs", 2), ("P.0", "negative cutoff", 2)]:
        with pytest.raises(TrecMeasureError, match=words) as refused:
            parse_requests([text])
        assert refused.value.exit_code == code
