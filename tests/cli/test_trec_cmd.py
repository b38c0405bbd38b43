"""``-m all_trec`` names the trec_eval measures it leaves out (on stderr, and in --format json)."""

from __future__ import annotations

import json

from tests.conftest import TREC_REF

LEFT_OUT = ["relstring", "rbp", "rbp_resid", "infAP", "utility", "ndcg_rel", "Rndcg", "binG", "G"]


def test_all_trec_names_what_it_leaves_out(cli):
    out = cli("trec", TREC_REF / "qrels.test", TREC_REF / "results.test", "-m", "all_trec")
    assert out.exit_code == 0
    assert ("note: -m all_trec asks for 9 trec_eval measure(s) that ragmeter does not compute, left out of the "
            f"output: {', '.join(LEFT_OUT)}") in out.stderr
    shown = cli("trec", TREC_REF / "qrels.test", TREC_REF / "results.test", "-m", "all_trec", "--format", "json")
    assert json.loads(shown.stdout)["not_computed"] == LEFT_OUT
    plain = cli("trec", TREC_REF / "qrels.test", TREC_REF / "results.test", "--format", "json")
    assert json.loads(plain.stdout)["not_computed"] == []
