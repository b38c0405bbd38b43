"""``ragmeter trec``: every trec_eval measure is computed (``-m all_trec`` leaves nothing out, on
stderr or in --format json), and the trec_eval options the quicktest does not cover."""

from __future__ import annotations

import json

from tests.conftest import TREC_REF

NEW_IN_ALL_TREC = ["relstring", "rbp", "rbp_resid", "infAP", "utility", "ndcg_rel", "Rndcg", "binG", "G"]


def test_all_trec_leaves_nothing_out(cli):
    out = cli("trec", TREC_REF / "qrels.test", TREC_REF / "results.test", "-m", "all_trec", "-q")
    assert out.exit_code == 0 and "does not compute" not in out.stderr
    printed = {line.split("\t")[0].strip() for line in out.stdout.splitlines()}
    assert set(NEW_IN_ALL_TREC) <= printed
    shown = cli("trec", TREC_REF / "qrels.test", TREC_REF / "results.test", "-m", "all_trec", "-q", "--format", "json")
    doc = json.loads(shown.stdout)
    assert doc["not_computed"] == []
    assert doc["measures"]["relstring"] == {"all": None, "per_topic": {"301": "0000011000", "302": "1101110110",
                                                                       "303": "0000000000"}}
    assert doc["measures"]["infAP"]["all"] == json.loads(cli("trec", TREC_REF / "qrels.test",
                                                              TREC_REF / "results.test", "-m", "infAP", "--format",
                                                              "json").stdout)["measures"]["infAP"]["all"]


def test_naming_any_trec_eval_measure_works(cli):
    """Naming one of trec_eval's measures never fails the command (it used to exit 2)."""
    for measure in ["relstring.20", "utility", "rbp.p=0.8", "rbp_resid", "infAP", "ndcg_rel", "Rndcg", "binG", "G",
                    "dcg", "ideal_dcg", "yaap"]:
        out = cli("trec", TREC_REF / "qrels.test", TREC_REF / "results.test", "-m", measure, "-q")
        assert out.exit_code == 0, (measure, out.stderr)
        assert out.stdout.count("\n") >= 3, measure


def test_a_measure_of_another_judgment_format_exits_4(cli):
    out = cli("trec", TREC_REF / "qrels.test", TREC_REF / "results.test", "-m", "prefs_simp")
    assert out.exit_code == 4 and "prefs_simp is computed from -R prefs" in out.stderr
    out = cli("trec", "-R", "prefs", TREC_REF / "prefs.test", TREC_REF / "prefs.results.test", "-m", "map")
    assert out.exit_code == 4 and "map is computed from -R qrels" in out.stderr


def test_unknown_formats_exit_2_as_trec_eval_does(cli):
    out = cli("trec", "-R", "tsv", TREC_REF / "qrels.test", TREC_REF / "results.test")
    assert out.exit_code == 2 and "unknown rel_info format 'tsv'" in out.stderr
    out = cli("trec", "-T", "json", TREC_REF / "qrels.test", TREC_REF / "results.test")
    assert out.exit_code == 2 and "trec_results is the only one" in out.stderr


def test_zscores_file_it_cannot_read_exits_255(cli, tmp_path):
    """trec_eval returns UNDEF (-1) from main when the -Z file is missing or malformed."""
    out = cli("trec", "-Z", tmp_path / "none", TREC_REF / "qrels.test", TREC_REF / "results.test")
    assert out.exit_code == 255 and "none" in out.stderr
    bad = tmp_path / "z"
    bad.write_text("301 map 0.5\n")
    out = cli("trec", "-Z", bad, TREC_REF / "qrels.test", TREC_REF / "results.test")
    assert out.exit_code == 255 and "line 1: expected 4 fields" in out.stderr
